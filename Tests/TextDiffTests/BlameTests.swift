import Testing
import TextDiff

@Suite("Blame")
struct BlameTests {
    private func owners(_ revisions: [String]) -> [Int] {
        Blame.attribute(revisions).map(\.revision)
    }

    @Test func noRevisionsAndOneRevision() {
        #expect(Blame.attribute([]).isEmpty)
        #expect(Blame.attribute([""]).isEmpty)
        #expect(
            Blame.attribute(["a\nb"])
                == [
                    BlameLine(text: "a", hasNewline: true, revision: 0),
                    BlameLine(text: "b", hasNewline: false, revision: 0),
                ])
    }

    @Test func handMadeHistory() {
        let revisions = [
            "a\nb\nc\n",  // 0
            "a\nB\nc\n",  // 1: b -> B
            "a\nB\nc\nd\n",  // 2: append d
            "x\na\nB\nc\nd\n",  // 3: prepend x
            "x\na\nB\nd\n",  // 4: delete c (nothing new)
            "x\na\nB\nd\ne\n",  // 5: append e
        ]
        #expect(owners(revisions) == [3, 0, 1, 2, 5])
        #expect(Blame.attribute(revisions).map(\.text) == ["x", "a", "B", "d", "e"])
        #expect(Blame.attribute(revisions, upTo: 2).map(\.revision) == [0, 1, 0, 2])
        #expect(Blame.attribute(revisions, upTo: 0).map(\.revision) == [0, 0, 0])
        #expect(Blame.attribute(revisions, upTo: 6).isEmpty)
        #expect(Blame.attribute(revisions, upTo: -1).isEmpty)
    }

    @Test func restoredLineBelongsToTheRestoringRevision() {
        // Like git blame: the line's current form was last introduced by revision 2.
        #expect(owners(["a\n", "b\n", "a\n"]) == [2])
        #expect(owners(["a\nkeep\n", "keep\n", "a\nkeep\n"]) == [2, 0])
    }

    @Test func newlineAndLineEndingChangesCountAsChanges() {
        #expect(owners(["a\nb", "a\nb\n"]) == [0, 1])
        #expect(owners(["a\r\nb\r\n", "a\nb\r\n"]) == [1, 0])
        #expect(Blame.attribute(["a\r\n"]).first?.text == "a\r")
    }

    @Test func emptiedAndRefilled() {
        #expect(owners(["a\nb\n", "", "b\nc\n"]) == [2, 2])
        #expect(owners(["", "", "a\n", ""]) == [])
    }

    /// Lines are unique, so the diff between consecutive revisions is unambiguous and the
    /// revision that wrote each line is known exactly: blame must find it.
    @Test func uniqueLinesAreAttributedToTheirAuthors() {
        var random = LineDiffTests.Random(state: 2024)
        var current: [(text: String, revision: Int)] = (0..<20).map { ("r0 line \($0)", 0) }
        var revisions = [current.map { $0.text + "\n" }.joined()]
        for revision in 1..<200 {
            for edit in 0..<(random.below(4) + 1) {
                let position = random.below(current.count + 1)
                let kind = current.count < 3 ? 0 : random.below(3)
                switch kind {
                case 0:
                    current.insert(("r\(revision) line \(edit)", revision), at: position)
                case 1 where position < current.count:
                    current.remove(at: position)
                default:
                    if position < current.count {
                        current[position] = ("r\(revision) edit \(edit)", revision)
                    }
                }
            }
            revisions.append(current.map { $0.text + "\n" }.joined())
        }
        let blamed = Blame.attribute(revisions)
        #expect(blamed.map(\.text) == current.map(\.text))
        #expect(blamed.map(\.revision) == current.map(\.revision))
    }

    /// Repetitive lines make the diff ambiguous, but every attribution must still be plausible:
    /// the blamed line is the final revision's line at that position, and the line is present in
    /// the revision it is blamed on and in every later one (it was carried through them).
    @Test func repetitiveHistoriesGivePlausibleAttributions() {
        var random = LineDiffTests.Random(state: 99)
        let words = ["{", "}", "", "return x", "let y = 1", "// note"]
        for _ in 0..<40 {
            var lines = (0..<random.below(15)).map { _ in words[random.below(words.count)] }
            var revisions = [lines.map { $0 + "\n" }.joined()]
            for _ in 0..<random.below(25) {
                for _ in 0..<(random.below(3) + 1) {
                    let position = random.below(lines.count + 1)
                    if random.below(2) == 0 || lines.isEmpty {
                        lines.insert(words[random.below(words.count)], at: position)
                    } else if position < lines.count {
                        lines.remove(at: position)
                    }
                }
                revisions.append(lines.map { $0 + "\n" }.joined())
            }
            let blamed = Blame.attribute(revisions)
            #expect(blamed.map(\.text) == lines)
            for line in blamed {
                #expect(line.revision >= 0 && line.revision < revisions.count)
                for revision in line.revision..<revisions.count {
                    #expect(
                        TextLines(revisions[revision]).contains(
                            TextLine(text: line.text, hasNewline: line.hasNewline)),
                        "line \(line.text.debugDescription) blamed on \(line.revision) is missing in \(revision)"
                    )
                }
            }
        }
    }

    @Test func thousandVersionsAreFast() {
        var random = LineDiffTests.Random(state: 5)
        var lines = (0..<300).map { "paragraph \($0) with some words in it" }
        var revisions: [String] = []
        for version in 0..<1000 {
            let position = random.below(lines.count)
            if version.isMultiple(of: 3) {
                lines.insert("added in \(version)", at: position)
            } else {
                lines[position] = "edited in \(version)"
            }
            revisions.append(lines.map { $0 + "\n" }.joined())
        }
        let clock = ContinuousClock()
        var blamed: [BlameLine] = []
        let elapsed = clock.measure { blamed = Blame.attribute(revisions) }
        #expect(blamed.count == lines.count)
        for line in blamed
        where line.text.hasPrefix("added in ") || line.text.hasPrefix("edited in ") {
            #expect(line.text.hasSuffix(" \(line.revision)"))
        }
        #expect(elapsed < .seconds(5), "blaming 1,000 versions took \(elapsed)")
    }

    @Test("the attributor, a revision at a time, blames as the whole list does, at every step")
    func attributorAgrees() {
        let revisions = ["a\nb\nc\n", "a\nB\nc\n", "x\na\nB\nc", "x\na\nB\nc\nd\n", "", "a\na\na\n", "a\nb\na\n"]
        var attributor = Blame.Attributor(revisions[0])
        #expect(attributor.lines == Blame.attribute(revisions, upTo: 0))
        for index in 1..<revisions.count {
            attributor.add(revisions[index])
            #expect(attributor.revision == index)
            #expect(attributor.lines == Blame.attribute(revisions, upTo: index), "revision \(index)")
        }
        #expect(Blame.attribute(["a\n", "a\nb\n", "A\nb\n"]).map(\.revision) == [2, 1])
    }
}
