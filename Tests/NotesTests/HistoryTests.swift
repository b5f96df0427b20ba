import Basics
import EventStore
import FoundationEssentials
import Glibc
import LMDB
import NotesWorkload
import SearchEngine
import Synchronization
import TestSupport
import Testing
import TextDiff

@testable import Notes

/// A notebook in a fresh temporary directory with a clock the test moves by hand and
/// sequential ids, so every instant and id in these tests is known.
final class HistoryFixture {
    /// 2026-11-01T00:00:00Z.
    static let start: Int64 = 1_793_491_200_000_000
    static let hour: Int64 = 3_600_000_000

    final class Clock: Sendable {
        let now = Mutex<Int64>(HistoryFixture.start)
        func read() -> Int64 { now.withLock { $0 } }
    }

    final class SequentialIDs: IdentifierGenerator {
        let counter = Mutex<UInt64>(0)
        func next() -> Identifier {
            let n = counter.withLock { c in
                c += 1
                return c
            }
            return Identifier(high: 0x1234_5678_0000_4000, low: 0x8000_0000_0000_0000 | n)
        }
    }

    let path: String
    let clock = Clock()
    let ids = SequentialIDs()
    private var current: Notebook?
    var book: Notebook { current! }

    init(actor: String = "ana@laptop") throws {
        var template = Array("/tmp/notes-history-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
        path = String(cString: try #require(dir))
        current = try Self.open(path, actor: actor, clock: clock, ids: ids)
    }

    /// Reopens the notebook as another actor (LMDB allows one open environment per process and
    /// path, so the old one is closed first).
    func act(as actor: String) throws {
        current = nil
        current = try Self.open(path, actor: actor, clock: clock, ids: ids)
    }

    static func open(_ path: String, actor: String, clock: Clock, ids: SequentialIDs) throws -> Notebook {
        var options = Notebook.Options(actor: actor, command: "test")
        options.clock = { clock.read() }
        options.ids = ids
        return try Notebook(path: path, options: options)
    }

    deinit {
        current = nil
        unlink(path + "/data.mdb")
        unlink(path + "/lock.mdb")
        rmdir(path)
    }

    /// Moves the clock on by `hours` and returns the new instant.
    @discardableResult
    func advance(hours: Int64 = 1) -> Int64 {
        clock.now.withLock {
            $0 += hours * Self.hour
            return $0
        }
    }

    var now: Int64 { clock.read() }

    /// The instant `hours` after the start.
    static func at(hours: Int64) -> Int64 { start + hours * hour }
}

@Suite("History: history, show --at, diff, blame")
struct HistoryTests {
    /// v1 created at +0h in Home, v2 body at +1h, v3 title at +2h, v4 pinned at +3h,
    /// v5 category Work at +4h, v6 archived at +5h, v7 trashed at +6h.
    static func story(_ f: HistoryFixture) throws -> Identifier {
        let book = f.book
        let id = try book.add(title: "Groceries", body: "milk\neggs\n", category: "Home").id
        f.advance()
        try book.edit(id, body: "milk\neggs\nbread\n")
        f.advance()
        try book.edit(id, title: "Shopping")
        f.advance()
        try book.pin(id)
        f.advance()
        try book.categorize(id, as: "Work")
        f.advance()
        try book.archive(id)
        f.advance()
        try book.trash(id)
        return id
    }

    @Test("history has one entry per stored event with what it changed")
    func historySummaries() throws {
        let f = try HistoryFixture()
        let id = try Self.story(f)
        let entries = try f.book.history(of: id)
        #expect(entries.map(\.revision.version) == Array(1...7))
        // An entry at a time (what `notes history` reads), the same entries.
        var streamed: [HistoryEntry] = []
        try f.book.history(of: id) { streamed.append($0) }
        #expect(streamed == entries)
        #expect(throws: NotesError.self) { try f.book.history(of: Identifier(high: 9, low: 9)) { _ in } }
        #expect(
            entries.map(\.revision.storedType) == [
                "NoteCreated", "NoteBodyEdited", "NoteRetitled", "NotePinned", "NoteCategorized", "NoteArchived",
                "NoteTrashed",
            ])
        #expect(
            entries.map(\.summary) == [
                "created \"Groceries\" in Home", "body +1 -0 lines", "title \"Groceries\" -> \"Shopping\"", "pinned",
                "category Home -> Work", "archived", "trashed",
            ])
        #expect(entries.map(\.revision.recordedAt) == (0...6).map { HistoryFixture.at(hours: $0) })
        #expect(entries.allSatisfy { $0.revision.metadata.actor == "ana@laptop" })
        #expect(entries[0].isCreation && !entries[1].isCreation)
        #expect(entries[1].changes == [.body(DiffStat(added: 1, removed: 0))])
        guard case .category(let from?, let to?) = entries[4].changes.first else {
            Issue.record("expected a category change: \(entries[4].changes)")
            return
        }
        #expect(from.name == "Home" && to.name == "Work")
    }

