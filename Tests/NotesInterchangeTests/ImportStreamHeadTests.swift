import Basics
import EventStore
import Foundation
import Notes
import NotesInterchange
import TestSupport
import Testing

/// Imports that move one note's stream head many times in one write transaction, in runs and
/// interleaved: every event at the version it names, heads that equal the log, a store that
/// verifies.
@Suite("Imports that move one stream's head many times in one transaction")
struct ImportStreamHeadTests {
    /// Three notes edited in turn, then one edited in a run, pinned, tagged and archived.
    private func edited() throws -> InterchangeScratch {
        let s = try InterchangeScratch()
        let notes = try (0..<3).map { i in try s.book.add(title: "Note \(i)", body: "v0\n", category: "Work") }
        for round in 1...4 {
            for n in notes { try s.book.edit(n.id, body: "v\(round) of \(n.title)\n") }
        }
        for round in 5...8 { try s.book.edit(notes[1].id, body: "run \(round)\n") }
        _ = try s.book.pin(notes[1].id)
        _ = try s.book.tag(notes[1].id, with: ["a", "b"])
        _ = try s.book.archive(notes[2].id)
        return s
    }

    private func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map(Array.init)
    }

    /// Every note's version equals its stream's head in the log, and the store verifies.
    private func expectSound(_ s: InterchangeScratch, _ comment: Comment) throws {
        #expect(try s.book.verify().isEmpty, comment)
        for note in try s.allNotes() {
            let head = try s.book.store.read { txn throws in
                try s.book.store.streamVersion(Note.stream(note.id), in: txn)
            }
            #expect(head == note.version, comment)
        }
    }

    @Test("into an empty store, on top of a part of the file, and once more: the same bytes, heads and verify")
    func importsVerify() throws {
        let source = try edited()
        let file = try source.export()
        let all = lines(file)
        #expect(all.count > 20)

        let whole = try InterchangeScratch()
        #expect(try whole.book.importEvents(lines: all).appended == all.count)
        #expect(try whole.export() == file, "byte for byte")
        try expectSound(whole, "a whole import")

        // A part first (each note's first events), then the whole file: the import reads each
        // head from the store once, then moves it in the transaction.
        let resumed = try InterchangeScratch()
        try resumed.book.importEvents(lines: all.prefix(9))
        let summary = try resumed.book.importEvents(lines: all)
        #expect(summary.skipped == 9 && summary.appended == all.count - 9)
        #expect(try resumed.export() == file)
        try expectSound(resumed, "a resumed import")
        #expect(try resumed.book.importEvents(lines: all).appended == 0)
        try expectSound(resumed, "an import of nothing new")
    }

    @Test("a line that does not continue its stream, after the stream moved in the same import, is refused")
    func gapAfterMovesIsRefused() throws {
        let source = try edited()
        var all = lines(try source.export())
        // The last line (the third note's archiving, after its edits), its version moved one on.
        let line = String(decoding: all[all.count - 1], as: UTF8.self)
        let version = try #require(line.firstMatch(of: /"version":(\d+)/).flatMap { Int($0.1) })
        all[all.count - 1] = Array(
            line.replacing(#""version":\#(version)"#, with: #""version":\#(version + 1)"#).utf8)
        let target = try InterchangeScratch()
        #expect(throws: NotesError.self) { try target.book.importEvents(lines: all) }
        #expect(try target.head == 0, "nothing imported")
    }

    @Test("Markdown imports that create and then update notes with tags and a category verify")
    func markdownImportsVerify() throws {
        let s = try InterchangeScratch()
        let dir = s.path + "/md"
        try FileManager.default.createDirectory(atPath: dir + "/Work", withIntermediateDirectories: true)
        for i in 0..<5 {
            let text = "---\ntitle: \"Note \(i)\"\npinned: \(i % 2 == 0)\ntags: [a, b, c\(i)]\n---\nbody \(i) #d\n"
            try Data(text.utf8).write(to: URL(filePath: dir + "/Work/n\(i).md"))
        }
        #expect(try s.book.importMarkdown(from: dir).created == 5)
        try expectSound(s, "a first Markdown import")
        for i in 0..<5 {
            let text =
                "---\ntitle: \"Note \(i) again\"\npinned: \(i % 2 == 1)\ntags: [b, e]\n---\nbody \(i) changed #f\n"
            try Data(text.utf8).write(to: URL(filePath: dir + "/Work/n\(i).md"))
        }
        #expect(try s.book.importMarkdown(from: dir).updated == 5)
        try expectSound(s, "a second Markdown import")
        // An edit here after the imports continues each note's stream.
        let note = try #require(try s.allNotes().first)
        #expect(try s.book.edit(note.id, body: "here\n").version == note.version + 1)
        try expectSound(s, "an edit after the imports")
    }
}
