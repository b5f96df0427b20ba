public import Basics
import CIntrinsics
import Dispatch
public import EventStore
import Glibc
import LMDB
import SearchEngine

/// The whole notebook folded in memory: what a rebuild writes and what `--as-of` queries read.
public struct NotebookState: Sendable {
    public var notes = NoteCollection()
    public var categories: [Identifier: Category] = [:]
    public var tags: [Identifier: Tag] = [:]
    /// Events folded so far (stored events, not lifted ones).
    public var events: UInt64 = 0
    /// Every title each note was given, folded, in log order within a note (the title history
    /// that links resolve through); the newest-first replay of `--as-of` views leaves it empty.
    public var titleChanges: [TitleChange] {
        get { titleChangeParts.count == 1 ? titleChangeParts[0] : Array(titleChangeParts.joined()) }
        set { titleChangeParts = [newValue] }
        _modify {
            if titleChangeParts.count != 1 { titleChangeParts = [Array(titleChangeParts.joined())] }
            yield &titleChangeParts[0]
        }
    }
    /// The title history as a replay's scans leave it, a part each (a note's changes all in one
    /// part): a rebuild reads it so, without the copy that joins them (112 MB at 10 M events).
    private(set) var titleChangeParts: [[TitleChange]] = [[]]
    /// Every change of each note's other names (aliases, file names), in log order within a
    /// note; empty after a newest-first replay too.
    public var nameChanges: [NameChange] = []
    /// The notes an event ever left pinned (each is in the `pinned_ever` projection): a note
    /// pinned at any instant is one of them, which bounds the search for the pinned notes of a
    /// past listing. Empty after a newest-first replay, which does not read old events.
    public var everPinned: Set<Identifier> = []
    /// Each category and tag an event ever filed each note under (the `filed_ever` projection,
    /// see ``Filing``), maybe more than once; empty after a newest-first replay. An array, not
    /// a set: hashing every filing as the replay meets it cost a third of the fold.
    var everFiled: [Filing] = []

    public init() {}

    /// The filings, leaving none: a rebuild sorts them where they lie.
    mutating func takeFilings() -> [Filing] {
        var filings: [Filing] = []
        swap(&filings, &everFiled)
        return filings
    }

    /// How many filings the state holds (each as often as an event gave it).
    package var filingCount: Int { everFiled.count }

    /// The state's parts, each with what lets go of it: what a benchmark weighs one by one
    /// (`--child-rebuild-stages`).
    package static let parts: [(String, @Sendable (inout NotebookState) -> Void)] = [
        ("filings (filed_ever)", { $0.everFiled = [] }),
        ("title changes", { $0.titleChanges = [] }),
        ("name changes", { $0.nameChanges = [] }),
        ("notes ever pinned", { $0.everPinned = [] }),
        (
            "categories and tags",
            {
                $0.categories = [:]; $0.tags = [:]
            }
        ),
        ("notes", { $0.notes = NoteCollection() }),
    ]

    /// Folds one current-schema event of `stream` (the general path: the payload decoded into
    /// strings, then ``NoteFold`` or ``CategoryFold``); a stream the fold refuses is damage at
    /// `position`.
    public mutating func apply(
        type: String, schemaVersion: UInt32, payload: [UInt8], stream: StreamRef, version: UInt64, at instant: Int64,
        position: UInt64
    ) throws {
        try payload.withUnsafeBytes { p in
            try apply(
                type: type, schemaVersion: schemaVersion, payload: p, stream: stream, version: version, at: instant,
                position: position)
        }
    }

    /// ``apply(type:schemaVersion:payload:stream:version:at:position:)`` of bytes read in place.
    package mutating func apply(
        type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer, stream: StreamRef, version: UInt64,
        at instant: Int64, position: UInt64
    ) throws {
        do {
            try fold(
                type: type, schemaVersion: schemaVersion, payload: payload, stream: stream, version: version,
                at: instant, position: position)
        } catch let e as FoldError {
            throw StoreError.damaged(position: position, detail: e.description)
        }
    }

