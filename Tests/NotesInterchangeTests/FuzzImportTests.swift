import EventStore
import Glibc
import Notes
import NotesInterchange
import TestSupport
import Testing

/// Hostile import files: lines mutated from a real export (byte flips, splices, truncations,
/// absurd numbers, broken UTF-8, deep nesting) go through the import parser and, in batches,
/// through `Notebook.importEvents`. Every failure must be a typed error naming the line, and
/// nothing a refused import touches may change. Fixed seed; NOTES_LONG_TESTS=1 runs ten times
/// as many cases.
@Suite("Fuzz: the import parser")
struct FuzzImportTests {
    static let long = getenv("NOTES_LONG_TESTS").map { String(cString: $0) == "1" } ?? false

    /// Real lines of every current event type, exported from a notebook, plus legacy lines.
    static func seedLines() throws -> [[UInt8]] {
        let f = try NotebookFixture(stem: 0xF022)
        let a = try f.book.add(title: "Groceries", body: "- milk\n- eggs \u{1F95A}\n", category: "Home", pinned: true)
        let b = try f.book.add(title: "Plans", body: "")
        try f.book.edit(a.id, title: "Shopping", body: "- bread")
        try f.book.unpin(a.id)
        try f.book.archive(b.id)
        try f.book.unarchive(b.id)
        try f.book.trash(b.id)
        try f.book.untrash(b.id)
        try f.book.categorize(b.id, as: nil)
        try f.book.categorize(b.id, as: "Work")
        try f.book.renameCategory("Work", to: "Office")
        _ = try f.book.deleteCategory("Home")
        var out: [UInt8] = []
        try f.book.exportEvents { out += $0 }
        var lines = out.split(separator: 0x0A).map(Array.init)
        let legacy = [
            #"{"eventId":"6f1a0000-0000-4000-8000-000000000001","stream":"note/6f1a0000-0000-4000-8000-0000000000aa","version":1,"type":"NoteCreated","schemaVersion":1,"recordedAt":"2025-01-01T00:00:00Z","metadata":{"actor":"old"},"data":{"title":"Old","content":"legacy","isPinned":false}}"#,
            #"{"eventId":"6f1a0000-0000-4000-8000-000000000002","stream":"note/6f1a0000-0000-4000-8000-0000000000aa","version":2,"type":"NoteUpdated","schemaVersion":1,"recordedAt":"2025-01-01T00:00:01Z","metadata":{"actor":"old","command":null,"causationId":null},"data":{"title":"Old 2","content":"x"}}"#,
        ]
        lines += legacy.map { Array($0.utf8) }
        return lines
    }

    /// Fragments that stress the number, string and structure paths when spliced in.
    static let fragments: [[UInt8]] =
        [
            "99999999999999999999999999", "-1", "-0", "1e400", "1.5", "0x10", "18446744073709551616",
            "-9223372036854775809",
            "null", "true", "[]", "{}", "\"\"", "\"\\ud800\"", "\"\\u0000\"", "\"a\\\"b\"", ",", ":", "\"", "\\",
            String(repeating: "[", count: 5000), String(repeating: "{\"a\":", count: 3000), "\"note/\"",
            "\"category/x\"",
            "\"2026-02-30T25:61:61Z\"", "\"9999-12-31T23:59:59.999999999Z\"", "\"-0001-01-01T00:00:00Z\"",
        ].map { Array($0.utf8) } + [
            [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x00], [0xE2, 0x82],
        ]

    static func mutate(_ seeds: [[UInt8]], _ rng: inout SeededGenerator) -> [UInt8] {
        var line = seeds[rng.below(seeds.count)]
        for _ in 0...rng.below(3) {
            let at = line.isEmpty ? 0 : rng.below(line.count + 1)
            switch rng.below(9) {
            case 0 where !line.isEmpty:  // flip a bit
                let i = min(at, line.count - 1)
                line[i] ^= UInt8(1) << UInt8(rng.below(8))
            case 1:  // insert a random byte
                line.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
            case 2 where !line.isEmpty:  // delete a range
                let end = min(line.count, at + 1 + rng.below(16))
                line.removeSubrange(min(at, end)..<end)
            case 3:  // splice a fragment
                line.insert(contentsOf: fragments[rng.below(fragments.count)], at: at)
            case 4:  // replace the tail with another seed's tail (keys and values out of place)
                let other = seeds[rng.below(seeds.count)]
                let from = other.isEmpty ? 0 : rng.below(other.count)
                line = Array(line[..<at]) + other[from...]
            case 5:  // truncate
                line.removeSubrange(at...)
            case 6:  // replace a number with an absurd one
                if let digit = line.firstIndex(where: { $0 >= 0x30 && $0 <= 0x39 }) {
                    line.replaceSubrange(digit...digit, with: fragments[rng.below(8)])
                }
            case 7:  // swap a quoted value for a fragment
                if let q = line[at...].firstIndex(of: 0x22), let end = line[(q + 1)...].firstIndex(of: 0x22) {
                    line.replaceSubrange(q...end, with: fragments[rng.below(fragments.count)])
                }
            default:  // duplicate a slice (repeated keys, doubled objects)
                let end = min(line.count, at + rng.below(64))
                line.insert(contentsOf: line[at..<end], at: end)
            }
        }
        return line
    }

