public import EventStore

/// The whole notebook folded in memory: what a rebuild writes and what `--as-of` queries read.
public struct NotebookState: Sendable {
    public var notes: [Identifier: Note] = [:]
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
            notes[id] = next
        case .category(let id):
            guard let event = try CategoryEvent.decode(type: type, schemaVersion: schemaVersion, payload: payload)
            else {
                throw StoreError.damaged(position: position, detail: "\(type) v\(schemaVersion) is not a category event")
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

    /// Replays the log from the start up to `position` (inclusive) in one read snapshot.
    public static func replay(
        store: EventStore, upTo position: UInt64 = .max, progress: ((UInt64) -> Void)? = nil
    ) throws -> NotebookState {
        var state = NotebookState()
        try store.read { txn in
            try store.forEachEvent(from: 1, in: txn) { view in
                guard view.position <= position else { return false }
                try state.apply(view, store: store)
                if let progress, view.position % 65_536 == 0 { progress(view.position) }
                return true
            }
        }
        return state
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

    /// Parses the canonical 36-character UUID form.
    static func parseID(_ b: UnsafeRawBufferPointer) -> Identifier? {
        guard b.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var n = 0
        for (i, c) in b.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let v = hexDigit(c) else { return nil }
            if n < 16 { high = high << 4 | UInt64(v) } else { low = low << 4 | UInt64(v) }
            n += 1
        }
        return Identifier(high: high, low: low)
    }
}
