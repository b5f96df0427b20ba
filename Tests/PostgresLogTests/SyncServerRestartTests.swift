import Basics
import Dispatch
import EventStore
import Glibc
import Notes
import PostgresFixture
import PostgresLog
import Synchronization
import Testing

/// The PostgreSQL server stopped (as by a crash) while devices sync, at several moments of a
/// long push and of a clone: the sync fails with a clear error, nothing is lost or duplicated,
/// and once the server is back the next sync finishes the job. A cluster of its own (it stops the
/// server), one test at a time.
@Suite(
    "Sync when the server stops midway",
    .enabled(if: PostgresCluster.binDirectory != nil, clusterSkipReason), .postgresCluster, .serialized)
struct SyncServerRestartTests {
    /// Runs a sync of `book` on another thread with a connection of its own; `wait()` returns
    /// its error (nil when it finished).
    final class BackgroundSync: Sendable {
        private let outcome = Mutex<SyncError??>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ book: Notebook, address: String, notebook: Identifier, join: Bool) {
            DispatchQueue.global().async {
                var error: SyncError?
                do {
                    let remote = try PostgresEventLog(connecting: address)
                    try book.sync(with: remote, notebook: notebook, join: join)
                } catch let e as SyncError {
                    error = e
                } catch let e as RemoteLogError {
                    error = .remote(e)
                } catch {
                    Issue.record("unexpected error: \(error)")
                }
                self.outcome.withLock { $0 = .some(error) }
                self.done.signal()
            }
        }

        func wait() -> SyncError? {
            done.wait()
            return outcome.withLock { $0 ?? nil }
        }
    }

    @Test("stopped mid-push and mid-clone: a clear error, then the next sync completes; nothing lost or twice")
    func serverStopsMidSync() throws {
        let c = try cluster()
        let a = try Device(stem: 1, notebook: 401)
        for i in 0..<400 {
            try a.book.add(title: "note \(i)", body: String(repeating: "text of note \(i)\n", count: 40))
        }
        var failures = 0
        // Stops at different moments of the join's push (several batches), then of b's clone;
        // the first soon enough that a quick machine has not finished the push (in one full run
        // every sync had finished before the stops at 15, 60 and 150 ms).
        for (round, delay) in [3_000, 15_000, 60_000, 150_000].enumerated() {
            let b = try Device(stem: UInt64(10 + round), notebook: 401)
            let push = BackgroundSync(a.book, address: c.address(), notebook: a.notebookID, join: true)
            let clone = BackgroundSync(b.book, address: c.address(), notebook: b.notebookID, join: false)
            usleep(useconds_t(delay))
            try c.stopServer()
            for error in [push.wait(), clone.wait()] {
                guard let error else { continue }
                failures += 1
                switch error {
                case .remote(.connectionLost), .remote(.unreachable): break
                default: Issue.record("unexpected error: \(error)")
                }
            }
            try c.startServer()
            try a.reconnect()
            try b.reconnect()
            try a.sync(join: true)
            try b.sync()
            try converge([a, b])
            #expect(try b.book.list(everything).count == 400, "every note arrived, once")
        }
        #expect(failures > 0, "the server stopped while a sync ran, at least once")
    }
}
