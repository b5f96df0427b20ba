import Basics
import Glibc
package import Notes

/// The bytes of an import, readable from their beginning as many times as the write needs
/// (a write transaction starts over when the store's map must grow).
///
/// A regular file is read in place, standard input too when it is redirected from one. Anything
/// else (a pipe, a terminal, a device, the output of `gzip -dc` for a `.gz` file) is copied
/// first into an unnamed temporary file in the store's own directory (`O_TMPFILE`: it has no
/// name, so nothing is left behind even when the process is killed; the directory is the
/// store's, mode 0700, so the notes' text goes nowhere else). The import never holds the file in
/// memory.
package final class ImportInput {
    /// The path, or `standard input`.
    package let label: String
    private let fd: Int32
    /// Where the bytes start (standard input may be redirected from a file read partway).
    private let start: Int
    /// The number of bytes.
    package let size: Int

    /// Opens `path` (`-` for standard input), spooling it into `spoolDirectory` when it cannot
    /// be read twice.
    package init(path: String, spoolDirectory: String) throws(NotesError) {
        label = path == "-" ? "standard input" : path
        guard !path.isEmpty else { throw .validation(.emptyFileName) }
        var source: Int32 = 0
        if path != "-" {
            var st = stat()
            guard stat(path, &st) == 0 else { throw .io(IOFailure(.read, path, detail: "check the path")) }
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .validation(.isDirectory(path)) }
            source = open(path, O_RDONLY | O_CLOEXEC)
            guard source >= 0 else { throw .io(IOFailure(.read, path, detail: "check the path")) }
        }
        var st = stat()
        if !path.hasSuffix(".gz"), fstat(source, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            let at = lseek(source, 0, SEEK_CUR)
            fd = source
            start = at > 0 ? Int(at) : 0
            size = max(0, Int(st.st_size) - start)
            return
        }
        defer { if source != 0 { close(source) } }
        let spool = try Self.spoolFile(in: spoolDirectory, for: label)
        do {
            if path.hasSuffix(".gz") {
                try Self.decompress(path, into: spool)
            } else {
                try Self.copy(from: source, label: label, into: spool, directory: spoolDirectory)
            }
        } catch {
            close(spool)
            throw error
        }
        fd = spool
        start = 0
        var spooled = stat()
        size = fstat(spool, &spooled) == 0 ? Int(spooled.st_size) : 0
    }

    deinit { if fd != 0 { close(fd) } }

    /// `O_TMPFILE`: Glibc defines it as a combination Swift does not import.
    private static let temporaryFileFlag = Int32(0o20_000_000) | O_DIRECTORY

    /// An unnamed file in `directory`, or (where the file system cannot make one) a named one
    /// removed at once.
    private static func spoolFile(in directory: String, for label: String) throws(NotesError) -> Int32 {
        let fd = open(directory, temporaryFileFlag | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { return fd }
        var template = Array("\(directory)/import-XXXXXX".utf8CString)
        let named = template.withUnsafeMutableBufferPointer { makeTemporaryFile($0.baseAddress!) }
        guard named >= 0 else {
            throw .io(IOFailure(.create, "a temporary copy of \(label) in \(directory)"))
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return named
    }

    /// Copies everything `source` gives into `spool`.
    private static func copy(from source: Int32, label: String, into spool: Int32, directory: String)
        throws(NotesError)
    {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(IOFailure(.read, label))
            }
            if n == 0 { return }
            let failure = buffer.withUnsafeBytes { writeFully(fd: spool, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            if let failure {
                throw .io(IOFailure(.write, "a temporary copy of \(label) in \(directory)", code: failure))
            }
        }
    }

    /// Runs `gzip -dc -- PATH` with its output into `spool`.
    private static func decompress(_ path: String, into spool: Int32) throws(NotesError) {
        let status: Int32
        let said: String
        do {
            (status, said) = try ChildProcess.runCapturingError(["gzip", "-dc", "--", path], standardOutput: spool)
        } catch {
            throw .io(IOFailure(.decompress, path, code: error.code, detail: "gzip could not start; install gzip"))
        }
        // A damaged file, not a failing system: bad input, like a refused line. What gzip
        // said is part of the one line of the error, not a line of its own.
        // Status 2 is gzip's warning (trailing garbage ignored): the data came out whole.
        guard status == 0 || status == 2 else {
            let what = said.split(separator: ":").last.map { $0.trimmingPrefix(" ") }.map(String.init) ?? ""
            throw .validation(
                .damagedFile(path, reason: what.isEmpty ? "gzip failed (status \(status))" : "gzip: \(what)"))
        }
    }

    /// The longest line an import reads for bodies of up to `maxBodyBytes`: JSON may write each
    /// byte of a body as six (`\u0001`), and the rest of a line is far under a mebibyte. A longer
    /// line is refused as soon as that much of it is read, not held whole in memory first (a
    /// line of 1 GB took 2 GB and 5.5 s before the body's limit refused it).
    package static func maxLineBytes(forBody maxBodyBytes: Int) -> Int {
        let (times, overflow) = maxBodyBytes.multipliedReportingOverflow(by: 6)
        return overflow ? .max : times &+ min(1 << 20, .max - times)
    }

    /// Calls `body` with each line (without its `\n`), numbered from 1, from the beginning. A
    /// last line without a newline counts too. A UTF-8 byte-order mark that starts the input
    /// (Windows editors write one) is no part of the first line. A line longer than
    /// `maxLineBytes` is refused (``InterchangeError``) once that many of its bytes are read.
    package func forEachLine(maxLineBytes: Int = .max, _ body: (UnsafeRawBufferPointer, Int) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = start
        var head: [UInt8] = [0, 0, 0]
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, 3, off_t(start)) }
        if got == 3 && head == [0xEF, 0xBB, 0xBF] { offset += 3 }
        var begin = 0
        var end = 0
        var number = 0
        while true {
            if end == buffer.count {
                if begin > 0 {
                    buffer.withUnsafeMutableBytes { b in
                        guard let base = b.baseAddress else { return }
                        memmove(base, base + begin, end - begin)
                    }
                    end -= begin
                    begin = 0
                } else {
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                }
            }
            let n = buffer.withUnsafeMutableBytes { b in pread(fd, b.baseAddress! + end, b.count - end, off_t(offset)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw NotesError.io(IOFailure(.read, label))
            }
            if n == 0 { break }
            offset += n
            let scanFrom = end
            end += n
            try buffer.withUnsafeBytes { b in
                var i = scanFrom
                while i < end {
                    guard let nl = memchr(b.baseAddress! + i, 0x0A, end - i) else { break }
                    let at = b.baseAddress!.distance(to: UnsafeRawPointer(nl))
                    number += 1
                    try body(UnsafeRawBufferPointer(rebasing: b[begin..<at]), number)
                    begin = at + 1
                    i = begin
                }
            }
            if begin == end {
                begin = 0
                end = 0
            } else if end - begin > maxLineBytes {
                throw InterchangeError(
                    line: number + 1,
                    "the line is over \(maxLineBytes) bytes, longer than any event a body of the limit makes "
                        + "(\(InvalidInput.raiseBodyLimit))")
            }
        }
        if end > begin {
            number += 1
            try buffer.withUnsafeBytes { b in try body(UnsafeRawBufferPointer(rebasing: b[begin..<end]), number) }
        }
    }
}