    @Test("category names in history are the names at the time, deleted categories included")
    func categoryNamesThen() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "Plan", category: "Work").id
        f.advance()
        try f.book.renameCategory("Work", to: "Job")
        f.advance()
        try f.book.categorize(id, as: "Home")
        f.advance()
        try f.book.deleteCategory("Home")
        let summaries = try f.book.history(of: id).map(\.summary)
        #expect(summaries == ["created \"Plan\" in Work", "category Job -> Home", "category Home -> none"])
    }

    @Test("show --at: a version or an instant, between events too; beyond the head or before creation is not found")
    func noteAtVersionsAndInstants() throws {
        let f = try HistoryFixture()
        let id = try Self.story(f)
        let book = f.book
        #expect(try book.note(id, atVersion: 1).body == "milk\neggs\n")
        #expect(try book.note(id, atVersion: 3).title == "Shopping")
        #expect(try book.note(id, atVersion: 7).trashed)
        // Exactly at an event's instant, and half an hour after it (between two events).
        #expect(try book.note(id, atInstant: HistoryFixture.at(hours: 2)).version == 3)
        #expect(try book.note(id, atInstant: HistoryFixture.at(hours: 2) + HistoryFixture.hour / 2).version == 3)
        #expect(try book.note(id, atInstant: HistoryFixture.at(hours: 2) - 1).version == 2)
        #expect(try book.note(id, atInstant: HistoryFixture.at(hours: 100)).version == 7)
        #expect(try book.revision(of: id, at: .instant(HistoryFixture.at(hours: 4))).note.pinned)

        for bad in [RevisionSelector.version(0), .version(8), .version(.max), .instant(HistoryFixture.start - 1)] {
            #expect {
                try book.revision(of: id, at: bad)
            } throws: { error in
                guard case NotesError.notFound = error else { return false }
                return true
            }
        }
        // A note that does not exist is not found either.
        #expect(throws: NotesError.self) { try book.note(Identifier(high: 1, low: 1), atVersion: 1) }
    }

    @Test("diff: field changes and body hunks; identical versions are empty")
    func diff() throws {
        let f = try HistoryFixture()
        let id = try Self.story(f)
        let same = try f.book.diff(id, from: .version(3), to: .version(3))
        #expect(same.isEmpty && same.hunks.isEmpty && same.fields.isEmpty)
        let d = try f.book.diff(id, from: .version(1))
        #expect(d.from.version == 1 && d.to.version == 7)
        #expect(d.fields.map(\.field) == ["title", "category", "pinned", "archived", "trashed"])
        #expect(d.fields.first == .title(from: "Groceries", to: "Shopping"))
        #expect(d.hunks.count == 1)
        #expect(d.hunks.first?.lines.map(\.kind) == [.context, .context, .added])
        // Versions that differ only in flags have no hunks.
        let flags = try f.book.diff(id, from: .instant(HistoryFixture.at(hours: 3)), to: .version(4))
        #expect(flags.isEmpty)
        let pinned = try f.book.diff(id, from: .version(3), to: .version(4))
        #expect(pinned.fields == [.pinned(from: false, to: true)] && pinned.hunks.isEmpty)
        // Backwards works too.
        let back = try f.book.diff(id, from: .version(2), to: .version(1))
        #expect(back.hunks.first?.lines.last == DiffLine(kind: .removed, text: "bread", hasNewline: true))
    }

    @Test("blame attributes each line to the version that last changed it, restores included")
    func blameAfterRestores() throws {
        let f = try HistoryFixture()
        let book = f.book
        let id = try book.add(title: "Poem", body: "one\ntwo\nthree\n").id
        f.advance()
        try book.edit(id, body: "one\n2\nthree\n")  // v2
        f.advance()
        try book.pin(id)  // v3: no body change
        f.advance()
        try book.restore(id, to: .version(1))  // v4: "two" is back
        f.advance()
        try book.edit(id, body: "one\ntwo\nthree\nfour")  // v5
        let lines = try book.blame(id)
        #expect(lines.map(\.text) == ["one", "two", "three", "four"])
        #expect(lines.map(\.version) == [1, 4, 1, 5])
        #expect(lines.last?.hasNewline == false)
        #expect(lines[1].recordedAt == HistoryFixture.at(hours: 3))
        #expect(try book.blame(id, at: .version(3)).map(\.version) == [1, 2, 1])
        #expect(try book.blame(id, at: .instant(HistoryFixture.at(hours: 0))).map(\.version) == [1, 1, 1])
        // Restoring the same body again changes nothing, so blame does not move.
        f.advance()
        try book.restore(id, to: .version(5))
        #expect(try book.blame(id).map(\.version) == [1, 4, 1, 5])
    }

    @Test("a note with a thousand versions: history, show --at and blame stay quick")
    func thousandVersions() throws {
        let f = try HistoryFixture()
        var lines = (0..<20).map { "line \($0)\n" }
        let id = try f.book.add(title: "Log", body: lines.joined()).id
        // One transaction for all the edits: what is measured is reading, not 999 commits.
        var edits: [NewEvent] = []
        for v in 2...1000 {
            lines[v % 20] = "line \(v % 20) edited at v\(v)\n"
            edits.append(
                NoteEvent.bodyEdited(body: lines.joined()).newEvent(
                    id: Identifier(high: 7, low: UInt64(v)), metadata: EventMetadata(actor: "bulk")))
        }
        try f.book.store.append(edits, to: Note.stream(id), expecting: .exact(1))
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            #expect(try f.book.history(of: id).count == 1000)
            #expect(try f.book.note(id, atVersion: 500).body.contains("edited at v500"))
            let blame = try f.book.blame(id)
            #expect(blame.count == 20)
            #expect(blame[0].version == 1000 && blame[19].version == 999)
        }
        // Generous for a debug build on a shared machine; release builds take milliseconds.
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }
}