    /// The same fold, whose refusal of an event is the ``FoldError`` itself, as the inline
    /// projections throw it (for events being appended, which are not damage).
    package mutating func fold(
        type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer, stream: StreamRef, version: UInt64,
        at instant: Int64, position: UInt64
    ) throws {
        switch stream {
        case .note(let id):
            guard let kind = NoteEventKind.matcher.kind(type, version: schemaVersion) else {
                throw FoldError.foreignType(type, version: schemaVersion, in: .note(id))
            }
            let p = try NotePayload<String>(kind, decoding: payload)
            // The note is folded where it lies: taken out and put back, each of its strings
            // was retained and released for every event (a tenth of an import's time).
            func record(_ note: Note) -> Folded {
                Folded(
                    pinned: note.pinned, category: note.category, title: kind.setsTitle ? note.title : nil,
                    names: LinkIndex.mayRename(kind, p) ? LinkIndex.names(of: note) : nil)
            }
            let folded = try notes.update(
                id,
                existing: { (note: inout Note) throws(FoldError) -> Folded? in
                    try NoteFold.apply(kind, p, toExisting: &note, at: instant, version: version)
                    return record(note)
                },
                absent: { () throws(FoldError) -> (Note?, Folded?) in
                    var note: Note?
                    try NoteFold.apply(kind, p, to: &note, id: id, at: instant, version: version)
                    return (note, note.map(record))
                })
            if let folded {
                if folded.pinned { everPinned.insert(id) }
                if let filing = Filing.made(by: kind, p, note: id, category: folded.category) {
                    everFiled.append(filing)
                }
                if let title = folded.title {
                    titleChanges.append(TitleChange(note: id, position: position, folded: TextFolding.fold(title)))
                }
                if let names = folded.names {
                    nameChanges.append(NameChange(note: id, position: position, names: names))
                }
            }
        case .category(let id):
            guard let event = try CategoryEvent.decode(type: type, schemaVersion: schemaVersion, payload: payload)
            else { throw FoldError.foreignType(type, version: schemaVersion, in: .category(id)) }
            try CategoryFold.apply(event, to: &categories[id], id: id, at: instant)
        case .tag(let id):
            guard let event = try TagEvent.decode(type: type, schemaVersion: schemaVersion, payload: payload) else {
                throw FoldError.foreignType(type, version: schemaVersion, in: .tag(id))
            }
            try TagFold.apply(event, to: &tags[id], id: id, at: instant)
        case .other:
            break
        }
    }

    /// What ``fold(type:schemaVersion:payload:stream:version:at:position:)`` records of a note
    /// just folded, read while it is in place.
    private struct Folded {
        var pinned: Bool
        var category: Identifier?
        var title: String?
        var names: [String]?
    }

    /// Folds one stored event, upcasting it when its schema is old.
    public mutating func apply(_ view: EventView, store: EventStore) throws {
        events += 1
        let stream = StreamRef(view.streamBytes)
        let type = view.type
        if store.registry.isCurrent(type, view.schemaVersion) {
            try apply(
                type: type, schemaVersion: view.schemaVersion, payload: view.payload, stream: stream,
                version: view.version, at: view.recordedAt, position: view.position)
        } else {
            for e in try store.lift(view) {
                try e.payload.withUnsafeBytes { p in
                    try apply(
                        type: e.type, schemaVersion: e.schemaVersion, payload: p, stream: stream, version: e.version,
                        at: e.recordedAt, position: e.position)
                }
            }
        }
    }

    /// Categories and tags with their counts as the projection keeps them: notes not in the
    /// trash.
    public func entitiesWithCounts() -> (categories: [Identifier: Category], tags: [Identifier: Tag]) {
        var categories = self.categories
        var tags = self.tags
        for k in categories.keys { categories[k]!.count = 0 }
        for k in tags.keys { tags[k]!.count = 0 }
        // Through the buffer: each note read in place, not copied (and its strings retained).
        notes.values.withUnsafeBufferPointer { notes in
            for i in notes.indices where !notes[i].trashed {
                if let c = notes[i].category, categories[c] != nil { categories[c]!.count += 1 }
                for t in notes[i].tags where tags[t] != nil { tags[t]!.count += 1 }
            }
        }
        return (categories, tags)
    }

    /// Replays the log from the start up to `position` (inclusive).
    ///
    /// Every event goes through ``NoteFold`` (or ``CategoryFold``): current-schema note events
    /// are decoded straight from the stored bytes, their texts left in the mapped file until
    /// the end; legacy note events are lifted by their upcasters' plans straight from their bytes
    /// (``LegacyLifts``); anything else takes the general path of ``apply(_:store:)``.
    ///
    /// A long log is split by note between the processor's cores (see
    /// ``replay(store:upTo:shards:releasingPages:progress:)``).
    ///
    /// With `releasingPages`, the scans give back the mapped pages of the store file they have
    /// read as they go (``Environment/releaseMappedPages()``), so a one-off replay of a large log
    /// (a rebuild, a verification) does not count the whole file in its resident memory; a
    /// process that replays repeatedly keeps them mapped and does not fault them in again.
    public static func replay(
        store: EventStore, upTo position: UInt64 = .max, releasingPages: Bool = false,
        progress: ((UInt64) -> Void)? = nil
    ) throws -> NotebookState {
        let head = try store.read { txn in try store.headPosition(in: txn) }
        return try replay(
            store: store, through: min(position, head), shards: replayShards(events: head),
            releasingPages: releasingPages, progress: progress)
    }

