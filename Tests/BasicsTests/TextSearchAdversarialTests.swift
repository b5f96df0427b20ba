import Testing

@testable import Basics

/// `textContains` against `String.contains` on the characters most likely to part them: marks
/// that join the character before a match or the one it ends on, precomposed and decomposed
/// forms, CR LF, emoji sequences, flags, Hangul jamo, prepended marks, canonical singletons.
@Suite("Text search by bytes: adversarial characters")
struct TextSearchAdversarialTests {
    static let pieces = [
        "a", "K", "k", ";", "`", "[[", "]]", "|", "#", " ", "\r", "\n", "\r\n", "\u{301}", "\u{308}", "\u{20E3}",
        "\u{200D}", "\u{FE0F}", "\u{212A}", "\u{037E}", "\u{1FEF}", "\u{2126}", "\u{00C5}", "A\u{30A}", "\u{212B}",
        "\u{1F468}", "\u{1F469}", "\u{1F1FA}", "\u{1F1F8}", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{AC00}", "\u{0600}",
        "\u{0915}", "\u{094D}", "\u{00A0}", "\u{0085}", "\u{1F3FB}", "note", "Kelvin", "#1", "\u{0}", "\u{7F}",
    ]
    static let needles = [
        "[[", "]]", "|", "#", "K", ";", "`", "k", "a", "[[note", "[[Kelvin", "note|", "[[#", " ", "#1", "a;",
        "`a", "K]", "aK", "\u{301}", "e\u{301}", "\u{AC00}", "\u{1100}\u{1161}", "\u{1F1FA}", "\r\n", "\n", "\u{7F}",
        "", "A\u{30A}", "\u{00C5}",
    ]

    @Test("generated texts: the byte search answers as String.contains for every needle")
    func agrees() {
        TextSearchTests.expectAgreement(pieces: Self.pieces, needles: Self.needles, seed: 0x5EED_AD7E, texts: 6_000)
    }

    @Test("a match whose last character a mark extends is no match; one at the very end is")
    func boundaries() {
        let cases: [(String, String)] = [
            ("x [[note\u{301}", "[[note"), ("x [[note", "[[note"), ("[[note\u{200D}", "[[note"),
            ("\u{301}[[note", "[[note"), ("K\u{301}", "K"), ("\u{212A}", "K"), ("\u{037E}", ";"), ("\u{1FEF}", "`"),
            ("a\r\n", "a"), ("\r\n[[", "[["), ("#\u{FE0F}\u{20E3}", "#"), ("\u{0600}#", "#"), ("|", "|"),
        ]
        for (text, needle) in cases {
            #expect(textContains(text, needle) == text.contains(needle), "\(Array(text.unicodeScalars)) \(needle)")
        }
    }
}