@Suite("History: restore and undo")
struct RestoreTests {
    @Test("restore appends one NoteRestored with title, body, pinned and category of that version")
    func restoreOnce() throws {
        let f = try HistoryFixture()
        let id = try HistoryTests.story(f)
        f.advance()
        let outcome = try f.book.restore(id, to: .version(2))
        #expect(outcome.appended && outcome.fromVersion == 2 && outcome.deletedCategory == nil)
        let n = outcome.note
        #expect(n.version == 8 && n.title == "Groceries" && n.body == "milk\neggs\nbread\n")
        #expect(!n.pinned && !n.trashed)
        // Archived is not part of a restore.
        #expect(n.archived)
        #expect(try f.book.categoryName(n.category) == "Home")
        let last = try #require(try f.book.history(of: id).last)
        #expect(last.revision.storedType == "NoteRestored" && last.restoredFrom == 2)
        #expect(last.summary.hasPrefix("restored from v2: title \"Shopping\" -> \"Groceries\""))
        #expect(try f.book.note(id) == n)
    }

    @Test("a note restored twice keeps its whole history")
    func restoredTwice() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "A", body: "1\n").id
        f.advance()
        // Two changes in one edit are two events: v2 title, v3 body.
        try f.book.edit(id, title: "B", body: "2\n")
        f.advance()
        try f.book.restore(id, to: .version(1))
        f.advance()
        let second = try f.book.restore(id, to: .instant(HistoryFixture.at(hours: 1)))
        #expect(second.note.version == 5 && second.note.title == "B" && second.note.body == "2\n")
        let history = try f.book.history(of: id)
        #expect(history.map(\.restoredFrom) == [nil, nil, nil, 1, 3])
        #expect(history[3].summary == "restored from v1: title \"B\" -> \"A\", body +1 -1 lines")
        #expect(history[4].summary == "restored from v3: title \"A\" -> \"B\", body +1 -1 lines")
        #expect(try f.book.note(id, atVersion: 4).title == "A")
        #expect(try f.book.note(id, atVersion: 2).body == "1\n")
    }

    @Test("restore of a trashed note brings it back and takes it out of the trash")
    func restoreTrashed() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "Gone", body: "x\n").id
        f.advance()
        try f.book.trash(id)
        // Restoring the version it already has still untrashes it.
        let outcome = try f.book.restore(id, to: .version(1))
        #expect(outcome.appended && !outcome.note.trashed && outcome.note.version == 3)
        #expect(try f.book.history(of: id).last?.summary == "restored from v1: untrashed")
    }

    @Test("a restore that changes nothing appends nothing")
    func restoreNoChange() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "Same").id
        f.advance()
        try f.book.pin(id)
        f.advance()
        try f.book.unpin(id)
        let outcome = try f.book.restore(id, to: .version(1))
        #expect(!outcome.appended && outcome.note.version == 3)
        #expect(try f.book.history(of: id).count == 3)
    }

    @Test("restore to a version whose category was deleted since restores it uncategorized and says so")
    func restoreDeletedCategory() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "Plan", body: "a\n", category: "Work").id
        f.advance()
        try f.book.edit(id, body: "b\n")
        try f.book.deleteCategory("Work")
        let outcome = try f.book.restore(id, to: .version(1))
        #expect(outcome.appended && outcome.note.category == nil && outcome.note.body == "a\n")
        #expect(outcome.deletedCategory?.name == "Work")
        #expect(try f.book.categories().isEmpty)
    }

    @Test("restore to a version whose category and tag a sync merged into others of their names files it under those")
    func restoreMergedCategoryAndTag() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "Plan", body: "a\n", category: "Work", tags: ["work", "home"]).id
        let before = try f.book.note(id)
        let category = try #require(before.category)
        let tag = try #require(try f.book.allTags().first { $0.name == "work" }).id
        f.advance()
        // What a sync writes when another device made a category and a tag of the same names:
        // the later ones merged into the first, and the note filed under those.
        let (otherCategory, otherTag) = (Identifier(high: 0xC0, low: 1), Identifier(high: 0xF0, low: 1))
        let meta = EventMetadata(actor: "bo@desktop")
        func event(_ k: UInt64) -> Identifier { Identifier(high: 0xE0, low: k) }
        try f.book.store.write { session in
            try session.append(
                [CategoryEvent.created(name: "Work").newEvent(id: event(1), metadata: meta)],
                to: Category.stream(otherCategory))
            try session.append(
                [TagEvent.created(name: "work").newEvent(id: event(2), metadata: meta)], to: Tag.stream(otherTag))
            try session.append(
                [CategoryEvent.merged(into: otherCategory).newEvent(id: event(3), metadata: meta)],
                to: Category.stream(category))
            try session.append(
                [TagEvent.merged(into: otherTag).newEvent(id: event(4), metadata: meta)], to: Tag.stream(tag))
            try session.append(
                [
                    NoteEvent.categorized(category: otherCategory).newEvent(id: event(5), metadata: meta),
                    NoteEvent.tagged(tag: otherTag).newEvent(id: event(6), metadata: meta),
                    NoteEvent.untagged(tag: tag).newEvent(id: event(7), metadata: meta),
                ], to: Note.stream(id))
        }
        f.advance()
        try f.book.edit(id, body: "b\n")
        let outcome = try f.book.restore(id, to: .version(before.version))
        #expect(outcome.deletedCategory == nil && outcome.deletedTags.isEmpty, "\(outcome)")
        let n = try f.book.note(id)
        #expect(n.body == "a\n" && n.category == otherCategory)
        #expect(try n.tags.compactMap { try f.book.tagName($0) }.sorted() == ["home", "work"])
        #expect(n.tags.contains(otherTag) && !n.tags.contains(tag))
        // Undo brings back the version before the restore, filed as it was.
        try f.book.undo(id)
        #expect(try f.book.note(id).category == otherCategory && f.book.note(id).tags.contains(otherTag))
        #expect(try f.book.verify().isEmpty)
    }

    @Test("restore with an expected version that is not the head is a conflict; nothing is appended")
    func restoreConflict() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "A").id
        try f.book.edit(id, title: "B")
        #expect {
            try f.book.restore(id, to: .version(1), expectedVersion: 1)
        } throws: { error in
            guard case NotesError.conflict(_, 1, 2) = error else { return false }
            return true
        }
        #expect(try f.book.note(id).version == 2)
        #expect(try f.book.restore(id, to: .version(1), expectedVersion: 2).note.version == 3)
    }

    @Test("undo restores the version before the last event; undo of a restore; undo of an undo")
    func undo() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "A", body: "1\n").id
        f.advance()
        try f.book.edit(id, body: "2\n")  // v2
        f.advance()
        try f.book.restore(id, to: .version(1))  // v3 body 1
        f.advance()
        let undone = try f.book.undo(id)  // v4 = v2
        #expect(undone.appended && undone.fromVersion == 2 && undone.note.body == "2\n" && undone.note.version == 4)
        let redone = try f.book.undo(id)  // v5 = v3
        #expect(redone.fromVersion == 3 && redone.note.body == "1\n")
    }

    @Test(
        "undo takes back the last command's events together: an undo that wrote a restore and a trash, an edit of title and body"
    )
    func undoWholeCommand() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "T", body: "A\n").id
        try f.book.edit(id, body: "B\n")  // v2
        try f.book.trash(id)  // v3
        try f.book.restore(id, to: .version(1))  // v4: body A, out of the trash
        let undone = try f.book.undo(id)  // v5 restore (body B) and v6 trash: the state of v3
        #expect(undone.note.version == 6 && undone.note.body == "B\n" && undone.note.trashed)
        let redone = try f.book.undo(id)  // both taken back: the state of v4
        #expect(redone.fromVersion == 4, "the version before the undo's two events, not the one between them")
        #expect(redone.note.body == "A\n" && !redone.note.trashed)

        // One command, two events: a retitle and a body edit given together.
        let other = try f.book.add(title: "Old", body: "old\n").id
        try f.book.edit(other, title: "New", body: "new\n")
        #expect(try f.book.note(other).version == 3)
        let back = try f.book.undo(other)
        #expect(back.fromVersion == 1 && back.note.title == "Old" && back.note.body == "old\n")

        // A creation with tags is one command, the one that made the note: nothing to undo, as
        // after a creation alone (before 2026-12-07 the tags were undone, a state no command
        // made). A later tagging is undone alone.
        let tagged = try f.book.add(title: "Tagged", tags: ["x", "y"]).id
        #expect(try f.book.note(tagged).version == 3)
        #expect {
            try f.book.undo(tagged)
        } throws: { error in
            guard case NotesError.validation(.nothingToUndo(let which)) = error else { return false }
            return which == tagged
        }
        #expect(try f.book.note(tagged).version == 3, "nothing was appended")
        try f.book.tag(tagged, with: ["z"])
        let untagged = try f.book.undo(tagged)
        #expect(untagged.fromVersion == 3 && untagged.note.tags.count == 2)
    }

    @Test("undo puts back archived and trashed state too")
    func undoFlags() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "A").id
        try f.book.archive(id)
        let unarchived = try f.book.undo(id)
        #expect(!unarchived.note.archived && unarchived.appended)
        try f.book.trash(id)
        try f.book.edit(id, title: "B")  // edited while in the trash
        let back = try f.book.undo(id)
        #expect(back.note.title == "A" && back.note.trashed)
    }

    @Test("undo of a note that has only its creation is an error that says so")
    func undoCreation() throws {
        let f = try HistoryFixture()
        let id = try f.book.add(title: "Only").id
        #expect {
            try f.book.undo(id)
        } throws: { error in
            guard case NotesError.validation(.nothingToUndo(let which)) = error else { return false }
            return which == id && "\(error)".contains("nothing to undo")
        }
    }
}

