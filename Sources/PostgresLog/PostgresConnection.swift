import Basics
internal import CLibPQ
public import EventStore
import Glibc

/// One connection to a PostgreSQL server through libpq.
///
/// The address is a libpq connection string or URI (`host=db.example.org dbname=notes
/// sslmode=verify-full`, `postgresql://ana@db/notes`, `service=notes`): libpq reads the password
/// file (`~/.pgpass`, `PGPASSFILE`), the service file and the TLS options as it does for `psql`.
/// No message this type produces holds a password (see ``PostgresConnection/scrubbed(_:)``).
///
/// ```swift
/// let connection = try PostgresConnection("service=notes")
/// try connection.transaction { () throws(RemoteLogError) in try connection.execute("…") }
/// ```
///
/// Not `Sendable`: a libpq connection is used by one thread at a time.
public final class PostgresConnection {
    /// Limits of every session, so that a sleeping laptop never holds a notebook's lock.
    public struct Settings: Sendable, Equatable {
        /// How long to wait for a lock (a notebook's head row) before giving up, in milliseconds.
        public var lockTimeout = 10_000
        /// How long one statement may run, in milliseconds.
        public var statementTimeout = 60_000
        /// How long a transaction may stay open and idle before the server ends the session, in
        /// milliseconds.
        public var idleInTransactionTimeout = 30_000
        /// Seconds to wait for the connection, unless the address says otherwise.
        public var connectTimeout = 10

        public init() {}
    }

    let conn: OpaquePointer
    /// Where the connection goes, for messages: host or socket directory, port and database.
    public let server: String

