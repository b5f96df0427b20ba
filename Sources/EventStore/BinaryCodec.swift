public import Basics

/// Why bytes could not be decoded. Never a trap: every read is bounds-checked.
public struct DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The bytes end before the value does.
        case truncated
        /// A stored checksum does not match the bytes.
        case checksumMismatch
        /// A varint is longer than 10 bytes or overflows 64 bits.
        case badVarint
        /// A string is not valid UTF-8.
        case invalidUTF8
        /// A tag, flag or format byte has a value no version of the codec writes.
        case badTag(UInt8)
        /// A length is larger than what remains or than any legitimate value.
        case badLength(UInt64)
        /// Bytes remain after the value.
        case trailingBytes(Int)
    }

    public let reason: Reason
    /// Byte offset where decoding failed.
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        switch reason {
        case .truncated: return "truncated data at byte \(offset)"
        case .checksumMismatch: return "checksum mismatch"
        case .badVarint: return "malformed integer at byte \(offset)"
        case .invalidUTF8: return "invalid UTF-8 text at byte \(offset)"
        case .badTag(let t): return "unknown tag \(t) at byte \(offset)"
        case .badLength(let n): return "impossible length \(n) at byte \(offset)"
        case .trailingBytes(let n): return "\(n) unexpected trailing bytes at byte \(offset)"
        }
    }
}

/// Appends the compact binary encoding of values to a byte array.
///
/// Integers are LEB128 varints (unsigned) or zigzag varints (signed); strings and byte blobs
/// are a varint length followed by the bytes; fixed-width integers are big-endian.
public struct ByteWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable public mutating func write(byte: UInt8) { bytes.append(byte) }

    @inlinable public mutating func write(varint value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inlinable public mutating func write(signed value: Int64) {
        write(varint: UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Byte by byte: eight appends cost about half of one `append(contentsOf:)` of eight bytes
    /// (107 instructions a call; a rebuild writes two for every note id, 1.8 M at 1 M events).
    @inlinable public mutating func write(bigEndian value: UInt64) {
        var v = value
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: v >> 56))
            v <<= 8
        }
    }

    @inlinable public mutating func write(bigEndian value: UInt32) {
        var v = value.bigEndian
        withUnsafeBytes(of: &v) { bytes.append(contentsOf: $0) }
    }

    @inlinable public mutating func write(bool: Bool) { bytes.append(bool ? 1 : 0) }

    @inlinable public mutating func write(string: String) {
        var s = string
        s.withUTF8 { u in
            write(varint: UInt64(u.count))
            bytes.append(contentsOf: u)
        }
    }

    /// Writes 0 for nil, else 1 and the string.
    @inlinable public mutating func write(optionalString: String?) {
        if let s = optionalString {
            write(byte: 1)
            write(string: s)
        } else {
            write(byte: 0)
        }
    }

    @inlinable public mutating func write(blob: some Collection<UInt8>) {
        write(varint: UInt64(blob.count))
        bytes.append(contentsOf: blob)
    }

    @inlinable public mutating func write(raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    public mutating func write(identifier: Identifier) {
        write(bigEndian: identifier.high)
        write(bigEndian: identifier.low)
    }

    /// Writes 0 for nil, else 1 and the 16 bytes.
    public mutating func write(optionalIdentifier: Identifier?) {
        if let id = optionalIdentifier {
            write(byte: 1)
            write(identifier: id)
        } else {
            write(byte: 0)
        }
    }
}

