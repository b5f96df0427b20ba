import Basics
import EventStore
import PostgresFixture
import Testing

@testable import PostgresLog

// Schema version 5's `append_batch`: one pass for the batches devices send (a stream in several
// groups, expecting no stream or an exact version), the probing path for everything else.
extension PostgresLogTests {
    @Test("a stream in several groups of one batch, as an outbox sends it: versions follow on, broken ones are named")
    func streamInSeveralGroups() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 28)
        var f = Events(seed: 28)
        let e = f.events(7)
        let batch = RemoteBatch([
            RemoteAppend(stream: "note/a", expecting: .noStream, events: [e[0], e[1]]),
            RemoteAppend(stream: "note/b", expecting: .noStream, events: [e[2]]),
            RemoteAppend(stream: "note/a", expecting: .exact(2), events: [e[3]]),
            RemoteAppend(stream: "note/b", expecting: .exact(1), events: [e[4], e[5]]),
            RemoteAppend(stream: "note/a", expecting: .exact(3), events: [e[6]]),
        ])
        let result = try log.append(notebook: book, batch: batch)
        #expect(result.outcomes == (1...7).map { .appended(position: UInt64($0)) })
        let all = try pullAll(log, book)
        #expect(all.map(\.id) == e.map(\.id))
        #expect(all.map(\.stream) == ["note/a", "note/a", "note/b", "note/a", "note/b", "note/b", "note/a"])
        #expect(all.map(\.version) == [1, 2, 1, 3, 2, 3, 4])
        #expect(result.head.position == 7 && result.head.digest == all[6].digest)
        // Sent again (a reply that was lost): every id answered at its position, nothing written.
        let again = try log.append(notebook: book, batch: batch)
        #expect(again.outcomes == (1...7).map { .alreadyStored(position: UInt64($0)) })
        #expect(again.head == result.head)

        // Broken expectations, each named by its group's stream, and nothing written: in a later
        // group of a stream, past a stream's last version, and no stream for one the batch creates.
        var g = f.events(2)
        let later = remoteError {
            _ = try log.append(
                notebook: book,
                batch: RemoteBatch([
                    RemoteAppend(stream: "note/a", expecting: .exact(4), events: [g[0]]),
                    RemoteAppend(stream: "note/a", expecting: .exact(4), events: [g[1]]),
                ]))
        }
        #expect(later == .conflict(stream: "note/a", expected: .exact(4), actual: 5))
        let gap = remoteError {
            _ = try log.append(
                notebook: book,
                batch: RemoteBatch([
                    RemoteAppend(stream: "note/a", expecting: .exact(4), events: [g[0]]),
                    RemoteAppend(stream: "note/b", expecting: .exact(5), events: [g[1]]),
                ]))
        }
        #expect(gap == .conflict(stream: "note/b", expected: .exact(5), actual: 3))
        let created = remoteError {
            _ = try log.append(
                notebook: book,
                batch: RemoteBatch([
                    RemoteAppend(stream: "note/c", expecting: .noStream, events: [g[0]]),
                    RemoteAppend(stream: "note/c", expecting: .noStream, events: [g[1]]),
                ]))
        }
        #expect(created == .conflict(stream: "note/c", expected: .noStream, actual: 1))
        #expect(try log.head(notebook: book) == result.head)

        // Any version and an existing stream, in several groups of a stream, with a stored id last.
        g = f.events(3)
        let mixed = try log.append(
            notebook: book,
            batch: RemoteBatch([
                RemoteAppend(stream: "note/b", expecting: .streamExists, events: [g[0]]),
                RemoteAppend(stream: "note/a", expecting: .any, events: [g[1]]),
                RemoteAppend(stream: "note/b", expecting: .any, events: [g[2], e[2]]),
            ]))
        #expect(
            mixed.outcomes == [
                .appended(position: 8), .appended(position: 9), .appended(position: 10), .alreadyStored(position: 3),
            ])
        let after = try pullAll(log, book)
        #expect(after.count == 10 && after.suffix(3).map(\.version) == [4, 5, 5])
        #expect(mixed.head.position == 10 && mixed.head.digest == after[9].digest)
    }

    @Test("a client whose encoding is not UTF8 gets the same envelopes and digests (convert_to, not textsend)")
    func otherClientEncoding() throws {
        let c = try cluster()
        let log = try PostgresEventLog(connecting: c.address())
        let book = try makeNotebook(c, 29)
        try log.connection.execute("SET client_encoding = 'LATIN1'")
        var f = Events(seed: 29)
        let events = (0..<3).map { _ in
            f.event("Caf\u{E9}", metadata: EventMetadata(actor: "r\u{E9}mi@portable", command: "caf\u{E9}"))
        }
        _ = try log.append(
            notebook: book,
            batch: RemoteBatch([
                RemoteAppend(stream: "note/\u{E9}", expecting: .noStream, events: Array(events[0..<2])),
                RemoteAppend(stream: "note/x", expecting: .noStream, events: [events[2]]),
            ]))
        // Read in UTF8 by another connection: every digest is its envelope's.
        let reader = try PostgresEventLog(connecting: c.address())
        #expect(try pullAll(reader, book).count == 3)
    }

    @Test("init upgrades a version 4 schema in place: events and digests unchanged, appends chained to them")
    func upgradeFromVersion4() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        let admin = try PostgresConnection(c.address(database))
        // A remote of version 4, as `notes sync --init` of the program before left it.
        try admin.transaction { () throws(RemoteLogError) in
            try admin.execute(Schema.bootstrap)
            for v in 0..<4 {
                try admin.execute(Schema.migrations[v])
                _ = try admin.query("INSERT INTO notes_log.schema_version (version) VALUES ($1)", [.int8(Int64(v + 1))])
            }
        }
        let created = try admin.query("SELECT notes_log.notebook_id('book-30', true)", [])
        let book = try FieldReader(result: created, row: 0).uuid(0, "notebook_id")
        var f = Events(seed: 30)
        var old = f.events(3)
        old[1].metadata.writtenAt = 1_795_953_600_000_000
        // Version 4's append_batch: each event names its group.
        _ = try admin.query(
            "SELECT * FROM notes_log.append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            [
                .uuid(book), .textArray(["s", "t"]), .int2Array([1, 1]), .int8Array([0, 0]), .int4Array([1, 1, 2]),
                .uuidArray(old.map(\.id)), .textArray(old.map(\.type)),
                .int4Array(old.map { Int32($0.schemaVersion) }), .textArray(old.map(\.metadata.actor)),
                .textArray(old.map(\.metadata.command)), .uuidArray(old.map(\.metadata.causationID)),
                .uuidArray(old.map(\.metadata.correlationID)), .byteaArray(old.map(\.payload)),
                .int8Array(old.map(\.metadata.writtenAt)),
            ])
        let before = try storedEvents(admin, book)
        let log = try PostgresEventLog(connecting: c.address(database))
        #expect(remoteError { _ = try log.head(notebook: book) } == .schemaOutdated(found: 4, required: 5))

        #expect(try log.initialize() == .upgraded(from: 4, to: 5))
        #expect(try log.initialize() == .current(version: 5))
        #expect(try storedEvents(admin, book) == before, "the same events, instants and digests")
        let result = try log.append(
            notebook: book,
            batch: RemoteBatch([
                RemoteAppend(stream: "s", expecting: .exact(2), events: f.events(1)),
                RemoteAppend(stream: "t", expecting: .exact(1), events: f.events(1)),
                RemoteAppend(stream: "s", expecting: .exact(3), events: f.events(1)),
            ]))
        #expect(result.outcomes.map(\.position) == [4, 5, 6])
        let all = try pullAll(log, book)
        #expect(all.map(\.version) == [1, 2, 1, 3, 2, 4])
        #expect(all[1].metadata.writtenAt == 1_795_953_600_000_000)
        // One append_batch, version 5's (events counted by group), owned by the owner role.
        let functions = try admin.query(
            """
            SELECT count(*) FILTER (WHERE 'p_counts' = ANY (p.proargnames) AND r.rolname = 'notes_log_owner'), count(*)
            FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
            WHERE p.proname = 'append_batch' AND p.pronamespace = 'notes_log'::regnamespace
            """, [])
        let counted = FieldReader(result: functions, row: 0)
        #expect(try counted.int64(0, "version 5") == 1 && counted.int64(1, "all") == 1)
    }
}
