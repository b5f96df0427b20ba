import FoundationEssentials
import Testing

@testable import TextDiff

@Suite("LineDiff")
struct LineDiffTests {
    /// Deterministic generator (SplitMix64) so random tests replay exactly.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    @Test("stat leaves out the lines both texts start and end with, and counts what a diff of the whole texts counts")
    func statOfTheMiddle() {
        var rng = Random(state: 2026)
        let vocabulary = ["a\n", "b\n", "c\n", "d\n", "\n", "a", "e\u{301}\n", "é\n"]
        for _ in 0..<3_000 {
            var old: [String] = (0..<rng.below(30)).map { _ in vocabulary[rng.below(vocabulary.count)] }
            // A line without a line feed only ends a text.
            old = old.enumerated().map { $0.offset < old.count - 1 && $0.element == "a" ? "a\n" : $0.element }
            var new = old
            for _ in 0..<rng.below(4) {
                let at = rng.below(new.count + 1)
                switch rng.below(3) {
                case 0: new.insert(vocabulary[rng.below(5)], at: at)
                case 1: if at < new.count { new.remove(at: at) }
                default: if at < new.count { new[at] = vocabulary[rng.below(5)] }
                }
            }
            new = new.enumerated().map { $0.offset < new.count - 1 && $0.element == "a" ? "a\n" : $0.element }
            let (a, b) = (old.joined(), new.joined())
            let whole = LineDiff.changes(from: TextLines(a), to: TextLines(b)).stat
            #expect(LineDiff.stat(from: a, to: b) == whole, "\(old) -> \(new)")
        }
    }

    private func render(_ old: String, _ new: String, context: Int = 3) -> String {
        UnifiedDiff.render(
            LineDiff.hunks(from: old, to: new, context: context), oldLabel: "a", newLabel: "b")
    }

    /// Rebuilds both sides from hunks that cover the whole text (infinite context).
    private func sides(of hunks: [DiffHunk]) -> (old: String, new: String) {
        var old = ""
        var new = ""
        for line in hunks.flatMap(\.lines) {
            let text = line.text + (line.hasNewline ? "\n" : "")
            if line.kind != .added { old += text }
            if line.kind != .removed { new += text }
        }
        return (old, new)
    }

    /// Applies hunks to `old` the way `patch` does, trusting the header numbers.
    private func apply(_ hunks: [DiffHunk], to old: String) -> String? {
        let oldLines = Array(TextLines(old))
        var out: [TextLine] = []
        var next = 0
        for hunk in hunks {
            let start = hunk.oldCount == 0 ? hunk.oldStart : hunk.oldStart - 1
            guard start >= next, start <= oldLines.count else { return nil }
            out += oldLines[next..<start]
            next = start
            for line in hunk.lines {
                let textLine = TextLine(text: line.text, hasNewline: line.hasNewline)
                switch line.kind {
                case .context, .removed:
                    guard next < oldLines.count, oldLines[next] == textLine else { return nil }
                    next += 1
                    if line.kind == .context { out.append(textLine) }
                case .added:
                    out.append(textLine)
                }
            }
        }
        out += oldLines[next...]
        return out.map { $0.text + ($0.hasNewline ? "\n" : "") }.joined()
    }

