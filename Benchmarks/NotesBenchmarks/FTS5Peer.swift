import CSQLite

/// SQLite FTS5 as the search benchmark's peer: `fts5(body)` queried with
/// `ORDER BY bm25(t) LIMIT n`, the way an application would use it.
final class FTS5Peer {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private var db: OpaquePointer?
    private var query: OpaquePointer?

    /// Opens (creating) the database file at `path`, without fsync (like the LMDB side).
    init(path: String) throws {
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw Failure(description: "cannot open \(path)") }
        try exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
    }

    deinit {
        sqlite3_finalize(query)
        sqlite3_close(db)
    }

    private func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw Failure(description: "sqlite: \(text) in \(sql)")
        }
    }

    private var lastError: String { String(cString: sqlite3_errmsg(db)) }

    /// Creates the table and inserts `bodies` with rowids 0, 1, 2, ... in one transaction.
    /// `tokenizer` is FTS5's `tokenize` option (nil: its default, `unicode61`; `porter unicode61`
    /// adds the Porter stemmer).
    func build(_ bodies: [String], tokenizer: String? = nil) throws {
        let options = tokenizer.map { ", tokenize='\($0)'" } ?? ""
        try exec("CREATE VIRTUAL TABLE t USING fts5(body\(options)); BEGIN;")
        var insert: OpaquePointer?
        guard sqlite3_prepare_v2(db, "INSERT INTO t(rowid, body) VALUES (?, ?)", -1, &insert, nil) == SQLITE_OK else {
            throw Failure(description: "sqlite prepare: \(lastError)")
        }
        defer { sqlite3_finalize(insert) }
        for (i, body) in bodies.enumerated() {
            sqlite3_bind_int64(insert, 1, Int64(i))
            let rc = body.utf8CString.withUnsafeBufferPointer { p in
                // SQLITE_TRANSIENT: SQLite copies the text before the buffer goes away.
                sqlite3_bind_text(
                    insert, 2, p.baseAddress, Int32(p.count - 1), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
            guard rc == SQLITE_OK, sqlite3_step(insert) == SQLITE_DONE else {
                throw Failure(description: "sqlite insert: \(lastError)")
            }
            sqlite3_reset(insert)
        }
        try exec("COMMIT;")
        guard
            sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", -1, &query, nil)
                == SQLITE_OK
        else { throw Failure(description: "sqlite prepare: \(lastError)") }
    }

    /// The rowids of the best `limit` rows for an FTS5 query expression.
    func search(_ match: String, limit: Int) throws -> [Int64] {
        var out: [Int64] = []
        let rc = match.utf8CString.withUnsafeBufferPointer { p in
            sqlite3_bind_text(
                query, 1, p.baseAddress, Int32(p.count - 1), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
        guard rc == SQLITE_OK else { throw Failure(description: "sqlite bind: \(lastError)") }
        sqlite3_bind_int64(query, 2, Int64(limit))
        defer { sqlite3_reset(query) }
        while true {
            let step = sqlite3_step(query)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw Failure(description: "sqlite query \(match): \(lastError)") }
            out.append(sqlite3_column_int64(query, 0))
        }
        return out
    }

    /// Our query syntax as an FTS5 expression: each term quoted (FTS5 ANDs them), phrases kept,
    /// prefixes as `"pre" *`, exclusions as `NOT`.
    static func expression(_ q: String) -> String {
        var positive: [String] = []
        var negative: [String] = []
        for word in q.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            var w = Substring(word)
            let excluded = w.hasPrefix("-")
            if excluded { w = w.dropFirst() }
            let prefix = w.hasSuffix("*")
            if prefix { w = w.dropLast() }
            let quoted = "\"" + w.replacing("\"", with: "") + "\"" + (prefix ? " *" : "")
            if excluded { negative.append(quoted) } else { positive.append(quoted) }
        }
        return ([positive.joined(separator: " ")] + negative).joined(separator: " NOT ")
    }

    /// A question as typed, as FTS5 would be asked it by an application that ranks notes by
    /// any of its words: each run of letters and digits quoted, joined by `OR` (nil when it has
    /// none).
    static func anyWord(_ q: String) -> String? {
        let words = q.split(whereSeparator: { !($0.isLetter || $0.isNumber) })
        guard !words.isEmpty else { return nil }
        return words.map { "\"" + $0 + "\"" }.joined(separator: " OR ")
    }
}
