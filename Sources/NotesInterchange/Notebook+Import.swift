import Basics
import EventStore
import Glibc
import LMDB
public import Notes
import Synchronization

/// What an import did.
public struct ImportSummary: Sendable, Equatable {
    /// Events in the input.
    public var events: Int
    /// Events appended.
    public var appended: Int
    /// Events skipped because their id was already stored (an earlier import of the same file).
    public var skipped: Int
    /// Events appended that are dated before the store's last event from before the import
    /// (`storeInstant`), so recorded at that instant instead: the log's time never goes back.
    public var recordedLater: Int
    /// The instant of the store's last event before the import, when `recordedLater` is not 0.
    public var storeInstant: Int64?

    public init(events: Int, appended: Int, skipped: Int, recordedLater: Int = 0, storeInstant: Int64? = nil) {
        self.events = events
        self.appended = appended
        self.skipped = skipped
        self.recordedLater = recordedLater
        self.storeInstant = storeInstant
    }
}

/// Counts the events of an import dated before the store's last event (from before the
/// import), which the log records at that instant instead: `--as-of` an instant before it
/// does not show them. Before 2026-12-07 an import into a notebook in use (the Swift Evolution
/// history into one with a note of today) dated every event today without a word.
package struct LaterRecording: Sendable {
    /// The instant of the store's last event when the import began; nil for an empty store.
    package let storeInstant: Int64?
    package private(set) var count = 0

    package init(storeInstant: Int64?) { self.storeInstant = storeInstant }

    /// Notes an event appended with its own instant `at`.
    package mutating func note(_ at: Int64?) {
        if let at, let storeInstant, at < storeInstant { count += 1 }
    }

    /// The instant to report beside the count: the store's, when any event was recorded later.
    package var reportedInstant: Int64? { count > 0 ? storeInstant : nil }
}

extension Notebook {
    /// The memory of events whose deferred projections run together during an import. A bulk
    /// import folds all the events of a note in a batch into one record write, and each posting
    /// block once; past this many bytes the batch is applied and its memory given back, so an
    /// import of any length holds a bounded number of events. (On 1M round-ordered events:
    /// one batch 16.7 s, 256 MiB batches 20.5 s, 64 MiB batches 47.7 s.)
    package static let importProjectionBytes = 256 << 20

    /// How far ahead of the clock an imported event may be dated (another device's clock may
    /// run ahead of this one's); `import` and `import-history` refuse an event dated later.
    package static let importAllowedLead: Int64 = 86_400_000_000

    /// The map room to reserve for importing `bytes` of JSON Lines: the log, its indexes and the
    /// projections take about 1.4 times the file; the rest is headroom, so that the write
    /// rarely has to start over in a larger map.
    package func importReservation(forFileBytes bytes: Int) -> Int {
        guard options.reservesMapForImports else { return 0 }
        return bytes.multipliedReportingOverflow(by: 2).overflow ? Int.max : bytes * 2 + (8 << 20)
    }

    /// Appends the events of `batch` in one write transaction: all of them or, when any line is
    /// refused, none.
    ///
    /// Events whose id is already stored are skipped (so importing a file twice, or a longer
    /// export of the same store after a shorter one, appends only what is new), provided they
    /// are stored at the same stream and version. Every other event must continue its stream:
    /// its version is the stream's version in the store, plus the events before it in the
    /// file, plus one. `recordedAt` and the metadata are kept; positions are the store's own.
    /// The log never goes back in time, so an event older than the store's last one is
    /// recorded at that last instant instead.
    ///
    /// Consecutive events of one stream go to the ``WriteSession`` in one call, and the
    /// projections are updated in the same transaction.
    ///
    /// - Throws: ``NotesError/validation(_:)`` with `line N: reason; nothing was imported`.
    @discardableResult
    public func importEvents(_ batch: EventBatch) throws(NotesError) -> ImportSummary {
        let events = batch.events
        let bytes = events.reduce(0) { $0 &+ $1.event.payload.count &+ 256 }
        return try write(reserving: importReservation(forFileBytes: bytes)) { session, _ in
            try session.deferProjections(expecting: events.count)
            var importer = try ImportAppender(book: self, session: session)
            for e in events { try importer.add(e, session: session) }
            try importer.finish(session: session)
            return importer.summary
        }
    }

