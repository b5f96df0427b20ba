// Foundation (not FoundationEssentials) for Process and FileManager: only this test runs
// external tools.
import Foundation
import Testing
import TextDiff

/// Checks our unified diffs against GNU tools on real edit histories: `patch` must turn every
/// old revision into the new one byte for byte, and our line counts must equal those of
/// `diff --minimal` (all minimal diffs of two texts add and remove the same numbers of lines).
@Suite("DiffPatchAgreement")
struct DiffPatchAgreementTests {
    /// The fields of a sample event this test needs (see Samples/README.md).
    struct SampleEvent: Decodable {
        let doc: String
        let op: String
        let from: String?
        let text: String?
    }

    /// Two revisions of one document to compare.
    struct Pair {
        let name: String
        let from: String
        let to: String
    }

    static let patchPath = "/usr/bin/patch"
    static let diffPath = "/usr/bin/diff"

    /// The repository root: three levels up from Tests/NotesTests/<this file>.
    static let repositoryRoot = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Texts of each document lineage (followed through renames), oldest first.
    static func lineages() throws -> [(path: String, texts: [String])] {
        let url = repositoryRoot.appending(path: "Samples/swift-evolution-sample.jsonl")
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        var lineages: [(path: String, texts: [String])] = []
        var live: [String: Int] = [:]  // path -> lineage index
        for line in data.split(separator: UInt8(ascii: "\n")) {
            let event = try decoder.decode(SampleEvent.self, from: Data(line))
            switch event.op {
            case "create":
                live[event.doc] = lineages.count
                lineages.append((event.doc, [event.text ?? ""]))
            case "edit", "rename":
                let previous = event.from ?? event.doc
                let index = try #require(live[previous], "\(event.op) of unknown path \(previous)")
                live[previous] = nil
                live[event.doc] = index
                lineages[index].texts.append(event.text ?? "")
            case "delete":
                live[event.doc] = nil
            default:
                Issue.record("unknown op \(event.op)")
            }
        }
        return lineages
    }

    /// Every consecutive pair of every lineage, each lineage's first against its last revision
    /// and back, and revisions five apart in the longest lineage.
    static func pairs() throws -> [Pair] {
        let lineages = try lineages()
        var pairs: [Pair] = []
        for (path, texts) in lineages {
            for index in texts.indices.dropFirst() {
                pairs.append(
                    Pair(
                        name: "\(path)@\(index - 1)->\(index)", from: texts[index - 1],
                        to: texts[index]))
            }
            if let first = texts.first, let last = texts.last, texts.count > 2 {
                pairs.append(Pair(name: "\(path)@first->last", from: first, to: last))
                pairs.append(Pair(name: "\(path)@last->first", from: last, to: first))
            }
        }
        if let longest = lineages.max(by: { $0.texts.count < $1.texts.count }) {
            for index in stride(from: 5, to: longest.texts.count, by: 3) {
                pairs.append(
                    Pair(
                        name: "\(longest.path)@\(index - 5)->\(index)",
                        from: longest.texts[index - 5], to: longest.texts[index]))
            }
        }
        return pairs
    }

    /// Runs a tool and returns its exit status and standard output.
    static func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> (
        status: Int32, output: Data
    ) {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Read before waiting: a full pipe would block the tool forever.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }

