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
/// memory. A line longer than `maxLineBytes` stops the copy where it is read (before 2026-12-06
/// `notes import /dev/zero`, or a stream without line breaks through a pipe, was copied until the
/// disk was full, and only then refused).
package final class ImportInput {
    /// The first bytes of gzip data: a `.gz` under another name, or through standard input.
    package static let gzipMagic: [UInt8] = [0x1F, 0x8B]
    /// Why such a first line is refused (before 2026-12-07: "malformed JSON: expected a value at
    /// byte 0 (found byte 0x1F)").
    package static let gzipRefusal =
        "the file is gzip-compressed: give it a name ending in .gz, or decompress it (gzip -dc FILE > NEW) and import that"

    /// The path, or `standard input`.
    package let label: String
    private let fd: Int32
    /// Where the bytes start (standard input may be redirected from a file read partway).
    private let start: Int
    /// The number of bytes.
    package let size: Int

    /// Opens `path` (`-` for standard input), spooling it into `spoolDirectory` when it cannot
    /// be read twice; a line longer than `maxLineBytes` is refused as ``forEachLine(maxLineBytes:_:)``
    /// refuses it, as soon as the copy reads that much of it, and a first line that
    /// `checkFirstLine` refuses (the first that is not blank) as soon as it is whole.
    package init(
        path: String, spoolDirectory: String, maxLineBytes: Int = .max, checkFirstLine: FirstLineCheck? = nil
    ) throws(NotesError) {
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
            var lines = LineLengths(limit: maxLineBytes, checkFirst: checkFirstLine)
            if path.hasSuffix(".gz") {
                try Self.decompress(path, into: spool, directory: spoolDirectory, lines: &lines)
            } else {
                try Self.copy(from: source, label: label, into: spool, directory: spoolDirectory, lines: &lines)
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

    /// The length of the line a copy is in, so that an overlong one stops the copy: a stream
    /// without line breaks (`/dev/zero`) never ends. The first line that is not blank is checked
    /// as soon as it is whole, too (with the blank ones before it, which the import skips): a
    /// stream of anything but events (`yes`, `/dev/urandom`) never ends either, and a blank
    /// line before it (`{ echo; yes; }`) must not let it through.
    struct LineLengths {
        let limit: Int
        /// What refuses a first line, as the import would.
        let checkFirst: FirstLineCheck?
        /// Whether every line so far was blank (so the next one is checked too).
        var blankSoFar = true
        /// Line breaks read so far.
        var breaks = 0
        /// Bytes of the current line read so far.
        var current = 0
        /// The first bytes of the input, to tell a byte-order mark (no part of the first line).
        var head: [UInt8] = []
        /// The line to check, while it is read.
        var first: [UInt8] = []

        init(limit: Int, checkFirst: FirstLineCheck?) {
            self.limit = limit
            self.checkFirst = checkFirst
        }

        /// Counts `bytes`, the next ones of the input; throws once the current line is over the
        /// limit, or the first line is whole and refused.
        mutating func read(_ bytes: UnsafeRawBufferPointer) throws(NotesError) {
            if head.count < 3 { head += bytes.prefix(3 - head.count) }
            var rest = bytes
            while let base = rest.baseAddress, let nl = memchr(base, 0x0A, rest.count) {
                let at = base.distance(to: UnsafeRawPointer(nl))
                if blankSoFar, let checkFirst {
                    first += rest[..<at]
                    let line = breaks == 0 && head == byteOrderMark ? Array(first.dropFirst(3)) : first
                    first = []
                    let checked = line.withUnsafeBytes { b in
                        Result { () throws(InterchangeError) in try checkFirst(b) }
                    }
                    if case .failure(let refused) = checked { throw .validation(refused.input) }
                    blankSoFar = ImportInput.isBlank(line)
                }
                breaks += 1
                current = 0
                rest = UnsafeRawBufferPointer(rebasing: rest[(at + 1)...])
            }
            if blankSoFar && checkFirst != nil { first += rest }
            current += rest.count
            let mark = breaks == 0 && head == byteOrderMark ? 3 : 0
            if current - mark > limit { throw .validation(ImportInput.overlong(line: breaks + 1, limit: limit).input) }
        }
    }

    /// A UTF-8 byte-order mark.
    package static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Whether a line holds nothing but spaces, tabs and carriage returns: an import skips it.
    package static func isBlank(_ line: some Sequence<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// What an import does with a line, applied to the first lines alone, in order: each up to
    /// the first that is not blank (spaces, tabs and carriage returns), which the import skips.
    /// The caller keeps one batch for them, so that a refusal names the line's number.
    package typealias FirstLineCheck = (UnsafeRawBufferPointer) throws(InterchangeError) -> Void

    /// Copies everything `source` gives into `spool`, stopping at a line over the limit.
    private static func copy(
        from source: Int32, label: String, into spool: Int32, directory: String, lines: inout LineLengths
    ) throws(NotesError) {
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
            let refused = buffer.withUnsafeBytes { b -> NotesError? in
                do throws(NotesError) { try lines.read(UnsafeRawBufferPointer(rebasing: b[0..<n])) } catch {
                    return error
                }
                return nil
            }
            if let refused { throw refused }
        }
    }

    /// Runs `gzip -dc -- PATH` and copies its output into `spool`, stopping it at a line over
    /// the limit (a small `.gz` can hold a line of any length).
    private static func decompress(_ path: String, into spool: Int32, directory: String, lines: inout LineLengths)
        throws(NotesError)
    {
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard pipe(&output) == 0 else { throw .io(IOFailure(.decompress, path, detail: "cannot make a pipe")) }
        guard pipe(&errors) == 0 else {
            close(output[0])
            close(output[1])
            throw .io(IOFailure(.decompress, path, detail: "cannot make a pipe"))
        }
        // No end may leak into another program this process starts.
        for fd in output + errors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                ["gzip", "-dc", "--", path], standardOutput: output[1], standardError: errors[1])
        } catch {
            for fd in output + errors { close(fd) }
            throw .io(IOFailure(.decompress, path, code: error.code, detail: "gzip could not start; install gzip"))
        }
        close(output[1])
        close(errors[1])
        do {
            try copy(from: output[0], label: path, into: spool, directory: directory, lines: &lines)
        } catch {
            close(output[0])
            close(errors[0])
            kill(child.pid, SIGKILL)
            _ = child.wait()
            throw error
        }
        close(output[0])
        // What gzip said: its last 4 KB hold its last line.
        var said: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(errors[0], $0.baseAddress, $0.count) }
            if n > 0 {
                said.append(contentsOf: buffer[0..<n])
                if said.count > 8192 { said.removeFirst(said.count - 4096) }
            } else if n == 0 || errno != EINTR {
                break
            }
        }
        close(errors[0])
        let status = child.wait()
        let lastLine = String(decoding: said, as: UTF8.self).split(whereSeparator: \.isNewline).last.map(String.init)
        // A damaged file, not a failing system: bad input, like a refused line. What gzip
        // said is part of the one line of the error, not a line of its own.
        // Status 2 is gzip's warning (trailing garbage ignored): the data came out whole.
        guard status == 0 || status == 2 else {
            let what = lastLine?.split(separator: ":").last.map { $0.trimmingPrefix(" ") }.map(String.init) ?? ""
            throw .validation(
                .damagedFile(path, reason: what.isEmpty ? "gzip failed (status \(status))" : "gzip: \(what)"))
        }
    }

    /// The refusal of line `line`, over `limit` bytes. It names the body limit the line limit was
    /// made from, the one the user set or knows: the line limit alone (7340032 for 1 MiB, the
    /// worst case of JSON's escapes) read as a limit nobody had set (before 2026-12-07).
    static func overlong(line: Int, limit: Int) -> InterchangeError {
        guard let body = bodyLimit(forLine: limit) else {
            return InterchangeError(line: line, "the line is over \(limit) bytes, longer than any event")
        }
        return InterchangeError(
            line: line,
            "the line is longer than any event with a body within the limit of \(body) bytes "
                + "(\(InvalidInput.raiseBodyLimit)): it is over \(limit) bytes")
    }

    /// The body limit whose ``maxLineBytes(forBody:)`` is `limit`, or nil when none is.
    package static func bodyLimit(forLine limit: Int) -> Int? {
        guard limit > 1 << 20, limit != .max else { return nil }
        let body = (limit - (1 << 20)) / 6
        return maxLineBytes(forBody: body) == limit ? body : nil
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
        if got == 3 && head == Self.byteOrderMark { offset += 3 }
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
                throw Self.overlong(line: number + 1, limit: maxLineBytes)
            }
        }
        if end > begin {
            number += 1
            try buffer.withUnsafeBytes { b in try body(UnsafeRawBufferPointer(rebasing: b[begin..<end]), number) }
        }
    }
}