    /// Logs shorter than this are replayed on one core: a thread costs more than it saves.
    static let parallelReplayEvents: UInt64 = 50_000

    /// How many scans ``replay(store:upTo:releasingPages:progress:)`` splits a log of `events`
    /// events between.
    public static func replayShards(events: UInt64) -> Int {
        guard events >= parallelReplayEvents else { return 1 }
        return max(1, min(4, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// The replay split between `shards` scans, each on its own core, each folding the notes
    /// whose stream falls in its share (categories, tags and unreadable headers go to the
    /// first). The first scan walks the log once, in one read transaction, and hands every
    /// event of another share to that share's scan, which verifies and folds it (see
    /// ``EventChannel``). A note's events stay in log order within one scan, so the fold is the
    /// same; every event is verified by exactly one scan. The walk stops at the head seen
    /// before it starts, so a concurrent append changes nothing.
    public static func replay(
        store: EventStore, upTo position: UInt64, shards: Int, releasingPages: Bool = false,
        progress: ((UInt64) -> Void)? = nil
    ) throws -> NotebookState {
        let head = try store.read { txn in try store.headPosition(in: txn) }
        return try replay(
            store: store, through: min(position, head), shards: shards, releasingPages: releasingPages,
            progress: progress)
    }

    /// The replay of positions 1...last, which is at most the head.
    private static func replay(
        store: EventStore, through last: UInt64, shards requested: Int, releasingPages: Bool,
        progress: ((UInt64) -> Void)?
    ) throws -> NotebookState {
        let shards = max(1, requested)
        /// One scan's outcome, written by its scan before the group is left and read after
        /// the wait; each scan has its own.
        final class Slot: @unchecked Sendable {
            var replayer: Replayer?
            var failure: (any Error)?
        }
        let slots = (0..<shards).map { _ in Slot() }
        let channels = (1..<shards).map { _ in EventChannel() }
        let group = DispatchGroup()
        for shard in 1..<shards {
            DispatchQueue.global(qos: .userInitiated).async(group: group) {
                let channel = channels[shard - 1]
                var replayer = Replayer(releasingPages: releasingPages, scans: shards)
                do {
                    try replayer.consume(channel, store: store)
                } catch {
                    slots[shard].failure = error
                }
                slots[shard].replayer = replayer
                channel.finished.signal()
            }
        }
        var replayer = Replayer(releasingPages: releasingPages, scans: shards)
        do {
            try replayer.scan(store: store, through: last, routing: channels, progress: progress)
        } catch {
            slots[0].failure = error
        }
        slots[0].replayer = replayer
        group.wait()
        // The failure a single scan would meet first: the lowest position any scan failed at.
        var first: (position: UInt64, error: any Error)?
        for slot in slots {
            guard let replayer = slot.replayer else {
                throw StoreError.damaged(position: nil, detail: "a replay scan did not finish")
            }
            if let error = slot.failure {
                let position = replayer.failedAt ?? .max
                if first == nil || position < first!.position { first = (position, error) }
            }
        }
        if let first { throw first.error }
        // A one-off replay of a large log gives the scans' freed memory back before the parts
        // are joined (``releasingPages`` marks such a replay).
        if releasingPages { notes_trim_heap() }
        // Categories are folded by the first scan only; every scan counts its own events.
        var result = slots[0].replayer!.state
        result.events = 0
        result.titleChanges = []
        result.nameChanges = []
        result.everPinned = []
        result.everFiled = []
        var parts = slots.compactMap { $0.replayer.take() }
        // Each kind of record reserved at its whole size, and each scan's let go of once moved
        // (growing them as they came kept every scan's copy and a doubled buffer at once); the
        // largest, the notes, first, while nothing else has been added.
        let noteCount = parts.reduce(0) { $0 + $1.notes.count }
        var notes: [Note] = []
        // The notes of the scan whose array has room for all of them, the others' appended.
        if let k = parts.indices.first(where: { parts[$0].notes.capacity >= noteCount }) {
            swap(&notes, &parts[k].notes)
        }
        notes.reserveCapacity(noteCount)
        for k in parts.indices {
            // Moved one by one: appending a copy would count references to every string.
            while let note = parts[k].notes.popLast() { notes.append(note) }
            parts[k].notes = []
        }
        result.titleChangeParts = parts.indices.map { parts[$0].takeTitleChanges() }
        result.everFiled.reserveCapacity(parts.reduce(0) { $0 + $1.state.everFiled.count })
        for k in parts.indices {
            result.events += parts[k].state.events
            result.nameChanges += parts[k].state.nameChanges
            result.everPinned.formUnion(parts[k].state.everPinned)
            result.everFiled += parts[k].takeFilings()
        }
        parts = []
        result.notes = NoteCollection(notes)
        return result
    }
}
