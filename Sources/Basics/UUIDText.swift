import CIntrinsics

/// UUID text, read and written straight from UTF-8 bytes: the one parser of the project. The
/// store's `Identifier` wraps the 128 bits it reads; stream names, import lines, ids typed by
/// people all come through here.
///
/// ```swift
/// UUIDText.parse("4f3a0c9e-1b2d-4c5e-8f70-0a1b2c3d4e5f")  // (high: 0x4f3a0c9e1b2d4c5e, low: 0x8f700a1b2c3d4e5f)
/// UUIDText.format(high: h, low: l)  // the canonical lowercase form
/// ```
public enum UUIDText {
    /// The 128 bits named by exactly 36 bytes in canonical `8-4-4-4-12` form; upper-case hex
    /// digits too unless `lowercaseOnly` (stream names are lowercase: the key they are stored by).
    @inlinable
    public static func parse(_ bytes: UnsafeRawBufferPointer, lowercaseOnly: Bool = false) -> (
        high: UInt64, low: UInt64
    )? {
        if let bits = parseLowercase(bytes) { return bits }
        guard !lowercaseOnly, let words = words(bytes) else { return nil }
        // Upper-case (or mixed) digits: fold A-F to a-f and try again; anything else stays invalid.
        func lower(_ x: UInt64) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101
            // Bytes 'A'...'F' (0x41-0x46) get 0x20 added; a byte outside stays as it is.
            let atLeastA = (x | ones &* 0x80) &- ones &* 0x41
            let aboveF = (x | ones &* 0x80) &- ones &* 0x47
            let upper = atLeastA & ~aboveF & ~x & (ones &* 0x80)
            return x | (upper >> 2)
        }
        guard let a = hex8(lower(words.0)), let b = hex8(lower(words.1)), let c = hex8(lower(words.2)),
            let d = hex8(lower(words.3))
        else { return nil }
        return (a << 32 | b, c << 32 | d)
    }

    /// The canonical lowercase form only: the fast path stream names take on every event read
    /// (with byte shuffles where the processor has them: `notes_uuid_parse_lowercase`).
    public static func parseLowercase(_ bytes: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64)? {
        guard bytes.count == 36, let base = bytes.baseAddress else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        switch notes_uuid_parse_lowercase(base.assumingMemoryBound(to: UInt8.self), &high, &low) {
        case 1: return (high, low)
        case 0: return nil
        default: return parseLowercaseWords(bytes)
        }
    }

    /// ``parseLowercase(_:)`` a word at a time, where the processor has no byte shuffles.
    @inline(never)
    static func parseLowercaseWords(_ bytes: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64)? {
        guard let words = words(bytes), let a = hex8(words.0), let b = hex8(words.1), let c = hex8(words.2),
            let d = hex8(words.3)
        else { return nil }
        return (a << 32 | b, c << 32 | d)
    }

    /// The 32 digits of the canonical form as four words of eight bytes (the first in the lowest
    /// byte), when the bytes have its length and its dashes.
    @inlinable @inline(__always)
    static func words(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64, UInt64)? {
        guard bytes.count == 36, let base = bytes.baseAddress,
            base.load(fromByteOffset: 8, as: UInt8.self) == 0x2D, base.load(fromByteOffset: 13, as: UInt8.self) == 0x2D,
            base.load(fromByteOffset: 18, as: UInt8.self) == 0x2D, base.load(fromByteOffset: 23, as: UInt8.self) == 0x2D
        else { return nil }
        func eight(_ at: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        func four(_ at: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        }
        return (eight(0), four(9) | four(14) << 32, four(19) | four(24) << 32, eight(28))
    }

    /// ``parse(_:lowercaseOnly:)`` of a string.
    public static func parse(_ text: String, lowercaseOnly: Bool = false) -> (high: UInt64, low: UInt64)? {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0), lowercaseOnly: lowercaseOnly) }
    }

    /// The 128 bits named by 32 hex digits (either case), with or without the four dashes of
    /// the canonical form: what people type.
    public static func parseLoose(_ text: some StringProtocol) -> (high: UInt64, low: UInt64)? {
        let utf8 = Array(text.utf8)
        if utf8.count == 36 { return utf8.withUnsafeBytes { parse($0) } }
        guard utf8.count == 32 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (i, c) in utf8.enumerated() {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            if i < 16 { high = high << 4 | UInt64(v) } else { low = low << 4 | UInt64(v) }
        }
        return (high, low)
    }

    /// The value of eight lowercase hex digits, the first in the lowest byte of `x`, or nil
    /// when a byte is not one.
    @inlinable @inline(__always)
    static func hex8(_ x: UInt64) -> UInt64? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let top = ones &* 0x80
        // With every byte below 0x80, adding less than 0x80 to each carries into no other,
        // and a byte's top bit then says whether it reached the bound.
        let atLeast0 = x &+ ones &* (0x80 - 0x30)
        let above9 = x &+ ones &* (0x80 - 0x3A)
        let atLeastA = x &+ ones &* (0x80 - 0x61)
        let aboveF = x &+ ones &* (0x80 - 0x67)
        let digit = ((atLeast0 & ~above9) | (atLeastA & ~aboveF)) & top
        guard x & top == 0, digit == top else { return nil }
        // '0'...'9' have 0 in bit 6 and their value in the low nibble; 'a'...'f' have 1 and
        // their value minus 9.
        let nibbles = (x & (ones &* 0x0F)) &+ ((x >> 6) & ones) &* 9
        let bytes = ((nibbles << 4) | (nibbles >> 8)) & 0x00FF_00FF_00FF_00FF
        let packed = (bytes | bytes >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt64(UInt32(truncatingIfNeeded: packed | packed >> 16).byteSwapped)
    }

    @usableFromInline static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The canonical lower-case form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public static func format(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var out = 0
            for (word, base) in [(high, 0), (low, 16)] {
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

    /// 32 lowercase hex digits, no dashes.
    public static func hex(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            for (k, word) in [high, low].enumerated() {
                for nibble in 0..<16 {
                    buffer[k * 16 + nibble] = hexDigits[Int(truncatingIfNeeded: word >> UInt64(60 - 4 * nibble)) & 0xF]
                }
            }
            return 32
        }
    }
}
