public import Basics
import EventStore

/// Which kind of stream an event belongs to, parsed from its name without allocating.
public enum StreamRef: Sendable, Equatable {
    case note(Identifier)
    case category(Identifier)
    case other

    package init(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count == 41, bytes.starts(with: StreamRef.notePrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[5...]))
        {
            self = .note(id)
        } else if bytes.count == 45, bytes.starts(with: StreamRef.categoryPrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[9...]))
        {
            self = .category(id)
        } else {
            self = .other
        }
    }

    /// The family of the stream, or nil for a stream the notes model does not have.
    public var family: StreamFamily? {
        switch self {
        case .note: return .note
        case .category: return .category
        case .other: return nil
        }
    }

    public init(_ stream: String) {
        var s = stream
        self = s.withUTF8 { StreamRef(UnsafeRawBufferPointer($0)) }
    }

    static let notePrefix = Array("note/".utf8)
    static let categoryPrefix = Array("category/".utf8)

    /// Parses the canonical 36-character UUID form (lowercase hex, as streams are named),
    /// eight digits at a time.
    static func parseID(_ b: UnsafeRawBufferPointer) -> Identifier? {
        guard b.count == 36, b[8] == 0x2D, b[13] == 0x2D, b[18] == 0x2D, b[23] == 0x2D else { return nil }
        func eight(_ at: Int) -> UInt64 { UInt64(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        func four(_ at: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        }
        guard let a = hex8(eight(0)), let c = hex8(four(9) | four(14) << 32),
            let d = hex8(four(19) | four(24) << 32), let e = hex8(eight(28))
        else { return nil }
        return Identifier(high: a << 32 | c, low: d << 32 | e)
    }

    /// The value of eight lowercase hex digits, the first in the lowest byte of `x`, or nil
    /// when a byte is not one.
    @inline(__always)
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
}
