import Glibc

/// A file or directory outside the store that could not be read or written: what was being
/// done, to which path, and the system's reason.
public struct IOFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done.
    public enum Operation: String, Sendable {
        case read, write, create, rename, sync, list
        case makeDirectory = "create the directory"
        case decompress
    }

    public var operation: Operation
    /// The file or directory (`standard input` and `standard output` for those).
    public var path: String
    /// The `errno` value, or nil when the failure is not a system call's (a child's status).
    public var code: Int32?
    /// Said after the reason, when there is more to say.
    public var detail: String?

    public init(_ operation: Operation, _ path: String, code: Int32?, detail: String? = nil) {
        self.operation = operation
        self.path = path
        self.code = code
        self.detail = detail
    }

    /// The failure of the system call that just failed (its `errno`).
    public init(_ operation: Operation, _ path: String, detail: String? = nil) {
        self.init(operation, path, code: errno, detail: detail)
    }

    /// Whether the disk (or a size limit) ran out of room.
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }

    /// `cannot write out.jsonl: the disk is full (No space left on device)`.
    public var description: String {
        var text = "cannot \(operation.rawValue) \(path)"
        if let code {
            text += isOutOfSpace ? ": the disk is full (\(systemErrorText(code)))" : ": \(systemErrorText(code))"
        }
        if let detail { text += (code == nil ? ": " : "; ") + detail }
        return text
    }
}

/// `path` with every symbolic link, `.` and `..` resolved, made absolute (`realpath`), or nil
/// when it does not exist.
public func resolvedPath(_ path: String) -> String? {
    guard let p = realpath(path, nil) else { return nil }
    defer { free(p) }
    return String(cString: p)
}

/// Whether `dir` is the folder `store` (true) or a folder inside it, existing or to be made
/// (false: what is written into `dir` lands in the store's folder), by device and inode, every
/// link and `.` or `..` followed as the file system follows them; nil when it is neither (or the
/// store's folder does not exist).
public func storeFolderHolding(_ dir: String, store: String) -> Bool? {
    var target = stat()
    guard stat(store, &target) == 0 else { return nil }
    func isStore(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino
    }
    if isStore(dir) { return true }
    // The deepest folder of `dir` that exists, resolved; the names below it, which the export
    // makes, taken in turn (`..` after a folder it makes is that folder's parent).
    let names = dir.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    var existing = names.count
    var resolved: String?
    while resolved == nil {
        let prefix = (dir.hasPrefix("/") ? "/" : "") + names[0..<existing].joined(separator: "/")
        resolved = resolvedPath(prefix.isEmpty ? "." : prefix)
        if resolved == nil {
            guard existing > 0 else { return nil }
            existing -= 1
        }
    }
    var parts = (resolved ?? "/").split(separator: "/").map(String.init)
    for name in names[existing...] {
        if name == "." { continue }
        if name == ".." {
            if !parts.isEmpty { parts.removeLast() }
        } else {
            parts.append(name)
        }
    }
    // Every folder above it (and it) that exists, up to the root.
    var itself = true
    while true {
        if isStore("/" + parts.joined(separator: "/")) { return itself }
        guard !parts.isEmpty else { return nil }
        parts.removeLast()
        itself = false
    }
}

/// The C library's message for the current `errno`.
public func systemErrorText() -> String { systemErrorText(errno) }

/// The C library's message for an `errno` value.
public func systemErrorText(_ code: Int32) -> String {
    guard let p = strerror(code) else { return "error \(code)" }
    return String(cString: p)
}

/// Writes all of `bytes` to `fd`, retrying short writes and interruptions; the error code of
/// a failed write, or nil.
public func writeFully(fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var offset = 0
    while offset < bytes.count, let base = bytes.baseAddress {
        let n = write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        offset += n
    }
    return nil
}

