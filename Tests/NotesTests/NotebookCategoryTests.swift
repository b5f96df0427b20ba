import Basics
import EventStore
import Notes
import TestSupport
import Testing

@Suite("Notebook categories")
struct NotebookCategoryTests {
    @Test("names are trimmed and unique without regard to case; rename keeps the id; errors change nothing")
    func names() throws {
        let f = try NotebookFixture()
        let work = try f.book.addCategory("  Work ")
        #expect(work.name == "Work" && work.count == 0 && !work.deleted)
        #expect(work.createdAt == NotebookClock.start)
        try f.book.addCategory("Home")
        let head = try f.head
        #expect(notebookError { _ = try f.book.addCategory("WORK") }?.isValidation == true)
        #expect(notebookError { _ = try f.book.renameCategory("Home", to: "work") }?.isValidation == true)
        #expect(notebookError { _ = try f.book.renameCategory("Nope", to: "X") }?.isNotFound == true)
        #expect(notebookError { _ = try f.book.deleteCategory("Nope") }?.isNotFound == true)
        #expect(notebookError { _ = try f.book.category(named: "Nope") }?.isNotFound == true)
        #expect(try f.head == head)

        let renamed = try f.book.renameCategory("work", to: "Job")
        #expect(renamed.id == work.id && renamed.name == "Job")
        #expect(try f.book.renameCategory("job", to: "JOB").name == "JOB", "a change of case is a rename")
        #expect(try f.book.renameCategory("JOB", to: " JOB ").name == "JOB")
        #expect(try f.head == head + 2, "renaming to the same name appends nothing")
        #expect(try f.book.categories().map(\.name) == ["Home", "JOB"])
        #expect(try f.book.categoryName(work.id) == "JOB")
    }

    @Test("counts follow adds, moves, trash and untrash (trashed notes are not counted, archived ones are)")
    func counts() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(title: "A", category: "Work").id
        let b = try f.book.add(title: "B", category: "Work").id
        func count(_ name: String) throws -> Int { try f.book.category(named: name).count }
        #expect(try count("Work") == 2)
        try f.book.archive(a)
        #expect(try count("Work") == 2)
        try f.book.trash(a)
        #expect(try count("Work") == 1)
        try f.book.categorize(b, as: "Home")
        #expect(try count("Work") == 0 && count("Home") == 1)
        try f.book.untrash(a)
        #expect(try count("Work") == 1)
        try f.book.categorize(a, as: nil)
        #expect(try count("Work") == 0)
        #expect(try f.book.categories().map(\.count) == [1, 0])
    }

    @Test("delete uncategorizes every note of the category with its own NoteCategorized(null), in one transaction")
    func deleteNullifies() throws {
        let f = try NotebookFixture()
        let active = try f.book.add(title: "Active", category: "Work").id
        let archived = try f.book.add(title: "Archived", category: "Work").id
        let trashed = try f.book.add(title: "Trashed", category: "work").id
        let other = try f.book.add(title: "Other", category: "Home").id
        let none = try f.book.add(title: "None").id
        try f.book.archive(archived)
        try f.book.trash(trashed)
        let work = try f.book.category(named: "Work")
        let versions = try [active, archived, trashed, other, none].map { try f.book.note($0).version }
        let head = try f.head
        f.clock.advance(seconds: 10)

        #expect(try f.book.deleteCategory("WORK") == 3)
        #expect(try f.head == head + 4, "three NoteCategorized and one CategoryDeleted")
        var causes: Set<Identifier?> = []
        var correlations: Set<Identifier?> = []
        var positions: [UInt64] = []
        for (id, before) in zip([active, archived, trashed], versions) {
            let note = try f.book.note(id)
            #expect(note.category == nil && note.version == before + 1)
            #expect(note.updatedAt == NotebookClock.start + 10_000_000)
            let last = try #require(try f.book.revisions(of: id).last)
            #expect(last.events == [.categorized(category: nil)], "the note's own stream tells the story")
            #expect(last.storedType == "NoteCategorized")
            causes.insert(last.metadata.causationID)
            correlations.insert(last.metadata.correlationID)
            positions.append(last.position)
        }
        #expect(causes.count == 1 && causes.first! != nil, "all caused by the one CategoryDeleted")
        #expect(correlations.count == 1 && correlations.first! != nil)
        #expect(positions.allSatisfy { $0 > head && $0 <= head + 4 })
        // Notes outside the category are untouched.
        #expect(try f.book.note(other).version == versions[3] && f.book.note(none).version == versions[4])
        #expect(try f.book.note(other).category != nil)
        // The category is gone from listings but its name still reads for history.
        #expect(try f.book.categories().map(\.name) == ["Home"])
        #expect(notebookError { _ = try f.book.category(named: "Work") }?.isNotFound == true)
        #expect(try f.book.categoryName(work.id) == "Work")
        var q = ListQuery()
        q.status = .all
        q.scope = .uncategorized
        #expect(Set(try f.book.list(q).map(\.id)) == [active, archived, trashed, none])
        q.scope = .category(work.id)
        #expect(try f.book.list(q).isEmpty)
        // The name can be used again, by a new category.
        let again = try f.book.addCategory("Work")
        #expect(again.id != work.id && again.count == 0)
        // The in-memory replay agrees with the projections.
        let state = try f.book.state(asOf: f.clock.micros)
        #expect(state.category(named: "work")?.id == again.id)
        #expect(state.notes[active]?.category == nil)
    }

    @Test("deleting an empty category appends only CategoryDeleted")
    func deleteEmpty() throws {
        let f = try NotebookFixture()
        try f.book.addCategory("Empty")
        let head = try f.head
        #expect(try f.book.deleteCategory("empty") == 0)
        #expect(try f.head == head + 1)
        #expect(try f.book.categories().isEmpty)
    }
}
