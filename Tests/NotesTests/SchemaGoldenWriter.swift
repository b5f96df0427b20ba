import Basics
import EventStore
import Foundation
import Notes
import Testing

/// Writes the committed golden fixtures, once. It runs only with `NOTES_WRITE_GOLDEN=1` and
/// refuses to overwrite: a golden store that a test disagrees with is a bug in today's code,
/// never a reason to write the store again.
///
/// ```sh
/// NOTES_WRITE_GOLDEN=1 swift test --filter SchemaGoldenWriter
/// ```
@Suite("Golden store writer")
struct SchemaGoldenWriter {
    static let noteA = Identifier("11111111-1111-4111-8111-111111111111")!
    static let noteB = Identifier("22222222-2222-4222-8222-222222222222")!
    static let noteC = Identifier("33333333-3333-4333-8333-333333333333")!

    @Test(.enabled(if: ProcessInfo.processInfo.environment["NOTES_WRITE_GOLDEN"] == "1"))
    func writeLegacyV1() throws {
        let fm = FileManager.default
        #expect(!fm.fileExists(atPath: SchemaFixtures.legacyStore), "the golden store exists; never rewrite it")
        #expect(!fm.fileExists(atPath: SchemaFixtures.legacyExport), "the golden export exists; never rewrite it")
        guard !fm.fileExists(atPath: SchemaFixtures.legacyStore), !fm.fileExists(atPath: SchemaFixtures.legacyExport)
        else { return }
        let scratch = try SchemaScratch()
        let dir = scratch.sub("store")
        try write(into: dir)
        try fm.createDirectory(atPath: SchemaFixtures.legacyStore, withIntermediateDirectories: true)
        var export: [UInt8] = []
        do {
            let book = try Notebook(path: dir, options: schemaOptions())
            try book.exportEvents { export += $0 }
            // A compacted copy: no free pages, and no lock file to commit.
            try book.store.environment.copy(to: SchemaFixtures.legacyStore, compact: true)
        }
        try Data(export).write(to: URL(fileURLWithPath: SchemaFixtures.legacyExport))
    }

    /// The history: three notes written by the first program (schema 1 of the note model), then
    /// a few commands of today's program on the same notes and a new one.
    func write(into dir: String) throws {
        let clock = SchemaClock("2019-03-01T09:00:00Z")
        var options = schemaOptions(clock: clock, ids: SchemaIDs(prefix: 0xC0DE_0001))
        options.actor = "ana@laptop"
        options.command = "notes"
        let book = try Notebook(path: dir, options: options)
        let legacyMeta = EventMetadata(actor: "ana@old-laptop", command: "notes-classic")
        var eventNumber: UInt64 = 0
        func legacy(
            _ note: Identifier, _ version: UInt64, _ type: String, _ at: String, _ fields: [(String, FieldValue)]
        ) throws {
            eventNumber += 1
            let event = NewEvent(
                id: Identifier(high: 0xE000_0000_0000_4000, low: 0x8000_0000_0000_0000 | eventNumber), type: type,
                schemaVersion: 1, payload: try schemaPayload(type, 1, fields), metadata: legacyMeta,
                recordedAt: RFC3339.parse(at))
            try book.store.append([event], to: Note.stream(note), expecting: .exact(version - 1))
        }
        let a = Self.noteA
        let b = Self.noteB
        let c = Self.noteC
        try legacy(
            a, 1, "NoteCreated", "2019-03-01T09:00:00Z",
            [("title", .string("Groceries")), ("content", .string("- milk\n- eggs\n")), ("isPinned", .bool(false))])
        try legacy(
            b, 1, "NoteCreated", "2019-03-01T09:05:00Z",
            [
                ("title", .string("Old idea")), ("content", .string("A bicycle\nthat folds\n")),
                ("isPinned", .bool(true)),
            ])
        try legacy(
            c, 1, "NoteCreated", "2019-03-02T10:00:00Z",
            [
                ("title", .string("Meeting notes")), ("content", .string("Agenda:\n1. budget\n")),
                ("isPinned", .bool(false)),
            ])
        // Body only: history must show only the body change.
        try legacy(
            a, 2, "NoteUpdated", "2019-03-03T08:00:00Z",
            [("title", .string("Groceries")), ("content", .string("- milk\n- eggs\n- bread\n"))])
        try legacy(a, 3, "NotePinToggled", "2019-03-04T08:00:00Z", [("isPinned", .bool(true))])
        // Both fields.
        try legacy(
            b, 2, "NoteUpdated", "2019-03-05T08:00:00Z",
            [("title", .string("Folding bicycle")), ("content", .string("A bicycle\nthat folds in half\n"))])
        try legacy(c, 2, "NotePinToggled", "2019-03-06T08:00:00Z", [("isPinned", .bool(true))])
        try legacy(c, 3, "NotePinToggled", "2019-03-07T08:00:00Z", [("isPinned", .bool(false))])
        try legacy(b, 3, "NoteDeleted", "2019-03-08T08:00:00Z", [])
        // Nothing at all changed: a history line that says so.
        try legacy(
            c, 4, "NoteUpdated", "2019-03-09T08:00:00Z",
            [("title", .string("Meeting notes")), ("content", .string("Agenda:\n1. budget\n"))])
        // Title only.
        try legacy(
            a, 4, "NoteUpdated", "2019-03-10T08:00:00Z",
            [("title", .string("Shopping list")), ("content", .string("- milk\n- eggs\n- bread\n"))])

        clock.set("2026-11-01T10:00:00Z")
        try book.categorize(a, as: "Home")
        clock.set("2026-11-02T10:00:00Z")
        let d = try book.add(title: "Reading list", body: "Dune\nSolaris\n", category: "Home")
        clock.set("2026-11-03T10:00:00Z")
        try book.edit(d.id, body: "Dune\nSolaris\nThe Left Hand of Darkness\n")
        clock.set("2026-11-04T10:00:00Z")
        try book.archive(d.id)
        clock.set("2026-11-05T10:00:00Z")
        try book.untrash(b)
        clock.set("2026-11-06T10:00:00Z")
        try book.edit(c, title: "Team meeting")
        clock.set("2026-11-07T10:00:00Z")
        try book.trash(c)
        clock.set("2026-11-08T10:00:00Z")
        try book.unpin(a)
        #expect(try book.verify().isEmpty)
    }
}
