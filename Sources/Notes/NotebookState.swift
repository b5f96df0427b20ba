import CCRC32C
import Dispatch
public import EventStore
import Glibc
import LMDB

/// The whole notebook folded in memory: what a rebuild writes and what `--as-of` queries read.
public struct NotebookState: Sendable {
    public var notes = NoteCollection()
    public var categories: [Identifier: Category] = [:]
    /// Events folded so far (stored events, not lifted ones).
    public var events: UInt64 = 0

    public init() {}

    /// Folds one current-schema event of `stream`.
    public mutating func apply(
        type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer, stream: StreamRef, version: UInt64,
        at instant: Int64, position: UInt64
    ) throws {
        switch stream {
        case .note(let id):
            guard let event = try NoteEvent.decode(type: type, schemaVersion: schemaVersion, payload: payload) else {
                throw StoreError.damaged(position: position, detail: "\(type) v\(schemaVersion) is not a note event")
            }
            guard let next = NoteFold.apply(event, to: notes[id], id: id, at: instant, version: version) else {
                throw StoreError.damaged(position: position, detail: "note \(id) does not begin with NoteCreated")
            }
            notes.update(next)
        case .category(let id):
            guard let event = try CategoryEvent.decode(type: type, schemaVersion: schemaVersion, payload: payload)
            else {
                throw StoreError.damaged(
                    position: position, detail: "\(type) v\(schemaVersion) is not a category event")
            }
            switch event {
            case .created(let name): categories[id] = Category(id: id, name: name, createdAt: instant)
            case .renamed(let name): categories[id]?.name = name
            case .deleted: categories[id]?.deleted = true
            }
        case .other:
            break
        }
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

    /// Category counts as the projection keeps them: notes not in the trash.
    public func categoriesWithCounts() -> [Identifier: Category] {
        var result = categories
        for k in result.keys { result[k]!.count = 0 }
        for n in notes.values where !n.trashed {
            if let c = n.category, result[c] != nil { result[c]!.count += 1 }
        }
        return result
    }

    /// Replays the log from the start up to `position` (inclusive).
    ///
    /// Current-schema note events are decoded straight from the stored bytes into the note
    /// they change (no type string, no intermediate event, one table lookup); legacy events and
    /// category events take the general path through ``apply(_:store:)``'s rules. The result
    /// is the same fold as ``NoteFold``.
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

    /// The replay split between `shards` scans of the same log, each on its own core and read
    /// transaction, each folding the notes whose stream falls in its share (categories and
    /// unreadable headers go to the first). A note's events stay in log order within one scan,
    /// so the fold is the same; every event is verified by exactly one scan. The scans stop at
    /// the head seen before they start, so a concurrent append changes nothing.
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
        let group = DispatchGroup()
        @Sendable func run(_ shard: Int, progress: ((UInt64) -> Void)?) {
            var replayer = Replayer(releasingPages: releasingPages)
            do {
                try replayer.scan(store: store, through: last, shard: shard, of: shards, progress: progress)
            } catch {
                slots[shard].failure = error
            }
            slots[shard].replayer = replayer
        }
        for shard in 1..<shards {
            DispatchQueue.global(qos: .userInitiated).async(group: group) { run(shard, progress: nil) }
        }
        run(0, progress: progress)
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
        // Categories are folded by the first scan only; every scan counts its own events.
        var result = slots[0].replayer!.state
        result.events = 0
        var notes: [Note] = []
        for slot in slots {
            guard var part = slot.replayer.take() else { continue }
            result.events += part.state.events
            if notes.isEmpty {
                swap(&notes, &part.notes)
            } else {
                // Moved one by one: appending a copy would count references to every string.
                notes.reserveCapacity(notes.count + part.notes.count)
                while let note = part.notes.popLast() { notes.append(note) }
            }
        }
        result.notes = NoteCollection(notes)
        return result
    }
}

