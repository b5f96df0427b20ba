import Basics
import Dispatch
import EventStore
import FoundationEssentials
import Glibc
import PostgresFixture
import Synchronization
import Testing

@testable import PostgresLog

/// SplitMix64: every run sees the same ids and payloads.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Builds events with deterministic ids and payloads.
struct Events {
    var rng: SplitMix

    init(seed: UInt64) { rng = SplitMix(state: seed) }

    mutating func id() -> Identifier { Identifier.random(using: &rng) }

    mutating func event(
        _ type: String = "Tick", payload: [UInt8]? = nil, schemaVersion: UInt32 = 1,
        metadata: EventMetadata = EventMetadata(actor: "ana@laptop")
    ) -> NewEvent {
        let bytes = payload ?? (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        return NewEvent(id: id(), type: type, schemaVersion: schemaVersion, payload: bytes, metadata: metadata)
    }

    mutating func events(_ n: Int) -> [NewEvent] { (0..<n).map { _ in event() } }
}

/// A notebook id no remote holds.
func notebook(_ n: UInt64) -> Identifier {
    Identifier(high: 0x4E4F_5445_0000_4000 | n << 16, low: 0x8000_0000_0000_0000 | n)
}

/// A notebook of its own for each test (so tests share one database and run in parallel),
/// created by the cluster's superuser in `database`.
func makeNotebook(_ c: PostgresCluster, _ n: Int, database: String = "notes") throws -> Identifier {
    try PostgresEventLog(connecting: c.address(database)).notebook(named: "book-\(n)", create: true)
}

/// Notebook `book-N`, made, with four events of stream `note/1` appended: the log, the
/// notebook and the generator, to append more.
func notebookOfFourEvents(_ c: PostgresCluster, _ n: Int) throws -> (PostgresEventLog, Identifier, Events) {
    let log = try PostgresEventLog(connecting: c.address())
    let book = try makeNotebook(c, n)
    var f = Events(seed: UInt64(n))
    _ = try log.append(
        notebook: book,
        batch: RemoteBatch([
            RemoteAppend(stream: "note/1", expecting: .noStream, events: (0..<4).map { _ in f.event() })
        ]))
    return (log, book, f)
}

func cluster() throws -> PostgresCluster { try #require(PostgresCluster.current, "no cluster in this suite") }

/// Runs `body`, expecting a `RemoteLogError`; returns it.
func remoteError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> RemoteLogError? {
    do {
        try body()
        Issue.record("expected a RemoteLogError, but the call succeeded", sourceLocation: sourceLocation)
    } catch let e as RemoteLogError {
        return e
    } catch {
        Issue.record("expected a RemoteLogError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Every event of a notebook, checking the chain digests against EventStore's envelope format.
func pullAll(_ log: PostgresEventLog, _ book: Identifier, batch: Int = 1000) throws -> [RecordedEvent] {
    var all: [RecordedEvent] = []
    while true {
        let page = try log.pull(notebook: book, after: UInt64(all.count), limit: batch)
        all += page
        if page.count < batch { break }
    }
    var previous = RecordedEvent.genesisDigest
    for e in all {
        #expect(e.chainDigest(after: previous) == e.digest, "digest at position \(e.position)")
        previous = e.digest
    }
    return all
}

@Suite(
    "The remote log in PostgreSQL",
    .enabled(if: PostgresCluster.binDirectory != nil, clusterSkipReason), .postgresCluster)
struct PostgresLogTests {
    @Test("init creates the schema once; running it again changes nothing")
    func initIsIdempotent() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        let log = try PostgresEventLog(connecting: c.address(database))
        #expect(remoteError { _ = try log.head(notebook: notebook(1)) } == .schemaMissing)
        #expect(try log.initialize() == .created(version: PostgresEventLog.schemaVersion))
        #expect(try log.initialize() == .current(version: PostgresEventLog.schemaVersion))
        let again = try PostgresEventLog(connecting: c.address(database))
        #expect(try again.initialize() == .current(version: PostgresEventLog.schemaVersion))
        #expect(try again.head(notebook: try again.notebook(named: "first", create: true)) == .empty)
    }

    @Test("two initializers at once: one creates the schema, the other finds it current")
    func concurrentInit() throws {
        let c = try cluster()
        let address = c.address(try c.makeDatabase())
        let outcomes = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let outcome: String
            do {
                outcome = "\(try PostgresEventLog(connecting: address).initialize())"
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let v = PostgresEventLog.schemaVersion
        #expect(
            outcomes.withLock { $0.sorted() } == [
                "\(RemoteSchemaChange.created(version: v))", "\(RemoteSchemaChange.current(version: v))",
            ])
    }

    @Test("a schema newer than the program is refused, by init and by every use, and left as it is")
    func newerSchemaRefused() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        try PostgresEventLog(connecting: c.address(database)).initialize()
        let admin = try PostgresConnection(c.address(database))
        try admin.execute("INSERT INTO notes_log.schema_version (version) VALUES (99)")
        let log = try PostgresEventLog(connecting: c.address(database))
        let refused = RemoteLogError.schemaTooNew(found: 99, supported: PostgresEventLog.schemaVersion)
        #expect(remoteError { try log.initialize() } == refused)
        #expect(remoteError { _ = try log.pull(notebook: notebook(2), after: 0, limit: 10) } == refused)
        var f = Events(seed: 2)
        #expect(
            remoteError {
                _ = try log.append(
                    notebook: notebook(2), batch: RemoteBatch([RemoteAppend(stream: "s", events: [f.event()])]))
            } == refused)
        #expect(refused.description.contains("upgrade the program"))
    }

    @Test(
        "events deleted by hand below the head: every pull that reaches the hole is refused as damaged, a full page too"
    )
    func missingEventsBelowHead() throws {
        // Before 2026-12-08 a pull stopped short at the hole without a word: a new device cloned
        // the log up to it, and its next push landed past the hole (a new user's trial).
        let c = try cluster()
        let (log, book, events) = try notebookOfFourEvents(c, 305)
        var f = events
        // As a superuser may: the triggers off for this session alone.
        try c.execute(
            """
            SET session_replication_role = replica;
            DELETE FROM notes_log.events WHERE notebook = '\(book)' AND position >= 3
            """)
        let hole = RemoteLogError.damaged(
            "positions 3-4 are missing from the notebook's events though its head is at 4 (its tables were changed by hand)"
        )
        #expect(remoteError { _ = try log.pull(notebook: book, after: 0, limit: 10) } == hole)
        #expect(remoteError { _ = try log.pullAttributed(notebook: book, after: 1, limit: 10) } == hole)
        #expect(remoteError { _ = try log.pull(notebook: book, after: 2, limit: 10) } == hole)
        // A full page below the hole is still whole; past the head there is nothing to miss.
        #expect(try log.pull(notebook: book, after: 0, limit: 2).map(\.position) == [1, 2])
        #expect(try log.pull(notebook: book, after: 4, limit: 10).isEmpty)
        #expect(hole.description.contains("restores it from a backup"))
        // The next append lands past the hole: a pull across it is refused so too.
        _ = try log.append(
            notebook: book,
            batch: RemoteBatch([RemoteAppend(stream: "note/2", expecting: .noStream, events: [f.event()])]))
        #expect(
            remoteError { _ = try log.pull(notebook: book, after: 0, limit: 10) }
                == .damaged("positions 3-4 are missing from the notebook's events (its tables were changed by hand)"))
    }

    @Test("a head moved back by hand below the notebook's events: a pull that reads past it is refused as damaged")
    func headMovedBackByHand() throws {
        // Before 2026-12-08 pulls went on, and every push failed on the events' duplicate key,
        // "reported an error", exit 1 (a new user's trial).
        let c = try cluster()
        let (log, book, _) = try notebookOfFourEvents(c, 307)
        try c.execute(
            """
            SET session_replication_role = replica;
            UPDATE notes_log.notebooks SET head_position = 2 WHERE notebook = '\(book)'
            """)
        let past = RemoteLogError.damaged(
            "the notebook's events run to position 4 past its head at 2 (its tables were changed by hand)")
        #expect(remoteError { _ = try log.pull(notebook: book, after: 0, limit: 10) } == past)
        #expect(remoteError { _ = try log.pull(notebook: book, after: 2, limit: 10) } == past)
        #expect(try log.pull(notebook: book, after: 0, limit: 2).map(\.position) == [1, 2])
    }

    @Test("a column of the log renamed by hand: pulls and pushes are refused as a damaged log, not any other error")
    func columnRenamedByHand() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        let log = try PostgresEventLog(connecting: c.address(database))
        try log.initialize()
        let book = try log.notebook(named: "renamed", create: true)
        try c.execute("ALTER TABLE notes_log.events RENAME COLUMN written_at TO wa", database: database)
        let error = remoteError { _ = try log.pull(notebook: book, after: 0, limit: 10) }
        guard case .damaged(let detail) = error else {
            Issue.record("expected damaged, got \(String(describing: error))")
            return
        }
        #expect(detail.contains(#"column "written_at" does not exist"#), "\(detail)")
    }

