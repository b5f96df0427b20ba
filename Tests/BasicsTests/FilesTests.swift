import Glibc
import TestSupport
import Testing

@testable import Basics

@Suite("Files")
struct FilesTests {
    private func write(_ bytes: [UInt8], to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0)
        _ = bytes.withUnsafeBytes { writeFully(fd: fd, $0) }
        close(fd)
    }

    @Test("readFile returns the whole file, or its first limit + 1 bytes when it is longer")
    func readsWholeOrCut() throws {
        let dir = TemporaryDirectory()
        let pattern = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        for size in [0, 1, 4095, 4096, 65_536, 65_537, 200_000] {
            let path = dir.child("f\(size)")
            write(Array(pattern.prefix(size)), to: path)
            #expect(try readFile(path, upTo: 1 << 20) == Array(pattern.prefix(size)), "size \(size)")
            for limit in [0, 1, size - 1, size, size + 1] where limit >= 0 {
                let read = try readFile(path, upTo: limit)
                #expect(read == Array(pattern.prefix(min(size, limit + 1))), "size \(size), limit \(limit)")
            }
        }
    }

    @Test("readFile reads files whose size stat does not tell (procfs) and pipes")
    func readsUnsizedFiles() throws {
        // /proc files report a size of 0 and have content.
        let status = try readFile("/proc/self/status", upTo: 1 << 20)
        #expect(String(decoding: status, as: UTF8.self).hasPrefix("Name:"))
        #expect(try readFile("/proc/self/status", upTo: 3).count == 4)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = Array("through a pipe".utf8)
        _ = text.withUnsafeBytes { writeFully(fd: fds[1], $0) }
        close(fds[1])
        defer { close(fds[0]) }
        #expect(try readFile("/proc/self/fd/\(fds[0])", upTo: 100) == text)
    }

    @Test("readFile names the path it cannot read")
    func refusesMissing() {
        let dir = TemporaryDirectory()
        #expect(throws: IOFailure.self) { try readFile(dir.child("absent"), upTo: 10) }
        #expect(throws: IOFailure.self) { try readFile(dir.path, upTo: 10) }
    }

    @Test("a rename that fails names both paths before the reason, and leaves no temporary")
    func renameFailureNamesBoth() throws {
        let dir = TemporaryDirectory()
        let target = dir.child("out.md")
        let file = try AtomicFile(path: target)
        try file.write(Array("text".utf8))
        // The target became a folder holding a file meanwhile (someone else's hands).
        #expect(mkdir(target, 0o700) == 0)
        write(Array("x".utf8), to: target + "/inside")
        let error = #expect(throws: IOFailure.self) { try file.commit() }
        let text = error?.description ?? ""
        #expect(text.hasPrefix("cannot rename \(target).tmp-") && text.contains(" to \(target): "), "\(text)")
        #expect(try directoryEntries(dir.path).map(\.name) == ["out.md"])
    }
}
