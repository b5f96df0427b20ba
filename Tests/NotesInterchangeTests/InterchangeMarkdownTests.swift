import Basics
import EventStore
import Foundation
import Notes
import TestSupport
import Testing

@testable import NotesInterchange

@Suite("Interchange: Markdown folders")
struct InterchangeMarkdownTests {
    private func files(_ dir: String) throws -> [String] {
        let found = FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String } ?? []
        return found.filter { $0.hasSuffix(".md") }.sorted()
    }

    private func read(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(filePath: path)), as: UTF8.self)
    }

    private func write(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(filePath: path))
    }

    /// Notes whose fields the Markdown form keeps (id, title, body, flags, category name).
    private func view(_ s: InterchangeScratch) throws -> [[String]] {
        try s.allNotes().map { n in
            [
                n.id.uuidString, n.title, n.body, "\(n.pinned)", "\(n.archived)", "\(n.trashed)",
                try s.book.categoryName(n.category) ?? "-",
            ]
        }
    }

    @Test("a file removed between the listing and the reading is left out, not a refusal; a prune keeps its note")
    func fileRemovedWhileRead() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        try write(v + "/a.md", "# a\n\nalpha\n")
        try write(v + "/b.md", "# b\n\nbeta\n")
        _ = try s.book.importMarkdown(from: v)
        try write(v + "/a.md", "# a\n\nalpha, edited\n")
        try write(v + "/c.md", "# c\n\ngamma\n")
        // An editor or a sync client saving b.md (removed, then written again) while it is read.
        let summary = try s.book.importMarkdown(
            from: v, skipInvalid: false, prune: true, afterListing: { unlink(v + "/b.md") })
        #expect(summary.created == 1 && summary.updated == 1 && summary.pruned == 0, "\(summary)")
        #expect(summary.skipped.map(\.file) == ["b.md"] && summary.skipped.allSatisfy(\.vanished), "\(summary)")
        #expect(try s.allNotes().filter { !$0.trashed }.map(\.title).sorted() == ["a", "b", "c"])
        // A folder removed after its parent was listed: as if it were not there (before
        // 2026-12-07 the import stopped, "cannot list vault/gone: No such file or directory").
        try write(v + "/gone/d.md", "# d\n")
        let again = try s.book.importMarkdown(
            from: v, skipInvalid: false, prune: false,
            beforeFolder: { if $0 == "gone" { try? FileManager.default.removeItem(atPath: v + "/gone") } },
            afterListing: nil)
        #expect(again.created == 0 && again.unchanged == 2 && again.skipped.isEmpty, "\(again)")
    }

    @Test("a file over the size limit is read whole (hashed) only when a note could be that file unchanged")
    func oversizedFileHashedOnlyWhenANoteCouldMatch() throws {
        // A new user's trial: before 2026-12-07 every file over the limit was hashed whole on
        // every import, for a rule only a note recorded from its path (or named by its `id`) can
        // meet: a 10 GB file took 41 s to be refused by a first import into an empty store.
        let s = try InterchangeScratch(maxBodyBytes: 1000)
        let v = s.path + "/vault"
        let big = "# Big\n\n" + String(repeating: "word ", count: 20_000)
        try write(v + "/Big.md", big)
        try write(v + "/a.md", "# a\n")
        var hashed: [String] = []
        func importing() throws -> MarkdownImportSummary {
            try s.book.importMarkdown(
                from: v, skipInvalid: true, prune: false, afterListing: nil, digesting: { hashed.append($0) })
        }
        // A first import into an empty store: no note can be Big.md's.
        let first = try importing()
        #expect(first.created == 1 && first.skipped.map(\.file) == ["Big.md"], "\(first)")
        #expect(hashed.isEmpty)
        // Nor in a store whose notes are of other paths, for a file naming an id no note has.
        try write(v + "/Other.md", "---\nid: 0B6A1C3E-0000-4000-8000-000000000001\n---\n" + big)
        let second = try importing()
        #expect(second.skipped.map(\.file).sorted() == ["Big.md", "Other.md"], "\(second)")
        #expect(hashed.isEmpty)
        // A note imported from the path: the file is hashed, found changed, and refused.
        try write(v + "/Grown.md", "# Grown\n")
        #expect(try importing().created == 1)
        try write(v + "/Grown.md", "# Grown\n\n" + big)
        let grown = try importing()
        #expect(hashed == ["Grown.md"])
        #expect(grown.skipped.map(\.file).sorted() == ["Big.md", "Grown.md", "Other.md"], "\(grown)")
        #expect(try s.allNotes().first { $0.title == "Grown" }?.body == "# Grown\n")
    }

    @Test("a folder inside that cannot be listed is refused as an unreadable file is; skipped, its notes stay")
    func unlistableFolder() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        try write(v + "/a.md", "# a\n")
        try write(v + "/locked/x.md", "# x\n")
        try write(v + "/locked/y.md", "# y\n")
        #expect(try s.book.importMarkdown(from: v).created == 3)
        try write(v + "/b.md", "# b\n")
        // A folder the user may not list (`lost+found` at the top of a drive, another user's
        // folder): mode 000, or for root, whom modes do not stop, a link looping on itself put in
        // its place once the folder above has been listed (ELOOP instead of EACCES).
        let aside = s.path + "/aside"
        let lock: (String) -> Void = { folder in
            guard folder == "locked" else { return }
            if getuid() != 0 {
                chmod(v + "/locked", 0)
            } else {
                rename(v + "/locked", aside)
                symlink("locked", v + "/locked")
            }
        }
        let unlock = {
            if getuid() != 0 {
                chmod(v + "/locked", 0o755)
            } else {
                unlink(v + "/locked")
                rename(aside, v + "/locked")
            }
        }
        let before = try s.head
        do {
            _ = try s.book.importMarkdown(
                from: v, skipInvalid: false, prune: true, beforeFolder: lock, afterListing: nil)
            Issue.record("an import that could not list a folder of the vault went on")
        } catch let NotesError.validation(problem) {
            #expect("\(problem)".hasPrefix("locked: the folder cannot be read: "), "\(problem)")
        } catch {
            Issue.record("not a refusal naming the folder: \(error)")
        }
        unlock()
        #expect(try s.head == before, "nothing imported")
        // Skipped, the folder's notes are not taken for deleted: a prune leaves them.
        let summary = try s.book.importMarkdown(
            from: v, skipInvalid: true, prune: true, beforeFolder: lock, afterListing: nil)
        unlock()
        #expect(summary.created == 1 && summary.pruned == 0 && summary.missingFiles == 0, "\(summary)")
        #expect(summary.skipped.map(\.file) == ["locked"], "\(summary)")
        #expect(try s.allNotes().filter { !$0.trashed }.map(\.title).sorted() == ["a", "b", "x", "y"])
    }

    @Test("export-markdown then import-markdown into an empty store gives the same notes")
    func roundTrip() throws {
        let s = try InterchangeScratch()
        let a = try s.book.add(title: "Groceries \"Sat\"", body: "- milk\r\n- eggs", category: "Home", pinned: true)
        let b = try s.book.add(title: "Ünïcödé / plans", body: "", category: "Work/Side")
        let c = try s.book.add(title: "Loose", body: "---\nnot front matter\n---\n")
        try s.book.archive(b.id)
        try s.book.trash(c.id)
        let dir = s.path + "/md"
        let summary = try s.book.exportMarkdown(to: dir)
        #expect(summary == MarkdownExportSummary(files: 3, moved: 0))
        let short = { (id: Identifier) in String(id.hex.prefix(8)) }
        #expect(
            try files(dir)
                == [
                    "Home/groceries-sat-\(short(a.id)).md", "Work-Side/ünïcödé-plans-\(short(b.id)).md",
                    "loose-\(short(c.id)).md",
                ].sorted())
        #expect(
            try read(dir + "/Home/groceries-sat-\(short(a.id)).md") == """
                ---
                id: \(a.id.uuidString)
                title: "Groceries \\"Sat\\""
                category: "Home"
                pinned: true
                archived: false
                trashed: false
                created: 2026-11-29T12:00:02.000000Z
                updated: 2026-11-29T12:00:02.000000Z
                ---
                - milk\r\n- eggs
                """)

        let target = try InterchangeScratch()
        let imported = try target.book.importMarkdown(from: dir)
        #expect(imported == MarkdownImportSummary(created: 3, updated: 0, unchanged: 0))
        #expect(try view(target) == view(s))

        // Importing the same folder again changes nothing.
        let head = try target.head
        #expect(
            try target.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 3))
        #expect(try target.head == head)
    }

    @Test("edited files update their notes; a renamed note moves to its new file on the next export")
    func editAndReexport() throws {
        let s = try InterchangeScratch()
        let a = try s.book.add(title: "Plan", body: "one\n", category: "Work")
        let dir = s.path + "/md"
        try s.book.exportMarkdown(to: dir)
        let path = dir + "/Work/plan-\(a.id.hex.prefix(8)).md"
        var text = try read(path)
        text = text.replacing(#"title: "Plan""#, with: #"title: "Better plan""#)
            .replacing("pinned: false", with: "pinned: true").replacing("one\n", with: "one\ntwo\n")
        try write(path, text)
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 1, unchanged: 0))
        let note = try s.book.note(a.id)
        #expect(note.title == "Better plan" && note.body == "one\ntwo\n" && note.pinned)
        #expect(note.version == 5, "retitled, body edited, pinned, the file's digest: one event each")
        #expect(try s.book.exportMarkdown(to: dir) == MarkdownExportSummary(files: 1, moved: 1))
        #expect(try files(dir) == ["Work/better-plan-\(a.id.hex.prefix(8)).md"])
    }

    @Test("a folder exported before the notes were edited here, read back, undoes none of those edits")
    func olderExportReadBack() throws {
        let s = try InterchangeScratch()
        let dir = s.path + "/md"
        // A note made here, and one imported from the folder the export rewrites.
        let made = try s.book.add(title: "Plan", body: "v1\n", category: "Work", tags: ["team"])
        try write(dir + "/imported.md", "# Imported\n\nv1\n")
        #expect(try s.book.importMarkdown(from: dir).created == 1)
        let imported = try #require(try s.allNotes().first { $0.title == "Imported" })
        #expect(try s.book.exportMarkdown(to: dir).files == 2)
        try s.book.edit(made.id, body: "v2, edited here\n")
        try s.book.edit(imported.id, body: "# Imported\n\nv2, edited here\n")
        try s.book.pin(made.id)
        let again = try s.book.importMarkdown(from: dir)
        #expect(again.olderExports == 2 && again.unchanged == 2 && again.updated == 0, "\(again)")
        #expect(try s.book.note(made.id).body == "v2, edited here\n" && s.book.note(made.id).pinned)
        #expect(try s.book.note(imported.id).body == "# Imported\n\nv2, edited here\n")
        // A file edited by hand is an edit.
        try write(dir + "/imported.md", "# Imported\n\nv3, by hand\n")
        #expect(try s.book.importMarkdown(from: dir).updated == 1)
        #expect(try s.book.note(imported.id).body == "# Imported\n\nv3, by hand\n")
        // The folder exported again, and read back at once: nothing to do.
        try s.book.exportMarkdown(to: dir)
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 2))
    }

    @Test("a restore or undo of an imported note keeps it tied to its file, and a second import leaves it alone")
    func restoreKeepsTheFile() throws {
        let s = try InterchangeScratch()
        let dir = s.path + "/md"
        try write(dir + "/a.md", "---\naliases: [first]\n---\n# A\n\none\n")
        #expect(try s.book.importMarkdown(from: dir).created == 1)
        let id = try #require(try s.allNotes().first).id
        let imported = try s.book.note(id)
        // Version 1 is the creation alone: what the import recorded of the file comes after it.
        #expect(try s.book.restore(id, to: .version(1)).appended)
        var note = try s.book.note(id)
        #expect(note.sourcePath == "a.md" && note.properties["source-digest"] == imported.properties["source-digest"])
        #expect(note.properties["aliases"] == nil, "a property of the note itself is restored")
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 1))
        #expect(try s.allNotes().count == 1)
        // An import of the file edited, undone: the next import of the same file keeps the undo.
        try write(dir + "/a.md", "# A\n\ntwo\n")
        #expect(try s.book.importMarkdown(from: dir).updated == 1)
        #expect(try s.book.undo(id).appended)
        note = try s.book.note(id)
        #expect(note.body == "# A\n\none\n" && note.sourcePath == "a.md")
        #expect(try s.book.importMarkdown(from: dir).unchanged == 1)
        #expect(try s.book.note(id).body == "# A\n\none\n")
        // Undo right after the import that created the note: nothing to undo (as after `add`),
        // and still its file's.
        try write(dir + "/b.md", "# B\n\nbee\n")
        #expect(try s.book.importMarkdown(from: dir).created == 1)
        let b = try #require(try s.allNotes().first { $0.title == "B" }).id
        #expect {
            try s.book.undo(b)
        } throws: { error in
            guard case NotesError.validation(.nothingToUndo(let which)) = error else { return false }
            return which == b
        }
        #expect(try s.book.note(b).sourcePath == "b.md")
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 2))
        // An import that only found the file renamed is no command an undo stops at.
        try s.book.edit(b, body: "oops\n")
        #expect(rename(dir + "/b.md", dir + "/renamed.md") == 0)
        #expect(try s.book.importMarkdown(from: dir).movedFiles == 1)
        #expect(try s.book.note(b).sourcePath == "renamed.md")
        #expect(try s.book.undo(b).appended)
        #expect(try s.book.note(b).body == "# B\n\nbee\n" && s.book.note(b).sourcePath == "renamed.md")
    }

    @Test("a note's own folder and an edited export of it, imported in turn: neither takes the other's edit back")
    func exportedCopyAndOwnFolder() throws {
        let s = try InterchangeScratch()
        let own = s.path + "/own"
        let copy = s.path + "/copy"
        for x in ["a", "b", "c"] { try write(own + "/\(x).md", "# \(x)\n\nhello\n") }
        #expect(try s.book.importMarkdown(from: own).created == 3)
        try s.book.exportMarkdown(to: copy)
        let a = try #require(try s.allNotes().first { $0.title == "a" })
        let exported = try #require(try files(copy).first { $0.hasPrefix("a") })
        try write(copy + "/" + exported, try read(copy + "/" + exported) + "edited in the copy #later\n")
        #expect(try s.book.importMarkdown(from: copy).updated == 1)
        let edited = try s.book.note(a.id)
        #expect(edited.body.hasSuffix("edited in the copy #later\n") && edited.tags.count == 1)
        // The note is still its own folder's file, with that file's digest.
        #expect(edited.sourcePath == "a.md" && edited.properties["source-digest"] == a.properties["source-digest"])
        // Its own folder, unchanged since its import, changes nothing; nor does the copy again.
        #expect(try s.book.importMarkdown(from: own) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 3))
        #expect(try s.book.importMarkdown(from: copy) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 3))
        #expect(try s.book.note(a.id) == edited)
        // An edit here stands against both; a file edited in its own folder is an edit again.
        try s.book.edit(a.id, body: "# a\n\nedited here\n")
        #expect(try s.book.importMarkdown(from: copy).unchanged == 3)
        #expect(try s.book.importMarkdown(from: own).unchanged == 3)
        #expect(try s.book.note(a.id).body == "# a\n\nedited here\n")
        try write(own + "/a.md", "# a\n\nedited in its own folder\n")
        #expect(try s.book.importMarkdown(from: own).updated == 1)
        #expect(try s.book.note(a.id).body == "# a\n\nedited in its own folder\n")
    }

    @Test("a note's folder and a folder around it hold the same file: an edit here stands against both")
    func folderAroundOwnFolder() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/v"
        try write(v + "/sub/a.md", "# A\n\nfile text\n")
        #expect(try s.book.importMarkdown(from: v + "/sub").created == 1)
        let id = try #require(try s.allNotes().first).id
        try s.book.edit(id, body: "store edit\n")
        #expect(try s.book.importMarkdown(from: v).unchanged == 1)
        #expect(try s.book.note(id).body == "store edit\n")
        // The file edited, read through the folder around it: the next import of its own
        // folder finds it unchanged since, and an edit made here since stands.
        try write(v + "/sub/a.md", "# A\n\nedited in the file\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        try s.book.edit(id, body: "store edit again\n")
        #expect(try s.book.importMarkdown(from: v + "/sub").unchanged == 1)
        #expect(try s.book.note(id).body == "store edit again\n")
        #expect(try s.book.note(id).properties["copy-digest"] == nil)
        // An edited export inside the note's folder is a copy all the same (matched by its id,
        // not where the note's file lies): its edit stands when the folder is imported again.
        try s.book.exportMarkdown(to: v + "/sub/copy")
        let exported = try #require(try files(v + "/sub/copy").first)
        try write(v + "/sub/copy/" + exported, try read(v + "/sub/copy/" + exported) + "edited in the copy\n")
        #expect(try s.book.importMarkdown(from: v + "/sub/copy").updated == 1)
        try FileManager.default.removeItem(atPath: v + "/sub/copy")
        #expect(try s.book.importMarkdown(from: v + "/sub").unchanged == 1)
        #expect(try s.book.note(id).body.hasSuffix("edited in the copy\n"))
    }

    @Test("a folder just exported, read back, changes nothing: not even tags of #words a body holds, nor makes them")
    func freshExportReadBack() throws {
        let s = try InterchangeScratch()
        let n = try s.book.add(title: "Meeting", body: "Discussed issue #42b and the #ideas list\n")
        let dir = s.path + "/md"
        try s.book.exportMarkdown(to: dir)
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 1))
        #expect(try s.book.note(n.id).tags.isEmpty && s.book.note(n.id).version == 1)
        // Nor does it make the tags of those words, with no note (before 2026-12-06 it made
        // `ideas` and `42b`, empty, and appended their events: a new user's trial).
        #expect(try s.book.allTags().isEmpty)
        #expect(try s.head == 1)
        // A file edited by hand is read as Obsidian reads it: its #words are tags.
        let path = try #require(try files(dir).first)
        try write(dir + "/" + path, try read(dir + "/" + path) + "more\n")
        #expect(try s.book.importMarkdown(from: dir).updated == 1)
        #expect(try s.tagNames(of: n.id) == ["42b", "ideas"])
    }

    @Test("a tag whose name begins with # comes back from an export as it was")
    func hashTagRoundTrip() throws {
        let s = try InterchangeScratch()
        let n = try s.book.add(title: "Hashy", tags: ["#hash", "plain"])
        let dir = s.path + "/md"
        try s.book.exportMarkdown(to: dir)
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 1))
        #expect(try s.tagNames(of: n.id) == ["#hash", "plain"])
        let fresh = try InterchangeScratch()
        try fresh.book.importMarkdown(from: dir)
        #expect(try fresh.book.allTags().map(\.name).sorted() == ["#hash", "plain"])
    }

    @Test("a tag written in the body in another case or Unicode form comes back from an export with its own name")
    func inlineTagSpellingRoundTrip() throws {
        let s = try InterchangeScratch()
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        let n = try s.book.add(
            title: "Plan", body: "about #work and #\(decomposed) and #same\n", tags: ["Work", composed, "same"])
        let dir = s.path + "/md"
        try s.book.exportMarkdown(to: dir)
        let text = try read(dir + "/" + (try #require(try files(dir).first)))
        // Only a tag the body spells byte for byte is left out of the front matter.
        #expect(
            text.contains("tags: [\"\(composed)\", \"Work\"]") || text.contains("tags: [\"Work\", \"\(composed)\"]"),
            "\(text)")
        #expect(try s.book.importMarkdown(from: dir) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 1))
        #expect(try s.book.note(n.id).version == 4)
        let fresh = try InterchangeScratch()
        try fresh.book.importMarkdown(from: dir)
        let names = try fresh.book.allTags().map(\.name)
        let expected = Set(["Work", composed, "same"].map { Array($0.utf8) })
        #expect(Set(names.map { Array($0.utf8) }) == expected, "\(names)")
    }

    @Test("names holding what YAML reads as a line break or refuses (DEL, C1, U+2028, U+FFFE) come back from an export")
    func yamlSpecialCharactersRoundTrip() throws {
        let s = try InterchangeScratch()
        var ids: [Identifier] = []
        for mark in ["\u{7F}", "\u{85}", "\u{90}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFE}"] {
            ids.append(
                try s.book.add(
                    // A tag name cannot hold DEL.
                    title: "a\(mark)b", body: "x\n", category: "c\(mark)d",
                    tags: [mark == "\u{7F}" ? "tu" : "t\(mark)u"]
                ).id)
            try s.book.setAliases(try #require(ids.last), ["al\(mark)ias"])
        }
        let dir = s.path + "/md"
        try s.book.exportMarkdown(to: dir)
        let fresh = try InterchangeScratch()
        #expect(try fresh.book.importMarkdown(from: dir).created == ids.count)
        for id in ids {
            let (a, b) = (try s.book.note(id), try fresh.book.note(id))
            #expect(
                Array(b.title.utf8) == Array(a.title.utf8), "\(a.title.debugDescription) -> \(b.title.debugDescription)"
            )
            #expect(b.aliases.map { Array($0.utf8) } == a.aliases.map { Array($0.utf8) }, "\(b.aliases)")
            let (ca, cb) = (try s.book.categoryName(a.category), try fresh.book.categoryName(b.category))
            #expect(cb.map { Array($0.utf8) } == ca.map { Array($0.utf8) }, "\(String(describing: cb))")
            let ta = try a.tags.compactMap { try s.book.tagName($0) }
            let tb = try b.tags.compactMap { try fresh.book.tagName($0) }
            #expect(tb.map { Array($0.utf8) } == ta.map { Array($0.utf8) }, "\(tb)")
        }
        // Read back into the same store: nothing changes.
        #expect(try s.book.importMarkdown(from: dir).unchanged == ids.count)
    }

    @Test("a title with a run of spaces or a tab comes back from an export as it was, and an edit keeps it")
    func spacedTitleRoundTrip() throws {
        let s = try InterchangeScratch()
        let titles = ["Plan  B", "a\tb", "x \t y"]
        var ids: [Identifier] = []
        for t in titles { ids.append(try s.book.add(title: t, body: "one\n").id) }
        let dir = s.path + "/md"
        try s.book.exportMarkdown(to: dir)
        let fresh = try InterchangeScratch()
        try fresh.book.importMarkdown(from: dir)
        for (id, t) in zip(ids, titles) { #expect(try fresh.book.note(id).title == t) }
        // A body edited in the other editor changes the body, not the title the file names.
        for file in try files(dir) { try write(dir + "/" + file, try read(dir + "/" + file) + "two\n") }
        #expect(try s.book.importMarkdown(from: dir).updated == 3)
        for (id, t) in zip(ids, titles) {
            let note = try s.book.note(id)
            #expect(note.title == t && note.body == "one\ntwo\n")
        }
        // A title the store cannot hold (a line break) still becomes one line.
        try write(dir + "/broken.md", "---\ntitle: \"two\\nlines\"\n---\n")
        try s.book.importMarkdown(from: dir)
        #expect(try s.allNotes().contains { $0.title == "two lines" })
    }

    @Test("hand-written files: title from the first heading or the file name, category from the folder")
    func handWritten() throws {
        let s = try InterchangeScratch()
        let dir = s.path + "/md"
        try write(dir + "/Ideas/garden.md", "Some intro\n\n# Raised beds #\n\ntext\n")
        try write(dir + "/plain note.md", "```\n# not a heading\n```\nbody")
        try write(dir + "/Ideas/.hidden.md", "# ignored")
        try write(dir + "/notes.txt", "# ignored")
        try write(dir + "/fm.md", "---\r\ntitle: 'It''s here'\r\ncategory: \r\ntags: [x]\r\n---\r\nbody\r\n")
        #expect(
            try s.book.importMarkdown(from: dir)
                == MarkdownImportSummary(
                    created: 3, updated: 0, unchanged: 0,
                    warnings: [
                        "1 hidden file not read (Ideas/.hidden.md): names starting with a dot are left out, as editors' own files are; rename it to import it"
                    ], otherFiles: 1))
        let notes = try s.allNotes().sorted { $0.title < $1.title }
        #expect(notes.map(\.title) == ["It's here", "Raised beds", "plain note"])
        #expect(
            notes.map(\.body) == [
                "body\r\n", "Some intro\n\n# Raised beds #\n\ntext\n", "```\n# not a heading\n```\nbody",
            ])
        #expect(try notes.map { try s.book.categoryName($0.category) } == [nil, "Ideas", nil])
    }

    @Test("a folder moved or renamed since its import updates its notes, rather than making them again")
    func movedVault() throws {
        let s = try InterchangeScratch()
        let dir = s.path + "/vault"
        for i in 0..<6 { try write(dir + "/sub/n\(i).md", "# Note \(i)\n\nbody \(i)\n") }
        try write(dir + "/index.md", "# Index\n")
        #expect(try s.book.importMarkdown(from: dir).created == 7)
        // Another folder that shares a name with it is a folder of its own.
        let other = s.path + "/other"
        try write(other + "/index.md", "# Other index\n")
        for i in 0..<3 { try write(other + "/o\(i).md", "# Other \(i)\n") }
        #expect(try s.book.importMarkdown(from: other).created == 4)
        // The vault renamed, one file edited and one added meanwhile.
        let renamed = s.path + "/renamed"
        #expect(rename(dir, renamed) == 0)
        try write(renamed + "/sub/n2.md", "# Note 2\n\nbody 2, edited\n")
        try write(renamed + "/sub/n6.md", "# Note 6\n")
        var expected = MarkdownImportSummary(created: 1, updated: 1, unchanged: 6)
        expected.movedFrom = [dir]
        #expect(try s.book.importMarkdown(from: renamed) == expected)
        #expect(try s.allNotes().count == 12)
        #expect(try s.allNotes().first { $0.title == "Note 2" }?.body == "# Note 2\n\nbody 2, edited\n")
        // The notes matched now record their new place (unchanged ones too): again, nothing
        // changes, even once a folder of the old name is made again; and edits made after the
        // move update their notes, however many.
        #expect(try s.allNotes().filter { $0.properties["vault"] == dir }.isEmpty)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        #expect(
            try s.book.importMarkdown(from: renamed) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 8))
        for i in [0, 1, 3, 4, 5] { try write(renamed + "/sub/n\(i).md", "# Note \(i)\n\nedited after the move\n") }
        #expect(
            try s.book.importMarkdown(from: renamed) == MarkdownImportSummary(created: 0, updated: 5, unchanged: 3))
        // The other folder moved too: its notes are its own, not the vault's `index.md`.
        #expect(rename(other, s.path + "/other2") == 0)
        expected = MarkdownImportSummary(created: 0, updated: 0, unchanged: 4)
        expected.movedFrom = [other]
        #expect(try s.book.importMarkdown(from: s.path + "/other2") == expected)
        #expect(try s.allNotes().count == 12)
    }

    @Test("folders that only share file names, or a copy of a folder still in place, stay folders of their own")
    func notMovedVaults() throws {
        let s = try InterchangeScratch()
        // A gone folder of one note, and a new folder holding a file of the same name, other text.
        let one = s.path + "/one"
        try write(one + "/note.md", "# Shopping\n\neggs\n")
        #expect(try s.book.importMarkdown(from: one).created == 1)
        try FileManager.default.removeItem(atPath: one)
        let two = s.path + "/two"
        try write(two + "/note.md", "# Meeting\n")
        #expect(try s.book.importMarkdown(from: two) == MarkdownImportSummary(created: 1, updated: 0, unchanged: 0))
        #expect(try s.allNotes().map(\.title).sorted() == ["Meeting", "Shopping"])
        // A gone folder of three common names; a big folder holding two of them unchanged.
        let small = s.path + "/small"
        for name in ["README", "index", "todo"] { try write(small + "/\(name).md", "# \(name)\n") }
        #expect(try s.book.importMarkdown(from: small).created == 3)
        try FileManager.default.removeItem(atPath: small)
        let big = s.path + "/big"
        for name in ["README", "index"] { try write(big + "/\(name).md", "# \(name)\n") }
        for i in 0..<20 { try write(big + "/b\(i).md", "# B \(i)\n") }
        #expect(try s.book.importMarkdown(from: big).created == 22)
        // Empty files and a template several files share say nothing: a vault deleted (not moved)
        // whose `Untitled` files another vault also has keeps its notes.
        let work = s.path + "/Work"
        let home = s.path + "/Home"
        for name in ["Untitled", "Untitled 1", "Untitled 2"] {
            try write(work + "/\(name).md", "")
            try write(home + "/\(name).md", "")
        }
        for name in ["T1", "T2"] {
            try write(work + "/\(name).md", "# Template\n")
            try write(home + "/\(name).md", "# Template\n")
        }
        try write(work + "/journal.md", "# Journal\n\nWork secrets\n")
        #expect(try s.book.importMarkdown(from: work).created == 6)
        try FileManager.default.removeItem(atPath: work)
        try write(home + "/journal.md", "# Journal\n\nHome: bought milk\n")
        #expect(try s.book.importMarkdown(from: home) == MarkdownImportSummary(created: 6, updated: 0, unchanged: 0))
        #expect(try s.allNotes().filter { $0.body.contains("Work secrets") }.count == 1)
        // A copy of a folder still in place makes notes of its own.
        let kept = s.path + "/kept"
        for i in 0..<5 { try write(kept + "/k\(i).md", "# K \(i)\n") }
        #expect(try s.book.importMarkdown(from: kept).created == 5)
        let copy = s.path + "/copy"
        for i in 0..<5 { try write(copy + "/k\(i).md", "# K \(i)\n") }
        #expect(try s.book.importMarkdown(from: copy) == MarkdownImportSummary(created: 5, updated: 0, unchanged: 0))
        #expect(try s.allNotes().count == 2 + 3 + 22 + 12 + 10)
        // Two copies of a folder that is then deleted: the first imported takes its notes (they
        // record it), the second is a folder of its own.
        let gone = s.path + "/gone"
        for i in 0..<4 { try write(gone + "/g\(i).md", "# G \(i)\n") }
        #expect(try s.book.importMarkdown(from: gone).created == 4)
        let (w1, w2) = (s.path + "/w1", s.path + "/w2")
        for i in 0..<4 {
            try write(w1 + "/g\(i).md", "# G \(i)\n")
            try write(w2 + "/g\(i).md", "# G \(i)\n")
        }
        try FileManager.default.removeItem(atPath: gone)
        var first = MarkdownImportSummary(created: 0, updated: 0, unchanged: 4)
        first.movedFrom = [gone]
        #expect(try s.book.importMarkdown(from: w1) == first)
        #expect(try s.book.importMarkdown(from: w2) == MarkdownImportSummary(created: 4, updated: 0, unchanged: 0))
        try write(w2 + "/g0.md", "# G 0\n\nonly in w2\n")
        #expect(try s.book.importMarkdown(from: w2) == MarkdownImportSummary(created: 0, updated: 1, unchanged: 3))
        #expect(
            try s.allNotes().filter { $0.title == "G 0" }.map(\.body).sorted() == ["# G 0\n", "# G 0\n\nonly in w2\n"])
    }

    @Test("a folder around or inside one imported before finds the same files' notes, which keep their place")
    func nestedFolders() throws {
        let s = try InterchangeScratch()
        let parent = s.path + "/docs"
        let vault = parent + "/vault"
        for i in 0..<3 { try write(vault + "/sub/n\(i).md", "# N \(i)\n") }
        try write(vault + "/top.md", "# Top\n")
        #expect(try s.book.importMarkdown(from: vault).created == 4)
        // The parent: the vault's four files are the same files; one file of its own is new.
        try write(parent + "/other.md", "# Other\n")
        #expect(
            try s.book.importMarkdown(from: parent) == MarkdownImportSummary(created: 1, updated: 0, unchanged: 4))
        // A folder inside the vault, after an edit there: the same note is updated.
        try write(vault + "/sub/n1.md", "# N 1\n\nedited\n")
        #expect(
            try s.book.importMarkdown(from: vault + "/sub")
                == MarkdownImportSummary(created: 0, updated: 1, unchanged: 2))
        let notes = try s.allNotes()
        #expect(notes.count == 5)
        // Its category is the one its own folder gives (`sub`), not the one this import's would.
        let n1 = try #require(notes.first { $0.title == "N 1" })
        #expect(n1.body == "# N 1\n\nedited\n")
        #expect(try s.book.categoryName(n1.category) == "sub")
        let real = try #require(resolvedPath(vault))
        #expect(
            notes.filter { $0.title.hasPrefix("N ") || $0.title == "Top" }.allSatisfy { $0.properties["vault"] == real }
        )
        #expect(try s.book.importMarkdown(from: vault) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 4))
    }

    @Test("a file moved within the folder, or renamed, keeps its note: matched by its bytes, else its name, if unique")
    func filesMovedWithinFolder() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "# Alpha\n\nalpha\n")
        try write(v + "/b.md", "# Beta\n\nbeta\n")
        try write(v + "/c.md", "# Gamma\n\ngamma\n")
        // Two copies of one template, and two files of one name in two folders.
        try write(v + "/t1.md", "template\n")
        try write(v + "/t2.md", "template\n")
        try write(v + "/x/index.md", "# X\n")
        try write(v + "/y/index.md", "# Y\n")
        #expect(try s.book.importMarkdown(from: v).created == 7)
        let before = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.id) })
        // a: into a subfolder, unchanged; b: into a subfolder and edited; c: renamed in place.
        // The templates are renamed, both indexes moved into one folder.
        for (from, to) in [
            ("a.md", "sub/a.md"), ("b.md", "sub/b.md"), ("c.md", "gamma.md"), ("t1.md", "u1.md"),
            ("t2.md", "u2.md"), ("x/index.md", "z/index.md"), ("y/index.md", "z/w/index.md"),
        ] {
            try FileManager.default.createDirectory(
                atPath: ((v + "/" + to) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(rename(v + "/" + from, v + "/" + to) == 0)
        }
        try write(v + "/sub/b.md", "# Beta\n\nbeta, edited\n")
        // The indexes, edited, are told apart by neither bytes nor name.
        try write(v + "/z/index.md", "# X\n\nedited\n")
        try write(v + "/z/w/index.md", "# Y\n\nedited\n")
        let summary = try s.book.importMarkdown(from: v)
        #expect(
            summary.movedFiles == 3 && summary.updated == 2 && summary.unchanged == 1 && summary.created == 4
                && summary.missingFiles == 4, "\(summary)")
        let notes = try s.allNotes()
        #expect(notes.count == 11)
        // The same bytes keep the note as the store has it, but for the category its new folder
        // gives (see `movedFileTakesFolderCategory`); an edited file updates its note, category
        // included.
        for (title, path, category) in [
            ("Alpha", "sub/a.md", "sub"), ("Beta", "sub/b.md", "sub"), ("Gamma", "gamma.md", "-"),
        ] {
            let n = try #require(notes.first { $0.id == before[title] })
            #expect(n.sourcePath == path && n.title == title)
            #expect(try s.book.categoryName(n.category) ?? "-" == category)
        }
        // An unchanged file moved within the folder: two events, its new path and its new
        // folder's category (four at its import: the creation, digest, path and folder; the
        // folder is the same).
        #expect(notes.first { $0.id == before["Alpha"] }?.version == 6)
        #expect(notes.first { $0.id == before["Gamma"] }?.version == 5)
        #expect(notes.first { $0.id == before["Beta"] }?.body == "# Beta\n\nbeta, edited\n")
        // Imported again: nothing moves, nothing changes.
        #expect(
            try s.book.importMarkdown(from: v)
                == {
                    var same = MarkdownImportSummary(created: 0, updated: 0, unchanged: 7)
                    same.missingFiles = 4
                    same.prunable = 4
                    return same
                }())
    }

    /// Found in review: a file moved unchanged from the top of the folder into `sub/` kept "no
    /// category", though a first import gives it the category `sub`.
    @Test(
        "a file moved into another folder unchanged takes the category a first import gives it there, unless the store set another"
    )
    func movedFileTakesFolderCategory() throws {
        let files = [
            ("a.md", "sub/a.md", "# Alpha\n\nalpha\n"), ("work/b.md", "home/b.md", "# Beta\n\nbeta\n"),
            ("work/c.md", "c.md", "# Gamma\n\ngamma\n"), ("d.md", "sub/d.md", "# Delta\n\ndelta\n"),
            ("work/e.md", "home/e.md", "# Eps\n\neps\n"), ("f.md", "sub/f.md", "---\ncategory: fixed\n---\n# Phi\n"),
            ("g.md", "sub/g.md", "---\ncategory: null\n---\n# Gee\n"),
            ("work/h.md", "work/eta.md", "# Eta\n\neta\n"),
        ]
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        for (from, _, text) in files { try write(v + "/" + from, text) }
        #expect(try s.book.importMarkdown(from: v).created == files.count)
        let id = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.id) })
        // Set in the store since the import: Delta filed under `mine`, Eps taken out of `work`.
        _ = try s.book.categorize(try #require(id["Delta"]), as: "mine")
        _ = try s.book.categorize(try #require(id["Eps"]), as: nil)
        for (from, to, _) in files {
            try FileManager.default.createDirectory(
                atPath: ((v + "/" + to) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(rename(v + "/" + from, v + "/" + to) == 0)
        }
        let versions = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.version) })
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.movedFiles == files.count && summary.created == 0 && summary.missingFiles == 0, "\(summary)")
        #expect(summary.updated == 3 && summary.unchanged == 5, "\(summary)")
        var fresh: [String: String] = [:]
        let other = try InterchangeScratch()
        _ = try other.book.importMarkdown(from: v)
        for n in try other.allNotes() { fresh[n.title] = try other.book.categoryName(n.category) ?? "-" }
        // As a first import gives them (the front matter's category wins over the folder's;
        // a rename within `work` changes nothing), but for the two set in the store: they keep
        // theirs, each said once.
        let notes = try s.allNotes()
        for (title, category, events) in [
            ("Alpha", "sub", 2), ("Beta", "home", 2), ("Gamma", "-", 2), ("Delta", "mine", 1), ("Eps", "-", 1),
            ("Phi", "fixed", 1), ("Gee", "-", 1), ("Eta", "work", 1),
        ] {
            let n = try #require(notes.first { $0.id == id[title] })
            #expect(try s.book.categoryName(n.category) ?? "-" == category, "\(title)")
            #expect(n.version == versions[title]! + UInt64(events), "\(title)")
            if title != "Delta" && title != "Eps" { #expect(fresh[title] == category, "\(title)") }
        }
        #expect(fresh["Delta"] == "sub" && fresh["Eps"] == "home")
        #expect(
            summary.warnings.sorted() == [
                "home/e.md: moved from work/e.md; its note keeps no category, set in the store since its import, "
                    + "not the category \"home\" that its new folder gives (`notes categorize` changes it)",
                "sub/d.md: moved from d.md; its note keeps the category \"mine\", set in the store since its import, "
                    + "not the category \"sub\" that its new folder gives (`notes categorize` changes it)",
            ], "\(summary.warnings)")
        // Imported again: nothing moves, nothing changes, nothing is said.
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.created == 0 && again.unchanged == files.count && again.warnings.isEmpty)
    }

    /// Reported by an earlier session: an edited file imported again replaced the category set
    /// in the store since its import (with none, for a file at the top of the folder).
    @Test("an edited file imported again keeps the category set in the store, unless its front matter names one")
    func editedFileKeepsStoreCategory() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        let files = [
            ("a.md", "# Alpha\n\nalpha\n"), ("work/b.md", "# Beta\n\nbeta\n"),
            ("c.md", "---\ncategory: fixed\n---\n# Gamma\n\ngamma\n"), ("work/d.md", "# Delta\n\ndelta\n"),
            ("e.md", "# Eps\n\neps\n"),
        ]
        for (file, text) in files { try write(v + "/" + file, text) }
        #expect(try s.book.importMarkdown(from: v).created == files.count)
        let id = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.id) })
        // Set in the store since the import; Delta is left as its folder gave it.
        _ = try s.book.categorize(try #require(id["Alpha"]), as: "mine")
        _ = try s.book.categorize(try #require(id["Beta"]), as: nil)
        _ = try s.book.categorize(try #require(id["Gamma"]), as: "mine")
        _ = try s.book.categorize(try #require(id["Eps"]), as: "mine")
        // Every file edited; Eps's front matter now names a category.
        for (file, text) in files where file != "e.md" { try write(v + "/" + file, text + "edited\n") }
        try write(v + "/e.md", "---\ncategory: named\n---\n# Eps\n\neps\nedited\n")
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == files.count && summary.created == 0 && summary.warnings.isEmpty, "\(summary)")
        let notes = try s.allNotes()
        // Before 2026-12-07 Alpha lost "mine" and Beta was filed under "work" again.
        for (title, category) in [
            ("Alpha", "mine"), ("Beta", "-"), ("Gamma", "fixed"), ("Delta", "work"), ("Eps", "named"),
        ] {
            let n = try #require(notes.first { $0.id == id[title] })
            #expect(try s.book.categoryName(n.category) ?? "-" == category, "\(title)")
            #expect(n.body.hasSuffix("edited\n"), "\(title)")
        }
        // Imported again: nothing changes.
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.unchanged == files.count, "\(again)")
    }

    /// Reported by an earlier session: a file moved into another top folder and edited kept the
    /// category set in the store since (as it should) without the warning a file moved unchanged gets.
    @Test("a file moved into another folder and edited keeps the store's category, and the import says so")
    func movedEditedFileKeepsStoreCategoryWarned() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "# Alpha\n\nalpha\n")
        try write(v + "/home/b.md", "# Beta\n\nbeta\n")
        try write(v + "/c.md", "# Gamma\n\ngamma\n")
        #expect(try s.book.importMarkdown(from: v).created == 3)
        let id = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.id) })
        _ = try s.book.categorize(try #require(id["Alpha"]), as: "mine")
        _ = try s.book.categorize(try #require(id["Gamma"]), as: "mine")
        // Alpha moved and edited, Beta moved and edited with its folder's category still, Gamma
        // edited in place: only Alpha's import says anything.
        try FileManager.default.createDirectory(atPath: v + "/work", withIntermediateDirectories: true)
        #expect(rename(v + "/a.md", v + "/work/a.md") == 0)
        try write(v + "/work/a.md", "# Alpha\n\nalpha\nedited\n")
        #expect(rename(v + "/home/b.md", v + "/work/b.md") == 0)
        try write(v + "/work/b.md", "# Beta\n\nbeta\nedited\n")
        try write(v + "/c.md", "# Gamma\n\ngamma\nedited\n")
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 3 && summary.created == 0, "\(summary)")
        #expect(
            summary.warnings == [
                "work/a.md: moved from a.md; its note keeps the category \"mine\", set in the store since its import, "
                    + "not the category \"work\" that its new folder gives (`notes categorize` changes it)"
            ], "\(summary.warnings)")
        let notes = try s.allNotes()
        for (title, category) in [("Alpha", "mine"), ("Beta", "work"), ("Gamma", "mine")] {
            let n = try #require(notes.first { $0.id == id[title] })
            #expect(try s.book.categoryName(n.category) == category, "\(title)")
        }
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.warnings.isEmpty, "\(again)")
    }

    /// Reported by an earlier session: an edited file imported again replaced the note's tags
    /// with its own, removing a tag added in the store since its import.
    @Test("an edited file imported again changes the tags the file changed; those set in the store since stand")
    func editedFileKeepsStoreTags() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "---\ntags: [x, y]\n---\n# Alpha\n\nalpha\n")
        try write(v + "/b.md", "# Beta\n\nbeta\n")
        try write(v + "/c.md", "# Gamma\n\ngamma #inline\n")
        #expect(try s.book.importMarkdown(from: v).created == 3)
        let id = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.id) })
        func tags(_ title: String) throws -> [String] { try s.tagNames(of: try #require(id[title])) }
        // Set in the store since the import.
        _ = try s.book.tag(try #require(id["Alpha"]), with: ["mine"])
        _ = try s.book.untag(try #require(id["Alpha"]), from: ["y"])
        _ = try s.book.tag(try #require(id["Beta"]), with: ["mine"])
        _ = try s.book.untag(try #require(id["Gamma"]), from: ["inline"])
        // Every file edited; Alpha's names z for y, which the store removed already.
        try write(v + "/a.md", "---\ntags: [x, z]\n---\n# Alpha\n\nalpha\nedited\n")
        try write(v + "/b.md", "# Beta\n\nbeta\nedited\n")
        try write(v + "/c.md", "# Gamma\n\ngamma #inline\nedited\n")
        var summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 3 && summary.created == 0 && summary.warnings.isEmpty, "\(summary)")
        // Before 2026-12-08: Alpha [x, z], Beta [], Gamma [inline].
        #expect(try tags("Alpha") == ["mine", "x", "z"])
        #expect(try tags("Beta") == ["mine"])
        #expect(try tags("Gamma") == [])
        // Edited again: what this import recorded is what the next compares with, none included.
        try write(v + "/a.md", "---\ntags: [z]\n---\n# Alpha\n\nalpha\nedited twice\n")
        try write(v + "/b.md", "# Beta\n\nbeta\nedited twice\n")
        try write(v + "/c.md", "# Gamma\n\ngamma\nedited twice #other\n")
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 3 && summary.created == 0, "\(summary)")
        #expect(try tags("Alpha") == ["mine", "z"])
        #expect(try tags("Beta") == ["mine"])
        #expect(try tags("Gamma") == ["other"])
        // A tag the file names again, after its last import did not, is the file's change: it
        // comes back (inline); one the store removed while the file went on naming it stays off.
        _ = try s.book.untag(try #require(id["Gamma"]), from: ["other"])
        try write(v + "/c.md", "# Gamma\n\ngamma #inline\nedited thrice #other\n")
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 1, "\(summary)")
        #expect(try tags("Gamma") == ["inline"])
        // Imported again: nothing changes.
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.unchanged == 3, "\(again)")
        // Exported into the folder, the files name the store's tags (Alpha's "mine" too), and
        // read back they change nothing; a tag then removed from a file is removed from its note
        // (the export wrote the version the last import made: found in review, 2026-12-08).
        try s.book.exportMarkdown(to: v)
        let readBack = try s.book.importMarkdown(from: v)
        #expect(readBack.updated == 0 && readBack.created == 0, "\(readBack)")
        #expect(try tags("Alpha") == ["mine", "z"])
        let exported = try read(v + "/a.md")
        #expect(exported.contains("\"mine\""), "\(exported)")
        let lines = exported.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasPrefix("tags:") ? "tags: [\"z\"]" : String($0)
        }
        try write(v + "/a.md", lines.joined(separator: "\n") + "edited after the export\n")
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 1, "\(summary)")
        #expect(try tags("Alpha") == ["z"])
    }

    /// Found in review (2026-12-08): a file whose only change was to name the tags the note
    /// had already (or to drop one it had not) changed nothing, and its import was not recorded,
    /// so the file's next change was compared with the import before: a tag it then dropped
    /// again stayed, one it named again did not come.
    @Test("an edited file that comes to say what the store says of its tags is recorded all the same")
    func fileTagsMeetingStoreTagsRecorded() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "---\ntags: [x, y]\n---\n# Alpha\n\nalpha\n")
        #expect(try s.book.importMarkdown(from: v).created == 1)
        let id = try #require(try s.allNotes().first).id
        func tags() throws -> [String] { try s.tagNames(of: id) }
        _ = try s.book.tag(id, with: ["mine"])
        _ = try s.book.untag(id, from: ["y"])
        // The file comes to say what the store says: nothing changes in the note.
        try write(v + "/a.md", "---\ntags: [x, mine]\n---\n# Alpha\n\nalpha\n")
        var summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 0 && summary.unchanged == 1, "\(summary)")
        #expect(try tags() == ["mine", "x"])
        // Then the file drops mine and names y again: its changes since that import.
        try write(v + "/a.md", "---\ntags: [x, y]\n---\n# Alpha\n\nalpha\n")
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 1, "\(summary)")
        #expect(try tags() == ["x", "y"])
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.unchanged == 1, "\(again)")
    }

    /// Found in review (2026-12-08): the file's tags were compared by id, so a tag renamed or
    /// deleted in the store, its file then edited (naming it as before), was put back under the
    /// file's name (a new tag, the renamed one removed from the note).
    @Test("an edited file that still names a tag renamed or deleted in the store since leaves it so")
    func editedFileKeepsStoreTagRenameAndDeletion() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "---\ntags: [x, proj/a]\n---\n# Alpha\n\nalpha #inl\n")
        #expect(try s.book.importMarkdown(from: v).created == 1)
        let id = try #require(try s.allNotes().first).id
        func tags() throws -> [String] { try s.tagNames(of: id) }
        try s.book.renameTag("x", to: "renamed")
        try s.book.renameTag("proj", to: "work")
        _ = try s.book.deleteTag("inl")
        #expect(try tags() == ["renamed", "work/a"])
        // The body edited, the tags named as before (one in another case): they stand.
        try write(v + "/a.md", "---\ntags: [X, proj/a]\n---\n# Alpha\n\nalpha #inl\nedited\n")
        var summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 1, "\(summary)")
        #expect(try tags() == ["renamed", "work/a"])
        #expect(try s.book.allTags().map(\.name).sorted() == ["renamed", "work/a"])
        // Edited again (so as recorded by an import that records): still so.
        try write(v + "/a.md", "---\ntags: [x, proj/a]\n---\n# Alpha\n\nalpha #inl\nedited twice\n")
        summary = try s.book.importMarkdown(from: v)
        #expect(try tags() == ["renamed", "work/a"])
        // The file drops x: the tag it named, renamed since, goes; one it adds comes.
        try write(v + "/a.md", "---\ntags: [proj/a, new]\n---\n# Alpha\n\nalpha #inl\nedited thrice\n")
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 1, "\(summary)")
        #expect(try tags() == ["new", "work/a"])
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.unchanged == 1, "\(again)")
    }

    /// Found in review (2026-12-08): a folder exported into the note's own folder named the
    /// store's tags then; a tag removed in the store after the export came back once the file
    /// was edited (and one added after an export of a note made here went), as the file was
    /// compared with its last import, not with what the export wrote.
    @Test("a file the export wrote, edited, changes the tags it changed since the export; the store's since stand")
    func exportedFileEditedKeepsStoreTags() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "---\ntags: [x]\n---\n# Alpha\n\nalpha\n")
        #expect(try s.book.importMarkdown(from: v).created == 1)
        let id = try #require(try s.allNotes().first).id
        let made = try s.book.add(title: "Made here", body: "made\n", tags: ["a"])
        func tags(_ id: Identifier) throws -> [String] { try s.tagNames(of: id) }
        _ = try s.book.tag(id, with: ["mine"])
        try s.book.exportMarkdown(to: v)
        #expect(try read(v + "/a.md").contains(#"tags: ["mine", "x"]"#))
        // In the store since the export.
        _ = try s.book.untag(id, from: ["mine"])
        _ = try s.book.tag(id, with: ["other"])
        _ = try s.book.tag(made.id, with: ["b"])
        let madeFile = try #require(try files(v).first { $0 != "a.md" })
        let exported = try read(v + "/a.md")
        try write(v + "/a.md", exported.replacing(#"["mine", "x"]"#, with: #"["mine", "x", "y"]"#) + "edited\n")
        try write(v + "/" + madeFile, try read(v + "/" + madeFile) + "edited\n")
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.updated == 2, "\(summary)")
        #expect(try tags(id) == ["other", "x", "y"])
        #expect(try tags(made.id) == ["a", "b"])
        // Edited again, the export's `updated` still in it: compared with this import now.
        try write(v + "/a.md", try read(v + "/a.md").replacing(#"["mine", "x", "y"]"#, with: #"["x"]"#) + "twice\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try tags(id) == ["other", "x"])
        let again = try s.book.importMarkdown(from: v)
        #expect(again.updated == 0 && again.unchanged == 2, "\(again)")
    }

    /// Found in review (2026-12-08): an import that recorded the same tags as the one before
    /// wrote no record, and the export written between them was taken for newer than the last
    /// import: a tag added in the store after that import was removed at the file's next edit.
    @Test("an export older than the last import, its `updated` still in the file, is not what an edit is compared with")
    func exportOlderThanLastImport() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "---\ntags: [x]\n---\n# Alpha\n\nalpha\n")
        #expect(try s.book.importMarkdown(from: v).created == 1)
        let id = try #require(try s.allNotes().first).id
        func tags() throws -> [String] { try s.tagNames(of: id) }
        _ = try s.book.tag(id, with: ["mine"])
        try write(v + "/a.md", "---\ntags: [x]\n---\n# Alpha\n\nalpha\nedited\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        try s.book.exportMarkdown(to: v)
        // The export's file edited: mine dropped from it.
        let exported = try read(v + "/a.md")
        #expect(exported.contains(#"tags: ["mine", "x"]"#), "\(exported)")
        try write(v + "/a.md", exported.replacing(#"tags: ["mine", "x"]"#, with: #"tags: ["x"]"#) + "twice\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try tags() == ["x"])
        // Tagged in the store again, then the file edited again (its `updated` the export's).
        _ = try s.book.tag(id, with: ["mine"])
        try write(v + "/a.md", try read(v + "/a.md") + "thrice\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try tags() == ["mine", "x"])
    }

    /// `source-tags` recorded as ids alone (as on 2026-12-08 before names were): each id's name
    /// at that record is what the file named; and `history` shows the names, not the ids.
    @Test("a source-tags record of ids alone is read with the tags' names then; history shows names")
    func sourceTagsOfIdsAlone() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "---\ntags: [x]\n---\n# Alpha\n\nalpha\n")
        #expect(try s.book.importMarkdown(from: v).created == 1)
        let id = try #require(try s.allNotes().first).id
        func tags() throws -> [String] { try s.tagNames(of: id) }
        _ = try s.book.tag(id, with: ["mine"])
        try write(v + "/a.md", "---\ntags: [x]\n---\n# Alpha\n\nalpha\nedited\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        let recorded = try #require(try s.book.note(id).properties["source-tags"])
        let x = try s.book.tag(named: "x").id
        #expect(recorded == x.uuidString + " x")
        let change = NoteChange.propertyChange(key: "source-tags", from: nil, to: recorded)
        #expect(change == #""x""#)
        try s.book.setProperty(id, key: "source-tags", value: x.uuidString)
        try s.book.renameTag("x", to: "renamed")
        try write(v + "/a.md", "---\ntags: [x]\n---\n# Alpha\n\nalpha\nedited twice\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try tags() == ["mine", "renamed"])
        try write(v + "/a.md", "---\ntags: []\n---\n# Alpha\n\nalpha\nedited thrice\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try tags() == ["mine"])
        #expect(try s.book.note(id).properties["source-tags"] == "none")
    }

    /// Found in review (2026-12-08): the note's own file read through a folder around its own
    /// replaced the note's tags with the file's and did not record them, so the next import of
    /// its own folder compared with an older record.
    @Test("the note's own file read through the folder around it changes the tags it changed, and records them")
    func folderAroundOwnFolderTags() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/v"
        try write(v + "/sub/a.md", "---\ntags: [x]\n---\n# A\n\ntext\n")
        #expect(try s.book.importMarkdown(from: v + "/sub").created == 1)
        let id = try #require(try s.allNotes().first).id
        func tags() throws -> [String] { try s.tagNames(of: id) }
        try write(v + "/sub/a.md", "---\ntags: [x]\n---\n# A\n\ntext edited\n")
        #expect(try s.book.importMarkdown(from: v + "/sub").updated == 1)
        _ = try s.book.tag(id, with: ["mine"])
        // Through the folder around: z is the file's change, mine the store's.
        try write(v + "/sub/a.md", "---\ntags: [x, z]\n---\n# A\n\ntext edited twice\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try tags() == ["mine", "x", "z"])
        // Then through its own folder: the file drops z, which it named at that import.
        try write(v + "/sub/a.md", "---\ntags: [x]\n---\n# A\n\ntext edited thrice\n")
        #expect(try s.book.importMarkdown(from: v + "/sub").updated == 1)
        #expect(try tags() == ["mine", "x"])
    }

    @Test(
        "a moved file keeps the edits made in the store; a trashed note, an empty file or a file of another text is not a move"
    )
    func filesMovedWithCare() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/meeting.md", "# Meeting\n\nagenda\n")
        try write(v + "/old/todo.md", "# Todo\n\nbuy milk\n")
        try write(v + "/x/Untitled.md", "")
        #expect(try s.book.importMarkdown(from: v).created == 3)
        let meeting = try #require(try s.allNotes().first { $0.title == "Meeting" })
        _ = try s.book.edit(meeting.id, body: "Edited in the store\n")
        // Moved unchanged: the store's edit stays.
        try FileManager.default.createDirectory(atPath: v + "/work", withIntermediateDirectories: true)
        #expect(rename(v + "/meeting.md", v + "/work/meeting.md") == 0)
        // Deleted, its note trashed; deleted too, an empty file.
        let todo = try #require(try s.allNotes().first { $0.title == "Todo" })
        try FileManager.default.removeItem(atPath: v + "/old/todo.md")
        try FileManager.default.removeItem(atPath: v + "/x/Untitled.md")
        _ = try s.book.trash(todo.id)
        var summary = try s.book.importMarkdown(from: v)
        #expect(summary.movedFiles == 1 && summary.updated == 1 && summary.unchanged == 0, "\(summary)")
        let moved = try #require(try s.allNotes().first { $0.id == meeting.id })
        #expect(moved.body == "Edited in the store\n" && moved.sourcePath == "work/meeting.md")
        // It takes the category of the folder it went into, as a first import of it there does.
        #expect(try s.book.categoryName(moved.category) == "work")
        // A new file of the trashed note's name, an unrelated empty file, a file of another text
        // under a gone note's name: new notes.
        try write(v + "/projects/todo.md", "# Project plan\n\nunrelated\n")
        try write(v + "/Idea.md", "")
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.movedFiles == 0 && summary.created == 2, "\(summary)")
        let trashed = try #require(try s.allNotes().first { $0.id == todo.id })
        #expect(trashed.trashed && trashed.title == "Todo")
    }

    @Test(
        "a move of part of a folder takes only the notes whose files left; skipped files and folders nested in a move")
    func partlyMovedFolders() throws {
        let s = try InterchangeScratch()
        // Most files move out of V into W; V keeps README and index, W has a README of its own.
        let v = s.path + "/V"
        let w = s.path + "/W"
        for i in 1...3 { try write(v + "/n\(i).md", "# N \(i)\n") }
        try write(v + "/README.md", "# V readme\n")
        try write(v + "/index.md", "# V index\n")
        #expect(try s.book.importMarkdown(from: v).created == 5)
        for i in 1...3 { try write(w + "/n\(i).md", "# N \(i)\n") }
        for i in 1...3 { try FileManager.default.removeItem(atPath: v + "/n\(i).md") }
        try write(w + "/README.md", "# W readme\n")
        var summary = try s.book.importMarkdown(from: w)
        #expect(summary.created == 1 && summary.unchanged == 3 && summary.movedFrom == [v] && summary.missingFiles == 0)
        #expect(try s.book.importMarkdown(from: v) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 2))
        #expect(
            try s.allNotes().filter { $0.title.hasSuffix("readme") }.map(\.title).sorted() == ["V readme", "W readme"])
        // A moved folder's file skipped as invalid: its note records the new place all the same,
        // and the file, once fixed, updates it.
        let x = s.path + "/X"
        let y = s.path + "/Y"
        for name in ["a", "b", "c", "d"] { try write(x + "/\(name).md", "# \(name)\n") }
        #expect(try s.book.importMarkdown(from: x).created == 4)
        #expect(rename(x, y) == 0)
        try write(y + "/d.md", "---\ntags: [x\n---\n")
        summary = try s.book.importMarkdown(from: y, skipInvalid: true)
        #expect(summary.unchanged == 3 && summary.skipped.count == 1 && summary.missingFiles == 0)
        try write(y + "/d.md", "# d\n\nfixed\n")
        #expect(try s.book.importMarkdown(from: y) == MarkdownImportSummary(created: 0, updated: 1, unchanged: 3))
        // A folder's files moved into a folder it held: the files moved and the file already
        // there are all found.
        let p = s.path + "/P"
        for name in ["a", "b", "c"] { try write(p + "/\(name).md", "# P \(name)\n") }
        try write(p + "/C/x.md", "# P x\n")
        #expect(try s.book.importMarkdown(from: p).created == 4)
        for name in ["a", "b", "c"] {
            #expect(rename(p + "/\(name).md", p + "/C/\(name).md") == 0)
        }
        summary = try s.book.importMarkdown(from: p + "/C")
        #expect(summary.created == 0 && summary.unchanged == 4 && summary.missingFiles == 0)
        #expect(try s.allNotes().count == 6 + 4 + 4)
        // Two folders whose names differ only in their Unicode form are two folders.
        let composed = s.path + "/caf\u{E9}"
        let decomposed = s.path + "/cafe\u{301}"
        try write(composed + "/a.md", "# Composed\n")
        try write(decomposed + "/a.md", "# Decomposed\n")
        #expect(try s.book.importMarkdown(from: composed).created == 1)
        #expect(try s.book.importMarkdown(from: decomposed).created == 1)
        #expect(try s.allNotes().filter { $0.title.hasSuffix("omposed") }.count == 2)
    }

    @Test("a file whose title is its name, renamed, retitles its note (once, no second note); a text's title stays")
    func renamedFileRetitles() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/Scratch.md", "just text\n")
        try write(v + "/Headed.md", "# Heading title\n\ntext\n")
        try write(v + "/Fronted.md", "---\ntitle: Given\n---\ntext\n")
        try write(v + "/Kept.md", "kept text\n")
        #expect(try s.book.importMarkdown(from: v).created == 4)
        let before = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.title, $0.id) })
        func move(_ from: String, _ to: String) throws {
            try FileManager.default.createDirectory(
                atPath: ((v + "/" + to) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(rename(v + "/" + from, v + "/" + to) == 0)
        }
        for (from, to) in [
            ("Scratch.md", "Draft ideas.md"), ("Headed.md", "h2.md"), ("Fronted.md", "f2.md"),
            ("Kept.md", "sub/Kept.md"),
        ] {
            try move(from, to)
        }
        let summary = try s.book.importMarkdown(from: v)
        // Kept.md went into `sub`, whose category it takes: updated too.
        #expect(
            summary.movedFiles == 4 && summary.updated == 2 && summary.unchanged == 2 && summary.created == 0
                && summary.missingFiles == 0, "\(summary)")
        var notes = try s.allNotes()
        #expect(notes.count == 4)
        func note(_ title: String) throws -> Note { try #require(notes.first { $0.id == before[title] }) }
        #expect(try note("Scratch").title == "Draft ideas" && note("Scratch").sourcePath == "Draft ideas.md")
        #expect(try note("Heading title").title == "Heading title" && note("Heading title").sourcePath == "h2.md")
        #expect(try note("Given").title == "Given")
        #expect(try note("Kept").title == "Kept" && note("Kept").sourcePath == "sub/Kept.md")
        #expect(try s.book.categoryName(note("Kept").category) == "sub")
        // Imported again: nothing changes.
        #expect(try s.book.importMarkdown(from: v) == MarkdownImportSummary(created: 0, updated: 0, unchanged: 4))
        // Retitled in the store: a move that keeps the file's name keeps that title; a rename
        // is the file's edit of it, and is taken.
        _ = try s.book.edit(try note("Kept").id, title: "Mine")
        _ = try s.book.edit(try note("Scratch").id, title: "Also mine")
        try move("sub/Kept.md", "other/Kept.md")
        try move("Draft ideas.md", "Final.md")
        #expect(try s.book.importMarkdown(from: v).movedFiles == 2)
        notes = try s.allNotes()
        #expect(notes.count == 4)
        #expect(try note("Kept").title == "Mine" && note("Scratch").title == "Final")
        // Renamed by an editor that rewrote the file's links to itself (Obsidian does): the same
        // note, retitled, its body the file's.
        try write(v + "/Final.md", "just text, see [[Final]] and [[Final#top|here]]\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        try move("Final.md", "Last.md")
        try write(v + "/Last.md", "just text, see [[Last]] and [[Last#top|here]]\n")
        let renamed = try s.book.importMarkdown(from: v)
        #expect(renamed.movedFiles == 1 && renamed.updated == 1 && renamed.created == 0, "\(renamed)")
        notes = try s.allNotes()
        #expect(notes.count == 4)
        #expect(
            try note("Scratch").title == "Last"
                && note("Scratch").body == "just text, see [[Last]] and [[Last#top|here]]\n")
    }

    @Test("prune trashes the notes whose files were deleted (not moved or skipped); an export into it skips them")
    func pruneDeletedFiles() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        for name in ["a", "b", "c", "d", "e"] { try write(v + "/\(name).md", "# \(name)\n\n\(name) text\n") }
        #expect(try s.book.importMarkdown(from: v).created == 5)
        // b deleted, c moved, d unreadable, e deleted after its note was trashed here.
        try FileManager.default.removeItem(atPath: v + "/b.md")
        try FileManager.default.createDirectory(atPath: v + "/sub", withIntermediateDirectories: true)
        #expect(rename(v + "/c.md", v + "/sub/c.md") == 0)
        try write(v + "/d.md", "---\ntags: [x\n---\n")
        let e = try #require(try s.allNotes().first { $0.title == "e" })
        _ = try s.book.trash(e.id)
        try FileManager.default.removeItem(atPath: v + "/e.md")
        var summary = try s.book.importMarkdown(from: v, skipInvalid: true)
        #expect(summary.missingFiles == 2 && summary.prunable == 1 && summary.pruned == 0, "\(summary)")
        #expect(try s.allNotes().filter(\.trashed).map(\.title) == ["e"])
        summary = try s.book.importMarkdown(from: v, skipInvalid: true, prune: true)
        #expect(
            summary.pruned == 1 && summary.missingFiles == 1 && summary.prunable == 0 && summary.movedFiles == 0,
            "\(summary)")
        let trashed = try s.allNotes().filter(\.trashed)
        #expect(trashed.map(\.title).sorted() == ["b", "e"])
        // Two events: the mark that its file is gone (``NoteProperty/sourceGone``), and the trash.
        #expect(trashed.first { $0.title == "b" }?.version == 6)
        // Again: nothing more to prune.
        summary = try s.book.importMarkdown(from: v, skipInvalid: true, prune: true)
        #expect(summary.pruned == 0 && summary.missingFiles == 2 && summary.prunable == 0, "\(summary)")
        // An export into the folder writes back neither deleted file; into another folder, both,
        // marked as in the trash. A note trashed here whose file is still there is written back.
        try write(v + "/d.md", "# d\n\nd text\n")
        let a = try #require(try s.allNotes().first { $0.title == "a" })
        _ = try s.book.trash(a.id)
        let home = try s.book.exportMarkdown(to: v)
        #expect(home.files == 3 && home.deletedInTrash == 2, "\(home)")
        #expect(try files(v) == ["a.md", "d.md", "sub/c.md"])
        #expect(try read(v + "/a.md").contains("trashed: true"))
        let other = try s.book.exportMarkdown(to: s.path + "/W")
        #expect(other.files == 5 && other.deletedInTrash == 0)
        #expect(try read(s.path + "/W/b.md").contains("trashed: true"))
        // Untrashed, the note is written back again.
        _ = try s.book.untrash(try #require(trashed.first { $0.title == "b" }).id)
        #expect(try s.book.exportMarkdown(to: v).deletedInTrash == 1)
        #expect(FileManager.default.fileExists(atPath: v + "/b.md"))
    }

    @Test("a note pruned for its deleted file leaves the trash when the file is back; one trashed otherwise stays")
    func prunedNoteComesBack() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        for name in ["a", "b", "c", "d", "e"] { try write(v + "/\(name).md", "# \(name)\n\n\(name) text\n") }
        #expect(try s.book.importMarkdown(from: v).created == 5)
        func note(_ title: String) throws -> Note { try #require(try s.allNotes().first { $0.title == title }) }
        // a, b, c deleted and pruned; e trashed here, then its file deleted too.
        _ = try s.book.trash(try note("e").id)
        for name in ["a", "b", "c", "e"] { try FileManager.default.removeItem(atPath: v + "/\(name).md") }
        var summary = try s.book.importMarkdown(from: v, prune: true)
        #expect(summary.pruned == 3 && summary.restored == 0, "\(summary)")
        #expect(try s.allNotes().filter(\.trashed).map(\.title).sorted() == ["a", "b", "c", "e"])
        // Back: a as it was, b edited, c saying it is in the trash; e, trashed here, too.
        try write(v + "/a.md", "# a\n\na text\n")
        try write(v + "/b.md", "# b\n\nb text, edited\n")
        try write(v + "/c.md", "---\ntrashed: true\n---\n# c\n\nc text\n")
        try write(v + "/e.md", "# e\n\ne text\n")
        let versions = try Dictionary(uniqueKeysWithValues: ["a", "b", "c", "e"].map { ($0, try note($0).version) })
        // Before 2026-12-07 each stayed in the trash, its file imported again all the same.
        summary = try s.book.importMarkdown(from: v)
        #expect(summary.restored == 2 && summary.updated == 1 && summary.created == 0, "\(summary)")
        #expect(try s.allNotes().filter(\.trashed).map(\.title).sorted() == ["c", "e"])
        #expect(try note("b").body.hasSuffix("b text, edited\n"))
        // a: the untrash and the mark removed; c: the mark removed; e: nothing.
        #expect(try note("a").version == versions["a"]! + 2)
        #expect(try note("c").version == versions["c"]! + 1)
        #expect(try note("e").version == versions["e"]!)
        for title in ["a", "b", "c"] {
            #expect(try note(title).properties[NoteProperty.sourceGone.rawValue] == nil, "\(title)")
        }
        // Again: nothing changes.
        summary = try s.book.importMarkdown(from: v, prune: true)
        #expect(summary.restored == 0 && summary.updated == 0 && summary.pruned == 0, "\(summary)")
    }

    @Test("a pruned note taken out of the trash, then trashed by hand, stays there when its file is back")
    func prunedNoteTrashedByHandStays() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a.md", "# a\n\na text\n")
        #expect(try s.book.importMarkdown(from: v).created == 1)
        let id = try #require(try s.allNotes().first?.id)
        try FileManager.default.removeItem(atPath: v + "/a.md")
        #expect(try s.book.importMarkdown(from: v, prune: true).pruned == 1)
        // Out of the trash, then into it again by hand: the trash is the user's now, not prune's.
        _ = try s.book.untrash(id)
        _ = try s.book.trash(id)
        #expect(try s.allNotes().first?.properties[NoteProperty.sourceGone.rawValue] == nil)
        try write(v + "/a.md", "# a\n\na text\n")
        // A review's trial: before 2026-12-07 the mark prune left outlived the untrash, and the
        // file's return took the note out of the trash the user had put it in.
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.restored == 0, "\(summary)")
        #expect(try s.allNotes().first?.trashed == true)
    }

    @Test("a line full of unclosed `](<` is read in linear time, and a `<` ends a `<...>` destination unclosed")
    func markdownDestinationsOfUnclosedAngles() throws {
        // A review's trial: before 2026-12-07 each `](<` read to the end of the line, and a
        // 1 MB line of them held `import-markdown` for minutes.
        let line = String(repeating: "[a](<", count: 200_000)
        let clock = ContinuousClock()
        var found: [(line: Int, destination: String)] = []
        let elapsed = clock.measure { found = VaultAttachments.markdownDestinations(line + "\n") }
        #expect(found.isEmpty)
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        #expect(
            VaultAttachments.markdownDestinations("[x](<a<b.png>) [y](<c d.png>)").map(\.destination) == ["c d.png"])
    }

    @Test("links and embeds of attachments the folder does not hold are reported, not those it holds or in code")
    func missingAttachments() throws {
        let destinations = VaultAttachments.markdownDestinations(
            "![a](img/a.png) [d](<my doc.pdf> \"t\") `[c](code.png)` [p](x(1).png)\n```\n![f](fenced.png)\n```\n"
                + "[e](a%20b.png#p) [[w]] ](plain.png)")
        #expect(destinations.map(\.line) == [0, 0, 0, 4, 4])
        #expect(destinations.map(\.destination) == ["img/a.png", "my doc.pdf", "x(1).png", "a b.png#p", "plain.png"])
        #expect(
            VaultAttachments.references(
                "![[pic.PNG]] [[Node.js]] [[note]] ![[Other note]] [w](https://x.org/a.png) [m](mailto:a@b.png) "
                    + "[q](doc.pdf?x=1) [n](other.md)")
                == [
                    .init(target: "pic.PNG", markdown: false), .init(target: "doc.pdf", markdown: true),
                ])
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/img/a.png", "P")
        try write(v + "/Projects/diagram.png", "P")
        try write(v + "/Projects/img/c.png", "P")
        try write(
            v + "/Plan.md",
            "![[diagram.png]] ![[Projects/diagram.png]] ![[A.png]] ![[missing.png]] ![[missing.png]]\n"
                + "![](img/a.png) ![](img/b.png) ![](/img/a.png) `![[code.png]]`\n")
        try write(v + "/Projects/Ideas.md", "![](img/c.png) ![](../img/a.png) ![](../img/zz.png) ![](img/a.png)\n")
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.created == 2)
        #expect(
            summary.missingAttachments == [
                MissingAttachment(file: "Plan.md", link: "missing.png"),
                MissingAttachment(file: "Plan.md", link: "img/b.png"),
                MissingAttachment(file: "Projects/Ideas.md", link: "../img/zz.png"),
            ], "\(summary.missingAttachments)")
        #expect(
            summary.warnings == [
                "3 linked attachments are not in the folder (missing.png in Plan.md, img/b.png in Plan.md, "
                    + "../img/zz.png in Projects/Ideas.md): the links lead nowhere until the files are added"
            ])
        // Once the files are there, nothing is said.
        try write(v + "/img/b.png", "P")
        try write(v + "/img/zz.png", "P")
        try write(v + "/attachments/missing.png", "P")
        #expect(try s.book.importMarkdown(from: v).missingAttachments == [])
    }

    @Test("a file skipped as invalid is not counted as gone from the folder; a deleted one is")
    func skippedIsNotMissing() throws {
        let s = try InterchangeScratch()
        let dir = s.path + "/v"
        for name in ["a", "b", "c"] { try write(dir + "/\(name).md", "# \(name)\n") }
        #expect(try s.book.importMarkdown(from: dir).created == 3)
        try write(dir + "/a.md", "---\ntags: [x\n---\n")
        try FileManager.default.removeItem(atPath: dir + "/b.md")
        let summary = try s.book.importMarkdown(from: dir, skipInvalid: true)
        #expect(summary.skipped.map(\.file) == ["a.md"] && summary.missingFiles == 1 && summary.unchanged == 1)
    }

    @Test("a folder whose path is not UTF-8 is refused: two such folders would record one place")
    func nonUTF8Folder() throws {
        let s = try InterchangeScratch()
        // "bad\xFF" made with the raw bytes, reached through a symbolic link with a UTF-8 name.
        var raw = Array((s.path + "/bad").utf8CString.dropLast())
        raw.append(CChar(bitPattern: 0xFF))
        raw.append(0)
        #expect(mkdir(raw, 0o700) == 0)
        let inside = raw.dropLast() + Array("/a.md".utf8CString).map { $0 }
        let fd = open(Array(inside), O_CREAT | O_WRONLY, 0o600)
        #expect(fd >= 0)
        close(fd)
        #expect(symlink(raw, s.path + "/link") == 0)
        #expect(throws: NotesError.self) { try s.book.importMarkdown(from: s.path + "/link") }
        #expect(try s.allNotes().isEmpty)
    }

    @Test("a bad file is refused by name and nothing is imported")
    func badFiles() throws {
        let cases: [(String, String, String)] = [
            (
                "a.md", "---\ntitle: x\n",
                "a.md: the front matter has no closing --- line; add one after its last entry; nothing was imported"
            ),
            (
                "b.md", "---\ntitle: [unclosed\n---\n",
                "b.md: front matter line 3, column 1: did not find expected ',' or ']' (while parsing a flow sequence that began on line 2, column 8); nothing was imported"
            ),
            (
                "c.md", "---\npinned: maybe\n---\n",
                #"c.md: pinned must be true or false, not "maybe"; nothing was imported"#
            ),
        ]
        for (name, content, message) in cases {
            let s = try InterchangeScratch()
            let dir = s.path + "/md"
            try write(dir + "/0-good.md", "# Good\n")
            try write(dir + "/" + name, content)
            do {
                try s.book.importMarkdown(from: dir)
                Issue.record("accepted \(name)")
            } catch {
                #expect(error.description == message)
            }
            #expect(try s.head == 0)
        }
        // A file over the limit says which limit, and how to raise it.
        let small = try InterchangeScratch(maxBodyBytes: 16)
        try write(small.path + "/md/big.md", String(repeating: "x", count: (1 << 16) + 17))
        do {
            try small.book.importMarkdown(from: small.path + "/md")
            Issue.record("accepted a file over the limit")
        } catch {
            #expect(
                error.description
                    == "big.md: the file is over 65552 bytes (a body may hold 16; raise it with NOTES_BODY_LIMIT=BYTES or `notes config set body-limit BYTES`); nothing was imported"
            )
        }
        let s = try InterchangeScratch()
        let dir = s.path + "/md"
        try write(dir + "/x.md", "---\nid: 11111111-1111-4111-8111-111111111111\n---\n")
        try write(dir + "/y.md", "---\nid: 11111111-1111-4111-8111-111111111111\n---\n")
        #expect(throws: NotesError.self) { try s.book.importMarkdown(from: dir) }
        try Data([0x23, 0x20, 0xFF]).write(to: URL(filePath: dir + "/y.md"))
        do { try s.book.importMarkdown(from: dir) } catch {
            #expect(error.description == "y.md: the file is not valid UTF-8; nothing was imported")
        }
        #expect(try s.head == 0)
    }

    @Test("inline #tags as Obsidian finds them: not in code, not numbers, not inside words")
    func inlineTags() {
        let body = """
            # Heading is not a tag
            #start of line, mid #mid/dle/ and #Mid again, #1984 but #y2k; a#b &#123; url/#frag
            `#code` and ```#inline``` then #after-code. #旅行。 #emoji🎉 #under_score
            ```
            #fenced
            ```
                #indented
            \t#tabbed
            ~~~
            #tilde
            ~~~
            [caveats]: #caveats
            <!-- #todo --> #visible <!-- a
            #spanning --> #after-comment
            #end\r
            """
        #expect(
            MarkdownNote.inlineTags(body) == [
                "start", "mid/dle", "Mid", "y2k", "after-code", "旅行", "emoji🎉", "under_score", "visible",
                "after-comment", "end",
            ])
        #expect(MarkdownNote.inlineTags("no tags here") == [])
        // A definition's line is passed over only where the links read a definition: right under
        // a paragraph's line it is that paragraph's text (before 2026-12-07 it was passed over).
        #expect(MarkdownNote.inlineTags("Foo\n[bar]: #tagged\n\n[baz]: #anchor\n[qux]: #next\n") == ["tagged"])
        // Emoji are tag characters, as Obsidian has them (before 2026-12-07 `#🚀launch` was no tag,
        // and an emoji ended one): a sequence joined or modified is one character; general
        // punctuation and the ideographic full stop end a tag.
        #expect(
            MarkdownNote.inlineTags("#🚀launch #done✅ #🚀 #👩🏽‍💻/work #🇫🇷trip #wow‼ #ok。 #1️⃣ #2026🎉")
                == ["🚀launch", "done✅", "🚀", "👩🏽‍💻/work", "🇫🇷trip", "wow", "ok", "2026🎉"])
        // A symbol drawn as text is no emoji, though Unicode gives it the Emoji property (before
        // 2026-12-07 `#©` and `#™` were tags); asked to be drawn as emoji (U+FE0F, a skin tone)
        // it is one.
        #expect(
            MarkdownNote.inlineTags("#© #™ #®x #a©b #↔ #b↔c #❤️love #☝🏽up")
                == ["a", "b", "❤️love", "☝🏽up"])
        // A code span of two or more backticks holding `<!--` opens no comment: before
        // 2026-12-06 each backtick was an edge of a span, and the tags after it were hidden.
        #expect(
            MarkdownNote.inlineTags("``<!--`` #one `` `<!--` `` #two ```a``<!--``` #three\n#four")
                == ["one", "two", "three", "four"])
        // A backtick that no run closes is a backtick: the rest of its line is no code.
        #expect(MarkdownNote.inlineTags("a ` b #five ``c`` #six") == ["five", "six"])
        // A code span over two lines of a paragraph: its `<!--` opens no comment (before
        // 2026-12-07 the tags after it were hidden), and its own text is code.
        #expect(MarkdownNote.inlineTags("a `span #in\nx <!-- still` #seven\n#eight") == ["seven", "eight"])
        #expect(MarkdownNote.inlineTags("a ``span\nstill `\nx <!--`` #nine") == ["nine"])
        // `<!--` first on a line starts an HTML block, which ends the paragraph (CommonMark): the
        // backtick above is a backtick, and the comment hides what follows it.
        #expect(MarkdownNote.inlineTags("a `span #in\n<!-- still` #seven\n#eight") == ["in"])
        #expect(MarkdownNote.inlineTags("a ` #in\n<!-- ` -->\nb #after") == ["in", "after"])
        // A run that no line of its paragraph closes is backticks: a blank line, a heading or a
        // list item ends the paragraph.
        for end in ["\n\n", "\n# Head ", "\n- item "] {
            #expect(MarkdownNote.inlineTags("a ` #ten" + end + "b` #eleven") == ["ten", "eleven"], "\(end)")
        }
        // So does a setext heading's underline: the heading's backtick is a backtick.
        #expect(MarkdownNote.inlineTags("a ` #ten\n===\nb` #eleven") == ["ten", "eleven"])
        // And a block quote's first line.
        #expect(MarkdownNote.inlineTags("a ` #ten\n> b` #eleven") == ["ten", "eleven"])
        // A heading right under a list item ends the list: the indented line after it is code.
        #expect(MarkdownNote.inlineTags("- item #item\n# Heading\n    #code\n#after") == ["item", "after"])
        // A file's byte-order mark stays first in the body; it starts no word and no line (a
        // new-user trial found `#start` missed and a fenced `#incode` taken after one).
        #expect(MarkdownNote.inlineTags("\u{FEFF}#start of body") == ["start"])
        #expect(MarkdownNote.inlineTags("\u{FEFF}```\n#incode [[notalink]]\n```\n#after") == ["after"])
        #expect(WikiLink.parse("\u{FEFF}```\n[[notalink]]\n```\n[[real]]").map(\.target) == [.title("real")])
        #expect(WikiLink.parse("\u{FEFF}[[first]]").map(\.target) == [.title("first")])
    }

    @Test(
        "#tags of nested list items (indented by a tab or 4 spaces) and of a paragraph's indented lines are tags; indented code and a list item's fenced block are not"
    )
    func inlineTagsIndented() {
        // Obsidian nests list items with a tab: before 2026-12-06 every tag of a nested item was
        // taken for indented code and dropped by an import (a new user's trial).
        let body = """
            - parent #top
            \t- child #tabchild
            \t\t- grandchild #tabgrand
                - spaces #spacechild
                    ```
                    #infence in the item's fenced block
                    ```
                - after the fence #afterfence

            1. step #step
               continued #stepcont

            Para
                continued #lazycont

                real indented code #realcode
            \tstill code #stillcode
            # Heading
                code after a heading #codeafterheading
            #notaheading
                continued #aftertagline
            <!--
                -->
            #afteroutdentedcomment
            """
        #expect(
            MarkdownNote.inlineTags(body) == [
                "top", "tabchild", "tabgrand", "spacechild", "afterfence", "step", "stepcont", "lazycont",
                "notaheading", "aftertagline", "afteroutdentedcomment",
            ])
    }

    @Test("#words in a fenced block of a block quote (an Obsidian callout's code) are no tags")
    func inlineTagsInQuotedFence() {
        // Before 2026-12-06 an import tagged a note with every `#include` of a callout's code (a
        // new user's trial).
        let body = """
            > [!example] Build #callout
            > ```c
            > #include <stdio.h>
            > ```
            > after the block #quoted
            >> ~~~
            >> #nested
            >> ~~~
            > ```
            > #unclosed
            out of the quote #out
            """
        #expect(MarkdownNote.inlineTags(body) == ["callout", "quoted", "out"])
    }

    @Test("a list ends at a line out of its items after their fenced block: indented code after it is code")
    func inlineTagsAfterListFence() {
        // Before 2026-12-06 the list went on to the next blank line followed by an outdented
        // one, so the indented code below was taken for the item's text.
        let body = "- item #item\n    ```\n    #infence\n    ```\n<!-- note -->\n\n    #code\n\nafter #after"
        #expect(MarkdownNote.inlineTags(body) == ["item", "after"])
        #expect(WikiLink.parse(body.replacing("#", with: "[[x]] ")).map(\.line) == [0, 8])
    }

    @Test("titles: setext headings, HTML entities and escapes, no heading from a comment, ... ends front matter")
    func titles() throws {
        func title(_ text: String) throws -> String {
            let md = try MarkdownNote.parse(text)
            return MarkdownNote.title(frontMatter: md.title, body: md.body, fileStem: "stem").title
        }
        #expect(try title("Intro line\n\nThe Title\n=====\n\ntext\n") == "The Title")
        #expect(try title("\nThe Title\n===\n") == "The Title")
        #expect(try title("# A &amp; B \\*esc\\* &lt;x&gt;\n") == "A & B *esc* <x>")
        #expect(try title("<!--\n# hidden\n-->\n# Shown\n") == "Shown")
        #expect(try title("<!-- # hidden -->\nno heading\n") == "stem")
        #expect(try title("---\ntitle: Dots\n...\nbody\n") == "Dots")
        #expect(try MarkdownNote.parse("---\ntitle: Dots\n...\nbody\n").body == "body\n")
    }

    @Test("a tags string is a list of names, quoted or not (quotes do not change a YAML value)")
    func tagStrings() throws {
        for value in [
            "work, home", "\"work, home\"", "'work, home'", "\"#work, #home\"", "[work, home]",
            "[\"#work\", home]", "\"work home\"",
        ] {
            #expect(try MarkdownNote.parse("---\ntags: \(value)\n---\nbody\n").tags == ["work", "home"], "\(value)")
        }
        #expect(try MarkdownNote.parse("---\ntags: \"solo\"\n---\n").tags == ["solo"])
        #expect(try MarkdownNote.parse("---\ntags: null\n---\n").tags == [])
    }

    @Test("two folders' notes of one path exported into one folder: each has its file, none removed by the other")
    func twoNotesOfOnePathExported() throws {
        let s = try InterchangeScratch()
        try write(s.path + "/A/P/Plan.md", "plan A\n")
        try write(s.path + "/B/P/Plan.md", "plan B\n")
        let out = s.path + "/E"
        try s.book.importMarkdown(from: s.path + "/A")
        _ = try s.book.exportMarkdown(to: out)
        try s.book.importMarkdown(from: s.path + "/B")
        #expect(try s.book.exportMarkdown(to: out).files == 2)
        // Each note's text is in a file of the folder (the first export's file of note A was
        // removed after note B was written at its path, before).
        let texts = try files(out).map { try MarkdownNote.parse(read(out + "/" + $0)).body }.sorted()
        #expect(texts == ["plan A\n", "plan B\n"])
        #expect(try files(out).count == 2)
    }

    @Test("a note taken out of the category its file's folder gave comes back from an export without one")
    func uncategorizedInAFolder() throws {
        let s = try InterchangeScratch()
        try write(s.path + "/V/Projects/Plan.md", "plan\n")
        try write(s.path + "/V/Projects/Kept.md", "kept\n")
        try s.book.importMarkdown(from: s.path + "/V")
        let plan = try #require(try s.allNotes().first { $0.title == "Plan" })
        let kept = try #require(try s.allNotes().first { $0.title == "Kept" })
        try s.book.categorize(plan.id, as: nil)
        let out = s.path + "/E"
        try s.book.exportMarkdown(to: out)
        let t = try InterchangeScratch()
        try t.book.importMarkdown(from: out)
        #expect(try t.book.note(plan.id).category == nil)
        #expect(try t.book.categoryName(t.book.note(kept.id).category) == "Projects")
        // Read back unchanged, and once its body is edited: the note stays out of the category.
        #expect(try s.book.importMarkdown(from: out).unchanged == 2)
        try write(out + "/Projects/Plan.md", try read(out + "/Projects/Plan.md") + "more\n")
        #expect(try s.book.importMarkdown(from: out).updated == 1)
        #expect(try s.book.note(plan.id).category == nil && s.book.note(plan.id).body == "plan\nmore\n")
        // Exported into its own folder, then edited there.
        let own = s.path + "/V"
        try s.book.exportMarkdown(to: own)
        try write(own + "/Projects/Plan.md", try read(own + "/Projects/Plan.md") + "again\n")
        #expect(try s.book.importMarkdown(from: own).updated == 1)
        #expect(try s.book.note(plan.id).category == nil && s.book.note(plan.id).body == "plan\nmore\nagain\n")
        // A note of no category at the top of the folder is written as before, without the key.
        let loose = try s.book.add(title: "Loose", body: "x")
        try s.book.exportMarkdown(to: out)
        let file = try #require(try files(out).first { !$0.contains("/") && $0.contains("loose") })
        #expect(try !read(out + "/" + file).contains("category"))
        #expect(try s.book.importMarkdown(from: out).unchanged == 3)
        #expect(try s.book.note(loose.id).version == 1)
    }

    @Test("a category named like a Markdown file gets a folder no note's file is written at, and comes back whole")
    func categoryNamedLikeAFile() throws {
        let s = try InterchangeScratch()
        try write(s.path + "/V/Plan.md", "plan\n")
        try write(s.path + "/V/Index.MD", "index\n")
        try s.book.importMarkdown(from: s.path + "/V")
        let a = try s.book.add(title: "One", body: "x", category: "Plan.md")
        let b = try s.book.add(title: "Two", body: "y", category: "index.md")
        let out = s.path + "/E"
        #expect(try s.book.exportMarkdown(to: out).files == 4)
        // The imported notes at their paths, the others in folders beside them.
        #expect(try MarkdownNote.parse(read(out + "/Plan.md")).body == "plan\n")
        #expect(try MarkdownNote.parse(read(out + "/Index.MD")).body == "index\n")
        let t = try InterchangeScratch()
        #expect(try t.book.importMarkdown(from: out).created == 4)
        #expect(try t.book.categoryName(t.book.note(a.id).category) == "Plan.md")
        #expect(try t.book.categoryName(t.book.note(b.id).category) == "index.md")
        #expect(try t.allNotes().map(\.body).sorted() == ["index\n", "plan\n", "x", "y"])
    }

    @Test("the export itself refuses to write into the store's own folder, by a link too, before writing anything")
    func exportNeverWritesIntoStoreFolder() throws {
        let s = try InterchangeScratch()
        // This scratch store lives in `s.path`: a folder inside it may take an export (the
        // command line refuses one), but no file may land in the store's folder itself.
        _ = try s.book.add(title: "One", body: "x", category: "link")
        _ = try s.book.add(title: "Two", body: "y")
        let data = try Data(contentsOf: URL(fileURLWithPath: s.path + "/data.mdb"))
        let out = s.path + "/md"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        #expect(symlink(s.path, out + "/link") == 0)
        for (dir, folder, itself, what) in [
            (s.path, s.path, true, "every note's file"), (s.path + "/.", s.path + "/.", true, "every note's file"),
            (out, out + "/link", true, "the files of the category \"link\""),
        ] {
            do {
                try s.book.exportMarkdown(to: dir)
                Issue.record("\(dir): exported")
            } catch {
                guard case .validation(.exportIntoStore(let f, let i, let w, _, let store)) = error else {
                    Issue.record("\(dir): \(error)")
                    continue
                }
                #expect(f == folder && i == itself && w == what && store == s.path, "\(error)")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.path + "/data.mdb")) == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["link"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path).sorted() == ["data.mdb", "lock.mdb", "md"])
        // Beside the link, a folder of its own: written.
        #expect(try s.book.exportMarkdown(to: out + "/notes").files == 2)
    }

    @Test("a category name of 300 bytes gets a folder within a file system's 255, and comes back whole")
    func longCategoryFolder() throws {
        let s = try InterchangeScratch()
        let long = String(repeating: "漢", count: 100)
        let a = try s.book.add(title: String(repeating: "𠀀", count: 60), body: "x", category: long)
        let out = s.path + "/E"
        #expect(try s.book.exportMarkdown(to: out).files == 1)
        let file = try #require(try files(out).first)
        for part in file.split(separator: "/") { #expect(part.utf8.count <= 255, "\(part.utf8.count)") }
        let t = try InterchangeScratch()
        try t.book.importMarkdown(from: out)
        let back = try #require(try t.allNotes().first)
        #expect(back.id == a.id && back.title == a.title)
        #expect(try t.book.categoryName(back.category) == long)
    }

    @Test(
        "a file that names its note by id, renamed in the folder: its note records the new path, a new file at the old path is a new note"
    )
    func fileWithIDRenamed() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/Untitled.md", "first\n")
        try write(v + "/Other.md", "other\n")
        try s.book.importMarkdown(from: v)
        _ = try s.book.exportMarkdown(to: v)
        let id = try #require(try s.allNotes().first { $0.sourcePath == "Untitled.md" }?.id)
        #expect(rename(v + "/Untitled.md", v + "/Groceries.md") == 0)
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.movedFiles == 1 && summary.missingFiles == 0 && summary.unchanged == 2, "\(summary)")
        #expect(try s.book.note(id).sourcePath == "Groceries.md")
        // The next export leaves the file where the user put it.
        _ = try s.book.exportMarkdown(to: v)
        #expect(try files(v) == ["Groceries.md", "Other.md"])
        // A new file at the old path, the renamed one first or not: each keeps its note.
        try write(v + "/Untitled.md", "new\n")
        try write(v + "/A.md", String(try read(v + "/Groceries.md")))
        #expect(unlink(v + "/Groceries.md") == 0)
        let again = try s.book.importMarkdown(from: v)
        #expect(again.created == 1 && again.movedFiles == 1, "\(again)")
        #expect(try s.book.note(id).sourcePath == "A.md")
        #expect(try s.book.note(id).body == "first\n")
        _ = try s.book.exportMarkdown(to: v)
        #expect(try files(v) == ["A.md", "Other.md", "Untitled.md"])
        #expect(try MarkdownNote.parse(read(v + "/Untitled.md")).body == "new\n")
    }

    @Test("a file with an id renamed onto the path of a note whose file is gone: imports after it change nothing twice")
    func renamedOntoAGonePath() throws {
        let s = try InterchangeScratch()
        let vault = s.path + "/V"
        try write(vault + "/a.md", "A\n")
        try write(vault + "/b.md", "B\n")
        try s.book.importMarkdown(from: vault)
        let a = try #require(try s.allNotes().first { $0.body == "A\n" })
        let b = try #require(try s.allNotes().first { $0.body == "B\n" })
        // The files get ids; b.md is deleted, and a.md renamed to its name.
        try s.book.exportMarkdown(to: vault)
        try FileManager.default.removeItem(atPath: vault + "/b.md")
        #expect(try s.book.importMarkdown(from: vault).missingFiles == 1)
        try FileManager.default.moveItem(atPath: vault + "/a.md", toPath: vault + "/b.md")
        #expect(try s.book.importMarkdown(from: vault).movedFiles == 1)
        #expect(try s.book.note(a.id).sourcePath == "b.md")
        // Written over by an editor that drops the front matter: b.md is a's file.
        for round in 0..<4 {
            try write(vault + "/b.md", "A, edited \(round)\n")
            #expect(try s.book.importMarkdown(from: vault).updated == 1)
            let head = try s.head
            let again = try s.book.importMarkdown(from: vault)
            #expect(try s.head == head, "round \(round): the import again changed \(again)")
            #expect(try s.book.note(a.id).body == "A, edited \(round)\n", "round \(round)")
            #expect(try s.book.note(b.id).body == "B\n", "round \(round)")
        }
        // Exported into the folder again, each note gets a file (one b.md, the other a name
        // of its own), and b.md is renamed: both notes record their files' paths at once.
        try s.book.exportMarkdown(to: vault)
        try FileManager.default.moveItem(atPath: vault + "/b.md", toPath: vault + "/moved.md")
        #expect(try s.book.importMarkdown(from: vault).movedFiles == 2)
        let head = try s.head
        #expect(try s.book.importMarkdown(from: vault).unchanged == 2)
        #expect(try s.head == head)
        #expect(try s.book.note(a.id).sourcePath != s.book.note(b.id).sourcePath)
    }

    @Test("a file whose name cannot be written back, exported into its own folder: read again, one note, not two")
    func unwritableNameExportedHome() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/V"
        try write(v + "/a\nb.md", "x\n")
        for _ in 0..<2 {
            try s.book.importMarkdown(from: v)
            _ = try s.book.exportMarkdown(to: v)
        }
        let summary = try s.book.importMarkdown(from: v)
        #expect(summary.created == 0, "\(summary)")
        #expect(try s.allNotes().count == 1)
        #expect(try files(v).count == 2)
    }

    @Test("a body of thousands of #words: every one a tag, once, in order")
    func manyInlineTags() throws {
        let s = try InterchangeScratch()
        let words = (0..<3000).map { "#t\($0)" } + ["#T0", "#t1"]
        try write(s.path + "/V/h.md", words.joined(separator: " ") + "\n")
        try s.book.importMarkdown(from: s.path + "/V")
        let note = try #require(try s.allNotes().first)
        #expect(note.tags.count == 3000)
        #expect(try s.book.importMarkdown(from: s.path + "/V").unchanged == 1)
    }

    @Test("a vault's Markdown links between files are links: from each file's folder, by file name, through edits")
    func markdownLinksInVault() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        let files = [
            "index.md": """
            # Index

            See [the plan](Projects/Plan.md), [notes](<Projects/Meeting Notes.md>).
            Again [actions](Projects/Meeting%20Notes.md#Actions), and [gone](Gone.md).
            Not links: [site](https://example.com/Plan.md) ![pic](Projects/Plan.md) `[code](Projects/Plan.md)`

            """,
            "Projects/Plan.md": "# Plan\n\nBack to [index](../index.md) and [meeting](Meeting%20Notes.md).\n",
            "Projects/Meeting Notes.md": "# Meeting Notes\n\nSee [plan](./Plan.md), and [[Plan]].\n",
            // A link by file name alone, from another folder (Obsidian's shortest form).
            "Daily/today.md": "# today\n\n[short](Plan.md)\n",
        ]
        for (path, text) in files { try write(v + "/" + path, text) }
        _ = try s.book.importMarkdown(from: v)
        let byPath = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.sourcePath ?? "", $0.id) })
        let (index, plan, meeting, today) = (
            try #require(byPath["index.md"]), try #require(byPath["Projects/Plan.md"]),
            try #require(byPath["Projects/Meeting Notes.md"]), try #require(byPath["Daily/today.md"])
        )
        // Each link as written, and the id of the note it leads to (nil: none).
        func leads(_ id: Identifier) throws -> [String: Identifier?] {
            var out: [String: Identifier?] = [:]
            for l in try s.book.links(of: id) {
                let target: Identifier? = if case .note(let n) = l.target { n.id } else { nil }
                out.updateValue(target, forKey: l.link.text)
            }
            return out
        }
        #expect(
            try leads(index) == [
                "[the plan](Projects/Plan.md)": plan, "[notes](<Projects/Meeting Notes.md>)": meeting,
                "[actions](Projects/Meeting%20Notes.md#Actions)": meeting, "[gone](Gone.md)": Identifier?.none,
            ])
        #expect(try leads(plan) == ["[index](../index.md)": index, "[meeting](Meeting%20Notes.md)": meeting])
        #expect(try leads(today) == ["[short](Plan.md)": plan])
        func backlinks(_ id: Identifier) throws -> [Identifier] { try s.book.backlinks(of: id).map(\.source.id) }
        #expect(Set(try backlinks(plan)) == [index, meeting, today])
        #expect(
            try s.book.backlinks(of: meeting).map(\.line).sorted() == [
                "Again [actions](Projects/Meeting%20Notes.md#Actions), and [gone](Gone.md).",
                "Back to [index](../index.md) and [meeting](Meeting%20Notes.md).",
                "See [the plan](Projects/Plan.md), [notes](<Projects/Meeting Notes.md>).",
            ])
        #expect(try s.book.missingLinks().map(\.link.text) == ["[gone](Gone.md)"])
        #expect(!(try s.book.linkedNotes().isEmpty))
        #expect(try s.book.links(of: index, asOf: s.clock.micros.withLock { $0 }) == (try s.book.links(of: index)))

        // A renamed note keeps its file's path: the links still lead to it, bodies unchanged.
        _ = try s.book.edit(plan, title: "Roadmap")
        #expect(try leads(index)["[the plan](Projects/Plan.md)"] == .some(plan))
        #expect(Set(try backlinks(plan)) == [index, meeting, today])
        // An edit that drops a link drops its backlink; a note in the trash still links.
        _ = try s.book.edit(meeting, body: "# Meeting Notes\n\nNothing here.\n")
        #expect(Set(try backlinks(plan)) == [index, today])
        _ = try s.book.trash(index)
        #expect(try s.book.backlinks(of: plan).first { $0.source.id == index }?.source.status == .trashed)
        #expect(try s.book.backlinks(of: meeting).map(\.source.id) == [index, index, plan], "by title, then line")
        #expect(
            try s.book.backlinks(of: plan, asOf: s.clock.micros.withLock { $0 }) == (try s.book.backlinks(of: plan)))
        #expect(try s.book.verify().isEmpty)

        // Export writes each body back byte for byte, its links as written.
        let out = s.path + "/out"
        try s.book.exportMarkdown(to: out)
        let exported = try read(out + "/Projects/Plan.md")
        #expect(exported.hasSuffix(try #require(files["Projects/Plan.md"])))
    }

    @Test("a vault's reference links between files are links, resolved as inline ones from the file's folder")
    func referenceLinksInVault() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        let files = [
            "index.md": "# Index\n",
            "Projects/Meeting Notes.md": "# Meeting Notes\n",
            // Before 2026-12-07 these were text.
            "Projects/Plan.md": """
            # Plan

            See [the index][idx], [Meeting notes][] and [gone].

            [idx]: ../index.md
            [meeting notes]: <Meeting Notes.md> "the meeting"
            [gone]: Gone.md
            """,
        ]
        for (path, text) in files { try write(v + "/" + path, text) }
        _ = try s.book.importMarkdown(from: v)
        let byPath = Dictionary(uniqueKeysWithValues: try s.allNotes().map { ($0.sourcePath ?? "", $0.id) })
        let (index, plan, meeting) = (
            try #require(byPath["index.md"]), try #require(byPath["Projects/Plan.md"]),
            try #require(byPath["Projects/Meeting Notes.md"])
        )
        var leads: [String: Identifier?] = [:]
        for l in try s.book.links(of: plan) {
            let target: Identifier? = if case .note(let n) = l.target { n.id } else { nil }
            leads.updateValue(target, forKey: l.link.text)
        }
        #expect(leads == ["[the index][idx]": index, "[Meeting notes][]": meeting, "[gone]": Identifier?.none])
        #expect(try s.book.backlinks(of: index).map(\.source.id) == [plan])
        #expect(try s.book.backlinks(of: meeting).map(\.source.id) == [plan])
        #expect(try s.book.missingLinks().count == 1)
    }

    @Test("two vaults with the same paths: each Markdown link leads to the file of its own vault")
    func markdownLinksStayInTheirVault() throws {
        let s = try InterchangeScratch()
        for (vault, name) in [("w1", "B one"), ("w2", "B two")] {
            try write(s.path + "/" + vault + "/a.md", "# A\n\nSee [x](b.md).\n")
            try write(s.path + "/" + vault + "/b.md", "# \(name)\n\nbeta\n")
            _ = try s.book.importMarkdown(from: s.path + "/" + vault)
        }
        let notes = try s.allNotes()
        #expect(notes.count == 4)
        func note(_ vault: String, _ path: String) throws -> Identifier {
            try #require(
                notes.first { $0.sourcePath == path && $0.properties["vault"]?.hasSuffix("/" + vault) == true }
            ).id
        }
        let (a1, b1) = (try note("w1", "a.md"), try note("w1", "b.md"))
        let (a2, b2) = (try note("w2", "a.md"), try note("w2", "b.md"))
        func target(_ id: Identifier, asOf instant: Int64? = nil) throws -> String? {
            if case .note(let n) = try s.book.links(of: id, asOf: instant).first?.target { return n.title }
            return nil
        }
        // Before 2026-12-07 both led to w1's b.md ("B one"): only the path within the vault was
        // compared.
        #expect(try target(a1) == "B one")
        #expect(try target(a2) == "B two")
        #expect(try s.book.backlinks(of: b1).map(\.source.id) == [a1])
        #expect(try s.book.backlinks(of: b2).map(\.source.id) == [a2])
        #expect(try s.book.missingLinks().isEmpty)
        #expect(try s.book.linkedNotes() == [a1, b1, a2, b2])
        let now = s.clock.micros.withLock { $0 }
        #expect(try target(a2, asOf: now) == "B two")
        #expect(try s.book.backlinks(of: b1, asOf: now).map(\.source.id) == [a1])
        #expect(try s.book.backlinks(of: b2, asOf: now).map(\.source.id) == [a2])
        #expect(try s.book.linkedNotes(asOf: now) == [a1, b1, a2, b2])

        // With its own vault's b.md in the trash, w2's link still leads there; gone from the
        // store's notes of that path altogether (its file renamed), the other vault's is next.
        _ = try s.book.trash(b2)
        #expect(try target(a2) == "B two")
        try s.book.setProperty(b2, key: "source", value: "c.md")
        #expect(try target(a2) == "B one")
        #expect(Set(try s.book.backlinks(of: b1).map(\.source.id)) == [a1, a2])
        #expect(try s.book.backlinks(of: b1, asOf: s.clock.micros.withLock { $0 }) == (try s.book.backlinks(of: b1)))
        #expect(try s.book.verify().isEmpty)
    }

    @Test("two vaults whose names differ only in Unicode form (NFC, NFD): each link leads to its own vault's file")
    func markdownLinksStayInTheirVaultByBytes() throws {
        let s = try InterchangeScratch()
        // Two folders to the file system (and to the import, which compares places as bytes),
        // one String to Swift's ==, which compares canonical equivalents equal.
        let composed = s.path + "/caf\u{E9}"
        let decomposed = s.path + "/cafe\u{301}"
        for (vault, name) in [(composed, "B composed"), (decomposed, "B decomposed")] {
            #expect(mkdir(vault, 0o755) == 0)
            try write(vault + "/a.md", "# A \(name)\n\nSee [x](b.md).\n")
            try write(vault + "/b.md", "# \(name)\n\nbeta\n")
            _ = try s.book.importMarkdown(from: vault)
        }
        let notes = try s.allNotes()
        #expect(notes.count == 4)
        func note(_ title: String) throws -> Identifier { try #require(notes.first { $0.title == title }).id }
        let (a1, b1) = (try note("A B composed"), try note("B composed"))
        let (a2, b2) = (try note("A B decomposed"), try note("B decomposed"))
        func target(_ id: Identifier, asOf instant: Int64? = nil) throws -> String? {
            if case .note(let n) = try s.book.links(of: id, asOf: instant).first?.target { return n.title }
            return nil
        }
        let now = s.clock.micros.withLock { $0 }
        for instant in [nil, now] {
            // Before 2026-12-07 (review-s30) both led to the first vault's b.md.
            #expect(try target(a1, asOf: instant) == "B composed")
            #expect(try target(a2, asOf: instant) == "B decomposed")
            #expect(try s.book.backlinks(of: b1, asOf: instant).map(\.source.id) == [a1])
            #expect(try s.book.backlinks(of: b2, asOf: instant).map(\.source.id) == [a2])
            #expect(try s.book.linkedNotes(asOf: instant) == [a1, b1, a2, b2])
        }
        #expect(try s.book.verify().isEmpty)
    }

    @Test("a vault inside another's folder: a Markdown link leads to the very file, whichever vault its note is of")
    func markdownLinksAcrossNestedVaults() throws {
        func target(_ s: InterchangeScratch, _ id: Identifier, asOf instant: Int64? = nil) throws -> String? {
            if case .note(let n) = try s.book.links(of: id, asOf: instant).first?.target { return n.title }
            return nil
        }
        func note(_ notes: [Note], _ title: String) throws -> Identifier {
            try #require(notes.first { $0.title == title }).id
        }
        // The inner folder first: its notes keep it as their place when the outer one is
        // imported, so the outer folder's `c.md` links to a note of the inner vault.
        do {
            let s = try InterchangeScratch()
            let outer = s.path + "/outer"
            let inner = outer + "/sub"
            try write(outer + "/c.md", "# C\n\nSee [y](sub/b.md).\n")
            try write(outer + "/b.md", "# Top B\n")
            try write(inner + "/b.md", "# Sub B\n")
            try write(inner + "/a.md", "# A\n\nSee [z](b.md).\n")
            _ = try s.book.importMarkdown(from: inner)
            _ = try s.book.importMarkdown(from: outer)
            let notes = try s.allNotes()
            #expect(notes.count == 4)
            let (a, c, topB, subB) = (
                try note(notes, "A"), try note(notes, "C"), try note(notes, "Top B"), try note(notes, "Sub B")
            )
            #expect(notes.first { $0.id == subB }?.sourcePath == "b.md")
            let now = s.clock.micros.withLock { $0 }
            for instant in [nil, now] {
                // Before (review-s30) C's `sub/b.md` led to the outer `b.md` ("Top B", its file
                // name read as a title, of C's own vault first).
                #expect(try target(s, a, asOf: instant) == "Sub B")
                #expect(try target(s, c, asOf: instant) == "Sub B")
                #expect(Set(try s.book.backlinks(of: subB, asOf: instant).map(\.source.id)) == [a, c])
                #expect(try s.book.backlinks(of: topB, asOf: instant).isEmpty)
                #expect(try s.book.linkedNotes(asOf: instant) == [a, c, subB])
                #expect(try s.book.missingLinks(asOf: instant).isEmpty)
            }
            #expect(try s.book.verify().isEmpty)
        }
        // The outer folder first, then a file new to the inner folder imported from it: its
        // link's `b.md` is the inner folder's, whose note is the outer vault's `sub/b.md`.
        do {
            let s = try InterchangeScratch()
            let outer = s.path + "/outer"
            let inner = outer + "/sub"
            try write(outer + "/b.md", "# Top B\n")
            try write(inner + "/b.md", "# Sub B\n")
            _ = try s.book.importMarkdown(from: outer)
            try write(inner + "/e.md", "# E\n\nSee [w](b.md).\n")
            _ = try s.book.importMarkdown(from: inner)
            let notes = try s.allNotes()
            #expect(notes.count == 3)
            let (e, topB, subB) = (try note(notes, "E"), try note(notes, "Top B"), try note(notes, "Sub B"))
            #expect(notes.first { $0.id == subB }?.sourcePath == "sub/b.md")
            #expect(notes.first { $0.id == e }?.sourcePath == "e.md")
            let now = s.clock.micros.withLock { $0 }
            for instant in [nil, now] {
                // Before (review-s30) it led to the outer `b.md`: the same path in another vault.
                #expect(try target(s, e, asOf: instant) == "Sub B")
                #expect(try s.book.backlinks(of: subB, asOf: instant).map(\.source.id) == [e])
                #expect(try s.book.backlinks(of: topB, asOf: instant).isEmpty)
            }
            #expect(try s.book.verify().isEmpty)
        }
    }

    @Test("files whose names differ in case or accents only: each Markdown link leads to the file it spells")
    func markdownLinksBySpelling() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        // Two files each to Linux (and `café`/`cafe` to macOS too), one name folded.
        try write(v + "/Plan.md", "# Upper\n")
        try write(v + "/plan.md", "# Lower\n")
        try write(v + "/cafe.md", "# Plain\n")
        try write(v + "/caf\u{E9}.md", "# Accented\n")
        try write(v + "/sub/Note.md", "# Sub upper\n")
        try write(v + "/sub/note.md", "# Sub lower\n")
        try write(
            v + "/a.md",
            "# A\n\n[u](Plan.md) [l](plan.md) [p](cafe.md) [c](caf%C3%A9.md) [d](cafe%CC%81.md)\n"
                + "[su](sub/Note.md) [sl](sub/note.md) [other](PLAN.md)\n")
        _ = try s.book.importMarkdown(from: v)
        let notes = try s.allNotes()
        #expect(notes.count == 7)
        let a = try #require(notes.first { $0.title == "A" }).id
        let lower = try #require(notes.first { $0.title == "Lower" }).id
        func targets(asOf instant: Int64? = nil) throws -> [String] {
            try s.book.links(of: a, asOf: instant).map { link in
                if case .note(let n) = link.target { return n.title }
                return "-"
            }
        }
        let now = s.clock.micros.withLock { $0 }
        for instant in [nil, now] {
            // Before (review-s30) the path was compared folded only: each pair led to one note
            // (the first imported), `[l](plan.md)` to "Upper". A spelling no file has (`PLAN.md`)
            // still finds one, and so does a decomposed `é` (macOS's form of the name).
            #expect(
                try targets(asOf: instant) == [
                    "Upper", "Lower", "Plain", "Accented", "Accented", "Sub upper", "Sub lower", "Upper",
                ])
            #expect(try s.book.backlinks(of: lower, asOf: instant).map(\.link.text) == ["[l](plan.md)"])
            #expect(try s.book.linkedNotes(asOf: instant).count == 7)
        }
        #expect(try s.book.verify().isEmpty)
    }

    @Test("a folder imported again through another path to it (a bind mount) is the same folder: no note twice")
    func sameFolderThroughAnotherPath() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        try write(v + "/a.md", "# a\n\nalpha\n")
        try write(v + "/sub/b.md", "# b\n\nbeta\n")
        _ = try s.book.importMarkdown(from: v)
        // The notes as a first import through a bind mount of the folder records them: a path to
        // it that is not its real path (stood in for by a symbolic link, which the import would
        // resolve were it given one).
        let mount = s.path + "/mnt"
        #expect(symlink(v, mount) == 0)
        for note in try s.allNotes() { try s.book.setProperty(note.id, key: "vault", value: mount) }
        let before = try s.allNotes()
        // Before 2026-12-07 each file made a note again: places were compared as paths only.
        let again = try s.book.importMarkdown(from: v)
        #expect(again.created == 0 && again.unchanged == 2 && again.movedFrom.isEmpty, "\(again)")
        #expect(try s.allNotes() == before, "nothing recorded again")
        try write(v + "/a.md", "# a\n\nalpha, edited\n")
        let edited = try s.book.importMarkdown(from: v)
        #expect(edited.created == 0 && edited.updated == 1, "\(edited)")
        let notes = try s.allNotes()
        #expect(notes.count == 2)
        #expect(notes.allSatisfy { $0.properties["vault"] == mount })
        #expect(notes.first { $0.sourcePath == "a.md" }?.body == "# a\n\nalpha, edited\n")
    }

    /// Events as the 2026-11-29 build (0b7e71e) wrote them for `import-markdown` of a folder
    /// holding `A/Plan.md` and `hub.md`: a category for the folder, a note per file, no property
    /// (it recorded no file), `notes import-markdown` the command of each; then `extra` notes.
    private func legacyImport(_ s: InterchangeScratch, extra: [(title: String, body: String)] = []) throws {
        func line(_ n: Int, _ stream: String, _ type: String, _ schema: Int, _ data: String) -> [UInt8] {
            let id = "00000000-0000-4000-8000-0000000000" + (n < 16 ? "0" : "") + String(n, radix: 16)
            return Array(
                (#"{"eventId":"\#(id)","stream":"\#(stream)","version":1,"type":"\#(type)","schemaVersion":\#(schema),"recordedAt":"2026-11-29T10:00:0\#(n % 10).000000Z","metadata":{"actor":"ana@laptop","command":"notes import-markdown"},"data":\#(data)}"#)
                    .utf8)
        }
        let category = "cccccccc-0000-4000-8000-000000000001"
        var lines = [
            line(1, "category/\(category)", "CategoryCreated", 1, #"{"name":"A"}"#),
            line(
                2, "note/11111111-0000-4000-8000-000000000001", "NoteCreated", 2,
                ##"{"title":"Plan A","body":"# Plan A\n","pinned":false,"category":"\##(category)"}"##),
            line(
                3, "note/11111111-0000-4000-8000-000000000002", "NoteCreated", 2,
                ##"{"title":"Hub","body":"# Hub\n[[Plan]]\n","pinned":false,"category":null}"##),
        ]
        for (k, note) in extra.enumerated() {
            lines.append(
                line(
                    4 + k, "note/11111111-0000-4000-8000-00000000001\(k)", "NoteCreated", 2,
                    #"{"title":"\#(note.title)","body":"\#(note.body)","pinned":false,"category":null}"#))
        }
        _ = try s.book.importEvents(lines: lines)
    }

    @Test("notes an earlier build imported without recording their files are matched to them, not made again")
    func legacyImportMatched() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        try write(v + "/A/Plan.md", "# Plan A\n")
        try write(v + "/hub.md", "# Hub\n[[Plan]]\n")
        try legacyImport(s)
        // Before 2026-12-07 each file made a second note, and `[[Plan]]` (a file name) led nowhere.
        let again = try s.book.importMarkdown(from: v)
        #expect(again.created == 0 && again.legacyMatched == 2 && again.unchanged == 2, "\(again)")
        let notes = try s.allNotes()
        #expect(notes.count == 2)
        #expect(Set(notes.compactMap(\.sourcePath)) == ["A/Plan.md", "hub.md"])
        let plan = try #require(notes.first { $0.title == "Plan A" })
        let hub = try #require(notes.first { $0.title == "Hub" })
        #expect(try s.book.backlinks(of: plan.id).map(\.source.id) == [hub.id])
        // Recorded as a new import records them: the next import finds them by path.
        let third = try s.book.importMarkdown(from: v)
        #expect(third == MarkdownImportSummary(created: 0, updated: 0, unchanged: 2), "\(third)")
        try write(v + "/hub.md", "# Hub\n[[Plan]] edited\n")
        #expect(try s.book.importMarkdown(from: v).updated == 1)
        #expect(try s.allNotes().count == 2)
    }

    @Test("a file matching two notes an earlier build imported is left out, said why; one made here is no match")
    func legacyImportAmbiguous() throws {
        let s = try InterchangeScratch()
        let v = s.path + "/vault"
        try write(v + "/A/Plan.md", "# Plan A\n")
        try write(v + "/hub.md", "# Hub\n[[Plan]]\n")
        try write(v + "/mine.md", "# Mine\n")
        // The old build imported `hub.md` twice; `Mine` was made with `notes add`, not imported.
        try legacyImport(s, extra: [("Hub", "# Hub\\n[[Plan]]\\n")])
        _ = try s.book.add(title: "Mine", body: "# Mine\n")
        let again = try s.book.importMarkdown(from: v)
        #expect(again.created == 1 && again.legacyMatched == 1, "\(again)")
        #expect(again.skipped.map(\.file) == ["hub.md"])
        #expect(again.skipped.first?.reason.hasPrefix("an earlier build imported it as 2 notes") == true)
        #expect(try s.allNotes().count == 5)
        // One of the two trashed: the other is the file's.
        try s.book.trash(Identifier("11111111-0000-4000-8000-000000000010")!)
        let resolved = try s.book.importMarkdown(from: v)
        #expect(resolved.legacyMatched == 1 && resolved.created == 0 && resolved.skipped.isEmpty, "\(resolved)")
        #expect(try s.allNotes().count == 5)
    }
}