extension NotebookState {
    /// The same state as ``replay(store:upTo:releasingPages:progress:)``, read newest first: each field of a
    /// note is decoded only from the last event that set it, and a note's events before its
    /// creation are not read at all, so the superseded titles and bodies that dominate a long
    /// log are never turned into strings. `--as-of` uses it; rebuild and verify use the forward
    /// replay, which decodes (and so checks) every payload.
    public static func replayNewestFirst(store: EventStore, upTo position: UInt64 = .max) throws -> NotebookState {
        var replayer = NewestFirstReplayer()
        try store.read { txn in
            let start = min(position, try store.headPosition(in: txn))
            guard start > 0 else { return }
            try store.forEachEvent(from: start, reverse: true, in: txn) { view in
                try replayer.apply(view, store: store)
                return true
            }
        }
        return try replayer.finish()
    }
}

/// Folds events newest first: a field is taken from the newest event that sets it, and a
/// note is complete once its (newest) creation is reached.
struct NewestFirstReplayer {
    private struct Partial {
        var note: Note
        /// Fields already taken from a newer event.
        var set: Fields = []
        var complete = false
    }

    private struct Fields: OptionSet {
        let rawValue: UInt8
        static let title = Fields(rawValue: 1)
        static let body = Fields(rawValue: 2)
        static let pinned = Fields(rawValue: 4)
        static let category = Fields(rawValue: 8)
        static let archived = Fields(rawValue: 16)
        static let trashed = Fields(rawValue: 32)
    }

    /// A category event kept for a forward fold at the end (categories have few events).
    private struct CategoryStep {
        var type: String
        var schemaVersion: UInt32
        var payload: [UInt8]
        var id: Identifier
        var version: UInt64
        var instant: Int64
        var position: UInt64
    }

    private var notes: [Partial] = []
    private var table = NoteTable()
    private var categorySteps: [CategoryStep] = []
    private var events: UInt64 = 0

    init() { notes.reserveCapacity(1024) }