    @Test("a server that takes no writes (a standby, read-only by default) is named so, not as any other error")
    func readOnlyServer() throws {
        // Before 2026-12-08: "the remote log reported an error: cannot execute SELECT FOR UPDATE
        // in a read-only transaction (SQLSTATE 25006)", exit 1.
        let c = try cluster()
        let book = try makeNotebook(c, 306)
        let log = try PostgresEventLog(
            connecting: c.address() + " options='-c default_transaction_read_only=on'")
        #expect(try log.pull(notebook: book, after: 0, limit: 10).isEmpty)
        var f = Events(seed: 306)
        let error = remoteError {
            _ = try log.append(
                notebook: book, batch: RemoteBatch([RemoteAppend(stream: "note/1", events: [f.event()])]))
        }
        guard case .readOnly(let detail) = error else {
            Issue.record("expected readOnly, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("read-only transaction"), "\(detail)")
        #expect(error?.description.contains("target_session_attrs=read-write") == true)
    }

    @Test("append then pull: the same fields and bytes, positions 1...n, digests of EventStore's envelope")
    func roundTrip() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 3)
        var f = Events(seed: 3)
        let cause = f.id()
        let correlation = f.id()
        let sent = [
            f.event("NoteCreated", payload: [], metadata: EventMetadata(actor: "")),
            f.event(
                "NoteEdited", payload: (0..<300).map { UInt8($0 % 256) }, schemaVersion: 300,
                metadata: EventMetadata(
                    actor: "bo@desk ✓", command: "notes edit 12 --title \"é\"", causationID: cause,
                    correlationID: correlation)),
            f.event(
                "Tagged", payload: Array("naïve 🐘\n\t'\\\"".utf8), metadata: EventMetadata(actor: "x", command: "")),
        ]
        let result = try log.append(
            notebook: book,
            batch: RemoteBatch([
                RemoteAppend(stream: "note/1", expecting: .noStream, events: Array(sent[0..<2])),
                RemoteAppend(stream: "tag/naïve", expecting: .exact(0), events: [sent[2]]),
            ]))
        #expect(result.outcomes == [.appended(position: 1), .appended(position: 2), .appended(position: 3)])
        #expect(result.appended == 3)
        let pulled = try pullAll(log, book)
        try #require(pulled.count == 3)
        for (i, (e, given)) in zip(pulled, sent).enumerated() {
            #expect(e.position == UInt64(i + 1))
            #expect(e.id == given.id)
            #expect(e.type == given.type)
            #expect(e.schemaVersion == given.schemaVersion)
            #expect(e.metadata == given.metadata)
            #expect(e.payload == given.payload)
        }
        #expect(pulled.map(\.stream) == ["note/1", "note/1", "tag/naïve"])
        #expect(pulled.map(\.version) == [1, 2, 1])
        #expect(result.head == RemoteHead(position: 3, recordedAt: pulled[2].recordedAt, digest: pulled[2].digest))
        #expect(try log.head(notebook: book) == result.head)
        #expect(try log.pull(notebook: book, after: 3, limit: 10).isEmpty)
        // The bytes a device stores for them: the envelope EventStore writes, recomputed from the pull.
        let envelope = pulled[1].envelope(after: pulled[0].digest)
        #expect(envelope.digest == pulled[1].digest)
        #expect(envelope.bytes.first == RecordedEvent.envelopeFormat)
    }

