import Basics
import Foundation
import Glibc
import Synchronization
import Testing

/// What one run of the `notes` binary produced.
struct CLIRun: CustomStringConvertible {
    let code: Int32
    let stdoutBytes: [UInt8]
    let stderrBytes: [UInt8]

    var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
    /// Stdout without its final newline: the one-line answers (`add` prints an id).
    var line: String {
        var s = stdout
        if s.hasSuffix("\n") { s.removeLast() }
        return s
    }
    var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }

    var description: String { "exit \(code)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// Parses stdout as JSON (Foundation's parser, independent of the project's own).
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdoutBytes), options: [.fragmentsAllowed])
    }

    func object() throws -> [String: Any] {
        try #require(try json() as? [String: Any], "not a JSON object: \(stdout)")
    }

    func array() throws -> [[String: Any]] {
        try #require(try json() as? [[String: Any]], "not a JSON array of objects: \(stdout)")
    }
}

/// The directory of the test runner: SwiftPM puts the `notes` product next to it.
let notesBinaryDirectory: String = {
    var buf = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buf, buf.count - 1)
    guard n > 0 else { return "." }
    var exe = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // The runner may sit inside a bundle (`notesPackageTests.xctest`); the products are beside it.
    while let slash = exe.lastIndex(of: "/") {
        exe = String(exe[..<slash])
        if access(exe + "/notes", X_OK) == 0 { return exe }
        if exe.isEmpty { break }
    }
    return "."
}()

let notesBinary = notesBinaryDirectory + "/notes"

/// The fixed "now" of every test run (NOTES_NOW).
let fixedNow = "2026-11-29T12:00:00Z"

/// A private world for one test: a temp directory holding the store, HOME, the XDG
/// directories and TMPDIR, so the user's real config and data are never read. Each `run`
/// spawns the built `notes` binary with stdout and stderr captured to files (no pipes to
/// drain, so no deadlock however much it prints) and stdin from the given bytes or /dev/null.
final class Sandbox: Sendable {
    let root: String
    let environment: [String: String]
    private let counter = Mutex(0)

