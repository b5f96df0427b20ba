import EventStore

/// The canonical UUID text (`8-4-4-4-12` hex digits), read and written straight from UTF-8
/// bytes: an import parses two per line, so the generic parser of ``Identifier`` would cost
/// more than the JSON itself.
enum UUIDText {
    /// The id named by exactly 36 bytes in canonical form; upper-case hex digits only when
    /// `lowercaseOnly` is false.
    static func parse(_ text: String, lowercaseOnly: Bool = false) -> Identifier? {
        var text = text
        return text.withUTF8 { parse($0, lowercaseOnly: lowercaseOnly) }
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, lowercaseOnly: Bool = false) -> Identifier? {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for i in 0..<36 {
            let c = bytes[i]
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F") where !lowercaseOnly: v = c &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(v) } else { low = low << 4 | UInt64(v) }
            digits += 1
        }
        return Identifier(high: high, low: low)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The canonical lower-case form, as ``Identifier/uuidString`` gives it.
    static func format(_ id: Identifier) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var out = 0
            for (word, base) in [(id.high, 0), (id.low, 16)] {
                for nibble in 0..<16 {
                    let digit = base + nibble
                    if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                        buffer[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    buffer[out] = hexDigits[Int(truncatingIfNeeded: word >> UInt64(60 - 4 * nibble)) & 0xF]
                    out += 1
                }
            }
            return out
        }
    }
}