    mutating func apply(_ view: EventView, store: EventStore) throws {
        events += 1
        switch StreamRef(view.streamBytes) {
        case .note(let id):
            let index = table.find(id) { notes[$0].note.id }
            if let index, notes[index].complete { return }
            if let kind = NoteEventKind(view.typeBytes), kind.schemaVersion == view.schemaVersion {
                let i = index ?? open(id, at: view.recordedAt, version: view.version)
                try apply(kind, payload: view.payload, to: i, at: view.recordedAt)
            } else {
                for e in try store.lift(view).reversed() {
                    let event = try e.payload.withUnsafeBytes { p in
                        try NoteEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: p)
                    }
                    guard let event else {
                        throw StoreError.damaged(
                            position: e.position, detail: "\(e.type) v\(e.schemaVersion) is not a note event")
                    }
                    let i = table.find(id) { notes[$0].note.id } ?? open(id, at: e.recordedAt, version: e.version)
                    if notes[i].complete { break }
                    apply(event, to: i, at: e.recordedAt)
                }
            }
        case .category(let id):
            // Lifted now, applied in reverse at the end; the last lifted must come out last.
            for e in try store.lift(view).reversed() {
                categorySteps.append(
                    CategoryStep(
                        type: e.type, schemaVersion: e.schemaVersion, payload: e.payload, id: id, version: e.version,
                        instant: e.recordedAt, position: e.position))
            }
        case .other:
            break
        }
    }

    /// Starts a note at its newest event, which gives its version and update time.
    private mutating func open(_ id: Identifier, at instant: Int64, version: UInt64) -> Int {
        let i = notes.count
        table.insert(id, index: i)
        notes.append(
            Partial(note: Note(id: id, title: "", body: "", createdAt: instant, updatedAt: instant, version: version)))
        return i
    }

    private mutating func apply(_ kind: NoteEventKind, payload: UnsafeRawBufferPointer, to i: Int, at instant: Int64)
        throws
    {
        var r = ByteReader(payload)
        let set = notes[i].set
        switch kind {
        case .created, .restored:
            if kind == .restored { _ = try r.readSigned() }
            if set.contains(.title) { _ = try r.readBlob() } else { notes[i].note.title = try r.readString() }
            if set.contains(.body) { _ = try r.readBlob() } else { notes[i].note.body = try r.readString() }
            let pinned = try r.readBool()
            let category = try r.readOptionalIdentifier()
            if !set.contains(.pinned) { notes[i].note.pinned = pinned }
            if !set.contains(.category) { notes[i].note.category = category }
            notes[i].set.formUnion([.title, .body, .pinned, .category, .trashed])
            if kind == .created {
                // A creation starts from nothing: flags no newer event set are off.
                if !set.contains(.archived) { notes[i].note.archived = false }
                notes[i].note.createdAt = instant
                notes[i].complete = true
            }
            if !set.contains(.trashed) { notes[i].note.trashed = false }
        case .retitled:
            guard !set.contains(.title) else { return }
            notes[i].note.title = try r.readString()
            notes[i].set.insert(.title)
        case .bodyEdited:
            guard !set.contains(.body) else { return }
            notes[i].note.body = try r.readString()
            notes[i].set.insert(.body)
        case .categorized:
            guard !set.contains(.category) else { return }
            notes[i].note.category = try r.readOptionalIdentifier()
            notes[i].set.insert(.category)
        case .pinned, .unpinned:
            guard !set.contains(.pinned) else { return }
            notes[i].note.pinned = kind == .pinned
            notes[i].set.insert(.pinned)
        case .archived, .unarchived:
            guard !set.contains(.archived) else { return }
            notes[i].note.archived = kind == .archived
            notes[i].set.insert(.archived)
        case .trashed, .untrashed:
            guard !set.contains(.trashed) else { return }
            notes[i].note.trashed = kind == .trashed
            notes[i].set.insert(.trashed)
        }
        try r.expectEnd()
    }

    /// A decoded (lifted) event, by the same rules.
    private mutating func apply(_ event: NoteEvent, to i: Int, at instant: Int64) {
        let set = notes[i].set
        func take(_ field: Fields, _ change: (inout Note) -> Void) {
            guard !set.contains(field) else { return }
            change(&notes[i].note)
            notes[i].set.insert(field)
        }
        switch event {
        case .created(let title, let body, let pinned, let category),
            .restored(_, let title, let body, let pinned, let category):
            take(.title) { $0.title = title }
            take(.body) { $0.body = body }
            take(.pinned) { $0.pinned = pinned }
            take(.category) { $0.category = category }
            take(.trashed) { $0.trashed = false }
            if case .created = event {
                take(.archived) { $0.archived = false }
                notes[i].note.createdAt = instant
                notes[i].complete = true
            }
        case .retitled(let title): take(.title) { $0.title = title }
        case .bodyEdited(let body): take(.body) { $0.body = body }
        case .pinned: take(.pinned) { $0.pinned = true }
        case .unpinned: take(.pinned) { $0.pinned = false }
        case .categorized(let category): take(.category) { $0.category = category }
        case .archived: take(.archived) { $0.archived = true }
        case .unarchived: take(.archived) { $0.archived = false }
        case .trashed: take(.trashed) { $0.trashed = true }
        case .untrashed: take(.trashed) { $0.trashed = false }
        }
    }

    consuming func finish() throws -> NotebookState {
        var result = NotebookState()
        for p in notes where !p.complete {
            throw StoreError.damaged(position: nil, detail: "note \(p.note.id) does not begin with NoteCreated")
        }
        result.notes = NoteCollection(notes.map(\.note))
        for step in categorySteps.reversed() {
            try step.payload.withUnsafeBytes { payload in
                try result.apply(
                    type: step.type, schemaVersion: step.schemaVersion, payload: payload, stream: .category(step.id),
                    version: step.version, at: step.instant, position: step.position)
            }
        }
        result.events = events
        return result
    }
}

/// The current-schema note event types, recognised from the stored type bytes without
/// making a string.
enum NoteEventKind: UInt8 {
    case created, retitled, bodyEdited, pinned, unpinned, categorized, archived, unarchived, trashed, untrashed,
        restored

