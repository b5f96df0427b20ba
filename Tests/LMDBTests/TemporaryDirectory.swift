import FoundationEssentials
import Glibc

/// The permission bits of `path`, or nil if it does not exist.
func permissions(_ path: String) -> mode_t? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return st.st_mode & 0o777
}

/// A big-endian key, so byte order equals numeric order.
func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian) { Array($0) } }

/// Decodes a big-endian key back to its number.
func number(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
}
