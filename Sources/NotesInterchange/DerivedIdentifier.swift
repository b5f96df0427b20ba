package import Basics
import EventStore
import Notes

extension Identifier {
    /// A name-based id: the first 16 bytes of SHA-256 over the parts (each followed by a NUL),
    /// marked as an RFC 9562 version-8 UUID. The same parts always give the same id, which
    /// is what makes converted and lifted events idempotent to import again.
    package static func derived(_ parts: String...) -> Identifier {
        var h = SHA256()
        for p in parts {
            h.update(p)
            h.update([0])
        }
        let d = h.finalize()
        var b = Array(d[0..<16])
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        return Identifier(bytes: b) ?? Identifier(high: 0, low: 0)
    }
}
