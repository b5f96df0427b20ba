import Basics
import EventStore
import Foundation
import Notes
import SearchEngine
import Testing
import TextDiff

/// The committed golden store `Tests/Fixtures/legacy-v1` (and its export `legacy-v1.jsonl`),
/// read with today's code. It holds three notes written by the first program (schema 1 of the
/// note model: NoteCreated, NoteUpdated, NotePinToggled and NoteDeleted v1), then commands of
/// the current program. Every expectation here was written by hand from that history.
///
/// These tests must pass in every future version. When one fails, today's code lost the
/// ability to read an old store: fix the code (an upcaster, a projection), never the fixture.
@Suite("Golden legacy store")
struct SchemaGoldenStoreTests {
    static let a = Identifier("11111111-1111-4111-8111-111111111111")!
    static let b = Identifier("22222222-2222-4222-8222-222222222222")!
    static let c = Identifier("33333333-3333-4333-8333-333333333333")!
    static let d = Identifier("c0de0001-0000-4000-8000-000000000004")!
    static let home = Identifier("c0de0001-0000-4000-8000-000000000001")!

    static func micros(_ text: String) -> Int64 { RFC3339.parse(text) ?? -1 }

    /// Opens a private copy of the golden store.
    static func open(_ scratch: SchemaScratch) throws -> Notebook {
        let dir = scratch.sub("golden")
        try SchemaFixtures.copyLegacyStore(to: dir)
        return try Notebook(path: dir, options: schemaOptions())
    }

    @Test("the notes: titles, bodies, pinned, archived, trashed, categories")
    func notes() throws {
        let scratch = try SchemaScratch()
        let book = try Self.open(scratch)

        let a = try book.note(Self.a)
        #expect(a.title == "Shopping list")
        #expect(a.body == "- milk\n- eggs\n- bread\n")
        #expect(!a.pinned && !a.archived && !a.trashed)
        #expect(a.category == Self.home)
        #expect(a.version == 6)
        #expect(a.createdAt == Self.micros("2019-03-01T09:00:00Z"))
        #expect(a.updatedAt == Self.micros("2026-11-08T10:00:00Z"))

        // Created pinned, renamed and rewritten by one NoteUpdated, deleted by the old program
        // (which is trash now), and brought back by today's program.
        let b = try book.note(Self.b)
        #expect(b.title == "Folding bicycle")
        #expect(b.body == "A bicycle\nthat folds in half\n")
        #expect(b.pinned && !b.archived && !b.trashed)
        #expect(b.category == nil)
        #expect(b.version == 4)

        let c = try book.note(Self.c)
        #expect(c.title == "Team meeting")
        #expect(c.body == "Agenda:\n1. budget\n")
        #expect(!c.pinned && !c.archived && c.trashed)
        #expect(c.version == 6)

        let d = try book.note(Self.d)
        #expect(d.title == "Reading list")
        #expect(d.body == "Dune\nSolaris\nThe Left Hand of Darkness\n")
        #expect(!d.pinned && d.archived && !d.trashed)
        #expect(d.category == Self.home)
        #expect(d.version == 3)

        var active = ListQuery()
        active.sort = .title
        #expect(try book.list(active).map(\.id) == [Self.b, Self.a])
        var trashed = ListQuery()
        trashed.status = .trashed
        #expect(try book.list(trashed).map(\.id) == [Self.c])
        var archived = ListQuery()
        archived.status = .archived
        #expect(try book.list(archived).map(\.id) == [Self.d])
        var pinned = ListQuery()
        pinned.pinnedOnly = true
        #expect(try book.list(pinned).map(\.id) == [Self.b])

        let categories = try book.categories()
        #expect(categories.map(\.name) == ["Home"])
        #expect(categories.first?.count == 2)
        #expect(try book.stats().notes == 4)
        #expect(try book.stats().events == 20)
    }

