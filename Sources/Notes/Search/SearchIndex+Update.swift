import EventStore
import LMDB

extension SearchIndex {
    static func update(old: Note?, new: Note, in txn: borrowing Transaction, _ db: SearchDatabases) throws {
        var stats = try SearchStats.read(txn, db)
        let known = try ordinal(of: new.id, in: txn, db)
        let doc: UInt32
        var before: AnalyzedNote?
        if let known {
            guard let old else { throw SearchIndexError.inconsistent("note \(new.id) is indexed already") }
            doc = known
            if old.title == new.title && old.body == new.body {
                // Metadata only: the record carries status, pin, category and update time.
                let length = try record(doc, in: txn, db)?.length ?? AnalyzedNote(new).length
                try writeRecord(DocRecord(new, length: length), doc: doc, in: txn, db)
                return
            }
            before = AnalyzedNote(old)
        } else {
            guard stats.nextDoc < UInt32.max - 1 else { throw SearchIndexError.full }
            doc = stats.nextDoc
            stats.nextDoc += 1
            stats.documents += 1
            try txn.put(db.ids, key: new.id.bytes, value: bigEndian(doc))
        }
        let after = AnalyzedNote(new)
        let oldEntries = before?.entries ?? []
        let sameLength = before?.length == after.length
        var i = 0
        var j = 0
        while i < oldEntries.count || j < after.entries.count {
            let o = i < oldEntries.count ? oldEntries[i] : nil
            let n = j < after.entries.count ? after.entries[j] : nil
            if let o, let n, o.term == n.term {
                i += 1
                j += 1
                if o == n && sameLength { continue }
                try setPosting(n.term, doc: doc, to: n, length: after.length, in: txn, db)
            } else if let o, n == nil || o.term.lexicographicallyPrecedes(n?.term ?? []) {
                i += 1
                try setPosting(o.term, doc: doc, to: nil, length: 0, in: txn, db)
            } else if let n {
                j += 1
                try setPosting(n.term, doc: doc, to: n, length: after.length, in: txn, db)
            }
        }
        stats.totalLength = stats.totalLength &- UInt64(before?.length ?? 0) &+ UInt64(after.length)
        try writeRecord(DocRecord(new, length: after.length), doc: doc, in: txn, db)
        try stats.write(txn, db)
    }

    static func ordinal(of id: Identifier, in txn: borrowing Transaction, _ db: SearchDatabases) throws -> UInt32? {
        guard let v = try txn.get(db.ids, key: id.bytes) else { return nil }
        guard v.count == 4 else { throw SearchIndexError.damaged("a note's doc number has \(v.count) bytes") }
        return UInt32(v[0]) << 24 | UInt32(v[1]) << 16 | UInt32(v[2]) << 8 | UInt32(v[3])
    }

    static func record(_ doc: UInt32, in txn: borrowing Transaction, _ db: SearchDatabases) throws -> DocRecord? {
        guard let chunk = try DocRecord.chunkKey(doc).withUnsafeBytes({ k in try txn.get(db.docs, k) }) else {
            return nil
        }
        return try DocRecord(chunk, at: DocRecord.offset(doc))
    }

    static func writeRecord(_ r: DocRecord, doc: UInt32, in txn: borrowing Transaction, _ db: SearchDatabases) throws {
        let key = DocRecord.chunkKey(doc)
        var chunk = try txn.get(db.docs, key: key) ?? []
        if chunk.count != DocRecord.size * DocRecord.perChunk {
            chunk = [UInt8](repeating: 0, count: DocRecord.size * DocRecord.perChunk)
        }
        chunk.withUnsafeMutableBytes { p in r.store(into: p, at: DocRecord.offset(doc)) }
        try txn.put(db.docs, key: key, value: chunk)
    }

