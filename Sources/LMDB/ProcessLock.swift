import Glibc

/// What a store waits for another process to finish before it goes on.
public enum StoreWait: Sendable, Equatable {
    /// A write transaction: an append, an import, a batch of a rebuild (see
    /// ``Environment/write(_:)``).
    case writing
    /// A rebuild of the projections, which takes the store's rebuild lock for its whole run.
    case rebuilding
}

/// How a wait for another process is told: once it has lasted `delay` microseconds, `say` is
/// called once with what is waited for and the pid of the process that holds the lock, when the
/// system names it. A wait shorter than the delay says nothing.
public struct WaitNotice: Sendable {
    public var delay: Int64
    public var say: @Sendable (StoreWait, _ holder: Int32?) -> Void

    public init(after delay: Int64 = 1_000_000, say: @escaping @Sendable (StoreWait, _ holder: Int32?) -> Void) {
        self.delay = delay
        self.say = say
    }
}

/// The one way a store waits for another process, for its writes and for its rebuilds: an
/// exclusive `flock` on a file of the store, through a descriptor of the caller's. Taken at once
/// when it is free; else tried again every few milliseconds until `notice`'s delay has passed,
/// then `notice` says so, once, and the wait goes on until the other process lets go (the kernel
/// lets go of a process's locks when it ends, killed or not). Without a notice it simply waits.
///
/// False when the lock could not be taken for another reason than another holder (a file system
/// without `flock`): the caller goes on without it. A lock is advice between processes; what
/// keeps two writers apart is LMDB's own mutex, which a writer takes after this lock.
package func takeProcessLock(_ fd: Int32, waitingFor what: StoreWait, notice: WaitNotice?) -> Bool {
    if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
    guard errno == EWOULDBLOCK else { return false }
    if let notice {
        let start = monotonicMicros()
        var pause: UInt32 = 1_000
        while monotonicMicros() - start < notice.delay {
            usleep(pause)
            pause = nextPollPause(after: pause)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            guard errno == EWOULDBLOCK || errno == EINTR else { return false }
        }
        notice.say(what, flockHolder(of: fd))
    }
    while flock(fd, LOCK_EX) != 0 {
        guard errno == EINTR else { return false }
    }
    return true
}

/// The longest pause between two tries of a lock another process holds (microseconds): how
/// late a waiting write may start after the lock was let go. Before 2026-12-06 the pauses grew to
/// 50 ms, and a write held up 65 ms by another ended 64 ms after it let go, where an add takes
/// 16 ms; a try is one system call, so 250 in the notice's second cost nothing.
package let longestPollPause: UInt32 = 4_000

/// The pause after `pause`: doubled, up to ``longestPollPause``.
package func nextPollPause(after pause: UInt32) -> UInt32 { min(pause * 2, longestPollPause) }

/// The pid of a process that holds a `flock` on the file of `fd`, as `/proc/locks` lists it
/// (`1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF`: the device's major and minor numbers
/// in hex, at least two digits, then the inode), or nil when it names none (another system, or
/// the lock was let go meanwhile).
func flockHolder(of fd: Int32) -> Int32? {
    var st = stat()
    guard fstat(fd, &st) == 0 else { return nil }
    let dev = UInt64(st.st_dev)
    let major = ((dev >> 8) & 0xFFF) | ((dev >> 32) & ~0xFFF)
    let minor = (dev & 0xFF) | ((dev >> 12) & ~0xFF)
    func hex(_ n: UInt64) -> String {
        let digits = String(n, radix: 16)
        return digits.count < 2 ? "0" + digits : digits
    }
    let file = Array("\(hex(major)):\(hex(minor)):\(st.st_ino)".utf8)
    guard let bytes = procFile("/proc/locks") else { return nil }
    return flockHolder(in: bytes, file: file)
}

/// The whole text of a file of `/proc` (whose size `stat` gives as 0, so it is read until its
/// end), or nil when it cannot be opened.
func procFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { break }
        bytes += chunk[..<n]
    }
    return bytes
}

/// The pid `locks` (the text of `/proc/locks`) names as holding a `flock` on `file`
/// (`major:minor:inode`), or nil. A pid of 0 is none: the kernel shows a holder of another pid
/// namespace (a container sharing the store's folder) so, and before 2026-12-06 the notice said
/// "(pid 0)".
package func flockHolder(in locks: [UInt8], file: [UInt8]) -> Int32? {
    for line in locks.split(separator: 0x0A) {
        let fields = line.split(separator: 0x20)
        // A waiter's line has `->` after the number; the holder's does not.
        guard fields.count >= 6, fields[1].elementsEqual("FLOCK".utf8), fields[5].elementsEqual(file) else { continue }
        guard let pid = Int32(String(decoding: fields[4], as: UTF8.self)), pid > 0 else { return nil }
        return pid
    }
    return nil
}

private func monotonicMicros() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}
