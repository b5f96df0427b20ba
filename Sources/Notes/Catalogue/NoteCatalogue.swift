public import Basics
public import EventStore

// The event catalogue of notes and categories: every type's name, schema version and payload
// fields are written here once, current and legacy, with the upcasters between them. The
// registry's schemas, the payload encodings and decodings, the interchange format's `data`
// fields and the replay's recognition of stored type bytes all follow from these tables.

// MARK: Note events

/// The fields note events carry.
public enum NoteField: UInt8, PayloadField {
    case fromVersion, title, body, pinned, category, tag, key, value

    public var name: String {
        switch self {
        case .fromVersion: return "fromVersion"
        case .title: return "title"
        case .body: return "body"
        case .pinned: return "pinned"
        case .category: return "category"
        case .tag: return "tag"
        case .key: return "key"
        case .value: return "value"
        }
    }

    public var type: FieldType {
        switch self {
        case .fromVersion: return .integer
        case .title, .body, .key, .value: return .string
        case .pinned: return .bool
        case .category: return .optionalIdentifier
        case .tag: return .identifier
        }
    }
}

/// The current note event types. What each does to a note is ``NoteFold``'s rule.
public enum NoteEventKind: UInt8, EventKind {
    case created, retitled, bodyEdited, pinned, unpinned, categorized, archived, unarchived, trashed, untrashed,
        restored, tagged, untagged, propertySet, bodyMerged, bodyConflicted

    public var layout: EventLayout<NoteField> {
        switch self {
        case .created: return EventLayout("NoteCreated", version: 2, [.title, .body, .pinned, .category])
        case .retitled: return EventLayout("NoteRetitled", version: 1, [.title])
        case .bodyEdited: return EventLayout("NoteBodyEdited", version: 1, [.body])
        case .pinned: return EventLayout("NotePinned", version: 1, [])
        case .unpinned: return EventLayout("NoteUnpinned", version: 1, [])
        case .categorized: return EventLayout("NoteCategorized", version: 1, [.category])
        case .archived: return EventLayout("NoteArchived", version: 1, [])
        case .unarchived: return EventLayout("NoteUnarchived", version: 1, [])
        case .trashed: return EventLayout("NoteTrashed", version: 1, [])
        case .untrashed: return EventLayout("NoteUntrashed", version: 1, [])
        case .restored:
            return EventLayout("NoteRestored", version: 1, [.fromVersion, .title, .body, .pinned, .category])
        case .tagged: return EventLayout("NoteTagged", version: 1, [.tag])
        case .untagged: return EventLayout("NoteUntagged", version: 1, [.tag])
        case .propertySet: return EventLayout("NotePropertySet", version: 1, [.key, .value])
        case .bodyMerged: return EventLayout("NoteBodyMerged", version: 1, [.fromVersion, .body])
        case .bodyConflicted: return EventLayout("NoteBodyConflicted", version: 1, [.fromVersion, .body])
        }
    }

    /// Recognises stored type bytes.
    static let matcher = KindMatcher<NoteEventKind>()

    /// Kinds whose payload sets the title (the title history of links is made of them).
    private static let titleSetting = allCases.map { $0.layout.fields.contains(.title) }

    /// Whether an event of this kind sets the note's title.
    @inline(__always)
    var setsTitle: Bool { Self.titleSetting[Int(rawValue)] }

    /// Kinds whose payload sets the category or a tag (the `filed_ever` projection is made of them).
    private static let filing = allCases.map { $0.layout.fields.contains(.category) || $0.layout.fields.contains(.tag) }

    /// Whether an event of this kind may file the note under a category or a tag.
    @inline(__always)
    var mayFile: Bool { Self.filing[Int(rawValue)] }

    /// The layouts' field lists by raw value, for the decoding loop.
    private static let fieldLists = allCases.map(\.layout.fields)

    /// The payload fields of the kind's layout, in order.
    @inline(__always)
    var fields: FieldList<NoteField> { Self.fieldLists[Int(rawValue)] }
}

