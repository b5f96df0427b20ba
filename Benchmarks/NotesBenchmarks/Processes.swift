import Glibc

/// Runs `arguments` (argv[0] is a path or a name looked up in PATH) with stdin from /dev/null
/// and stdout to `stdoutPath` (or /dev/null), waits, and returns (exit status, seconds from
/// spawn to exit).
@discardableResult
func runProcess(
    _ arguments: [String], stdoutPath: String? = nil, quiet: Bool = false, environment: [String: String] = [:]
) -> (status: Int32, seconds: Double) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
        &actions, 1, stdoutPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }

    var env: [String] = []
    var i = 0
    while let entry = environ[i] {
        let s = String(cString: entry)
        let key = String(s.prefix { $0 != "=" })
        if environment[key] == nil { env.append(s) }
        i += 1
    }
    for (k, v) in environment.sorted(by: { $0.key < $1.key }) { env.append("\(k)=\(v)") }

    let argv = arguments.map { strdup($0) } + [nil]
    let envp = env.map { strdup($0) } + [nil]
    defer {
        for p in argv { free(p) }
        for p in envp { free(p) }
    }
    var pid: pid_t = 0
    let start = monotonicSeconds()
    let rc = posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp)
    guard rc == 0 else { return (127, 0) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let seconds = monotonicSeconds() - start
    let exited = status & 0x7F == 0
    return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), seconds)
}

/// The path of this executable.
func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The release `notes` binary built next to this one, if any.
func notesBinary() -> String? {
    let exe = executablePath()
    guard let slash = exe.lastIndex(of: "/") else { return nil }
    let path = String(exe[..<slash]) + "/notes"
    return access(path, X_OK) == 0 ? path : nil
}

/// Whether `name` is an executable on PATH.
func onPath(_ name: String) -> Bool {
    runProcess(["/bin/sh", "-c", "command -v \(name)"], quiet: true).status == 0
}
