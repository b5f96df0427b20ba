internal import CIntrinsics

/// CRC-32C (Castagnoli), the checksum stored with every event.
///
/// The processor's crc32 instruction when it has one (SSE 4.2), else slicing-by-8 tables.
public enum CRC32C {
    /// Whether the hardware instruction is used.
    public static let hardware = notes_crc32c_hardware() == 1

    static let tables: [[UInt32]] = {
        var t = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[0][i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k][i] = (t[k - 1][i] >> 8) ^ t[0][Int(t[k - 1][i] & 0xFF)] }
        }
        return t
    }()

    /// The checksum of `bytes`, continuing from `crc` (0 to start).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        if hardware {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
            return ~notes_crc32c_update(~crc, base, bytes.count)
        }
        return software(bytes, continuing: crc)
    }

    /// The table-driven computation (also the reference the tests compare the hardware with).
    static func software(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        let count = bytes.count
        guard count > 0, let base = bytes.baseAddress else { return crc }
        tables.withUnsafeBufferPointer { tp in
            let t0 = tp[0], t1 = tp[1], t2 = tp[2], t3 = tp[3], t4 = tp[4], t5 = tp[5], t6 = tp[6], t7 = tp[7]
            t0.withUnsafeBufferPointer { t0 in
                var i = 0
                while i + 8 <= count {
                    let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let x = w ^ UInt64(c)
                    c =
                        t7[Int(x & 0xFF)] ^ t6[Int((x >> 8) & 0xFF)] ^ t5[Int((x >> 16) & 0xFF)]
                        ^ t4[Int((x >> 24) & 0xFF)] ^ t3[Int((x >> 32) & 0xFF)] ^ t2[Int((x >> 40) & 0xFF)]
                        ^ t1[Int((x >> 48) & 0xFF)] ^ t0[Int(x >> 56)]
                    i += 8
                }
                while i < count {
                    c = t0[Int((c ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                    i += 1
                }
            }
        }
        return ~c
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
