import Basics
import EventStore
import Notes
import TestSupport
import Testing

/// The Notebook's commands: what each appends, what it validates, and that a failing command
/// appends nothing. Clock and ids are injected so every value is known.
@Suite("Notebook commands")
struct NotebookCommandTests {
    @Test("add appends one NoteCreated with the trimmed title, the body byte for byte, and metadata")
    func add() throws {
        let f = try NotebookFixture()
        let body = "  - milk\r\n\n\ttabs stay  "
        let note = try f.book.add(title: "  Groceries\t", body: body, pinned: true)
        #expect(note.id == Identifier(high: 1 << 32 | 0x4000, low: 0x8000_0000_0000_0001), "the first generated id")
        #expect(shortID(note.id) == "00000001")
        #expect(note.title == "Groceries" && note.body == body && note.pinned && note.category == nil)
        #expect(!note.archived && !note.trashed && note.version == 1)
        #expect(note.createdAt == NotebookClock.start && note.updatedAt == NotebookClock.start)
        let revisions = try f.book.revisions(of: note.id)
        #expect(revisions.count == 1)
        #expect(revisions[0].events == [.created(title: "Groceries", body: body, pinned: true, category: nil)])
        #expect(revisions[0].metadata.actor == "ana@laptop" && revisions[0].metadata.command == "notes test")
        #expect(revisions[0].storedType == "NoteCreated" && revisions[0].storedSchemaVersion == 2)
        #expect(try f.book.note(note.id) == note)
    }

