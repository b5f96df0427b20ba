import Basics
import Dispatch
import EventStore
import PostgresFixture
import Synchronization
import Testing

@testable import PostgresLog

/// Creates a LOGIN role (trusted on the cluster's socket), a member of `in` (comma-separated).
func makeRole(_ c: PostgresCluster, _ name: String, in roles: String? = nil) throws {
    try c.execute("CREATE ROLE \(name) LOGIN" + (roles.map { " IN ROLE " + $0 } ?? ""), database: "postgres")
}

/// The remote log of `database` as `role`.
func logAs(_ c: PostgresCluster, _ role: String, database: String = "notes") throws -> PostgresEventLog {
    try PostgresEventLog(connecting: c.address(database, user: role))
}

/// The refusal `body` throws; records an issue unless it is ``RemoteLogError/permissionDenied(_:)``
/// naming every one of `words`.
func expectRefused(
    _ words: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    let error = remoteError(body, sourceLocation: sourceLocation)
    guard case .permissionDenied(let message) = error else {
        Issue.record("expected permissionDenied, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    for word in words {
        #expect(message.contains(word), "\"\(message)\" should name \(word)", sourceLocation: sourceLocation)
    }
}

/// Named notebooks, members, and what row-level security and the definer functions allow each role.
extension PostgresLogTests {
    @Test("a member reads and appends as itself; a non-member is refused pull, head and append, and sees no row")
    func membersOnly() throws {
        let c = try cluster()
        try makeRole(c, "ana_21", in: "notes_log_creator")
        try makeRole(c, "eve_21", in: "notes_log_user")
        let ana = try logAs(c, "ana_21")
        let book = try ana.notebook(named: "shared-21", create: true)
        #expect(try ana.notebook(named: "shared-21", create: true) == book, "creating again finds it")
        #expect(try ana.notebook(named: "shared-21", create: false) == book)
        #expect(try ana.head(notebook: book) == .empty)
        var f = Events(seed: 21)
        let events = f.events(3)
        _ = try ana.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: events)]))
        #expect(try pullAll(ana, book).map(\.id) == events.map(\.id))
        let attributed = try ana.pullAttributed(notebook: book, after: 0, limit: 10)
        #expect(attributed.map(\.pushedBy) == ["ana_21", "ana_21", "ana_21"])
        #expect(attributed.map(\.event) == (try ana.pull(notebook: book, after: 0, limit: 10)))
        #expect(
            try ana.members(notebook: "shared-21") == [RemoteMember(role: "ana_21", canWrite: true, addedBy: "ana_21")])

        let eve = try logAs(c, "eve_21")
        let words = ["eve_21", book.uuidString]
        expectRefused(words) { _ = try eve.pull(notebook: book, after: 0, limit: 10) }
        expectRefused(words) { _ = try eve.pullAttributed(notebook: book, after: 0, limit: 10) }
        expectRefused(words) { _ = try eve.head(notebook: book) }
        expectRefused(words) {
            _ = try eve.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        }
        expectRefused(["eve_21", "shared-21"]) { _ = try eve.notebook(named: "shared-21", create: false) }
        expectRefused(["eve_21", "shared-21"]) { _ = try eve.notebook(named: "shared-21", create: true) }
        expectRefused(["eve_21", "shared-21"]) { _ = try eve.members(notebook: "shared-21") }
        expectRefused(["eve_21", "shared-21"]) { try eve.share(notebook: "shared-21", role: "eve_21", canWrite: true) }
        // Without notes_log_creator, no notebook of its own either.
        expectRefused(["eve_21", "notes_log_creator", "eve"]) { _ = try eve.notebook(named: "eve's", create: true) }
        // Row-level security: the tables show a non-member nothing of the notebook.
        for table in ["events", "notebooks", "members"] {
            let rows = try eve.connection.query("SELECT count(*) FROM notes_log.\(table)", [])
            #expect(try FieldReader(result: rows, row: 0).int64(0, "count") == 0, "\(table)")
        }
        #expect(try ana.head(notebook: book).position == 3)
    }

    @Test("a reader pulls but cannot append or share; a writer shares, changes rights and unshares")
    func shareAndUnshare() throws {
        let c = try cluster()
        try makeRole(c, "ana_22", in: "notes_log_creator")
        try makeRole(c, "bob_22", in: "notes_log_user")
        try makeRole(c, "cat_22", in: "notes_log_user")
        let ana = try logAs(c, "ana_22")
        let bob = try logAs(c, "bob_22")
        let book = try ana.notebook(named: "team-22", create: true)
        var f = Events(seed: 22)
        _ = try ana.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(2))]))

        try ana.share(notebook: "team-22", role: "bob_22", canWrite: false)
        #expect(try bob.notebook(named: "team-22", create: false) == book)
        #expect(try pullAll(bob, book).count == 2)
        #expect(try bob.head(notebook: book).position == 2)
        #expect(try !bob.mayAppend(notebook: book) && ana.mayAppend(notebook: book), "as the append finds")
        expectRefused(["bob_22", "team-22", "not append"]) {
            _ = try bob.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        }
        // Nor give back events, as after a restored backup; nor may a writer where the head is not.
        let stored = try pullAll(ana, book)
        expectRefused(["bob_22", "restore", "writers"]) {
            _ = try bob.restore(notebook: book, after: 0, events: stored)
        }
        #expect(
            remoteError { _ = try ana.restore(notebook: book, after: 0, events: stored) }
                == .invalidBatch("the remote's head is at position 2, not 0: events were appended since"))
        expectRefused(["bob_22", "team-22", "writers"]) {
            try bob.share(notebook: "team-22", role: "cat_22", canWrite: true)
        }
        expectRefused(["bob_22", "team-22"]) { _ = try bob.unshare(notebook: "team-22", role: "ana_22") }
        #expect(
            try bob.members(notebook: "team-22") == [
                RemoteMember(role: "ana_22", canWrite: true, addedBy: "ana_22"),
                RemoteMember(role: "bob_22", canWrite: false, addedBy: "ana_22"),
            ])

        // Made a writer: it appends, recorded as itself.
        try ana.share(notebook: "team-22", role: "bob_22", canWrite: true)
        #expect(try bob.mayAppend(notebook: book))
        let own = f.events(1)
        _ = try bob.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "t", events: own)]))
        let attributed = try bob.pullAttributed(notebook: book, after: 0, limit: 10)
        #expect(attributed.map(\.pushedBy) == ["ana_22", "ana_22", "bob_22"])
        #expect(attributed.last?.event.id == own[0].id)
        // A writer shares further.
        try bob.share(notebook: "team-22", role: "cat_22", canWrite: false)
        #expect(try pullAll(try logAs(c, "cat_22"), book).count == 3)

        #expect(try ana.unshare(notebook: "team-22", role: "bob_22"))
        #expect(try !ana.unshare(notebook: "team-22", role: "bob_22"), "no member any more")
        expectRefused(["bob_22", book.uuidString]) { _ = try bob.pull(notebook: book, after: 0, limit: 10) }
        // The last writer stays, and there is no sharing with a role that does not exist.
        expectRefused(["team-22", "no writer"]) { _ = try ana.unshare(notebook: "team-22", role: "ana_22") }
        expectRefused(["team-22", "no writer"]) { try ana.share(notebook: "team-22", role: "ana_22", canWrite: false) }
        let missing = remoteError { try ana.share(notebook: "team-22", role: "nobody_22", canWrite: true) }
        #expect(
            missing == .server(message: "there is no role nobody_22 to share notebook 'team-22' with", code: "NLR01"))
        #expect(try ana.members(notebook: "team-22").map(\.role) == ["ana_22", "cat_22"])
        #expect(try pullAll(ana, book).count == 3)
    }

    @Test("even a writer cannot UPDATE, DELETE, TRUNCATE or INSERT the tables, nor choose its pushed_by")
    func writersCannotRewrite() throws {
        let c = try cluster()
        try makeRole(c, "ana_23", in: "notes_log_creator")
        try makeRole(c, "mal_23", in: "notes_log_creator")
        let ana = try logAs(c, "ana_23")
        let book = try ana.notebook(named: "kept-23", create: true)
        try ana.share(notebook: "kept-23", role: "mal_23", canWrite: true)
        var f = Events(seed: 23)
        _ = try ana.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(3))]))
        let mal = try logAs(c, "mal_23")
        let before = try pullAll(mal, book)
        for statement in [
            "UPDATE notes_log.events SET payload = '\\x00' WHERE notebook = '\(book)'",
            "UPDATE notes_log.events SET pushed_by = 'mal_23' WHERE notebook = '\(book)'",
            "DELETE FROM notes_log.events WHERE notebook = '\(book)' AND position = 3",
            "TRUNCATE notes_log.events CASCADE",
            """
            INSERT INTO notes_log.events (notebook, position, event_id, stream, version, type, schema_version,
                actor, payload, recorded_at, digest, pushed_by)
            VALUES ('\(book)', 4, gen_random_uuid(), 's', 4, 'T', 1, 'x', '', 0, sha256(''), 'ana_23')
            """,
            "UPDATE notes_log.notebooks SET head_position = 1 WHERE notebook = '\(book)'",
            "UPDATE notes_log.notebooks SET name = 'mine' WHERE notebook = '\(book)'",
            "INSERT INTO notes_log.members (notebook, role, can_write) VALUES ('\(book)', 'eve', true)",
            "DELETE FROM notes_log.members WHERE notebook = '\(book)'",
            "SET ROLE ana_23",
            "SET SESSION AUTHORIZATION ana_23",
        ] {
            let error = remoteError { try mal.connection.execute(statement) }
            guard case .permissionDenied(let message) = error else {
                Issue.record("\(statement): expected permissionDenied, got \(String(describing: error))")
                continue
            }
            #expect(message.contains("mal_23"), "\(message)")
        }
        #expect(try pullAll(ana, book) == before)
        _ = try mal.append(notebook: book, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        #expect(try ana.pullAttributed(notebook: book, after: 3, limit: 1).map(\.pushedBy) == ["mal_23"])
    }

    @Test("a role without the grants is refused everything, naming the role and the notebook, even as a member")
    func noGrants() throws {
        let c = try cluster()
        try makeRole(c, "ana_24", in: "notes_log_creator")
        try makeRole(c, "nog_24")
        let ana = try logAs(c, "ana_24")
        let book = try ana.notebook(named: "grants-24", create: true)
        try ana.share(notebook: "grants-24", role: "nog_24", canWrite: true)
        let nog = try logAs(c, "nog_24")
        var f = Events(seed: 24)
        let batch = RemoteBatch([RemoteAppend(stream: "s", events: f.events(2))])
        let words = ["nog_24", book.uuidString]
        expectRefused(words) { _ = try nog.pull(notebook: book, after: 0, limit: 10) }
        expectRefused(words) { _ = try nog.head(notebook: book) }
        expectRefused(words + ["notes_log_user"]) { _ = try nog.append(notebook: book, batch: batch) }
        try c.execute("GRANT notes_log_user TO nog_24")
        let granted = try logAs(c, "nog_24")
        #expect(try granted.append(notebook: book, batch: batch).appended == 2)
        #expect(try pullAll(granted, book).count == 2)
    }

    @Test("init upgrades a version 1 schema in place: events stay readable, notebooks named by their id")
    func upgradeFromVersion1() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        let admin = try PostgresConnection(c.address(database))
        try admin.execute(Schema.bootstrap)
        try admin.execute(Schema.migrations[0])
        try admin.execute("INSERT INTO notes_log.schema_version (version) VALUES (1)")
        // Version 1: appending creates the notebook; a device role granted EXECUTE appends.
        try makeRole(c, "dev_25")
        try admin.execute(
            """
            GRANT USAGE ON SCHEMA notes_log TO dev_25;
            GRANT EXECUTE ON FUNCTION notes_log.append_batch(uuid, text[], smallint[], bigint[], integer[], uuid[],
                text[], integer[], text[], text[], uuid[], uuid[], bytea[]) TO dev_25
            """)
        let first = notebook(25)
        let second = notebook(26)
        var f = Events(seed: 25)
        let old = try PostgresEventLog(connecting: c.address(database))
        try legacyAppend(old.connection, notebook: first, stream: "s", events: f.events(3))
        let device = try logAs(c, "dev_25", database: database)
        try legacyAppend(device.connection, notebook: second, stream: "s", events: f.events(2))
        let firstBefore = try storedEvents(admin, first)
        let secondBefore = try storedEvents(admin, second)
        #expect(
            remoteError { _ = try logAs(c, "postgres", database: database).head(notebook: first) }
                == .schemaOutdated(found: 1, required: PostgresEventLog.schemaVersion))

        let log = try PostgresEventLog(connecting: c.address(database))
        #expect(try log.initialize() == .upgraded(from: 1, to: PostgresEventLog.schemaVersion))
        #expect(try log.initialize() == .current(version: PostgresEventLog.schemaVersion))
        #expect(try storedEvents(admin, first) == firstBefore && pullAll(log, first).count == 3)
        #expect(try storedEvents(admin, second) == secondBefore && pullAll(log, second).count == 2)
        #expect(try log.notebook(named: first.uuidString, create: false) == first)
        #expect(try log.members(notebook: first.uuidString).map(\.role) == ["postgres"])
        #expect(try log.members(notebook: second.uuidString).map(\.role) == ["dev_25", "postgres"])
        // The device that pushed keeps its right, once it holds the new grants; it appends after
        // the old events, chained to them.
        try admin.execute("GRANT notes_log_user TO dev_25")
        let upgraded = try logAs(c, "dev_25", database: database)
        _ = try upgraded.append(notebook: second, batch: RemoteBatch([RemoteAppend(stream: "s", events: f.events(1))]))
        #expect(try pullAll(upgraded, second).count == 3)
        expectRefused(["dev_25", first.uuidString]) { _ = try upgraded.pull(notebook: first, after: 0, limit: 10) }
        // The tables and functions now belong to the NOLOGIN owner role.
        let owners = try admin.query(
            """
            SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
            WHERE c.relnamespace = 'notes_log'::regnamespace AND c.relkind = 'r' AND r.rolname <> 'notes_log_owner'
            """, [])
        #expect(try FieldReader(result: owners, row: 0).int64(0, "count") == 0)
    }
}