@Suite("History: audit log and as-of")
struct AuditLogTests {
    /// A: created +0 (category Home created first), B: created +1 by bob, A edited +2, Home renamed +3.
    static func world() throws -> (HistoryFixture, Identifier, Identifier) {
        let f = try HistoryFixture()
        let a = try f.book.add(title: "A", body: "x\n", category: "Home").id
        f.advance()
        try f.act(as: "bob")
        let b = try f.book.add(title: "B").id
        f.advance()
        try f.act(as: "ana@laptop")
        try f.book.edit(a, title: "A2")
        f.advance()
        try f.book.renameCategory("Home", to: "House")
        return (f, a, b)
    }

    @Test("log is newest first with summaries, category events included; reverse, limit, filters")
    func log() throws {
        let (f, a, b) = try Self.world()
        let all = try f.book.log(LogQuery())
        #expect(all.map(\.position) == [5, 4, 3, 2, 1])
        #expect(
            all.map(\.summary) == [
                "category renamed \"Home\" -> \"House\"", "title \"A\" -> \"A2\"", "created \"B\"",
                "created \"A\" in Home",
                "created category \"Home\"",
            ])
        var q = LogQuery()
        q.oldestFirst = true
        q.limit = 2
        #expect(try f.book.log(q).map(\.position) == [1, 2])
        q = LogQuery()
        q.actor = "bob"
        #expect(try f.book.log(q).map(\.position) == [3])
        q = LogQuery()
        q.note = a
        #expect(try f.book.log(q).map(\.version) == [2, 1])
        q.note = b
        #expect(try f.book.log(q).map(\.version) == [1])
        q = LogQuery()
        q.type = "noteretitled"
        #expect(try f.book.log(q).map(\.position) == [4])
        q.type = "Nonsense"
        #expect(throws: NotesError.self) { try f.book.log(q) }
    }

    @Test("log --since and --until bound the window, in both orders")
    func window() throws {
        let (f, _, _) = try Self.world()
        var q = LogQuery()
        q.since = HistoryFixture.at(hours: 1)
        q.until = HistoryFixture.at(hours: 2) + 1
        #expect(try f.book.log(q).map(\.position) == [4, 3])
        q.oldestFirst = true
        #expect(try f.book.log(q).map(\.position) == [3, 4])
        q.until = HistoryFixture.start - 1
        #expect(try f.book.log(q).isEmpty)
        q.oldestFirst = false
        #expect(try f.book.log(q).isEmpty)
    }

    @Test("log --actor names are compared whole, in any case, non-ASCII letters too")
    func actorCase() {
        #expect(Notebook.sameIgnoringCase("Doug Gregor", "doug gregor"))
        #expect(Notebook.sameIgnoringCase("JÜRGEN@host", "jürgen@host"))
        #expect(Notebook.sameIgnoringCase("", ""))
        #expect(!Notebook.sameIgnoringCase("bob", "bo"))
        #expect(!Notebook.sameIgnoringCase("bo", "bob"))
        #expect(!Notebook.sameIgnoringCase("b[b", "b{b"), "only letters are folded")
    }

    @Test("as-of before and after a category rename: the category has the name it had then")
    func asOfAcrossRename() throws {
        let (f, a, _) = try Self.world()
        let before = try f.book.state(asOf: HistoryFixture.at(hours: 2))
        #expect(before.category(named: "Home") != nil && before.category(named: "House") == nil)
        #expect(before.notes[a]?.title == "A2")
        let after = try f.book.state(asOf: HistoryFixture.at(hours: 3))
        #expect(after.category(named: "House") != nil && after.category(named: "Home") == nil)
        let home = try #require(before.category(named: "Home"))
        var q = ListQuery()
        q.scope = .category(home.id)
        #expect(before.list(q).map(\.title) == ["A2"])
        let early = try f.book.state(asOf: HistoryFixture.at(hours: 0))
        #expect(early.notes.count == 1 && early.events == 2)
        #expect(try f.book.state(asOf: HistoryFixture.start - 1).notes.isEmpty)
    }

    @Test(
        "search as of an instant: the notes as they were, near spellings too; a scratch index that leaves nothing, or none"
    )
    func searchAsOf() throws {
        let f = try HistoryFixture()
        let a = try f.book.add(title: "Groceries", body: "milk and bread")
        try f.book.add(title: "Recipes", body: "bread with butter, receive the flour")
        let then = f.advance()
        f.advance()
        try f.book.edit(a.id, body: "eggs and cheese")
        try f.book.trash(a.id)
        let scratch = TemporaryDirectory("notes-scratch-test")
        let folder = scratch.path
        let state = try f.book.state(asOf: then)
        let language = f.book.projection.searchLanguage
        func titles(_ q: String, in folder: String, exact: Bool = false) throws -> [String] {
            let found = Notebook.search(
                try SearchQuery.parse(q), filter: SearchFilter(), limit: 10, exact: exact, in: state,
                language: language, temporaryFolder: folder)
            return found.results.map(\.result.note.title)
        }
        // Through a scratch index in `folder`, and in memory where none can be made: the same.
        for place in [folder, folder + "/missing"] {
            #expect(try Set(titles("bread", in: place)) == ["Groceries", "Recipes"])
            #expect(try titles("milk", in: place) == ["Groceries"])
            #expect(try titles("cheese", in: place).isEmpty, "not written yet")
            #expect(try titles("recieve", in: place) == ["Recipes"], "a near spelling")
            #expect(try titles("recieve", in: place, exact: true).isEmpty)
            let plain = Notebook.search(
                try SearchQuery.parse("milk"), filter: SearchFilter(), limit: 10, in: state, language: language,
                temporaryFolder: place)
            #expect(plain.map(\.note.title) == ["Groceries"] && plain.map(\.note.body) == ["milk and bread"])
        }
        // Nothing is left in the folder (the index's files go as soon as it is open).
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        // Now the note is in the trash, with other words.
        #expect(try f.book.search(try SearchQuery.parse("milk"), asOf: f.now).isEmpty)
    }
}