    var schemaVersion: UInt32 { self == .created ? 2 : 1 }

    init?(_ bytes: UnsafeRawBufferPointer) {
        // "Note" then a distinguishing rest; lengths narrow it to one or two candidates.
        guard bytes.count >= 10, let base = bytes.baseAddress, memcmp(base, "Note", 4) == 0 else { return nil }
        func rest(_ s: StaticString) -> Bool {
            s.utf8CodeUnitCount == bytes.count - 4 && memcmp(base + 4, s.utf8Start, bytes.count - 4) == 0
        }
        switch bytes.count {
        case 10 where rest("Pinned"): self = .pinned
        case 11 where rest("Created"): self = .created
        case 11 where rest("Trashed"): self = .trashed
        case 12 where rest("Retitled"): self = .retitled
        case 12 where rest("Unpinned"): self = .unpinned
        case 12 where rest("Archived"): self = .archived
        case 12 where rest("Restored"): self = .restored
        case 13 where rest("Untrashed"): self = .untrashed
        case 14 where rest("BodyEdited"): self = .bodyEdited
        case 14 where rest("Unarchived"): self = .unarchived
        case 15 where rest("Categorized"): self = .categorized
        default: return nil
        }
    }
}

/// The schema-1 note event types (the first notes model), recognised from the stored type
/// bytes.
enum LegacyNoteKind: UInt8 {
    case created, updated, pinToggled, deleted

    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 11, let base = bytes.baseAddress, memcmp(base, "Note", 4) == 0 else { return nil }
        func rest(_ s: StaticString) -> Bool {
            s.utf8CodeUnitCount == bytes.count - 4 && memcmp(base + 4, s.utf8Start, bytes.count - 4) == 0
        }
        if rest("Created") {
            self = .created
        } else if rest("Updated") {
            self = .updated
        } else if rest("PinToggled") {
            self = .pinToggled
        } else if rest("Deleted") {
            self = .deleted
        } else {
            return nil
        }
    }

    /// Whether `registry` reads schema-1 note events exactly as shipped: the same legacy
    /// schemas, the shipped upcasters (known by their names, which are never reused), and
    /// the current versions they lift to. A program that registers its own chain for these
    /// types gets it applied through the general path.
    static func liftedAsShipped(by registry: SchemaRegistry) -> Bool {
        NotesSchema.legacy.allSatisfy { registry.schemas[SchemaKey($0.type, $0.version)] == $0 }
            && NotesSchema.upcasters.allSatisfy { shipped in
                registry.upcasters[SchemaKey(shipped.type, shipped.fromVersion)]?.name == shipped.name
                    && shipped.produces.allSatisfy { registry.isCurrent($0.type, $0.version) }
            }
    }
}

/// Note ids to array indexes: open addressing with linear probing, kept at most half full.
/// Ids are mixed before use, so sequential test ids spread as well as random UUIDs.
///
/// A slot is 8 bytes (32 bits of the id's hash and the index), so the table of a large
/// notebook stays small enough for the caches; a tag match is confirmed against the id the
/// caller stores at that index.
struct NoteTable {
    /// `tag << 32 | (index + 1)`; 0 marks an empty slot.
    private var slots: [UInt64]
    private var count = 0