    init(now: String = fixedNow) throws {
        var template = Array("/tmp/notes-cli-tests.XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        root = try #require(made, "mkdtemp failed: errno \(errno)")
        for dir in ["home", "config", "data", "state", "tmp", "io", "bin"] {
            mkdir(root + "/" + dir, 0o700)
        }
        try #require(access(notesBinary, X_OK) == 0, "the notes binary is missing at \(notesBinary)")
        environment = [
            "PATH": "\(notesBinaryDirectory):/usr/local/bin:/usr/bin:/bin",
            "HOME": root + "/home",
            "XDG_CONFIG_HOME": root + "/config",
            "XDG_DATA_HOME": root + "/data",
            "XDG_STATE_HOME": root + "/state",
            "TMPDIR": root + "/tmp",
            "NOTES_STORE": root + "/store",
            "NOTES_NOW": now,
            "NOTES_ACTOR": "tester@test",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "EDITOR": "false",
            "LANG": "C.UTF-8",
        ]
    }

    deinit {
        // Best effort; the directory is ours alone.
        _ = try? FileManager.default.removeItem(atPath: root)
    }

    /// The default store (NOTES_STORE).
    var store: String { root + "/store" }
    var configFile: String { root + "/config/notes/config" }
    func path(_ name: String) -> String { root + "/" + name }

    /// Runs `notes args...`. `env` adds variables, or removes them with a nil value.
    @discardableResult
    ///
    /// A run that ends on the fault handler's line ("stopped by a fault reading the store") is
    /// recorded as an issue unless `faultsExpected`: outside tests of damaged files, such a
    /// fault is a bug, which the handler must not hide behind exit code 5.
    func run(
        _ args: [String], stdin: [UInt8]? = nil, env: [String: String?] = [:], executable: String = notesBinary,
        faultsExpected: Bool = false
    ) -> CLIRun {
        let n = counter.withLock { c -> Int in
            c += 1
            return c
        }
        let io = "\(root)/io/\(n)"
        let inPath = stdin.map { bytes -> String in
            write(file: io + ".in", bytes)
            return io + ".in"
        }
        var vars = environment
        for (k, v) in env { vars[k] = v }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, io + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, io + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        let argv = [executable] + args
        let rc = withCStrings(argv) { a in
            withCStrings(vars.map { "\($0.key)=\($0.value)" }) { e in posix_spawn(&pid, executable, &actions, nil, a, e)
            }
        }
        guard rc == 0 else {
            Issue.record("posix_spawn \(executable) failed: \(rc)")
            return CLIRun(code: -1, stdoutBytes: [], stderrBytes: [])
        }
        let code = waitForExit(pid, seconds: 60)
        let result = CLIRun(code: code, stdoutBytes: read(file: io + ".out"), stderrBytes: read(file: io + ".err"))
        unlink(io + ".out")
        unlink(io + ".err")
        if let inPath { unlink(inPath) }
        if !faultsExpected && result.stderr.contains("stopped by a fault reading the store") {
            Issue.record("notes \(args.joined(separator: " ")) faulted: \(result)")
        }
        return result
    }

    @discardableResult
    func run(_ args: String..., stdin: String? = nil, env: [String: String?] = [:]) -> CLIRun {
        run(args, stdin: stdin.map { Array($0.utf8) }, env: env)
    }

    /// Runs a command that must succeed; records the run when it does not.
    @discardableResult
    func ok(_ args: String..., stdin: String? = nil, env: [String: String?] = [:]) throws -> CLIRun {
        let r = run(args, stdin: stdin.map { Array($0.utf8) }, env: env)
        try #require(r.code == 0, "notes \(args.joined(separator: " ")) failed: \(r)")
        return r
    }

    /// `notes add TITLE extra...`: the new note's short id.
    @discardableResult
    func add(_ title: String, _ extra: String...) throws -> String {
        let r = run(["add", title] + extra)
        try #require(r.code == 0, "add failed: \(r)")
        try #require(r.stderr.isEmpty, "add wrote to stderr: \(r.stderr)")
        return r.line
    }

    /// A command with `--json` that must succeed and print an object.
    func object(_ args: String..., stdin: String? = nil) throws -> [String: Any] {
        let r = run(args + ["--json"], stdin: stdin.map { Array($0.utf8) })
        try #require(r.code == 0, "notes \(args.joined(separator: " ")) --json failed: \(r)")
        return try r.object()
    }

    /// `list ... --json`: the titles in order.
    func titles(_ args: String...) throws -> [String] { try titles(args) }

    func titles(_ args: [String]) throws -> [String] {
        let r = run(["list"] + args + ["--json"])
        try #require(r.code == 0, "list \(args) failed: \(r)")
        return try r.array().map { try #require($0["title"] as? String) }
    }

    /// Writes an executable shell script into the sandbox and returns its path.
    func script(_ name: String, _ body: String) -> String {
        let p = root + "/bin/" + name
        write(file: p, Array(("#!/bin/sh\n" + body).utf8))
        chmod(p, 0o755)
        return p
    }
}

/// Waits for the child; kills it after `seconds` so a hung child fails a test instead of the run.
func waitForExit(_ pid: pid_t, seconds: Double) -> Int32 {
    var status: Int32 = 0
    var waited = 0.0
    var pause: UInt32 = 200
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid { break }
        if r < 0 && errno != EINTR { return -1 }
        if waited > seconds {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            Issue.record("the child \(pid) ran longer than \(seconds) s and was killed")
            return -1
        }
        usleep(pause)
        waited += Double(pause) / 1_000_000
        pause = min(pause * 2, 2_000)
    }
    if status & 0x7F != 0 { return 128 + (status & 0x7F) }
    return (status >> 8) & 0xFF
}

/// Starts `argv` (its first element the program's path) as a shell starts a job: no signal
/// blocked, standard input and output `/dev/null`, standard error into the file `errors`; with
/// `ownGroup`, in a process group of its own (a terminal's Ctrl-C reaches the group) with
/// SIGINT, SIGHUP and SIGTERM at their defaults. Returns its pid.
func spawnJob(_ argv: [String], environment: [String: String], errors: String, ownGroup: Bool = false) throws
    -> pid_t
{
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var flags = POSIX_SPAWN_SETSIGMASK
    if ownGroup {
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGHUP, SIGTERM] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        flags |= POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF
    }
    // The test's thread may block some signals; a shell's job starts with none blocked.
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    posix_spawnattr_setflags(&attributes, Int16(flags))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var pid: pid_t = 0
    let rc = withCStrings(argv) { a in
        withCStrings(environment.map { "\($0.key)=\($0.value)" }) { e in
            posix_spawn(&pid, argv[0], &actions, &attributes, a, e)
        }
    }
    try #require(rc == 0, "posix_spawn failed: \(rc)")
    return pid
}

