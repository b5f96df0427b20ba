public import Basics
public import EventStore

/// The remote event log in a PostgreSQL database (see ``Schema`` and ``Schema/version2`` for its
/// tables, roles and functions).
///
/// ```swift
/// let log = try PostgresEventLog(connecting: "host=db.example.org dbname=notes sslmode=verify-full")
/// try log.initialize()  // an administrator's step: `notes sync --init`
/// let book = try log.notebook(named: "team", create: true)
/// let result = try log.append(notebook: book, batch: batch)
/// ```
///
/// Not `Sendable`: one connection, used by one thread at a time.
public final class PostgresEventLog: RemoteEventLog {
    /// The newest schema version this program knows and writes.
    public static let schemaVersion = Schema.migrations.count

    public let connection: PostgresConnection
    /// Whether this connection has checked that the schema exists and is not too new.
    var schemaChecked = false

    public init(connection: PostgresConnection) { self.connection = connection }

    /// Connects to `address` (a libpq connection string or URI).
    public convenience init(
        connecting address: String, settings: PostgresConnection.Settings = PostgresConnection.Settings()
    ) throws(RemoteLogError) {
        self.init(connection: try PostgresConnection(address, settings: settings))
    }

    // MARK: Schema

    /// Creates or upgrades the schema in one transaction. From version 2 it also creates the
    /// roles `notes_log_owner`, `notes_log_user` and `notes_log_creator` when absent (a
    /// superuser, or a role with CREATEROLE, runs it; see the README for what an administrator
    /// grants instead) and makes the session's role a member of `notes_log_owner`.
    @discardableResult
    public func initialize() throws(RemoteLogError) -> RemoteSchemaChange {
        let change = try connection.transaction { () throws(RemoteLogError) -> RemoteSchemaChange in
            // One initializer at a time: a second one waits, then finds the schema current.
            try connection.execute("SELECT pg_advisory_xact_lock(\(PostgresEventLog.initLockKey))")
            let encoding = try connection.query("SELECT current_setting('server_encoding')", [])
            let name = try FieldReader(result: encoding, row: 0).text(0, "server_encoding")
            guard name == "UTF8" else {
                throw RemoteLogError.server(
                    message: "the database's encoding is \(name); the notes log needs a UTF8 database", code: "22023")
            }
            let found = try storedVersion() ?? 0
            guard found <= PostgresEventLog.schemaVersion else {
                throw RemoteLogError.schemaTooNew(found: found, supported: PostgresEventLog.schemaVersion)
            }
            if found == PostgresEventLog.schemaVersion { return .current(version: found) }
            try connection.execute(Schema.bootstrap)
            for version in found..<PostgresEventLog.schemaVersion {
                try connection.execute(Schema.migrations[version])
                _ = try connection.query(
                    "INSERT INTO notes_log.schema_version (version) VALUES ($1)", [.int8(Int64(version + 1))])
            }
            return found == 0
                ? .created(version: PostgresEventLog.schemaVersion)
                : .upgraded(from: found, to: PostgresEventLog.schemaVersion)
        }
        schemaChecked = true
        return change
    }

    /// Key of the advisory lock `initialize()` holds ("notes_log" in ASCII, truncated to 63 bits).
    static let initLockKey: Int64 = 0x6E6F_7465_735F_6C6F

    /// The newest applied migration, or nil when the remote has no schema.
    private func storedVersion() throws(RemoteLogError) -> Int? {
        let exists = try connection.query("SELECT to_regclass('notes_log.schema_version') IS NOT NULL", [])
        guard try FieldReader(result: exists, row: 0).bool(0, "schema presence") else { return nil }
        let result = try connection.query("SELECT coalesce(max(version), 0)::bigint FROM notes_log.schema_version", [])
        let v = try FieldReader(result: result, row: 0).int64(0, "schema version")
        return v == 0 ? nil : Int(v)
    }

