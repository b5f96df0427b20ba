import Basics
import Dispatch
import EventStore
import Glibc
import PostgresFixture
import Synchronization
import Testing

@testable import PostgresLog

/// Waits (up to 10 s) until `condition` holds, checking every 20 ms.
func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
    for _ in 0..<500 {
        if try condition() { return }
        usleep(20_000)
    }
    throw ClusterError("timed out waiting until \(what)")
}

/// Whether the session named `application` waits on `event` (a pg_stat_activity wait event).
func sessionWaits(_ c: PostgresCluster, _ application: String, on event: String) throws -> Bool {
    let admin = try PostgresConnection(c.address("postgres"))
    let rows = try admin.query(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event = $2",
        [.text(application), .text(event)])
    return try FieldReader(result: rows, row: 0).int64(0, "count") > 0
}

/// Runs `body` on another thread; `wait()` returns its error (nil when it returned).
final class Background: Sendable {
    private let outcome = Mutex<RemoteLogError??>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws(RemoteLogError) -> Void) {
        DispatchQueue.global().async { self.run(body) }
    }

    private func run(_ body: () throws(RemoteLogError) -> Void) {
        var error: RemoteLogError?
        do throws(RemoteLogError) { try body() } catch let e { error = e }
        outcome.withLock { $0 = .some(error) }
        done.signal()
    }

    func wait() -> RemoteLogError? {
        done.wait()
        return outcome.withLock { $0 ?? nil }
    }
}

/// The server stopped and restarted, sessions cut mid-transaction: errors say so, nothing is
/// half-written, a retried batch is never duplicated. Its own cluster, one test at a time (they
/// stop the server).
@Suite(
    "The remote log when the server or the connection fails",
    .enabled(if: PostgresCluster.binDirectory != nil, clusterSkipReason), .postgresCluster, .serialized)
