import CSQLite
import EventStore
import Notes
import NotesInterchange
import NotesWorkload
import SwiftEvolutionHistory

/// The same notes in a SQLite database file, for the `sqlite3` CLI peer: a table with an
/// index matching `notes list`'s order, and an FTS5 table over title and body.
enum SQLitePeer {
    static let listQuery =
        "SELECT id, title, updated_at FROM notes WHERE archived = 0 AND trashed = 0 "
        + "ORDER BY pinned DESC, updated_at DESC LIMIT 50;"

    static func showQuery(prefix: String) -> String {
        "SELECT id, title, body, pinned, category, archived, trashed, created_at, updated_at, version "
            + "FROM notes WHERE id GLOB '\(prefix)*' LIMIT 2;"
    }

    static func searchQuery(_ word: String) -> String {
        "SELECT id, title FROM notes_fts WHERE notes_fts MATCH '\(word)' ORDER BY rank LIMIT 20;"
    }

    /// Writes `notes` into a new database at `path`.
    static func write(_ notes: [Note], to path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw BenchError("sqlite3_open \(path)") }
        defer { sqlite3_close(db) }
        try exec(
            db,
            """
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
              pinned INTEGER NOT NULL, category TEXT, archived INTEGER NOT NULL, trashed INTEGER NOT NULL,
              created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, version INTEGER NOT NULL);
            CREATE VIRTUAL TABLE notes_fts USING fts5(id UNINDEXED, title, body);
            BEGIN;
            """)
        var insert: OpaquePointer?
        var insertFTS: OpaquePointer?
        guard
            sqlite3_prepare_v2(db, "INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?)", -1, &insert, nil) == SQLITE_OK,
            sqlite3_prepare_v2(db, "INSERT INTO notes_fts VALUES (?,?,?)", -1, &insertFTS, nil) == SQLITE_OK
        else { throw BenchError("sqlite3_prepare: \(String(cString: sqlite3_errmsg(db)))") }
        defer {
            sqlite3_finalize(insert)
            sqlite3_finalize(insertFTS)
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for n in notes {
            let id = n.id.hex
            sqlite3_bind_text(insert, 1, id, -1, transient)
            sqlite3_bind_text(insert, 2, n.title, -1, transient)
            sqlite3_bind_text(insert, 3, n.body, -1, transient)
            sqlite3_bind_int(insert, 4, n.pinned ? 1 : 0)
            if let c = n.category {
                sqlite3_bind_text(insert, 5, c.hex, -1, transient)
            } else {
                sqlite3_bind_null(insert, 5)
            }
            sqlite3_bind_int(insert, 6, n.archived ? 1 : 0)
            sqlite3_bind_int(insert, 7, n.trashed ? 1 : 0)
            sqlite3_bind_int64(insert, 8, n.createdAt)
            sqlite3_bind_int64(insert, 9, n.updatedAt)
            sqlite3_bind_int64(insert, 10, Int64(n.version))
            guard sqlite3_step(insert) == SQLITE_DONE else {
                throw BenchError("insert: \(String(cString: sqlite3_errmsg(db)))")
            }
            sqlite3_reset(insert)
            sqlite3_bind_text(insertFTS, 1, id, -1, transient)
            sqlite3_bind_text(insertFTS, 2, n.title, -1, transient)
            sqlite3_bind_text(insertFTS, 3, n.body, -1, transient)
            guard sqlite3_step(insertFTS) == SQLITE_DONE else {
                throw BenchError("fts insert: \(String(cString: sqlite3_errmsg(db)))")
            }
            sqlite3_reset(insertFTS)
        }
        try exec(
            db,
            """
            COMMIT;
            CREATE INDEX notes_list ON notes (archived, trashed, pinned DESC, updated_at DESC);
            INSERT INTO notes_fts(notes_fts) VALUES ('optimize');
            ANALYZE;
            """)
    }

    private static func exec(_ db: OpaquePointer?, _ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw BenchError("sqlite: \(text)")
        }
    }
}
