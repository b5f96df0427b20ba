import FoundationEssentials
import Glibc

/// A fresh directory under /tmp, removed with its contents when the value goes away.
public final class TemporaryDirectory {
    public let path: String

    public init(_ label: String = "notes-tests") {
        var template = Array("/tmp/\(label).XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: result, count: strlen(result)), as: UTF8.self)
        }
        guard let made else { fatalError("mkdtemp failed: errno \(errno)") }
        path = made
    }

    /// A path inside the directory (not created).
    public func child(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