/// Appends `events` to `stream` through the `append_batch` of schema versions 1 to 3 (no device
/// instants), as a program of those versions did.
func legacyAppend(_ connection: PostgresConnection, notebook: Identifier, stream: String, events: [NewEvent]) throws {
    _ = try connection.query(
        "SELECT * FROM notes_log.append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        [
            .uuid(notebook), .textArray([stream]), .int2Array([0]), .int8Array([0]),
            .int4Array(events.map { _ in 1 }), .uuidArray(events.map(\.id)), .textArray(events.map(\.type)),
            .int4Array(events.map { Int32($0.schemaVersion) }), .textArray(events.map(\.metadata.actor)),
            .textArray(events.map(\.metadata.command)), .uuidArray(events.map(\.metadata.causationID)),
            .uuidArray(events.map(\.metadata.correlationID)), .byteaArray(events.map(\.payload)),
        ])
}

extension PostgresLogTests {
    @Test("init upgrades a version 3 schema in place: events and digests unchanged, device instants kept from then on")
    func upgradeFromVersion3() throws {
        let c = try cluster()
        let database = try c.makeDatabase()
        let admin = try PostgresConnection(c.address(database))
        let old = try PostgresEventLog(connecting: c.address(database))
        // A remote of version 3, as `notes sync --init` of the program before left it.
        try admin.transaction { () throws(RemoteLogError) in
            try admin.execute(Schema.bootstrap)
            for v in 0..<3 {
                try admin.execute(Schema.migrations[v])
                _ = try admin.query("INSERT INTO notes_log.schema_version (version) VALUES ($1)", [.int8(Int64(v + 1))])
            }
        }
        let book = try notebookOnVersion3(admin)
        var f = Events(seed: 27)
        try legacyAppend(admin, notebook: book, stream: "s", events: f.events(3))
        let before = try storedEvents(admin, book)
        #expect(
            remoteError { _ = try old.head(notebook: book) }
                == .schemaOutdated(found: 3, required: PostgresEventLog.schemaVersion))

