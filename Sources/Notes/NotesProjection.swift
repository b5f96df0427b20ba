public import Basics
public import EventStore
public import LMDB

/// The notes projections: current notes by id, the listing index, categories with counts and
/// the search index. Applied inline with every append and rebuilt in bulk from the log.
public final class NotesProjection: ProjectionSet {
    /// Index entries a rebuild writes per transaction; smaller batches hold the store's write
    /// lock for less time at once, so commands of other processes are not held up.
    public let rebuildBatch: Int

    public init(rebuildBatch: Int = 250_000) { self.rebuildBatch = max(1, rebuildBatch) }

    public var version: String { "notes-3+" + SearchBridge.version }

    enum DB {
        static let notes = "notes"
        static let list = "list"
        static let categories = "categories"
        static let categoryNames = "category_names"
    }

    public var databaseSpecs: [(name: String, flags: DatabaseFlags)] {
        let own: [(name: String, flags: DatabaseFlags)] = [
            (DB.notes, []), (DB.list, []), (DB.categories, []), (DB.categoryNames, []),
        ]
        return own + SearchBridge.databaseSpecs
    }

    // MARK: Inline

    public func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        // Categories first, so every category a note names has its record; then each note once,
        // folding all its events of the batch (a bulk import touches each record once). The
        // events stay where they are: each note gets the indices of its events, in order.
        var noteIDs: [Identifier] = []
        var noteNumber: [Identifier: Int] = [:]
        var numbers = [Int](repeating: -1, count: events.count)
        var counts: [Int] = []
        for i in events.indices {
            switch StreamRef(events[i].stream) {
            case .category(let id):
                try applyCategory(id: id, events[i], in: txn, databases: databases)
            case .note(let id):
                let n: Int
                if let known = noteNumber[id] {
                    n = known
                } else {
                    n = noteIDs.count
                    noteNumber[id] = n
                    noteIDs.append(id)
                    counts.append(0)
                }
                numbers[i] = n
                counts[n] += 1
            case .other:
                break
            }
        }
        // Each note's event indices, contiguous and in log order (a counting sort).
        var starts = [Int](repeating: 0, count: noteIDs.count + 1)
        for n in noteIDs.indices { starts[n + 1] = starts[n] + counts[n] }
        var order = [Int](repeating: 0, count: starts[noteIDs.count])
        var fill = starts
        for i in events.indices where numbers[i] >= 0 {
            order[fill[numbers[i]]] = i
            fill[numbers[i]] += 1
        }
        // The search index takes the batch's changes at once: each posting block is written once.
        var changes: [(old: Note?, new: Note)] = []
        changes.reserveCapacity(noteIDs.count)
        for n in noteIDs.indices {
            if let change = try applyNote(
                id: noteIDs[n], events, order[starts[n]..<starts[n + 1]], in: txn, databases: databases)
            {
                changes.append(change)
            }
        }
        try SearchBridge.update(changes: changes, in: txn, databases: databases)
    }

    static func id(in stream: String, kind: String) -> Identifier? {
        guard stream.hasPrefix(kind) else { return nil }
        return Identifier(stream.dropFirst(kind.count))
    }

    /// Folds the note's events into its records; returns the change for the search index.
    private func applyNote(
        id: Identifier, _ all: [LiftedEvent], _ indices: ArraySlice<Int>, in txn: borrowing Transaction,
        databases: ProjectionDatabases
    ) throws -> (old: Note?, new: Note)? {
        let old = try note(id, in: txn, databases: databases)
        var note = old
        for i in indices {
            let e = all[i]
            guard let kind = NoteEventKind.matcher.kind(e.type, version: e.schemaVersion) else {
                throw FoldError.foreignType(e.type, version: e.schemaVersion, in: .note(id))
            }
            let p = try e.payload.withUnsafeBytes { bytes in try NotePayload<String>(kind, decoding: bytes) }
            try NoteFold.apply(kind, p, to: &note, id: id, at: e.recordedAt, version: e.version)
        }
        guard let new = note else { return nil }
        try txn.put(databases[DB.notes], key: id.bytes, value: new.encoded())
        let oldKeys = old.map(ListIndex.keys(for:)) ?? []
        let newKeys = ListIndex.keys(for: new)
        let list = databases[DB.list]
        for k in oldKeys where !newKeys.contains(k) { try txn.delete(list, key: k) }
        for k in newKeys where !oldKeys.contains(k) { try txn.put(list, key: k, value: []) }
        try adjustCount(category: old.flatMap { $0.trashed ? nil : $0.category }, by: -1, in: txn, databases: databases)
        try adjustCount(category: new.trashed ? nil : new.category, by: 1, in: txn, databases: databases)
        return (old, new)
    }

    private func adjustCount(
        category: Identifier?, by delta: Int, in txn: borrowing Transaction, databases: ProjectionDatabases
    )
        throws
    {
        guard let category, var c = try self.category(category, in: txn, databases: databases) else { return }
        c.count += delta
        try txn.put(databases[DB.categories], key: category.bytes, value: c.encoded())
    }

    private func applyCategory(
        id: Identifier, _ e: LiftedEvent, in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws {
        guard let event = try CategoryEvent.decode(e) else {
            throw FoldError.foreignType(e.type, version: e.schemaVersion, in: .category(id))
        }
        let existing = try category(id, in: txn, databases: databases)
        var folded = existing
        try CategoryFold.apply(event, to: &folded, id: id, at: e.recordedAt)
        guard let c = folded else { return }
        try txn.put(databases[DB.categories], key: id.bytes, value: c.encoded())
        // The names this event may have given or taken: each goes to its owner now.
        var names: [[UInt8]] = []
        if let ex = existing, !ex.deleted { names.append(Category.nameKey(ex.name)) }
        if !c.deleted { names.append(Category.nameKey(c.name)) }
        guard !names.isEmpty else { return }
        let all = try allCategories(in: txn, databases: databases)
        for key in Set(names) where CategoryNameIndex.indexable(key) {
            if let owner = CategoryNameIndex.owner(of: key, among: all) {
                try txn.put(databases[DB.categoryNames], key: key, value: owner.id.bytes)
            } else {
                try txn.delete(databases[DB.categoryNames], key: key)
            }
        }
    }

    /// Every category record, deleted ones included.
    func allCategories(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Category] {
        var out: [Category] = []
        try txn.withCursor(databases[DB.categories]) { c in
            var entry = try c.first()
            while let e = entry {
                guard let id = Identifier(bytes: e.key) else {
                    throw StoreError.damagedProjection("a category record has a bad key")
                }
                do { out.append(try Category(decoding: e.value, id: id)) } catch {
                    throw StoreError.damagedProjection("category record of \(id): \(error)")
                }
                entry = try c.next()
            }
        }
        return out
    }

    // MARK: Queries

    /// The current note with `id`, or nil.
    public func note(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Note? {
        let key = id.bytes
        let raw = try key.withUnsafeBytes { k in try txn.get(databases[DB.notes], k) }
        guard let raw else { return nil }
        do { return try Note(decoding: raw) } catch {
            throw StoreError.damagedProjection("notes projection record of \(id): \(error)")
        }
    }

    /// Ids of notes whose hex id starts with `prefix` (lowercase hex), at most `limit`.
    public func notes(
        withPrefix prefix: String, limit: Int, in txn: borrowing Transaction, databases: ProjectionDatabases
    )
        throws -> [Identifier]
    {
        var start: [UInt8] = []
        var digits = Array(prefix.utf8)
        if digits.count % 2 == 1 { digits.append(UInt8(ascii: "0")) }
        var k = 0
        while k + 1 < digits.count {
            guard let hi = hexDigit(digits[k]), let lo = hexDigit(digits[k + 1]) else { return [] }
            start.append(hi << 4 | lo)
            k += 2
        }
        var found: [Identifier] = []
        try txn.withCursor(databases[DB.notes]) { c in
            var entry = try c.seek(start)
            while let e = entry, found.count < limit {
                guard let id = Identifier(bytes: e.key), id.hex.hasPrefix(prefix) else { break }
                found.append(id)
                entry = try c.next()
            }
        }
        return found
    }

    /// The category with `id` (including deleted ones), or nil.
    public func category(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> Category?
    {
        let key = id.bytes
        let raw = try key.withUnsafeBytes { k in try txn.get(databases[DB.categories], k) }
        guard let raw else { return nil }
        do { return try Category(decoding: raw, id: id) } catch {
            throw StoreError.damagedProjection("category record of \(id): \(error)")
        }
    }

    /// The live category named `name` (compared without regard to case), or nil.
    public func category(named name: String, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> Category?
    {
        // LMDB refuses empty keys and keys over 511 bytes; no stored name is either.
        let key = Category.nameKey(name)
        guard !key.isEmpty, key.count <= 511 else { return nil }
        guard let raw = try txn.get(databases[DB.categoryNames], key: key),
            let id = Identifier(bytes: raw)
        else { return nil }
        return try category(id, in: txn, databases: databases)
    }

    /// Every live category (two may share a name when an import brought both).
    public func categories(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Category] {
        try allCategories(in: txn, databases: databases).filter { !$0.deleted }
    }

    /// One page of a listing, reading only the index entries it returns.
    public func list(_ query: ListQuery, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Note]
    {
        var out: [Note] = []
        let groups: [UInt8] = query.pinnedOnly ? [0] : [0, 1]
        for group in groups {
            let prefix = ListIndex.prefix(
                status: query.status, scope: query.scope, sort: query.sort, pinnedGroup: group)
            try txn.withCursor(databases[DB.list]) { c in
                var entry: Entry?
                if query.reverse {
                    var after = prefix
                    after.append(contentsOf: [UInt8](repeating: 0xFF, count: 300))
                    entry = try after.withUnsafeBytes { k in try c.seekAtOrBefore(k) }
                } else {
                    entry = try c.seek(prefix)
                }
                while let e = entry, e.key.starts(with: prefix), out.count < query.limit {
                    guard let id = Identifier(bytes: e.key.suffix(16)) else { break }
                    if let n = try note(id, in: txn, databases: databases) { out.append(n) }
                    entry = query.reverse ? try c.previous() : try c.next()
                }
            }
            if out.count >= query.limit { break }
        }
        return out
    }

    /// Number of notes in the projection (any status).
    public func noteCount(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Int {
        try txn.count(databases[DB.notes])
    }

    // MARK: Rebuild

    public func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws {
        // The first and last reports let a progress bar time the whole rebuild and clear itself.
        context.progress(0, of: head)
        let state = try NotebookState.replay(store: context.store, upTo: head, releasingPages: true) { done in
            context.progress(min(done, head &- 1), of: head)
        }
        try write(state, context: context, databases: databases)
        context.progress(head, of: head)
    }

    /// Writes a folded state into empty projection databases, in sorted bulk order.
    func write(_ state: NotebookState, context: RebuildContext, databases: ProjectionDatabases) throws {
        let notes = state.notes.values.sorted { $0.id < $1.id }
        // The search index is tokenized on the second core while the other projections are written.
        try SearchBridge.bulkLoad(notes, context: context, databases: databases) {
            try writeNotesListsAndCategories(
                notes, categories: state.categories, context: context, databases: databases)
        }
    }

    private func writeNotesListsAndCategories(
        _ notes: [Note], categories known: [Identifier: Category], context: RebuildContext,
        databases: ProjectionDatabases
    ) throws {
        let chunk = max(1, rebuildBatch / 12)
        var start = 0
        while start < notes.count {
            let slice = notes[start..<min(start + chunk, notes.count)]
            try context.write { txn in
                try txn.withCursor(databases[DB.notes]) { c in
                    for n in slice {
                        let key = n.id.bytes
                        let value = n.encoded()
                        try key.withUnsafeBytes { k in
                            try value.withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                        }
                    }
                }
            }
            start += chunk
        }
        try ListIndexBulkWriter(notes).write(context: context, into: databases[DB.list], batch: rebuildBatch)
        var categories = known
        for n in notes where !n.trashed {
            if let c = n.category, categories[c] != nil { categories[c]!.count += 1 }
        }
        try context.write { txn in
            for c in categories.values.sorted(by: { $0.id < $1.id }) {
                try txn.put(databases[DB.categories], key: c.id.bytes, value: c.encoded(), flags: .append)
            }
            for (key, id) in CategoryNameIndex.entries(categories.values) {
                try txn.put(databases[DB.categoryNames], key: key, value: id.bytes)
            }
        }
    }
}

/// What a listing shows.
public struct ListQuery: Sendable, Equatable {
    public enum Sort: UInt8, Sendable, CaseIterable {
        case updated = 0
        case created = 1
        case title = 2
    }
    public enum StatusFilter: UInt8, Sendable {
        case active = 0
        case archived = 1
        case trashed = 2
        case all = 3
    }
    public enum Scope: Sendable, Equatable {
        case any
        case uncategorized
        case category(Identifier)
    }

    public var status: StatusFilter = .active
    public var scope: Scope = .any
    public var pinnedOnly = false
    public var sort: Sort = .updated
    public var reverse = false
    public var limit = Int.max

    public init() {}
}

/// Keys of the listing index: one per (status view, category scope, sort) a note appears in.
///
/// `status | scope | sort | pinned group | sort value | id`; sort values are encoded so that
/// LMDB's byte order is the listing order (newest first for dates, A-Z for titles).
enum ListIndex {
    static func prefix(status: ListQuery.StatusFilter, scope: ListQuery.Scope, sort: ListQuery.Sort, pinnedGroup: UInt8)
        -> [UInt8]
    {
        var k: [UInt8] = [status.rawValue]
        switch scope {
        case .any: k.append(0)
        case .uncategorized: k.append(1)
        case .category(let id):
            k.append(2)
            k.append(contentsOf: id.bytes)
        }
        k.append(sort.rawValue)
        k.append(pinnedGroup)
        return k
    }

    static func keys(for note: Note) -> [[UInt8]] {
        let statuses: [ListQuery.StatusFilter] = [ListQuery.StatusFilter(rawValue: note.status.rawValue)!, .all]
        let scopes: [ListQuery.Scope] = [.any, note.category.map { .category($0) } ?? .uncategorized]
        var keys: [[UInt8]] = []
        keys.reserveCapacity(12)
        let idBytes = note.id.bytes
        for s in statuses {
            for scope in scopes {
                for sort in ListQuery.Sort.allCases {
                    var k = prefix(status: s, scope: scope, sort: sort, pinnedGroup: note.pinned ? 0 : 1)
                    switch sort {
                    case .updated: k.append(contentsOf: descending(note.updatedAt))
                    case .created: k.append(contentsOf: descending(note.createdAt))
                    case .title: k.append(contentsOf: titleKey(note.title))
                    }
                    k.append(contentsOf: idBytes)
                    keys.append(k)
                }
            }
        }
        return keys
    }

    static func descending(_ t: Int64) -> [UInt8] {
        let v = ~(UInt64(bitPattern: t) ^ 0x8000_0000_0000_0000)
        return withUnsafeBytes(of: v.bigEndian) { Array($0) }
    }

    /// Lowercased title bytes, cut at 64 bytes, then a 0 terminator so "a" sorts before "ab".
    static func titleKey(_ title: String) -> [UInt8] {
        var bytes = Array(title.lowercased().utf8.prefix(64))
        bytes.append(0)
        return bytes
    }
}

/// Which category a name finds. Names are unique among live categories when commands make them,
/// but an import can bring two live categories of the same name; the name then finds the first
/// created (the lowest id among those created at once). The inline projection, the rebuild and
/// `verify` all keep the index by this one rule.
enum CategoryNameIndex {
    /// LMDB keys are 1 to 511 bytes; a name outside that is never looked up.
    static func indexable(_ key: [UInt8]) -> Bool { !key.isEmpty && key.count <= 511 }

    /// The live category that owns the name `key`, if any.
    static func owner(of key: [UInt8], among categories: some Sequence<Category>) -> Category? {
        categories.filter { !$0.deleted && Category.nameKey($0.name) == key }.min { a, b in
            (a.createdAt, a.id) < (b.createdAt, b.id)
        }
    }

    /// Every entry of the index, in key order.
    static func entries(_ categories: some Sequence<Category>) -> [([UInt8], Identifier)] {
        var owners: [[UInt8]: Category] = [:]
        for c in categories where !c.deleted {
            let key = Category.nameKey(c.name)
            guard indexable(key) else { continue }
            if let o = owners[key], (o.createdAt, o.id) < (c.createdAt, c.id) { continue }
            owners[key] = c
        }
        return owners.map { ($0.key, $0.value.id) }.sorted { $0.0.lexicographicallyPrecedes($1.0) }
    }
}

extension Category {
    static func nameKey(_ name: String) -> [UInt8] { Array(name.lowercased().utf8) }

    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.write(byte: 1)
        w.write(string: name)
        w.write(signed: Int64(count))
        w.write(signed: createdAt)
        w.write(bool: deleted)
        return w.bytes
    }

    init(decoding bytes: UnsafeRawBufferPointer, id: Identifier) throws(DecodingError) {
        var r = ByteReader(bytes)
        let f = try r.readByte()
        guard f == 1 else { throw DecodingError(.badTag(f), at: 0) }
        let name = try r.readString()
        let count = try r.readSigned()
        let createdAt = try r.readSigned()
        let deleted = try r.readBool()
        try r.expectEnd()
        self.init(id: id, name: name, count: Int(clamping: count), createdAt: createdAt, deleted: deleted)
    }
}

@inline(__always)
func hexDigit(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    default: return nil
    }
}
