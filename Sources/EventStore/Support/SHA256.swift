internal import CCrypto

/// SHA-256 (FIPS 180-4), incremental or one-shot, computed by Debian's libcrypto (OpenSSL,
/// linked statically), the implementation the world audits; it uses the processor's SHA
/// extensions where they exist.
///
/// Measured on this project's machine (2026-12-01), per digest of our envelope sizes (the
/// previous digest and the envelope's bytes): 275 bytes 198-232 ns against 342-351 ns for the
/// implementation this replaced (the same SHA extensions, driven from C), 1,056 bytes 630 ns
/// against 934-975 ns. OpenSSL's EVP interface was as fast per digest but read its
/// configuration at the first use, about 2 ms on every command's start, so the low-level
/// interface is used.
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
public struct SHA256: @unchecked Sendable {
    /// The digest length in bytes.
    public static let digestByteCount = 32

    /// libcrypto's context: a plain struct, copied with the hasher.
    private var context = SHA256_CTX()

    /// A hasher with nothing hashed yet.
    public init() { SHA256_Init(&context) }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        SHA256_Update(&context, base, bytes.count)
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
        var context = self.context
        // Into the stack, then copied: `[UInt8](unsafeUninitializedCapacity:)` costs a lookup of
        // the array's type metadata each time (see `Identifier.bytes`), once per appended event.
        var digest: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digest) {
            _ = SHA256_Final($0.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
        }
        return withUnsafeBytes(of: digest) { Array($0) }
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
    ///
    /// Written straight into the string's storage: the generic form below, called across
    /// modules, cost 16,000 instructions a digest (`import-markdown` hashes every file).
    public static func hex(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (i, byte) in bytes.enumerated() {
                out[2 &* i] = hexDigit(byte >> 4)
                out[2 &* i &+ 1] = hexDigit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    @inline(__always)
    private static func hexDigit(_ d: UInt8) -> UInt8 { d < 10 ? 0x30 &+ d : 0x57 &+ d }

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
}
