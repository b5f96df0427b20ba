import Basics
import EventStore
import Glibc
import NotesWorkload
import TestSupport
import Testing

@testable import Notes
@testable import NotesInterchange

/// The import's fast line reader must agree with the generic JSON path on every line it
/// accepts, and leave every other line to it (which then accepts or names the problem).
@Suite("Import: the fast line reader agrees with the generic parser")
struct ImportFastPathTests {
    /// The fast reader's event for `line`, or nil when it leaves the line to the generic path.
    static func fast(_ line: [UInt8], maxBodyBytes: Int = 1 << 20) -> ImportedEvent? {
        var schemas: [FastEventLine.Schema] = []
        return line.withUnsafeBufferPointer { b in
            FastEventLine.read(
                b, line: 1, schemas: &schemas, registry: NotesSchema.registry, maxBodyBytes: maxBodyBytes)
        }
    }

    static func generic(_ line: [UInt8], maxBodyBytes: Int = 1 << 20) -> Result<ImportedEvent, InterchangeError> {
        let batch = EventBatch(maxBodyBytes: maxBodyBytes)
        return line.withUnsafeBytes { b in
            Result { () throws(InterchangeError) in try batch.parseGeneric(b, line: 1) }
        }
    }

    /// Checks the two paths agree on `line`; returns whether the fast one accepted it.
    @discardableResult
    static func agree(_ line: [UInt8], maxBodyBytes: Int = 1 << 20, sourceLocation: SourceLocation = #_sourceLocation)
        -> Bool
    {
        guard let event = fast(line, maxBodyBytes: maxBodyBytes) else { return false }
        let reference = generic(line, maxBodyBytes: maxBodyBytes)
        #expect(
            reference == .success(event), "\(String(decoding: line, as: UTF8.self))", sourceLocation: sourceLocation)
        return true
    }