    /// Whether the event's id is stored; an error when it is stored somewhere else.
    fileprivate func isStored(_ e: ImportedEvent, in txn: borrowing Transaction) throws -> Bool {
        guard let position = try store.position(ofEvent: e.event.id, in: txn) else { return false }
        guard let stored = try store.event(at: position, in: txn) else {
            throw StoreError.damaged(position: position, detail: "the event id index points to a missing event")
        }
        if stored.stream != e.stream || stored.version != e.version {
            throw NotesError.validation(
                .line(
                    e.line,
                    reason: "event id \(e.event.id) is already stored as version \(stored.version) of \(stored.stream)")
            )
        }
        // The same event, or the file and the store disagree: another type, payload or
        // metadata under the stored id was skipped without a word before 2026-12-06.
        guard try sameEvent(stored, e.event) else {
            throw NotesError.validation(
                .line(
                    e.line,
                    reason:
                        "event id \(e.event.id) is already stored (version \(stored.version) of \(stored.stream)) with "
                        + "other content; the file and the store disagree about this event: fix the line, or import "
                        + "into another store"))
        }
        return true
    }

    /// Whether an imported event is the stored one: the same type, schema and fields, or (a line
    /// of an `--upcast` export) the first event the stored one is lifted to; and the same actor,
    /// command, causation, correlation and device instant. (The instant recorded may differ: an
    /// import raises one older than the log's last.) A device instant on one side only is no
    /// difference: a sync that pushes an event keeps the instant it was recorded at here as
    /// `writtenAt`, so an export taken before the sync (or the store that imported it) has
    /// none.
    private func sameEvent(_ stored: RecordedEvent, _ new: NewEvent) throws -> Bool {
        var metadata = stored.metadata
        if metadata.writtenAt == nil || new.metadata.writtenAt == nil { metadata.writtenAt = new.metadata.writtenAt }
        guard metadata == new.metadata else { return false }
        if stored.type == new.type, stored.schemaVersion == new.schemaVersion, stored.payload == new.payload {
            return true
        }
        let registry = store.registry
        func raw(_ type: String, _ version: UInt32, _ payload: [UInt8]) throws -> RawEvent {
            try payload.withUnsafeBytes { try registry.decode(SchemaKey(type, version), payload: $0) }
        }
        let imported = try raw(new.type, new.schemaVersion, new.payload)
        let kept = try raw(stored.type, stored.schemaVersion, stored.payload)
        return try kept == imported || registry.lift(kept).first == imported
    }

    /// Parses, validates and imports lines (each without its newline), all or nothing.
    @discardableResult
    public func importEvents(lines: some Sequence<[UInt8]>) throws(NotesError) -> ImportSummary {
        var batch = EventBatch(registry: store.registry, maxBodyBytes: options.maxBodyBytes)
        var first = true
        for var line in lines {
            // A byte-order mark that starts the first line is skipped, as a file's is.
            if first, line.starts(with: ImportInput.byteOrderMark) { line.removeFirst(3) }
            first = false
            do { try batch.add(line: line) } catch { throw .validation(error.input) }
        }
        return try importEvents(batch)
    }

    /// Imports a file in the interchange format (`-` reads standard input; a `.gz` file is
    /// decompressed with `gzip -dc`), all or nothing, in memory that does not grow with the file.
    ///
    /// The file is parsed on another core while the events parsed so far are appended, in one
    /// write transaction; a refused line anywhere still imports nothing and is what the error
    /// names, as when every line is parsed first. Input that cannot be read twice (a pipe, a
    /// `.gz`) is first copied into an unnamed file in the store's directory (see
    /// ``ImportInput``), because the write reads its input again from the start when the map
    /// must grow. The map is grown ahead from the file's size.
    @discardableResult
    public func importEvents(fromFile path: String) throws(NotesError) -> ImportSummary {
        let registry = store.registry
        let maxBodyBytes = options.maxBodyBytes
        // One batch for the lines checked while the input is copied (the blank ones, then the
        // first that is not), so that a refusal numbers the line as the import would.
        var firstLines = EventBatch(registry: registry, maxBodyBytes: maxBodyBytes)
        let input = try ImportInput(
            path: path, spoolDirectory: store.environment.path,
            maxLineBytes: ImportInput.maxLineBytes(forBody: maxBodyBytes)
        ) { (line) throws(InterchangeError) in try firstLines.add(line: line) }
        do {
            return try store.write(reserving: importReservation(forFileBytes: input.size)) { session in
                // Each attempt parses the file from its beginning on a thread of its own, which
                // has ended when the attempt does, whatever the outcome.
                let parser = ImportParser(
                    input: input, store: store.environment.path, registry: registry, maxBodyBytes: maxBodyBytes)
                defer { parser.stop() }
                do {
                    // A line of the format takes well under a kilobyte: the file holds at
                    // least this many events.
                    return try importParsed(from: parser, expecting: input.size / 1024, session: session)
                } catch let refused as ParserFailure {
                    throw refused.error
                } catch {
                    // A refused line anywhere in the file wins over what appending found, as
                    // when every line is parsed before anything is appended.
                    if let refused = parser.finishParsing() { throw refused }
                    throw error
                }
            }
        } catch {
            throw Self.refusal(error)
        }
    }

