import Basics
import FoundationEssentials
import Notes
import NotesInterchange
import SearchEngine
import TestSupport
import Testing

/// A Markdown folder imported on two devices before they synced: one note per file, not two.
extension NotebookSyncTests {
    /// Writes `files` (path in the folder -> text) under `root`.
    static func writeVault(_ root: String, _ files: [String: String]) throws {
        for (path, text) in files {
            let full = root + "/" + path
            let folder = String(full[..<full.lastIndex(of: "/")!])
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: full, contents: Data(text.utf8)))
        }
    }

    static let vaultFiles = [
        "plan.md": "# Plan\n\nShip it.\n",
        "work/meeting.md": "---\ntags: [team]\n---\n# Meeting\n\nAgenda.\n",
        "work/notes.md": "Loose notes #idea\n",
        "copy-one.md": "Same text\n",
        "copy-two.md": "Same text\n",
        "edited.md": "# Edited\n\nBefore.\n",
        "empty.md": "",
    ]

    @Test("a folder imported on two devices before either synced: each file's note once, the other device's kept")
    func folderImportedOnBoth() throws {
        let a = try Device(stem: 1, notebook: 197)
        let b = try Device(stem: 2, notebook: 197)
        let places = TemporaryDirectory("imported-twice")
        let (onA, onB) = (places.child("laptop/vault"), places.child("desk/Notes"))
        try Self.writeVault(onA, Self.vaultFiles)
        try Self.writeVault(onB, Self.vaultFiles)
        #expect(try a.book.importMarkdown(from: onA).created == 7)
        #expect(try b.book.importMarkdown(from: onB).created == 7)
        let own = try b.book.add(title: "Only on b", body: "mine")
        // Changed on b after its import: no longer as the import left it, kept beside a's.
        let edited = try #require(try b.book.list(everything).first { $0.title == "Edited" })
        try b.book.edit(edited.id, body: "# Edited\n\nAfter, on b.\n")
        let bImported = try b.book.list(everything).filter { $0.id != own.id && $0.id != edited.id }

        try a.sync(join: true)
        let report = try b.sync(join: true)
        #expect(report.importsJoined == 5, "every file but the empty one and the one edited on b")
        try converge([a, b])
        for d in [a, b] {
            // Each file once, but the one b edited after its import (kept beside a's) and the empty one.
            let titles = try d.book.list(everything).map(\.title).sorted()
            #expect(
                titles == [
                    "Edited", "Edited", "Meeting", "Only on b", "Plan", "copy-one", "copy-two", "empty", "empty",
                    "notes",
                ], "\(titles)")
            #expect(try d.book.allTags().map(\.name).sorted() == ["idea", "team"])
            #expect(try d.book.categories().map(\.name) == ["work"])
            #expect(try d.book.category(named: "work").count == 2)
        }
        // b's copies are gone from its store and from the log; a's stand, as a imported them.
        let dropped = bImported.filter { $0.title != "empty" }
        #expect(dropped.count == 5)
        for n in dropped {
            #expect(throws: NotesError.self) { try b.book.note(n.id) }
            #expect(try b.log().allSatisfy { $0.stream != n.stream })
        }
        let kept = Set(dropped.map(\.title))
        #expect(kept == ["Plan", "Meeting", "notes", "copy-one", "copy-two"], "two files of one text are two notes")
        for n in try a.book.list(everything) where kept.contains(n.title) {
            #expect(n.properties["vault"] == onA, "a's notes, as a imported them: \(n.title)")
        }
        let ship = try b.book.search(SearchQuery.parse("ship"), filter: SearchFilter(statuses: [.active]))
        #expect(ship.count == 1, "one note in the search index")

        // b imports its folder again (the laptop's folder is not on the desk): nothing is new.
        try FileManager.default.removeItem(atPath: onA)
        let again = try b.book.importMarkdown(from: onB)
        #expect(again.created == 0, "\(again)")
        #expect(again.movedFrom == [onA])
        try converge([a, b])
        #expect(try a.sync().importsJoined == 0)
    }

    @Test("an import made on this device only, and one whose file differs from the other device's, are both kept")
    func importsThatDiffer() throws {
        let a = try Device(stem: 1, notebook: 198)
        let b = try Device(stem: 2, notebook: 198)
        let places = TemporaryDirectory("imported-differently")
        try Self.writeVault(places.child("a"), ["plan.md": "# Plan\n\nVersion of a.\n", "a-only.md": "A\n"])
        try Self.writeVault(places.child("b"), ["plan.md": "# Plan\n\nVersion of b.\n", "b-only.md": "B\n"])
        try a.book.importMarkdown(from: places.child("a"))
        try b.book.importMarkdown(from: places.child("b"))
        try a.sync(join: true)
        #expect(try b.sync(join: true).importsJoined == 0)
        try converge([a, b])
        #expect(try a.book.list(everything).map(\.title).sorted() == ["Plan", "Plan", "a-only", "b-only"])
    }
}