/// A file written under a temporary name and renamed into place on ``commit(sync:)``, so
/// readers (and a crash) see either the old file or the whole new one, never a part.
///
/// The temporary file is created next to the target with a unique random name (`mkstemp`,
/// mode 0600: notes may be private), so two processes writing the same file never share one.
/// Its writer holds an `flock` on it until it is renamed into place or removed, so a writer
/// killed midway (SIGKILL, a power loss) leaves one that no process holds: the next writer of
/// the same path removes it (see ``removeAbandonedTemporaries(of:)``).
public final class AtomicFile {
    public let path: String
    let temporaryPath: String
    let fd: Int32
    private var done = false

    /// `removingAbandoned`: first remove the temporaries of `path` that killed writers left
    /// (one look through the directory; a writer of many files in one folder may do it once).
    public init(path: String, removingAbandoned: Bool = true) throws(IOFailure) {
        self.path = path
        if removingAbandoned { Self.removeAbandonedTemporaries(of: path) }
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path.utf8.index(after: $0) }
        let folder = String(path[..<(slash ?? path.startIndex)])
        let name = String(path[(slash ?? path.startIndex)...])
        let temporary = folder + Self.temporaryStem(of: name) + ".tmp-XXXXXX"
        var template = Array(temporary.utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { makeTemporaryFile($0.baseAddress!) }
        guard fd >= 0 else { throw IOFailure(.create, temporary, detail: "check the directory") }
        // Held while the file is ours: released when it is closed, by the process's end too.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        self.fd = fd
        temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The most bytes a file name may have (`NAME_MAX` of Linux's file systems).
    static let longestName = 255

    /// What a temporary of the file `name` is named by before `.tmp-XXXXXX`: the name, or, when
    /// the name is too long to take those 11 bytes more (a vault's file of 250 bytes, which an
    /// export writes back), its longest start of whole characters that can.
    static func temporaryStem(of name: String) -> String {
        let room = longestName - ".tmp-XXXXXX".utf8.count
        guard name.utf8.count > room else { return name }
        var stem = ""
        var bytes = 0
        for scalar in name.unicodeScalars {
            bytes += scalar.utf8.count
            guard bytes <= room else { break }
            stem.unicodeScalars.append(scalar)
        }
        return stem
    }

    /// Removes the temporaries of `path` that writers killed midway left behind, and returns how
    /// many: files named as this type names them (`path` + `.tmp-` + six letters or digits, the
    /// name cut to fit when it is long: see ``temporaryStem(of:)``),
    /// regular, of this user, last written at least 2 seconds ago and held by no process (a
    /// writer holds its own locked until it renames or removes it). Anything else is left
    /// alone: another name, a link, another user's file, a temporary being written.
    @discardableResult
    public static func removeAbandonedTemporaries(of path: String) -> Int {
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        return removeAbandonedTemporaries(in: directory(of: path), of: [name])
    }

    /// Removes the temporaries that killed writers left of the files `names` in `directory`,
    /// as ``removeAbandonedTemporaries(of:)`` does for one, in one look through the directory
    /// (a writer of many files in one folder, `export-markdown`); returns how many.
    @discardableResult
    public static func removeAbandonedTemporaries(in directory: String, of names: Set<String>) -> Int {
        let targets = Set(names.filter { !$0.isEmpty }.map { Array(temporaryStem(of: $0).utf8) })
        let suffix = Array(".tmp-".utf8)
        guard !targets.isEmpty, let listed = directoryNames(directory) else { return 0 }
        var removed = 0
        for name in listed {
            let stem = name.count - suffix.count - 6
            guard stem > 0, name[stem..<(stem + suffix.count)].elementsEqual(suffix),
                name[(stem + suffix.count)...].allSatisfy({ $0 &- 0x30 < 10 || ($0 | 0x20) &- 0x61 < 26 }),
                targets.contains(Array(name[..<stem]))
            else { continue }
            let candidate = directory + "/" + String(decoding: name, as: UTF8.self)
            guard let held = lockIfAbandoned(candidate, directory: false) else { continue }
            defer { close(held.fd) }
            // Still the file looked at (not renamed into place and replaced meanwhile).
            var again = stat()
            guard lstat(candidate, &again) == 0, UInt64(again.st_ino) == held.inode, UInt64(again.st_dev) == held.device
            else { continue }
            if unlink(candidate) == 0 { removed += 1 }
        }
        return removed
    }

    /// Appends bytes.
    public func write(_ bytes: [UInt8]) throws(IOFailure) {
        let failure = bytes.withUnsafeBytes { writeFully(fd: fd, $0) }
        if let failure { throw IOFailure(.write, path, code: failure) }
    }

    /// Flushes to disk (unless `sync` is false) and renames the file into place; with `sync`,
    /// the directory is flushed too, so the new name survives a power loss.
    public func commit(sync: Bool = true) throws(IOFailure) {
        guard !done else { return }
        done = true
        defer { close(fd) }
        guard !sync || fsync(fd) == 0 else {
            let failure = IOFailure(.write, path)
            unlink(temporaryPath)
            throw failure
        }
        guard rename(temporaryPath, path) == 0 else {
            // Both names before the reason: "cannot rename A to B: Is a directory" (before
            // 2026-12-07 "cannot rename A: Is a directory; to B").
            let failure = IOFailure(.rename, "\(temporaryPath) to \(path)")
            unlink(temporaryPath)
            throw failure
        }
        if sync {
            let dir = open(Self.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dir >= 0 {
                fsync(dir)
                close(dir)
            }
        }
    }

    /// Removes the temporary file; the target is left as it was.
    public func discard() {
        guard !done else { return }
        done = true
        close(fd)
        unlink(temporaryPath)
    }

    /// The directory part of `path` (`.` for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    deinit { discard() }
}

/// `mkstemp` (a new file, mode 0600, with a unique random name filled into `template`), closed
/// on exec.
public func makeTemporaryFile(_ template: UnsafeMutablePointer<CChar>) -> Int32 {
    let fd = mkstemp(template)
    if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return fd
}

/// Reads a whole file, or its first `limit + 1` bytes when it is longer: a caller that finds
/// more than `limit` knows the file is over its limit without reading the rest.
public func readFile(_ path: String, upTo limit: Int) throws(IOFailure) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw IOFailure(.read, path) }
    defer { close(fd) }
    // Read straight into an array of the file's size and one byte more (which finds a file that
    // grew, or is longer than `limit`); a file that grew past it goes on in chunks.
    var st = stat()
    let size = fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : 0
    let first = min(limit, size) + 1
    var failed = false
    var bytes = [UInt8](unsafeUninitializedCapacity: first) { buffer, count in
        while count < first {
            let n = read(fd, buffer.baseAddress! + count, first - count)
            if n < 0 {
                if errno == EINTR { continue }
                failed = true
                return
            }
            if n == 0 { return }
            count += n
        }
    }
    if failed { throw IOFailure(.read, path) }
    if bytes.count < first || bytes.count > limit { return bytes }
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while bytes.count <= limit {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw IOFailure(.read, path)
        }
        if n == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<min(n, limit + 1 - bytes.count)])
    }
    return bytes
}