    /// The parser's failure, told apart from what appending throws.
    private struct ParserFailure: Error {
        let error: any Error
    }

    private func importParsed(from parser: ImportParser, expecting events: Int, session: borrowing WriteSession)
        throws -> ImportSummary
    {
        try session.deferProjections(expecting: events)
        var importer = try ImportAppender(book: self, session: session)
        while true {
            switch parser.take() {
            case .events(let chunk):
                for e in chunk { try importer.add(e, session: session) }
                if session.deferredBytes >= Self.importProjectionBytes {
                    try importer.flush(session: session)
                    try session.applyDeferredProjections()
                }
            case .end:
                try importer.finish(session: session)
                return importer.summary
            case .failed(let error):
                throw ParserFailure(error: error)
            }
        }
    }

    /// The error of a refused line, an unreadable file or the store.
    private static func refusal(_ error: any Error) -> NotesError {
        switch error {
        case let e as InterchangeError: return .validation(e.input)
        default: return NotesError.wrap(error)
        }
    }
}

/// Parses an import file on a thread of its own and hands the events over in chunks, in order,
/// holding at most a few chunks at once (the appending side takes them as it goes).
///
/// ``stop()`` ends the thread and waits for it, whatever it is doing; ``finishParsing()`` lets
/// it parse the rest of the file without keeping the events, to learn whether a later line is
/// refused. Either way no thread of the parser outlives the write attempt that started it.
final class ImportParser: @unchecked Sendable {
    enum Item {
        case events([ImportedEvent])
        case end
        case failed(any Error)
    }

    /// Events per chunk: large enough that the hand-over costs nothing, small enough that
    /// appending starts at once.
    static let chunk = 1024
    /// Chunks parsed ahead of the appending side, at most.
    static let depth = 8

    /// Parsers whose thread is running for imports into the store at `path` (tests check that
    /// none is left behind).
    static func running(forStoreAt path: String) -> Int { live.withLock { $0[path, default: 0] } }
    private static let live = Mutex<[String: Int]>([:])

    private let input: ImportInput
    /// The store imported into, for ``running(forStoreAt:)``.
    private let store: String
    private let registry: SchemaRegistry
    private let maxBodyBytes: Int
    /// Guards everything below; `changed` is signalled whenever any of it changes.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [Item] = []
    private var head = 0
    /// The appending side takes no more: parse on, keeping only a refusal.
    private var discarding = false
    private var stopping = false
    private var finished = false
    private var refusal: (any Error)?
    private var thread: pthread_t?
    /// No thread could be started: the file is parsed at once, into an unbounded queue.
    private var synchronous = false