@Suite("History: legacy events")
struct LegacyHistoryTests {
    static func string(_ s: String, _ w: inout ByteWriter) { w.write(string: s) }

    @Test("a legacy NoteUpdated is one history line with the changes of both parts; no-op parts add nothing")
    func noteUpdated() throws {
        let f = try HistoryFixture()
        let id = Identifier(high: 42, low: 42)
        let stream = Note.stream(id)
        func event(_ n: UInt64, _ type: String, _ payload: (inout ByteWriter) -> Void) -> NewEvent {
            var w = ByteWriter()
            payload(&w)
            return NewEvent(
                id: Identifier(high: 99, low: n), type: type, schemaVersion: 1, payload: w.bytes,
                metadata: EventMetadata(actor: "old-app"))
        }
        let created = event(1, "NoteCreated") {
            $0.write(string: "Old")
            $0.write(string: "a\nb\n")
            $0.write(bool: false)
        }
        let bodyOnly = event(2, "NoteUpdated") {
            $0.write(string: "Old")
            $0.write(string: "a\nc\n")
        }
        let both = event(3, "NoteUpdated") {
            $0.write(string: "New")
            $0.write(string: "a\nc\nd\n")
        }
        let nothing = event(4, "NoteUpdated") {
            $0.write(string: "New")
            $0.write(string: "a\nc\nd\n")
        }
        let pin = event(5, "NotePinToggled") { $0.write(bool: true) }
        try f.book.store.append([created, bodyOnly, both, nothing, pin], to: stream, expecting: .noStream)

        let history = try f.book.history(of: id)
        #expect(history.map(\.revision.version) == [1, 2, 3, 4, 5])
        #expect(
            history.map(\.revision.storedType) == [
                "NoteCreated", "NoteUpdated", "NoteUpdated", "NoteUpdated", "NotePinToggled",
            ])
        #expect(
            history.map(\.summary) == [
                "created \"Old\"", "body +1 -1 lines", "title \"Old\" -> \"New\", body +1 -0 lines", "no change",
                "pinned",
            ])
        #expect(history[2].revision.events.count == 2)
        #expect(try f.book.note(id, atVersion: 2).body == "a\nc\n")
        let log = try f.book.log(LogQuery())
        #expect(log.map(\.summary) == history.reversed().map(\.summary))
        var q = LogQuery()
        q.type = "NoteBodyEdited"  // lifted type matches the stored NoteUpdated
        #expect(try f.book.log(q).map(\.version) == [4, 3, 2])
        q.type = "NoteUpdated"
        #expect(try f.book.log(q).count == 3)
        #expect(try f.book.undo(id).note.pinned == false)
    }
}

