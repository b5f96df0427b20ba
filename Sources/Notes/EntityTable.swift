import Basics
import EventStore
import LMDB

/// A named entity the projections keep with a count of its notes: a category or a tag.
protocol CountedEntity: NamedEntity, Equatable, Sendable {
    var id: Identifier { get }
    /// Notes (not trashed) that carry it.
    var count: Int { get set }
    var createdAt: Int64 { get }
    init(id: Identifier, name: String, count: Int, createdAt: Int64, deleted: Bool)
    /// What the records are called in messages (`category`, `tag`), and more than one.
    static var noun: String { get }
    static var plural: String { get }
    static func stream(_ id: Identifier) -> String
    static func subject(_ id: Identifier) -> FoldSubject
}

extension Category: CountedEntity {
    static var noun: String { "category" }
    static var plural: String { "categories" }
    static func subject(_ id: Identifier) -> FoldSubject { .category(id) }
}

extension Tag: CountedEntity {
    static var noun: String { "tag" }
    static var plural: String { "tags" }
    static func subject(_ id: Identifier) -> FoldSubject { .tag(id) }
}

extension CountedEntity {
    /// The key of a name in the name index: its lowercase UTF-8 in Unicode's composed form
    /// (NFC): names ignore case, and a name typed with a combining accent (`Cafe` + U+0301, as
    /// macOS file names and some keyboards give it) is the same name as the one with `é`, as
    /// Swift's own string comparison has it. Before `notes-14` the bytes were compared as
    /// given, and `categories add` made two categories that look alike.
    static func nameKey(_ name: String) -> [UInt8] { Array(name.lowercased()._nfcCodeUnits) }

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

/// Which entity a name finds. Names are unique among live entities when commands make them, but
/// an import can bring two live categories (or tags) of the same name; the name then finds the
/// first created (the lowest id among those created at once). The inline projection, the
/// rebuild and `verify` all keep the index by this one rule.
enum NameIndex {
    /// LMDB keys are 1 to 511 bytes; a name outside that is never looked up.
    static func indexable(_ key: [UInt8]) -> Bool { !key.isEmpty && key.count <= 511 }

    /// The live entity that owns the name `key`, if any.
    static func owner<E: CountedEntity>(of key: [UInt8], among entities: some Sequence<E>) -> E? {
        entities.filter { !$0.deleted && E.nameKey($0.name) == key }.min { a, b in
            (a.createdAt, a.id) < (b.createdAt, b.id)
        }
    }

    /// Every entry of the index, in key order.
    static func entries<E: CountedEntity>(_ entities: some Sequence<E>) -> [([UInt8], Identifier)] {
        var owners: [[UInt8]: E] = [:]
        for c in entities where !c.deleted {
            let key = E.nameKey(c.name)
            guard indexable(key) else { continue }
            if let o = owners[key], (o.createdAt, o.id) < (c.createdAt, c.id) { continue }
            owners[key] = c
        }
        return owners.map { ($0.key, $0.value.id) }.sorted { $0.0.lexicographicallyPrecedes($1.0) }
    }
}

/// The records and the name index of one kind of named entity, in a projection slot.
struct EntityTable<E: CountedEntity> {
    let records: Database
    let names: Database

    /// The entity with `id` (deleted ones too), or nil.
    func get(_ id: Identifier, in txn: borrowing Transaction) throws -> E? {
        let key = id.bytes
        let raw = try key.withUnsafeBytes { k in try txn.get(records, k) }
        guard let raw else { return nil }
        do { return try E(decoding: raw, id: id) } catch {
            throw StoreError.damagedProjection("\(E.noun) record of \(id): \(error)")
        }
    }

    /// The live entity named `name` (compared without regard to case), or nil.
    func named(_ name: String, in txn: borrowing Transaction) throws -> E? {
        let key = E.nameKey(name)
        guard NameIndex.indexable(key), let raw = try txn.get(names, key: key), let id = Identifier(bytes: raw) else {
            return nil
        }
        return try get(id, in: txn)
    }

    /// Every record, deleted ones included, by id.
    func all(in txn: borrowing Transaction) throws -> [E] {
        var out: [E] = []
        try txn.withCursor(records) { c in
            var entry = try c.first()
            while let e = entry {
                guard let id = Identifier(bytes: e.key) else {
                    throw StoreError.damagedProjection("a \(E.noun) record has a bad key")
                }
                do { out.append(try E(decoding: e.value, id: id)) } catch {
                    throw StoreError.damagedProjection("\(E.noun) record of \(id): \(error)")
                }
                entry = try c.next()
            }
        }
        return out
    }

