import Dispatch
import Glibc
import LMDB
import Synchronization
import TestSupport
import Testing

/// A write that waits for another process's: said once it lasts, with the holder's pid; a short
/// wait says nothing. "Another process" is a descriptor of `lock.mdb` of the test's own, whose
/// `flock` a write of the environment finds held as it would another process's (a lock of
/// another open file); `NotesCLITests` holds it from a child process.
@Suite("Environment: a write waiting for another process's")
struct WriterWaitTests {
    /// What the notices said.
    final class Notices: Sendable {
        let said = Mutex<[(StoreWait, Int32?)]>([])
    }

    /// An environment whose waits are noted; a notice lets `release` go.
    func setUp(_ tmp: TemporaryDirectory, delay: Int64, notices: Notices, release: Int32? = nil)
        throws -> (Environment, Database)
    {
        var options = Environment.Options()
        options.waitNotice = WaitNotice(after: delay) { what, holder in
            notices.said.withLock { $0.append((what, holder)) }
            if let release { flock(release, LOCK_UN) }
        }
        let env = try Environment(path: tmp.path, options: options)
        let db = try env.openDatabase("things", flags: [.create])
        return (env, db)
    }

    @Test("a write held up past the delay says so once, with the holder's pid, then writes when the lock is let go")
    func longWaitIsSaid() throws {
        let tmp = TemporaryDirectory()
        let notices = Notices()
        _ = try Environment(path: tmp.path)
        let other = open(tmp.path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        try #require(other >= 0 && flock(other, LOCK_EX) == 0)
        defer { close(other) }
        let (env, db) = try setUp(tmp, delay: 20_000, notices: notices, release: other)
        try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        let said = notices.said.withLock { $0 }
        #expect(said.count == 1)
        #expect(said.first?.0 == .writing && said.first?.1 == getpid(), "\(said)")
        #expect(try env.read { txn throws in try txn.get(db, key: [1]) } == [1])
        // Nothing held: nothing said, and the lock is let go after each write.
        try env.write { txn throws in try txn.put(db, key: [2], value: [2]) }
        #expect(notices.said.withLock { $0.count } == 1)
        #expect(flock(other, LOCK_EX | LOCK_NB) == 0, "the write let the lock go")
        flock(other, LOCK_UN)
    }

    @Test("a write held up for less than the delay says nothing")
    func shortWaitIsNotSaid() throws {
        let tmp = TemporaryDirectory()
        let notices = Notices()
        let (env, db) = try setUp(tmp, delay: 5_000_000, notices: notices)
        let other = open(tmp.path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        try #require(other >= 0 && flock(other, LOCK_EX) == 0)
        defer { close(other) }
        // A thread of its own, not a task: the tasks' threads may all be busy with other tests
        // while this one waits.
        let letGo = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            usleep(50_000)
            flock(other, LOCK_UN)
            letGo.signal()
        }
        let start = monotonicSeconds()
        try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        #expect(monotonicSeconds() - start >= 0.04, "the write waited for the lock")
        letGo.wait()
        #expect(notices.said.withLock { $0.isEmpty })
        #expect(try env.read { txn throws in try txn.get(db, key: [1]) } == [1])
    }
}

extension WriterWaitTests {
    @Test("two threads writing at once: the lock stays held until the second write has ended")
    func lockHeldAcrossThreadsWrites() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("things", flags: [.create])
        let (firstIn, letFirstGo, secondStarts, secondIn, letSecondGo, done) = (
            DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0),
            DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)
        )
        DispatchQueue.global().async {
            try? env.write { txn throws in
                try txn.put(db, key: [1], value: [1])
                firstIn.signal()
                letFirstGo.wait()
            }
            done.signal()
        }
        firstIn.wait()
        DispatchQueue.global().async {
            secondStarts.signal()
            try? env.write { txn throws in
                try txn.put(db, key: [2], value: [2])
                secondIn.signal()
                letSecondGo.wait()
            }
            done.signal()
        }
        // The second thread reaches its wait for the write (before 2026-12-06 it took the flock
        // of the first's descriptor at once, then waited on LMDB's mutex).
        secondStarts.wait()
        usleep(200_000)
        letFirstGo.signal()
        secondIn.wait()
        // "Another process": a descriptor of its own, whose flock the second write must hold.
        let other = open(tmp.path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        try #require(other >= 0)
        let free = flock(other, LOCK_EX | LOCK_NB) == 0
        if free { flock(other, LOCK_UN) }
        letSecondGo.signal()
        done.wait()
        done.wait()
        // A review's trial: before, the first write let the lock go under the second, and
        // another process waiting to write was held up on LMDB's mutex without a word.
        #expect(!free, "another process could take the lock while this process wrote")
        #expect(try env.read { txn throws in try txn.get(db, key: [2]) } == [2])
        close(other)
    }
}

extension WriterWaitTests {
    @Test("the holder's pid read from /proc/locks: waiters left out, a pid of 0 (another namespace's) is none")
    func holderFromProcLocks() {
        let file = Array("fe:00:1234".utf8)
        func holder(_ text: String) -> Int32? { flockHolder(in: Array(text.utf8), file: file) }
        let lines = [
            "1: POSIX  ADVISORY  READ 77 fe:00:1234 0 0",
            "2: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF",
            "2: -> FLOCK  ADVISORY  WRITE 4343 fe:00:1234 0 EOF",
            "3: FLOCK  ADVISORY  WRITE 99 fe:00:12345 0 EOF",
        ]
        #expect(holder(lines.joined(separator: "\n") + "\n") == 4242)
        #expect(holder(lines[2] + "\n" + lines[3]) == nil)
        // A review's trial: before, a holder the kernel shows as pid 0 was said as "(pid 0)".
        #expect(holder("1: FLOCK  ADVISORY  WRITE 0 fe:00:1234 0 EOF\n") == nil)
    }
}

extension WriterWaitTests {
    @Test("a write waiting for another's tries again within a few milliseconds, however long it has waited")
    func pollPausesStayShort() {
        var pause: UInt32 = 1_000
        var waited: UInt64 = 0
        var tries = 0
        while waited < 1_000_000 {
            pause = nextPollPause(after: pause)
            waited += UInt64(pause)
            tries += 1
            // A review's trial: before, the pauses grew to 50 ms, and a write held up 65 ms ended
            // 64 ms after the lock was let go (an add takes 16 ms).
            #expect(pause <= 5_000, "a pause of \(pause) µs")
        }
        #expect(tries <= 300, "\(tries) tries in the notice's second")
    }
}