    @Test("every exported line, legacy ones included, takes the fast path and gives the generic event")
    func seedsTakeTheFastPath() throws {
        let seeds = try FuzzImportTests.seedLines()
        for seed in seeds { #expect(Self.agree(seed), "\(String(decoding: seed, as: UTF8.self))") }
    }

    @Test("white space, escapes, key order, upper-case ids and nulls: accepted alike or left to the generic path")
    func variants() throws {
        let base =
            #"{"position":3,"eventId":"6F1A0000-0000-4000-8000-000000000001","stream":"note/6f1a0000-0000-4000-8000-0000000000aa","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2025-01-01T00:00:00.5+02:00","metadata":{"actor":"a\u00e9\n","command":null,"causationId":null,"correlationId":"6f1a0000-0000-4000-8000-000000000003"},"data":{"title":"T \"q\" \ud83d\ude00","body":"line\nnext\t\/","pinned":true,"category":null}}"#
        #expect(Self.agree(Array(base.utf8)))
        let variants = [
            // White space everywhere JSON allows it.
            base.replacing("\",\"", with: "\" ,\n\"").replacing("\":", with: "\" : ").replacing("{", with: "{ \t")
                + " \r",
            // Keys in another order; data before type is left to the generic path.
            #"{"data":{"title":"T","body":"","pinned":false,"category":null},"type":"NoteCreated","schemaVersion":2,"eventId":"6f1a0000-0000-4000-8000-000000000001","stream":"note/6f1a0000-0000-4000-8000-0000000000aa","version":1,"recordedAt":"2025-01-01T00:00:00Z","metadata":{"actor":"x"}}"#,
            #"{"type":"NoteCreated","schemaVersion":2,"eventId":"6f1a0000-0000-4000-8000-000000000001","stream":"note/6f1a0000-0000-4000-8000-0000000000aa","version":1,"recordedAt":"2025-01-01T00:00:00Z","metadata":{"actor":"x"},"data":{"category":null,"pinned":false,"body":"","title":"T"}}"#,
            // An escaped key, a missing optional field, numbers the fast path does not read.
            base.replacing(#""eventId""#, with: #""event\u0049d""#),
            base.replacing(#","category":null"#, with: ""),
            base.replacing(#""position":3"#, with: #""position":18446744073709551615"#),
            base.replacing(#""version":1"#, with: #""version":1.0"#),
            base.replacing(#""version":1"#, with: #""version":1e0"#),
            base.replacing(#""version":1"#, with: #""version":01"#),
            base.replacing(#""schemaVersion":2"#, with: #""schemaVersion":-0"#),
            // Values the generic path refuses.
            base.replacing(#""title":"T"#, with: #""title":" T"#),
            base.replacing(#""body":"line"#, with: #""body":"\u0000"#),
            base.replacing(#""pinned":true"#, with: #""pinned":true,"pinned":true"#),
            base.replacing(#""actor""#, with: #""actor":"b","actor""#),
            base + "x",
            base.replacing("note/6f1a", with: "note/6F1A"),
        ]
        for v in variants { Self.agree(Array(v.utf8)) }
        // White space and other key orders (type before data) still take the fast path.
        #expect(Self.agree(Array(variants[0].utf8)))
        #expect(Self.agree(Array(variants[2].utf8)))
        #expect(!Self.agree(Array(variants[1].utf8)))
        // The body limit applies on both paths.
        Self.agree(Array(base.utf8), maxBodyBytes: 4)
        #expect(Self.fast(Array(base.utf8), maxBodyBytes: 4) == nil)
    }

    @Test("100,000 mutated lines: whatever the fast path accepts, the generic path accepts the same")
    func mutatedLinesAgree() throws {
        let seeds = try FuzzImportTests.seedLines()
        var rng = SeededGenerator(seed: 0xFA57_11E)
        var accepted = 0
        for _ in 0..<100_000 {
            let line = FuzzImportTests.mutate(seeds, &rng)
            if Self.agree(line, maxBodyBytes: 4096) { accepted += 1 }
        }
        // Some mutations keep a line valid (a changed letter in a body, an id digit).
        #expect(accepted > 1000, "\(accepted) accepted")
    }

    @Test("a batch gives the same events and errors with and without the fast path")
    func batchesAgree() throws {
        let seeds = try FuzzImportTests.seedLines()
        var rng = SeededGenerator(seed: 0xBA7C_FA57)
        for _ in 0..<2000 {
            let lines = (0..<(1 + rng.below(8))).map { _ in
                rng.below(2) == 0 ? seeds[rng.below(seeds.count)] : FuzzImportTests.mutate(seeds, &rng)
            }
            var a = EventBatch()
            var b = EventBatch()
            b.fastPath = false
            var ea: InterchangeError?
            var eb: InterchangeError?
            do { for l in lines { try a.add(line: l) } } catch { ea = error }
            do { for l in lines { try b.add(line: l) } } catch { eb = error }
            #expect(ea == eb)
            #expect(a.events == b.events)
        }
    }
}

/// `importEvents(fromFile:)` parses a regular file on another thread while appending: the
/// result and every refusal must be those of parsing everything first.
@Suite("Import: a file is parsed alongside appending, with the same outcome")
struct ImportFileTests {
    /// A workload's export: several parse chunks long, legacy events included.
    static func exported() throws -> (source: InterchangeScratch, lines: [[UInt8]]) {
        let source = try InterchangeScratch()
        var log = EventWorkload(
            EventWorkload.Spec(notes: 100, events: 1_500, categories: 5, legacyShare: 0.2, hotNoteVersions: 50))
        while let e = log.next() { try source.book.store.append([e.event], to: e.stream) }
        let bytes = try source.export()
        return (source, bytes.split(separator: 0x0A).map(Array.init))
    }

    static func write(_ lines: [[UInt8]], in scratch: InterchangeScratch) throws -> String {
        let path = scratch.path + "/import.jsonl"
        var bytes: [UInt8] = []
        for l in lines { bytes += l + [0x0A] }
        let f = try AtomicFile(path: path)
        try f.write(bytes)
        try f.commit(sync: false)
        return path
    }

    /// The outcome of importing `lines` from a file and from memory into fresh stores.
    static func outcomes(_ lines: [[UInt8]]) throws -> (file: String, memory: String, fileHead: UInt64) {
        let a = try InterchangeScratch()
        let path = try write(lines, in: a)
        let file: String
        do { file = "\(try a.book.importEvents(fromFile: path))" } catch { file = error.description }
        let b = try InterchangeScratch()
        let memory: String
        do { memory = "\(try b.book.importEvents(lines: lines))" } catch { memory = error.description }
        return (file, memory, try a.head)
    }

    @Test("a file imports the same events as its lines in memory; again it skips them all")
    func sameAsInMemory() throws {
        let (source, lines) = try Self.exported()
        let target = try InterchangeScratch()
        let path = try Self.write(lines, in: target)
        let summary = try target.book.importEvents(fromFile: path)
        #expect(summary == ImportSummary(events: lines.count, appended: lines.count, skipped: 0))
        #expect(try target.export() == source.export())
        #expect(try target.allNotes() == source.allNotes())
        let again = try target.book.importEvents(fromFile: path)
        #expect(again == ImportSummary(events: lines.count, appended: 0, skipped: lines.count))
    }

    @Test("a refused line late in the file wins over a version gap found early, and nothing is imported")
    func refusalWins() throws {
        let (_, lines) = try Self.exported()
        // An early event of a note whose stream goes on is left out: a gap found while
        // appending (a category's creation left out would be named by the first note filed
        // under it instead); line 1,400 is not JSON.
        func stream(_ line: [UInt8]) -> String {
            let text = String(decoding: line, as: UTF8.self)
            return String(text.split(separator: "\"stream\":\"", maxSplits: 1).last?.prefix(41) ?? "")
        }
        let cut = try #require(
            lines.indices.first { i in
                stream(lines[i]).hasPrefix("note/") && lines[(i + 1)...].contains { stream($0) == stream(lines[i]) }
            })
        #expect(cut < 100)
        var gap = lines
        gap.remove(at: cut)
        var both = gap
        both[1_399] = Array(#"{"position":"#.utf8)
        let refused = try Self.outcomes(both)
        #expect(refused.file == refused.memory)
        #expect(refused.file.hasPrefix("line 1400: malformed JSON"), "\(refused.file)")
        #expect(refused.fileHead == 0)
        // Without the bad line, the gap is what is named.
        let gapOnly = try Self.outcomes(gap)
        #expect(gapOnly.file == gapOnly.memory)
        #expect(gapOnly.file.contains("does not continue"), "\(gapOnly.file)")
        #expect(gapOnly.fileHead == 0)
        // A bad last line, and an id twice far apart.
        let last = try Self.outcomes(lines + [Array("{}".utf8)])
        #expect(last.file == last.memory && last.file.hasPrefix("line \(lines.count + 1): "))
        #expect(last.fileHead == 0)
        let twice = try Self.outcomes(lines + [lines[10]])
        #expect(twice.file == twice.memory && twice.file.contains("appears twice in the file (first on line 11)"))
        #expect(twice.fileHead == 0)
    }
}