    init(input: ImportInput, store: String, registry: SchemaRegistry, maxBodyBytes: Int) {
        self.input = input
        self.store = store
        self.registry = registry
        self.maxBodyBytes = maxBodyBytes
        pthread_mutex_init(lock, nil)
        pthread_cond_init(changed, nil)
        Self.live.withLock { $0[store, default: 0] += 1 }
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, nil,
            { raw in
                let parser = Unmanaged<ImportParser>.fromOpaque(raw!).takeRetainedValue()
                parser.parse()
                return nil
            }, context)
        if rc == 0 {
            thread = handle
        } else {
            // No thread: parse here, at once (the queue then holds the whole file).
            Unmanaged<ImportParser>.fromOpaque(context).release()
            synchronous = true
            parse()
        }
    }

    deinit {
        stop()
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(lock)
        changed.deallocate()
        lock.deallocate()
    }

    private func withLock<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }

    /// The parsing thread's work.
    private func parse() {
        var batch = EventBatch(registry: registry, maxBodyBytes: maxBodyBytes)
        struct Stopped: Error {}
        var last: Item = .end
        do {
            try input.forEachLine(maxLineBytes: ImportInput.maxLineBytes(forBody: maxBodyBytes)) { line, _ in
                try batch.add(line: line)
                if batch.events.count >= Self.chunk {
                    if !put(.events(batch.takeEvents())) { throw Stopped() }
                }
            }
            if !put(.events(batch.takeEvents())) { throw Stopped() }
        } catch is Stopped {
            last = .end
        } catch {
            last = .failed(error)
        }
        withLock {
            if case .failed(let e) = last { refusal = e }
            queue.append(last)
            finished = true
            pthread_cond_broadcast(changed)
        }
        Self.live.withLock { $0[store, default: 0] -= 1 }
    }

    /// Queues a chunk, waiting while the queue is full; false when the parser must stop.
    private func put(_ item: Item) -> Bool {
        withLock {
            while !stopping && !discarding && !synchronous && queue.count - head >= Self.depth {
                pthread_cond_wait(changed, lock)
            }
            if stopping { return false }
            if !discarding { queue.append(item) }
            pthread_cond_broadcast(changed)
            return true
        }
    }

    /// The next item, waiting for it. Never called after `.end` or `.failed`.
    func take() -> Item {
        withLock {
            while head == queue.count { pthread_cond_wait(changed, lock) }
            let item = queue[head]
            queue[head] = .end
            head += 1
            if head > Self.depth * 4 {
                queue.removeFirst(head)
                head = 0
            }
            pthread_cond_broadcast(changed)
            return item
        }
    }

    /// Parses the rest of the file without keeping its events; the refusal it met, if any.
    func finishParsing() -> (any Error)? {
        defer { join() }
        return withLock {
            discarding = true
            queue.removeAll()
            head = 0
            pthread_cond_broadcast(changed)
            while !finished { pthread_cond_wait(changed, lock) }
            return refusal
        }
    }

    /// Stops parsing and waits for the thread to end.
    func stop() {
        withLock {
            stopping = true
            pthread_cond_broadcast(changed)
        }
        join()
    }

    private func join() {
        guard let t = thread else { return }
        thread = nil
        pthread_join(t, nil)
    }
}

/// Appends imported events in file order: consecutive events of one stream go to the
/// ``WriteSession`` in one call, each stream's versions must continue it, stored events are
/// skipped.
private struct ImportAppender {
    let book: Notebook
    /// Into a store without events nothing can be stored already (a batch never holds an id twice).
    let mayBeStored: Bool
    var summary = ImportSummary(events: 0, appended: 0, skipped: 0)
    private var versions: [String: UInt64] = [:]
    /// Where the group's stream is in `versions`, when it was there as the group began: its
    /// version is updated there, without hashing the stream again.
    private var versionSlot: Dictionary<String, UInt64>.Index?
    /// The group being gathered: its stream, the stream's version before it, its events.
    private var group: [NewEvent] = []
    private var stream = ""
    private var before: UInt64 = 0
    private var firstVersion: UInt64 = 0

    /// How far ahead of the clock an imported event may be dated.
    static let allowedLead = Notebook.importAllowedLead

    var later: LaterRecording

    init(book: Notebook, session: borrowing WriteSession) throws {
        self.book = book
        mayBeStored = try book.store.headPosition(in: session.transaction) > 0
        later = LaterRecording(storeInstant: try book.store.lastRecordedAt(in: session.transaction))
    }

