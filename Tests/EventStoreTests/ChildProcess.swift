import Glibc
import Synchronization
import TestSupport
import Testing

/// A `notes-stress` child whose stdout the test reads line by line (posix_spawn, no Foundation).
///
/// The child writes each line with one unbuffered `write` after the commit it reports, so
/// every line read here describes committed data even if the child is killed a moment later.
final class StressChild {
    let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    private var exited = false
    private(set) var lines: [String] = []

    /// The notes-stress binary: built next to the test runner (.build/<config>/).
    static func executable() throws -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        try #require(n > 0, "cannot read /proc/self/exe")
        let exe = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let dir = exe[..<(exe.lastIndex(of: "/") ?? exe.endIndex)]
        let path = String(dir) + "/notes-stress"
        try #require(
            access(path, X_OK) == 0,
            "notes-stress is missing at \(path); build it with `swift build --product notes-stress`")
        return path
    }

    /// Starts `notes-stress args...`; its stderr goes to `stderrPath`.
    init(_ args: [String], stderrPath: String) throws {
        let exe = try StressChild.executable()
        var fds: [Int32] = [0, 0]
        // Other tests spawn children concurrently: keep this pipe out of them (close-on-exec).
        // Glibc's module does not export pipe2, so mark both ends under a lock instead.
        let piped = spawnLock.withLock { _ in
            guard pipe(&fds) == 0 else { return false }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return true
        }
        try #require(piped, "pipe failed: errno \(errno)")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([exe] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let rc = spawnLock.withLock { _ in posix_spawn(&child, exe, &actions, nil, argv, environ) }
        close(fds[1])
        if rc != 0 { close(fds[0]) }
        try #require(rc == 0, "posix_spawn failed: \(rc)")
        pid = child
        output = fds[0]
    }

    deinit {
        if !exited {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(output)
    }

    /// The next line of output, or nil at end of output or after `timeout` seconds.
    func readLine(timeout: Double = 30) -> String? {
        let deadline = monotonicSeconds() + timeout
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                lines.append(line)
                return line
            }
            let left = deadline - monotonicSeconds()
            var p = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&p, 1, Int32((max(0, min(left, 1)) * 1000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 {
                if left <= 0 { return nil }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(output, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Reads lines until one equals `text`; false at end of output or timeout.
    func waitFor(_ text: String, timeout: Double = 30) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while let line = readLine(timeout: max(0, deadline - monotonicSeconds())) {
            if line == text { return true }
        }
        return false
    }

    /// Kills the child with SIGKILL and reaps it. Returns false if it had already exited.
    @discardableResult
    func killNow() -> Bool {
        var status: Int32 = 0
        if !exited, waitpid(pid, &status, WNOHANG) == pid {
            record(status)
            finish()
            return false
        }
        kill(pid, SIGKILL)
        finish()
        return true
    }

    /// Whether the child has been reaped.
    var hasExited: Bool { exited }

    /// Reads what output is ready and reaps the child if it has exited; never blocks.
    func drain() {
        while readLine(timeout: 0) != nil {}
        if !exited {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { record(status) }
        }
    }

    /// Reads the rest of the output and waits for the child. Returns its exit status
    /// (or 128 + signal).
    ///
    /// Reads until the child has exited rather than until end of file: a copy of the pipe's
    /// write end inherited by an unrelated child would otherwise delay the end of file.
    @discardableResult
    func finish(timeout: Double = 120) -> Int32 {
        let deadline = monotonicSeconds() + timeout
        while !exited {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                record(status)
            } else if r < 0 && errno != EINTR {
                exited = true
            } else if monotonicSeconds() > deadline {
                kill(pid, SIGKILL)
            } else {
                _ = readLine(timeout: 0.05)
            }
        }
        // The child is gone: whatever it wrote is already in the pipe.
        while readLine(timeout: 0) != nil {}
        return exitStatus
    }

    private var exitStatus: Int32 = 0

    private func record(_ status: Int32) {
        exited = true
        let signal = status & 0x7F
        exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// The acknowledged events: `ok <id> <position> <stream> <version>` lines.
    var acknowledged: [(id: String, position: UInt64, stream: String, version: UInt64)] {
        lines.compactMap { line in
            let f = line.split(separator: " ")
            guard f.count == 5, f[0] == "ok", let p = UInt64(f[2]), let v = UInt64(f[4]) else { return nil }
            return (String(f[1]), p, String(f[3]), v)
        }
    }
}

/// Serialises pipe creation and spawning so no child inherits another test's pipe.
let spawnLock = Mutex(())