    @Test func splitsLinesKeepingCarriageReturnsAndMissingNewline() {
        #expect(TextLines("").isEmpty)
        #expect(Array(TextLines("a")) == [TextLine(text: "a", hasNewline: false)])
        #expect(Array(TextLines("a\n")) == [TextLine(text: "a", hasNewline: true)])
        #expect(
            Array(TextLines("\n\nx\r\ny\r"))
                == [
                    TextLine(text: "", hasNewline: true), TextLine(text: "", hasNewline: true),
                    TextLine(text: "x\r", hasNewline: true),
                    TextLine(text: "y\r", hasNewline: false),
                ])
    }

    @Test func identicalTextsGiveNoHunksAndAnEmptyRendering() {
        for text in ["", "a", "a\n", "a\r\nb\r\n", "x\ny\nz"] {
            #expect(LineDiff.hunks(from: text, to: text).isEmpty)
            #expect(render(text, text) == "")
            #expect(LineDiff.stat(from: text, to: text) == DiffStat(added: 0, removed: 0))
        }
    }

    @Test func emptyToTextAndBack() {
        #expect(render("", "a\nb\n") == "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n")
        #expect(render("a\nb\n", "") == "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-a\n-b\n")
        #expect(render("", "a\n") == "--- a\n+++ b\n@@ -0,0 +1 @@\n+a\n")
        #expect(
            render("", "a") == "--- a\n+++ b\n@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n")
        #expect(LineDiff.stat(from: "", to: "a\nb\n") == DiffStat(added: 2, removed: 0))
        #expect(LineDiff.stat(from: "a\nb", to: "") == DiffStat(added: 0, removed: 2))
    }

    @Test func singleLineChangeWithContext() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n"
        #expect(
            render(old, new) == "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        )
        #expect(render(old, new, context: 0) == "--- a\n+++ b\n@@ -5 +5 @@\n-5\n+five\n")
        #expect(LineDiff.stat(from: old, to: new) == DiffStat(added: 1, removed: 1))
    }

    @Test func zeroContextRangesNameTheLineBefore() {
        // GNU prints the line before an empty range: a deletion after line 2 is "+2,0".
        #expect(
            render("1\n2\n3\n4\n", "1\n2\n4\n", context: 0) == "--- a\n+++ b\n@@ -3 +2,0 @@\n-3\n")
        #expect(
            render("1\n2\n", "1\nnew\n2\n", context: 0) == "--- a\n+++ b\n@@ -1,0 +2 @@\n+new\n")
        #expect(render("1\n", "new\n1\n", context: 0) == "--- a\n+++ b\n@@ -0,0 +1 @@\n+new\n")
    }

    @Test func missingFinalNewlineOnEitherSide() {
        #expect(
            render("a\nb", "a\nb\n")
                == "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n")
        #expect(
            render("a\nb\n", "a\nb")
                == "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n")
        #expect(
            render("a\nb", "a\nc")
                == "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
                + "\\ No newline at end of file\n")
        // An unchanged last line without a newline is context, marked once.
        #expect(
            render("a\nb\nc", "A\nb\nc")
                == "--- a\n+++ b\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n")
        #expect(LineDiff.stat(from: "a", to: "a\n") == DiffStat(added: 1, removed: 1))
    }

    @Test func carriageReturnsAreKeptByteForByte() {
        let diff = render("x\r\ny\r\nz\r\n", "x\r\nY\r\nz\r\n")
        #expect(diff == "--- a\n+++ b\n@@ -1,3 +1,3 @@\n x\r\n-y\r\n+Y\r\n z\r\n")
        // Only the line ending changed: that is a change.
        #expect(LineDiff.stat(from: "a\r\nb\r\n", to: "a\nb\r\n") == DiffStat(added: 1, removed: 1))
    }

    @Test func comparesBytesNotCanonicalEquivalence() {
        let precomposed = "caf\u{E9}\n"
        let decomposed = "cafe\u{301}\n"
        #expect(precomposed == decomposed)  // Swift's String equality
        #expect(LineDiff.stat(from: precomposed, to: decomposed) == DiffStat(added: 1, removed: 1))
    }

    @Test func hunksMergeWhenContextsTouch() {
        func lines(_ changed: Set<Int>) -> String {
            (1...30).map { changed.contains($0) ? "changed \($0)\n" : "\($0)\n" }.joined()
        }
        let base = lines([])
        // Six unchanged lines between two changes: the two contexts of 3 cover them exactly.
        let six = LineDiff.hunks(from: base, to: lines([5, 12]))
        #expect(six.count == 1)
        #expect(six.map(\.numbers) == [[2, 14, 2, 14]])
        // Seven: GNU diff prints two hunks.
        let seven = LineDiff.hunks(from: base, to: lines([5, 13]))
        #expect(seven.map(\.oldStart) == [2, 10])
        #expect(seven.map(\.oldCount) == [7, 7])
        #expect(LineDiff.hunks(from: base, to: lines([5, 13]), context: 4).count == 1)
        #expect(LineDiff.hunks(from: base, to: lines([5, 6]), context: 0).count == 1)
        #expect(LineDiff.hunks(from: base, to: lines([5, 7]), context: 0).count == 2)
    }

    @Test func hunkAtFileEndsClipsContext() {
        let hunks = LineDiff.hunks(from: "1\n2\n3\n", to: "0\n1\n2\n3\n4\n")
        #expect(hunks.map(\.numbers) == [[1, 3, 1, 5]])
    }

    @Test func extremeContextValuesDoNotTrap() {
        let old = "a\nb\nc\nd\n"
        let new = "a\nB\nc\nd\n"
        let whole = LineDiff.hunks(from: old, to: new, context: Int.max)
        #expect(whole.count == 1)
        #expect(whole.first?.lines.count == 5)
        #expect(
            LineDiff.hunks(from: old, to: new, context: -5)
                == LineDiff.hunks(from: old, to: new, context: 0))
    }

    @Test func colorWrapsLinesButNotNewlines() {
        let diff = UnifiedDiff.render(
            LineDiff.hunks(from: "a\nb\n", to: "a\nc\n"), oldLabel: "old", newLabel: "new",
            color: true)
        let esc = "\u{1B}["
        #expect(
            diff
                == "\(esc)1m--- old\(esc)0m\n\(esc)1m+++ new\(esc)0m\n\(esc)36m@@ -1,2 +1,2 @@\(esc)0m\n"
                + " a\n\(esc)31m-b\(esc)0m\n\(esc)32m+c\(esc)0m\n")
    }

    @Test func hunksRoundTripThroughJSON() throws {
        let hunks = LineDiff.hunks(from: "a\nb", to: "a\r\nc\n")
        let data = try JSONEncoder().encode(hunks)
        #expect(try JSONDecoder().decode([DiffHunk].self, from: data) == hunks)
    }

    /// Random texts over small alphabets (many repeated lines, the hard case for a diff):
    /// whole-file hunks must reproduce both sides, hunks with context must apply, and the stat
    /// must count exactly the changed lines of the hunks.
    @Test func randomEditsReconstructAndApply() {
        var random = Random(state: 42)
        let alphabet = ["a", "b", "c", "", "a\r", "}", "d"]
        for _ in 0..<500 {
            let size = random.below(4) + 1
            var oldLines = (0..<random.below(30)).map { _ in alphabet[random.below(size + 1)] }
            var newLines = oldLines
            for _ in 0..<random.below(6) {
                let position = random.below(newLines.count + 1)
                switch random.below(3) {
                case 0: newLines.insert(alphabet[random.below(alphabet.count)], at: position)
                case 1 where position < newLines.count: newLines.remove(at: position)
                default: if position < newLines.count { newLines[position] = "x\(random.below(3))" }
                }
            }
            if random.below(4) == 0 { oldLines.append("") }  // may drop the final newline
            let old = oldLines.map { $0 + "\n" }.joined().dropLastNewline(random.below(5) == 0)
            let new = newLines.map { $0 + "\n" }.joined().dropLastNewline(random.below(5) == 0)

            let whole = sides(of: LineDiff.hunks(from: old, to: new, context: Int.max))
            #expect(whole.old == (old == new ? "" : old))
            #expect(whole.new == (old == new ? "" : new))
            for context in [0, 1, 3] {
                let hunks = LineDiff.hunks(from: old, to: new, context: context)
                #expect(
                    apply(hunks, to: old) == new,
                    "\(old.debugDescription) -> \(new.debugDescription)")
                let lines = hunks.flatMap(\.lines)
                let stat = LineDiff.stat(from: old, to: new)
                #expect(stat.added == lines.filter { $0.kind == .added }.count)
                #expect(stat.removed == lines.filter { $0.kind == .removed }.count)
                for hunk in hunks {
                    #expect(hunk.oldCount == hunk.lines.filter { $0.kind != .added }.count)
                    #expect(hunk.newCount == hunk.lines.filter { $0.kind != .removed }.count)
                }
            }
        }
    }

    /// Past the cost limit the search splits at its best guess instead of the optimal middle
    /// (GNU's heuristic for huge inputs). Forcing a tiny limit exercises that path: the script
    /// must still be a correct edit script, just possibly longer than the minimal one.
    @Test func costLimitedSearchStillGivesACorrectScript() {
        var random = Random(state: 11)
        var longer = 0
        for _ in 0..<300 {
            let old = (0..<random.below(120)).map { _ in random.below(4) }
            let new = (0..<random.below(120)).map { _ in random.below(4) }
            let minimal = MyersDiff.changes(old: old, new: new, idCount: 4)
            let limited = MyersDiff.changes(
                old: old, new: new, idCount: 4, costLimit: random.below(4) + 1)
            for changes in [minimal, limited] {
                let keptOld = zip(old, changes.removed).filter { !$0.1 }.map(\.0)
                let keptNew = zip(new, changes.added).filter { !$0.1 }.map(\.0)
                #expect(keptOld == keptNew)
            }
            let minimalCount = minimal.stat.added + minimal.stat.removed
            let limitedCount = limited.stat.added + limited.stat.removed
            #expect(limitedCount >= minimalCount)
            if limitedCount > minimalCount { longer += 1 }
        }
        #expect(longer > 0, "the cost limit never changed the result, so the path went untested")
    }

    @Test func minimalOnRepetitiveInput() {
        // One line moved down: a minimal diff removes one line and adds one.
        let old = "x\na\nb\nc\na\nb\nc\n"
        let new = "a\nb\nc\na\nx\nb\nc\n"
        #expect(LineDiff.stat(from: old, to: new) == DiffStat(added: 1, removed: 1))
    }

    @Test func fiveThousandLinesAreFast() {
        var random = Random(state: 7)
        let oldLines = (0..<5000).map { "line \($0) \(random.next() % 1000)" }
        var newLines = oldLines
        var inserted = 0
        var removed = 0
        for step in 0..<200 {
            let position = random.below(newLines.count)
            if step.isMultiple(of: 2) {
                newLines.insert("inserted \(step)", at: position)
                inserted += 1
            } else if newLines[position].hasPrefix("line") {
                newLines.remove(at: position)
                removed += 1
            }
        }
        let old = oldLines.joined(separator: "\n") + "\n"
        let new = newLines.joined(separator: "\n") + "\n"
        let unrelated = (0..<5000).map { "other \($0)\n" }.joined()

        let clock = ContinuousClock()
        let elapsed = clock.measure {
            let hunks = LineDiff.hunks(from: old, to: new)
            #expect(apply(hunks, to: old) == new)
            #expect(
                LineDiff.stat(from: old, to: new) == DiffStat(added: inserted, removed: removed))
            #expect(LineDiff.stat(from: old, to: unrelated) == DiffStat(added: 5000, removed: 5000))
            // Two-letter alphabet: nearly every line matches many others, the costly case.
            let ab = (0..<5000).map { _ in random.below(2) == 0 ? "a\n" : "b\n" }
            let ba = (0..<5000).map { _ in random.below(2) == 0 ? "a\n" : "b\n" }
            #expect(
                apply(LineDiff.hunks(from: ab.joined(), to: ba.joined()), to: ab.joined())
                    == ba.joined())
        }
        #expect(elapsed < .seconds(5), "diffing 5,000-line texts took \(elapsed)")
    }
}

extension String {
    /// Drops a final line feed byte; `hasSuffix("\n")` would miss the one in a `"\r\n"` cluster.
    fileprivate func dropLastNewline(_ drop: Bool) -> String {
        drop && utf8.last == UInt8(ascii: "\n")
            ? String(decoding: utf8.dropLast(), as: UTF8.self) : self
    }
}

extension DiffHunk {
    fileprivate var numbers: [Int] { [oldStart, oldCount, newStart, newCount] }
}
