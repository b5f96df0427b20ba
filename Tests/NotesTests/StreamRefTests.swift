import Basics
import EventStore
import Notes
import Testing

/// Stream names parsed from their stored bytes: every byte of the id checked, eight at a time.
@Suite("Stream names")
struct StreamRefTests {
    /// What a stream name means, one character at a time: lowercase hex and the four dashes.
    static func reference(_ bytes: [UInt8]) -> StreamRef {
        func id(_ text: ArraySlice<UInt8>) -> Identifier? {
            guard text.count == 36 else { return nil }
            for (k, c) in text.enumerated() {
                let dash = k == 8 || k == 13 || k == 18 || k == 23
                let hex = (0x30...0x39).contains(c) || (0x61...0x66).contains(c)
                guard dash ? c == 0x2D : hex else { return nil }
            }
            return Identifier(String(decoding: text, as: UTF8.self))
        }
        if bytes.starts(with: Array("note/".utf8)), let id = id(bytes[5...]) { return .note(id) }
        if bytes.starts(with: Array("category/".utf8)), let id = id(bytes[9...]) { return .category(id) }
        return .other
    }

    static func parsed(_ bytes: [UInt8]) -> StreamRef { bytes.withUnsafeBytes { StreamRef($0) } }

    @Test("note and category streams of many ids parse to those ids")
    func manyIDs() {
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var ids = [Identifier(high: 0, low: 0), Identifier(high: .max, low: .max)]
        for _ in 0..<2_000 { ids.append(Identifier(high: next(), low: next())) }
        for id in ids {
            #expect(StreamRef("note/" + id.uuidString) == .note(id), "\(id)")
            #expect(StreamRef("category/" + id.uuidString) == .category(id), "\(id)")
        }
    }

    @Test("every byte value at every place of the id is accepted or refused as the reference does")
    func everyByteEverywhere() {
        let base = Array("note/0123abcd-ef45-6789-a0b1-c2d3e4f5a6b7".utf8)
        #expect(Self.parsed(base) == Self.reference(base))
        var mismatches: [String] = []
        for place in 5..<base.count {
            for value in 0...255 {
                var bytes = base
                bytes[place] = UInt8(value)
                let got = Self.parsed(bytes)
                if got != Self.reference(bytes) { mismatches.append("byte \(value) at \(place): \(got)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        // Uppercase, a missing or extra character, a wrong prefix: not a note stream.
        for text in [
            "note/0123ABCD-ef45-6789-a0b1-c2d3e4f5a6b7", "note/0123abcd-ef45-6789-a0b1-c2d3e4f5a6b",
            "note/0123abcd-ef45-6789-a0b1-c2d3e4f5a6b77", "notes/123abcd-ef45-6789-a0b1-c2d3e4f5a6b7",
            "note/0123abcdef45-6789-a0b1-c2d3e4f5a6b7-",
        ] {
            #expect(StreamRef(text) == .other, "\(text)")
        }
    }
}
