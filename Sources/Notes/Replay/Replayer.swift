import Basics
import CIntrinsics
import EventStore
import Glibc
import LMDB
import SearchEngine

/// The working state of a replay: notes in an array found through an open-addressing table
/// keyed by id, so each event costs one probe and an in-place change.
///
/// Titles and bodies are kept as checked slices of the stored bytes while the scan runs and
/// become strings once, at its end, inside the same read transaction: most stored texts are
/// superseded by a later edit and are never turned into a `String`.
struct Replayer {
    /// A note and its latest stored title and body not yet turned into strings: the target of
    /// ``NoteFold`` with texts as slices of the mapped file.
    fileprivate struct Entry: NoteFoldTarget {
        var note: Note
        var title: UnsafeRawBufferPointer?
        var body: UnsafeRawBufferPointer?
        /// Whether an event left the note pinned (see ``NotebookState/everPinned``).
        var everPinned = false

        mutating func begin(at instant: Int64) { note.createdAt = instant }
        mutating func set(title: TextSlice) { self.title = title.bytes }
        mutating func set(body: TextSlice) { self.body = body.bytes }
        mutating func set(pinned: Bool) {
            note.pinned = pinned
            everPinned = everPinned || pinned
        }
        mutating func set(category: Identifier?) { note.category = category }
        mutating func set(archived: Bool) { note.archived = archived }
        mutating func set(trashed: Bool) { note.trashed = trashed }
        mutating func set(tag: Identifier, tagged: Bool) { note.tags.set(tag, tagged) }
        mutating func set(property key: TextSlice, value: TextSlice) { note.properties.set(key.string, value.string) }
    }

    /// The same entry folded with texts already strings (events of the general path): a text
    /// set this way replaces the pending slice.
    private struct Materialized: NoteFoldTarget {
        var entry: Entry

        mutating func begin(at instant: Int64) { entry.note.createdAt = instant }
        mutating func set(title: String) {
            entry.note.title = title
            entry.title = nil
        }
        mutating func set(body: String) {
            entry.note.body = body
            entry.body = nil
        }
        mutating func set(pinned: Bool) { entry.set(pinned: pinned) }
        mutating func set(category: Identifier?) { entry.note.category = category }
        mutating func set(archived: Bool) { entry.note.archived = archived }
        mutating func set(trashed: Bool) { entry.note.trashed = trashed }
        mutating func set(tag: Identifier, tagged: Bool) { entry.note.tags.set(tag, tagged) }
        mutating func set(property key: String, value: String) { entry.note.properties.set(key, value) }
    }

    private var entries: [Entry] = []
    private var table = NoteTable()
    /// Categories and the count of events folded; the notes are in ``notes``.
    private(set) var state = NotebookState()
    /// The notes, once the scan has finished.
    var notes: [Note] = []
    /// Whether to give back the store file's mapped pages while scanning.
    private let releasingPages: Bool
    /// The store's upcaster plans that lift legacy note events to current ones, compiled to run
    /// on the stored bytes.
    private var legacy = LegacyLifts()
    /// The current note event types, held here: the catalogue's global costs a call on each
    /// access.
    private let kinds = NoteEventKind.matcher

    /// How many scans share the notes: the notes array of a scan is reserved for them all (see
    /// ``finish(store:)``).
    private let scans: Int

    /// The filings held (repeats included) beyond which they are sorted and their repeats
    /// dropped: a note filed under the same tag thousands of times holds one filing, not
    /// thousands (see ``file(_:_:_:)``).
    private var filingLimit: Int

    init(releasingPages: Bool = false, scans: Int = 1, filingLimit: Int = 1 << 20) {
        self.releasingPages = releasingPages
        self.scans = max(1, scans)
        self.filingLimit = max(1, filingLimit)
        entries.reserveCapacity(1024)
    }

    /// Through the buffer's addressor: reading an id must not copy the entry (and retain
    /// its strings).
    @inline(__always)
    private func find(_ id: Identifier) -> Int? {
        entries.withUnsafeBufferPointer { buffer in table.find(id) { buffer[$0].note.id } }
    }

    /// A current-schema note event read but not yet folded: what its fold needs, its
    /// payload still in the map.
    private struct Pending {
        var id: Identifier
        var payload: UnsafeRawBufferPointer
        var instant: Int64
        var version: UInt64
        var position: UInt64
        var kind: NoteEventKind
    }

