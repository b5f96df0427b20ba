import Basics
import EventStore
import Notes
import Testing

/// The hand-written payload encodings of `NoteEvent` and `CategoryEvent` must be exactly what
/// `NotesSchema` declares: export, import and the upcasters read payloads through the schemas.
@Suite("Event payloads agree with their declared schemas")
struct NoteEventSchemaTests {
    static let category = Identifier(high: 0x1111_2222_3333_4444, low: 0x8555_6666_7777_8888)

    static let noteEvents: [NoteEvent] = [
        .created(title: "T", body: "- milk\r\n", pinned: true, category: category),
        .created(title: "T", body: "", pinned: false, category: nil),
        .retitled(title: "Ünïcode 🎉"), .bodyEdited(body: "a\nb"), .pinned, .unpinned,
        .categorized(category: category), .categorized(category: nil), .archived, .unarchived, .trashed,
        .untrashed, .restored(fromVersion: 3, title: "T", body: "b", pinned: false, category: category),
        .tagged(tag: category), .untagged(tag: category), .propertySet(key: "aliases", value: "A\nB"),
        .propertySet(key: "source", value: ""), .bodyMerged(base: 4, body: "merged\n"),
        .bodyConflicted(base: 2, body: "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"),
    ]

    @Test("every note event's payload decodes with its schema and re-encodes byte for byte")
    func noteEvents() throws {
        let registry = NotesSchema.registry
        for event in Self.noteEvents {
            let key = SchemaKey(event.type, event.schemaVersion)
            #expect(registry.isCurrent(event.type, event.schemaVersion), "\(key) is not the current schema")
            let schema = try #require(registry.schemas[key], "no schema for \(key)")
            let fields = try schema.decode(event.payload)
            #expect(try schema.encode(fields) == event.payload, "\(key)")
            let decoded = try event.payload.withUnsafeBytes { p in
                try NoteEvent.decode(type: event.type, schemaVersion: event.schemaVersion, payload: p)
            }
            #expect(decoded == event)
        }
    }

    @Test("every category event's payload decodes with its schema and re-encodes byte for byte")
    func categoryEvents() throws {
        let registry = NotesSchema.registry
        let other = Identifier(high: 7, low: 7)
        for event in [CategoryEvent.created(name: "Work"), .renamed(name: "Jobs"), .deleted, .merged(into: other)] {
            let key = SchemaKey(event.type, 1)
            let schema = try #require(registry.schemas[key], "no schema for \(key)")
            #expect(try schema.encode(try schema.decode(event.payload)) == event.payload, "\(key)")
        }
        for event in [TagEvent.created(name: "work/acme"), .renamed(name: "job/acme"), .deleted, .merged(into: other)] {
            let key = SchemaKey(event.type, 1)
            let schema = try #require(registry.schemas[key], "no schema for \(key)")
            #expect(try schema.encode(try schema.decode(event.payload)) == event.payload, "\(key)")
            #expect(try TagEvent.decode(type: event.type, schemaVersion: 1, payload: event.payload) == event)
        }
    }

    @Test("every current schema has an encoder: no declared type is left without a case")
    func everyDeclaredTypeIsCovered() {
        let covered = Set(
            Self.noteEvents.map(\.type) + ["CategoryCreated", "CategoryRenamed", "CategoryDeleted", "CategoryMerged"]
                + ["TagCreated", "TagRenamed", "TagDeleted", "TagMerged"])
        #expect(Set(NotesSchema.current.map(\.type)) == covered)
    }
}
