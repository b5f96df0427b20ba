import Basics
import EventStore
import Foundation
import Glibc
import Notes
import Testing

/// Where the committed fixtures live: `Tests/Fixtures`, found from this file's path.
enum SchemaCLIFixtures {
    static var directory: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/Fixtures"
    }

    /// Copies the golden legacy store to `dir` (opening writes; the committed bytes must not change).
    static func copyLegacyStore(to dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory + "/legacy-v1/data.mdb", toPath: dir + "/data.mdb")
    }
}

/// Sets the stored projection version to one no program writes, so the next open rebuilds.
func makeProjectionsStale(_ path: String) throws {
    var options = Notebook.Options(actor: "tester@test")
    options.clock = { 1_700_000_000_000_000 }
    let book = try Notebook(path: path, options: options)
    try book.store.environment.write { txn in
        try book.store.setMetadata("projections.version", Array("notes-0/stale".utf8), in: txn)
    }
}

/// The golden legacy store and schema maintenance through the binary.
@Suite("Schema evolution through the CLI")
struct SchemaCLITests {
    @Test("history of a legacy note: one line per stored event, stored versions, only what changed")
    func legacyHistory() throws {
        let box = try Sandbox()
        try SchemaCLIFixtures.copyLegacyStore(to: box.store)

        let json = try box.run(["history", "1111", "--json"]).array()
        #expect(json.map { $0["version"] as? Int } == [1, 2, 3, 4, 5, 6])
        #expect(
            json.map { $0["type"] as? String } == [
                "NoteCreated", "NoteUpdated", "NotePinToggled", "NoteUpdated", "NoteCategorized", "NoteUnpinned",
            ])
        let fields = json.map { entry in
            (entry["changes"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
        }
        #expect(fields == [["title", "body"], ["body"], ["pinned"], ["title"], ["category"], ["pinned"]])

        let text = try box.ok("history", "1111")
        #expect(text.lines.count == 6, "\(text)")
        for (i, line) in text.lines.enumerated() { #expect(line.hasPrefix("v\(i + 1) "), "\(line)") }
        #expect(text.lines[1].contains("NoteUpdated") && text.lines[1].contains("body +1 -0 lines"))
        #expect(!text.lines[1].contains("title"), "a body-only NoteUpdated shows no title change: \(text.lines[1])")
        #expect(text.lines[3].contains("title \"Groceries\" -> \"Shopping list\"") && !text.lines[3].contains("body"))

        let deleted = try box.run(["history", "2222", "--json"]).array()
        #expect(
            deleted.map { $0["type"] as? String } == ["NoteCreated", "NoteUpdated", "NoteDeleted", "NoteUntrashed"])
        let noChange = try box.run(["history", "3333", "--json"]).array()
        #expect((noChange[3]["changes"] as? [Any])?.isEmpty == true)
    }

    @Test("notes, the upgrade plan, migrations and verify on the golden store")
    func legacyStore() throws {
        let box = try Sandbox()
        try SchemaCLIFixtures.copyLegacyStore(to: box.store)

        let b = try box.object("show", "2222")
        #expect(b["title"] as? String == "Folding bicycle")
        #expect(b["body"] as? String == "A bicycle\nthat folds in half\n")
        #expect(isJSONBool(b["trashed"]) && b["trashed"] as? Bool == false)
        #expect(b["pinned"] as? Bool == true)
        #expect(
            try box.titles("--all", "--sort", "title") == [
                "Folding bicycle", "Reading list", "Shopping list", "Team meeting",
            ])

        let plan = try box.run(["upgrade", "--dry-run", "--json"]).array()
        let byKey = Dictionary(
            uniqueKeysWithValues: plan.map { ("\($0["type"] ?? "") v\($0["schemaVersion"] ?? "")", $0) })
        #expect(byKey["NoteUpdated v1"]?["events"] as? Int == 4)
        #expect(byKey["NoteUpdated v1"]?["liftsTo"] as? [String] == ["NoteRetitled v1", "NoteBodyEdited v1"])
        #expect(byKey["NoteDeleted v1"]?["liftsTo"] as? [String] == ["NoteTrashed v1"])
        #expect(byKey["NoteCreated v2"]?["current"] as? Bool == true)
        let text = try box.ok("upgrade", "--dry-run")
        #expect(text.stdout.contains("NotePinToggled v1"))
        // Each NotePinToggled becomes one or the other, each NoteUpdated both; a count of one is
        // one event (before 2026-12-06: "NotePinned v1 + NoteUnpinned v1", "1 events").
        #expect(text.stdout.contains("upcast to NotePinned v1 or NoteUnpinned v1"), "\(text.stdout)")
        #expect(text.stdout.contains("upcast to NoteRetitled v1 + NoteBodyEdited v1"))
        #expect(text.stdout.contains(" 1 event ") && !text.stdout.contains(" 1 events"), "\(text.stdout)")
        #expect(box.run("upgrade").code == 2, "without --dry-run it explains that events are never rewritten")

        try box.ok("verify")
        try box.ok("rebuild")
        let migrations = try box.run(["migrations", "--json"]).array()
        #expect(migrations.last?["events"] as? Int == 20)
        #expect(migrations.last?["reason"] as? String == "requested by notes rebuild")
        try box.ok("verify")
    }

    @Test("a count of one is singular: upgrade, verify, rebuild, migrations")
    func singularCounts() throws {
        let s = try Sandbox()
        try s.add("Only")
        #expect(try s.ok("upgrade", "--dry-run").stdout.contains("NoteCreated v2  1 event  current"))
        #expect(try s.ok("verify").stdout.hasPrefix("ok: 1 event, 1 note;"))
        #expect(try s.ok("rebuild").stdout.hasPrefix("rebuilt the projections from 1 event in"))
        #expect(try s.ok("migrations").stdout.contains("  1 event  "))
    }