/// Creates `path` and its missing parents with mode 0700 (0700 whatever the umask: notes
/// may be private).
public func makeDirectories(_ path: String) throws(IOFailure) {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o700) != 0 && errno != EEXIST { throw IOFailure(.makeDirectory, current) }
    }
}

/// An entry of a directory, as `lstat` sees it (a symbolic link is not followed).
public struct DirectoryEntry: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case file, directory, symbolicLink, other
    }

    /// The name; when its bytes are not UTF-8, with the bad bytes replaced (see ``nameIsUTF8``).
    public var name: String
    public var kind: Kind
    public var nameIsUTF8: Bool

    public var isDirectory: Bool { kind == .directory }
}

/// The names in the folder at `path`, as bytes, without `.` and `..` (one `readdir` pass, no
/// `stat`); nil when it cannot be listed.
public func directoryNames(_ path: String) -> [[UInt8]]? {
    guard let dir = opendir(path) else { return nil }
    defer { closedir(dir) }
    var out: [[UInt8]] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) { p in
            p.withMemoryRebound(to: CChar.self, capacity: 256) { c in
                Array(UnsafeRawBufferPointer(start: c, count: strlen(c)))
            }
        }
        if name == [0x2E] || name == [0x2E, 0x2E] { continue }
        out.append(name)
    }
    return out
}

