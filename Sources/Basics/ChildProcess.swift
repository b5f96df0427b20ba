import Glibc

/// Starts programs with `posix_spawn` and waits for them: the project's one way to run another
/// program (`gzip -dc` for a `.gz` import, the pager, the editor).
///
/// ```swift
/// let child = try ChildProcess.spawn(["gzip", "-dc", "--", path], standardOutput: fd)
/// let status = child.wait()  // the exit status, or 128 + the signal that ended it
/// ```
public struct ChildProcess: Sendable {
    /// Why a program could not be started: the `posix_spawn` error.
    public struct SpawnError: Error, Sendable, Equatable {
        public let code: Int32
    }

    public let pid: Int32

    /// Starts `arguments` (the program first: a path, or a name looked up in `PATH`), with
    /// `environment` (`KEY=value` strings; nil keeps this process's), its standard input and
    /// output (and error) moved to the given descriptors, and `closing` closed in the child.
    public static func spawn(
        _ arguments: [String], environment: [String]? = nil, standardInput: Int32? = nil,
        standardOutput: Int32? = nil, standardError: Int32? = nil, closing: [Int32] = []
    ) throws(SpawnError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let fd = standardInput { posix_spawn_file_actions_adddup2(&actions, fd, 0) }
        if let fd = standardOutput { posix_spawn_file_actions_adddup2(&actions, fd, 1) }
        if let fd = standardError { posix_spawn_file_actions_adddup2(&actions, fd, 2) }
        for fd in closing { posix_spawn_file_actions_addclose(&actions, fd) }
        var pid: pid_t = 0
        let rc = withCStrings(arguments) { argv in
            if let environment {
                return withCStrings(environment) { env in posix_spawnp(&pid, arguments[0], &actions, nil, argv, env) }
            }
            return posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        }
        guard rc == 0 else { throw SpawnError(code: rc) }
        return ChildProcess(pid: pid)
    }

    /// Waits for the program to end: its exit status, or 128 + the signal that ended it.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        if status & 0x7F != 0 { return 128 + (status & 0x7F) }
        return (status >> 8) & 0xFF
    }

    /// Runs `arguments` to the end (see ``spawn(_:environment:standardInput:standardOutput:closing:)``).
    public static func run(
        _ arguments: [String], environment: [String]? = nil, standardInput: Int32? = nil,
        standardOutput: Int32? = nil
    ) throws(SpawnError) -> Int32 {
        try spawn(arguments, environment: environment, standardInput: standardInput, standardOutput: standardOutput)
            .wait()
    }
}

/// Calls `body` with NUL-terminated copies of `strings`, followed by a null pointer (an argv).
func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return body(pointers)
}