    @Test("positions stay gap-free across batches and streams; pulls come in batches")
    func gapFreeAndBatchedPull() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 4)
        var f = Events(seed: 4)
        var sent: [NewEvent] = []
        for round in 0..<12 {
            let a = f.events(1 + round % 3)
            let b = f.events(2)
            sent += a + b
            _ = try log.append(
                notebook: book,
                batch: RemoteBatch([
                    RemoteAppend(stream: "note/\(round % 4)", events: a), RemoteAppend(stream: "category/1", events: b),
                ]))
        }
        var pulled: [RecordedEvent] = []
        var pages: [Int] = []
        while true {
            let page = try log.pull(notebook: book, after: UInt64(pulled.count), limit: 7)
            pages.append(page.count)
            pulled += page
            if page.count < 7 { break }
        }
        #expect(pulled.count == sent.count)
        #expect(pages.dropLast().allSatisfy { $0 == 7 })
        #expect(pulled.map(\.position) == Array(1...UInt64(sent.count)))
        #expect(pulled.map(\.id) == sent.map(\.id))
        #expect(try pullAll(log, book, batch: 5) == pulled)
        #expect(try log.pull(notebook: book, after: 10, limit: 3).map(\.position) == [11, 12, 13])
        var versions: [String: UInt64] = [:]
        for e in pulled {
            versions[e.stream, default: 0] += 1
            #expect(e.version == versions[e.stream])
        }
        #expect(remoteError { _ = try log.pull(notebook: book, after: 0, limit: 0) } != nil)
    }

    @Test("two connections appending at once: no gap, no duplicate, every stream's versions consecutive")
    func concurrentAppenders() throws {
        let c = try cluster()
        let book = try makeNotebook(c, 5)
        let address = c.address()
        let failures = Mutex<[String]>([])
        let rounds = 25
        DispatchQueue.concurrentPerform(iterations: 2) { k in
            do {
                let log = try PostgresEventLog(connecting: address)
                var f = Events(seed: 50 + UInt64(k))
                for _ in 0..<rounds {
                    _ = try log.append(
                        notebook: book,
                        batch: RemoteBatch([
                            RemoteAppend(stream: "own/\(k)", events: f.events(2)),
                            RemoteAppend(stream: "shared", events: f.events(1)),
                        ]))
                }
            } catch {
                failures.withLock { $0.append("appender \(k): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let log = try PostgresEventLog(connecting: address)
        let all = try pullAll(log, book)
        #expect(all.map(\.position) == Array(1...UInt64(2 * rounds * 3)))
        #expect(Set(all.map(\.id)).count == all.count)
        for stream in ["own/0", "own/1", "shared"] {
            let versions = all.filter { $0.stream == stream }.map(\.version)
            #expect(versions == Array(1...UInt64(versions.count)), "\(stream)")
        }
        #expect(all.filter { $0.stream == "shared" }.count == 2 * rounds)
        // Recorded-at never goes back along the log.
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.recordedAt <= $1.recordedAt })
    }

    @Test("a broken expectation writes nothing of the batch and names the stream, expected and actual version")
    func conflictWritesNothing() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 6)
        var f = Events(seed: 6)
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "note/1", events: f.events(2))]))
        let before = try log.head(notebook: book)
        let batch = RemoteBatch([
            RemoteAppend(stream: "note/2", expecting: .noStream, events: f.events(2)),
            RemoteAppend(stream: "note/1", expecting: .exact(1), events: f.events(1)),
        ])
        let error = remoteError { _ = try log.append(notebook: book, batch: batch) }
        #expect(error == .conflict(stream: "note/1", expected: .exact(1), actual: 2))
        #expect(error?.description.contains("note/1 is at version 2") == true)
        #expect(try log.head(notebook: book) == before)
        #expect(try pullAll(log, book).count == 2)
        // Each kind of expectation, checked against the versions the batch itself writes before.
        #expect(
            remoteError {
                _ = try log.append(
                    notebook: book,
                    batch: RemoteBatch([RemoteAppend(stream: "n", expecting: .streamExists, events: f.events(1))]))
            } == .conflict(stream: "n", expected: .streamExists, actual: 0))
        let chained = try log.append(
            notebook: book,
            batch: RemoteBatch([
                RemoteAppend(stream: "n", expecting: .noStream, events: f.events(1)),
                RemoteAppend(stream: "n", expecting: .exact(1), events: f.events(1)),
                RemoteAppend(stream: "n", expecting: .streamExists, events: f.events(1)),
            ]))
        #expect(chained.outcomes.map(\.position) == [3, 4, 5])
        #expect(
            remoteError {
                _ = try log.append(
                    notebook: book,
                    batch: RemoteBatch([RemoteAppend(stream: "n", expecting: .noStream, events: f.events(1))]))
            } == .conflict(stream: "n", expected: .noStream, actual: 3))
        #expect(try log.head(notebook: book).position == 5)
    }

    @Test("pushing ids the notebook holds answers their positions, with the same payload or another")
    func idempotentRepush() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 7)
        var f = Events(seed: 7)
        let events = f.events(3)
        let batch = RemoteBatch([RemoteAppend(stream: "note/1", expecting: .noStream, events: events)])
        let first = try log.append(notebook: book, batch: batch)
        #expect(first.appended == 3)
        // The same push again (a reply that was lost): its expectation no longer holds, and
        // does not matter, since nothing is new.
        let again = try log.append(notebook: book, batch: batch)
        #expect(
            again.outcomes == [.alreadyStored(position: 1), .alreadyStored(position: 2), .alreadyStored(position: 3)])
        #expect(again.head == first.head)
        // The same ids with other payloads (another device's derivation of the same intent).
        var changed = events
        for i in changed.indices { changed[i].payload = [9, 9, 9] }
        let other = try log.append(
            notebook: book, batch: RemoteBatch([RemoteAppend(stream: "note/1", expecting: .noStream, events: changed)]))
        #expect(other.outcomes.map(\.position) == [1, 2, 3])
        #expect(other.appended == 0)
        // Old ids mixed with new ones: the new ones are checked and appended.
        let fresh = f.event()
        let mixed = try log.append(
            notebook: book,
            batch: RemoteBatch([RemoteAppend(stream: "note/1", expecting: .exact(3), events: [events[1], fresh])]))
        #expect(mixed.outcomes == [.alreadyStored(position: 2), .appended(position: 4)])
        // A stored id after a new one: the batch is taken as new until the unique index finds
        // the stored id; then nothing of that attempt is kept and every id is probed.
        let later = f.event()
        let newFirst = try log.append(
            notebook: book,
            batch: RemoteBatch([RemoteAppend(stream: "note/1", expecting: .exact(4), events: [later, events[2]])]))
        #expect(newFirst.outcomes == [.appended(position: 5), .alreadyStored(position: 3)])
        // The same id twice in a batch sent around the client's checks: refused, nothing written.
        let twice = f.event()
        let refused = remoteError {
            _ = try log.connection.query(
                """
                SELECT * FROM notes_log.append_batch($1, ARRAY['note/2'], ARRAY[1]::smallint[], ARRAY[0]::bigint[],
                    ARRAY[2], $2, ARRAY['T', 'T'], ARRAY[1, 1], ARRAY['a', 'a'], ARRAY[NULL, NULL]::text[],
                    ARRAY[NULL, NULL]::uuid[], ARRAY[NULL, NULL]::uuid[], ARRAY['\\x00', '\\x00']::bytea[],
                    ARRAY[NULL, NULL]::bigint[])
                """, [.uuid(book), .uuidArray([twice.id, twice.id])])
        }
        #expect(refused == .invalidBatch("an event id is missing or appears twice"))
        let all = try pullAll(log, book)
        #expect(all.map(\.id) == events.map(\.id) + [fresh.id, later.id])
        #expect(all[0].payload == events[0].payload)
        // The same id in another notebook is another event.
        #expect(try log.append(notebook: try makeNotebook(c, 70), batch: batch).appended == 3)
    }

    @Test("batches the remote would refuse are refused before sending: empty, repeated ids, bad names")
    func invalidBatches() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 8)
        var f = Events(seed: 8)
        let e = f.event()
        let cases: [RemoteBatch] = [
            RemoteBatch([]),
            RemoteBatch([RemoteAppend(stream: "s", events: [])]),
            RemoteBatch([RemoteAppend(stream: "s", events: [e, e])]),
            RemoteBatch([RemoteAppend(stream: "s", events: [e]), RemoteAppend(stream: "t", events: [e])]),
            RemoteBatch([RemoteAppend(stream: "", events: [f.event()])]),
            RemoteBatch([RemoteAppend(stream: "a\u{0}b", events: [f.event()])]),
            RemoteBatch([RemoteAppend(stream: String(repeating: "x", count: 1025), events: [f.event()])]),
            RemoteBatch([RemoteAppend(stream: "s", events: [f.event("")])]),
            RemoteBatch([RemoteAppend(stream: "s", events: f.events(RemoteBatch.maxEvents + 1))]),
        ]
        for batch in cases {
            let error = remoteError { _ = try log.append(notebook: book, batch: batch) }
            guard case .invalidBatch = error else {
                Issue.record("expected invalidBatch, got \(String(describing: error))")
                continue
            }
        }
        #expect(try log.head(notebook: book) == .empty)
    }

    @Test("recorded-at is the greater of the server's clock and the last instant: it never goes back")
    func recordedAtNeverGoesBack() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 9)
        var f = Events(seed: 9)
        let before = EventStoreClock.now()
        let first = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(2))]))
        let after = EventStoreClock.now()
        let at = try #require(first.head.recordedAt)
        #expect(at >= before - 5_000_000 && at <= after + 5_000_000, "the server's clock, near ours")
        // The last instant moved an hour ahead (as if the server's clock had been ahead, then set back).
        let ahead = at + 3_600_000_000
        let admin = try PostgresConnection(c.address())
        try admin.execute(
            "UPDATE notes_log.notebooks SET head_recorded_at = \(ahead) WHERE notebook = '\(book)'")
        let second = try log.append(
            notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(2))]))
        #expect(second.head.recordedAt == ahead)
        let all = try log.pull(notebook: book, after: 0, limit: 10)
        #expect(all.map(\.recordedAt) == [at, at, ahead, ahead])
    }

    @Test("UPDATE, DELETE and TRUNCATE of the log, and moving a head back, are refused by triggers")
    func historyCannotBeRewritten() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 10)
        var f = Events(seed: 10)
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(3))]))
        let before = try pullAll(log, book)
        let admin = try PostgresConnection(c.address())
        for statement in [
            "UPDATE notes_log.events SET payload = '\\x00' WHERE notebook = '\(book)'",
            "UPDATE notes_log.events SET position = position + 100 WHERE notebook = '\(book)'",
            "DELETE FROM notes_log.events WHERE notebook = '\(book)' AND position = 3",
            "TRUNCATE notes_log.events CASCADE",
            "DELETE FROM notes_log.notebooks WHERE notebook = '\(book)'",
            "UPDATE notes_log.notebooks SET head_position = 1 WHERE notebook = '\(book)'",
            "UPDATE notes_log.notebooks SET head_recorded_at = 0 WHERE notebook = '\(book)'",
            "UPDATE notes_log.notebooks SET head_digest = sha256('x') WHERE notebook = '\(book)'",
            "UPDATE notes_log.notebooks SET notebook = gen_random_uuid() WHERE notebook = '\(book)'",
        ] {
            let error = remoteError { try admin.execute(statement) }
            guard case .permissionDenied(let message) = error else {
                Issue.record("\(statement): expected permissionDenied, got \(String(describing: error))")
                continue
            }
            #expect(message.contains("append-only"), "\(statement)")
        }
        #expect(try pullAll(log, book) == before)
    }

    @Test("a held notebook lock makes an append time out, writing nothing")
    func lockTimeout() throws {
        let c = try cluster()
        let book = try makeNotebook(c, 11)
        var f = Events(seed: 11)
        let log = try PostgresEventLog(connecting: c.address())
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        var settings = PostgresConnection.Settings()
        settings.lockTimeout = 200
        let impatient = try PostgresEventLog(connecting: c.address(), settings: settings)
        let holder = try PostgresConnection(c.address())
        try holder.execute("BEGIN; SELECT 1 FROM notes_log.notebooks WHERE notebook = '\(book)' FOR UPDATE")
        let error = remoteError {
            _ = try impatient.append(
                notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        }
        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        try holder.execute("ROLLBACK")
        #expect(try log.head(notebook: book).position == 1)
        #expect(
            try impatient.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
                .head.position == 2)
    }

    @Test("a session idle in a transaction loses its lock: a sleeping laptop never blocks the others")
    func idleSessionEnded() throws {
        let c = try cluster()
        let book = try makeNotebook(c, 14)
        var f = Events(seed: 14)
        let log = try PostgresEventLog(connecting: c.address())
        _ = try log.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        var settings = PostgresConnection.Settings()
        settings.idleInTransactionTimeout = 200
        let sleeper = try PostgresConnection(c.address(), settings: settings)
        try sleeper.execute("BEGIN; SELECT 1 FROM notes_log.notebooks WHERE notebook = '\(book)' FOR UPDATE")
        // Waits for the lock until the server ends the idle session (well within the lock timeout).
        let result = try log.append(
            notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        #expect(result.head.position == 2)
        let error = remoteError { try sleeper.execute("SELECT 1") }
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
    }

    @Test("a statement past the session's statement timeout is cancelled and reported as a timeout")
    func statementTimeout() throws {
        let c = try cluster()
        var settings = PostgresConnection.Settings()
        settings.statementTimeout = 100
        let connection = try PostgresConnection(c.address(), settings: settings)
        let error = remoteError { try connection.execute("SELECT pg_sleep(5)") }
        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        try connection.execute("SELECT 1")
    }

    @Test("a session compiles nothing with JIT, whatever the server's default (it cost more than it saved)")
    func noJIT() throws {
        let c = try cluster()
        let connection = try PostgresConnection(c.address())
        let result = try connection.query("SELECT current_setting('jit')", [])
        #expect(try FieldReader(result: result, row: 0).text(0, "jit") == "off")
    }

    @Test("a full batch of 5000 events goes in one call; one more is refused")
    func fullBatch() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 15)
        var f = Events(seed: 15)
        let events = f.events(RemoteBatch.maxEvents)
        let groups = stride(from: 0, to: events.count, by: 100).map {
            RemoteAppend(stream: "note/\($0 / 100)", expecting: .noStream, events: Array(events[$0..<$0 + 100]))
        }
        let result = try log.append(notebook: book, batch: RemoteBatch(groups))
        #expect(result.outcomes.map(\.position) == Array(1...UInt64(RemoteBatch.maxEvents)))
        #expect(try pullAll(log, book, batch: 400).map(\.id) == events.map(\.id))
        let error = remoteError {
            _ = try log.append(
                notebook: book,
                batch: RemoteBatch([RemoteAppend(stream: "x", events: f.events(RemoteBatch.maxEvents + 1))]))
        }
        guard case .invalidBatch = error else {
            Issue.record("expected invalidBatch, got \(String(describing: error))")
            return
        }
    }

    @Test("a server that is not there gives a clear error naming where it was looked for")
    func deadServer() throws {
        let c = try cluster()
        let nowhere = c.root + "/nowhere"
        let error = remoteError { _ = try PostgresEventLog(connecting: "host=\(nowhere) port=5432 dbname=notes") }
        guard case .unreachable(let server, let detail) = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(server.contains(nowhere))
        #expect(detail.contains("No such file or directory"))
        // libpq's two lines are two sentences (before 2026-12-06: "directory Is the server").
        #expect(detail.contains("No such file or directory. Is the server running"), "\(detail)")
        // A sentence libpq wraps goes on; a new one starts after a full stop.
        #expect(
            PostgresConnection.oneLine(
                "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n"
                    + "\tbefore or while processing the request.\n")
                == "server closed the connection unexpectedly. This probably means the server terminated abnormally "
                + "before or while processing the request.")
        #expect(error?.description.hasPrefix("cannot reach the remote log at \(nowhere)") == true)
        #expect(
            remoteError { _ = try PostgresConnection("host='unterminated") }
                == .invalidAddress(
                    "unterminated quoted string in connection info string"))
    }

    @Test("a connection the server ends reports it lost, and nothing of the call is written")
    func connectionLost() throws {
        let c = try cluster()
        let book = try makeNotebook(c, 13)
        var f = Events(seed: 13)
        let victim = try PostgresEventLog(connecting: c.address() + " application_name=victim-13")
        _ = try victim.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        let admin = try PostgresConnection(c.address())
        try admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'victim-13'")
        let error = remoteError {
            _ = try victim.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        }
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        let log = try PostgresEventLog(connecting: c.address())
        #expect(try log.head(notebook: book).position == 1)
    }

    @Test("libpq's password file works; a refused login names the problem and never the password")
    func passwords() throws {
        let c = try cluster()
        let base =
            "host=\(c.socketDirectory) port=\(PostgresCluster.port) dbname=notes user=\(PostgresCluster.passwordRole)"
        // No password anywhere.
        let missing = remoteError { _ = try PostgresConnection(base + " passfile=\(c.root)/no-such-file") }
        guard case .authenticationFailed = missing else {
            Issue.record("expected authenticationFailed, got \(String(describing: missing))")
            return
        }
        // A wrong password in the address: refused, and not repeated.
        let wrong = "wrong-Pa55-7305"
        let refused = remoteError { _ = try PostgresConnection(base + " password=\(wrong)") }
        guard case .authenticationFailed = refused else {
            Issue.record("expected authenticationFailed, got \(String(describing: refused))")
            return
        }
        #expect(!"\(String(describing: refused))".contains(wrong))
        #expect(PostgresConnection.addressHasPassword(base + " password=\(wrong)"))
        #expect(!PostgresConnection.addressHasPassword(base))
        // The right password, from a password file as psql reads it.
        let connection = try PostgresConnection(base + " passfile=\(c.passwordFile)")
        try connection.execute("SELECT 1")
    }

    @Test("a database the server does not have is named as such, not as an unreachable server (exit 5, not 6)")
    func missingDatabase() throws {
        let c = try cluster()
        let error = remoteError { _ = try PostgresConnection(c.address("no_such_notes")) }
        guard case .noDatabase(_, let detail) = error else {
            Issue.record("expected noDatabase, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("no_such_notes"), "\(detail)")
        #expect("\(String(describing: error))".contains("check the database name"))
    }

    @Test("scrubbing removes passwords from addresses in every spelling")
    func scrubbing() {
        let cases: [(String, String)] = [
            ("host=db password=hunter2 dbname=n", "host=db password=*** dbname=n"),
            ("host=db PASSWORD = 'hun ter\\'2' dbname=n", "host=db password=*** dbname=n"),
            ("postgresql://ana:hunter2@db:5432/notes", "postgresql://ana:***@db:5432/notes"),
            (
                "postgres://db/notes?user=ana&password=hunter2&sslmode=require",
                "postgres://db/notes?user=ana&password=***&sslmode=require"
            ),
            ("password authentication failed for user \"ana\"", "password authentication failed for user \"ana\""),
        ]
        for (text, expected) in cases {
            #expect(PostgresConnection.scrubbed(text) == expected)
            #expect(!PostgresConnection.scrubbed(text).contains("hunter2"))
        }
    }
}

/// The current time in microseconds, as EventStore reads it.
enum EventStoreClock {
    static func now() -> Int64 { EventStore.systemClock() }
}

@Suite("The remote log's migrations, as text")
struct SchemaTextTests {
    /// The SHA-256 of `text`'s UTF-8, in hex.
    static func digest(_ text: String) -> String {
        var h = SHA256()
        h.update(Array(text.utf8))
        return h.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test("a migration's text never changes once remotes ran it (versions 3 and 4 share their functions' text)")
    func migrationsUnchanged() {
        #expect(Self.digest(Schema.version3) == "0b100a39734b11be6f07fa76e4da8b856459f2ed989d67b18ac8b1c6bb43e00e")
        #expect(Self.digest(Schema.version4) == "c3cdb42912e25d63d1572b05a92ffbca99a1f3a128e7a03a4e302dd698200c93")
        #expect(Self.digest(Schema.version5) == "b1f07daba57793d204111cd4804a0623011a1e30e4a684e385492430aa420393")
    }
}

@Suite("Scrubbing against libpq's own parser")
struct ScrubbingAgreementTests {
    /// (address, the password libpq reads in it): what PasswordScrubbingTests assume of libpq.
    static let addresses: [(String, String)] = [
        ("host=x password=\"pw1\"", "\"pw1\""),
        ("host=x password=a\\ bsecret", "a bsecret"),
        ("host=x password=a\\'b\\\\c dbname=n", "a'b\\c"),
        ("host=x password='a\\'b c' user=u", "a'b c"),
        ("host=x password = 'it\\\\' user=u", "it\\"),
        ("password= host=secret", "host=secret"),
        ("password=one host=h password=two", "two"),
        ("application_name='x password=' password='my secret' host=h", "my secret"),
        ("postgresql://ana:hunter2@db:5432/notes", "hunter2"),
        ("postgresql://:pw1@db/notes", "pw1"),
        ("postgresql://ana:p%40ss%20w@db/notes", "p@ss w"),
        ("postgresql://ana:p?x@db/notes", "p?x"),
        ("postgresql://ana:pa ss@db/notes", "pa ss"),
        ("postgres://db/notes?user=ana&password=hunter2&sslmode=require", "hunter2"),
        ("postgresql://db/notes?pass%77ord=s%20x&user=u", "s x"),
        ("postgresql://db/notes?password=a b", "a b"),
        ("postgresql://ana:one@db/notes?password=two&sslmode=require", "two"),
    ]

    @Test("libpq reads the passwords the scrubbing tests expect, and none of one is left", arguments: addresses)
    func agrees(_ address: String, _ expected: String) {
        let password = PostgresConnection.password(in: address)
        #expect(password == expected, "\(address)")
        // libpq reads the scrubbed address's password as `***`: all of the value was replaced.
        let scrubbed = PostgresConnection.scrubbed(address)
        #expect(PostgresConnection.password(in: scrubbed) == "***", "\(scrubbed)")
    }

    @Test("libpq's complaint about an address with a password does not quote a piece of it")
    func parseErrorHidesPieces() {
        let error = remoteError { _ = try PostgresConnection("host=x password=a bsecret") }
        guard case .invalidAddress(let detail) = error else {
            Issue.record("expected invalidAddress, got \(String(describing: error))")
            return
        }
        #expect(!detail.contains("bsecret") && detail.contains(#"missing "=" after "***""#), "[\(detail)]")
        // Without a password, the word is named.
        let plain = remoteError { _ = try PostgresConnection("host=x oops") }
        #expect("\(String(describing: plain))".contains(#""oops""#), "\(String(describing: plain))")
    }

    @Test(
        "a value libpq refuses in the address (sslmode, port, an undefined service) is an invalid address, not an unreachable server"
    )
    func invalidOptionValues() {
        // Before 2026-12-06 each was `unreachable`: "check the network (the outbox is kept)", exit 6,
        // for an address no retry could use (a new user's trial).
        for (address, words) in [
            ("host=/nonexistent-socket-dir sslmode=bogus", #"invalid sslmode value: "bogus""#),
            ("host=/nonexistent-socket-dir port=abc", #"invalid integer value "abc""#),
            ("postgresql://db.example:99999/notes", #"invalid port number: "99999""#),
            ("service=no-such-service-of-notes", #"definition of service "no-such-service-of-notes" not found"#),
            // Read as libpq connects, after its `connection to server ... failed:` (before
            // 2026-12-08 unreachable, exit 6).
            (
                "host=127.0.0.1 port=1 keepalives_idle=abc",
                #"invalid integer value "abc" for connection option "keepalives_idle""#
            ),
        ] {
            let error = remoteError { _ = try PostgresConnection(address) }
            guard case .invalidAddress(let detail) = error else {
                Issue.record("\(address): expected invalidAddress, got \(String(describing: error))")
                continue
            }
            #expect(detail.contains(words), "\(address): \(detail)")
        }
        // A server that is not there is still unreachable: it may be there on the next try.
        let nowhere = remoteError { _ = try PostgresConnection("host=/nonexistent-socket-dir connect_timeout=2") }
        guard case .unreachable = nowhere else {
            Issue.record("expected unreachable, got \(String(describing: nowhere))")
            return
        }
    }

    @Test("addresses without a password are read so by libpq and left as they are")
    func noPassword() {
        for address in ["postgresql://ana@db:5432/notes", "postgresql://db/notes?sslmode=require", "host=db dbname=n"] {
            #expect(PostgresConnection.password(in: address) == nil)
            #expect(PostgresConnection.scrubbed(address) == address)
        }
    }
}
