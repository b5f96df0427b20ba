public import EventStore

/// The current event catalogue of notes and categories.
///
/// Each case knows its type name, schema version and payload layout; ``NotesSchema`` declares
/// the same layouts so generic code (upcasters, export, import) can read them by field name.
public enum NoteEvent: Sendable, Equatable {
    case created(title: String, body: String, pinned: Bool, category: Identifier?)
    case retitled(title: String)
    case bodyEdited(body: String)
    case pinned
    case unpinned
    case categorized(category: Identifier?)
    case archived
    case unarchived
    case trashed
    case untrashed
    case restored(fromVersion: UInt64, title: String, body: String, pinned: Bool, category: Identifier?)

    public var type: String {
        switch self {
        case .created: return "NoteCreated"
        case .retitled: return "NoteRetitled"
        case .bodyEdited: return "NoteBodyEdited"
        case .pinned: return "NotePinned"
        case .unpinned: return "NoteUnpinned"
        case .categorized: return "NoteCategorized"
        case .archived: return "NoteArchived"
        case .unarchived: return "NoteUnarchived"
        case .trashed: return "NoteTrashed"
        case .untrashed: return "NoteUntrashed"
        case .restored: return "NoteRestored"
        }
    }

    public var schemaVersion: UInt32 {
        if case .created = self { return 2 }
        return 1
    }

    /// The payload, in the field order ``NotesSchema`` declares.
    public var payload: [UInt8] {
        var w = ByteWriter()
        switch self {
        case .created(let title, let body, let pinned, let category):
            w.write(string: title)
            w.write(string: body)
            w.write(bool: pinned)
            w.write(optionalIdentifier: category)
        case .retitled(let title): w.write(string: title)
        case .bodyEdited(let body): w.write(string: body)
        case .categorized(let category): w.write(optionalIdentifier: category)
        case .restored(let from, let title, let body, let pinned, let category):
            w.write(signed: Int64(clamping: from))
            w.write(string: title)
            w.write(string: body)
            w.write(bool: pinned)
            w.write(optionalIdentifier: category)
        case .pinned, .unpinned, .archived, .unarchived, .trashed, .untrashed: break
        }
        return w.bytes
    }

    /// Decodes a current-schema note event; nil for a type that is not a note event.
    public static func decode(type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer)
        throws(DecodingError)
        -> NoteEvent?
    {
        var r = ByteReader(payload)
        let event: NoteEvent
        switch (type, schemaVersion) {
        case ("NoteCreated", 2):
            event = .created(
                title: try r.readString(), body: try r.readString(), pinned: try r.readBool(),
                category: try r.readOptionalIdentifier())
        case ("NoteRetitled", 1): event = .retitled(title: try r.readString())
        case ("NoteBodyEdited", 1): event = .bodyEdited(body: try r.readString())
        case ("NotePinned", 1): event = .pinned
        case ("NoteUnpinned", 1): event = .unpinned
        case ("NoteCategorized", 1): event = .categorized(category: try r.readOptionalIdentifier())
        case ("NoteArchived", 1): event = .archived
        case ("NoteUnarchived", 1): event = .unarchived
        case ("NoteTrashed", 1): event = .trashed
        case ("NoteUntrashed", 1): event = .untrashed
        case ("NoteRestored", 1):
            let from = try r.readSigned()
            event = .restored(
                fromVersion: UInt64(clamping: from), title: try r.readString(), body: try r.readString(),
                pinned: try r.readBool(), category: try r.readOptionalIdentifier())
        default: return nil
        }
        try r.expectEnd()
        return event
    }

    public static func decode(_ e: LiftedEvent) throws(DecodingError) -> NoteEvent? {
        let result: Result<NoteEvent?, DecodingError> = e.payload.withUnsafeBytes { p in
            Result { () throws(DecodingError) in try decode(type: e.type, schemaVersion: e.schemaVersion, payload: p) }
        }
        return try result.get()
    }

    /// An event to append, with a fresh id and the given metadata.
    public func newEvent(id: Identifier, metadata: EventMetadata, recordedAt: Int64? = nil) -> NewEvent {
        NewEvent(
            id: id, type: type, schemaVersion: schemaVersion, payload: payload, metadata: metadata,
            recordedAt: recordedAt)
    }
}

/// Events of category streams.
public enum CategoryEvent: Sendable, Equatable {
    case created(name: String)
    case renamed(name: String)
    case deleted

    public var type: String {
        switch self {
        case .created: return "CategoryCreated"
        case .renamed: return "CategoryRenamed"
        case .deleted: return "CategoryDeleted"
        }
    }

    public var payload: [UInt8] {
        var w = ByteWriter()
        switch self {
        case .created(let name), .renamed(let name): w.write(string: name)
        case .deleted: break
        }
        return w.bytes
    }

    public static func decode(type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer)
        throws(DecodingError)
        -> CategoryEvent?
    {
        var r = ByteReader(payload)
        let event: CategoryEvent
        switch (type, schemaVersion) {
        case ("CategoryCreated", 1): event = .created(name: try r.readString())
        case ("CategoryRenamed", 1): event = .renamed(name: try r.readString())
        case ("CategoryDeleted", 1): event = .deleted
        default: return nil
        }
        try r.expectEnd()
        return event
    }

    public static func decode(_ e: LiftedEvent) throws(DecodingError) -> CategoryEvent? {
        let result: Result<CategoryEvent?, DecodingError> = e.payload.withUnsafeBytes { p in
            Result { () throws(DecodingError) in try decode(type: e.type, schemaVersion: e.schemaVersion, payload: p) }
        }
        return try result.get()
    }

    public func newEvent(id: Identifier, metadata: EventMetadata, recordedAt: Int64? = nil) -> NewEvent {
        NewEvent(id: id, type: type, schemaVersion: 1, payload: payload, metadata: metadata, recordedAt: recordedAt)
    }
}

/// The note fold: the one reducer that turns a note's events into the note. Projections,
/// time travel, history, diff and blame all use it.
public enum NoteFold {
    /// Applies one event; `note` is nil before the stream's first event. Returns nil only when
    /// the first event is not a creation (a damaged or foreign stream).
    public static func apply(_ event: NoteEvent, to note: Note?, id: Identifier, at instant: Int64, version: UInt64)
        -> Note?
    {
        if case .created(let title, let body, let pinned, let category) = event {
            return Note(
                id: id, title: title, body: body, pinned: pinned, category: category, createdAt: instant,
                updatedAt: instant, version: version)
        }
        guard var n = note else { return nil }
        switch event {
        case .created: break
        case .retitled(let title): n.title = title
        case .bodyEdited(let body): n.body = body
        case .pinned: n.pinned = true
        case .unpinned: n.pinned = false
        case .categorized(let category): n.category = category
        case .archived: n.archived = true
        case .unarchived: n.archived = false
        case .trashed: n.trashed = true
        case .untrashed: n.trashed = false
        case .restored(_, let title, let body, let pinned, let category):
            n.title = title
            n.body = body
            n.pinned = pinned
            n.category = category
            n.trashed = false
        }
        n.updatedAt = instant
        n.version = version
        return n
    }
}