extension NotebookSyncTests {
    @Test("a folder of 600 files imported on two devices: past the size where a pull writes the projections in bulk")
    func largeFolderImportedOnBoth() throws {
        let a = try Device(stem: 1, notebook: 199)
        let b = try Device(stem: 2, notebook: 199)
        let places = TemporaryDirectory("imported-twice-large")
        var files: [String: String] = [:]
        for i in 0..<600 { files["folder-\(i % 7)/note-\(i).md"] = "# Note \(i)\n\nText \(i) #t\(i % 5)\n" }
        try Self.writeVault(places.child("a"), files)
        try Self.writeVault(places.child("b"), files)
        try a.book.importMarkdown(from: places.child("a"))
        try b.book.importMarkdown(from: places.child("b"))
        let moved = try b.book.syncState().head * 2
        #expect(!Notebook.reprojects(moved: Int(moved), of: moved / 2), "the pull's projections are written in bulk")
        try a.sync(join: true)
        #expect(try b.sync(join: true).importsJoined == 600)
        try converge([a, b])
        #expect(try b.book.list(everything).count == 600)
        #expect(try b.book.categories().map(\.count) == [86, 86, 86, 86, 86, 85, 85])
        #expect(try b.book.allTags().map(\.count) == [120, 120, 120, 120, 120])
    }

    @Test("a folder imported on two devices whose pull comes in two chunks that split a note's events: each note once")
    func importSplitAcrossChunks() throws {
        let a = try Device(stem: 1, notebook: 203)
        let b = try Device(stem: 2, notebook: 203)
        let places = TemporaryDirectory("imported-twice-chunks")
        var files: [String: String] = [:]
        // Five events a note (created, aliases, digest, path, folder), and a tag's two before them.
        for i in 0..<4_400 { files["note-\(i).md"] = "---\naliases: [n\(i)]\n---\n# Note \(i)\n\nText \(i)\n" }
        files["note-0.md"]! += "#first\n"
        try Self.writeVault(places.child("a"), files)
        try Self.writeVault(places.child("b"), files)
        try a.book.importMarkdown(from: places.child("a"))
        try b.book.importMarkdown(from: places.child("b"))
        // a's events are the remote's first: b pulls them in chunks of `syncChunk`, and the
        // note at the first chunk's end has events in the second (the path of its file among them).
        let cut = UInt64(Notebook.syncChunk)
        let (last, next) = try a.book.store.read { txn throws in
            (try a.book.store.event(at: cut, in: txn)?.stream, try a.book.store.event(at: cut + 1, in: txn)?.stream)
        }
        #expect(last != nil && last == next, "the chunks split a note's events")
        try a.sync(join: true)
        #expect(try b.sync(join: true).importsJoined == 4_400)
        try converge([a, b])
        #expect(try a.book.list(everything).count == 4_400)
    }