    /// Checks once per connection that the schema exists and this program can use it.
    func checkSchema() throws(RemoteLogError) {
        guard !schemaChecked else { return }
        guard let found = try storedVersion() else { throw .schemaMissing }
        guard found <= PostgresEventLog.schemaVersion else {
            throw .schemaTooNew(found: found, supported: PostgresEventLog.schemaVersion)
        }
        guard found == PostgresEventLog.schemaVersion else {
            throw .schemaOutdated(found: found, required: PostgresEventLog.schemaVersion)
        }
        schemaChecked = true
    }

    // MARK: Appending

    public func append(notebook: Identifier, batch: RemoteBatch) throws(RemoteLogError) -> RemoteAppendResult {
        try batch.validate()
        try namingRefusals(notebook) { () throws(RemoteLogError) in try checkSchema() }
        var ids: [Identifier?] = []
        var types: [String?] = []
        var schemas: [Int32] = []
        var actors: [String?] = []
        var commands: [String?] = []
        var causations: [Identifier?] = []
        var correlations: [Identifier?] = []
        var payloads: [[UInt8]] = []
        var writtenAts: [Int64?] = []
        for group in batch.appends {
            for e in group.events {
                ids.append(e.id)
                types.append(e.type)
                schemas.append(Int32(e.schemaVersion))
                actors.append(e.metadata.actor)
                commands.append(e.metadata.command)
                causations.append(e.metadata.causationID)
                correlations.append(e.metadata.correlationID)
                payloads.append(e.payload)
                writtenAts.append(e.metadata.writtenAt)
            }
        }
        let kinds: [Int16] = batch.appends.map {
            switch $0.expected {
            case .any: return 0
            case .noStream: return 1
            case .streamExists: return 2
            case .exact: return 3
            }
        }
        let versions: [Int64] = batch.appends.map {
            if case .exact(let v) = $0.expected { return Int64(v) }
            return 0
        }
        let result: PostgresResult
        do {
            result = try namingRefusals(notebook) { () throws(RemoteLogError) -> PostgresResult in
                try connection.query(
                    """
                    SELECT stored, first_position, head_position, head_recorded_at, head_digest
                    FROM notes_log.append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
                    """,
                    [
                        .uuid(notebook), .textArray(batch.appends.map(\.stream)), .int2Array(kinds),
                        .int8Array(versions), .int4Array(batch.appends.map { Int32($0.events.count) }), .uuidArray(ids),
                        .textArray(types), .int4Array(schemas), .textArray(actors),
                        .textArray(commands), .uuidArray(causations), .uuidArray(correlations), .byteaArray(payloads),
                        .int8Array(writtenAts),
                    ])
            }
        } catch .server(let detail, let code) where code == SQLState.conflict {
            throw conflict(in: batch, detail: detail)
        }
        return try appendResult(result, count: ids.count)
    }

    public func restore(notebook: Identifier, after position: UInt64, events: [RecordedEvent])
        throws(RemoteLogError) -> RemoteHead
    {
        guard !events.isEmpty, events.count <= RemoteBatch.maxEvents else {
            throw .invalidBatch("a restore holds 1 to \(RemoteBatch.maxEvents) events, not \(events.count)")
        }
        guard position < UInt64(Int64.max) - UInt64(events.count) else {
            throw .invalidBatch("position \(position) is out of range")
        }
        for (i, e) in events.enumerated() where e.position != position + UInt64(i) + 1 {
            throw .invalidBatch("event \(e.id) is at position \(e.position), not \(position + UInt64(i) + 1)")
        }
        try namingRefusals(notebook) { () throws(RemoteLogError) in try checkSchema() }
        let result = try namingRefusals(notebook) { () throws(RemoteLogError) -> PostgresResult in
            try connection.query(
                """
                SELECT head_position, head_recorded_at, head_digest FROM notes_log.restore_batch(
                    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
                """,
                [
                    .uuid(notebook), .int8(Int64(position)), .uuidArray(events.map(\.id)),
                    .textArray(events.map(\.stream)), .int8Array(events.map { Int64(clamping: $0.version) }),
                    .textArray(events.map(\.type)), .int4Array(events.map { Int32(clamping: $0.schemaVersion) }),
                    .textArray(events.map(\.metadata.actor)), .textArray(events.map(\.metadata.command)),
                    .uuidArray(events.map(\.metadata.causationID)), .uuidArray(events.map(\.metadata.correlationID)),
                    .byteaArray(events.map(\.payload)), .int8Array(events.map(\.recordedAt)),
                    .byteaArray(events.map(\.digest)), .int8Array(events.map(\.metadata.writtenAt)),
                ])
        }
        guard result.rowCount == 1 else { throw .malformedReply("restore_batch answered \(result.rowCount) rows") }
        return try Self.head(FieldReader(result: result, row: 0))
    }