/// The decoded fields of one note event; fields its layout lacks keep their defaults. `Text` is
/// how titles and bodies are held: a `String`, or a checked slice of the mapped store file.
struct NotePayload<Text: NoteText> {
    var fromVersion: UInt64 = 0
    var title: Text = .empty
    var body: Text = .empty
    var pinned = false
    var category: Identifier?
    var tag = Identifier(high: 0, low: 0)
    /// A property's name and value (see ``NoteProperty``).
    var key: Text = .empty
    var value: Text = .empty

    /// Reads the payload of a `kind` event: its layout's fields in order, and nothing more.
    @inline(__always)
    init(_ kind: NoteEventKind, decoding bytes: UnsafeRawBufferPointer) throws(DecodingError) {
        var r = ByteReader(bytes)
        for field in kind.fields {
            switch field {
            case .fromVersion: fromVersion = UInt64(clamping: try r.readSigned())
            case .title: title = try Text.read(from: &r)
            case .body: body = try Text.read(from: &r)
            case .pinned: pinned = try r.readBool()
            case .category: category = try r.readOptionalIdentifier()
            case .tag: tag = try r.readIdentifier()
            case .key: key = try Text.read(from: &r)
            case .value: value = try Text.read(from: &r)
            }
        }
        try r.expectEnd()
    }

    init() {}
}

extension NotePayload where Text == String {
    /// The payload bytes of a `kind` event.
    func encoded(_ kind: NoteEventKind) -> [UInt8] {
        var w = ByteWriter()
        for field in kind.layout.fields {
            switch field {
            case .fromVersion: w.write(signed: Int64(clamping: fromVersion))
            case .title: w.write(string: title)
            case .body: w.write(string: body)
            case .pinned: w.write(bool: pinned)
            case .category: w.write(optionalIdentifier: category)
            case .tag: w.write(identifier: tag)
            case .key: w.write(string: key)
            case .value: w.write(string: value)
            }
        }
        return w.bytes
    }
}

/// How the fold holds a title or a body.
protocol NoteText {
    static var empty: Self { get }
    /// Reads one text of a payload.
    static func read(from r: inout ByteReader) throws(DecodingError) -> Self
    /// Whether the text is one of `texts`.
    func isOne(of texts: [String]) -> Bool
}

extension NoteText {
    /// Whether the bytes are those of one of `texts`.
    fileprivate static func bytes(_ bytes: UnsafeRawBufferPointer?, areOneOf texts: [String]) -> Bool {
        let b = bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)
        return texts.contains { $0.utf8.elementsEqual(b) }
    }
}

extension String: NoteText {
    static var empty: String { "" }
    @inline(__always)
    static func read(from r: inout ByteReader) throws(DecodingError) -> String { try r.readString() }
    func isOne(of texts: [String]) -> Bool { texts.contains(self) }
}

/// A title or body left where it is stored: a slice of the mapped file, checked to be UTF-8,
/// valid until the read transaction that found it ends. A replay keeps the latest text of each
/// note this way and makes a `String` of it once, at the end.
struct TextSlice: NoteText {
    let bytes: UnsafeRawBufferPointer?
    static var empty: TextSlice { TextSlice(bytes: nil) }
    @inline(__always)
    static func read(from r: inout ByteReader) throws(DecodingError) -> TextSlice { TextSlice(bytes: try r.readUTF8()) }
    init(bytes: UnsafeRawBufferPointer?) { self.bytes = bytes }
    var string: String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }
    func isOne(of texts: [String]) -> Bool { Self.bytes(bytes, areOneOf: texts) }
}

/// A text slice not checked yet: a newest-first replay reads every text but keeps only the
/// newest of each field, and checks (and decodes) only those.
struct UncheckedText: NoteText {
    let bytes: UnsafeRawBufferPointer?
    /// Where the text's length starts in its payload, for the error of a text that is not UTF-8.
    let offset: Int
    static var empty: UncheckedText { UncheckedText(bytes: nil, offset: 0) }
    @inline(__always)
    static func read(from r: inout ByteReader) throws(DecodingError) -> UncheckedText {
        let at = r.offset
        return UncheckedText(bytes: try r.readBlob(), offset: at)
    }

    func isOne(of texts: [String]) -> Bool { Self.bytes(bytes, areOneOf: texts) }