    /// How many events are read ahead of the one being folded (a power of two).
    ///
    /// Each event changes a note found through a table and an array too large for the
    /// processor's caches, at a place no hardware prefetcher can guess. So current-schema
    /// note events wait in a small ring: the table slot of an event is fetched when it is
    /// read, its entry halfway through the ring, and both are at hand when it is folded. The
    /// finishing pass fetches texts the same distance ahead.
    static let lookahead = 16

    /// The ring of events read ahead, allocated for the scan.
    private var ring: UnsafeMutablePointer<Pending>?
    /// Events put in the ring so far, and folded from it.
    private var queued = 0
    private var folded = 0
    /// Whether a fold from the ring threw (then the events after it are not folded).
    private var foldFailed = false
    /// Where the scan failed, when it threw: the position of the event it could not fold or
    /// read. Scans of one log compare these to report the failure one scan would meet first.
    private(set) var failedAt: UInt64?
    /// The position of the last event read.
    private var lastRead: UInt64 = 0

    /// Walks the events of positions 1...last in one read transaction and folds those of the
    /// first share; each event of another share is handed, unverified, to the channel of the
    /// scan that folds it (`channels[share - 1]`). Without channels it folds every event.
    ///
    /// The transaction stays open until every channel's consumer has finished: their notes'
    /// texts are slices of its pages until then.
    mutating func scan(
        store: EventStore, through last: UInt64, routing channels: [EventChannel] = [],
        progress: ((UInt64) -> Void)?
    ) throws {
        legacy = LegacyLifts(store.registry)
        let ring = UnsafeMutablePointer<Pending>.allocate(capacity: Self.lookahead)
        self.ring = ring
        defer {
            ring.deallocate()
            self.ring = nil
        }
        let shards = channels.count + 1
        try store.read { txn in
            defer {
                for channel in channels {
                    channel.close()
                    channel.finished.wait()
                }
            }
            var nextReport: UInt64 = 65_536
            var pages = releasingPages ? MappedPageBudget(store.environment, every: 512 << 10) : nil
            do {
                try store.forEachStoredEvent(from: 1, through: last, in: txn) { stored in
                    let share = shards > 1 ? Self.shard(of: stored.stream, among: shards) : 0
                    if share == 0 {
                        try take(try stored.foldView(), store: store)
                    } else {
                        lastRead = stored.position
                        channels[share - 1].send(stored)
                    }
                    if let progress, stored.position >= nextReport {
                        progress(stored.position)
                        nextReport = stored.position &+ 65_536
                    }
                    pages?.read(stored.bytes.count)
                    return true
                }
            } catch {
                for channel in channels { channel.close() }
                // Events read before a damaged one are folded first, as a scan without a
                // ring would have: a failure among them is the one to report.
                if !foldFailed {
                    failedAt = Self.position(of: error) ?? lastRead &+ 1
                    try drain()
                }
                throw error
            }
            for channel in channels { channel.close() }
            try drain()
            try finish(store: store)
        }
    }

    /// Folds the events another scan hands it through `channel`, in their order, then turns
    /// its notes' texts into strings; the sending scan's read transaction is open meanwhile.
    /// After a failure it takes the rest of the events without folding them.
    mutating func consume(_ channel: EventChannel, store: EventStore) throws {
        legacy = LegacyLifts(store.registry)
        let ring = UnsafeMutablePointer<Pending>.allocate(capacity: Self.lookahead)
        self.ring = ring
        defer {
            ring.deallocate()
            self.ring = nil
        }
        var failure: (any Error)?
        channel.receive { batch in
            guard failure == nil else { return }
            do {
                for stored in batch {
                    lastRead = stored.position
                    try take(try stored.foldView(), store: store)
                }
            } catch {
                failure = error
            }
        }
        if let failure {
            if !foldFailed {
                failedAt = Self.position(of: failure) ?? lastRead
                try drain()
            }
            throw failure
        }
        try drain()
        try finish(store: store)
    }

    /// The position a store error names.
    private static func position(of error: any Error) -> UInt64? {
        if case StoreError.damaged(let position?, _) = error { return position }
        return nil
    }

