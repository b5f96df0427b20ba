import Basics
import Dispatch
import EventStore
import FoundationEssentials
import Glibc
import SwiftEvolutionHistory
import TestSupport
import Testing

@testable import Notes
@testable import NotesInterchange

/// Imports that outgrow the store's map: a file, a pipe (as standard input is) and a `.gz`,
/// into new stores whose map starts at 1 MiB and is not grown ahead, so the write fills the
/// map and starts over several times. Each must import exactly what the file holds, whether a
/// note's events lie far apart or together, and the three must give the same store.
///
/// 20,000 events by default; 200,000 with `NOTES_LONG_TESTS=1` (the scenario that hung and was
/// refused before the write learned to start over).
@Suite("Large imports into a store that must grow")
struct LargeImportTests {
    static let long = ProcessInfo.processInfo.environment["NOTES_LONG_TESTS"] == "1"

    final class Scratch {
        let root: String
        init() throws {
            var template = Array("/tmp/notes-large.XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
            root = String(cString: try #require(made))
        }
        func path(_ name: String) -> String { root + "/" + name }
        deinit { _ = system("rm -rf '\(root)'") }
    }

    /// An export of `notes` notes, each created then edited `edits` times, written round by
    /// round (a note's events `notes` lines apart) or note by note.
    static func writeExport(to path: String, notes: Int, edits: Int, byRound: Bool) throws {
        var rng = SeededGenerator(seed: 15)
        func uuid() -> Identifier { Identifier(high: rng.next() & ~0xF000 | 0x4000, low: rng.next() >> 2 | 1 << 63) }
        let ids = (0..<notes).map { _ in uuid() }
        let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
        func text(_ n: Int, _ v: Int) -> String {
            (0..<40).map { words[($0 * 7 + n + v) % words.count] }.joined(separator: " ") + " \(n).\(v)\n"
        }
        let file = try AtomicFile(path: path)
        var out: [UInt8] = []
        var position: UInt64 = 0
        func line(_ n: Int, _ v: Int) {
            position += 1
            let data =
                v == 0
                ? EventFields([
                    ("title", .string("Note \(n)")), ("body", .string(text(n, v))), ("pinned", .bool(false)),
                    ("category", .null),
                ]) : EventFields([("body", .string(text(n, v)))])
            EventLine.write(
                position: position, id: uuid(), stream: Note.stream(ids[n]), version: UInt64(v + 1),
                type: v == 0 ? "NoteCreated" : "NoteBodyEdited", schemaVersion: v == 0 ? 2 : 1,
                recordedAt: 1_700_000_000_000_000 + Int64(position) * 1_000, metadata: EventMetadata(actor: "gen"),
                data: data, to: &out)
        }
        if byRound {
            for v in 0...edits { for n in 0..<notes { line(n, v) } }
        } else {
            for n in 0..<notes { for v in 0...edits { line(n, v) } }
        }
        try file.write(out)
        try file.commit(sync: false)
    }

    static func options() -> Notebook.Options {
        var o = Notebook.Options(actor: "large@test")
        o.clock = { 1_800_000_000_000_000 }
        o.initialMapBytes = 1 << 20
        o.reservesMapForImports = false
        return o
    }

    static func export(_ book: Notebook) throws -> [UInt8] {
        var out: [UInt8] = []
        try book.exportEvents { out += $0 }
        return out
    }

    /// Imports `path` through a pipe (what `notes import -` reads from a pipe), written by
    /// another thread.
    static func importThroughPipe(_ book: Notebook, _ path: String) throws -> ImportSummary {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let source = open(path, O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while source >= 0 {
                let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                if buffer.withUnsafeBytes({ writeFully(fd: writeEnd, UnsafeRawBufferPointer(rebasing: $0[0..<n])) })
                    != nil
                {
                    break
                }
            }
            close(source)
            close(writeEnd)
            done.signal()
        }
        defer {
            done.wait()
            close(readEnd)
        }
        return try book.importEvents(fromFile: "/dev/fd/\(readEnd)")
    }

    @Test("a file, a pipe and a .gz import the same events into stores that must grow", arguments: [true, false])
    func threeWays(byRound: Bool) throws {
        let scratch = try Scratch()
        let notes = Self.long ? 20_000 : 1_000
        let edits = 9
        let file = scratch.path("export.jsonl")
        try Self.writeExport(to: file, notes: notes, edits: edits, byRound: byRound)
        try #require(system("gzip -kf '\(file)'") == 0, "gzip is needed")
        var exports: [[UInt8]] = []
        for way in ["file", "pipe", "gz"] {
            let store = scratch.path("store-\(way)")
            let book = try Notebook(path: store, options: Self.options())
            let summary: ImportSummary
            switch way {
            case "file": summary = try book.importEvents(fromFile: file)
            case "pipe": summary = try Self.importThroughPipe(book, file)
            default: summary = try book.importEvents(fromFile: file + ".gz")
            }
            let total = notes * (edits + 1)
            #expect(summary == ImportSummary(events: total, appended: total, skipped: 0), "\(way)")
            #expect(book.store.environment.mapSize > 16 << 20, "\(way): the map grew")
            #expect(try book.stats().notes == notes, "\(way)")
            #expect(try book.verify().isEmpty, "\(way)")
            #expect(ImportParser.running(forStoreAt: store) == 0, "\(way)")
            let left = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
            #expect(left == ["data.mdb", "lock.mdb"], "\(way): \(left)")
            exports.append(try Self.export(book))
        }
        #expect(exports[0] == exports[1], "file and pipe")
        #expect(exports[0] == exports[2], "file and .gz")
        // Importing the same file again changes nothing.
        let again = try Notebook(path: scratch.path("store-file"), options: Self.options())
        let twice = try again.importEvents(fromFile: file)
        #expect(twice.appended == 0 && twice.skipped == notes * (edits + 1))
    }

    @Test("a refused import, by pipe or from a file, leaves no thread running, no temporary file and no event")
    func refusalLeavesNothing() throws {
        let scratch = try Scratch()
        let file = scratch.path("export.jsonl")
        try Self.writeExport(to: file, notes: 300, edits: 4, byRound: true)
        // The refused line is the last: everything before it has been appended when it is read.
        let bad = scratch.path("bad.jsonl")
        try #require(system("cp '\(file)' '\(bad)' && echo '{\"broken\":' >> '\(bad)'") == 0)
        for way in ["file", "pipe"] {
            let store = scratch.path("store-\(way)")
            let book = try Notebook(path: store, options: Self.options())
            let error = notebookError {
                _ = try way == "file" ? book.importEvents(fromFile: bad) : Self.importThroughPipe(book, bad)
            }
            #expect(
                error?.description.hasPrefix("line 1501: malformed JSON") == true,
                "\(way): \(String(describing: error))")
            #expect(try book.stats().events == 0, "\(way)")
            #expect(ImportParser.running(forStoreAt: store) == 0, "\(way)")
            let left = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
            #expect(left == ["data.mdb", "lock.mdb"], "\(way): \(left)")
        }
    }