struct FaultTests {
    @Test(
        "the server stopped between calls: connectionLost, then unreachable; after a restart the retry is stored once")
    func serverStoppedBetweenCalls() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try log.notebook(named: "fault-1", create: true)
        var f = Events(seed: 101)
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(2))]))
        let batch = RemoteBatch([RemoteAppend(stream: "s", expecting: .exact(2), events: f.events(3))])
        try c.stopServer()
        let lost = remoteError { _ = try log.append(notebook: book, batch: batch) }
        guard case .connectionLost = lost else {
            Issue.record("expected connectionLost, got \(String(describing: lost))")
            return
        }
        let unreachable = remoteError { _ = try PostgresEventLog(connecting: c.address()) }
        guard case .unreachable = unreachable else {
            Issue.record("expected unreachable, got \(String(describing: unreachable))")
            return
        }
        try c.startServer()
        let fresh = try PostgresEventLog(connecting: c.address())
        #expect(try fresh.head(notebook: book).position == 2, "the lost call wrote nothing")
        #expect(try fresh.append(notebook: book, batch: batch).outcomes.map(\.position) == [3, 4, 5])
        // The retry of a push whose reply was lost: answered, never stored twice.
        #expect(
            try fresh.append(notebook: book, batch: batch).outcomes == [
                .alreadyStored(position: 3), .alreadyStored(position: 4), .alreadyStored(position: 5),
            ])
        #expect(try pullAll(fresh, book).count == 5)
        // The old connection stays broken and says so; it never pretends to work.
        guard case .connectionLost = remoteError({ _ = try log.head(notebook: book) }) else {
            Issue.record("the old connection should report itself lost")
            return
        }
    }

    @Test("the server stopped within an append waiting for the notebook's lock: nothing written, the retry stored once")
    func serverStoppedWithinCall() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try log.notebook(named: "fault-2", create: true)
        var f = Events(seed: 102)
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        let holder = try PostgresConnection(c.address())
        try holder.execute("BEGIN; SELECT 1 FROM notes_log.notebooks WHERE notebook = '\(book)' FOR UPDATE")
        let batch = RemoteBatch([RemoteAppend(stream: "t", expecting: .noStream, events: f.events(4))])
        let address = c.address() + " application_name=fault-2"
        let call = Background { () throws(RemoteLogError) in
            _ = try PostgresEventLog(connecting: address).append(notebook: book, batch: batch)
        }
        try waitUntil("the append waits for the lock") { try sessionWaits(c, "fault-2", on: "transactionid") }
        try c.stopServer()
        let error = call.wait()
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        try c.startServer()
        let fresh = try PostgresEventLog(connecting: c.address())
        #expect(try fresh.head(notebook: book).position == 1)
        #expect(try fresh.append(notebook: book, batch: batch).appended == 4)
        #expect(try fresh.append(notebook: book, batch: batch).appended == 0)
        #expect(try pullAll(fresh, book).map(\.position) == [1, 2, 3, 4, 5])
    }

    @Test("the server stopped within a pull: connectionLost; after a restart the same pull answers the same events")
    func serverStoppedWithinPull() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try log.notebook(named: "fault-4", create: true)
        var f = Events(seed: 104)
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(5))]))
        let expected = try pullAll(log, book)
        // A lock that makes the pull's read wait, so the server stops while it is under way.
        let holder = try PostgresConnection(c.address())
        try holder.execute("BEGIN; LOCK TABLE notes_log.events IN ACCESS EXCLUSIVE MODE")
        let address = c.address() + " application_name=fault-4"
        let call = Background { () throws(RemoteLogError) in
            let reader = try PostgresEventLog(connecting: address)
            _ = try reader.pull(notebook: book, after: 0, limit: 100)
        }
        try waitUntil("the pull waits for the table") { try sessionWaits(c, "fault-4", on: "relation") }
        try c.stopServer()
        let error = call.wait()
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        try c.startServer()
        #expect(try pullAll(try PostgresEventLog(connecting: c.address()), book) == expected)
    }

    @Test("a session cut, or timed out, while its batch is half inserted under the lock leaves nothing of it")
    func cutMidTransaction() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        let log = try PostgresEventLog(connecting: c.address(database))
        try log.initialize()
        let book = try log.notebook(named: "fault-3", create: true)
        var f = Events(seed: 103)
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(2))]))
        let before = try pullAll(log, book)
        // An event of the stream "slow" sleeps in a trigger after its row is inserted, so the
        // batch's earlier rows are written and the notebook's lock is held.
        try c.execute(
            """
            CREATE FUNCTION public.nap() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$;
            CREATE TRIGGER nap AFTER INSERT ON notes_log.events FOR EACH ROW WHEN (NEW.stream = 'slow')
                EXECUTE FUNCTION public.nap();
            """, database: database)
        let batch = RemoteBatch([
            RemoteAppend(stream: "fast", events: f.events(3)), RemoteAppend(stream: "slow", events: f.events(1)),
        ])
        let address = c.address(database) + " application_name=fault-3"
        let call = Background { () throws(RemoteLogError) in
            _ = try PostgresEventLog(connecting: address).append(notebook: book, batch: batch)
        }
        try waitUntil("the batch sleeps mid-insert") { try sessionWaits(c, "fault-3", on: "PgSleep") }
        try c.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'fault-3'",
            database: database)
        let error = call.wait()
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        #expect(try pullAll(log, book) == before)
        #expect(try log.head(notebook: book).position == 2)

        // The same with a statement timeout: cancelled, nothing written.
        var settings = PostgresConnection.Settings()
        settings.statementTimeout = 300
        let impatient = try PostgresEventLog(connecting: c.address(database), settings: settings)
        let timedOut = remoteError { _ = try impatient.append(notebook: book, batch: batch) }
        guard case .timedOut = timedOut else {
            Issue.record("expected timedOut, got \(String(describing: timedOut))")
            return
        }
        #expect(try pullAll(log, book) == before)

        // Without the trigger the batch goes in whole, once.
        try c.execute("DROP TRIGGER nap ON notes_log.events", database: database)
        #expect(try impatient.append(notebook: book, batch: batch).outcomes.map(\.position) == [3, 4, 5, 6])
        #expect(try log.append(notebook: book, batch: batch).appended == 0)
        #expect(try pullAll(log, book).count == 6)
    }
}
