import Glibc

/// The C library's message for `errno`.
func systemErrorText(_ code: Int32 = errno) -> String {
    guard let p = strerror(code) else { return "error \(code)" }
    return String(cString: p)
}

/// Writes all of `bytes` to `fd`, retrying short writes and interruptions.
func writeFully(fd: Int32, _ bytes: UnsafeRawBufferPointer, what: String) throws(NotesError) {
    var offset = 0
    while offset < bytes.count {
        guard let base = bytes.baseAddress else { return }
        let n = write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            throw .validation("cannot write \(what): \(systemErrorText())")
        }
        offset += n
    }
}

func writeFully(fd: Int32, _ bytes: [UInt8], what: String) throws(NotesError) {
    let result: Result<Void, NotesError> = bytes.withUnsafeBytes { b in
        Result { () throws(NotesError) in try writeFully(fd: fd, b, what: what) }
    }
    try result.get()
}

/// A file written under a temporary name and renamed into place on ``commit()``, so readers
/// (and a crash) see either the old file or the whole new one, never a part.
public final class AtomicFile {
    public let path: String
    let temporaryPath: String
    let fd: Int32
    private var done = false

    /// Creates `path.tmp-PID` with mode 0600 (notes may be private).
    public init(path: String) throws(NotesError) {
        self.path = path
        temporaryPath = "\(path).tmp-\(getpid())"
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .validation("cannot create \(temporaryPath): \(systemErrorText()); check the directory")
        }
        self.fd = fd
    }

    /// Appends bytes.
    public func write(_ bytes: [UInt8]) throws(NotesError) {
        try writeFully(fd: fd, bytes, what: temporaryPath)
    }

    /// Flushes to disk (unless `sync` is false) and renames the file into place.
    public func commit(sync: Bool = true) throws(NotesError) {
        guard !done else { return }
        done = true
        defer { close(fd) }
        guard !sync || fsync(fd) == 0 else {
            let text = systemErrorText()
            unlink(temporaryPath)
            throw .validation("cannot write \(temporaryPath): \(text)")
        }
        guard rename(temporaryPath, path) == 0 else {
            let text = systemErrorText()
            unlink(temporaryPath)
            throw .validation("cannot rename \(temporaryPath) to \(path): \(text)")
        }
    }

    /// Removes the temporary file; the target is left as it was.
    public func discard() {
        guard !done else { return }
        done = true
        close(fd)
        unlink(temporaryPath)
    }

    deinit { discard() }
}

/// An input file read line by line in large chunks: a path, `-` for standard input, or a
/// `.gz` file decompressed by `gzip -dc` in a child process.
final class InputFile {
    let path: String
    let fd: Int32
    private let child: pid_t?
    private var closed = false

    init(path: String) throws(NotesError) {
        self.path = path
        if path == "-" {
            fd = 0
            child = nil
            return
        }
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw .validation("cannot read \(path): \(systemErrorText()); check the path")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw .validation("\(path) is a directory; give a file") }
        if path.hasSuffix(".gz") {
            (fd, child) = try Self.spawnGzip(path)
        } else {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .validation("cannot read \(path): \(systemErrorText()); check the path") }
            self.fd = fd
            child = nil
        }
    }

    /// Whether the input is a regular file (not a pipe, a terminal or decompressed output).
    var isRegularFile: Bool {
        guard child == nil else { return false }
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// Starts `gzip -dc PATH` with its output on a pipe.
    private static func spawnGzip(_ path: String) throws(NotesError) -> (Int32, pid_t) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .validation("cannot decompress \(path): \(systemErrorText())") }
        // Neither end may leak into other children; dup2 gives gzip its stdout without the flag.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        let argv = ["gzip", "-dc", "--", path]
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, "gzip", &actions, nil, cArgs, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw .validation("cannot decompress \(path): gzip could not start (\(systemErrorText(rc))); install gzip")
        }
        return (fds[0], pid)
    }

    /// Calls `body` with each line (without its `\n`), numbered from 1. A last line without a
    /// newline counts too.
    func forEachLine(_ body: (UnsafeRawBufferPointer, Int) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var start = 0
        var end = 0
        var number = 0
        while true {
            if end == buffer.count {
                if start > 0 {
                    buffer.withUnsafeMutableBytes { b in
                        guard let base = b.baseAddress else { return }
                        memmove(base, base + start, end - start)
                    }
                    end -= start
                    start = 0
                } else {
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                }
            }
            let n = buffer.withUnsafeMutableBytes { b in read(fd, b.baseAddress! + end, b.count - end) }
            if n < 0 {
                if errno == EINTR { continue }
                throw NotesError.validation(
                    "cannot read \(path == "-" ? "standard input" : path): \(systemErrorText())")
            }
            if n == 0 { break }
            let scanFrom = end
            end += n
            try buffer.withUnsafeBytes { b in
                var i = scanFrom
                while i < end {
                    guard let nl = memchr(b.baseAddress! + i, 0x0A, end - i) else { break }
                    let at = b.baseAddress!.distance(to: UnsafeRawPointer(nl))
                    number += 1
                    try body(UnsafeRawBufferPointer(rebasing: b[start..<at]), number)
                    start = at + 1
                    i = start
                }
            }
            if start == end {
                start = 0
                end = 0
            }
        }
        if end > start {
            number += 1
            try buffer.withUnsafeBytes { b in try body(UnsafeRawBufferPointer(rebasing: b[start..<end]), number) }
        }
        try finish()
    }

    /// Closes the file and, for `.gz`, checks that gzip succeeded.
    func finish() throws(NotesError) {
        guard !closed else { return }
        closed = true
        if fd != 0 { close(fd) }
        if let child {
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            let exited = (status & 0x7F) == 0
            let code = (status >> 8) & 0xFF
            if !exited || code != 0 {
                throw .validation("cannot decompress \(path): gzip failed (status \(status)); check the file")
            }
        }
    }

    deinit {
        if !closed {
            if fd != 0 { close(fd) }
            if let child {
                kill(child, SIGTERM)
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            }
        }
    }
}

/// Reads a whole file, refusing more than `limit` bytes.
func readFile(_ path: String, limit: Int) throws(NotesError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .validation("cannot read \(path): \(systemErrorText())") }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw .validation("cannot read \(path): \(systemErrorText())")
        }
        if n == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<n])
        if bytes.count > limit { throw .validation("\(path) is over \(limit) bytes") }
    }
}

/// Creates `path` and its missing parents with mode 0700.
func makeDirectories(_ path: String) throws(NotesError) {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o700) != 0 && errno != EEXIST {
            throw .validation("cannot create the directory \(current): \(systemErrorText())")
        }
    }
}

/// The entries of a directory (without `.` and `..`), sorted, each with whether it is a directory.
func directoryEntries(_ path: String) throws(NotesError) -> [(name: String, isDirectory: Bool)] {
    guard let dir = opendir(path) else { throw .validation("cannot read the directory \(path): \(systemErrorText())") }
    defer { closedir(dir) }
    var out: [(name: String, isDirectory: Bool)] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) { p in
            p.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if name == "." || name == ".." { continue }
        var st = stat()
        guard stat(path + "/" + name, &st) == 0 else { continue }
        out.append((name, (st.st_mode & S_IFMT) == S_IFDIR))
    }
    return out.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
}
