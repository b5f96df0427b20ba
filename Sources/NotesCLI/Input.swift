import Glibc
import Notes

/// Checks that `path` names a file (or, with `folder`, a folder) that can be read, before a
/// command opens the store: an import of nothing must not make a store where none was. `-` is
/// standard input.
func expectInput(_ path: String, folder: Bool = false) throws(CLIError) {
    guard !path.isEmpty else {
        throw CLIError(
            folder ? "the folder name is empty; give the folder to import" : "the file name is empty; give a file")
    }
    guard path != "-" || folder else { return }
    var st = stat()
    guard stat(path, &st) == 0 else {
        throw CLIError("cannot read \(path): \(errorText()); check the path", code: .failure)
    }
    let isFolder = (st.st_mode & S_IFMT) == S_IFDIR
    if folder && !isFolder { throw CLIError("\(path) is not a folder; give the folder to import", code: .usage) }
    if !folder && isFolder { throw CLIError("\(path) is a directory; give a file", code: .usage) }
}

/// Reads a whole file (or stdin for `-`), refusing more than `limit` bytes and invalid UTF-8;
/// `raise`: how to raise the limit, said when it is met.
/// `closedIsEmpty`: a closed standard input reads as no text (`add`'s body, read from a
/// standard input that is not a terminal without being asked for), instead of being refused.
func readText(
    path: String, limit: Int, what: String, raise: String? = nil, closedIsEmpty: Bool = false
) throws(CLIError) -> String {
    guard !path.isEmpty else { throw CLIError("the \(what) name is empty; give a file, or - for standard input") }
    let fd: Int32 = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        throw CLIError("cannot read \(what) \(path): \(errorText()); check the path", code: .failure)
    }
    defer { if fd != 0 { close(fd) } }
    var st = stat()
    if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
        throw CLIError("\(path) is a directory; give a file", code: .usage)
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 65_536) }
        if n < 0 {
            if errno == EINTR { continue }
            // A closed standard input (held on /dev/null for writing only, see
            // `NotesCommandLine.holdStandardDescriptors`) has no text to give: before 2026-12-07
            // it read as empty, so `notes edit ID - <&-` emptied the note's body, exit 0.
            if errno == EBADF && fd == 0 {
                if closedIsEmpty { break }
                throw CLIError(
                    "cannot read the \(what) from standard input: it is closed; pipe the text in, or give it with "
                        + "--body or --body-file", code: .failure)
            }
            throw CLIError("cannot read \(what) \(path): \(errorText())", code: .failure)
        }
        if n == 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
        if bytes.count > limit {
            throw CLIError(
                "\(what) \(path == "-" ? "from standard input" : path) is over \(limit) bytes, the limit"
                    + (raise.map { " (\($0))" } ?? ""),
                code: .usage)
        }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw CLIError(
            "\(what) \(path == "-" ? "from standard input" : path) is not valid UTF-8 text; convert it to UTF-8 first",
            code: .usage)
    }
    return text
}

extension Context {
    /// The body limit: a bad `NOTES_BODY_LIMIT` is refused before any body is read (before
    /// 2026-12-07 the body was read with 1 MiB for it, and a value too large was taken).
    var bodyLimit: Int {
        get throws(CLIError) { try bodyLimitSetting() }
    }

    /// The body given by `--body`, `--body-file` or `-`, or nil when none was given.
    func bodyArgument(dashAllowed: Bool = true) throws(CLIError) -> String? {
        let dash = dashAllowed && standardInputGiven
        let given = [value("body") != nil, value("body-file") != nil, dash].filter { $0 }.count
        if given > 1 { throw CLIError("give the body once: --body TEXT, --body-file PATH or - (standard input)") }
        if let b = value("body") { return b }
        if let path = value("body-file") {
            return try readText(path: path, limit: bodyLimit, what: "body file", raise: InvalidInput.raiseBodyLimit)
        }
        if dash { return try readText(path: "-", limit: bodyLimit, what: "body", raise: InvalidInput.raiseBodyLimit) }
        return nil
    }
}