    @Test("100,000 mutated lines: each is accepted or refused with a typed error naming line 1, fast")
    func parserNeverTraps() throws {
        let seeds = try Self.seedLines()
        // Every seed is valid on its own.
        for seed in seeds {
            var batch = EventBatch()
            #expect(throws: Never.self) { try batch.add(line: seed) }
        }
        let cases = Self.long ? 1_000_000 : 100_000
        var rng = SeededGenerator(seed: 0x1A9_0F12)
        var accepted = 0
        var slowest = 0.0
        let started = monotonicSeconds()
        for _ in 0..<cases {
            let line = Self.mutate(seeds, &rng)
            var batch = EventBatch(maxBodyBytes: 4096)
            let t = monotonicSeconds()
            do {
                try batch.add(line: line)
                accepted += 1
                #expect(batch.events.count <= 1)
            } catch {
                // `throws(InterchangeError)`: the type is the compiler's promise; the content is ours.
                #expect(error.line == 1)
                #expect(!error.reason.isEmpty)
                #expect(error.description.hasSuffix("nothing was imported"))
            }
            slowest = max(slowest, monotonicSeconds() - t)
        }
        let elapsed = monotonicSeconds() - started
        #expect(slowest < 0.5, "one line took \(slowest) s")
        #expect(accepted > 0 && accepted < cases, "\(accepted) of \(cases) accepted")
        print("import fuzz: \(cases) lines, \(accepted) accepted, slowest \(Int(slowest * 1e6)) µs, \(elapsed) s")
    }

    @Test("mutated batches import all or nothing, and the store stays verified")
    func importsAllOrNothing() throws {
        let seeds = try Self.seedLines()
        let f = try NotebookFixture(stem: 0xF023)
        var rng = SeededGenerator(seed: 0xBA7C4)
        let batches = Self.long ? 3000 : 300
        var committed = 0
        for _ in 0..<batches {
            // Either a prefix of the real export (which continues its streams) with perhaps one
            // line mutated, or a few lines drawn at random: a refusal anywhere undoes the rest.
            var lines: [[UInt8]]
            if rng.below(2) == 0 {
                lines = Array(seeds.prefix(1 + rng.below(seeds.count)))
                if rng.below(2) == 0 { lines[rng.below(lines.count)] = Self.mutate(seeds, &rng) }
            } else {
                lines = (0..<(1 + rng.below(6))).map { _ in
                    rng.below(3) == 0 ? seeds[rng.below(seeds.count)] : Self.mutate(seeds, &rng)
                }
            }
            let before = try f.head
            let result = Result { () throws(NotesError) in try f.book.importEvents(lines: lines) }
            switch result {
            case .success(let summary):
                committed += 1
                #expect(try f.head == before + UInt64(summary.appended))
            case .failure(let error):
                #expect(try f.head == before, "a refused import appended events: \(error)")
                #expect(!error.description.isEmpty)
            }
        }
        #expect(try f.book.verify().isEmpty)
        print("import batches: \(batches) batches, \(committed) committed, \(try f.head) events")
    }

    @Test("pathological lines are refused quickly: deep nesting, a huge string, a million commas")
    func pathologicalLines() throws {
        let lines: [[UInt8]] = [
            Array(repeating: UInt8(ascii: "["), count: 1_000_000),
            Array("{\"eventId\":\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: 4 << 20) + [0x22, 0x7D],
            [0x7B] + Array(repeating: UInt8(ascii: ","), count: 1_000_000) + [0x7D],
            Array(repeating: 0xFF, count: 100_000),
            [],
            Array("   \t\r".utf8),
        ]
        for line in lines {
            var batch = EventBatch()
            let t = monotonicSeconds()
            do { try batch.add(line: line) } catch { #expect(error.line == 1) }
            #expect(monotonicSeconds() - t < 2, "a \(line.count)-byte line took too long")
            #expect(batch.events.isEmpty)
        }
    }
}