    @Test("a line that does not continue its stream is refused with its line, whatever the map does")
    func versionGapRefused() throws {
        let scratch = try Scratch()
        let file = scratch.path("export.jsonl")
        try Self.writeExport(to: file, notes: 500, edits: 3, byRound: true)
        // Drop line 1200 (an edit of round 2): the note's next edit no longer continues its stream.
        let gapped = scratch.path("gapped.jsonl")
        try #require(system("sed '1200d' '\(file)' > '\(gapped)'") == 0)
        let book = try Notebook(path: scratch.path("store"), options: Self.options())
        let error = notebookError { _ = try book.importEvents(fromFile: gapped) }
        #expect(
            error?.description.contains("line 1699: version 4 does not continue") == true,
            "\(String(describing: error))")
        #expect(try book.stats().events == 0)
    }

    /// A vault of `files` Markdown files in 10 folders, in Obsidian's style: YAML front matter
    /// with a tag list and aliases, `#tags` and wiki links in a body of about a kilobyte.
    static func writeVault(to dir: String, files: Int) throws {
        var rng = SeededGenerator(seed: 21)
        let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
        for f in 0..<10 { try makeDirectories(dir + "/folder-\(f)") }
        for n in 0..<files {
            var text = "---\ntags:\n  - t\(rng.below(300))\n  - t\(rng.below(300))\naliases: [n\(n)]\n---\n"
            text += "# Note \(n)\n\n"
            for line in 0..<12 {
                text += (0..<12).map { words[($0 * 3 + line + n) % words.count] }.joined(separator: " ")
                text += " #w\(rng.below(500)) [[Note \(rng.below(files))]]\n"
            }
            let file = try AtomicFile(path: dir + "/folder-\(n % 10)/note-\(n).md")
            try file.write(Array(text.utf8))
            try file.commit(sync: false)
        }
    }