    /// Sets (or with nil removes) `doc`'s posting of `term`, rewriting the one block that holds
    /// it, and keeps the term's df in step with what the blocks hold.
    static func setPosting(
        _ term: [UInt8], doc: UInt32, to new: AnalyzedNote.Entry?, length: UInt32, in txn: borrowing Transaction,
        _ db: SearchDatabases
    ) throws {
        // The block holding `doc` or the first after it; for an insertion past the end, the last.
        var found: (key: [UInt8], value: UnsafeRawBufferPointer)?
        try txn.withCursor(db.postings) { c in
            if let e = try c.seek(blockKey(term, doc)), isBlockKey(e.key, of: term) {
                found = (Array(e.key), e.value)
            } else if new != nil {
                let probe = blockKey(term, UInt32.max)
                let e = try c.seek(probe) != nil ? try c.previous() : try c.last()
                if let e, isBlockKey(e.key, of: term) { found = (Array(e.key), e.value) }
            }
        }
        var entries: [PostingBlock.Entry] = []
        var positions: [[UInt32]?] = []
        var raw: [Range<Int>] = []
        var source = UnsafeRawBufferPointer(start: nil, count: 0)
        if let f = found {
            let decoded = try PostingBlock.decode(f.value)
            if let last = decoded.entries.last, doc > last.doc, decoded.entries.count >= PostingBlock.targetSize {
                // Appending past a full last block: start a new block and leave this one alone.
                found = nil
            } else {
                entries = decoded.entries
                raw = decoded.positions
                positions = [[UInt32]?](repeating: nil, count: entries.count)
                source = f.value
            }
        }
        var index = 0
        var hi = entries.count
        while index < hi {
            let mid = (index + hi) / 2
            if entries[mid].doc < doc { index = mid + 1 } else { hi = mid }
        }
        let present = index < entries.count && entries[index].doc == doc
        if let new {
            let e = PostingBlock.Entry(doc: doc, titleTF: new.titleTF, bodyTF: new.bodyTF, length: length)
            if present {
                entries[index] = e
                positions[index] = new.positions
            } else {
                entries.insert(e, at: index)
                positions.insert(new.positions, at: index)
                raw.insert(0..<0, at: index)
            }
        } else if present {
            entries.remove(at: index)
            positions.remove(at: index)
            raw.remove(at: index)
        } else {
            return
        }
        // Encode everything before touching the database: `source` points into it.
        var blocks: [(key: [UInt8], value: [UInt8])] = []
        var start = 0
        let parts = entries.count > PostingBlock.maxSize ? 2 : 1
        for part in 0..<parts where !entries.isEmpty {
            let end = part == parts - 1 ? entries.count : entries.count / 2
            var pos: [UInt8] = []
            for k in start..<end {
                if let fresh = positions[k] {
                    PostingBlock.appendPositions(fresh, to: &pos)
                } else {
                    pos.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[raw[k]]))
                }
            }
            let slice = Array(entries[start..<end])
            blocks.append((blockKey(term, slice[slice.count - 1].doc), PostingBlock.encode(slice, positions: pos)))
            start = end
        }
        if let found, blocks.count != 1 || blocks[0].key != found.key {
            try txn.delete(db.postings, key: found.key)
        }
        for b in blocks { try txn.put(db.postings, key: b.key, value: b.value) }
        try adjustDF(term, by: new == nil ? -1 : (present ? 0 : 1), in: txn, db)
    }

    static func adjustDF(_ term: [UInt8], by delta: Int, in txn: borrowing Transaction, _ db: SearchDatabases) throws {
        guard delta != 0 else { return }
        var df: UInt64 = 0
        if let v = try txn.get(db.terms, key: term) {
            df = UInt64(
                try v.withUnsafeBytes { p throws(SearchIndexError) in
                    var r = VarintReader(p, at: 0)
                    return try r.next()
                })
        }
        let next = delta < 0 ? (df > 0 ? df - 1 : 0) : df + 1
        if next == 0 {
            try txn.delete(db.terms, key: term)
        } else {
            var v: [UInt8] = []
            putVarint(UInt32(truncatingIfNeeded: next), &v)
            try txn.put(db.terms, key: term, value: v)
        }
    }
}
