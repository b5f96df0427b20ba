public import Basics
public import LMDB

/// What a search index holds, independent of doc numbering and block boundaries: two indexes
/// over the same notes have equal contents whether built inline or in bulk.
public struct SearchIndexContents: Sendable, Equatable {
    /// One note's entry for a term.
    public struct Posting: Sendable, Equatable {
        public var id: Identifier
        public var titleTF: UInt32
        public var bodyTF: UInt32
        /// The note's length in terms.
        public var length: UInt32
        public var positions: [UInt32]
    }

    /// What the index keeps about a note besides its terms.
    public struct Record: Sendable, Equatable {
        public var category: Identifier?
        public var updatedAt: Int64
        public var length: UInt32
        public var pinned: Bool
        public var status: SearchDocument.Status
    }

    public var documents: UInt64
    public var totalLength: UInt64
    public var records: [Identifier: Record]
    /// Postings by term (folded text), each list sorted by note id.
    public var terms: [String: [Posting]]
}

/// A fingerprint of ``SearchIndexContents`` that holds no posting: each term's postings are
/// summed into a digest that does not depend on their order, the records are kept whole.
/// `verify` compares the stored index with the log through it: two copies of every posting
/// (with its positions) took 1.4 GB at 1,000,000 events, and would grow with the store.
///
/// Two indexes with equal contents have equal digests; unequal contents give unequal digests
/// but with a chance of 2^-64 per term (the postings' hashes are `Hasher`'s, whose seed is
/// the process's: digests compare within one process only).
public struct SearchIndexDigest: Sendable, Equatable {
    /// The postings of one term: how many, and two sums of their hashes.
    public struct TermDigest: Sendable, Equatable {
        var postings: UInt64 = 0
        var sum: UInt64 = 0
        var mixed: UInt64 = 0

        mutating func add(
            _ id: Identifier, titleTF: UInt32, bodyTF: UInt32, length: UInt32, _ positions: some Sequence<UInt32>
        ) {
            var h = Hasher()
            h.combine(id)
            h.combine(titleTF)
            h.combine(bodyTF)
            h.combine(length)
            for p in positions { h.combine(p) }
            let v = UInt64(truncatingIfNeeded: h.finalize())
            postings &+= 1
            sum &+= v
            // A second sum of a different function of each hash, so that no two sets of
            // postings cancel each other by design.
            mixed &+= (v ^ (v >> 29)) &* 0xBF58_476D_1CE4_E5B9
        }
    }

    public var documents: UInt64 = 0
    public var totalLength: UInt64 = 0
    public var records: [Identifier: SearchIndexContents.Record] = [:]
    /// By term (folded text).
    public var terms: [[UInt8]: TermDigest] = [:]

    public init() {}

    /// The digest an index over `notes` must have, each note analyzed and let go of in turn.
    public init(documents notes: some Sequence<SearchDocument>, language: SearchLanguage) {
        // The stems of the last words met are remembered, as the bulk build does.
        let stemmer = language.makeStemmer(remembering: true)
        for note in notes {
            let a = AnalyzedNote(note, stemmer: stemmer)
            let r = DocRecord(note, length: a.length)
            records[r.id] = .init(
                category: r.category, updatedAt: r.updatedAt, length: r.length, pinned: r.pinned, status: r.status)
            documents += 1
            totalLength &+= UInt64(a.length)
            for e in a.entries {
                terms[e.term, default: TermDigest()].add(
                    r.id, titleTF: e.titleTF, bodyTF: e.bodyTF, length: a.length, e.positions)
            }
        }
    }
}

extension SearchIndex {
    /// The logical contents of the index, after checking its structure: blocks in order and
    /// matching their keys, every term of the vocabulary with a posting and every block with a
    /// term of the vocabulary, every posting's note recorded.
    public static func contents(in txn: borrowing Transaction, databases db: SearchDatabases) throws
        -> SearchIndexContents
    {
        var records: [Identifier: SearchIndexContents.Record] = [:]
        var terms: [String: [SearchIndexContents.Posting]] = [:]
        var list: [SearchIndexContents.Posting] = []
        let (documents, totalLength) = try walk(
            in: txn, databases: db, record: { records[$0] = $1 },
            posting: { list.append($0) },
            termEnd: { term in
                terms[String(decoding: term, as: UTF8.self)] = list.sorted { $0.id < $1.id }
                list.removeAll(keepingCapacity: true)
            })
        return SearchIndexContents(documents: documents, totalLength: totalLength, records: records, terms: terms)
    }

    /// The digest of the index's logical contents (see ``SearchIndexDigest``), after the checks
    /// of ``contents(in:databases:)``, holding one posting in memory at a time.
    public static func digest(in txn: borrowing Transaction, databases db: SearchDatabases) throws
        -> SearchIndexDigest
    {
        var digest = SearchIndexDigest()
        var term = SearchIndexDigest.TermDigest()
        (digest.documents, digest.totalLength) = try walk(
            in: txn, databases: db, record: { digest.records[$0] = $1 },
            posting: { term.add($0.id, titleTF: $0.titleTF, bodyTF: $0.bodyTF, length: $0.length, $0.positions) },
            termEnd: { bytes in
                digest.terms[bytes] = term
                term = SearchIndexDigest.TermDigest()
            })
        return digest
    }