    @Test("this device's own notes pulled back in an earlier chunk are never taken for another device's import")
    func ownNotesPulledBackAcrossChunks() throws {
        let a = try Device(stem: 1, notebook: 204, maxBodyBytes: 20 << 20)
        let places = TemporaryDirectory("imported-own-chunks")
        var files: [String: String] = [:]
        for i in 0..<4_400 { files["note-\(i).md"] = "---\naliases: [n\(i)]\n---\n# Note \(i)\n\nText \(i)\n" }
        try Self.writeVault(places.child("one"), files)
        // A second folder holding one file of the first, byte for byte, at the same path.
        try Self.writeVault(
            places.child("two"), ["note-0.md": files["note-0.md"]!, "other.md": "# Other\n\nonly in two\n"])
        try a.book.importMarkdown(from: places.child("one"))
        // Too large for the remote: the sync pushes what is before it and stops, so the next
        // one confirms those 22,000 events by pulling them back, in two chunks.
        try a.book.add(title: "Large", body: String(repeating: "x", count: 17 << 20))
        #expect(try a.book.importMarkdown(from: places.child("two")).created == 2)
        func inTwo() throws -> Int {
            try a.book.list(everything).filter { $0.properties["vault"]?.hasSuffix("/two") == true }.count
        }
        #expect(throws: (any Error).self) { try a.sync(join: true) }
        #expect(throws: (any Error).self) { try a.sync() }
        #expect(try inTwo() == 2, "the second folder's note-0 is this device's own, and stays")
    }
}

extension NotebookSyncTests {
    @Test("a copy of a synced folder imported later is kept, though the other device changed the notes of its files")
    func laterCopyKept() throws {
        let a = try Device(stem: 1, notebook: 200)
        let b = try Device(stem: 2, notebook: 200)
        let places = TemporaryDirectory("imported-copy")
        let files = ["plan.md": "# Plan\n\nShip it.\n", "todo.md": "# Todo\n\nMilk.\n", "x.md": "# X\n\nx\n"]
        try Self.writeVault(places.child("v1"), files)
        try Self.writeVault(places.child("v2"), files)
        #expect(try b.book.importMarkdown(from: places.child("v1")).created == 3)
        try b.sync(join: true)
        try a.sync()
        // v1 still in its place: v2 is a folder of its own, imported after the devices synced.
        #expect(try b.book.importMarkdown(from: places.child("v2")).created == 3)
        let plan = try #require(try a.book.list(everything).first { $0.title == "Plan" })
        try a.book.pin(plan.id)
        try a.sync()
        #expect(try b.sync().importsJoined == 0, "a's pin created no note: b's copy is not a duplicate of it")
        try converge([a, b])
        #expect(try a.book.list(everything).filter { $0.title == "Plan" }.count == 2)
        #expect(try b.book.importMarkdown(from: places.child("v2")).created == 0)
    }

    @Test("the category and tag a dropped import made for its notes alone go with them (renamed on the other device)")
    func droppedImportsNames() throws {
        let a = try Device(stem: 1, notebook: 201)
        let b = try Device(stem: 2, notebook: 201)
        let places = TemporaryDirectory("imported-names")
        let files = ["work/meeting.md": "# Meeting\n\nAgenda #team\n"]
        try Self.writeVault(places.child("a"), files)
        try Self.writeVault(places.child("b"), files)
        try a.book.importMarkdown(from: places.child("a"))
        try a.book.renameCategory("work", to: "Office")
        try a.book.renameTag("team", to: "staff")
        try b.book.importMarkdown(from: places.child("b"))
        try a.sync(join: true)
        #expect(try b.sync(join: true).importsJoined == 1)
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.categories().map(\.name) == ["Office"])
            #expect(try d.book.allTags().map(\.name) == ["staff"])
            #expect(try d.book.list(everything).map(\.title) == ["Meeting"])
        }
    }

    @Test("a category the dropped import made that a note kept here names stays")
    func droppedImportsNamesStillNamed() throws {
        let a = try Device(stem: 1, notebook: 202)
        let b = try Device(stem: 2, notebook: 202)
        let places = TemporaryDirectory("imported-names-kept")
        let files = ["work/meeting.md": "# Meeting\n\nAgenda #team\n", "work/b-only.md": "# B only\n\nMine #team\n"]
        try Self.writeVault(places.child("a"), ["work/meeting.md": files["work/meeting.md"]!])
        try Self.writeVault(places.child("b"), files)
        try a.book.importMarkdown(from: places.child("a"))
        try a.book.renameCategory("work", to: "Office")
        try b.book.importMarkdown(from: places.child("b"))
        try a.sync(join: true)
        #expect(try b.sync(join: true).importsJoined == 1)
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.categories().map(\.name).sorted() == ["Office", "work"])
            #expect(try d.book.category(named: "work").count == 1)
            #expect(try d.book.allTags().map(\.name) == ["team"])
            #expect(try d.book.list(everything).map(\.title).sorted() == ["B only", "Meeting"])
        }
    }
}