    mutating func add(_ e: ImportedEvent, session: borrowing WriteSession) throws {
        summary.events += 1
        if !group.isEmpty, e.stream == stream, e.version == firstVersion &+ UInt64(group.count),
            try !(mayBeStored && book.isStored(e, in: session.transaction))
        {
            try checkInstant(e)
            try checkReferences(e, session: session)
            group.append(e.event)
            return
        }
        try flush(session: session)
        if try mayBeStored && book.isStored(e, in: session.transaction) {
            summary.skipped += 1
            return
        }
        try checkInstant(e)
        let current: UInt64
        versionSlot = versions.index(forKey: e.stream)
        if let slot = versionSlot {
            current = versions.values[slot]
        } else {
            current = try book.store.streamVersion(e.stream, in: session.transaction)
        }
        guard e.version == current &+ 1 else {
            let state = current == 0 ? "is not in the store" : "is at version \(current)"
            throw NotesError.validation(
                .line(e.line, reason: "version \(e.version) does not continue \(e.stream), which \(state)"))
        }
        try checkReferences(e, session: session)
        group.append(e.event)
        stream = e.stream
        before = current
        firstVersion = e.version
    }

    /// The log's time never goes back: an event dated far ahead of this machine's clock would
    /// date every later change of the store then, and hide them from `--as-of now`.
    private mutating func checkInstant(_ e: ImportedEvent) throws {
        later.note(e.event.recordedAt)
        summary.recordedLater = later.count
        summary.storeInstant = later.reportedInstant
        guard let at = e.event.recordedAt else { return }
        let now = book.store.configuration.clock()
        guard at > now &+ Self.allowedLead else { return }
        throw NotesError.validation(
            .line(
                e.line,
                reason:
                    "recordedAt \(RFC3339.format(micros: at)) is more than a day after this machine's clock "
                    + "(\(RFC3339.format(micros: now))); every later change would be recorded then: fix the line, "
                    + "or the clock"))
    }

    /// Categories and tags known to exist: in the store, or created by an earlier line (by id,
    /// a category's and a tag's apart: a category and a tag may have one id).
    private var knownEntities: Set<EntityKey> = []

    /// A category or a tag.
    private struct EntityKey: Hashable {
        var isTag: Bool
        var id: Identifier
    }

    /// What ``checkReferences(_:session:)`` does with an event of a type: looked up once a line
    /// (a switch over the type names compared a line's type with up to 13 of them).
    private enum Reference {
        case creates, merges, deletes, files
    }

    private static let references: [String: Reference] = [
        "CategoryCreated": .creates, "TagCreated": .creates, "CategoryMerged": .merges, "TagMerged": .merges,
        "CategoryDeleted": .deletes, "TagDeleted": .deletes, "NoteCreated": .files, "NoteCategorized": .files,
        "NoteTagged": .files, "NoteUntagged": .files, "NoteRestored": .files, "NoteBodyMerged": .files,
        "NoteBodyConflicted": .files,
    ]

    /// The category or tag of an entity stream.
    private static func entity(_ stream: String) -> EntityKey? {
        switch StreamRef(stream) {
        case .category(let id): return EntityKey(isTag: false, id: id)
        case .tag(let id): return EntityKey(isTag: true, id: id)
        default: return nil
        }
    }

    /// Refuses a note event that files the note under a category or tag neither the store nor
    /// an earlier line created: the note would be in no category and not uncategorized either.
    private mutating func checkReferences(_ e: ImportedEvent, session: borrowing WriteSession) throws {
        switch Self.references[e.event.type] {
        case .creates:
            if let key = Self.entity(e.stream) { knownEntities.insert(key) }
            return
        case .merges:
            try checkMerge(e, session: session)
            killed[e.stream] = e.line
            return
        case .deletes:
            killed[e.stream] = e.line
            return
        case .files: break
        case nil: return
        }
        guard
            let filed = try e.event.payload.withUnsafeBytes({ p in
                try NoteEvent.filing(type: e.event.type, schemaVersion: e.event.schemaVersion, payload: p)
            })
        else { return }
        try follow(e, filed: filed, session: session)
        if e.event.type == "NoteUntagged" { return }
        // A restore names the version it brought back, a merge the version both sides started
        // from: one before this event's (history showed "restored from v0", or a version that
        // did not exist yet). A merge's base is 0 when both devices created the note (a sync
        // writes that: one Markdown file imported on both).
        let lowest: UInt64 = e.event.type == "NoteRestored" ? 1 : 0
        if let from = filed.fromVersion, from < lowest || from >= e.version {
            throw NotesError.validation(
                .line(
                    e.line,
                    reason:
                        "fromVersion \(Int64(bitPattern: from)) is not an earlier version of the note "
                        + "(\(lowest) to \(e.version - 1)); fix the line"))
        }
        let named: EntityKey
        if let c = filed.category {
            named = EntityKey(isTag: false, id: c)
        } else if let t = filed.tag {
            named = EntityKey(isTag: true, id: t)
        } else {
            return
        }
        guard !knownEntities.contains(named) else { return }
        let stream = named.isTag ? Tag.stream(named.id) : Category.stream(named.id)
        guard try book.store.streamVersion(stream, in: session.transaction) > 0 else {
            throw NotesError.validation(
                .line(
                    e.line,
                    reason:
                        "the \(named.isTag ? "tag" : "category") \(named.id) is neither in the store nor created by an "
                        + "earlier line; import the file its creation is in first"))
        }
        knownEntities.insert(named)
    }