@Suite("History: replay for --as-of")
struct ReplayEquivalenceTests {
    /// The general per-event fold (``NotebookState/apply(_:store:)``), the reference both fast
    /// replays must equal.
    static func reference(_ store: EventStore, upTo position: UInt64) throws -> NotebookState {
        var state = NotebookState()
        try store.read { txn in
            try store.forEachEvent(from: 1, in: txn) { view in
                guard view.position <= position else { return false }
                try state.apply(view, store: store)
                return true
            }
        }
        return state
    }

    @Test("forward (on 1, 2 and 3 scans) and newest-first replays equal the per-event fold at every cut")
    func replaysAgree() throws {
        var template = Array("/tmp/notes-replay-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
        let path = String(cString: try #require(dir))
        defer {
            unlink(path + "/data.mdb")
            unlink(path + "/lock.mdb")
            rmdir(path)
        }
        var config = EventStore.Configuration(registry: NotesSchema.registry)
        config.environment.noSync = true
        let store = try EventStore(path: path, configuration: config)
        var workload = EventWorkload(
            .init(notes: 150, events: 4_000, categories: 6, legacyShare: 0.25, hotNoteVersions: 200, seed: 7))
        while case let batch = workload.next(batch: 1_000), !batch.isEmpty {
            try store.write { session in
                for e in batch { try session.append([e.event], to: e.stream) }
            }
        }
        let catalogue = try store.catalogue()
        #expect(catalogue.keys.contains { $0.type == "NoteUpdated" }, "the workload has legacy events")
        #expect(catalogue.keys.contains { $0.type == "NoteRestored" || $0.type == "CategoryRenamed" })
        for cut in [0, 1, 37, 1_000, 2_500, 3_999, 4_000, UInt64.max] as [UInt64] {
            let expected = try Self.reference(store, upTo: cut)
            for (name, state) in [
                ("forward", try NotebookState.replay(store: store, upTo: cut)),
                ("forward on 2 scans", try NotebookState.replay(store: store, upTo: cut, shards: 2)),
                ("forward on 3 scans", try NotebookState.replay(store: store, upTo: cut, shards: 3)),
                (
                    "forward releasing pages",
                    try NotebookState.replay(store: store, upTo: cut, shards: 2, releasingPages: true)
                ),
                ("newest first", try NotebookState.replayNewestFirst(store: store, upTo: cut)),
            ] {
                #expect(state.events == expected.events, "\(name) at \(cut)")
                #expect(state.categories == expected.categories, "\(name) at \(cut)")
                #expect(state.notes.count == expected.notes.count, "\(name) at \(cut)")
                let wrong = expected.notes.values.filter { state.notes[$0.id] != $0 }.count
                #expect(wrong == 0, "\(name) at \(cut): \(wrong) notes differ")
            }
        }
    }

    /// A store of `notes` notes with three events each (no projections), made with fixed ids.
    static func smallStore(_ tmp: TemporaryDirectory, notes: Int) throws -> EventStore {
        var config = EventStore.Configuration(registry: NotesSchema.registry)
        config.environment.noSync = true
        let store = try EventStore(path: tmp.path, configuration: config)
        let meta = EventMetadata(actor: "ana@laptop")
        for n in 1...notes {
            let id = Identifier(high: 0x4000, low: UInt64(n))
            var events = [
                NoteEvent.created(title: "note \(n)", body: "first body", pinned: false, category: nil),
                .bodyEdited(body: "second body of \(n)"),
                .retitled(title: "title \(n)"),
            ]
            if n % 2 == 0 { events.append(.pinned) }
            try store.append(
                events.enumerated().map { i, e in
                    e.newEvent(id: Identifier(high: 0x9000, low: UInt64(n * 10 + i)), metadata: meta)
                }, to: Note.stream(id))
        }
        return store
    }

    @Test("a replay split between scans reports a damaged event at its position, whatever scan owns it")
    func splitReplayFindsDamage() throws {
        let tmp = TemporaryDirectory()
        let store = try Self.smallStore(tmp, notes: 40)
        let whole = try NotebookState.replay(store: store, upTo: .max, shards: 1)
        #expect(try NotebookState.replay(store: store, upTo: .max, shards: 4).notes == whole.notes)
        let events = try store.environment.openDatabase("events")
        for position: UInt64 in [5, 6, 7, 8, 77] {
            let key = withUnsafeBytes(of: position.bigEndian) { Array($0) }
            let original = try #require(try store.environment.read { txn in try txn.get(events, key: key) })
            var bytes = original
            bytes[bytes.count - 10] ^= 0x04
            try store.environment.write { txn in try txn.put(events, key: key, value: bytes) }
            for shards in [1, 2, 3] {
                let error = #expect(throws: StoreError.self) {
                    try NotebookState.replay(store: store, upTo: .max, shards: shards)
                }
                guard case .damaged(let at, _) = error else {
                    Issue.record("\(shards) scans: got \(String(describing: error))")
                    continue
                }
                #expect(at == position, "\(shards) scans")
            }
            try store.environment.write { txn in try txn.put(events, key: key, value: original) }
        }
        #expect(try NotebookState.replay(store: store, upTo: .max, shards: 2).notes == whole.notes)
    }

    @Test("a note event that cannot be folded is reported before a damaged envelope a few events later")
    func foldFailureBeforeDamage() throws {
        let tmp = TemporaryDirectory()
        let store = try Self.smallStore(tmp, notes: 3)
        let meta = EventMetadata(actor: "ana@laptop")
        // A retitle of a note that was never created, then three edits of a real note, the
        // last of which is damaged: the replay reads ahead of its folds, and must still report
        // the earlier event.
        let orphan = try store.append(
            [NoteEvent.retitled(title: "orphan").newEvent(id: Identifier(high: 0x9200, low: 1), metadata: meta)],
            to: Note.stream(Identifier(high: 0x4000, low: 99)))
        for k: UInt64 in 2...4 {
            try store.append(
                [
                    NoteEvent.bodyEdited(body: "edit \(k)").newEvent(
                        id: Identifier(high: 0x9200, low: k), metadata: meta)
                ],
                to: Note.stream(Identifier(high: 0x4000, low: 1)))
        }
        let head = try store.read { txn in try store.headPosition(in: txn) }
        let events = try store.environment.openDatabase("events")
        let key = withUnsafeBytes(of: head.bigEndian) { Array($0) }
        var bytes = try #require(try store.environment.read { txn in try txn.get(events, key: key) })
        bytes[bytes.count - 10] ^= 0x04
        try store.environment.write { txn in try txn.put(events, key: key, value: bytes) }
        for shards in [1, 2, 3] {
            let error = #expect(throws: StoreError.self) {
                try NotebookState.replay(store: store, upTo: .max, shards: shards)
            }
            guard case .damaged(let at, let detail) = error else {
                Issue.record("\(shards) scans: got \(String(describing: error))")
                continue
            }
            #expect(at == orphan.positions.first, "\(shards) scans")
            #expect(detail.contains("does not begin with NoteCreated"), "\(shards) scans")
        }
    }