    /// The text, once checked to be UTF-8.
    func checked() throws(DecodingError) -> String {
        guard let bytes else { return "" }
        guard UTF8Validation.isValid(bytes) else { throw DecodingError(.invalidUTF8, at: offset) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A note event with its values: what commands decide, history shows and tests write.
public enum NoteEvent: CatalogueEvent {
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
    case tagged(tag: Identifier)
    case untagged(tag: Identifier)
    /// Sets the note's property `key` to `value`; an empty value removes it.
    case propertySet(key: String, value: String)
    /// A sync merged a body edit made from version `base` with the changes made since on another
    /// device: `body` is the three-way merge, clean.
    case bodyMerged(base: UInt64, body: String)
    /// As ``bodyMerged(base:body:)``, but both sides changed the same lines: `body` holds the
    /// merge with both versions of each such place between conflict markers, and the note is in
    /// conflict until its body is edited again (the ``NoteProperty/conflict`` property).
    case bodyConflicted(base: UInt64, body: String)

    public var kind: NoteEventKind {
        switch self {
        case .created: return .created
        case .retitled: return .retitled
        case .bodyEdited: return .bodyEdited
        case .pinned: return .pinned
        case .unpinned: return .unpinned
        case .categorized: return .categorized
        case .archived: return .archived
        case .unarchived: return .unarchived
        case .trashed: return .trashed
        case .untrashed: return .untrashed
        case .restored: return .restored
        case .tagged: return .tagged
        case .untagged: return .untagged
        case .propertySet: return .propertySet
        case .bodyMerged: return .bodyMerged
        case .bodyConflicted: return .bodyConflicted
        }
    }

    /// The event's values by field.
    var fields: NotePayload<String> {
        var p = NotePayload<String>()
        switch self {
        case .created(let title, let body, let pinned, let category):
            (p.title, p.body, p.pinned, p.category) = (title, body, pinned, category)
        case .retitled(let title): p.title = title
        case .bodyEdited(let body): p.body = body
        case .categorized(let category): p.category = category
        case .restored(let from, let title, let body, let pinned, let category):
            (p.fromVersion, p.title, p.body, p.pinned, p.category) = (from, title, body, pinned, category)
        case .tagged(let tag), .untagged(let tag): p.tag = tag
        case .propertySet(let key, let value): (p.key, p.value) = (key, value)
        case .bodyMerged(let base, let body), .bodyConflicted(let base, let body):
            (p.fromVersion, p.body) = (base, body)
        case .pinned, .unpinned, .archived, .unarchived, .trashed, .untrashed: break
        }
        return p
    }

    /// The event of `kind` with these values.
    init(_ kind: NoteEventKind, _ p: NotePayload<String>) {
        switch kind {
        case .created: self = .created(title: p.title, body: p.body, pinned: p.pinned, category: p.category)
        case .retitled: self = .retitled(title: p.title)
        case .bodyEdited: self = .bodyEdited(body: p.body)
        case .pinned: self = .pinned
        case .unpinned: self = .unpinned
        case .categorized: self = .categorized(category: p.category)
        case .archived: self = .archived
        case .unarchived: self = .unarchived
        case .trashed: self = .trashed
        case .untrashed: self = .untrashed
        case .restored:
            self = .restored(
                fromVersion: p.fromVersion, title: p.title, body: p.body, pinned: p.pinned, category: p.category)
        case .tagged: self = .tagged(tag: p.tag)
        case .untagged: self = .untagged(tag: p.tag)
        case .propertySet: self = .propertySet(key: p.key, value: p.value)
        case .bodyMerged: self = .bodyMerged(base: p.fromVersion, body: p.body)
        case .bodyConflicted: self = .bodyConflicted(base: p.fromVersion, body: p.body)
        }
    }

    public var type: String { kind.layout.name }
    public var schemaVersion: UInt32 { kind.layout.version }
    /// The payload, in the field order of the kind's layout.
    public var payload: [UInt8] { fields.encoded(kind) }

    /// Decodes a current-schema note event; nil for a type that is not a note event.
    public static func decode(type: String, schemaVersion: UInt32, payload: [UInt8]) throws(DecodingError)
        -> NoteEvent?
    {
        try withContiguousBytes(payload) { (p) throws(DecodingError) in
            try decode(type: type, schemaVersion: schemaVersion, payload: p)
        }
    }

    /// The category and the tag a current-schema note event files its note under, and the
    /// earlier version of the note it names (a restore's, a merge's base), read without making
    /// strings of its texts (an import checks every such event of a large file); nil for a type
    /// that is not a note event.
    package static func filing(type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer)
        throws(DecodingError) -> (category: Identifier?, tag: Identifier?, fromVersion: UInt64?)?
    {
        guard let kind = NoteEventKind.matcher.kind(type, version: schemaVersion) else { return nil }
        let fields = kind.layout.fields
        guard fields.contains(.category) || fields.contains(.tag) || fields.contains(.fromVersion) else {
            return (nil, nil, nil)
        }
        let p = try NotePayload<UncheckedText>(kind, decoding: payload)
        return (p.category, fields.contains(.tag) ? p.tag : nil, fields.contains(.fromVersion) ? p.fromVersion : nil)
    }

    /// ``decode(type:schemaVersion:payload:)`` of bytes read in place.
    package static func decode(type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer)
        throws(DecodingError) -> NoteEvent?
    {
        guard let kind = NoteEventKind.matcher.kind(type, version: schemaVersion) else { return nil }
        return NoteEvent(kind, try NotePayload(kind, decoding: payload))
    }

}

/// A typed event of the catalogue: its type, schema version and payload, and the way back.
public protocol CatalogueEvent: Sendable, Equatable {
    var type: String { get }
    var schemaVersion: UInt32 { get }
    var payload: [UInt8] { get }
    /// The event of a current-schema payload; nil for a type of another family.
    static func decode(type: String, schemaVersion: UInt32, payload: [UInt8]) throws(DecodingError) -> Self?
}

extension CatalogueEvent {
    /// An event to append, with a fresh id and the given metadata.
    public func newEvent(id: Identifier, metadata: EventMetadata, recordedAt: Int64? = nil) -> NewEvent {
        NewEvent(
            id: id, type: type, schemaVersion: schemaVersion, payload: payload, metadata: metadata,
            recordedAt: recordedAt)
    }

    /// The event a projection sees, decoded.
    public static func decode(_ e: LiftedEvent) throws(DecodingError) -> Self? {
        try decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
    }
}

// MARK: Category and tag events

/// The field the events of a named entity (a category, a tag) carry.
public enum EntityField: UInt8, PayloadField {
    case name
    /// The entity another was merged into.
    case into

    public var name: String {
        switch self {
        case .name: return "name"
        case .into: return "into"
        }
    }

    public var type: FieldType {
        switch self {
        case .name: return .string
        case .into: return .identifier
        }
    }
}

/// What an event does to a named entity.
public enum EntityChange: UInt8, Sendable {
    /// `merged`: a sync found it renamed on one device to the name another device had given one
    /// of its own; it ends, and its notes are filed under the other.
    case created, renamed, deleted, merged
}

/// The event types of a family of named entities: one per ``EntityChange``.
public protocol EntityEventKind: EventKind where Field == EntityField {
    init(_ change: EntityChange)
    var change: EntityChange { get }
    /// Recognises stored type bytes.
    static var matcher: KindMatcher<Self> { get }
}

extension EntityEventKind {
    public init(_ change: EntityChange) { self.init(rawValue: change.rawValue)! }
    public var change: EntityChange { EntityChange(rawValue: rawValue)! }
}

/// The category event types. What each does to a category is ``EntityFold``'s rule.
public enum CategoryEventKind: UInt8, EntityEventKind {
    case created, renamed, deleted, merged

    public var layout: EventLayout<EntityField> {
        switch self {
        case .created: return EventLayout("CategoryCreated", version: 1, [.name])
        case .renamed: return EventLayout("CategoryRenamed", version: 1, [.name])
        case .deleted: return EventLayout("CategoryDeleted", version: 1, [])
        case .merged: return EventLayout("CategoryMerged", version: 1, [.into])
        }
    }

    public static let matcher = KindMatcher<CategoryEventKind>()
}

/// The tag event types. What each does to a tag is ``EntityFold``'s rule.
public enum TagEventKind: UInt8, EntityEventKind {
    case created, renamed, deleted, merged

    public var layout: EventLayout<EntityField> {
        switch self {
        case .created: return EventLayout("TagCreated", version: 1, [.name])
        case .renamed: return EventLayout("TagRenamed", version: 1, [.name])
        case .deleted: return EventLayout("TagDeleted", version: 1, [])
        case .merged: return EventLayout("TagMerged", version: 1, [.into])
        }
    }

    public static let matcher = KindMatcher<TagEventKind>()
}

/// An event of a named entity with its values.
public enum NamedEntityEvent<Kind: EntityEventKind>: CatalogueEvent {
    case created(name: String)
    case renamed(name: String)
    case deleted
    /// Ends it: its notes were filed under `into` (see ``EntityChange/merged``).
    case merged(into: Identifier)

    public var change: EntityChange {
        switch self {
        case .created: return .created
        case .renamed: return .renamed
        case .deleted: return .deleted
        case .merged: return .merged
        }
    }

    public var kind: Kind { Kind(change) }

    /// The name the event carries ("" for a deletion or a merge).
    var name: String {
        switch self {
        case .created(let name), .renamed(let name): return name
        case .deleted, .merged: return ""
        }
    }

    init(_ change: EntityChange, name: String, into: Identifier) {
        switch change {
        case .created: self = .created(name: name)
        case .renamed: self = .renamed(name: name)
        case .deleted: self = .deleted
        case .merged: self = .merged(into: into)
        }
    }

    public var type: String { kind.layout.name }
    public var schemaVersion: UInt32 { kind.layout.version }

    public var payload: [UInt8] {
        var w = ByteWriter()
        for field in kind.layout.fields {
            switch field {
            case .name: w.write(string: name)
            case .into:
                if case .merged(let into) = self { w.write(identifier: into) }
            }
        }
        return w.bytes
    }

    public static func decode(type: String, schemaVersion: UInt32, payload: [UInt8]) throws(DecodingError)
        -> NamedEntityEvent?
    {
        try withContiguousBytes(payload) { (p) throws(DecodingError) in
            try decode(type: type, schemaVersion: schemaVersion, payload: p)
        }
    }

    /// ``decode(type:schemaVersion:payload:)`` of bytes read in place.
    package static func decode(type: String, schemaVersion: UInt32, payload: UnsafeRawBufferPointer)
        throws(DecodingError) -> NamedEntityEvent?
    {
        guard let kind = Kind.matcher.kind(type, version: schemaVersion) else { return nil }
        var r = ByteReader(payload)
        var name = ""
        var into = Identifier(high: 0, low: 0)
        for field in kind.layout.fields {
            switch field {
            case .name: name = try r.readString()
            case .into: into = try r.readIdentifier()
            }
        }
        try r.expectEnd()
        return NamedEntityEvent(kind.change, name: name, into: into)
    }
}

/// A category event.
public typealias CategoryEvent = NamedEntityEvent<CategoryEventKind>
/// A tag event.
public typealias TagEvent = NamedEntityEvent<TagEventKind>

// MARK: Stream families

/// The kinds of stream of the notes model: what their names look like and which event types
/// they hold.
public enum StreamFamily: Sendable, CaseIterable {
    case note, category, tag

    /// The stream name's prefix, before the id in canonical lowercase UUID form.
    public var prefix: String {
        switch self {
        case .note: return "note/"
        case .category: return "category/"
        case .tag: return "tag/"
        }
    }

    /// The type of version 1 of every stream of the family, and of no other version.
    public var creationType: String {
        switch self {
        case .note: return NoteEventKind.created.layout.name
        case .category: return CategoryEventKind.created.layout.name
        case .tag: return TagEventKind.created.layout.name
        }
    }

    /// The family whose streams hold events of `type` (a current or a legacy type), or nil.
    public static func of(type: String) -> StreamFamily? { families[type] }

    private static let families: [String: StreamFamily] = {
        var out: [String: StreamFamily] = [:]
        for k in NoteEventKind.allCases { out[k.layout.name] = .note }
        for s in NotesSchema.legacy { out[s.type] = .note }
        for k in CategoryEventKind.allCases { out[k.layout.name] = .category }
        for k in TagEventKind.allCases { out[k.layout.name] = .tag }
        return out
    }()
}

// MARK: The registry: current schemas, legacy schemas, upcasters

/// The payload schemas of every note and category event, current and legacy, and the
/// upcasters that lift legacy events. Shipped upcasters are never edited.
public enum NotesSchema {
    /// The registry the notes store opens with.
    public static let registry: SchemaRegistry = {
        var r = SchemaRegistry(schemas: current.count + legacy.count, upcasters: upcasters.count)
        for s in current { r.registerCurrent(s) }
        for s in legacy { r.registerLegacy(s) }
        for u in upcasters { r.register(u) }
        return r
    }()

    public static let current: [PayloadSchema] =
        NoteEventKind.schemas + CategoryEventKind.schemas + TagEventKind.schemas

    /// The types of the first notes model, all at schema version 1.
    public enum LegacyType: String, CaseIterable, Sendable {
        case created = "NoteCreated"
        case updated = "NoteUpdated"
        case pinToggled = "NotePinToggled"
        case deleted = "NoteDeleted"
    }

    /// The first schema of the notes model (title/content/isPinned), readable forever. Every
    /// legacy type is a note event.
    public static let legacy: [PayloadSchema] = [
        PayloadSchema(
            type: LegacyType.created.rawValue, version: 1,
            fields: [.init("title", .string), .init("content", .string), .init("isPinned", .bool)]),
        PayloadSchema(
            type: LegacyType.updated.rawValue, version: 1,
            fields: [.init("title", .string), .init("content", .string)]),
        PayloadSchema(type: LegacyType.pinToggled.rawValue, version: 1, fields: [.init("isPinned", .bool)]),
        PayloadSchema(type: LegacyType.deleted.rawValue, version: 1, fields: []),
    ]

    /// The current names the upcasters lift to. An upcaster names the version it was written
    /// for (never "the current one"): a later schema of the type is lifted by a later upcaster.
    private static let created = NoteEventKind.created.layout.name
    private static let retitled = NoteEventKind.retitled.layout.name
    private static let bodyEdited = NoteEventKind.bodyEdited.layout.name
    private static let pinned = NoteEventKind.pinned.layout.name
    private static let unpinned = NoteEventKind.unpinned.layout.name
    private static let trashed = NoteEventKind.trashed.layout.name

    public static let upcasters: [Upcaster] = [
        Upcaster(
            type: LegacyType.created.rawValue, from: 1, name: "NoteCreated.1->2",
            plan: UpcastPlan([
                .init(
                    created, version: 2,
                    fields: [
                        .init("title", from: "title", default: .string("")),
                        .init("body", from: "content", default: .string("")),
                        .init("pinned", from: "isPinned", default: .bool(false)),
                        .init("category", constant: .null),
                    ])
            ])),
        // One stored event becomes two; both keep the stored event's version.
        Upcaster(
            type: LegacyType.updated.rawValue, from: 1, name: "NoteUpdated.1->NoteRetitled+NoteBodyEdited",
            plan: UpcastPlan([
                .init(retitled, version: 1, fields: [.init("title", from: "title", default: .string(""))]),
                .init(bodyEdited, version: 1, fields: [.init("body", from: "content", default: .string(""))]),
            ])),
        Upcaster(
            type: LegacyType.pinToggled.rawValue, from: 1, name: "NotePinToggled.1->NotePinned|NoteUnpinned",
            plan: UpcastPlan([
                .init(pinned, version: 1, when: .when("isPinned", equals: .bool(true))),
                .init(unpinned, version: 1, when: .unless("isPinned", equals: .bool(true))),
            ])),
        // The old model's hard delete becomes trash: history is kept.
        Upcaster(
            type: LegacyType.deleted.rawValue, from: 1, name: "NoteDeleted.1->NoteTrashed",
            plan: UpcastPlan([.init(trashed, version: 1)])),
    ]
}