    /// A table that holds `capacity` ids without growing.
    init(capacity: Int = 512) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = [UInt64](repeating: 0, count: size)
    }

    /// The high half of a 64-bit mix of the id: it picks the slot and is kept as the tag.
    @inline(__always)
    private static func tag(_ id: Identifier) -> UInt64 {
        var x = id.high ^ (id.low &* 0x9E37_79B9_7F4A_7C15)
        x ^= x >> 31
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return x >> 32
    }

    /// The index of `id`; `idAt` gives the id stored at an index.
    @inline(__always)
    func find(_ id: Identifier, idAt: (Int) -> Identifier) -> Int? {
        let tag = Self.tag(id)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: tag) & mask
        while true {
            let s = slots[i]
            if s == 0 { return nil }
            if s >> 32 == tag {
                let index = Int(truncatingIfNeeded: s & 0xFFFF_FFFF) - 1
                if idAt(index) == id { return index }
            }
            i = (i + 1) & mask
        }
    }

    /// Brings the slot where a search for `id` starts into the cache.
    @inline(__always)
    func prefetch(_ id: Identifier) {
        let i = Int(truncatingIfNeeded: Self.tag(id)) & (slots.count - 1)
        slots.withUnsafeBufferPointer { notes_prefetch($0.baseAddress! + i) }
    }

    /// The index in the first slot whose tag matches `id`'s, unconfirmed: the likely index,
    /// for a prefetch.
    @inline(__always)
    func candidate(_ id: Identifier) -> Int? { find(id) { _ in id } }

    /// Inserts an id known to be absent.
    mutating func insert(_ id: Identifier, index: Int) {
        place(tag: Self.tag(id), value: UInt64(truncatingIfNeeded: index + 1) & 0xFFFF_FFFF)
    }

    private mutating func place(tag: UInt64, value: UInt64) {
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: tag) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = tag << 32 | value
        count += 1
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        count = 0
        for s in old where s != 0 { place(tag: s >> 32, value: s & 0xFFFF_FFFF) }
    }
}

/// Which kind of stream an event belongs to, parsed from its name without allocating.
public enum StreamRef: Sendable, Equatable {
    case note(Identifier)
    case category(Identifier)
    case other

    public init(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count == 41, bytes.starts(with: StreamRef.notePrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[5...]))
        {
            self = .note(id)
        } else if bytes.count == 45, bytes.starts(with: StreamRef.categoryPrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[9...]))
        {
            self = .category(id)
        } else {
            self = .other
        }
    }

    public init(_ stream: String) {
        var s = stream
        self = s.withUTF8 { StreamRef(UnsafeRawBufferPointer($0)) }
    }

    static let notePrefix = Array("note/".utf8)
    static let categoryPrefix = Array("category/".utf8)

    /// Parses the canonical 36-character UUID form (lowercase hex, as streams are named),
    /// eight digits at a time.
    static func parseID(_ b: UnsafeRawBufferPointer) -> Identifier? {
        guard b.count == 36, b[8] == 0x2D, b[13] == 0x2D, b[18] == 0x2D, b[23] == 0x2D else { return nil }
        func eight(_ at: Int) -> UInt64 { UInt64(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        func four(_ at: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        }
        guard let a = hex8(eight(0)), let c = hex8(four(9) | four(14) << 32),
            let d = hex8(four(19) | four(24) << 32), let e = hex8(eight(28))
        else { return nil }
        return Identifier(high: a << 32 | c, low: d << 32 | e)
    }

    /// The value of eight lowercase hex digits, the first in the lowest byte of `x`, or nil
    /// when a byte is not one.
    @inline(__always)
    static func hex8(_ x: UInt64) -> UInt64? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let top = ones &* 0x80
        // With every byte below 0x80, adding less than 0x80 to each carries into no other,
        // and a byte's top bit then says whether it reached the bound.
        let atLeast0 = x &+ ones &* (0x80 - 0x30)
        let above9 = x &+ ones &* (0x80 - 0x3A)
        let atLeastA = x &+ ones &* (0x80 - 0x61)
        let aboveF = x &+ ones &* (0x80 - 0x67)
        let digit = ((atLeast0 & ~above9) | (atLeastA & ~aboveF)) & top
        guard x & top == 0, digit == top else { return nil }
        // '0'...'9' have 0 in bit 6 and their value in the low nibble; 'a'...'f' have 1 and
        // their value minus 9.
        let nibbles = (x & (ones &* 0x0F)) &+ ((x >> 6) & ones) &* 9
        let bytes = ((nibbles << 4) | (nibbles >> 8)) & 0x00FF_00FF_00FF_00FF
        let packed = (bytes | bytes >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt64(UInt32(truncatingIfNeeded: packed | packed >> 16).byteSwapped)
    }
}
