// Foundation (not FoundationEssentials) for Process and FileManager: the agreement test runs
// `git merge-file`.
import Foundation
import TestSupport
import Testing
import TextDiff

@Suite("ThreeWayMerge")
struct ThreeWayMergeTests {
    private let labels = ThreeWayMerge.Labels(ours: "this device (v3)", theirs: "remote (v4)")

    /// A conflict's markers repeat for each hunk; past `limit` bytes the conflict is one hunk of
    /// both sides whole, when that is shorter (a sync's conflict must fit in one remote event).
    @Test func manyHunksPastTheLimitBecomeOne() {
        let base = String(repeating: "b\nb\nb\n", count: 50)
        let ours = String(repeating: "o\nb\nb\n", count: 50)
        let theirs = String(repeating: "t\nb\nb\n", count: 50)
        let hunked = ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, labels: labels)
        #expect(hunked.conflicts == 50)
        #expect(ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, labels: labels, limit: 1 << 20) == hunked)
        let whole = ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, labels: labels, limit: 1_000)
        #expect(
            whole
                == .init(
                    text: "<<<<<<< this device (v3)\n" + ours + "=======\n" + theirs + ">>>>>>> remote (v4)\n",
                    conflicts: 1))
        #expect(whole.text.utf8.count < hunked.text.utf8.count)
        // Without a final line feed, the markers still stand on lines of their own.
        let w = ThreeWayMerge.merge(
            base: "x\ny\nx\ny\nx", ours: "o\ny\no\ny\no", theirs: "t\ny\nt\ny\nt", labels: labels, limit: 0)
        #expect(w.text == "<<<<<<< this device (v3)\no\ny\no\ny\no\n=======\nt\ny\nt\ny\nt\n>>>>>>> remote (v4)\n")
        // One hunk already shorter than both sides whole stays as it is; a clean merge too.
        let one = ThreeWayMerge.merge(base: base, ours: "o\n" + base.dropFirst(2), theirs: "t\n" + base.dropFirst(2))
        #expect(
            ThreeWayMerge.merge(
                base: base, ours: "o\n" + base.dropFirst(2), theirs: "t\n" + base.dropFirst(2), limit: 0) == one)
        let clean = ThreeWayMerge.merge(base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n", limit: 0)
        #expect(clean == .init(text: "A\nb\nC\n", conflicts: 0))
    }

    /// Found by a new-user trial: the markers in a CRLF body ended in LF alone.
    @Test func markersTakeTheTextsLineEnding() {
        let r = ThreeWayMerge.merge(base: "a\r\nb\r\n", ours: "o\r\nb\r\n", theirs: "t\r\nb\r\n", labels: labels)
        #expect(r.text == "<<<<<<< this device (v3)\r\no\r\n=======\r\nt\r\n>>>>>>> remote (v4)\r\nb\r\n")
        let noEnding = ThreeWayMerge.merge(base: "a", ours: "o", theirs: "t\r\n", labels: labels)
        #expect(noEnding.text == "<<<<<<< this device (v3)\r\no\r\n=======\r\nt\r\n>>>>>>> remote (v4)\r\n")
        // Mixed texts get LF markers, whichever side has the CRLF.
        let lf = ThreeWayMerge.merge(base: "a\n", ours: "o\n", theirs: "t\r\n", labels: labels)
        #expect(lf.text == "<<<<<<< this device (v3)\no\n=======\nt\r\n>>>>>>> remote (v4)\n")
        let lf2 = ThreeWayMerge.merge(base: "a\r\n", ours: "o\r\n", theirs: "t\n", labels: labels)
        #expect(lf2.text == "<<<<<<< this device (v3)\no\r\n=======\nt\n>>>>>>> remote (v4)\n")
    }

    @Test func trivialSides() {
        #expect(ThreeWayMerge.merge(base: "a\n", ours: "a\n", theirs: "b\n").text == "b\n")
        #expect(ThreeWayMerge.merge(base: "a\n", ours: "b\n", theirs: "a\n").text == "b\n")
        #expect(ThreeWayMerge.merge(base: "a\n", ours: "c\n", theirs: "c\n").text == "c\n")
        #expect(ThreeWayMerge.merge(base: "", ours: "", theirs: "").text == "")
    }

    @Test func changesOfLinesApartMergeCleanly() {
        let base = "one\ntwo\nthree\nfour\nfive\n"
        let ours = "ONE\ntwo\nthree\nfour\nfive\n"
        let theirs = "one\ntwo\nthree\nfour\nFIVE\nsix\n"
        let r = ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(r.isClean)
        #expect(r.text == "ONE\ntwo\nthree\nfour\nFIVE\nsix\n")
    }

    @Test func insertionsAndDeletionsOnBothSides() {
        let base = "a\nb\nc\nd\ne\nf\ng\n"
        let ours = "a\nc\nd\ne\nf\ng\n"  // b removed
        let theirs = "a\nb\nc\nd\ne\nx\nf\ng\n"  // x inserted after e
        let r = ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(r == .init(text: "a\nc\nd\ne\nx\nf\ng\n", conflicts: 0))
    }

    @Test func sameChangeOnBothSidesIsTakenOnce() {
        let base = "a\nb\nc\n"
        let both = "a\nB\nc\n"
        let r = ThreeWayMerge.merge(base: base, ours: both + "d\n", theirs: "x\n" + both)
        #expect(r == .init(text: "x\na\nB\nc\nd\n", conflicts: 0))
    }

    @Test func overlappingChangesKeepBothBetweenMarkers() {
        let base = "title\nshared line\nend\n"
        let r = ThreeWayMerge.merge(
            base: base, ours: "title\nmy words\nend\n", theirs: "title\ntheir words\nend\n", labels: labels)
        #expect(r.conflicts == 1)
        #expect(
            r.text
                == "title\n<<<<<<< this device (v3)\nmy words\n=======\ntheir words\n>>>>>>> remote (v4)\nend\n")
    }

    @Test func adjacentChangesConflictAsGitHasThem() {
        let r = ThreeWayMerge.merge(base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nB\nc\n")
        #expect(r.conflicts == 1)
    }

    @Test func insertionsAtOnePlaceConflict() {
        let r = ThreeWayMerge.merge(base: "a\nb\n", ours: "a\nmine\nb\n", theirs: "a\ntheirs\nb\n")
        #expect(r.conflicts == 1)
        #expect(r.text.contains("mine\n=======\ntheirs\n"))
    }

    @Test func lastLineWithoutNewlineStaysReadable() {
        let r = ThreeWayMerge.merge(base: "a\nb", ours: "a\nmine", theirs: "a\ntheirs", labels: labels)
        #expect(r.conflicts == 1)
        #expect(r.text == "a\n<<<<<<< this device (v3)\nmine\n=======\ntheirs\n>>>>>>> remote (v4)\n")
    }

    @Test func everyTypedLineSurvivesAConflict() {
        let base = (0..<20).map { "line \($0)\n" }.joined()
        var ours = base.split(separator: "\n").map(String.init)
        var theirs = ours
        ours[5] = "ours five"
        ours[12] = "ours twelve"
        theirs[5] = "theirs five"
        theirs[17] = "theirs seventeen"
        let r = ThreeWayMerge.merge(
            base: base, ours: ours.joined(separator: "\n") + "\n", theirs: theirs.joined(separator: "\n") + "\n")
        #expect(r.conflicts == 1)
        for line in ["ours five", "ours twelve", "theirs five", "theirs seventeen"] {
            #expect(r.text.contains(line + "\n"))
        }
    }

    /// Random edits of random texts: whenever `git merge-file` merges cleanly, so do we, with the
    /// same text; whenever it finds conflicts, so do we.
    @Test func agreesWithGitMergeFile() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git") else {
            print("skipped: /usr/bin/git is not installed")
            return
        }
        var rng = SeededGenerator(seed: 20_261_202)
        let dir = FileManager.default.temporaryDirectory.appending(path: "merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var checked = 0
        for _ in 0..<60 {
            let base = (0..<Int(rng.next() % 12 + 3)).map { _ in "l\(rng.next() % 6)\n" }
            let ours = edit(base, &rng)
            let theirs = edit(base, &rng)
            let (b, o, t) = (base.joined(), ours.joined(), theirs.joined())
            let ourResult = ThreeWayMerge.merge(base: b, ours: o, theirs: t)
            let git = try gitMerge(base: b, ours: o, theirs: t, in: dir)
            #expect(
                ourResult.isClean == (git.conflicts == 0),
                "base \(b.debugDescription) ours \(o.debugDescription) theirs \(t.debugDescription)")
            if ourResult.isClean && git.conflicts == 0 {
                #expect(
                    ourResult.text == git.text,
                    "base \(b.debugDescription) ours \(o.debugDescription) theirs \(t.debugDescription)")
                checked += 1
            }
        }
        #expect(checked > 10)
    }

    private func edit(_ lines: [String], _ rng: inout SeededGenerator) -> [String] {
        var out = lines
        for _ in 0..<Int(rng.next() % 3 + 1) {
            let at = Int(rng.next() % UInt64(out.count + 1))
            switch rng.next() % 3 {
            case 0: out.insert("n\(rng.next() % 100)\n", at: at)
            case 1: if at < out.count { out.remove(at: at) }
            default: if at < out.count { out[at] = "c\(rng.next() % 100)\n" }
            }
        }
        return out
    }

    private func gitMerge(base: String, ours: String, theirs: String, in dir: URL) throws -> (
        text: String, conflicts: Int
    ) {
        let files = ["ours", "base", "theirs"].map { dir.appending(path: $0) }
        for (file, text) in zip(files, [ours, base, theirs]) { try Data(text.utf8).write(to: file) }
        let p = Process()
        p.executableURL = URL(filePath: "/usr/bin/git")
        p.arguments = ["merge-file", "-p"] + files.map(\.path)
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), Int(p.terminationStatus))
    }
}