    /// Checks the index's structure while giving each note's record, then each term's postings
    /// in doc-number order followed by the term (in the vocabulary's order); returns the
    /// statistics' count of documents and total length.
    static func walk(
        in txn: borrowing Transaction, databases db: SearchDatabases,
        record: (Identifier, SearchIndexContents.Record) throws -> Void,
        posting: (SearchIndexContents.Posting) throws -> Void, termEnd: ([UInt8]) throws -> Void
    ) throws -> (documents: UInt64, totalLength: UInt64) {
        let stats = try SearchStats.read(txn, db)
        var byDoc: [UInt32: Identifier] = [:]
        var numbered: UInt64 = 0
        var lengths: UInt64 = 0
        try txn.withCursor(db.ids) { c in
            var e = try c.first()
            while let entry = e {
                guard let id = Identifier(bytes: entry.key), let doc = readBigEndianUInt32(entry.value, at: 0),
                    entry.value.count == 4
                else { throw SearchIndexError.damaged("a doc number entry is malformed") }
                guard doc < stats.nextDoc, byDoc[doc] == nil else {
                    throw SearchIndexError.damaged("doc number \(doc) is used twice or out of range")
                }
                guard let r = try Self.record(doc, in: txn, db), r.id == id else {
                    throw SearchIndexError.damaged("note \(id) has no record")
                }
                byDoc[doc] = id
                numbered += 1
                lengths &+= UInt64(r.length)
                try record(
                    id,
                    .init(
                        category: r.category, updatedAt: r.updatedAt, length: r.length, pinned: r.pinned,
                        status: r.status))
                e = try c.next()
            }
        }
        guard numbered == stats.documents else {
            throw SearchIndexError.damaged("\(numbered) notes are numbered but the statistics count \(stats.documents)")
        }
        guard lengths == stats.totalLength else {
            throw SearchIndexError.damaged("the total length does not match the notes")
        }
        // Blocks counted term by term, then all of them: every block belongs to a term of the
        // terms database.
        var counted = 0
        try txn.withCursor(db.terms) { tc in
            try txn.withCursor(db.postings) { pc in
                var entries: [PostingBlock.Entry] = []
                var ranges: [Range<Int>] = []
                var e = try tc.first()
                while let entry = e {
                    let term = Array(entry.key)
                    guard entry.value.isEmpty else {
                        throw SearchIndexError.damaged(
                            "the vocabulary entry of \(String(decoding: term, as: UTF8.self)) is not empty")
                    }
                    var previous: UInt32? = nil
                    let blocks = try blockList(term, pc)
                    counted += blocks.count
                    for block in blocks {
                        try PostingBlock.decode(block.bytes, into: &entries, positions: &ranges)
                        guard entries.last?.doc == block.lastDoc else {
                            throw SearchIndexError.damaged(
                                "a block of \(String(decoding: term, as: UTF8.self)) does not match its key")
                        }
                        for (p, range) in zip(entries, ranges) {
                            guard previous.map({ p.doc > $0 }) ?? true, let id = byDoc[p.doc] else {
                                throw SearchIndexError.damaged(
                                    "a posting of \(String(decoding: term, as: UTF8.self)) is out of order or unknown")
                            }
                            previous = p.doc
                            try posting(
                                .init(
                                    id: id, titleTF: p.titleTF, bodyTF: p.bodyTF, length: p.length,
                                    positions: try PostingBlock.positions(block.bytes, range)))
                        }
                    }
                    guard previous != nil else {
                        throw SearchIndexError.damaged("\(String(decoding: term, as: UTF8.self)) has no posting")
                    }
                    try termEnd(term)
                    e = try tc.next()
                }
            }
        }
        var blocks = 0
        try txn.withCursor(db.postings) { c in
            var e = try c.first()
            while e != nil {
                blocks += 1
                e = try c.next()
            }
        }
        guard blocks == counted else {
            throw SearchIndexError.damaged("\(blocks - counted) posting blocks have no term")
        }
        return (stats.documents, stats.totalLength)
    }
}

extension InMemorySearchIndex {
    /// The contents an index over the same notes must have.
    public var contents: SearchIndexContents {
        var records: [Identifier: SearchIndexContents.Record] = [:]
        var terms: [String: [SearchIndexContents.Posting]] = [:]
        for d in documents {
            let r = d.record
            records[r.id] = .init(
                category: r.category, updatedAt: r.updatedAt, length: r.length, pinned: r.pinned, status: r.status)
            for e in d.entries {
                terms[String(decoding: e.term, as: UTF8.self), default: []].append(
                    .init(id: r.id, titleTF: e.titleTF, bodyTF: e.bodyTF, length: r.length, positions: e.positions))
            }
        }
        for k in terms.keys { terms[k]?.sort { $0.id < $1.id } }
        return SearchIndexContents(
            documents: collection.documents, totalLength: collection.totalLength, records: records, terms: terms)
    }
}