/// How long a file or folder a killed process left must have gone unchanged before it may be
/// taken for abandoned: its maker locks it the moment it has made it, well within this.
public let abandonedAfterSeconds = 2

/// Opens `path` (a regular file, or a folder with `directory`) and holds an exclusive `flock` on
/// it when it was left by a process that is gone: this user's, not a link, unchanged for
/// ``abandonedAfterSeconds`` and held by no process (its maker holds its own locked while it
/// lives). Returns the descriptor, which keeps the lock until closed, and the file's device and
/// inode (to tell whether `path` still names it); nil for anything else.
public func lockIfAbandoned(_ path: String, directory: Bool) -> (fd: Int32, device: UInt64, inode: UInt64)? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (directory ? O_DIRECTORY : O_NONBLOCK))
    guard fd >= 0 else { return nil }
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var st = stat()
    guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == (directory ? S_IFDIR : S_IFREG), st.st_uid == geteuid(),
        now.tv_sec - st.st_mtim.tv_sec >= abandonedAfterSeconds, flock(fd, LOCK_EX | LOCK_NB) == 0
    else {
        close(fd)
        return nil
    }
    return (fd, UInt64(st.st_dev), UInt64(st.st_ino))
}

/// Removes the private folders that runs killed midway (Ctrl-C, SIGKILL) left in `parent`, and
/// returns how many: named `prefix` and six more bytes (as `mkdtemp` names them), this user's,
/// not links, held by no process (a run holds its own under an exclusive `flock` until it moves
/// or removes it), unchanged for ``abandonedAfterSeconds`` (a run locks its folder the moment it
/// made it) and, as `holdsOnlyItsOwn` says of the folder's path, holding nothing but what such a
/// run writes; `remove` then removes it, while the lock is held. Anything else is left alone.
/// The one sweep of a new store's private folder (`notes import` into a new store) and of an
/// export's (`export-markdown` into a new folder).
@discardableResult
public func removeAbandonedFolders(
    in parent: String, prefix: String, holdsOnlyItsOwn: (String) -> Bool, remove: (String) -> Void
) -> Int {
    let start = Array(prefix.utf8)
    var removed = 0
    for name in directoryNames(parent) ?? [] where name.count == start.count + 6 && name.starts(with: start) {
        let path = parent + "/" + String(decoding: name, as: UTF8.self)
        guard let held = lockIfAbandoned(path, directory: true) else { continue }
        defer { close(held.fd) }
        guard holdsOnlyItsOwn(path) else { continue }
        remove(path)
        removed += 1
    }
    return removed
}

/// The entries of a directory (without `.` and `..`), sorted by their names' bytes.
public func directoryEntries(_ path: String) throws(IOFailure) -> [DirectoryEntry] {
    guard let names = directoryNames(path) else { throw IOFailure(.list, path) }
    var out: [DirectoryEntry] = []
    for bytes in names {
        let name = String(decoding: bytes, as: UTF8.self)
        let valid = String(validating: bytes, as: UTF8.self) != nil
        var st = stat()
        guard valid, lstat(path + "/" + name, &st) == 0 else {
            out.append(DirectoryEntry(name: name, kind: .other, nameIsUTF8: valid))
            continue
        }
        let kind: DirectoryEntry.Kind
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        out.append(DirectoryEntry(name: name, kind: kind, nameIsUTF8: valid))
    }
    return out.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
}

/// Lends the bytes of any byte collection, contiguous (copied once when they are not), to a
/// body whose errors keep their type.
@inlinable
public func withContiguousBytes<R, E: Error>(
    _ bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws(E) -> R
) throws(E) -> R {
    let direct: Result<R, E>? = bytes.withContiguousStorageIfAvailable { b in
        Result { () throws(E) in try body(UnsafeRawBufferPointer(b)) }
    }
    if let direct { return try direct.get() }
    let copy = Array(bytes)
    let result: Result<R, E> = copy.withUnsafeBytes { b in Result { () throws(E) in try body(b) } }
    return try result.get()
}
