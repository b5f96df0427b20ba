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
    var scopeKey: [UInt8] {
        var k: [UInt8] = []
        k.reserveCapacity(34)
        k.append(Self.byScope)
        k.append(kind.rawValue)
        scope.withBytes { k.append(contentsOf: $0) }
        note.withBytes { k.append(contentsOf: $0) }
        return k
    }

    /// The key under which the scopes of a note are found.
    var noteKey: [UInt8] {
        var k: [UInt8] = []
        k.reserveCapacity(34)
        k.append(Self.byNote)
        note.withBytes { k.append(contentsOf: $0) }
        k.append(kind.rawValue)
        scope.withBytes { k.append(contentsOf: $0) }
        return k
    }

    /// The start of the keys of the notes ever filed under `scope`.
    static func prefix(_ kind: Kind, _ scope: Identifier) -> [UInt8] { [byScope, kind.rawValue] + scope.bytes }

    /// The start of the keys of the scopes `note` was ever filed under.
    static func prefix(of note: Identifier) -> [UInt8] { [byNote] + note.bytes }

    /// The filing an event of `kind` with payload `p` made, folded into `note`: the category it
    /// set, the tag it added (as the replay's setters record them); none for other kinds.
    /// `seen` holds the filings of `filings` once there are 32 or more: a command tagging a note
    /// with thousands of tags folds as many events at once, and searching the array each time
    /// was quadratic.
    static func after(
        _ kind: NoteEventKind, _ p: NotePayload<String>, _ note: Note, into filings: inout [Filing],
        seen: inout Set<Filing>
    ) {
        guard let filing = made(by: kind, p, note: note.id, category: note.category) else { return }
        // A few filings (nearly every note) are searched as before, with no set to make.
        if filings.count < 32 {
            if filings.contains(filing) { return }
        } else {
            if seen.isEmpty { seen = Set(filings) }
            guard seen.insert(filing).inserted else { return }
        }
        filings.append(filing)
    }

    /// The filing an event of `kind` with payload `p` made in note `note`, whose category is
    /// `category` after the event: the category it set, the tag it added; nil for other kinds.
    @inline(__always)
    static func made<Text>(by kind: NoteEventKind, _ p: NotePayload<Text>, note: Identifier, category: Identifier?)
        -> Filing?
    {
        guard kind.mayFile else { return nil }
        if kind == .tagged { return Filing(kind: .tag, scope: p.tag, note: note) }
        if kind.fields.contains(.category), let category { return Filing(kind: .category, scope: category, note: note) }
        return nil
    }

    /// Whether the projection holds this filing already because `old` (the note as stored) is
    /// filed there.
    func isImplied(by old: Note?) -> Bool {
        guard let old else { return false }
        switch kind {
        case .category: return old.category == scope
        case .tag: return old.tags.contains(scope)
        }
    }

    /// Calls `body` with both keys of every filing (each once, however often it is given), in
    /// the projection's byte order (the keys by scope, then those by note), through one buffer:
    /// for a bulk write and `verify`, without an array for each key. Returns the filings' count.
    @discardableResult
    static func forEachKey(
        _ filings: some Collection<Filing>, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> Int {
        var sorted = Array(filings)
        sortByScope(&sorted)
        try forEachKey(of: sorted, byNote: false, from: 0, body)
        sortByNote(&sorted)
        try forEachKey(of: sorted, byNote: true, from: 0, body)
        return sorted.count
    }

    /// Sorts the filings in the order of their keys by scope, each once.
    static func sortByScope(_ filings: inout [Filing]) {
        filings.sort { ($0.kind.rawValue, $0.scope, $0.note) < ($1.kind.rawValue, $1.scope, $1.note) }
        var unique = 0
        for i in filings.indices where unique == 0 || filings[unique - 1] != filings[i] {
            filings[unique] = filings[i]
            unique += 1
        }
        filings.removeLast(filings.count - unique)
    }

    /// Sorts the filings in the order of their keys by note.
    static func sortByNote(_ filings: inout [Filing]) {
        filings.sort { ($0.note, $0.kind.rawValue, $0.scope) < ($1.note, $1.kind.rawValue, $1.scope) }
    }

    /// Calls `body` with the key by scope (`byNote` false; the filings sorted by
    /// ``sortByScope(_:)``) or by note (true; sorted by ``sortByNote(_:)``) of each filing from
    /// index `start` on, at most `limit` of them; returns the index of the next one.
    @discardableResult
    static func forEachKey(
        of filings: [Filing], byNote: Bool, from start: Int, limit: Int = .max,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> Int {
        var key = [UInt8](repeating: 0, count: 34)
        key[0] = byNote ? Self.byNote : byScope
        var i = start
        while i < filings.count, i - start < limit {
            let f = filings[i]
            // `kind | scope | note` by scope, `note | kind | scope` by note.
            put(byNote ? f.note : f.scope, at: byNote ? 1 : 2, in: &key)
            key[byNote ? 17 : 1] = f.kind.rawValue
            put(byNote ? f.scope : f.note, at: 18, in: &key)
            try key.withUnsafeBytes(body)
            i += 1
        }
        return i
    }

    private static func put(_ id: Identifier, at offset: Int, in key: inout [UInt8]) {
        withUnsafeBytes(of: (id.high.bigEndian, id.low.bigEndian)) { b in
            for i in 0..<16 { key[offset + i] = b[i] }
        }
    }
}

extension NotesProjection {
    /// Writes the note's filings, but those `old` (the note as stored) shows it holds already.
    func storeFilings(
        _ filings: [Filing], old: Note? = nil, in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws {
        for f in filings where !f.isImplied(by: old) {
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
    /// or a tag, or that holds more than `limit` filings): a superset of the notes in it at any
    /// past instant.
    func notesEverFiled(
        under scope: ListQuery.Scope, limit: Int, in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws -> Set<Identifier>? {
        switch scope {
        case .category(let id): return try notesEverFiled(.category, [id], limit: limit, in: txn, databases: databases)
        case .tag(let id): return try notesEverFiled(.tag, [id], limit: limit, in: txn, databases: databases)
        case .any, .uncategorized: return nil
        }
    }

    /// The notes an event ever filed under any of `scopes` of `kind`, or nil when they hold
    /// more than `limit` filings.
    func notesEverFiled(
        _ kind: Filing.Kind, _ scopes: [Identifier], limit: Int, in txn: borrowing Transaction,
        databases: ProjectionDatabases
    ) throws -> Set<Identifier>? {
        var notes: Set<Identifier> = []
        var read = 0
        try txn.withCursor(databases[DB.filedEver]) { c in
            for scope in scopes where read <= limit {
                let prefix = Filing.prefix(kind, scope)
                var entry = try c.seek(prefix)
                while let e = entry, e.key.starts(with: prefix), read <= limit {
                    read += 1
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
        return read > limit ? nil : notes
    }

    /// Whether the `filed_ever` projection holds exactly the keys of `filings` (for `verify`),
    /// how many keys it holds and how many it should.
    func filedEverMatches(
        _ filings: [Filing], in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws -> (matches: Bool, stored: Int, expected: Int) {
        var stored = 0
        var expected = 0
        var matches = true
        try txn.withCursor(databases[DB.filedEver]) { c in
            var entry = try c.first()
            expected =
                2
                * (try Filing.forEachKey(filings) { key in
                    if let e = entry, e.key.elementsEqual(key) {
                        stored += 1
                        entry = try c.next()
                    } else {
                        matches = false
                    }
                })
            while let e = entry {
                _ = e
                stored += 1
                matches = false
                entry = try c.next()
            }
        }
        return (matches, stored, expected)
    }
}
