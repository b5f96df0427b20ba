import Basics
public import LMDB

/// The full-text index of the notes, kept in LMDB next to the other projections and updated
/// inside the append's write transaction.
///
/// Layout (five databases per projection slot):
///
/// | database | key | value |
/// |---|---|---|
/// | `search_terms` | term (folded UTF-8) | nothing: the vocabulary, each term with a posting |
/// | `search_postings` | term, 0x00, last doc number (u32 BE) | a ``PostingBlock`` of up to 128 notes |
/// | `search_docs` | doc number / 128 (u32 BE) | 128 fixed 48-byte records: id, category, updatedAt, length, flags |
/// | `search_ids` | note id (16 bytes) | doc number (u32 BE) |
/// | `search_stats` | `stats` | notes, total length, next doc number |
///
/// Notes get dense doc numbers (in id order after a rebuild, in creation order inline), so a
/// posting list is a delta-varint list of small integers. A term's blocks are keyed by their
/// last doc number, so one cursor seek finds the block that holds or follows any doc. Filters,
/// tie-breaks and ids come from the fixed-size records without decoding a note.
///
/// Inline and rebuilt indexes hold the same postings but may number and block them
/// differently; ``contents(in:databases:)`` gives the comparable logical content.
public enum SearchIndex {
    /// The names of the index's databases.
    public enum Names {
        public static let terms = "search_terms"
        public static let postings = "search_postings"
        public static let docs = "search_docs"
        public static let ids = "search_ids"
        public static let stats = "search_stats"
    }

    /// Databases the index keeps, by name: terms, postings, docs, ids, stats.
    public static let databaseSpecs: [(name: String, flags: DatabaseFlags)] = [
        (Names.terms, []), (Names.postings, []), (Names.docs, []), (Names.ids, []), (Names.stats, []),
    ]

    /// Changes with the index format, the tokenizer or the scoring; a change triggers a rebuild.
    /// `search-6` (2026-12-07): a title's lines are apart, as the title and the body are.
    /// `search-7` (2026-12-07): a word longer than ``Tokenizer/maxTermBytes`` ends in a hash of
    /// all of it, not cut (two long words that start alike were one term).
    /// `search-8` (2026-12-07): that hash is in capitals, which no folded word holds (it was
    /// lowercase hex, and a 64-byte word could be a long word's term).
    public static let version = "search-8"

    /// Inline, inside the append's write transaction: the document changed from `old` (nil when
    /// just added) to `new`. A change of text touches only the blocks of its old and new terms; a
    /// change of status, pin, category or update time rewrites one 6 KB record chunk.
    public static func update(
        old: SearchDocument?, new: SearchDocument, in txn: borrowing Transaction, databases: SearchDatabases
    ) throws {
        try update(old: old, new: new, in: txn, databases)
    }

    /// Inline, batched: every document changed from `old` to `new` in one call (a document may
    /// appear more than once; its changes apply in order). Each touched posting block, record
    /// chunk and term count is written once, so a batch of N documents sharing common words
    /// costs far less than N single updates.
    public static func update(
        changes: [(old: SearchDocument?, new: SearchDocument)], in txn: borrowing Transaction,
        databases: SearchDatabases
    ) throws {
        try update(changes: changes, in: txn, databases)
    }

    /// Inline: takes the documents, as the index holds them, out of it (a sync taking back notes
    /// it had created).
    public static func remove(
        _ documents: [SearchDocument], in txn: borrowing Transaction, databases: SearchDatabases
    ) throws {
        try remove(documents, in: txn, databases)
    }

