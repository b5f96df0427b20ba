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

extension SearchIndex {
    /// The logical contents of the index, after checking its structure: blocks in order and
    /// matching their keys, every term of the vocabulary with a posting and every block with a
    /// term of the vocabulary, every posting's note recorded.
    public static func contents(in txn: borrowing Transaction, databases db: SearchDatabases) throws
        -> SearchIndexContents
    {
        let stats = try SearchStats.read(txn, db)
        var byDoc: [UInt32: Identifier] = [:]
        var records: [Identifier: SearchIndexContents.Record] = [:]
        try txn.withCursor(db.ids) { c in
            var e = try c.first()
            while let entry = e {
                guard let id = Identifier(bytes: entry.key), let doc = readBigEndianUInt32(entry.value, at: 0),
                    entry.value.count == 4
                else { throw SearchIndexError.damaged("a doc number entry is malformed") }
                guard doc < stats.nextDoc, byDoc[doc] == nil else {
                    throw SearchIndexError.damaged("doc number \(doc) is used twice or out of range")
                }
                guard let r = try record(doc, in: txn, db), r.id == id else {
                    throw SearchIndexError.damaged("note \(id) has no record")
                }
                byDoc[doc] = id
                records[id] = .init(
                    category: r.category, updatedAt: r.updatedAt, length: r.length, pinned: r.pinned, status: r.status)
                e = try c.next()
            }
        }
        guard UInt64(records.count) == stats.documents else {
            throw SearchIndexError.damaged(
                "\(records.count) notes are numbered but the statistics count \(stats.documents)")
        }
        guard records.values.reduce(UInt64(0), { $0 + UInt64($1.length) }) == stats.totalLength else {
            throw SearchIndexError.damaged("the total length does not match the notes")
        }
        var terms: [String: [SearchIndexContents.Posting]] = [:]
        try txn.withCursor(db.terms) { tc in
            try txn.withCursor(db.postings) { pc in
                var e = try tc.first()
                while let entry = e {
                    let term = Array(entry.key)
                    guard entry.value.isEmpty else {
                        throw SearchIndexError.damaged(
                            "the vocabulary entry of \(String(decoding: term, as: UTF8.self)) is not empty")
                    }
                    var list: [SearchIndexContents.Posting] = []
                    var previous: UInt32? = nil
                    for block in try blockList(term, pc) {
                        let (entries, ranges) = try PostingBlock.decode(block.bytes)
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
                            list.append(
                                .init(
                                    id: id, titleTF: p.titleTF, bodyTF: p.bodyTF, length: p.length,
                                    positions: try PostingBlock.positions(block.bytes, range)))
                        }
                    }
                    guard !list.isEmpty else {
                        throw SearchIndexError.damaged("\(String(decoding: term, as: UTF8.self)) has no posting")
                    }
                    terms[String(decoding: term, as: UTF8.self)] = list.sorted { $0.id < $1.id }
                    e = try tc.next()
                }
            }
        }
        // Every block belongs to a term of the terms database.
        var blocks = 0
        try txn.withCursor(db.postings) { c in
            var e = try c.first()
            while e != nil {
                blocks += 1
                e = try c.next()
            }
        }
        var counted = 0
        try txn.withCursor(db.postings) { pc in
            for term in terms.keys { counted += try blockList(Array(term.utf8), pc).count }
        }
        guard blocks == counted else {
            throw SearchIndexError.damaged("\(blocks - counted) posting blocks have no term")
        }
        return SearchIndexContents(
            documents: stats.documents, totalLength: stats.totalLength, records: records, terms: terms)
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
