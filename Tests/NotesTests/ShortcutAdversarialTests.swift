import Testing

@testable import Notes

/// The byte-by-byte shortcuts of wiki links, titles and tag names against their general paths,
/// with the characters the existing suites leave out: every ASCII control and DEL, line breaks,
/// marks that join a space or a bar, non-ASCII white space.
@Suite("Shortcuts of links, titles and tag names: adversarial characters")
struct ShortcutAdversarialTests {
    static let controls = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + ["\u{7F}"]
    static let marks = [
        " \u{301}", "|\u{301}", "#\u{301}", "\\\u{301}", "/\u{301}", "\u{0600} ", "\u{0085}", "\u{00A0}", "\u{2028}",
        "\u{3000}", "\r\n",
    ]

    static func texts(_ pieces: [String], _ count: Int, seed: UInt64, length: Int = 9) -> [String] {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        return (0..<count).map { _ in (0..<next(length)).map { _ in pieces[next(pieces.count)] }.joined() }
    }

    @Test("wiki link parts")
    func linkParts() {
        let pieces = ["a", "B", " ", "|", "#", "\\", ".md", "^", "/", "\\|", " | ", "# ", "."] + Self.controls
        for inner in Self.texts(pieces, 8_000, seed: 0x7769_6B69) {
            let ascii = WikiLink.asciiParts(inner)
            let general = WikiLink.parts(inner)
            #expect(ascii?.target == general.target, "\(inner.debugDescription)")
            #expect(ascii?.written == general.written, "\(inner.debugDescription)")
            #expect(ascii?.label == general.label, "\(inner.debugDescription)")
        }
        for inner in Self.texts(pieces + Self.marks, 3_000, seed: 0x6D61_726B) {
            let general = WikiLink.parts(inner)
            if let ascii = WikiLink.asciiParts(inner) {
                #expect(ascii.target == general.target && ascii.written == general.written, "\(inner.debugDescription)")
                #expect(ascii.label == general.label, "\(inner.debugDescription)")
            }
        }
    }

    @Test("titles and tag names: kept alike or refused alike")
    func titlesAndTags() {
        let pieces = ["a", "1", " ", "/", "#", "  ", "~"] + Self.controls + Self.marks
        let limit = Notebook.maxTitleCharacters
        let tagLimit = Notebook.maxTagCharacters
        let edges = [
            String(repeating: "a", count: limit) + "\t", "\t" + String(repeating: "a", count: limit),
            String(repeating: "a", count: limit - 1) + "\u{7F}", String(repeating: "a/", count: tagLimit / 2),
            String(repeating: "a/", count: tagLimit / 2 - 1) + "a", String(repeating: "a", count: tagLimit) + " ",
        ]
        for text in Self.texts(pieces, 8_000, seed: 0x7469_7467) + edges {
            let title = Result { () throws(NotesError) in try Notebook.validTitle(text) }
            let titleGeneral = Result { () throws(NotesError) in try Notebook.validTitleByCharacters(text) }
            #expect("\(title)" == "\(titleGeneral)", "\(text.debugDescription)")
            let tag = Result { () throws(NotesError) in try Notebook.validTagName(text) }
            let tagGeneral = Result { () throws(NotesError) in try Notebook.validTagNameByCharacters(text) }
            #expect("\(tag)" == "\(tagGeneral)", "\(text.debugDescription)")
        }
    }
}
