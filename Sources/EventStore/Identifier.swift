/// A 128-bit identifier (a UUID), stored as 16 big-endian bytes.
///
/// Rendered as 32 lowercase hex digits, or in the canonical 8-4-4-4-12 form. Both forms parse.
public struct Identifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A random version-4 UUID drawn from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> Identifier {
        let h = (generator.next() & ~0xF000) | 0x4000
        let l = (generator.next() & ~(0xC000_0000_0000_0000 as UInt64)) | 0x8000_0000_0000_0000
        return Identifier(high: h, low: l)
    }

    /// A random version-4 UUID from the system's secure generator.
    public static func random() -> Identifier {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        let (high, low) = (self.high.bigEndian, self.low.bigEndian)
        return [UInt8](unsafeUninitializedCapacity: 16) { out, count in
            let raw = UnsafeMutableRawBufferPointer(out)
            raw.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            count = 16
        }
    }

    /// Reads 16 big-endian bytes; nil if `bytes` is not 16 long.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        self.init(high: h, low: l)
    }

    /// 32 lowercase hex digits.
    public var hex: String {
        var s = String(high, radix: 16)
        s = String(repeating: "0", count: 16 - s.count) + s
        var t = String(low, radix: 16)
        t = String(repeating: "0", count: 16 - t.count) + t
        return s + t
    }

    /// The canonical UUID form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public var uuidString: String {
        let h = Array(hex)
        return String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-"
            + String(h[16..<20]) + "-" + String(h[20..<32])
    }

    public var description: String { uuidString }

    /// Parses 32 hex digits, with or without the four dashes of the canonical form.
    public init?(_ text: some StringProtocol) {
        var digits: [UInt8] = []
        digits.reserveCapacity(32)
        for c in text.utf8 {
            if c == UInt8(ascii: "-") { continue }
            guard let v = hexValue(c) else { return nil }
            digits.append(v)
        }
        guard digits.count == 32 else { return nil }
        let dashed = text.utf8.filter { $0 == UInt8(ascii: "-") }.count
        guard dashed == 0 || (dashed == 4 && text.count == 36) else { return nil }
        var h: UInt64 = 0
        var l: UInt64 = 0
        for i in 0..<16 { h = h << 4 | UInt64(digits[i]) }
        for i in 16..<32 { l = l << 4 | UInt64(digits[i]) }
        self.init(high: h, low: l)
    }

    public static func < (a: Identifier, b: Identifier) -> Bool {
        (a.high, a.low) < (b.high, b.low)
    }
}

@inline(__always)
func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// Produces event and note ids; injected so tests are deterministic.
public protocol IdentifierGenerator: Sendable {
    func next() -> Identifier
}

/// Random version-4 UUIDs from the system's secure generator.
public struct RandomIdentifiers: IdentifierGenerator {
    public init() {}
    public func next() -> Identifier { .random() }
}
