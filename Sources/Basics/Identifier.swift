import CIntrinsics
import Synchronization

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

    /// A random version-4 UUID from the system's secure generator, drawn from a pool that it
    /// refills 256 bytes at a time: a bulk import takes tens of thousands of ids, and two system
    /// calls per id (what `SystemRandomNumberGenerator` makes) cost more than the rest of
    /// making one.
    public static func random() -> Identifier {
        var g = PooledRandom()
        return random(using: &g)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        // Copied from the stack: `[UInt8](unsafeUninitializedCapacity:)` goes through the
        // standard library's unspecialized allocation, which looks up the array's type metadata
        // each time (about 550 instructions against 130; a note's append makes several ids).
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
    }

    /// Calls `body` with the 16 bytes, big-endian, without allocating them (a key for a lookup).
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { try body($0) }
    }

    /// Reads 16 big-endian bytes; nil if `bytes` is not 16 long.
    ///
    /// Inlinable, so that each caller gets it specialized for its collection (generic, it built
    /// type metadata on every call, which dominated listings that read many index keys).
    @inlinable
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        if let (h, l) = bytes.withContiguousStorageIfAvailable({ p -> (UInt64, UInt64) in
            let raw = UnsafeRawBufferPointer(p)
            return (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }) {
            self.init(high: h, low: l)
            return
        }
        var h: UInt64 = 0
        var l: UInt64 = 0
        var i = 0
        for b in bytes {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
            i += 1
        }
        self.init(high: h, low: l)
    }

    /// 32 lowercase hex digits.
    public var hex: String { UUIDText.hex(high: high, low: low) }

    /// The canonical UUID form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public var uuidString: String { UUIDText.format(high: high, low: low) }

    public var description: String { uuidString }

    /// Parses 32 hex digits, with or without the four dashes of the canonical form.
    public init?(_ text: some StringProtocol) {
        guard let bits = UUIDText.parseLoose(text) else { return nil }
        self.init(high: bits.high, low: bits.low)
    }

    /// Parses exactly the canonical form (36 bytes), lowercase hex digits only when
    /// `lowercaseOnly` (the form stream names use).
    @inlinable
    public init?(canonical bytes: UnsafeRawBufferPointer, lowercaseOnly: Bool = false) {
        guard let bits = UUIDText.parse(bytes, lowercaseOnly: lowercaseOnly) else { return nil }
        self.init(high: bits.high, low: bits.low)
    }

    /// Parses exactly the canonical form of a string (see ``init(canonical:lowercaseOnly:)``).
    public init?(canonical text: String, lowercaseOnly: Bool = false) {
        guard let bits = UUIDText.parse(text, lowercaseOnly: lowercaseOnly) else { return nil }
        self.init(high: bits.high, low: bits.low)
    }

    public static func < (a: Identifier, b: Identifier) -> Bool {
        (a.high, a.low) < (b.high, b.low)
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

/// Words of the system's secure generator, read 32 at a time (one system call) into a pool
/// shared by the process's threads.
struct PooledRandom: RandomNumberGenerator {
    private static let pool = Mutex(Pool())

    private struct Pool: ~Copyable {
        var words = [UInt64](repeating: 0, count: 32)
        var next = 32

        mutating func take() -> UInt64 {
            if next == words.count {
                let filled = words.withUnsafeMutableBytes { notes_getrandom($0.baseAddress, $0.count) }
                if filled != words.count * 8 {
                    // Never seen on Linux for 256 bytes; the word-by-word source is as good.
                    var system = SystemRandomNumberGenerator()
                    for i in words.indices { words[i] = system.next() }
                }
                next = 0
            }
            defer { next += 1 }
            return words[next]
        }
    }

    mutating func next() -> UInt64 { Self.pool.withLock { $0.take() } }
}
