import FoundationEssentials
import Glibc

/// A fresh directory under the system temporary directory, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "lmdb-tests") {
        var template = Array("/tmp/\(label).XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        guard let made else { fatalError("mkdtemp failed: errno \(errno)") }
        path = made
    }

    /// A path inside the directory (not created).
    func child(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

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

/// Small deterministic generator (SplitMix64) so every run sees the same data.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