    @Test("add with a category creates it once; names match without regard to case")
    func addWithCategory() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(title: "A", category: " Work ")
        let b = try f.book.add(title: "B", category: "WORK")
        let work = try f.book.category(named: "work")
        #expect(work.name == "Work" && work.count == 2)
        #expect(a.category == work.id && b.category == work.id)
        #expect(try f.book.categories().map(\.name) == ["Work"])
        #expect(try f.events(a.id) == [.created(title: "A", body: "", pinned: false, category: work.id)])
        #expect(try f.head == 3, "CategoryCreated, then two NoteCreated")
    }

    @Test("edit appends one event per changed field, none when nothing changes, and moves updatedAt")
    func edit() throws {
        let f = try NotebookFixture()
        let n = try f.book.add(title: "Draft", body: "one")
        f.clock.advance(seconds: 60)
        var e = try f.book.edit(n.id, title: "Final")
        #expect(e.version == 2 && e.title == "Final" && e.body == "one")
        #expect(e.updatedAt == NotebookClock.start + 60_000_000 && e.createdAt == NotebookClock.start)
        f.clock.advance()
        e = try f.book.edit(n.id, title: " Final ", body: "one")
        #expect(e.version == 2 && e.updatedAt == NotebookClock.start + 60_000_000, "no change, no event")
        e = try f.book.edit(n.id, title: "Both", body: "two\n")
        #expect(e.version == 4)
        let revisions = try f.book.revisions(of: n.id)
        #expect(
            revisions.map(\.events) == [
                [.created(title: "Draft", body: "one", pinned: false, category: nil)], [.retitled(title: "Final")],
                [.retitled(title: "Both")], [.bodyEdited(body: "two\n")],
            ])
        // The two events of one edit share a correlation id; single events need none.
        let correlation = revisions[2].metadata.correlationID
        #expect(correlation != nil && revisions[3].metadata.correlationID == correlation)
        #expect(revisions[1].metadata.correlationID == nil)
        #expect(try f.book.edit(n.id, body: "three", expectedVersion: 4).version == 5)
    }

    @Test("a stale expected version is a conflict and appends nothing")
    func conflict() throws {
        let f = try NotebookFixture()
        let n = try f.book.add(title: "Shared")
        try f.book.edit(n.id, body: "changed elsewhere")
        let head = try f.head
        let error = notebookError { try f.book.edit(n.id, body: "mine", expectedVersion: 1) }
        guard case .conflict(let id, let expected, let actual) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(id == n.id && expected == 1 && actual == 2)
        #expect(error?.description.contains("it changed meanwhile") == true)
        // A version it never had is no change meanwhile.
        let ahead = notebookError { try f.book.edit(n.id, body: "mine", expectedVersion: 9) }
        let said = ahead?.description
        #expect(said == "note \(shortID(n.id)) is at version 2, not 9: it has no version 9 yet", "\(said ?? "nil")")
        #expect(try f.head == head)
        #expect(try f.book.note(n.id).body == "changed elsewhere")
    }

    @Test("pin, unpin, archive, unarchive, trash and untrash append only when they change something")
    func flags() throws {
        let f = try NotebookFixture()
        let id = try f.book.add(title: "N").id
        #expect(try f.book.pin(id).pinned)
        #expect(try f.book.pin(id).version == 2)
        #expect(try !f.book.unpin(id).pinned)
        #expect(try f.book.unpin(id).version == 3)
        #expect(try f.book.archive(id).status == .archived)
        #expect(try f.book.trash(id).status == .trashed, "trash wins over archive")
        #expect(try f.book.unarchive(id).status == .trashed)
        #expect(try f.book.untrash(id).status == .active)
        #expect(try f.book.untrash(id).version == 7)
        #expect(try f.book.unarchive(id).version == 7)
        #expect(try f.events(id).dropFirst() == [.pinned, .unpinned, .archived, .trashed, .unarchived, .untrashed])
    }

    @Test("categorize moves a note between categories (creating them) or out of any, once per change")
    func categorize() throws {
        let f = try NotebookFixture()
        let id = try f.book.add(title: "N").id
        let inWork = try f.book.categorize(id, as: "Work")
        let work = try f.book.category(named: "Work")
        #expect(inWork.category == work.id && inWork.version == 2)
        #expect(try f.book.categorize(id, as: "work").version == 2)
        let inHome = try f.book.categorize(id, as: "Home")
        let home = try f.book.category(named: "Home")
        #expect(inHome.category == home.id)
        #expect(try f.book.category(named: "Work").count == 0 && f.book.category(named: "Home").count == 1)
        #expect(try f.book.categorize(id, as: nil).category == nil)
        #expect(try f.book.categorize(id, as: nil).version == 4)
        #expect(
            try f.events(id).dropFirst() == [
                .categorized(category: work.id), .categorized(category: home.id), .categorized(category: nil),
            ])
    }

    @Test("invalid input is a validation error that appends nothing")
    func validation() throws {
        let f = try NotebookFixture(maxBodyBytes: 10)
        let id = try f.book.add(title: "Keep", body: "0123456789").id
        let head = try f.head
        let cases: [(String, () throws -> Void)] = [
            ("empty title", { _ = try f.book.add(title: "") }),
            ("blank title", { _ = try f.book.add(title: " \n\t ") }),
            ("501 characters", { _ = try f.book.add(title: String(repeating: "é", count: 501)) }),
            ("line break", { _ = try f.book.add(title: "a\nb") }),
            ("control character", { _ = try f.book.add(title: "a\u{7}b") }),
            ("body over the limit", { _ = try f.book.add(title: "T", body: "01234567890") }),
            ("multi-byte body over the limit", { _ = try f.book.add(title: "T", body: "ééééé!") }),
            ("NUL in the body", { _ = try f.book.add(title: "T", body: "a\u{0}b") }),
            ("empty category", { _ = try f.book.add(title: "T", category: "  ") }),
            ("long category", { _ = try f.book.add(title: "T", category: String(repeating: "c", count: 101)) }),
            ("edit to an empty title", { _ = try f.book.edit(id, title: "") }),
            ("edit over the limit", { _ = try f.book.edit(id, body: "01234567890") }),
            ("categorize as blank", { _ = try f.book.categorize(id, as: "\t") }),
            ("add a blank category", { _ = try f.book.addCategory("") }),
        ]
        for (label, body) in cases {
            let error = notebookError(body)
            #expect(error?.isValidation == true, "\(label): \(String(describing: error))")
        }
        #expect(try f.head == head, "no failing command appended anything")
        // The limits themselves pass: 500 characters, a body of exactly the limit in bytes.
        #expect(try f.book.add(title: String(repeating: "é", count: 500), body: "éééé!!").title.count == 500)
    }

    @Test("unknown ids are not found; resolve takes unique prefixes of 4+ hex digits, dashes and case ignored")
    func resolve() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(title: "Alpha").id
        let b = try f.book.add(title: "Beta").id
        // Generated ids share their first 4 digits (the stem); the next 4 are the sequence number.
        #expect(try f.book.resolve(a.hex) == a)
        #expect(try f.book.resolve(a.uuidString.uppercased()) == a)
        #expect(try f.book.resolve(String(b.hex.prefix(12))) == b)
        let ambiguous = notebookError { _ = try f.book.resolve("0000") }
        guard case .ambiguous(let prefix, let candidates) = ambiguous else {
            Issue.record("expected ambiguous, got \(String(describing: ambiguous))")
            return
        }
        #expect(prefix == "0000" && Set(candidates.map(\.id)) == [a, b])
        #expect(Set(candidates.map(\.title)) == ["Alpha", "Beta"])
        for text in ["000", "xyz!", "", String(repeating: "0", count: 33)] {
            #expect(notebookError { _ = try f.book.resolve(text) }?.isValidation == true, "\(text)")
        }
        #expect(notebookError { _ = try f.book.resolve("ffff") }?.isNotFound == true)
        let unknown = Identifier(high: 42, low: 42)
        for action in [
            { _ = try f.book.note(unknown) }, { _ = try f.book.pin(unknown) },
            { _ = try f.book.edit(unknown, title: "x") },
            { _ = try f.book.categorize(unknown, as: "W") }, { _ = try f.book.revisions(of: unknown) },
        ] as [() throws -> Void] {
            #expect(notebookError(action)?.isNotFound == true)
        }
        #expect(try f.book.categories().isEmpty, "categorizing an unknown note created no category")
    }

    @Test("every change survives reopening the store")
    func reopen() throws {
        let f = try NotebookFixture()
        let n = try f.book.add(title: "Plan", body: "v1", category: "Work")
        try f.book.edit(n.id, body: "v2")
        try f.book.pin(n.id)
        let before = try f.book.note(n.id)
        try f.reopen()
        #expect(try f.book.note(n.id) == before)
        #expect(try f.book.category(named: "work").count == 1)
        try f.book.trash(n.id)
        try f.reopen()
        #expect(try f.book.note(n.id).trashed)
        #expect(try f.book.category(named: "work").count == 0)
        let stats = try f.book.stats()
        #expect(stats.notes == 1 && stats.events == 5 && stats.categories == 1)
    }
}