/// Reads values written by ``ByteWriter`` from a buffer, checking every bound.
///
/// The buffer is borrowed: the reader must not outlive it.
public struct ByteReader {
    public let buffer: UnsafeRawBufferPointer
    /// Where the next read starts. Stored under another name so that the readers can be
    /// inlined into the decoders of other modules (a listing decodes 50 rows a page).
    @usableFromInline var position: Int
    @inlinable public var offset: Int { position }

    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.position = offset
    }

    @inlinable public var remaining: Int { buffer.count - offset }
    @inlinable public var isAtEnd: Bool { offset >= buffer.count }

    @inlinable @inline(__always) public mutating func readByte() throws(DecodingError) -> UInt8 {
        guard offset < buffer.count else { throw DecodingError(.truncated, at: offset) }
        defer { position += 1 }
        return buffer[offset]
    }

    @inlinable @inline(__always) public mutating func readVarint() throws(DecodingError) -> UInt64 {
        // One byte is the common case (lengths, versions): no loop.
        if offset < buffer.count, buffer[offset] < 0x80 {
            defer { position += 1 }
            return UInt64(buffer[offset])
        }
        return try readLongVarint()
    }

    @usableFromInline mutating func readLongVarint() throws(DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = offset
        while true {
            guard offset < buffer.count else { throw DecodingError(.truncated, at: offset) }
            let b = buffer[offset]
            position += 1
            if shift == 63 && b > 1 { throw DecodingError(.badVarint, at: start) }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw DecodingError(.badVarint, at: start) }
        }
    }

    @inlinable public mutating func readSigned() throws(DecodingError) -> Int64 {
        let z = try readVarint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    /// A varint that must fit in `Int` and be at most `limit`.
    @inlinable @inline(__always) public mutating func readLength(limit: Int = Int(Int32.max)) throws(DecodingError)
        -> Int
    {
        let start = offset
        let n = try readVarint()
        guard n <= UInt64(limit), n <= UInt64(remaining) else { throw DecodingError(.badLength(n), at: start) }
        return Int(n)
    }

    @inlinable @inline(__always) public mutating func readUInt64() throws(DecodingError) -> UInt64 {
        guard remaining >= 8 else { throw DecodingError(.truncated, at: offset) }
        defer { position += 8 }
        return UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inlinable @inline(__always) public mutating func readUInt32() throws(DecodingError) -> UInt32 {
        guard remaining >= 4 else { throw DecodingError(.truncated, at: offset) }
        defer { position += 4 }
        return UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inlinable @inline(__always) public mutating func readBool() throws(DecodingError) -> Bool {
        let at = offset
        switch try readByte() {
        case 0: return false
        case 1: return true
        case let t: throw DecodingError(.badTag(t), at: at)
        }
    }

    /// A slice of `count` bytes of the buffer (no copy).
    @inlinable @inline(__always) public mutating func readSlice(_ count: Int) throws(DecodingError)
        -> UnsafeRawBufferPointer
    {
        guard count >= 0, count <= remaining else { throw DecodingError(.truncated, at: offset) }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    @inlinable @inline(__always) public mutating func readBlob() throws(DecodingError) -> UnsafeRawBufferPointer {
        let n = try readLength()
        return try readSlice(n)
    }

    @inlinable public mutating func readString() throws(DecodingError) -> String {
        // Checked here, then decoded (which repairs nothing): `String(validating:)` is generic
        // and looked its metadata up at run time on every call.
        String(decoding: try readUTF8(), as: UTF8.self)
    }

    /// A string's bytes, checked to be valid UTF-8 like ``readString()`` but without building
    /// the `String` (a replay that will overwrite the text does not pay for it).
    @inlinable @inline(__always) public mutating func readUTF8() throws(DecodingError) -> UnsafeRawBufferPointer {
        let at = offset
        let slice = try readBlob()
        guard UTF8Validation.isValid(slice) else { throw DecodingError(.invalidUTF8, at: at) }
        return slice
    }

    @inlinable public mutating func readOptionalString() throws(DecodingError) -> String? {
        try readBool() ? try readString() : nil
    }

    @inlinable @inline(__always) public mutating func readIdentifier() throws(DecodingError) -> Identifier {
        let h = try readUInt64()
        let l = try readUInt64()
        return Identifier(high: h, low: l)
    }

    @inlinable @inline(__always) public mutating func readOptionalIdentifier() throws(DecodingError) -> Identifier? {
        try readBool() ? try readIdentifier() : nil
    }

    /// Throws if bytes remain.
    @inlinable @inline(__always) public func expectEnd() throws(DecodingError) {
        if remaining != 0 { throw DecodingError(.trailingBytes(remaining), at: offset) }
    }
}

/// Well-formed UTF-8 as Unicode defines it (Table 3-7), the rule `String(validating:)` applies:
/// no overlong forms, no surrogates, nothing past U+10FFFF, no truncated sequence.
public enum UTF8Validation {
    public static func isValid(_ b: UnsafeRawBufferPointer) -> Bool {
        let n = b.count
        var i = 0
        let high: UInt64 = 0x8080_8080_8080_8080
        while i < n {
            // Text is mostly ASCII: 32 bytes per step, then eight, while no high bit is set.
            while i + 32 <= n {
                let w =
                    b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    | b.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                    | b.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)
                    | b.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)
                if w & high != 0 { break }
                i += 32
            }
            while i + 8 <= n, b.loadUnaligned(fromByteOffset: i, as: UInt64.self) & high == 0 {
                i += 8
            }
            guard i < n else { return true }
            // Fewer than eight bytes left: one load of the last eight (all checked up to `i`).
            if n >= 8, i > n - 8, b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) & high == 0 { return true }
            let c = b[i]
            if c < 0x80 {
                i += 1
            } else if c < 0xC2 {
                return false
            } else if c < 0xE0 {
                guard i + 1 < n, b[i + 1] & 0xC0 == 0x80 else { return false }
                i += 2
            } else if c < 0xF0 {
                guard i + 2 < n else { return false }
                let c1 = b[i + 1]
                let low: UInt8 = c == 0xE0 ? 0xA0 : 0x80
                let high: UInt8 = c == 0xED ? 0x9F : 0xBF
                guard c1 >= low, c1 <= high, b[i + 2] & 0xC0 == 0x80 else { return false }
                i += 3
            } else if c < 0xF5 {
                guard i + 3 < n else { return false }
                let c1 = b[i + 1]
                let low: UInt8 = c == 0xF0 ? 0x90 : 0x80
                let high: UInt8 = c == 0xF4 ? 0x8F : 0xBF
                guard c1 >= low, c1 <= high, b[i + 2] & 0xC0 == 0x80, b[i + 3] & 0xC0 == 0x80 else { return false }
                i += 4
            } else {
                return false
            }
        }
        return true
    }
}