    /// Writes each pair's old text to `a/pNNNN` and new text to `b/pNNNN` under a fresh
    /// directory, runs `body`, and removes the directory.
    static func withPairFiles(_ pairs: [Pair], _ body: (URL) throws -> Void) throws {
        let fileManager = FileManager.default
        let root = fileManager.temporaryDirectory.appending(path: "notes-diff-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: root) }
        for side in ["a", "b", "work"] {
            try fileManager.createDirectory(
                at: root.appending(path: side), withIntermediateDirectories: true)
        }
        for (index, pair) in pairs.enumerated() {
            let name = fileName(index)
            try Data(pair.from.utf8).write(to: root.appending(path: "a/\(name)"))
            try Data(pair.from.utf8).write(to: root.appending(path: "work/\(name)"))
            try Data(pair.to.utf8).write(to: root.appending(path: "b/\(name)"))
        }
        try body(root)
    }

    static func fileName(_ index: Int) -> String {
        "p" + String(String(index + 10000).suffix(4))
    }

    /// Counts added and removed lines per file of a (multi-file) unified diff, reading hunks
    /// by their header counts so that a removed line starting with `--` is not taken for a
    /// file header. Files are keyed by the last path component of the `+++` line's name.
    static func counts(ofUnifiedDiff text: String) -> [String: DiffStat] {
        var result: [String: DiffStat] = [:]
        var file = ""
        var oldLeft = 0
        var newLeft = 0
        for line in lines(of: text) {
            if oldLeft > 0 || newLeft > 0 {
                switch line.first {
                case "-":
                    oldLeft -= 1
                    result[file, default: DiffStat(added: 0, removed: 0)].removed += 1
                case "+":
                    newLeft -= 1
                    result[file, default: DiffStat(added: 0, removed: 0)].added += 1
                case "\\":
                    break
                default:
                    oldLeft -= 1
                    newLeft -= 1
                }
            } else if line.hasPrefix("+++ ") {
                let name = line.dropFirst(4).split(separator: "\t").first ?? ""
                file = String(name.split(separator: "/").last ?? "")
            } else if line.hasPrefix("@@ -") {
                let fields = line.split(separator: " ")
                guard fields.count >= 3 else { continue }
                oldLeft = count(of: fields[1].dropFirst())
                newLeft = count(of: fields[2].dropFirst())
            }
        }
        return result
    }

    /// Splits at line feed bytes: splitting a `String` at `Character("\n")` would miss the line
    /// feeds inside `"\r\n"` grapheme clusters.
    static func lines(of text: String) -> [String] {
        text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    private static func count(of range: Substring) -> Int {
        let parts = range.split(separator: ",")
        return parts.count == 2 ? Int(parts[1]) ?? 0 : 1
    }

    @Test func patchTurnsEveryOldRevisionIntoTheNewOne() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.patchPath),
            "GNU patch is not installed at \(Self.patchPath): install Debian's `patch` package (apt-get install patch)"
        )
        let pairs = try Self.pairs()
        #expect(pairs.count > 300)
        try Self.withPairFiles(pairs) { root in
            var patch = ""
            for (index, pair) in pairs.enumerated() {
                let name = Self.fileName(index)
                patch += UnifiedDiff.render(
                    LineDiff.hunks(from: pair.from, to: pair.to), oldLabel: "a/\(name)",
                    newLabel: "b/\(name)")
            }
            try Data(patch.utf8).write(to: root.appending(path: "all.patch"))
            // --binary: take CRLF lines literally; -F0: no fuzz, every context line must match.
            let result = try Self.run(
                Self.patchPath, ["-p1", "--binary", "-F0", "-s", "-i", "../all.patch"],
                in: root.appending(path: "work"))
            #expect(
                result.status == 0,
                "patch failed: \(String(decoding: result.output, as: UTF8.self))")
            var mismatches: [String] = []
            for (index, pair) in pairs.enumerated() {
                let patched = try Data(
                    contentsOf: root.appending(path: "work/\(Self.fileName(index))"))
                if patched != Data(pair.to.utf8) { mismatches.append(pair.name) }
            }
            #expect(mismatches.isEmpty, "patched files differ from the new revision: \(mismatches)")
        }
    }

    @Test func lineCountsEqualMinimalGNUDiffAndMostHunksAreIdentical() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.diffPath), "GNU diff is not installed"
        )
        let pairs = try Self.pairs()
        try Self.withPairFiles(pairs) { root in
            let minimal = try Self.run(Self.diffPath, ["-ruaN", "--minimal", "a", "b"], in: root)
            #expect(minimal.status <= 1, "diff --minimal failed with status \(minimal.status)")
            let gnuCounts = Self.counts(
                ofUnifiedDiff: String(decoding: minimal.output, as: UTF8.self))

            let plain = try Self.run(Self.diffPath, ["-ruaN", "a", "b"], in: root)
            let gnuBodies = Self.hunkBodies(String(decoding: plain.output, as: UTF8.self))

            var identical = 0
            var changedPairs = 0
            for (index, pair) in pairs.enumerated() {
                let name = Self.fileName(index)
                let ours = LineDiff.stat(from: pair.from, to: pair.to)
                let gnu = gnuCounts[name] ?? DiffStat(added: 0, removed: 0)
                #expect(
                    ours == gnu,
                    "\(pair.name): ours +\(ours.added) -\(ours.removed), GNU +\(gnu.added) -\(gnu.removed)"
                )

                let rendered = UnifiedDiff.render(
                    LineDiff.hunks(from: pair.from, to: pair.to), oldLabel: "a", newLabel: "b")
                #expect(
                    Self.counts(ofUnifiedDiff: rendered)["b"] ?? DiffStat(added: 0, removed: 0)
                        == ours)
                guard !rendered.isEmpty else { continue }
                changedPairs += 1
                // Our rendering minus its two header lines against GNU's hunks.
                let body = Self.lines(of: rendered).dropFirst(2).joined(separator: "\n")
                if gnuBodies[name] == body { identical += 1 }
            }
            // Both tools run Myers' algorithm and slide changes the same way, so almost every
            // hunk is byte-identical; differences are ties between equally short scripts.
            #expect(changedPairs > 250)
            #expect(
                identical * 10 >= changedPairs * 9,
                "only \(identical) of \(changedPairs) diffs are identical to GNU's")
        }
    }

    /// The hunk text (everything after the `+++` line) of each file in `diff -r -u` output.
    static func hunkBodies(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var file = ""
        var body = ""
        var inBody = false
        for line in lines(of: text) {
            if line.hasPrefix("diff -") {
                if inBody { result[file] = body }
                inBody = false
                body = ""
                file = String(line.split(separator: "/").last ?? "")
            } else if !inBody && line.hasPrefix("+++ ") {
                inBody = true
            } else if inBody {
                body += line + "\n"
            }
        }
        if inBody { result[file] = String(body.dropLast()) }
        return result
    }
}