    /// Fills empty databases with `documents` (any status), writing through `write`: a closure
    /// that runs its body in a write transaction (and may run it again, as a restartable write
    /// does), so that a caller can write in as many transactions as it likes.
    public static func bulkLoad(
        _ documents: [SearchDocument], into databases: SearchDatabases,
        write: ((borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        try self.write(try prepare(documents, language: databases.language), into: databases, write: write)
    }

    /// Builds a standalone index (empty databases opened with ``SearchDatabases/init(environment:prefix:)``).
    public static func bulkLoad(
        _ documents: [SearchDocument], into databases: SearchDatabases, environment: Environment
    )
        throws
    {
        try bulkLoad(documents, into: databases) { body in try environment.restartableWrite { txn, _ in try body(txn) }
        }
    }
}

/// The handles of the index's databases in one slot. The notes projection gets them from its
/// ``ProjectionDatabases``; tools and benchmarks can open a standalone index with
/// ``init(environment:prefix:)``.
public struct SearchDatabases: Sendable {
    let terms: Database
    let postings: Database
    let docs: Database
    let ids: Database
    let stats: Database
    /// The language of the words indexed (its stems are what the postings hold); every reader
    /// and writer of the index must give the same.
    public var language: SearchLanguage = .none

    /// The index over these databases (each created with the name ``SearchIndex/databaseSpecs``
    /// lists, in that order).
    public init(terms: Database, postings: Database, docs: Database, ids: Database, stats: Database) {
        self.terms = terms
        self.postings = postings
        self.docs = docs
        self.ids = ids
        self.stats = stats
    }

    /// Opens (creating) the databases named `prefix` + the base names in `env`; for tests and tools.
    public init(environment env: Environment, prefix: String) throws {
        func open(_ name: String) throws -> Database { try env.openDatabase(prefix + name, flags: [.create]) }
        self.init(
            terms: try open(SearchIndex.Names.terms), postings: try open(SearchIndex.Names.postings),
            docs: try open(SearchIndex.Names.docs), ids: try open(SearchIndex.Names.ids),
            stats: try open(SearchIndex.Names.stats))
    }

    var all: [Database] { [terms, postings, docs, ids, stats] }
}

/// The index-wide counters.
struct SearchStats: Equatable {
    var documents: UInt64 = 0
    var totalLength: UInt64 = 0
    var nextDoc: UInt32 = 0

    static let key: [UInt8] = Array("stats".utf8)

    var collection: BM25.Collection { BM25.Collection(documents: documents, totalLength: totalLength) }

    static func read(_ txn: borrowing Transaction, _ db: SearchDatabases) throws -> SearchStats {
        guard let v = try SearchStats.key.withUnsafeBytes({ k in try txn.get(db.stats, k) }) else {
            return SearchStats()
        }
        guard v.count == 20 else { throw SearchIndexError.damaged("the search statistics have \(v.count) bytes") }
        return SearchStats(
            documents: UInt64(littleEndian: v.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            totalLength: UInt64(littleEndian: v.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
            nextDoc: UInt32(littleEndian: v.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
    }

    func write(_ txn: borrowing Transaction, _ db: SearchDatabases) throws {
        var v = [UInt8](repeating: 0, count: 20)
        v.withUnsafeMutableBytes { p in
            p.storeBytes(of: documents.littleEndian, toByteOffset: 0, as: UInt64.self)
            p.storeBytes(of: totalLength.littleEndian, toByteOffset: 8, as: UInt64.self)
            p.storeBytes(of: nextDoc.littleEndian, toByteOffset: 16, as: UInt32.self)
        }
        try txn.put(db.stats, key: SearchStats.key, value: v)
    }
}

/// A note's fixed-size record in `search_docs`: all a query needs besides the postings.
struct DocRecord: Equatable {
    static let size = 48
    static let perChunk = 128

    var id: Identifier
    var category: Identifier?
    var updatedAt: Int64
    var length: UInt32
    var pinned: Bool
    var status: SearchDocument.Status

    init(
        id: Identifier, category: Identifier?, updatedAt: Int64, length: UInt32, pinned: Bool,
        status: SearchDocument.Status
    ) {
        self.id = id
        self.category = category
        self.updatedAt = updatedAt
        self.length = length
        self.pinned = pinned
        self.status = status
    }

    init(_ note: SearchDocument, length: UInt32) {
        self.init(
            id: note.id, category: note.category, updatedAt: note.updatedAt, length: length, pinned: note.pinned,
            status: note.status)
    }

    static func chunkKey(_ doc: UInt32) -> [UInt8] { bigEndian(doc / UInt32(perChunk)) }
    static func offset(_ doc: UInt32) -> Int { Int(doc % UInt32(perChunk)) * size }

    func store(into p: UnsafeMutableRawBufferPointer, at o: Int) {
        p.storeBytes(of: id.high.bigEndian, toByteOffset: o, as: UInt64.self)
        p.storeBytes(of: id.low.bigEndian, toByteOffset: o + 8, as: UInt64.self)
        p.storeBytes(of: (category?.high ?? 0).bigEndian, toByteOffset: o + 16, as: UInt64.self)
        p.storeBytes(of: (category?.low ?? 0).bigEndian, toByteOffset: o + 24, as: UInt64.self)
        p.storeBytes(of: updatedAt.littleEndian, toByteOffset: o + 32, as: Int64.self)
        p.storeBytes(of: length.littleEndian, toByteOffset: o + 40, as: UInt32.self)
        let flags: UInt8 = 1 | (pinned ? 2 : 0) | (category != nil ? 4 : 0) | status.rawValue << 3
        p.storeBytes(of: flags, toByteOffset: o + 44, as: UInt8.self)
    }

    /// The record at `o`, or nil when the slot is empty; throws on bytes this code never writes.
    init?(_ p: UnsafeRawBufferPointer, at o: Int) throws(SearchIndexError) {
        guard o >= 0, o + DocRecord.size <= p.count else { throw .damaged("a note record is cut short") }
        let flags = p.load(fromByteOffset: o + 44, as: UInt8.self)
        if flags & 1 == 0 { return nil }
        guard let status = SearchDocument.Status(rawValue: flags >> 3) else {
            throw .damaged("a note record has a bad status")
        }
        id = Identifier(
            high: UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self)),
            low: UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self)))
        category =
            flags & 4 == 0
            ? nil
            : Identifier(
                high: UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o + 16, as: UInt64.self)),
                low: UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self)))
        updatedAt = Int64(littleEndian: p.loadUnaligned(fromByteOffset: o + 32, as: Int64.self))
        length = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o + 40, as: UInt32.self))
        pinned = flags & 2 != 0
        self.status = status
    }

    /// Whether the record at `o` passes `filter` (read straight from the stored bytes).
    @inline(__always)
    static func accepts(_ p: UnsafeRawBufferPointer, at o: Int, _ filter: CompiledFilter) -> Bool {
        let flags = p.load(fromByteOffset: o + 44, as: UInt8.self)
        if flags & 1 == 0 || filter.statusMask & (1 << (flags >> 3)) == 0 { return false }
        if filter.pinnedOnly && flags & 2 == 0 { return false }
        if let only = filter.only, !only.contains(id(p, at: o)) { return false }
        switch filter.category {
        case .any: return true
        case .uncategorized: return flags & 4 == 0
        case .id(let c):
            return flags & 4 != 0
                && UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o + 16, as: UInt64.self)) == c.high
                && UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self)) == c.low
        }
    }

    @inline(__always)
    static func updatedAt(_ p: UnsafeRawBufferPointer, at o: Int) -> Int64 {
        Int64(littleEndian: p.loadUnaligned(fromByteOffset: o + 32, as: Int64.self))
    }

    @inline(__always)
    static func id(_ p: UnsafeRawBufferPointer, at o: Int) -> Identifier {
        Identifier(
            high: UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self)),
            low: UInt64(bigEndian: p.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self)))
    }
}