        let log = try PostgresEventLog(connecting: c.address(database))
        #expect(try log.initialize() == .upgraded(from: 3, to: PostgresEventLog.schemaVersion))
        #expect(try log.initialize() == .current(version: PostgresEventLog.schemaVersion))
        #expect(try storedEvents(admin, book) == before, "the same events, instants and digests")
        let after = try pullAll(log, book)
        #expect(after.count == 3 && after.allSatisfy { $0.metadata.writtenAt == nil })
        for i in 1..<after.count { #expect(after[i].chainDigest(after: after[i - 1].digest) == after[i].digest) }
        // New events: with a device instant (format 2) or without (format 1), chained to the old.
        var claimed = f.event()
        claimed.metadata.writtenAt = 1_795_953_600_000_000
        let plain = f.event()
        _ = try log.append(
            notebook: book,
            batch: RemoteBatch([RemoteAppend(stream: "s", expecting: .exact(3), events: [claimed, plain])]))
        let all = try pullAll(log, book)
        try #require(all.count == 5)
        #expect(all[3].metadata.writtenAt == 1_795_953_600_000_000 && all[4].metadata.writtenAt == nil)
        #expect(all[3].recordedAt != 1_795_953_600_000_000, "the remote's own instant orders")
        #expect(all[3].envelope(after: all[2].digest).bytes.first == RecordedEvent.writtenAtEnvelopeFormat)
        #expect(all[4].envelope(after: all[3].digest).bytes.first == RecordedEvent.envelopeFormat)
        for i in 1..<all.count { #expect(all[i].chainDigest(after: all[i - 1].digest) == all[i].digest) }
        // An absurd device instant, sent around the client's checks: refused, nothing written.
        let refused = remoteError {
            _ = try log.connection.query(
                """
                SELECT * FROM notes_log.append_batch($1, ARRAY['s'], ARRAY[0]::smallint[], ARRAY[0]::bigint[],
                    ARRAY[1], $2, ARRAY['T'], ARRAY[1], ARRAY['a'], ARRAY[NULL]::text[], ARRAY[NULL]::uuid[],
                    ARRAY[NULL]::uuid[], ARRAY['\\x00']::bytea[], ARRAY[9223372036854775807]::bigint[])
                """, [.uuid(book), .uuidArray([f.id()])])
        }
        #expect(refused == .invalidBatch("event 1 has a written-at instant out of range"))
        #expect(try log.head(notebook: book).position == 5)
        // A program that knows only version 3 refuses the upgraded remote, as it refuses any newer one.
        #expect(PostgresEventLog.schemaVersion > 3)
    }

    /// A notebook created on a remote of version 3 by its administrator.
    private func notebookOnVersion3(_ admin: PostgresConnection) throws -> Identifier {
        let result = try admin.query("SELECT notes_log.notebook_id('book-27', true)", [])
        return try FieldReader(result: result, row: 0).uuid(0, "notebook_id")
    }

}

/// The ids, instants and digests `book` holds, in order, read with the columns of every schema
/// version: what an upgrade must leave as it was.
func storedEvents(_ connection: PostgresConnection, _ book: Identifier) throws -> String {
    let result = try connection.query(
        """
        SELECT coalesce(string_agg(event_id::text || ' ' || recorded_at || ' ' || encode(digest, 'hex'), ','
            ORDER BY position), '') FROM notes_log.events WHERE notebook = $1
        """, [.uuid(book)])
    return try FieldReader(result: result, row: 0).text(0, "events")
}

extension PostgresLogTests {
    @Test("the inlined LEB128 of the set-based append equals the reference varint at every length's edges")
    func leb128MatchesVarint() throws {
        let c = try cluster()
        let admin = try PostgresConnection(c.address())
        var values: [Int64] = [0, 1, 300, 16_000, 1 << 40, Int64.max]
        for bits in 1...40 { values += [(1 << bits) - 1, 1 << bits, (1 << bits) + 1] }
        let result = try admin.query(
            """
            SELECT count(*) FROM unnest($1::bigint[]) v
            WHERE notes_log.leb128(v) IS DISTINCT FROM notes_log.varint(v)
            """, [.int8Array(values)])
        #expect(try FieldReader(result: result, row: 0).int64(0, "count") == 0)
        let negative = remoteError { _ = try admin.query("SELECT notes_log.leb128(-1)", []) }
        #expect(negative == .invalidBatch("a negative number cannot be a varint"))
    }
}

extension PostgresLogTests {
    @Test("two creators of one name at once get one notebook; a name with a control character is refused")
    func concurrentCreation() throws {
        let c = try cluster()
        try makeRole(c, "ana_27", in: "notes_log_creator")
        try makeRole(c, "bob_27", in: "notes_log_creator")
        let ids = Mutex<[String: Identifier]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { k in
            let role = k == 0 ? "ana_27" : "bob_27"
            do {
                let id = try logAs(c, role).notebook(named: "race-27", create: true)
                ids.withLock { $0[role] = id }
            } catch {
                failures.withLock { $0.append("\(role): \(error)") }
            }
        }
        // One of them created it; the other found it, and is no member of it.
        let refused = failures.withLock { $0 }
        #expect(ids.withLock { $0.count } == 1 && refused.count == 1, "\(refused)")
        #expect(refused.first?.contains("is not a member of notebook 'race-27'") == true)
        let creator = try #require(ids.withLock { $0.keys.first })
        #expect(try logAs(c, creator).members(notebook: "race-27").map(\.role) == [creator])
        let bad = remoteError { _ = try logAs(c, "ana_27").notebook(named: "tab\there", create: true) }
        guard case .server(_, "NLR01") = bad else {
            Issue.record("expected NLR01, got \(String(describing: bad))")
            return
        }
    }
}