    @Test("search on the golden store, also after a rebuild at open")
    func legacySearch() throws {
        let box = try Sandbox()
        try SchemaCLIFixtures.copyLegacyStore(to: box.store)
        for round in 0..<2 {
            let milk = try box.run(["search", "milk", "--json"]).array()
            #expect(milk.map { $0["title"] as? String } == ["Shopping list"], "round \(round)")
            #expect(try box.run(["search", "groceries", "--json"]).array().isEmpty)
            let bicycle = try box.run(["search", "bicycle", "--json"]).array()
            #expect(bicycle.map { $0["id"] as? String } == ["22222222-2222-4222-8222-222222222222"])
            let trashed = try box.run(["search", "budget", "--trashed", "--json"]).array()
            #expect(trashed.map { $0["title"] as? String } == ["Team meeting"])
            try makeProjectionsStale(box.store)
        }
    }

    @Test("a store with an event this program cannot read: exit 5, the pair and count named, nothing changed")
    func unreadableStore() throws {
        let box = try Sandbox()
        var registry = NotesSchema.registry
        registry.registerLegacy(PayloadSchema(type: "NoteFrobnicated", version: 1, fields: []))
        registry.register(
            Upcaster(
                type: "NoteFrobnicated", from: 1, name: "NoteFrobnicated.1->NotePinned",
                produces: [SchemaKey("NotePinned", 1)]
            ) { _ in [RawEvent(type: "NotePinned", version: 1)] })
        let id = try box.add("Plain")
        let full = try #require(try box.object("show", id)["id"] as? String)
        do {
            let store = try EventStore(
                path: box.store,
                configuration: EventStore.Configuration(registry: registry, projections: NotesProjection()))
            // As the newer program would at open: its upcasters change the projection version.
            _ = try store.rebuildIfNeeded()
            for n in 1...3 as ClosedRange<UInt64> {
                try store.append(
                    [
                        NewEvent(
                            id: Identifier(high: 0xF, low: n), type: "NoteFrobnicated", schemaVersion: 1, payload: [],
                            metadata: EventMetadata(actor: "newer@program"))
                    ], to: "note/" + full)
            }
        }
        let before = read(file: box.store + "/data.mdb")
        for args in [["list"], ["show", id], ["add", "More"], ["verify"], ["upgrade", "--dry-run"]] {
            let r = box.run(args)
            #expect(r.code == 5, "notes \(args.joined(separator: " ")): \(r)")
            #expect(r.stderr.contains("NoteFrobnicated v1 (3 events)"), "\(r)")
            #expect(r.stdout.isEmpty)
        }
        #expect(read(file: box.store + "/data.mdb") == before, "a refused open changes nothing")
    }

    @Test("a rebuild at open prints nothing when stderr is not a terminal")
    func rebuildAtOpenIsQuietInPipes() throws {
        let box = try Sandbox()
        try SchemaCLIFixtures.copyLegacyStore(to: box.store)
        try makeProjectionsStale(box.store)
        let r = try box.ok("list", "--all")
        #expect(r.stderr.isEmpty, "nothing decorative on a non-terminal stderr: \(r.stderr)")
        #expect(r.lines.count == 4)
        let migrations = try box.run(["migrations", "--json"]).array()
        #expect(migrations.last?["from"] as? String == "notes-0/stale")
        #expect(migrations.last?["reason"] as? String == "projection version changed")
        try box.ok("verify")
    }

    @Test("a store the notes binary of 2026-11-29 (0b7e71e) made through its commands: the same notes and history here")
    func storeOfTheFirstRelease() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: SchemaCLIFixtures.directory + "/notes-2026-11-29/data.mdb", toPath: box.store + "/data.mdb")
        // By id: a166308e "Groceries", caa2189a "Café Zürich", fde626cc "Ångström units".
        let notes = try box.run(["list", "--all", "--json"]).array()
            .sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
        #expect(notes.map { $0["title"] as? String } == ["Groceries", "Café Zürich", "Ångström units"])
        #expect(notes.map { $0["version"] as? Int } == [5, 4, 4])
        #expect(notes.map { $0["category"] as? String } == ["Home 🏠", nil, "Home 🏠"])
        #expect(notes.map { $0["pinned"] as? Bool } == [false, false, true])
        #expect(notes.map { $0["archived"] as? Bool } == [false, false, true])
        #expect(notes.map { $0["trashed"] as? Bool } == [false, false, false])
        #expect(try box.object("show", "a166")["body"] as? String == "- milk\n- eggs\n", "restored to v1")
        #expect(try box.object("show", "caa2")["body"] as? String == "Café crème\nnaïve 東京\n")
        let history = try box.run(["history", "a166", "--json"]).array()
        #expect(
            history.map { $0["type"] as? String } == [
                "NoteCreated", "NoteBodyEdited", "NoteTrashed", "NoteUntrashed", "NoteRestored",
            ])
        #expect(history.first?["recordedAt"] as? String == "2026-11-29T10:02:00.000000Z")
        #expect(try box.ok("show", "a166", "--at", "2").stdout.contains("[Home]"), "the category as it was named then")
        #expect(try box.ok("search", "zurich").stdout.contains("Café Zürich"))
        let migrations = try box.run(["migrations", "--json"]).array()
        #expect(migrations.count == 1, "rebuilt once, at the first open: \(migrations)")
        #expect((migrations.first?["from"] as? String)?.hasPrefix("notes-3+") == true)
        #expect(try box.ok("export").stdout.split(separator: "\n").count == 15)
        try box.ok("verify")
    }
}
