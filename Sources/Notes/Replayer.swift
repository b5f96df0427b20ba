import CCRC32C
import EventStore
import Glibc
import LMDB

/// The working state of a replay: notes in an array found through an open-addressing table
/// keyed by id, so each event costs one probe and an in-place change.
///
/// Titles and bodies are kept as checked slices of the stored bytes while the scan runs and
/// become strings once, at its end, inside the same read transaction: most stored texts are
/// superseded by a later edit and are never turned into a `String`.
struct Replayer {
    /// A note and its latest stored title and body not yet turned into strings.
    private struct Entry {
        var note: Note
        var title: UnsafeRawBufferPointer?
        var body: UnsafeRawBufferPointer?
    }

    private var entries: [Entry] = []
    private var table = NoteTable()
    /// Categories and the count of events folded; the notes are in ``notes``.
    private(set) var state = NotebookState()
    /// The notes, once the scan has finished.
    var notes: [Note] = []
    /// Whether to give back the store file's mapped pages while scanning.
    private let releasingPages: Bool
    /// Whether the store lifts the schema-1 note events with the shipped upcasters, so they
    /// can be folded straight from their bytes (``LegacyNoteKind``).
    private var liftsLegacyAsShipped = false

    init(releasingPages: Bool = false) {
        self.releasingPages = releasingPages
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

    /// Folds the events of positions 1...last in `shard`'s share, in one read transaction.
    mutating func scan(
        store: EventStore, through last: UInt64, shard: Int, of shards: Int, progress: ((UInt64) -> Void)?
    ) throws {
        liftsLegacyAsShipped = LegacyNoteKind.liftedAsShipped(by: store.registry)
        let ring = UnsafeMutablePointer<Pending>.allocate(capacity: Self.lookahead)
        self.ring = ring
        defer {
            ring.deallocate()
            self.ring = nil
        }
        try store.read { txn in
            var nextReport: UInt64 = 65_536
            var pages = releasingPages ? MappedPageBudget(store.environment) : nil
            do {
                try store.forEachEvent(
                    from: 1, through: last, in: txn,
                    acceptingStreams: { stream in
                        guard shards > 1 else { return true }
                        return Self.shard(of: stream, among: shards) == shard
                    }
                ) { view in
                    try take(view, store: store)
                    if let progress, view.position >= nextReport {
                        progress(view.position)
                        nextReport = view.position &+ 65_536
                    }
                    pages?.read(view.storedSize)
                    return true
                }
            } catch {
                // Events read before a damaged one are folded first, as a scan without a
                // ring would have: a failure among them is the one to report.
                if !foldFailed {
                    failedAt = Self.position(of: error) ?? lastRead &+ 1
                    try drain()
                }
                throw error
            }
            try drain()
            try finish(store: store)
        }
    }

    /// The position a store error names.
    private static func position(of error: any Error) -> UInt64? {
        if case StoreError.damaged(let position?, _) = error { return position }
        return nil
    }

    /// Queues a current-schema note event; folds anything else at once, after the queue.
    @inline(__always)
    private mutating func take(_ view: EventView, store: EventStore) throws {
        lastRead = view.position
        let stream = StreamRef(view.streamBytes)
        guard case .note(let id) = stream, let kind = NoteEventKind(view.typeBytes),
            kind.schemaVersion == view.schemaVersion, let ring
        else {
            try drain()
            do { try apply(view, stream: stream, store: store) } catch {
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
    /// else (categories, unreadable headers) in the first.
    static func shard(of stream: UnsafeRawBufferPointer?, among shards: Int) -> Int {
        guard let stream, stream.count == 41, stream[0] == UInt8(ascii: "n") else { return 0 }
        let mixed = UInt32(stream[40]) &* 31 &+ UInt32(stream[39]) &* 7 &+ UInt32(stream[38])
        return Int(mixed % UInt32(shards))
    }

    /// An event ``take(_:store:)`` does not queue: a note event of an older (or unknown)
    /// schema, a category event, or an event of another stream.
    private mutating func apply(_ view: EventView, stream: StreamRef, store: EventStore) throws {
        switch stream {
        case .note(let id):
            state.events += 1
            if liftsLegacyAsShipped, view.schemaVersion == 1, let kind = LegacyNoteKind(view.typeBytes) {
                do {
                    try apply(
                        kind, payload: view.payload, id: id, at: view.recordedAt, version: view.version,
                        position: view.position)
                } catch is DecodingError {
                    // Unreadable: the general path reports it as every other reader does.
                    try applyLifted(view, id: id, store: store)
                }
            } else {
                try applyLifted(view, id: id, store: store)
            }
        case .category:
            // Few and far between: the general rules (which count the event).
            try state.apply(view, store: store)
        case .other:
            state.events += 1
        }
    }

    private mutating func apply(
        _ kind: NoteEventKind, payload: UnsafeRawBufferPointer, id: Identifier, at instant: Int64, version: UInt64,
        position: UInt64
    ) throws {
        var r = ByteReader(payload)
        if kind == .created {
            let title = try r.readUTF8()
            let body = try r.readUTF8()
            let note = Note(
                id: id, title: "", body: "", pinned: try r.readBool(), category: try r.readOptionalIdentifier(),
                createdAt: instant, updatedAt: instant, version: version)
            try r.expectEnd()
            create(Entry(note: note, title: title, body: body))
            return
        }
        let i = try existing(id, position: position)
        switch kind {
        case .created: break
        case .retitled: entries[i].title = try r.readUTF8()
        case .bodyEdited: entries[i].body = try r.readUTF8()
        case .pinned: entries[i].note.pinned = true
        case .unpinned: entries[i].note.pinned = false
        case .categorized: entries[i].note.category = try r.readOptionalIdentifier()
        case .archived: entries[i].note.archived = true
        case .unarchived: entries[i].note.archived = false
        case .trashed: entries[i].note.trashed = true
        case .untrashed: entries[i].note.trashed = false
        case .restored:
            _ = try r.readSigned()
            let title = try r.readUTF8()
            let body = try r.readUTF8()
            let pinned = try r.readBool()
            let category = try r.readOptionalIdentifier()
            entries[i].title = title
            entries[i].body = body
            entries[i].note.pinned = pinned
            entries[i].note.category = category
            entries[i].note.trashed = false
        }
        try r.expectEnd()
        touch(i, at: instant, version: version)
    }

    /// Every event after a note's creation sets its update time and version.
    @inline(__always)
    private mutating func touch(_ i: Int, at instant: Int64, version: UInt64) {
        entries[i].note.updatedAt = instant
        entries[i].note.version = version
    }

    /// A schema-1 note event, folded as the shipped upcasters lift it: `NoteCreated` 1 as a
    /// creation with no category, `NoteUpdated` as a retitle and a body edit of the same
    /// version, `NotePinToggled` as a pin or unpin, `NoteDeleted` as a move to the trash.
    /// The payload is read whole before anything changes, so a decoding error leaves the
    /// note as it was.
    private mutating func apply(
        _ kind: LegacyNoteKind, payload: UnsafeRawBufferPointer, id: Identifier, at instant: Int64,
        version: UInt64, position: UInt64
    ) throws {
        var r = ByteReader(payload)
        switch kind {
        case .created:
            let title = try r.readUTF8()
            let content = try r.readUTF8()
            let pinned = try r.readBool()
            try r.expectEnd()
            create(
                Entry(
                    note: Note(
                        id: id, title: "", body: "", pinned: pinned, createdAt: instant, updatedAt: instant,
                        version: version),
                    title: title, body: content))
            return
        case .updated:
            let title = try r.readUTF8()
            let content = try r.readUTF8()
            try r.expectEnd()
            let i = try existing(id, position: position)
            entries[i].title = title
            entries[i].body = content
            touch(i, at: instant, version: version)
        case .pinToggled:
            let pinned = try r.readBool()
            try r.expectEnd()
            let i = try existing(id, position: position)
            entries[i].note.pinned = pinned
            touch(i, at: instant, version: version)
        case .deleted:
            try r.expectEnd()
            let i = try existing(id, position: position)
            entries[i].note.trashed = true
            touch(i, at: instant, version: version)
        }
    }

    /// A creation starts the note afresh, whether or not its id was seen before.
    private mutating func create(_ entry: Entry) {
        if let i = find(entry.note.id) {
            entries[i] = entry
        } else {
            table.insert(entry.note.id, index: entries.count)
            entries.append(entry)
        }
    }

    /// The index of a note an event changes, which must have been created.
    private func existing(_ id: Identifier, position: UInt64) throws -> Int {
        guard let i = find(id) else {
            throw StoreError.damaged(position: position, detail: "note \(id) does not begin with NoteCreated")
        }
        return i
    }

    /// Legacy (or unknown) note events: upcast, decode, fold with ``NoteFold``.
    private mutating func applyLifted(_ view: EventView, id: Identifier, store: EventStore) throws {
        for e in try store.lift(view) {
            let event = try e.payload.withUnsafeBytes { p in
                try NoteEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: p)
            }
            guard let event else {
                throw StoreError.damaged(
                    position: e.position, detail: "\(e.type) v\(e.schemaVersion) is not a note event")
            }
            let index = find(id)
            guard
                let next = NoteFold.apply(
                    event, to: index.map { entries[$0].note }, id: id, at: e.recordedAt, version: e.version)
            else {
                throw StoreError.damaged(position: e.position, detail: "note \(id) does not begin with NoteCreated")
            }
            if let index {
                entries[index].note = next
                // The fold leaves texts it does not set as they were: a pending text stays the
                // note's, unless this event replaced it.
                switch event {
                case .created, .restored:
                    entries[index].title = nil
                    entries[index].body = nil
                case .retitled: entries[index].title = nil
                case .bodyEdited: entries[index].body = nil
                default: break
                }
            } else {
                table.insert(id, index: entries.count)
                entries.append(Entry(note: next))
            }
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
        if releasingPages { materializeInFileOrder(store: store) }
        table = NoteTable()
        notes.reserveCapacity(entries.count)
        while let e = entries.popLast() {
            prefetchTexts(of: entries.count - Self.lookahead)
            var note = e.note
            if let t = e.title { note.title = String(decoding: t, as: UTF8.self) }
            if let b = e.body { note.body = String(decoding: b, as: UTF8.self) }
            notes.append(note)
        }
        if releasingPages { store.environment.releaseMappedPages() }
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
            if k % 8_192 == 8_191 { store.environment.releaseMappedPages() }
        }
    }
}