    @Test("history: one line per stored event, stored versions, only what changed")
    func history() throws {
        let scratch = try SchemaScratch()
        let book = try Self.open(scratch)
        let home = CategoryRef(id: Self.home, name: "Home")

        let a = try book.history(of: Self.a)
        #expect(a.map(\.revision.version) == [1, 2, 3, 4, 5, 6])
        #expect(a.map(\.revision.position) == [1, 4, 5, 11, 13, 20])
        #expect(
            a.map(\.revision.storedType) == [
                "NoteCreated", "NoteUpdated", "NotePinToggled", "NoteUpdated", "NoteCategorized", "NoteUnpinned",
            ])
        #expect(a.map(\.revision.storedSchemaVersion) == [1, 1, 1, 1, 1, 1])
        #expect(
            a.map(\.revision.metadata.actor) == Array(repeating: "ana@old-laptop", count: 4) + [
                "ana@laptop", "ana@laptop",
            ])
        #expect(a[0].changes == [.title(from: nil, to: "Groceries"), .body(DiffStat(added: 2, removed: 0))])
        // The legacy NoteUpdated that kept the title shows only its body change ...
        #expect(a[1].changes == [.body(DiffStat(added: 1, removed: 0))])
        #expect(a[1].summary == "body +1 -0 lines")
        #expect(a[2].changes == [.pinned(from: false, to: true)])
        // ... and the one that kept the body only its title change.
        #expect(a[3].changes == [.title(from: "Groceries", to: "Shopping list")])
        #expect(a[4].changes == [.category(from: nil, to: home)])
        #expect(a[5].changes == [.pinned(from: true, to: false)])
        #expect(a[1].revision.events.count == 2, "a NoteUpdated lifts to a retitle and a body edit")

        let b = try book.history(of: Self.b)
        #expect(b.map(\.revision.version) == [1, 2, 3, 4])
        #expect(b.map(\.revision.storedType) == ["NoteCreated", "NoteUpdated", "NoteDeleted", "NoteUntrashed"])
        #expect(
            b[0].changes == [
                .title(from: nil, to: "Old idea"), .body(DiffStat(added: 2, removed: 0)),
                .pinned(from: false, to: true),
            ])
        #expect(
            b[1].changes == [
                .title(from: "Old idea", to: "Folding bicycle"), .body(DiffStat(added: 1, removed: 1)),
            ])
        #expect(b[2].changes == [.trashed(from: false, to: true)], "the old hard delete is trash now")
        #expect(b[3].changes == [.trashed(from: true, to: false)])

        let c = try book.history(of: Self.c)
        #expect(c.map(\.revision.version) == [1, 2, 3, 4, 5, 6])
        #expect(
            c.map(\.revision.storedType) == [
                "NoteCreated", "NotePinToggled", "NotePinToggled", "NoteUpdated", "NoteRetitled", "NoteTrashed",
            ])
        #expect(c[1].changes == [.pinned(from: false, to: true)])
        #expect(c[2].changes == [.pinned(from: true, to: false)])
        #expect(c[3].changes.isEmpty, "a NoteUpdated that changed nothing still has its line, with no change")
        #expect(c[4].changes == [.title(from: "Meeting notes", to: "Team meeting")])
        #expect(c[5].changes == [.trashed(from: false, to: true)])
    }

    @Test("time travel, diff and blame read through the upcasters")
    func timeTravel() throws {
        let scratch = try SchemaScratch()
        let book = try Self.open(scratch)

        let a2 = try book.note(Self.a, atVersion: 2)
        #expect(a2.title == "Groceries" && a2.body == "- milk\n- eggs\n- bread\n" && !a2.pinned)
        #expect(try book.note(Self.a, atVersion: 3).pinned)
        #expect(try book.note(Self.b, atVersion: 3).trashed)
        let b1 = try book.note(Self.b, atInstant: Self.micros("2019-03-04T00:00:00Z"))
        #expect(b1.title == "Old idea" && b1.version == 1)

        let diff = try book.diff(Self.a, from: .version(1), to: .version(4))
        #expect(diff.fields == [.title(from: "Groceries", to: "Shopping list"), .pinned(from: false, to: true)])
        #expect(diff.hunks.count == 1)

        let blame = try book.blame(Self.a)
        #expect(blame.map(\.text) == ["- milk", "- eggs", "- bread"])
        #expect(blame.map(\.version) == [1, 1, 2])
        #expect(blame.map(\.actor) == ["ana@old-laptop", "ana@old-laptop", "ana@old-laptop"])

        let then = try book.state(asOf: Self.micros("2019-12-31T00:00:00Z"))
        #expect(then.notes.count == 3)
        #expect(then.notes[Self.b]?.trashed == true)
        #expect(then.notes[Self.a]?.title == "Shopping list")
    }

    @Test("the catalogue, the upgrade plan and verify")
    func catalogueAndVerify() throws {
        let scratch = try SchemaScratch()
        let book = try Self.open(scratch)
        let catalogue = try book.store.catalogue()
        #expect(catalogue[SchemaKey("NoteCreated", 1)] == 3)
        #expect(catalogue[SchemaKey("NoteUpdated", 1)] == 4)
        #expect(catalogue[SchemaKey("NotePinToggled", 1)] == 3)
        #expect(catalogue[SchemaKey("NoteDeleted", 1)] == 1)
        #expect(catalogue[SchemaKey("NoteCreated", 2)] == 1)
        #expect(catalogue.values.reduce(0, +) == 20)

        let plan = Dictionary(uniqueKeysWithValues: try book.upgradePlan().map { ($0.key, $0) })
        #expect(plan[SchemaKey("NoteCreated", 1)]?.liftsTo == [SchemaKey("NoteCreated", 2)])
        #expect(
            plan[SchemaKey("NoteUpdated", 1)]?.liftsTo == [
                SchemaKey("NoteRetitled", 1), SchemaKey("NoteBodyEdited", 1),
            ])
        #expect(
            plan[SchemaKey("NotePinToggled", 1)]?.liftsTo == [SchemaKey("NotePinned", 1), SchemaKey("NoteUnpinned", 1)])
        #expect(plan[SchemaKey("NoteDeleted", 1)]?.liftsTo == [SchemaKey("NoteTrashed", 1)])
        #expect(plan[SchemaKey("NoteCreated", 2)]?.liftsTo == [SchemaKey("NoteCreated", 2)])

        #expect(try book.verify().isEmpty)
        // Whatever the open did (a rebuild when today's projections differ), a second open
        // has nothing left to do.
        let again = try Notebook(path: scratch.sub("golden"), options: schemaOptions())
        #expect(again.rebuildAtOpen == nil)
        try book.rebuild()
        #expect(try book.verify().isEmpty)
    }

    @Test("opening never changes the stored events")
    func eventsUnchanged() throws {
        let scratch = try SchemaScratch()
        let book = try Self.open(scratch)
        var exported: [UInt8] = []
        try book.exportEvents { exported += $0 }
        // Compared as JSON values, so a later writer may order or space its output differently.
        let expected = try #require(schemaFileBytes(SchemaFixtures.legacyExport))
        #expect(try Self.jsonLines(exported) == Self.jsonLines(expected), "the log reads back as it was written")
    }

    @Test("the export file is the same history: importing it gives the same notebook")
    func exportFile() throws {
        let scratch = try SchemaScratch()
        let golden = try Self.open(scratch)
        // The importing machine's clock is after the file's events (the tests' fixed clock, in
        // 2023, is not: an import refuses events dated more than a day ahead of the clock).
        var options = schemaOptions()
        options.clock = { 1_800_000_000_000_000 }
        let imported = try Notebook(path: scratch.sub("imported"), options: options)
        let summary = try imported.importEvents(fromFile: SchemaFixtures.legacyExport)
        #expect(summary.appended == 20)

        var all = ListQuery()
        all.status = .all
        all.sort = .created
        #expect(try imported.list(all) == golden.list(all))
        #expect(try imported.categories() == golden.categories())
        for id in [Self.a, Self.b, Self.c, Self.d] {
            #expect(try imported.history(of: id) == golden.history(of: id))
        }
        #expect(try imported.store.catalogue() == golden.store.catalogue())
        #expect(try imported.verify().isEmpty)
    }

    static func searchIDs(
        _ book: Notebook, _ text: String, _ statuses: Set<SearchDocument.Status> = [.active], asOf: String? = nil
    ) throws -> [Identifier] {
        let query = try SearchQuery.parse(text)
        let filter = SearchFilter(statuses: statuses)
        if let asOf {
            return try book.search(query, filter: filter, asOf: micros(asOf)).map(\.note.id)
        }
        return try book.search(query, filter: filter).map(\.note.id)
    }

    @Test("search finds legacy text through the upcasters, before and after a rebuild")
    func search() throws {
        let scratch = try SchemaScratch()
        let book = try Self.open(scratch)
        for round in 0..<2 {
            #expect(try Self.searchIDs(book, "milk") == [Self.a], "round \(round)")
            // Written by a legacy NoteUpdated (its body half).
            #expect(try Self.searchIDs(book, "bread") == [Self.a])
            // The old title, replaced by a legacy NoteUpdated (its title half).
            #expect(try Self.searchIDs(book, "groceries").isEmpty)
            #expect(try Self.searchIDs(book, "title:shopping") == [Self.a])
            // Deleted by the old program, untrashed by today's.
            #expect(try Self.searchIDs(book, "bicycle") == [Self.b])
            #expect(try Self.searchIDs(book, "budget").isEmpty, "the trashed note is not active")
            #expect(try Self.searchIDs(book, "budget", [.trashed]) == [Self.c])
            #expect(try Self.searchIDs(book, "solaris", [.archived]) == [Self.d])
            #expect(try Self.searchIDs(book, "folds", Set(SearchDocument.Status.allCases)) == [Self.b])
            try book.rebuild()
        }
        #expect(try Self.searchIDs(book, "groceries", asOf: "2019-03-05T00:00:00Z") == [Self.a])
        #expect(try Self.searchIDs(book, "bicycle", asOf: "2019-03-09T00:00:00Z").isEmpty, "deleted then")
        #expect(try Self.searchIDs(book, "bicycle", [.trashed], asOf: "2019-03-09T00:00:00Z") == [Self.b])
        #expect(try book.verify().isEmpty)
    }

    static func jsonLines(_ bytes: [UInt8]) throws -> [NSDictionary] {
        try bytes.split(separator: 0x0A).map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line)) as? NSDictionary)
        }
    }

    @Test("the export file holds schema-1 payloads as the first program wrote them")
    func exportFileShape() throws {
        let bytes = try #require(schemaFileBytes(SchemaFixtures.legacyExport))
        let lines = bytes.split(separator: 0x0A)
        #expect(lines.count == 20)
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        }
        #expect(objects.map { $0["position"] as? Int } == (1...20).map { $0 })
        let first = objects[0]
        #expect(first["type"] as? String == "NoteCreated")
        #expect(first["schemaVersion"] as? Int == 1)
        #expect(first["stream"] as? String == "note/11111111-1111-4111-8111-111111111111")
        let data = try #require(first["data"] as? [String: Any])
        #expect(data["title"] as? String == "Groceries")
        #expect(data["content"] as? String == "- milk\n- eggs\n")
        #expect(data["isPinned"] as? Bool == false)
        let legacyTypes = objects.prefix(11).map { "\($0["type"] ?? "")/\($0["schemaVersion"] ?? "")" }
        #expect(Set(legacyTypes) == ["NoteCreated/1", "NoteUpdated/1", "NotePinToggled/1", "NoteDeleted/1"])
    }

    @Test(
        "read-only, the golden store's projections (an older version's, without today's databases) are refused; its log is read"
    )
    func readOnlyOlderProjections() throws {
        let scratch = try SchemaScratch()
        let dir = scratch.sub("golden")
        try SchemaFixtures.copyLegacyStore(to: dir)
        let readOnly = schemaOptions(readOnly: true)
        // Before 2026-12-07 this open failed: "open database p0.rows: MDB_NOTFOUND".
        let book = try Notebook(path: dir, options: readOnly)
        for read in [
            // (A short id is found in the log since 2026-12-07: `readOnlyOlderTimeTravel`.)
            { _ = try book.note(Self.a) }, { _ = try book.list(ListQuery()) }, { _ = try book.allTags() },
        ] {
            #expect {
                try read()
            } throws: { error in
                guard case .store(.projectionsNotBuilt(let stored, let missing)) = error as? NotesError else {
                    return false
                }
                return stored != nil && missing.contains("p0.rows")
            }
        }
        #expect(try book.log(LogQuery()).count == 20, "the log is read as it is")
        let problems = try book.verify()
        #expect(problems.map(\.kind) == [.projection], "\(problems)")
        #expect(problems.first?.detail.contains("not compared") == true)
        // Once opened with write access (which rebuilds them), read-only reads the projections.
        _ = try Notebook(path: dir, options: schemaOptions())
        let again = try Notebook(path: dir, options: readOnly)
        #expect(try again.note(Self.a).title == "Shopping list")
        #expect(try again.verify().isEmpty)
    }

    @Test(
        "read-only, a store without projection databases, events or a recorded projection version: verify names the projections, never traps"
    )
    func readOnlyUnbuiltEmptyStore() throws {
        let scratch = try SchemaScratch()
        let dir = scratch.sub("unbuilt")
        // A store whose creation ended before any projection was built (as an older program's
        // killed between the format and its first rebuild): the format, no projection database,
        // no version recorded, no event.
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        do { _ = try EventStore(path: dir, configuration: .init(registry: NotesSchema.registry)) }
        let readOnly = schemaOptions(readOnly: true)
        let book = try Notebook(path: dir, options: readOnly)
        // Before, verify compared the projections it lacks with the replay: "projection database
        // rows was not declared", a trap.
        let problems = try book.verify()
        #expect(problems.map(\.kind) == [.projection], "\(problems)")
        #expect(problems.first?.detail.contains("not compared") == true)
    }

    @Test(
        "read-only, the golden store's past is folded from its log as with its projections: list --as-of, show --at, history, diff, blame"
    )
    func readOnlyOlderTimeTravel() throws {
        let scratch = try SchemaScratch()
        let dir = scratch.sub("golden")
        try SchemaFixtures.copyLegacyStore(to: dir)
        // The same store with write access (its projections rebuilt): what each read must give.
        let writableDir = scratch.sub("writable")
        try SchemaFixtures.copyLegacyStore(to: writableDir)
        let writable = try Notebook(path: writableDir, options: schemaOptions())
        let readOnly = schemaOptions(readOnly: true)
        let book = try Notebook(path: dir, options: readOnly)
        // Before 2026-12-07 each of these was refused, "built by another version of the
        // program", though they read the log alone (`search --as-of`, `export` and `log` did).
        for instant in ["2019-03-04T00:00:00Z", "2019-12-31T00:00:00Z", "2026-12-01T00:00:00Z"].map(Self.micros) {
            let past = try book.past(asOf: instant)
            let expected = try writable.past(asOf: instant)
            #expect(past.position == expected.position)
            #expect(past.names.categories == expected.names.categories && past.names.tags == expected.names.tags)
            var queries = [ListQuery()]
            for (status, sort) in [(ListQuery.StatusFilter.all, ListQuery.Sort.title), (.trashed, .created)] {
                var q = ListQuery()
                q.status = status
                q.sort = sort
                queries.append(q)
            }
            var home = ListQuery()
            home.status = .all
            home.scope = .category(Self.home)
            queries.append(home)
            var first = ListQuery()
            first.limit = 1
            queries.append(first)
            for q in queries {
                #expect(try book.list(q, in: past) == writable.list(q, in: expected), "\(q)")
            }
        }
        #expect(try !book.list(ListQuery(), in: book.past(asOf: Self.micros("2026-12-01T00:00:00Z"))).isEmpty)
        #expect(try book.resolve("1111") == Self.a)
        #expect(try book.resolve("33333333-3333") == Self.c)
        #expect(throws: NotesError.self) { try book.resolve("4444") }
        for id in [Self.a, Self.b, Self.c] {
            #expect(try book.history(of: id) == writable.history(of: id))
            #expect(try book.blame(id) == writable.blame(id))
            let revision = try book.revision(of: id, at: .instant(Self.micros("2026-12-01T00:00:00Z")))
            #expect(revision == (try writable.revision(of: id, at: .instant(Self.micros("2026-12-01T00:00:00Z")))))
            #expect(
                try book.labels(of: revision.note, at: revision.position)
                    == writable.labels(of: revision.note, at: revision.position))
        }
        #expect(
            try book.diff(Self.a, from: .version(1), to: .version(4))
                == writable.diff(Self.a, from: .version(1), to: .version(4)))
        // What needs the projections is still refused by name.
        #expect(throws: NotesError.self) { try book.list(ListQuery()) }
        #expect(throws: NotesError.self) { try book.note(Self.a) }
    }
}
