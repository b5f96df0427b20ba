import Testing

@testable import Basics

@Suite("Text search by bytes")
struct TextSearchTests {
    /// Characters that join, split or stand for others: canonical equivalents of `K`, `;` and
    /// `` ` ``, a combining mark, CR LF, non-ASCII letters, and the marks of links.
    static let pieces = [
        "a", "b", "K", "k", ";", "`", "\u{212A}", "\u{037E}", "\u{1FEF}", "\u{301}", "e\u{301}", "é", "\r\n", "\r",
        "\n", " ", "[", "]", "|", "#", "あ", "note-1", "\u{200D}",
    ]
    static let needles = [
        "[[", "]]", "|", "#", "[[note-1", "K", ";", "`", "ab", "a b", "[[K", "e", "é", "a\r", "\n", "", "あ", "1]",
    ]

    @Test("textContains answers as String.contains, for every needle over generated texts")
    func agreesWithTheStandardLibrary() {
        Self.expectAgreement(pieces: Self.pieces, needles: Self.needles, seed: 0x7465_7874, texts: 3_000)
    }

    /// For `texts` texts of up to eleven of `pieces` (drawn from `seed`), each of `needles` is
    /// found by `textContains` exactly when `String.contains` finds it.
    static func expectAgreement(pieces: [String], needles: [String], seed: UInt64, texts: Int) {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        for _ in 0..<texts {
            var text = ""
            for _ in 0..<next(12) { text += pieces[next(pieces.count)] }
            for needle in needles {
                #expect(textContains(text, needle) == text.contains(needle), "\(Array(text.unicodeScalars)) \(needle)")
            }
        }
    }

    @Test("isASCII over every length and position of a high byte")
    func ascii() {
        for n in 0..<20 {
            let plain = [UInt8](repeating: 0x61, count: n)
            #expect(plain.withUnsafeBufferPointer(isASCII))
            for i in 0..<n {
                var high = plain
                high[i] = 0xC3
                #expect(!high.withUnsafeBufferPointer(isASCII))
            }
        }
    }
}