    /// Folds one event of the entity `id` into its record and gives each name it took or left
    /// to its owner.
    ///
    /// A creation counts the notes that name the id already (a log may tag a note before the
    /// tag's creation), so the count is what a replay computes.
    func apply<K>(
        _ event: NamedEntityEvent<K>, id: Identifier, subject: FoldSubject, at instant: Int64,
        deferringNames: Bool = false, in txn: borrowing Transaction, notesNaming: () throws -> Int
    ) throws {
        let existing = try get(id, in: txn)
        var folded = existing
        try EntityFold.apply(event, to: &folded, subject: subject, id: id, at: instant)
        guard var entity = folded else { return }
        if existing == nil { entity.count = try notesNaming() }
        try txn.put(records, key: id.bytes, value: entity.encoded())
        var keys: [[UInt8]] = []
        if let ex = existing, !ex.deleted { keys.append(E.nameKey(ex.name)) }
        if !entity.deleted { keys.append(E.nameKey(entity.name)) }
        guard !keys.isEmpty else { return }
        // A creation takes a name its owner keeps, or a name no one has: one lookup, not a read
        // of every record (an import creates thousands of tags).
        if existing == nil, !entity.deleted {
            let key = E.nameKey(entity.name)
            guard NameIndex.indexable(key) else { return }
            if let raw = try txn.get(names, key: key), let owner = Identifier(bytes: raw),
                let held = try get(owner, in: txn), !held.deleted,
                (held.createdAt, held.id) < (entity.createdAt, entity.id)
            {
                return
            }
            try txn.put(names, key: key, value: entity.id.bytes)
            return
        }
        // The caller rewrites the whole index once, at the end of its write (a subtree renamed or
        // deleted): reading every record here, once an event, was quadratic.
        if deferringNames { return }
        let everyone = try all(in: txn)
        for key in Set(keys) where NameIndex.indexable(key) {
            if let owner = NameIndex.owner(of: key, among: everyone) {
                try txn.put(names, key: key, value: owner.id.bytes)
            } else {
                try txn.delete(names, key: key)
            }
        }
    }

    /// Adds `delta` to the count of `id`'s record, when there is one.
    func adjustCount(_ id: Identifier, by delta: Int, in txn: borrowing Transaction) throws {
        guard var e = try get(id, in: txn) else { return }
        e.count += delta
        try txn.put(records, key: id.bytes, value: e.encoded())
    }

    /// Writes every record and the name index into empty databases (a rebuild).
    func write(_ entities: some Collection<E>, in txn: borrowing Transaction) throws {
        for e in entities.sorted(by: { $0.id < $1.id }) {
            try txn.put(records, key: e.id.bytes, value: e.encoded(), flags: .append)
        }
        for (key, id) in NameIndex.entries(entities) { try txn.put(names, key: key, value: id.bytes) }
    }

    /// What differs from the entities a replay folded (their counts computed from its notes).
    func differences(from expected: [Identifier: E], in txn: borrowing Transaction) throws -> [String] {
        var problems: [String] = []
        for (id, e) in expected {
            do {
                if try get(id, in: txn) != e { problems.append("\(E.noun) \(e.name) differs from the log") }
            } catch {
                problems.append("\(E.noun) record \(e.name) is damaged")
            }
        }
        if try txn.count(records) != expected.count {
            problems.append("the \(E.noun) projection holds a different number of \(E.plural) than the log")
        }
        var stored: [([UInt8], Identifier?)] = []
        try txn.withCursor(names) { c in
            var entry = try c.first()
            while let e = entry {
                stored.append((Array(e.key), Identifier(bytes: e.value)))
                entry = try c.next()
            }
        }
        let wanted = NameIndex.entries(expected.values)
        if stored.count != wanted.count || zip(stored, wanted).contains(where: { $0.0 != $1.0 || $0.1 != $1.1 }) {
            problems.append("the \(E.noun) name index differs from the log")
        }
        return problems
    }
}

/// What two category (or tag) names that name one category (or tag) have in common: case and
/// Unicode form folded, as the name index compares them (see `CountedEntity.nameKey`).
package func entityNameKey(_ name: String) -> [UInt8] { Tag.nameKey(name) }