    /// The conflict the server reported (detail `group actual`), named by the batch's stream.
    private func conflict(in batch: RemoteBatch, detail: String) -> RemoteLogError {
        let parts = detail.split(separator: " ")
        guard parts.count == 2, let group = Int(parts[0]), let actual = UInt64(parts[1]),
            batch.appends.indices.contains(group - 1)
        else { return .malformedReply("a version conflict without its stream (\(detail))") }
        let g = batch.appends[group - 1]
        return .conflict(stream: g.stream, expected: g.expected, actual: actual)
    }

    /// The outcome of each of the batch's `count` events from `append_batch`'s one row: the
    /// positions of the ids stored before (none: every event appended), the first position
    /// appended now (the others follow in batch order, up to the head), and the head.
    private func appendResult(_ result: PostgresResult, count: Int) throws(RemoteLogError) -> RemoteAppendResult {
        guard result.rowCount == 1 else { throw .malformedReply("append_batch answered \(result.rowCount) rows") }
        let f = FieldReader(result: result, row: 0)
        let digest = try f.blob(4, "head_digest")
        guard digest.count == 32 else { throw .malformedReply("the head digest has \(digest.count) bytes") }
        let head = RemoteHead(
            position: try f.position(2, "head_position"), recordedAt: try f.optionalInt64(3, "head_recorded_at"),
            digest: digest)
        let first = try f.position(1, "first_position")
        guard first > 0 else { throw .malformedReply("append_batch appended from position 0") }
        let stored = try f.optionalInt64Array(0, "stored") ?? [Int64?](repeating: nil, count: count)
        guard stored.count == count else {
            throw .malformedReply("append_batch answered for \(stored.count) of \(count) events")
        }
        var next = first
        var outcomes: [RemoteAppendOutcome] = []
        outcomes.reserveCapacity(count)
        for position in stored {
            if let position {
                guard position > 0, UInt64(position) <= head.position else {
                    throw .malformedReply("append_batch answered stored position \(position)")
                }
                outcomes.append(.alreadyStored(position: UInt64(position)))
            } else {
                outcomes.append(.appended(position: next))
                next += 1
            }
        }
        // The events appended now end at the head.
        guard next == first || next - 1 == head.position else {
            throw .malformedReply("append_batch appended up to position \(next - 1), its head is at \(head.position)")
        }
        return RemoteAppendResult(outcomes: outcomes, head: head)
    }

    // MARK: Reading

