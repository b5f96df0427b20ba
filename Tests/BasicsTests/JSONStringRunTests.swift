import Testing

@testable import Basics

/// After its first escape a string is decoded into a buffer, a run of plain bytes at a time
/// (since 2026-12-08, a byte at a time before). The loop before any escape reads the same bytes
/// one way that commit left alone: the same string behind `\n` must decode to `\n` and the same
/// text, or fail for the same reason two bytes later, whatever byte ends a run, and wherever.
@Suite("JSON: a string's runs after an escape")
struct JSONStringRunTests {
    static let pieces: [[UInt8]] = [
        Array("a".utf8), Array("abcdefgh".utf8), Array("xyz".utf8), Array(" ".utf8), [0x7F], [0x01], [0x1F], [0x09],
        [0x00], [0x22], Array("é".utf8), Array("\u{1F600}".utf8), [0xFF], [0x80], [0xC3], [0xED, 0xA0, 0x80],
        [0xE0, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], Array("\u{FFFF}".utf8),
    ]

    /// The outcome of parsing `bytes`: the string, or the error's reason and offset.
    static func outcome(_ bytes: [UInt8]) -> Result<String, JSONError> {
        Result { () throws(JSONError) in
            guard case .string(let s) = try JSONValue.parse(bytes) else { return "<not a string>" }
            return s
        }
    }

    @Test("generated strings: behind an escape, the same text or the same error two bytes on")
    func behindAnEscape() {
        var state: UInt64 = 0x4A53_4F4E
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        var decoded = 0
        for _ in 0..<20_000 {
            var text: [UInt8] = []
            for _ in 0..<next(8) {
                // Plain runs of every length, so that a special byte falls at every offset of
                // the eight-byte skip.
                text += [UInt8](repeating: UInt8(ascii: "p"), count: next(11))
                text += Self.pieces[next(Self.pieces.count)]
            }
            let plain = Self.outcome([0x22] + text + [0x22])
            let escaped = Self.outcome([0x22, 0x5C, 0x6E] + text + [0x22])
            switch (plain, escaped) {
            case (.success(let a), .success(let b)):
                #expect("\n" + a == b, "\(text)")
                decoded += 1
            case (.failure(let a), .failure(let b)):
                let shifted = a.offset == 0 ? 0 : a.offset + 2
                #expect(a.reason == b.reason && shifted == b.offset, "\(text): \(a) / \(b)")
            default:
                Issue.record("\(text): \(plain) / \(escaped)")
            }
        }
        #expect(decoded > 1_000, "\(decoded) decoded")
    }
}