    /// Queues a current-schema note event; folds anything else at once, after the queue.
    @inline(__always)
    private mutating func take(_ view: FoldView, store: EventStore) throws {
        lastRead = view.position
        let stream = StreamRef(view.streamBytes)
        guard case .note(let id) = stream,
            let kind = kinds.kind(view.typeBytes, version: view.schemaVersion),
            let ring
        else {
            try drain()
            do { try apply(try view.view(), stream: stream, store: store) } catch {
                foldFailed = true
                failedAt = view.position
                throw error
            }
            return
        }
        state.events += 1
        if queued - folded == Self.lookahead { try foldOldest() }
        table.prefetch(id)
        ring[queued & (Self.lookahead - 1)] = Pending(
            id: id, payload: view.payload, instant: view.recordedAt, version: view.version, position: view.position,
            kind: kind)
        queued += 1
        let half = queued - 1 - Self.lookahead / 2
        if half >= folded { prefetchEntry(of: ring[half & (Self.lookahead - 1)].id) }
    }

    @inline(__always)
    private mutating func foldOldest() throws {
        guard let ring else { return }
        let p = ring[folded & (Self.lookahead - 1)]
        folded += 1
        do {
            try apply(p.kind, payload: p.payload, id: p.id, at: p.instant, version: p.version, position: p.position)
        } catch {
            foldFailed = true
            failedAt = p.position
            throw error
        }
    }

    /// Folds every queued event.
    private mutating func drain() throws {
        while queued > folded { try foldOldest() }
    }

    /// Brings the entry of note `id` (its first two cache lines) into the cache, if the
    /// table has a candidate for it.
    @inline(__always)
    private func prefetchEntry(of id: Identifier) {
        guard let i = table.candidate(id) else { return }
        entries.withUnsafeBufferPointer { buffer in
            guard i < buffer.count, let base = buffer.baseAddress else { return }
            let p = UnsafeRawPointer(base + i)
            notes_prefetch(p)
            notes_prefetch(p + 64)
        }
    }

    /// Which scan folds a stream: note streams by the last characters of their id, everything
    /// else (categories, tags, unreadable headers) in the first.
    ///
    /// The first scan also walks the whole log and hands the others their events, so it folds
    /// a smaller share of the notes: ``firstShare(among:)`` of 1,024.
    @inline(__always)
    static func shard(of stream: UnsafeRawBufferPointer?, among shards: Int) -> Int {
        guard shards > 1, let stream, stream.count == 41, stream[0] == UInt8(ascii: "n") else { return 0 }
        let tail = UInt64(littleEndian: stream.loadUnaligned(fromByteOffset: 33, as: UInt64.self))
        let h = Int(truncatingIfNeeded: (tail &* 0x9E37_79B9_7F4A_7C15) >> 54)
        let first = firstShare(among: shards)
        if h < first { return 0 }
        return 1 + (h - first) % (shards - 1)
    }

    /// The first scan's share of the notes, out of 1,024, when there are `shards` scans: what
    /// leaves its thread as busy as each of the others, walking the log costing about 0.6 of
    /// folding all of it in CPU time (k scans: (1 - 0.6 (k - 1)) / k; 20% of the notes for two,
    /// none for three or more, where the walk alone keeps the first thread busy).
    /// Balanced by time, not instructions: the walk's instructions wait on the mapped pages
    /// (`perf`, 1,000,000 events, 2026-12-06: the first scan's thread had 54% of the CPU time at
    /// 35% of the notes, 51% at 29%). The fold then became cheaper per event and the walk did
    /// not: the fold of 1,000,000 events in two scans, binaries alternated (2026-12-06T14:10Z,
    /// quiet), took 0.954x the time at 25% against 30% (8 pairs), 0.920x at 20% against 25%,
    /// 1.069x at 15% against 20%.
    @inline(__always)
    static func firstShare(among shards: Int) -> Int {
        max(0, 1024 * (10 - 6 * (shards - 1)) / (10 * shards))
    }

    /// An event ``take(_:store:)`` does not queue: a note event of an older (or unknown)
    /// schema, a category event, or an event of another stream.
    private mutating func apply(_ view: EventView, stream: StreamRef, store: EventStore) throws {
        switch stream {
        case .note(let id):
            state.events += 1
            if let lift = legacy.lift(view.typeBytes, version: view.schemaVersion) {
                do {
                    try apply(
                        lift, payload: view.payload, id: id, at: view.recordedAt, version: view.version,
                        position: view.position)
                } catch is DecodingError {
                    // Unreadable: the general path reports it as every other reader does.
                    try applyLifted(view, id: id, store: store)
                }
            } else {
                try applyLifted(view, id: id, store: store)
            }
        case .category, .tag:
            // Few and far between: the general rules (which count the event).
            try state.apply(view, store: store)
        case .other:
            state.events += 1
        }
    }

