internal import CCRC32C

/// SHA-256 (FIPS 180-4), incremental or one-shot.
///
/// ```swift
/// SHA256.hex(SHA256.hash(Array("abc".utf8)))
/// // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
///
/// var hasher = SHA256()
/// hasher.update(Array("ab".utf8))
/// hasher.update(Array("c".utf8))
/// let digest = hasher.finalize()  // the same 32 bytes
/// ```
public struct SHA256: Sendable {
    /// The digest length in bytes.
    public static let digestByteCount = 32

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes of an incomplete block, waiting for the rest of it. Inline storage keeps the hasher
    /// allocation-free.
    private var pending: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var pendingCount = 0
    /// Total message length in bytes; the padding encodes it modulo 2^64 bits as FIPS 180-4 does.
    private var totalLength: UInt64 = 0

    /// Whether the processor's SHA extensions run the compression function.
    public static let hardware = notes_sha256_hardware() == 1
    /// Per hasher, so tests can compare the two paths.
    private var useHardware = SHA256.hardware

    /// A hasher with nothing hashed yet.
    public init() {}

    /// A hasher that uses the portable rounds even where the SHA extensions exist.
    init(softwareOnly: Bool) { useHardware = !softwareOnly && SHA256.hardware }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var input = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        totalLength &+= UInt64(truncatingIfNeeded: remaining)
        if pendingCount > 0 {
            let offset = pendingCount
            let take = min(64 - offset, remaining)
            withUnsafeMutableBytes(of: &pending) { block in
                UnsafeMutableRawBufferPointer(rebasing: block[offset..<(offset + take)])
                    .copyMemory(from: UnsafeRawBufferPointer(start: input, count: take))
            }
            pendingCount += take
            input += take
            remaining -= take
            guard pendingCount == 64 else { return }
            let block = pending
            withUnsafeBytes(of: block) { buffer in
                if let start = buffer.baseAddress { compress(blocks: start, count: 1) }
            }
            pendingCount = 0
        }
        let fullBlocks = remaining / 64
        if fullBlocks > 0 {
            compress(blocks: input, count: fullBlocks)
            input += fullBlocks * 64
            remaining -= fullBlocks * 64
        }
        if remaining > 0 {
            let count = remaining
            withUnsafeMutableBytes(of: &pending) { block in
                UnsafeMutableRawBufferPointer(rebasing: block[0..<count])
                    .copyMemory(from: UnsafeRawBufferPointer(start: input, count: count))
            }
            pendingCount = remaining
        }
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds the UTF-8 bytes of `text` to the message.
    public mutating func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Pads the message and returns its 32-byte digest.
    public consuming func finalize() -> [UInt8] {
        // One allocation (the digest): this runs for every appended event (the hash chain).
        let bitLength = totalLength &* 8
        let padCount = pendingCount < 56 ? 64 - pendingCount : 128 - pendingCount
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { pad in
            pad.initializeMemory(as: UInt8.self, repeating: 0)
            pad[0] = 0x80
            pad.storeBytes(of: bitLength.bigEndian, toByteOffset: padCount - 8, as: UInt64.self)
            update(UnsafeRawBufferPointer(rebasing: pad[0..<padCount]))
        }
        let state = self.state
        return [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            withUnsafeBytes(of: state) { words in
                for i in 0..<8 {
                    let word = words.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)
                    for j in 0..<4 { digest[i * 4 + j] = UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32(j))) }
                }
            }
            count = 32
        }
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Lowercase hexadecimal, two digits per byte: how digests are shown to people.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 &- n) }

    /// Runs the compression function over `count` consecutive 64-byte blocks at `blocks`.
    private mutating func compress(blocks: UnsafeRawPointer, count: Int) {
        if useHardware {
            withUnsafeMutableBytes(of: &state) { words in
                notes_sha256_blocks(words.baseAddress!.assumingMemoryBound(to: UInt32.self), blocks, count)
            }
            return
        }
        compressSoftware(blocks: blocks, count: count)
    }

    /// The portable rounds of FIPS 180-4.
    private mutating func compressSoftware(blocks: UnsafeRawPointer, count: Int) {
        var (h0, h1, h2, h3, h4, h5, h6, h7) = state
        Self.roundConstants.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for blockIndex in 0..<count {
                    let block = blocks + blockIndex &* 64
                    for t in 0..<16 {
                        w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
                    }
                    for t in 16..<64 {
                        let x = w[t &- 15]
                        let y = w[t &- 2]
                        let s0 = Self.rotr(x, 7) ^ Self.rotr(x, 18) ^ (x >> 3)
                        let s1 = Self.rotr(y, 17) ^ Self.rotr(y, 19) ^ (y >> 10)
                        w[t] = w[t &- 16] &+ s0 &+ w[t &- 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for t in 0..<64 {
                        let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                        let choose = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ choose &+ k[t] &+ w[t]
                        let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ majority
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                    h0 &+= a
                    h1 &+= b
                    h2 &+= c
                    h3 &+= d
                    h4 &+= e
                    h5 &+= f
                    h6 &+= g
                    h7 &+= h
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}
