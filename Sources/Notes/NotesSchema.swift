public import EventStore

/// The payload schemas of every note and category event, current and legacy, and the
/// upcasters that lift legacy events. Shipped upcasters are never edited.
public enum NotesSchema {
    /// The registry the notes store opens with.
    public static let registry: SchemaRegistry = {
        var r = SchemaRegistry()
        for s in current { r.registerCurrent(s) }
        for s in legacy { r.registerLegacy(s) }
        for u in upcasters { r.register(u) }
        return r
    }()

    public static let current: [PayloadSchema] = [
        PayloadSchema(
            type: "NoteCreated", version: 2,
            fields: [
                .init("title", .string), .init("body", .string), .init("pinned", .bool),
                .init("category", .optionalIdentifier),
            ]),
        PayloadSchema(type: "NoteRetitled", version: 1, fields: [.init("title", .string)]),
        PayloadSchema(type: "NoteBodyEdited", version: 1, fields: [.init("body", .string)]),
        PayloadSchema(type: "NotePinned", version: 1, fields: []),
        PayloadSchema(type: "NoteUnpinned", version: 1, fields: []),
        PayloadSchema(type: "NoteCategorized", version: 1, fields: [.init("category", .optionalIdentifier)]),
        PayloadSchema(type: "NoteArchived", version: 1, fields: []),
        PayloadSchema(type: "NoteUnarchived", version: 1, fields: []),
        PayloadSchema(type: "NoteTrashed", version: 1, fields: []),
        PayloadSchema(type: "NoteUntrashed", version: 1, fields: []),
        PayloadSchema(
            type: "NoteRestored", version: 1,
            fields: [
                .init("fromVersion", .integer), .init("title", .string), .init("body", .string),
                .init("pinned", .bool), .init("category", .optionalIdentifier),
            ]),
        PayloadSchema(type: "CategoryCreated", version: 1, fields: [.init("name", .string)]),
        PayloadSchema(type: "CategoryRenamed", version: 1, fields: [.init("name", .string)]),
        PayloadSchema(type: "CategoryDeleted", version: 1, fields: []),
    ]

    /// The first schema of the notes model (title/content/isPinned), readable forever.
    public static let legacy: [PayloadSchema] = [
        PayloadSchema(
            type: "NoteCreated", version: 1,
            fields: [.init("title", .string), .init("content", .string), .init("isPinned", .bool)]),
        PayloadSchema(type: "NoteUpdated", version: 1, fields: [.init("title", .string), .init("content", .string)]),
        PayloadSchema(type: "NotePinToggled", version: 1, fields: [.init("isPinned", .bool)]),
        PayloadSchema(type: "NoteDeleted", version: 1, fields: []),
    ]

    public static let upcasters: [Upcaster] = [
        Upcaster(
            type: "NoteCreated", from: 1, name: "NoteCreated.1->2",
            produces: [SchemaKey("NoteCreated", 2)]
        ) { old in
            var f = EventFields()
            f["title"] = old.fields["title"] ?? .string("")
            f["body"] = old.fields["content"] ?? .string("")
            f["pinned"] = old.fields["isPinned"] ?? .bool(false)
            f["category"] = .null
            return [RawEvent(type: "NoteCreated", version: 2, fields: f)]
        },
        // One stored event becomes two; both keep the stored event's version.
        Upcaster(
            type: "NoteUpdated", from: 1, name: "NoteUpdated.1->NoteRetitled+NoteBodyEdited",
            produces: [SchemaKey("NoteRetitled", 1), SchemaKey("NoteBodyEdited", 1)]
        ) { old in
            [
                RawEvent(
                    type: "NoteRetitled", version: 1,
                    fields: EventFields([("title", old.fields["title"] ?? .string(""))])),
                RawEvent(
                    type: "NoteBodyEdited", version: 1,
                    fields: EventFields([("body", old.fields["content"] ?? .string(""))])),
            ]
        },
        Upcaster(
            type: "NotePinToggled", from: 1, name: "NotePinToggled.1->NotePinned|NoteUnpinned",
            produces: [SchemaKey("NotePinned", 1), SchemaKey("NoteUnpinned", 1)]
        ) { old in
            [RawEvent(type: old.fields["isPinned"] == .bool(true) ? "NotePinned" : "NoteUnpinned", version: 1)]
        },
        // The old model's hard delete becomes trash: history is kept.
        Upcaster(
            type: "NoteDeleted", from: 1, name: "NoteDeleted.1->NoteTrashed", produces: [SchemaKey("NoteTrashed", 1)]
        ) {
            _ in [RawEvent(type: "NoteTrashed", version: 1)]
        },
    ]
}
