import Basics
import EventStore
import Glibc
import Notes
import TestSupport
import Testing

/// Whether the long variants run (NOTES_LONG_TESTS=1): ten times the kills, processes and cases.
let reliabilityLongRun = getenv("NOTES_LONG_TESTS").map { String(cString: $0) == "1" } ?? false

/// A `notes` process the test may kill: stdout and stderr go to files, so a killed child
/// leaves exactly what it had written (the CLI writes its answer only after the commit).
final class KillableNotes {
    let pid: pid_t
    let stdoutPath: String
    let stderrPath: String
    private(set) var status: Int32?

    /// Spawns `notes` with raw argument bytes (so tests can pass invalid UTF-8) in the sandbox's
    /// environment plus `env`.
    init(_ sandbox: Sandbox, rawArguments: [[UInt8]], env: [String: String?] = [:], tag: String) throws {
        stdoutPath = sandbox.path("io/\(tag).out")
        stderrPath = sandbox.path("io/\(tag).err")
        var vars = sandbox.environment
        for (k, v) in env { vars[k] = v }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var child: pid_t = 0
        let argv = [Array(notesBinary.utf8)] + rawArguments
        let rc = withRawCStrings(argv) { a in
            withCStrings(vars.map { "\($0.key)=\($0.value)" }) { e in
                posix_spawn(&child, notesBinary, &actions, nil, a, e)
            }
        }
        try #require(rc == 0, "posix_spawn \(notesBinary) failed: \(rc)")
        pid = child
    }

    convenience init(_ sandbox: Sandbox, _ args: [String], env: [String: String?] = [:], tag: String) throws {
        try self.init(sandbox, rawArguments: args.map { Array($0.utf8) }, env: env, tag: tag)
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            var s: Int32 = 0
            waitpid(pid, &s, 0)
        }
    }

    /// Waits until the child exits or `deadline` (monotonic seconds) passes; returns whether it exited.
    func wait(until deadline: Double) -> Bool {
        while status == nil {
            var s: Int32 = 0
            let r = waitpid(pid, &s, WNOHANG)
            if r == pid {
                status = s & 0x7F != 0 ? 128 + (s & 0x7F) : (s >> 8) & 0xFF
                break
            }
            if r < 0 && errno != EINTR {
                status = -1
                break
            }
            if monotonicSeconds() >= deadline { return false }
            usleep(500)
        }
        return true
    }

    /// Kills the child with SIGKILL unless it has already exited. Returns true when the kill
    /// landed on a running process.
    func killNow() -> Bool {
        if wait(until: 0) { return false }
        Glibc.kill(pid, SIGKILL)
        var s: Int32 = 0
        waitpid(pid, &s, 0)
        status = 128 + SIGKILL
        return true
    }

    /// Waits for the exit (at most `seconds`) and returns the exit code (128 + signal when killed).
    func finish(seconds: Double = 120) -> Int32 {
        if !wait(until: monotonicSeconds() + seconds) {
            _ = killNow()
            Issue.record("notes \(pid) ran longer than \(seconds) s and was killed")
        }
        return status ?? -1
    }

    var stdout: String { String(decoding: read(file: stdoutPath), as: UTF8.self) }
    var stderr: String { String(decoding: read(file: stderrPath), as: UTF8.self) }
}

/// Like ``withCStrings(_:_:)`` for arbitrary bytes (no UTF-8 requirement, NUL-terminated).
func withRawCStrings<R>(_ strings: [[UInt8]], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { bytes in
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (i, b) in bytes.enumerated() { p[i] = CChar(bitPattern: b) }
        p[bytes.count] = 0
        return p
    }
    pointers.append(nil)
    defer { for p in pointers { p?.deallocate() } }
    return body(pointers)
}

extension SeededGenerator {
    /// A random version-4 UUID in canonical lowercase form.
    mutating func uuid() -> String {
        let high = (next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000
        let low = (next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return Identifier(high: high, low: low).uuidString
    }
}

/// Lines of an interchange file: `notes` notes, each created and then edited `edits` times.
/// Returns the lines and every event id in them.
func importLines(notes: Int, edits: Int, tag: String, rng: inout SeededGenerator) -> (
    text: String, eventIDs: [String]
) {
    var out = ""
    var ids: [String] = []
    let filler = String(repeating: "lorem ipsum dolor ", count: 6)
    for n in 0..<notes {
        let stream = "note/" + rng.uuid()
        for v in 1...(edits + 1) {
            let id = rng.uuid()
            ids.append(id)
            let (type, schema, data) =
                v == 1
                ? (
                    "NoteCreated", 2,
                    "{\"title\":\"\(tag) \(n)\",\"body\":\"first\",\"pinned\":false,\"category\":null}"
                )
                : ("NoteBodyEdited", 1, "{\"body\":\"\(tag) \(n) v\(v) \(filler)\"}")
            out +=
                "{\"eventId\":\"\(id)\",\"stream\":\"\(stream)\",\"version\":\(v),\"type\":\"\(type)\","
                + "\"schemaVersion\":\(schema),\"recordedAt\":\"2026-01-02T03:04:05Z\","
                + "\"metadata\":{\"actor\":\"importer@test\"},\"data\":\(data)}\n"
        }
    }
    return (out, ids)
}

/// Options for opening a sandbox store through the library.
func libraryOptions(_ actor: String = "library@test") -> Notebook.Options {
    var o = Notebook.Options(actor: actor)
    o.clock = { 1_800_000_000_000_000 }
    return o
}

/// The log's positions are 1...head with no gap, and every event's checksum is good.
func expectGapFreeLog(_ book: Notebook, sourceLocation: SourceLocation = #_sourceLocation) throws -> UInt64 {
    try book.store.read { txn throws in
        let head = try book.store.headPosition(in: txn)
        var expected: UInt64 = 1
        try book.store.forEachEvent(from: 1, in: txn) { view in
            #expect(view.position == expected, "a gap before position \(view.position)", sourceLocation: sourceLocation)
            expected = view.position + 1
            return true
        }
        #expect(
            expected - 1 == head, "the head is \(head), the last event \(expected - 1)", sourceLocation: sourceLocation)
        return head
    }
}

/// Adds a note through the library, at the CLI tests' instant, with the store's own rules: a
/// title, category, tags and aliases holding DEL or C1 controls, as an import, another device or
/// an older program writes them (a command refuses those typed since 2026-12-07). The id's hex.
func addThroughLibrary(
    _ s: Sandbox, _ title: String, body: String = "", category: String? = nil, tags: [String] = [],
    aliases: [String] = []
) throws -> String {
    var options = libraryOptions()
    let now = RFC3339.parse(fixedNow) ?? 0
    options.clock = { now }
    let book = try Notebook(path: s.store, options: options)
    let note = try book.add(title: title, body: body, category: category, tags: tags)
    if !aliases.isEmpty { try book.setAliases(note.id, aliases) }
    return note.id.hex
}