    /// A current-schema note event, from its stored bytes.
    @inline(__always)
    private mutating func apply(
        _ kind: NoteEventKind, payload: UnsafeRawBufferPointer, id: Identifier, at instant: Int64, version: UInt64,
        position: UInt64
    ) throws {
        let i = try entry(kind, of: id, at: instant, version: version, position: position)
        let p = try NotePayload<TextSlice>(kind, decoding: payload)
        NoteFold.apply(kind, p, to: &entries[i], at: instant)
        touch(i, at: instant, version: version)
        file(kind, p, i)
        if kind.setsTitle { recordTitle(i, at: position) }
        if LinkIndex.mayRename(kind, p) { recordNames(i, at: position) }
    }

    /// The filings of the scan, moved out.
    mutating func takeFilings() -> [Filing] { state.takeFilings() }

    /// The title changes of the scan, moved out.
    mutating func takeTitleChanges() -> [TitleChange] {
        var out: [TitleChange] = []
        swap(&out, &state.titleChanges)
        return out
    }

    /// Notes the title entry `i` holds after the event at `position` set it, folded while its
    /// bytes are at hand (the scan gives their pages back as it goes).
    private mutating func recordTitle(_ i: Int, at position: UInt64) {
        let folded = entries[i].title.map { TextFolding.fold(utf8: $0) } ?? TextFolding.fold(entries[i].note.title)
        state.titleChanges.append(TitleChange(note: entries[i].note.id, position: position, folded: folded))
    }

    /// Notes the other names entry `i` holds after the event at `position`.
    private mutating func recordNames(_ i: Int, at position: UInt64) {
        let note = entries[i].note
        state.nameChanges.append(NameChange(note: note.id, position: position, names: LinkIndex.names(of: note)))
    }

    /// The entry a `kind` event of note `id` changes: made by a creation (a second one is
    /// damage), found for any other event (one of a note never created is damage).
    @inline(__always)
    private mutating func entry(
        _ kind: NoteEventKind, of id: Identifier, at instant: Int64, version: UInt64, position: UInt64
    ) throws -> Int {
        let found = find(id)
        if kind == .created {
            guard found == nil else {
                throw StoreError.damaged(position: position, detail: FoldError.createdTwice(.note(id)).description)
            }
            table.insert(id, index: entries.count)
            entries.append(
                Entry(note: Note(id: id, title: "", body: "", createdAt: instant, updatedAt: instant, version: version))
            )
            return entries.count - 1
        }
        guard let found else {
            throw StoreError.damaged(
                position: position, detail: FoldError.notCreated(.note(id), type: kind.layout.name).description)
        }
        return found
    }

    /// Notes the category or tag a `kind` event with payload `p` filed entry `i` under, in one
    /// array for the whole scan (the projection's writer sorts them and drops repeats). Past
    /// ``filingLimit`` the repeats are dropped here, and the limit set to twice what is left:
    /// the array holds at most about twice the distinct filings, or the first limit.
    @inline(__always)
    private mutating func file<Text>(_ kind: NoteEventKind, _ p: NotePayload<Text>, _ i: Int) {
        guard kind.mayFile,
            let filing = Filing.made(by: kind, p, note: entries[i].note.id, category: entries[i].note.category)
        else { return }
        state.everFiled.append(filing)
        if state.everFiled.count >= filingLimit {
            Filing.sortByScope(&state.everFiled)
            filingLimit = max(filingLimit, 2 * state.everFiled.count)
        }
    }

    /// The filings the scan holds now, repeats included (for tests).
    var filingsHeld: Int { state.everFiled.count }

    /// Every event after a note's creation sets its update time and version.
    @inline(__always)
    private mutating func touch(_ i: Int, at instant: Int64, version: UInt64) {
        entries[i].note.updatedAt = instant
        entries[i].note.version = version
    }

    /// A legacy note event, lifted by its upcaster's plan straight from its bytes (the payload
    /// is read whole first).
    private mutating func apply(
        _ lift: LegacyLifts.Lift, payload: UnsafeRawBufferPointer, id: Identifier, at instant: Int64, version: UInt64,
        position: UInt64
    ) throws {
        let values = try lift.decode(payload)
        for output in lift.outputs where output.holds(for: values) {
            let i = try entry(output.kind, of: id, at: instant, version: version, position: position)
            let p = output.payload(from: values)
            NoteFold.apply(output.kind, p, to: &entries[i], at: instant)
            touch(i, at: instant, version: version)
            file(output.kind, p, i)
            if output.kind.setsTitle { recordTitle(i, at: position) }
            if LinkIndex.mayRename(output.kind, p) { recordNames(i, at: position) }
        }
    }

