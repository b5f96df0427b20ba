import Basics
import TestSupport
import Testing

@testable import EventStore

@Suite("Binary codec: ByteWriter, ByteReader, Identifier, CRC-32C")
struct CodecTests {
    /// Runs `body` with a reader over `bytes`.
    func reading<R>(_ bytes: [UInt8], _ body: (inout ByteReader) throws(DecodingError) -> R) throws(DecodingError) -> R
    {
        let result: Result<R, DecodingError> = bytes.withUnsafeBytes { p in
            var r = ByteReader(p)
            return Result { () throws(DecodingError) in try body(&r) }
        }
        return try result.get()
    }

    @Test("every type round-trips and the reader ends exactly at the end")
    func roundTrip() throws {
        let id = Identifier(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
        var w = ByteWriter()
        w.write(byte: 0xAB)
        w.write(varint: 300)
        w.write(signed: -12345)
        w.write(bigEndian: UInt64(0x1122_3344_5566_7788))
        w.write(bigEndian: UInt32(0xDEAD_BEEF))
        w.write(bool: true)
        w.write(bool: false)
        w.write(string: "héllo, wörld ✓")
        w.write(string: "")
        w.write(optionalString: nil)
        w.write(optionalString: "x")
        w.write(blob: [1, 2, 3] as [UInt8])
        w.write(raw: [9, 9] as [UInt8])
        w.write(identifier: id)
        w.write(optionalIdentifier: nil)
        w.write(optionalIdentifier: id)
        try reading(w.bytes) { (r) throws(DecodingError) in
            #expect(try r.readByte() == 0xAB)
            #expect(try r.readVarint() == 300)
            #expect(try r.readSigned() == -12345)
            #expect(try r.readUInt64() == 0x1122_3344_5566_7788)
            #expect(try r.readUInt32() == 0xDEAD_BEEF)
            #expect(try r.readBool() == true)
            #expect(try r.readBool() == false)
            #expect(try r.readString() == "héllo, wörld ✓")
            #expect(try r.readString() == "")
            #expect(try r.readOptionalString() == nil)
            #expect(try r.readOptionalString() == "x")
            #expect(Array(try r.readBlob()) == [1, 2, 3])
            #expect(Array(try r.readSlice(2)) == [9, 9])
            #expect(try r.readIdentifier() == id)
            #expect(try r.readOptionalIdentifier() == nil)
            #expect(try r.readOptionalIdentifier() == id)
            #expect(r.isAtEnd)
            try r.expectEnd()
        }
    }

    @Test("fixed-width integers are big-endian")
    func bigEndianLayout() {
        var w = ByteWriter()
        w.write(bigEndian: UInt32(0x0102_0304))
        w.write(bigEndian: UInt64(0x0506_0708_090A_0B0C))
        #expect(w.bytes == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    }

    static let unsignedEdges: [UInt64] = [
        0, 1, 127, 128, 255, 16383, 16384, 1 << 21 - 1, 1 << 21, UInt64(UInt32.max), 1 << 56 - 1, 1 << 56, 1 << 63 - 1,
        1 << 63, UInt64.max - 1, UInt64.max,
    ]

    @Test("varints at their edges round-trip with the expected length", arguments: unsignedEdges)
    func varintEdges(_ value: UInt64) throws {
        var w = ByteWriter()
        w.write(varint: value)
        let bits = 64 - value.leadingZeroBitCount
        #expect(w.bytes.count == max(1, (bits + 6) / 7))
        #expect(try reading(w.bytes) { (r) throws(DecodingError) in try r.readVarint() } == value)
    }

    @Test(
        "zigzag signed varints at their edges",
        arguments: [0, 1, -1, 63, -64, 64, -65, Int64.max, Int64.min, Int64.min + 1])
    func signedEdges(_ value: Int64) throws {
        var w = ByteWriter()
        w.write(signed: value)
        #expect(try reading(w.bytes) { (r) throws(DecodingError) in try r.readSigned() } == value)
        if value == 0 || value == -1 { #expect(w.bytes.count == 1) }
    }

    @Test("random values round-trip (fixed seed)")
    func randomRoundTrips() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            let u = rng.next() >> UInt64.random(in: 0...63, using: &rng)
            let s = Int64(bitPattern: rng.next()) >> Int64.random(in: 0...63, using: &rng)
            var w = ByteWriter()
            w.write(varint: u)
            w.write(signed: s)
            let back = try reading(w.bytes) { (r) throws(DecodingError) in
                (try r.readVarint(), try r.readSigned(), r.isAtEnd)
            }
            #expect(back == (u, s, true))
        }
    }

    @Test("malformed varints are badVarint or truncated, never a trap")
    func malformedVarints() {
        let cases: [([UInt8], DecodingError.Reason)] = [
            ([], .truncated),
            ([0x80], .truncated),
            ([0xFF, 0xFF], .truncated),
            // 10 bytes whose last carries more than the 64th bit.
            ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], .badVarint),
            // 11 bytes: longer than any 64-bit value.
            ([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00], .badVarint),
        ]
        for (bytes, reason) in cases {
            let error = #expect(throws: DecodingError.self) {
                try reading(bytes) { (r) throws(DecodingError) in try r.readVarint() }
            }
            #expect(error?.reason == reason, "\(bytes)")
        }
        // The largest value in 10 bytes is accepted.
        let max: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        #expect((try? reading(max) { (r) throws(DecodingError) in try r.readVarint() }) == UInt64.max)
    }

    @Test("lengths, bools, UTF-8, truncation and trailing bytes are checked")
    func damagedValues() {
        func reason(_ bytes: [UInt8], _ body: (inout ByteReader) throws(DecodingError) -> Void) -> DecodingError.Reason?
        {
            do {
                try reading(bytes, body)
                return nil
            } catch { return error.reason }
        }
        #expect(reason([5, 1, 2]) { (r) throws(DecodingError) in _ = try r.readBlob() } == .badLength(5))
        #expect(
            reason([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) { (r) throws(DecodingError) in _ = try r.readBlob() }
                == .badLength(0xFFFF_FFFF))
        #expect(reason([2]) { (r) throws(DecodingError) in _ = try r.readBool() } == .badTag(2))
        #expect(reason([2, 0xC3, 0x28]) { (r) throws(DecodingError) in _ = try r.readString() } == .invalidUTF8)
        #expect(reason([1, 2, 3]) { (r) throws(DecodingError) in _ = try r.readUInt64() } == .truncated)
        #expect(reason([1, 2, 3]) { (r) throws(DecodingError) in _ = try r.readUInt32() } == .truncated)
        #expect(reason([1, 0, 0]) { (r) throws(DecodingError) in _ = try r.readOptionalIdentifier() } == .truncated)
        #expect(
            reason([1, 2]) { (r) throws(DecodingError) in
                _ = try r.readByte()
                try r.expectEnd()
            } == .trailingBytes(1))
        #expect(reason([1]) { (r) throws(DecodingError) in _ = try r.readSlice(-1) } == .truncated)
        #expect(reason([3, 0, 0, 0]) { (r) throws(DecodingError) in _ = try r.readLength(limit: 2) } == .badLength(3))
    }

    @Test("errors say where and why")
    func errorDescriptions() {
        #expect(DecodingError(.truncated, at: 7).description == "truncated data at byte 7")
        #expect(DecodingError(.badTag(9), at: 0).description == "unknown tag 9 at byte 0")
        #expect(DecodingError(.checksumMismatch, at: 3).description == "checksum mismatch")
    }

    @Test("identifiers format and parse in both forms")
    func identifiers() throws {
        let id = Identifier(high: 0x0123_4567_89AB_CDEF, low: 0x0011_2233_4455_6677)
        #expect(id.hex == "0123456789abcdef0011223344556677")
        #expect(id.uuidString == "01234567-89ab-cdef-0011-223344556677")
        #expect(id.description == id.uuidString)
        #expect(Identifier(id.hex) == id)
        #expect(Identifier(id.uuidString) == id)
        #expect(Identifier("01234567-89AB-CDEF-0011-223344556677") == id)
        #expect(Identifier(bytes: id.bytes) == id)
        #expect(
            id.bytes == [
                0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
            ])
        #expect(Identifier(high: 0, low: 1).hex == "00000000000000000000000000000001")
        for bad in [
            "", "0123", "0123456789abcdef001122334455667", "0123456789abcdef00112233445566778",
            "0123456789abcdef001122334455667g", "01234567-89ab-cdef-0011-22334455667",
            "0123-4567-89ab-cdef-0011-2233-4455-6677", "-0123456789abcdef0011223344556677",
            "é123456789abcdef0011223344556677",
        ] {
            #expect(Identifier(bad) == nil, "\(bad)")
        }
        #expect(Identifier(bytes: [UInt8](repeating: 0, count: 15)) == nil)
        #expect(Identifier(high: 1, low: 0) > Identifier(high: 0, low: .max))
    }

    @Test("random identifiers are version 4, variant 1, and reproducible from a seed")
    func randomIdentifiers() {
        var a = SeededGenerator(seed: 3)
        var b = SeededGenerator(seed: 3)
        for _ in 0..<100 {
            let id = Identifier.random(using: &a)
            #expect(id == Identifier.random(using: &b))
            #expect((id.high >> 12) & 0xF == 4)
            #expect(id.low >> 62 == 0b10)
            #expect(Identifier(id.uuidString) == id)
        }
        #expect(Identifier.random() != Identifier.random())
    }

    @Test("CRC-32C matches the standard check value")
    func crc32c() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        // Incremental equals one-shot, across the 8-byte fast path.
        let data = (0..<100).map { UInt8($0) }
        let whole = CRC32C.checksum(data)
        let first = data[0..<37].withUnsafeBytes { CRC32C.checksum($0) }
        let both = data[37...].withUnsafeBytes { CRC32C.checksum($0, continuing: first) }
        #expect(both == whole)
    }

    @Test("the hardware CRC-32C equals the table-driven one on every length and alignment")
    func crc32cHardwareMatchesSoftware() {
        #if arch(x86_64)
            // Every x86-64 processor of this century has SSE4.2: the probe (one CPUID) finds it.
            #expect(CRC32C.hardware)
        #endif
        var rng = SeededGenerator(seed: 32)
        let data = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &rng) }
        data.withUnsafeBytes { all in
            for start in 0..<9 {
                // Around the three-lane block sizes (3 x 64 and 3 x 512 bytes) and their multiples.
                let lengths = [0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 191, 192, 193, 250, 383, 384, 385, 1000]
                for length in lengths + [1535, 1536, 1537, 1728, 3071, 3072, 3300, 4000, 8000]
                where start + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == CRC32C.software(slice))
                    #expect(
                        CRC32C.checksum(slice, continuing: 0xDEAD_BEEF)
                            == CRC32C.software(slice, continuing: 0xDEAD_BEEF))
                }
            }
        }
    }

    @Test("the UTF-8 check agrees with String(validating:) on edge sequences and random bytes")
    func utf8Validation() {
        // Bytes around every boundary of Table 3-7, so random strings hit each rule.
        let interesting: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
            0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ]
        var rng = SeededGenerator(seed: 8)
        var valid = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...12, using: &rng)
            var bytes: [UInt8] = []
            for _ in 0..<length {
                bytes.append(
                    Bool.random(using: &rng)
                        ? interesting[Int.random(in: 0..<interesting.count, using: &rng)]
                        : UInt8.random(in: 0...255, using: &rng))
            }
            // Behind an ASCII run too, so the eight-byte skip hands over at every offset.
            for prefix in [0, 5, 8, 13] {
                let all = [UInt8](repeating: 0x61, count: prefix) + bytes
                let expected = String(validating: all, as: UTF8.self) != nil
                let got = all.withUnsafeBytes { UTF8Validation.isValid($0) }
                #expect(got == expected, "\(all)")
                if expected { valid += 1 }
            }
        }
        #expect(valid > 1_000, "the sample holds valid multi-byte text too")
        let samples = ["", "plain", "café", "日本語", "😀 emoji", "\u{10FFFF}", String(repeating: "x", count: 100) + "é"]
        for text in samples {
            #expect(Array(text.utf8).withUnsafeBytes { UTF8Validation.isValid($0) })
        }
    }
}
