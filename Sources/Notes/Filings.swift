import Basics
import EventStore
import LMDB

/// A note filed under a category or a tag by some event of its stream: an entry of the
/// `filed_ever` projection, where a past listing filtered by a category or a tag finds the only
/// notes that can pass its filter (a note in category C at any instant is one an event filed
/// under C).
///
/// The projection holds each filing under two keys, so that both questions it is asked are one
/// range of keys:
/// - `0x01 | kind | scope id | note id`: the notes ever filed under a scope (a past listing);
/// - `0x02 | note id | kind | scope id`: the scopes a note was ever filed under (a sync's re-fold
///   of the note takes its entries out before writing them again).
struct Filing: Hashable, Sendable {
    enum Kind: UInt8, Sendable {
        case category = 1
        case tag = 2
    }

    var kind: Kind
    var scope: Identifier
    var note: Identifier

    static let byScope: UInt8 = 1
    static let byNote: UInt8 = 2

    /// The key under which the notes of a scope are found.
    var scopeKey: [UInt8] { Self.prefix(kind, scope) + note.bytes }

    /// The key under which the scopes of a note are found.
    var noteKey: [UInt8] { Self.prefix(of: note) + [kind.rawValue] + scope.bytes }

    /// The start of the keys of the notes ever filed under `scope`.
    static func prefix(_ kind: Kind, _ scope: Identifier) -> [UInt8] { [byScope, kind.rawValue] + scope.bytes }

    /// The start of the keys of the scopes `note` was ever filed under.
    static func prefix(of note: Identifier) -> [UInt8] { [byNote] + note.bytes }

    /// The filings the note's state after an event of `kind` shows: its category and its tags,
    /// when the kind may have filed it (an event that sets neither leaves the filings as they were).
    static func after(_ kind: NoteEventKind, _ note: Note, into filings: inout [Filing]) {
        guard kind.mayFile else { return }
        func add(_ f: Filing) { if !filings.contains(f) { filings.append(f) } }
        if let c = note.category { add(Filing(kind: .category, scope: c, note: note.id)) }
        for t in note.tags { add(Filing(kind: .tag, scope: t, note: note.id)) }
    }

    /// Both keys of every filing, in the projection's byte order (for a bulk write and `verify`).
    static func sortedKeys(_ filings: some Sequence<Filing>) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        for f in filings {
            keys.append(f.scopeKey)
            keys.append(f.noteKey)
        }
        keys.sort { $0.lexicographicallyPrecedes($1) }
        return keys
    }
}

extension NotesProjection {
    /// Writes the note's filings that the projection does not hold yet.
    func storeFilings(_ filings: [Filing], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        for f in filings {
            try txn.put(databases[DB.filedEver], key: f.scopeKey, value: [])
            try txn.put(databases[DB.filedEver], key: f.noteKey, value: [])
        }
    }

    /// Takes every filing of `note` out (before a sync writes them again from its whole stream).
    func forgetFilings(of note: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        let prefix = Filing.prefix(of: note)
        var found: [Filing] = []
        try txn.withCursor(databases[DB.filedEver]) { c in
            var entry = try c.seek(prefix)
            while let e = entry, e.key.starts(with: prefix) {
                guard e.key.count == prefix.count + 17, let kind = Filing.Kind(rawValue: e.key[prefix.count]),
                    let scope = Identifier(bytes: e.key[(prefix.count + 1)...])
                else {
                    throw StoreError.damagedProjection("a filed_ever key of \(e.key.count) bytes is not a filing")
                }
                found.append(Filing(kind: kind, scope: scope, note: note))
                entry = try c.next()
            }
        }
        for f in found {
            _ = try txn.delete(databases[DB.filedEver], key: f.scopeKey)
            _ = try txn.delete(databases[DB.filedEver], key: f.noteKey)
        }
    }

    /// The notes an event ever filed under the scope (`nil` for a scope that is not a category
    /// or a tag): a superset of the notes in it at any past instant.
    func notesEverFiled(
        under scope: ListQuery.Scope, in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws -> Set<Identifier>? {
        switch scope {
        case .category(let id): return try notesEverFiled(.category, [id], in: txn, databases: databases)
        case .tag(let id): return try notesEverFiled(.tag, [id], in: txn, databases: databases)
        case .any, .uncategorized: return nil
        }
    }

    /// The notes an event ever filed under any of `scopes` of `kind`.
    func notesEverFiled(
        _ kind: Filing.Kind, _ scopes: [Identifier], in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws -> Set<Identifier> {
        var notes: Set<Identifier> = []
        try txn.withCursor(databases[DB.filedEver]) { c in
            for scope in scopes {
                let prefix = Filing.prefix(kind, scope)
                var entry = try c.seek(prefix)
                while let e = entry, e.key.starts(with: prefix) {
                    guard e.key.count == prefix.count + 16,
                        let id = Identifier(bytes: e.key[prefix.count...])
                    else {
                        throw StoreError.damagedProjection("a filed_ever key of \(e.key.count) bytes is not a filing")
                    }
                    notes.insert(id)
                    entry = try c.next()
                }
            }
        }
        return notes
    }

    /// Every key of the `filed_ever` projection, in order (for `verify`).
    func filedEverKeys(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try txn.withCursor(databases[DB.filedEver]) { c in
            var entry = try c.first()
            while let e = entry {
                keys.append(Array(e.key))
                entry = try c.next()
            }
        }
        return keys
    }
}