/// Waits up to 20 s for the file at `path` to exist (a script's sign that it started).
func waitForFile(_ path: String) {
    var waited = 0
    while !fileExists(path) && waited < 20_000 {
        usleep(1_000)
        waited += 1
    }
}

func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return body(pointers)
}

func write(file path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
        Issue.record("cannot write \(path): errno \(errno)")
        return
    }
    defer { close(fd) }
    bytes.withUnsafeBytes { p in
        var offset = 0
        while offset < p.count {
            let n = Glibc.write(fd, p.baseAddress! + offset, p.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

func write(file path: String, _ text: String) { write(file: path, Array(text.utf8)) }

func read(file path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        out.append(contentsOf: chunk[0..<n])
    }
    return out
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// Whether `name` is an executable on the usual PATH.
func hasProgram(_ name: String) -> Bool {
    ["/usr/local/bin/", "/usr/bin/", "/bin/"].contains { access($0 + name, X_OK) == 0 }
}

/// The keys and JSON types every note object has (issue 3's JSON shape).
func expectNoteShape(_ o: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
    for key in ["id", "title", "body", "createdAt", "updatedAt"] {
        #expect(o[key] is String, "\(key) should be a string in \(o)", sourceLocation: sourceLocation)
    }
    for key in ["pinned", "archived", "trashed"] {
        #expect(isJSONBool(o[key]), "\(key) should be a boolean in \(o)", sourceLocation: sourceLocation)
    }
    #expect(o["category"] is String || o["category"] is NSNull, "category: \(o)", sourceLocation: sourceLocation)
    #expect(isJSONInteger(o["version"]), "version should be an integer in \(o)", sourceLocation: sourceLocation)
    if let id = o["id"] as? String {
        #expect(id.count == 36 && UUID(uuidString: id) != nil, "id \(id) is a UUID", sourceLocation: sourceLocation)
    }
    for key in ["createdAt", "updatedAt"] {
        if let t = o[key] as? String {
            #expect(isRFC3339UTC(t), "\(key) \(t) is RFC 3339 UTC", sourceLocation: sourceLocation)
        }
    }
}

/// JSONSerialization gives NSNumber for numbers and booleans alike; the literal's kind tells them apart.
func isJSONBool(_ v: Any?) -> Bool {
    (v as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
}

func isJSONInteger(_ v: Any?) -> Bool {
    (v as? NSNumber).map { ["i", "l", "q", "s", "I", "L", "Q", "S"].contains(String(cString: $0.objCType)) } ?? false
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
func isRFC3339UTC(_ s: String) -> Bool {
    let c = Array(s.utf8)
    guard c.count >= 20, c.last == UInt8(ascii: "Z") else { return false }
    let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
    guard digits.allSatisfy({ c[$0] >= 48 && c[$0] <= 57 }) else { return false }
    guard c[4] == 45, c[7] == 45, c[10] == UInt8(ascii: "T"), c[13] == 58, c[16] == 58 else { return false }
    if c.count > 20 {
        guard c[19] == UInt8(ascii: "."), c.count > 21 else { return false }
        return c[20..<(c.count - 1)].allSatisfy { $0 >= 48 && $0 <= 57 }
    }
    return true
}