    /// Connects and sets the session's limits.
    public init(_ address: String, settings: Settings = Settings()) throws(RemoteLogError) {
        if containsNUL(address) { throw .invalidAddress("the address holds a NUL character") }
        // As for psql, an address without '=' and no URI scheme is a database name.
        if address.contains("=") || address.hasPrefix("postgresql://") || address.hasPrefix("postgres://") {
            try PostgresConnection.checkParses(address)
        }
        // Later keywords override earlier ones, and the address is expanded where `dbname`
        // stands: its connect_timeout wins over ours, our encoding wins over its.
        let keywords = ["connect_timeout", "fallback_application_name", "dbname", "client_encoding"]
        let values = [String(settings.connectTimeout), "notes", address, "UTF8"]
        let made: OpaquePointer? = withCStringArray(keywords) { k in
            withCStringArray(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let made else {
            throw .unreachable(server: "the server", detail: "libpq could not allocate a connection")
        }
        let server = PostgresConnection.describe(made)
        guard PQstatus(made) == CONNECTION_OK else {
            let detail = PostgresConnection.scrubbed(PostgresConnection.oneLine(String(cString: PQerrorMessage(made))))
            let needsPassword = PQconnectionNeedsPassword(made) != 0
            PQfinish(made)
            if needsPassword || PostgresConnection.isAuthenticationFailure(detail) {
                throw .authenticationFailed(server: server, detail: detail)
            }
            // An option's value libpq refuses before it connects (`sslmode=bogus`, `port=abc`, a
            // service that is not defined) is the address's fault, not the network's: another try
            // fails the same way.
            if PostgresConnection.isAddressProblem(detail) { throw .invalidAddress(detail) }
            // A database that is not there will not be there on the next try either.
            let m = detail.lowercased()
            if m.contains("database \"") && m.contains("does not exist") {
                throw .noDatabase(server: server, detail: detail)
            }
            throw .unreachable(server: server, detail: detail)
        }
        // The server's notices (a WARNING that it shuts down, say) would go to stderr beside our
        // own one-line errors; the error that follows says what happened.
        PQsetNoticeReceiver(made, { _, _ in }, nil)
        conn = made
        self.server = server
        // No JIT compilation: `append_batch`'s statements over a batch of 5,000 events are
        // estimated above `jit_above_cost` (scalar subplans counted for every row, though they
        // run for few), and compiling them took 20-40 ms per call, more than running them (a
        // third of a push's server time). Nothing this program runs is long enough to repay it.
        try execute(
            """
            SET jit = off; \
            SET lock_timeout = \(settings.lockTimeout); \
            SET statement_timeout = \(settings.statementTimeout); \
            SET idle_in_transaction_session_timeout = \(settings.idleInTransactionTimeout); \
            SET default_transaction_isolation = 'read committed'
            """)
    }

    deinit { PQfinish(conn) }

    /// Whether a libpq address names a password (which must live in the password file or the
    /// service file instead, never in our configuration). False when the address does not parse.
    public static func addressHasPassword(_ address: String) -> Bool { password(in: address) != nil }

    /// The password libpq reads in `address`, or nil when there is none or it does not parse.
    static func password(in address: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(address, &error) else {
            if let error { PQfreemem(error) }
            return nil
        }
        defer { PQconninfoFree(options) }
        var p = options
        while let keyword = p.pointee.keyword {
            if strcmp(keyword, "password") == 0, let value = p.pointee.val, value.pointee != 0 {
                return String(cString: value)
            }
            p += 1
        }
        return nil
    }

    /// `text` with every password a libpq address may carry replaced by `***` (see
    /// ``PasswordScrubbing/scrubbed(_:)``).
    public static func scrubbed(_ text: String) -> String { PasswordScrubbing.scrubbed(text) }

    // MARK: Statements

    /// Runs `sql` (one or more statements, no parameters) and discards any rows.
    public func execute(_ sql: String) throws(RemoteLogError) {
        let result = try PostgresResult(PQexec(conn, sql), connection: self)
        _ = result
    }

    /// Runs one statement with binary parameters and binary results.
    func query(_ sql: String, _ parameters: [PostgresValue]) throws(RemoteLogError) -> PostgresResult {
        let types = parameters.map(\.type)
        let lengths = parameters.map { Int32($0.bytes?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let raw: OpaquePointer? = withByteArrays(parameters.map(\.bytes)) { values in
            PQexecParams(conn, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
        return try PostgresResult(raw, connection: self)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<R>(_ body: () throws(RemoteLogError) -> R) throws(RemoteLogError) -> R {
        try execute("BEGIN")
        let value: R
        do { value = try body() } catch {
            // A broken connection rolls back by itself; the body's error says more than this one.
            try? execute("ROLLBACK")
            throw error
        }
        try execute("COMMIT")
        return value
    }

    /// The connection's last error message, scrubbed, on one line.
    var lastError: String {
        PostgresConnection.scrubbed(PostgresConnection.oneLine(String(cString: PQerrorMessage(conn))))
    }

    var isBroken: Bool { PQstatus(conn) != CONNECTION_OK }

    /// The role this connection logged in as (the server's `session_user`).
    public var role: String { PQuser(conn).map { String(cString: $0) } ?? "" }

    /// The process id of the server's backend serving this connection (for measurements).
    public var backendPID: Int32 { PQbackendPID(conn) }

    // MARK: Helpers

    private static func checkParses(_ address: String) throws(RemoteLogError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(address, &error) else {
            var detail = error.map { String(cString: $0) } ?? "it does not parse"
            if let error { PQfreemem(error) }
            // libpq quotes the word it stumbled on, which may be a piece of a password the
            // address failed to quote (`password=a bsecret`: missing "=" after "bsecret").
            if scrubbed(address) != address { detail = withoutQuotedWords(detail) }
            throw .invalidAddress(scrubbed(oneLine(detail)))
        }
        PQconninfoFree(options)
    }

    /// `message` with each `"…"` it quotes (but a lone `"="`) replaced by `"***"`.
    static func withoutQuotedWords(_ message: String) -> String {
        let parts = message.split(separator: "\"", omittingEmptySubsequences: false)
        return parts.enumerated().map { i, part in
            i % 2 == 1 && i < parts.count - 1 && part != "=" ? "***" : String(part)
        }.joined(separator: "\"")
    }

    private static func describe(_ conn: OpaquePointer) -> String {
        func text(_ p: UnsafeMutablePointer<CChar>?) -> String? {
            guard let p, p.pointee != 0 else { return nil }
            return String(cString: p)
        }
        let host = text(PQhost(conn)) ?? "the default socket"
        let port = text(PQport(conn)).map { ":" + $0 } ?? ""
        let database = text(PQdb(conn)).map { " database " + $0 } ?? ""
        return scrubbed(host + port + database)
    }

    /// Whether libpq's `message` refuses a value of the address itself, found before any
    /// connection was tried (libpq's `connectOptions2` and its service-file reader): an invalid
    /// value of an option (`invalid sslmode value`, `invalid port number`, `invalid integer value
    /// ... for connection option`), a service that is not defined or whose file is not there,
    /// hosts and ports that do not pair up. A message of a connection tried (`connection to server
    /// ...`, `could not translate host name`) is not one: the network may be back on a retry.
    static func isAddressProblem(_ message: String) -> Bool {
        let m = message.lowercased()
        if ["invalid ", "definition of service", "service file", "could not match "].contains(where: { m.hasPrefix($0) }
        ) {
            return true
        }
        // An integer option libpq reads only as it connects (`connect_timeout=abc`, or
        // `keepalives_idle=abc` over TCP) is refused after the `connection to server ... failed:`
        // of the attempt: the value's fault all the same (before 2026-12-08 exit 6, "check the
        // network"; a new user's trial).
        return m.contains(" failed: invalid integer value ") && m.contains(" for connection option ")
    }

    private static func isAuthenticationFailure(_ message: String) -> Bool {
        let m = message.lowercased()
        return ["authentication", "password", "pg_hba.conf", "role \"", "certificate", "permission denied"]
            .contains { m.contains($0) }
    }

    ///
    /// A line that ends without punctuation before one that starts with a capital letter ends a
    /// sentence: libpq's `...failed: No such file or directory` then `Is the server running ...?`
    /// read as one sentence, joined by a space alone. A line that goes on in small letters
    /// continues its sentence (`...terminated abnormally` then `before or while processing`).
    static func oneLine(_ message: String) -> String {
        let lines = message.split(whereSeparator: { $0 == "\n" || $0 == "\t" })
            .map { $0.trimmingPrefix(" ") }
            .filter { !$0.isEmpty }
        var joined = ""
        for line in lines {
            if let last = joined.last {
                let continues = ".:;,?!)\"".contains(last) || !(line.first?.isUppercase ?? false)
                joined += continues ? " " : ". "
            }
            joined += line
        }
        return joined
    }
}

/// `text` without its leading `prefix` (ASCII letters compared ignoring case), or nil.
/// A query's rows, freed when the value goes away.
final class PostgresResult {
    let raw: OpaquePointer

    /// Takes `raw` from libpq, throwing the error it reports (if any).
    init(_ raw: OpaquePointer?, connection: PostgresConnection) throws(RemoteLogError) {
        guard let raw else { throw .connectionLost(detail: connection.lastError) }
        let status = PQresultStatus(raw)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            self.raw = raw
            return
        }
        defer { PQclear(raw) }
        func field(_ code: Int32) -> String? { PQresultErrorField(raw, code).map { String(cString: $0) } }
        let message = PostgresConnection.scrubbed(
            field(clibpq_diag_message_primary) ?? PostgresConnection.oneLine(String(cString: PQresultErrorMessage(raw)))
        )
        guard let code = field(clibpq_diag_sqlstate) else {
            throw .connectionLost(detail: connection.isBroken ? connection.lastError : message)
        }
        throw PostgresResult.error(
            code: code, message: message, detail: field(clibpq_diag_message_detail), role: connection.role)
    }

    deinit { PQclear(raw) }

    static func error(code: String, message: String, detail: String?, role: String) -> RemoteLogError {
        switch code {
        // The caller (an append) names the stream from its batch and the detail, `group actual`.
        case SQLState.conflict: return .server(message: detail ?? message, code: code)
        case SQLState.invalidBatch: return .invalidBatch(message)
        case SQLState.appendOnly, SQLState.accessDenied: return .permissionDenied(message)
        // A server that takes no writes (a standby, `default_transaction_read_only`): no retry
        // of the same address pushes (before 2026-12-08 "reported an error", exit 1).
        case "25006": return .readOnly(message)
        case "55P03": return .timedOut("waiting for a lock: \(message)")
        case "57014": return .timedOut(message)
        // The server's own privileges: the role lacks a grant (or a device tried to write a table).
        case "42501":
            let hint = message.hasSuffix("schema notes_log") ? "; an administrator grants it notes_log_user" : ""
            return .permissionDenied("\(message) (role \(role))\(hint)")
        case "3F000", "42P01", "42883": return .schemaMissing
        // A column of the log renamed or dropped by hand, under a schema version this program
        // knows (before 2026-12-08 "reported an error", exit 1).
        case "42703":
            return .damaged("\(message): its tables are not as `notes sync --init` made them (changed by hand)")
        default:
            if code.hasPrefix("08") || code == "25P03" || code == "57P01" || code == "57P02" || code == "57P03" {
                return .connectionLost(detail: message)
            }
            if code.hasPrefix("28") { return .authenticationFailed(server: "the server", detail: message) }
            return .server(message: message, code: code)
        }
    }

    var rowCount: Int { Int(PQntuples(raw)) }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(raw, Int32(row), Int32(column)) != 0 }

    /// The binary value of a field (nil for NULL); valid while the result lives.
    func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        guard !isNull(row, column), let p = PQgetvalue(raw, Int32(row), Int32(column)) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: Int(PQgetlength(raw, Int32(row), Int32(column))))
    }
}

/// The error codes our server functions raise (class `NL`, which PostgreSQL leaves free).
enum SQLState {
    /// A stream's version differs from the expected one; the detail is `group actual`.
    static let conflict = "NLV01"
    /// The batch breaks a rule (sizes, names, repeated ids).
    static let invalidBatch = "NLB01"
    /// An UPDATE, DELETE or TRUNCATE of the log.
    static let appendOnly = "NLA01"
    /// The session's role may not use the notebook this way (not a member, a reader appending,
    /// no right to create or share); the message names the notebook and the role.
    static let accessDenied = "NLP01"
}

/// Calls `body` with NUL-terminated copies of `strings` (no trailing null pointer: libpq's
/// keyword arrays end with an explicit nil, appended here).
private func withCStringArray<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { for p in copies { free(p) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

/// Calls `body` with pointers to each byte array (nil for nil), valid during the call.
private func withByteArrays<R>(_ arrays: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = arrays.map { bytes in
        guard let bytes else { return nil }
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
        bytes.withUnsafeBytes { b in
            if let base = b.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: base, byteCount: b.count) }
        }
        return p
    }
    defer { for p in copies { p?.deallocate() } }
    return body(copies.map { UnsafePointer($0) })
}
