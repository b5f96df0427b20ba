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

    private static let roundConstants: [UInt32] = withUnsafeBytes(of: notes_sha256_round_constants) {
        Array($0.bindMemory(to: UInt32.self))
    }

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