/// A ``SearchFilter`` in the form the record check wants.
struct CompiledFilter {
    let statusMask: UInt8
    let pinnedOnly: Bool
    let category: SearchFilter.CategoryFilter
    let only: Set<Identifier>?

    init(_ f: SearchFilter) {
        statusMask = f.statuses.reduce(0) { $0 | 1 << $1.rawValue }
        pinnedOnly = f.pinnedOnly
        category = f.category
        only = f.only
    }

    func accepts(_ r: DocRecord) -> Bool {
        guard statusMask & (1 << r.status.rawValue) != 0, !pinnedOnly || r.pinned else { return false }
        if let only, !only.contains(r.id) { return false }
        switch category {
        case .any: return true
        case .uncategorized: return r.category == nil
        case .id(let c): return r.category == c
        }
    }
}

func bigEndian(_ v: UInt32) -> [UInt8] {
    [
        UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8),
        UInt8(truncatingIfNeeded: v),
    ]
}

func readBigEndianUInt32(_ p: UnsafeRawBufferPointer, at o: Int) -> UInt32? {
    guard o >= 0, o + 4 <= p.count else { return nil }
    return UInt32(bigEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))
}

/// The key of the block of `term` whose last doc is `lastDoc`.
func blockKey(_ term: [UInt8], _ lastDoc: UInt32) -> [UInt8] {
    var k = term
    k.reserveCapacity(term.count + 5)
    k.append(0)
    k.append(contentsOf: bigEndian(lastDoc))
    return k
}

/// Whether `key` is a block key of `term` (the term, 0x00, four bytes).
@inline(__always)
func isBlockKey(_ key: UnsafeRawBufferPointer, of term: [UInt8]) -> Bool {
    key.count == term.count + 5 && key[term.count] == 0 && key.starts(with: term)
}