    /// Legacy (or unknown) note events: upcast, decode, fold with ``NoteFold``.
    private mutating func applyLifted(_ view: EventView, id: Identifier, store: EventStore) throws {
        for e in try store.lift(view) {
            guard let kind = NoteEventKind.matcher.kind(e.type, version: e.schemaVersion) else {
                throw StoreError.damaged(
                    position: e.position,
                    detail: FoldError.foreignType(e.type, version: e.schemaVersion, in: .note(id)).description)
            }
            let p = try e.payload.withUnsafeBytes { bytes in try NotePayload<String>(kind, decoding: bytes) }
            let i = try entry(kind, of: id, at: e.recordedAt, version: e.version, position: e.position)
            var target = Materialized(entry: entries[i])
            NoteFold.apply(kind, p, to: &target, at: e.recordedAt)
            entries[i] = target.entry
            touch(i, at: e.recordedAt, version: e.version)
            file(kind, p, i)
            if kind.setsTitle { recordTitle(i, at: e.position) }
            if LinkIndex.mayRename(kind, p) { recordNames(i, at: e.position) }
        }
    }

    private mutating func materializeTitle(_ i: Int) {
        guard let t = entries[i].title else { return }
        entries[i].note.title = String(decoding: t, as: UTF8.self)
        entries[i].title = nil
    }

    private mutating func materializeBody(_ i: Int) {
        guard let b = entries[i].body else { return }
        entries[i].note.body = String(decoding: b, as: UTF8.self)
        entries[i].body = nil
    }

    /// Moves the notes out of the working table into ``notes``, their pending texts turned
    /// into strings (they were checked when read); must run inside the scan's read
    /// transaction, whose pages the pending texts point into.
    private mutating func finish(store: EventStore) throws {
        if releasingPages { store.environment.releaseMappedPages() }
        if releasingPages { materializeInFileOrder(store: store) }
        table = NoteTable()
        // Room for every scan's notes (the scans share them about evenly), so that the joined
        // replay can append the others' notes to this array rather than copy all of them into a
        // new one: a large array's pages that are never written take no memory.
        notes.reserveCapacity(scans == 1 ? entries.count : entries.count * scans + entries.count / 4)
        while let e = entries.popLast() {
            prefetchTexts(of: entries.count - Self.lookahead)
            var note = e.note
            if let t = e.title { note.title = String(decoding: t, as: UTF8.self) }
            if let b = e.body { note.body = String(decoding: b, as: UTF8.self) }
            if e.everPinned { state.everPinned.insert(note.id) }
            notes.append(note)
        }
        // Emptied, not yet given back: a large notebook's entries took as much as its notes.
        // (A replay that gives pages back turned every text into a string in file order, and
        // gave the pages back after it: this loop reads none.)
        entries = []
    }

    /// Brings the start of entry `i`'s pending texts into the cache, if it has any.
    @inline(__always)
    private func prefetchTexts(of i: Int) {
        guard i >= 0 else { return }
        entries.withUnsafeBufferPointer { buffer in
            if let p = buffer[i].title?.baseAddress { notes_prefetch(p) }
            if let p = buffer[i].body?.baseAddress {
                notes_prefetch(p)
                notes_prefetch(p + 64)
            }
        }
    }

    /// The texts in file order, giving back the mapped pages as it goes: the last texts of a
    /// large notebook are scattered over the whole log, and each touch maps the pages around it
    /// too. A note's title and body are taken apart (most edits change only the body, so the
    /// two are usually far from each other).
    private mutating func materializeInFileOrder(store: EventStore) {
        var order: [(address: UInt, index: Int, title: Bool)] = []
        order.reserveCapacity(entries.count * 2)
        for (i, e) in entries.enumerated() {
            if let p = e.title?.baseAddress { order.append((UInt(bitPattern: p), i, true)) }
            if let p = e.body?.baseAddress { order.append((UInt(bitPattern: p), i, false)) }
        }
        order.sort { $0.address < $1.address }
        for (k, item) in order.enumerated() {
            if item.title { materializeTitle(item.index) } else { materializeBody(item.index) }
            if k % 1_024 == 1_023 { store.environment.releaseMappedPages() }
        }
        store.environment.releaseMappedPages()
    }
}