    @Test("an import into a new store grows the map ahead: its write runs once")
    func importRunsOnce() throws {
        let scratch = try Scratch()
        var options = Self.options()
        options.reservesMapForImports = true
        // An export file.
        let notes = Self.long ? 10_000 : 600
        let file = scratch.path("export.jsonl")
        try Self.writeExport(to: file, notes: notes, edits: 4, byRound: true)
        let book = try Notebook(path: scratch.path("store-jsonl"), options: options)
        #expect(try book.importEvents(fromFile: file).appended == notes * 5)
        #expect(book.store.environment.restartedWrites == 0)
        #expect(try book.verify().isEmpty)
        // A vault.
        let files = Self.long ? 10_000 : 600
        let vault = scratch.path("vault")
        try Self.writeVault(to: vault, files: files)
        let vaultBook = try Notebook(path: scratch.path("store-vault"), options: options)
        #expect(try vaultBook.importMarkdown(from: vault).created == files)
        #expect(vaultBook.store.environment.restartedWrites == 0)
        #expect(try vaultBook.verify().isEmpty)
        #expect(try vaultBook.missingLinks().isEmpty)
        // The same vault again, into the store it filled: nothing changes, in one write.
        #expect(try vaultBook.importMarkdown(from: vault).unchanged == files)
        #expect(vaultBook.store.environment.restartedWrites == 0)
    }

    @Test("an import-history into a new store grows the map ahead for its texts: its write runs once")
    func historyImportRunsOnce() throws {
        let scratch = try Scratch()
        var options = Self.options()
        options.reservesMapForImports = true
        // Proposals of 100 KB, each revised 4 times: 20 MB of texts in 200 events (the corpus'
        // texts average 20 KB an event). Before 2026-12-07 the map was grown
        // for 512 bytes an event, and the import ran again in a larger map.
        var lines: [String] = []
        for doc in 0..<40 {
            let words = (0..<20_000).map { "w\(($0 * 7 + doc) % 997)" }.joined(separator: " ")
            for revision in 0..<5 {
                lines.append(
                    #"{"doc":"proposals/\#(doc).md","commit":"c\#(doc)-\#(revision)","#
                        + #""time":"2016-01-0\#(revision + 1)T00:00:00Z","author":"A","#
                        + #""op":"\#(revision == 0 ? "create" : "edit")","title":"P\#(doc)","status":null,"#
                        + #""text":"Proposal P\#(doc)\n\#(words) r\#(revision)"}"#)
            }
        }
        let file = scratch.path("history.jsonl")
        let out = try AtomicFile(path: file)
        try out.write(Array((lines.joined(separator: "\n") + "\n").utf8))
        try out.commit(sync: false)
        let book = try Notebook(path: scratch.path("store-history"), options: options)
        // 40 documents of 5 revisions, and each document's path as its note's source.
        #expect(try book.importHistory(fromFile: file).appended == 240)
        #expect(book.store.environment.restartedWrites == 0)
        #expect(try book.verify().isEmpty)
    }
}