    public func pull(notebook: Identifier, after position: UInt64, limit: Int) throws(RemoteLogError)
        -> [RecordedEvent]
    {
        let result = try fetch(notebook: notebook, after: position, limit: limit, attributed: false)
        var events: [RecordedEvent] = []
        events.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            events.append(try event(result, row: row, after: position))
        }
        return events
    }

    public func pullAttributed(notebook: Identifier, after position: UInt64, limit: Int) throws(RemoteLogError)
        -> [RemotePulledEvent]
    {
        let result = try fetch(notebook: notebook, after: position, limit: limit, attributed: true)
        var events: [RemotePulledEvent] = []
        events.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            let pusher = try FieldReader(result: result, row: row).text(14, "pushed_by")
            events.append(RemotePulledEvent(event: try event(result, row: row, after: position), pushedBy: pusher))
        }
        return events
    }

    /// The rows of a pull: an empty page is either the end of a notebook the role may read, or
    /// a refusal (row-level security shows a non-member nothing), which the server then words.
    private func fetch(notebook: Identifier, after position: UInt64, limit: Int, attributed: Bool)
        throws(RemoteLogError) -> PostgresResult
    {
        guard limit > 0 else { throw .invalidBatch("a pull asks for at least one event, not \(limit)") }
        guard position <= UInt64(Int64.max) else { throw .invalidBatch("position \(position) is out of range") }
        // Positions are gap-free, so the page is also bounded above: whatever plan the server
        // picks (with no statistics yet, a bitmap scan of every later row, sorted), it reads
        // only the page's rows, and a clone stays linear in the notebook's size.
        let last = min(position + UInt64(min(limit, Int(Int32.max))), UInt64(Int64.max))
        return try namingRefusals(notebook) { () throws(RemoteLogError) -> PostgresResult in
            try checkSchema()
            // The notebook's head comes with the page, read in the same statement (so in the
            // same snapshot: an append writes its events and the head in one transaction).
            let query = """
                SELECT position, event_id, stream, version, type, schema_version, actor, command, causation_id,
                    correlation_id, payload, recorded_at, digest, written_at\(attributed ? ", pushed_by" : ""),
                    (SELECT head_position FROM notes_log.notebooks WHERE notebook = $1)
                FROM notes_log.events WHERE notebook = $1 AND position > $2 AND position <= $3
                ORDER BY position LIMIT $4
                """
            let parameters: [PostgresValue] = [
                .uuid(notebook), .int8(Int64(position)), .int8(Int64(last)), .int8(Int64(limit)),
            ]
            // A page must agree with the head read with it. Before 2026-12-08 a log whose last
            // events were deleted by hand (the head left where it was) was cloned short and the
            // next push landed past the hole; a head moved back by hand made every push of a
            // device fail on a duplicate key, exit 1 (a new user's trial). (A hole between a
            // page's rows is the rows' to name.)
            func checked(_ page: PostgresResult) throws(RemoteLogError) -> PostgresResult {
                guard page.rowCount > 0 else { return page }
                let f = FieldReader(result: page, row: page.rowCount - 1)
                let last = try f.position(0, "position")
                guard let read = try f.optionalInt64(attributed ? 15 : 14, "head_position") else { return page }
                let head = UInt64(max(0, read))
                if last > head {
                    throw .damaged(
                        "the notebook's events run to position \(last) past its head at \(head) "
                            + "(its tables were changed by hand)")
                }
                // A short page is the remote's end: it must reach the head.
                if page.rowCount < limit, last < head { throw Self.missing(after: last, head: head) }
                return page
            }
            let result = try connection.query(query, parameters)
            if result.rowCount == 0 {
                // The refusal of a non-member, and the head, in one round trip as before. An empty
                // page below the head is read again after reading the head (which commits with
                // its events), so an append between the two statements is not taken for a hole.
                let reader = try connection.query(
                    "SELECT notes_log.require_reader($1)::text, "
                        + "(SELECT head_position FROM notes_log.notebooks WHERE notebook = $1)",
                    [.uuid(notebook)])
                let head =
                    reader.rowCount == 1
                    ? UInt64(max(0, try FieldReader(result: reader, row: 0).optionalInt64(1, "head_position") ?? 0))
                    : 0
                if head > position {
                    let again = try connection.query(query, parameters)
                    if again.rowCount == 0 { throw Self.missing(after: position, head: head) }
                    return try checked(again)
                }
                return result
            }
            return try checked(result)
        }
    }

    /// The refusal of a log whose events stop before its head.
    private static func missing(after position: UInt64, head: UInt64) -> RemoteLogError {
        let which = head == position + 1 ? "position \(head) is" : "positions \(position + 1)-\(head) are"
        return .damaged(
            "\(which) missing from the notebook's events though its head is at \(head) (its tables were changed by hand)"
        )
    }

    /// The event of a pull's row (of a page that starts after `position`).
    private func event(_ result: PostgresResult, row: Int, after position: UInt64) throws(RemoteLogError)
        -> RecordedEvent
    {
        let f = FieldReader(result: result, row: row)
        let at = try f.position(0, "position")
        // Gap-free by construction; a gap here means a damaged or foreign table.
        guard at == position + UInt64(row) + 1 else {
            let first = position + UInt64(row) + 1
            let which = at == first + 1 ? "position \(first) is" : "positions \(first)-\(at - 1) are"
            throw .damaged("\(which) missing from the notebook's events (its tables were changed by hand)")
        }
        let schema = try f.int32(5, "schema_version")
        guard schema >= 0 else { throw .malformedReply("schema version \(schema) at position \(at)") }
        let digest = try f.blob(12, "digest")
        guard digest.count == 32 else {
            throw .malformedReply("the digest at position \(at) has \(digest.count) bytes")
        }
        // Only shown, but shown as RFC 3339: an instant outside its years is not the remote's.
        let writtenAt = try f.optionalInt64(13, "written_at")
        if let writtenAt, !EventMetadata.writtenAtRange.contains(writtenAt) {
            throw .malformedReply("the written-at instant at position \(at) is out of range (\(writtenAt))")
        }
        return RecordedEvent(
            position: at, id: try f.uuid(1, "event_id"), stream: try f.text(2, "stream"),
            version: try f.position(3, "version"), type: try f.text(4, "type"), schemaVersion: UInt32(schema),
            recordedAt: try f.int64(11, "recorded_at"),
            metadata: EventMetadata(
                actor: try f.text(6, "actor"), command: try f.optionalText(7, "command"),
                causationID: try f.optionalUUID(8, "causation_id"),
                correlationID: try f.optionalUUID(9, "correlation_id"), writtenAt: writtenAt),
            payload: try f.blob(10, "payload"), digest: digest)
    }

    public func head(notebook: Identifier) throws(RemoteLogError) -> RemoteHead {
        try namingRefusals(notebook) { () throws(RemoteLogError) -> RemoteHead in
            try checkSchema()
            let result = try connection.query(
                "SELECT head_position, head_recorded_at, head_digest FROM notes_log.notebooks WHERE notebook = $1",
                [.uuid(notebook)])
            guard result.rowCount == 1 else {
                try requireReader(notebook)
                throw .malformedReply("notebook \(notebook) has no head row")
            }
            return try Self.head(FieldReader(result: result, row: 0))
        }
    }

    public func mayAppend(notebook: Identifier) throws(RemoteLogError) -> Bool {
        try namingRefusals(notebook) { () throws(RemoteLogError) -> Bool in
            try checkSchema()
            // The membership append_batch checks (a member sees its own row).
            let result = try connection.query(
                "SELECT coalesce((SELECT m.can_write FROM notes_log.members m WHERE m.notebook = $1 AND m.role = session_user), false)",
                [.uuid(notebook)])
            guard result.rowCount == 1 else { throw .malformedReply("no answer to the membership query") }
            return try FieldReader(result: result, row: 0).bool(0, "can_write")
        }
    }

    /// Throws the server's words for why the session's role may not read the notebook (none, or
    /// not a member); returns when it may.
    private func requireReader(_ notebook: Identifier) throws(RemoteLogError) {
        _ = try connection.query("SELECT notes_log.require_reader($1)", [.uuid(notebook)])
    }

    /// Runs `body`; a refusal that does not name the notebook (the server's own "permission
    /// denied for schema", say) is prefixed with it, so every refusal says what was refused.
    private func namingRefusals<R>(_ notebook: Identifier, _ body: () throws(RemoteLogError) -> R)
        throws(RemoteLogError) -> R
    {
        do { return try body() } catch .permissionDenied(let message) where !message.contains(notebook.uuidString) {
            throw .permissionDenied("notebook \(notebook): \(message)")
        }
    }
}

extension PostgresEventLog {
    /// A notebook's head from a row whose first three columns are its position, instant and
    /// chain digest (a head row, or `restore_batch`'s answer).
    fileprivate static func head(_ f: FieldReader) throws(RemoteLogError) -> RemoteHead {
        let digest = try f.blob(2, "head_digest")
        guard digest.count == 32 else { throw .malformedReply("the head digest has \(digest.count) bytes") }
        return RemoteHead(
            position: try f.position(0, "head_position"), recordedAt: try f.optionalInt64(1, "head_recorded_at"),
            digest: digest)
    }
}