    /// Refuses a category or tag merged into itself, or into one neither the store nor an
    /// earlier line created: no command writes either (`categories merge` and `tags merge` name
    /// another that exists), and the merged one vanished from every list while its notes stayed
    /// filed under it. (One merged into a category another device deleted meanwhile is taken: a
    /// shared log holds such crossed changes, and a later sync repairs them.)
    private mutating func checkMerge(_ e: ImportedEvent, session: borrowing WriteSession) throws {
        let isCategory = e.event.type == "CategoryMerged"
        /// The one a merge event of `Kind` names.
        func into<Kind>(_: NamedEntityEvent<Kind>.Type) throws -> Identifier? {
            let event = try NamedEntityEvent<Kind>.decode(
                type: e.event.type, schemaVersion: e.event.schemaVersion, payload: e.event.payload)
            guard case .merged(let into)? = event else { return nil }
            return into
        }
        guard let into = try isCategory ? into(CategoryEvent.self) : into(TagEvent.self) else { return }
        let kind = isCategory ? "category" : "tag"
        let target = isCategory ? Category.stream(into) : Tag.stream(into)
        if target == e.stream {
            throw NotesError.validation(
                .line(e.line, reason: "the \(kind) is merged into itself; fix or drop the line"))
        }
        let key = EntityKey(isTag: !isCategory, id: into)
        let exists = try knownEntities.contains(key) || book.store.streamVersion(target, in: session.transaction) > 0
        guard exists else {
            throw NotesError.validation(
                .line(
                    e.line,
                    reason:
                        "the \(kind) is merged into \(into), which neither the store nor an earlier line created; "
                        + "import the file its creation is in first"))
        }
        knownEntities.insert(key)
    }

    /// What the import leaves each note it changes filed under: its category and tags after
    /// its last line (starting from the store's record, for a note the store holds), with the
    /// lines that filed it there.
    private var filings: [Identifier: (category: Identifier?, categoryLine: Int, tags: [Identifier: Int])] = [:]
    /// The categories and tags the import deletes or merges away, by stream, with their lines.
    private var killed: [String: Int] = [:]

    /// Follows the filing of its note the line makes.
    private mutating func follow(
        _ e: ImportedEvent, filed: (category: Identifier?, tag: Identifier?, fromVersion: UInt64?),
        session: borrowing WriteSession
    ) throws {
        guard case .note(let id) = StreamRef(e.stream) else { return }
        let type = e.event.type
        switch type {
        case "NoteCreated", "NoteCategorized", "NoteRestored", "NoteTagged", "NoteUntagged": break
        default: return
        }
        // Taken out while it changes, so that its tags are not copied on each change.
        var state =
            try filings.removeValue(forKey: id)
            ?? startingFiling(of: id, creating: type == "NoteCreated", session: session)
        switch type {
        case "NoteTagged": if let t = filed.tag { state.tags[t] = e.line }
        case "NoteUntagged": if let t = filed.tag { state.tags[t] = nil }
        default: (state.category, state.categoryLine) = (filed.category, e.line)
        }
        filings[id] = state
    }

    /// A note's filing before the import changes it: none for one it creates, else the store's.
    private func startingFiling(of id: Identifier, creating: Bool, session: borrowing WriteSession) throws -> (
        category: Identifier?, categoryLine: Int, tags: [Identifier: Int]
    ) {
        guard !creating,
            let note = try book.projection.note(id, in: session.transaction, databases: session.projectionDatabases())
        else { return (nil, 0, [:]) }
        return (note.category, 0, Dictionary(uniqueKeysWithValues: note.tags.map { ($0, 0) }))
    }

