import Notes
import Testing

@testable import NotesInterchange

/// The byte-by-byte shortcuts of reading a vault's file agree with the paths a character at a
/// time they stand in for.
@Suite("Markdown import: shortcuts agree with the general paths")
struct MarkdownShortcutTests {
    static let pieces = [
        "a", "B", "1", " ", "  ", "\t", "\r", "\n", "\r\n", "/", ".md", ".MD", "-", "_", "*", "[", "]", "!", "(x)",
        "<b>", "\\", "&amp;", "`", "#", "|", "é", "e\u{301}", " \u{301}", "\u{7F}", "あ", "\u{00A0}",
    ]

    /// `count` texts of up to `length - 1` of `pieces`, drawn from `seed`.
    static func texts(_ pieces: [String], _ count: Int, seed: UInt64, length: Int = 10) -> [String] {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        return (0..<count).map { _ in (0..<next(length)).map { _ in pieces[next(pieces.count)] }.joined() }
    }

    /// plainText, oneLine and fileStem give `text` what their general paths give it.
    static func expectAgreement(_ text: String) {
        #expect(MarkdownNote.plainText(text) == MarkdownNote.plainTextByCharacters(text), "\(text.debugDescription)")
        #expect(MarkdownNote.oneLine(text) == MarkdownNote.oneLineByCharacters(text), "\(text.debugDescription)")
        #expect(Notebook.fileStem(text) == Notebook.fileStemByCharacters(text), "\(text.debugDescription)")
    }

    @Test("plainText, oneLine and fileStem")
    func agree() {
        for text in Self.texts(Self.pieces, 4_000, seed: 0x6D64) + [
            "", "/", "//", "////", "a/", "a//b.md", "/a.md/", "ab.md",
        ] {
            Self.expectAgreement(text)
        }
    }
}