    @Test("an unreadable payload in one scan's share is reported before a later failure in another's")
    func unpositionedFailureFirst() throws {
        let meta = EventMetadata(actor: "ana@laptop")
        // Whatever scan a note falls to: six notes with an unreadable body edit at position 2,
        // each followed by edits of eight notes never created, so in some of these stores the
        // edit and a later orphan are in different scans.
        for variant: UInt64 in 1...6 {
            let tmp = TemporaryDirectory()
            var config = EventStore.Configuration(registry: NotesSchema.registry)
            config.environment.noSync = true
            let store = try EventStore(path: tmp.path, configuration: config)
            let stream = Note.stream(Identifier(high: 0x5000, low: variant))
            try store.append(
                [
                    NoteEvent.created(title: "a", body: "a", pinned: false, category: nil).newEvent(
                        id: Identifier(high: 0x9300, low: 1), metadata: meta),
                    NewEvent(
                        id: Identifier(high: 0x9300, low: 2), type: "NoteBodyEdited", schemaVersion: 1,
                        payload: [3, 0x61, 0xC3, 0x28], metadata: meta),
                ], to: stream)
            for orphan: UInt64 in 1...8 {
                try store.append(
                    [NoteEvent.pinned.newEvent(id: Identifier(high: 0x9400, low: orphan), metadata: meta)],
                    to: Note.stream(Identifier(high: 0x6000, low: variant * 100 + orphan)))
            }
            for shards in [1, 2, 3] {
                #expect(throws: DecodingError.self, "store \(variant), \(shards) scans") {
                    try NotebookState.replay(store: store, upTo: .max, shards: shards)
                }
            }
        }
    }

    @Test("invalid UTF-8 in a superseded body is refused although the body is never shown")
    func supersededInvalidText() throws {
        let tmp = TemporaryDirectory()
        let store = try Self.smallStore(tmp, notes: 3)
        let meta = EventMetadata(actor: "ana@laptop")
        let stream = Note.stream(Identifier(high: 0x4000, low: 2))
        // A body edit whose text is not UTF-8, with a valid checksum, then a valid edit over it.
        let bad = NewEvent(
            id: Identifier(high: 0x9100, low: 1), type: "NoteBodyEdited", schemaVersion: 1,
            payload: [3, 0x61, 0xC3, 0x28], metadata: meta)
        try store.append([bad], to: stream)
        try store.append([NoteEvent.bodyEdited(body: "fine").newEvent(id: .random(), metadata: meta)], to: stream)
        for shards in [1, 2] {
            #expect(throws: DecodingError.self, "\(shards) scans") {
                try NotebookState.replay(store: store, upTo: .max, shards: shards)
            }
        }
    }
}