    /// Refuses an import that leaves a note filed under a category or tag deleted (or merged
    /// away), by a line or before in the store: the note showed the category's name in `list`
    /// while `categories` had none, `--uncategorized` left it out, and `verify` passed. A
    /// deletion moves the notes out first (`categories delete` files them under none; a sync
    /// repairs what two devices' crossed changes leave), and so must a file's later lines.
    mutating func finish(session: borrowing WriteSession) throws {
        try flush(session: session)
        guard !filings.isEmpty || !killed.isEmpty else { return }
        let dbs = try session.projectionDatabases()
        // Each category or tag looked up once (a file of 100,000 notes names a few dozen), by
        // its stream: a category and a tag may have one id.
        var deletions: [String: String?] = [:]
        for (note, f) in filings.sorted(by: { $0.key < $1.key }) {
            if let c = f.category,
                let how = try deletion(of: c, isCategory: true, known: &deletions, session: session, dbs: dbs)
            {
                throw refusal(max(f.categoryLine, killed[Category.stream(c)] ?? 0), note, "category", c, how)
            }
            for (t, line) in f.tags.sorted(by: { $0.key < $1.key }) {
                if let how = try deletion(of: t, isCategory: false, known: &deletions, session: session, dbs: dbs) {
                    throw refusal(max(line, killed[Tag.stream(t)] ?? 0), note, "tag", t, how)
                }
            }
        }
        // Notes the import does not change, filed under what it deletes.
        let changed = Set(filings.keys)
        for (stream, line) in killed.sorted(by: { $0.value < $1.value }) {
            var q = ListQuery()
            q.status = .all
            q.limit = 1
            q.excluding = changed
            let (kind, id): (String, Identifier)
            switch StreamRef(stream) {
            case .category(let c): (kind, id, q.scope) = ("category", c, .category(c))
            case .tag(let t): (kind, id, q.scope) = ("tag", t, .tag(t))
            default: continue
            }
            if let note = try book.projection.list(q, in: session.transaction, databases: dbs).first {
                throw refusal(line, note.id, kind, id, "line \(line) deletes")
            }
        }
    }

    /// Who deleted the category or tag: a line of the import, the store, or nobody (nil);
    /// remembered in `known` by stream.
    private func deletion(
        of id: Identifier, isCategory: Bool, known: inout [String: String?], session: borrowing WriteSession,
        dbs: ProjectionDatabases
    ) throws -> String? {
        let stream = isCategory ? Category.stream(id) : Tag.stream(id)
        if let answer = known[stream] { return answer }
        let answer: String?
        if let line = killed[stream] {
            answer = "line \(line) deletes"
        } else {
            let deleted =
                isCategory
                ? try book.projection.category(id, in: session.transaction, databases: dbs)?.deleted
                : try book.projection.tag(id, in: session.transaction, databases: dbs)?.deleted
            answer = deleted == true ? "the store has deleted" : nil
        }
        known[stream] = .some(answer)
        return answer
    }

    private func refusal(_ line: Int, _ note: Identifier, _ kind: String, _ id: Identifier, _ how: String) -> NotesError
    {
        NotesError.validation(
            .line(
                line,
                reason:
                    "note \(note) stays filed under the \(kind) \(id), which \(how); no later line files it "
                    + "elsewhere: add one (as `notes \(kind == "tag" ? "tags" : "categories") delete` does), or drop "
                    + "the line"))
    }

    /// Appends the group gathered so far.
    mutating func flush(session: borrowing WriteSession) throws {
        guard !group.isEmpty else { return }
        if mayBeStored {
            try session.append(group, to: stream, expecting: .exact(before))
        } else {
            // Into an empty log, ids the batch checked unique: none can be stored.
            try session.appendUnstored(group, to: stream, expecting: .exact(before))
        }
        // No key was added to `versions` since the slot was found (only flush adds one).
        if let slot = versionSlot {
            versions.values[slot] = before + UInt64(group.count)
        } else {
            versions[stream] = before + UInt64(group.count)
        }
        versionSlot = nil
        summary.appended += group.count
        group.removeAll(keepingCapacity: true)
    }
}
