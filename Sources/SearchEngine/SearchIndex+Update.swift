import Basics
import LMDB

extension SearchIndex {
    static func update(old: SearchDocument?, new: SearchDocument, in txn: borrowing Transaction, _ db: SearchDatabases)
        throws
    {
        try update(changes: [(old, new)], in: txn, db)
    }

    /// One doc's new posting of a term, its positions in the pass's flat store (or a removal).
    struct PostingChange {
        var doc: UInt32
        var titleTF: UInt32
        var bodyTF: UInt32
        var length: UInt32
        var positions: Range<Int>
        var removed: Bool
    }

    static func update(
        changes: [(old: SearchDocument?, new: SearchDocument)], passText: Int = passText, in txn: borrowing Transaction,
        _ db: SearchDatabases
    ) throws {
        // A note changed twice in one call is applied in two passes, in order; a pass also ends
        // after `passText` bytes of text, which bounds the memory the pending postings take.
        var start = 0
        var seen: Set<Identifier> = []
        var text = 0
        for (i, c) in changes.enumerated() {
            if !seen.insert(c.new.id).inserted || text >= passText {
                try updateDistinct(changes[start..<i], in: txn, db)
                start = i
                seen = [c.new.id]
                text = 0
            }
            text &+= c.new.title.utf8.count &+ c.new.body.utf8.count
        }
        try updateDistinct(changes[start...], in: txn, db)
    }

    /// Changes in a pass from which its stemmer remembers the stems of words it met.
    static let rememberingStems = 64

    /// Text per pass of a batched update (the postings pending take roughly 20 times as much).
    static let passText = 4 << 20

    /// Changes of distinct notes: each touched block, record chunk and df is written once.
    private static func updateDistinct(
        _ changes: ArraySlice<(old: SearchDocument?, new: SearchDocument)>, in txn: borrowing Transaction,
        _ db: SearchDatabases
    ) throws {
        guard !changes.isEmpty else { return }
        var stats = try SearchStats.read(txn, db)
        // A large batch stems the same words over and over; the cache's table (about 900 KB to
        // clear) would cost a single edit more than its stemming.
        let stemmer = db.language.makeStemmer(remembering: changes.count >= rememberingStems)
        var analyzer = BatchAnalyzer(stemmer: stemmer)
        var byTerm: [[PostingChange]] = []
        var records: [(doc: UInt32, record: DocRecord)] = []
        records.reserveCapacity(changes.count)
        var before: [BatchAnalyzer.Posting] = []
        var after: [BatchAnalyzer.Posting] = []
        func add(_ p: BatchAnalyzer.Posting, doc: UInt32, length: UInt32, removed: Bool) {
            let t = Int(p.term)
            while t >= byTerm.count { byTerm.append([]) }
            byTerm[t].append(
                PostingChange(
                    doc: doc, titleTF: p.titleTF, bodyTF: p.bodyTF, length: length, positions: p.positions,
                    removed: removed))
        }
        for (old, new) in changes {
            let known = try ordinal(of: new.id, in: txn, db)
            let doc: UInt32
            var oldLength: UInt32?
            before.removeAll(keepingCapacity: true)
            if let known {
                guard let old else { throw SearchIndexError.inconsistent("note \(new.id) is indexed already") }
                doc = known
                if old.title == new.title && old.body == new.body {
                    // Metadata only: the record carries status, pin, category and update time.
                    let length = try record(doc, in: txn, db)?.length ?? AnalyzedNote(new, stemmer: stemmer).length
                    records.append((doc, DocRecord(new, length: length)))
                    continue
                }
                oldLength = analyzer.analyze(title: old.title, body: old.body, into: &before)
            } else {
                guard stats.nextDoc < UInt32.max - 1 else { throw SearchIndexError.full }
                doc = stats.nextDoc
                stats.nextDoc += 1
                stats.documents += 1
                try txn.put(db.ids, key: new.id.bytes, value: bigEndian(doc))
            }
            after.removeAll(keepingCapacity: true)
            let length = analyzer.analyze(title: new.title, body: new.body, into: &after)
            let sameLength = oldLength == length
            // Both lists are in term-number order.
            var i = 0
            var j = 0
            while i < before.count || j < after.count {
                if i < before.count && j < after.count && before[i].term == after[j].term {
                    let o = before[i]
                    let n = after[j]
                    i += 1
                    j += 1
                    if sameLength && o.titleTF == n.titleTF && o.bodyTF == n.bodyTF
                        && analyzer.positions[o.positions] == analyzer.positions[n.positions]
                    {
                        continue
                    }
                    add(n, doc: doc, length: length, removed: false)
                } else if i < before.count && (j == after.count || before[i].term < after[j].term) {
                    add(before[i], doc: doc, length: 0, removed: true)
                    i += 1
                } else {
                    add(after[j], doc: doc, length: length, removed: false)
                    j += 1
                }
            }
            stats.totalLength = stats.totalLength &- UInt64(oldLength ?? 0) &+ UInt64(length)
            records.append((doc, DocRecord(new, length: length)))
        }
        try apply(&byTerm, analyzed: analyzer, in: txn, db)
        try writeRecords(records, in: txn, db)
        try stats.write(txn, db)
    }

    /// Takes `docs` out of the index (a sync taking back notes its outbox had created): their
    /// postings, doc numbers and records, and their share of the collection's statistics. Each
    /// must be the document as the index holds it; one it does not hold is skipped. Doc numbers
    /// are not reused: the index holds what it would after adding the others alone.
    static func remove(_ docs: [SearchDocument], in txn: borrowing Transaction, _ db: SearchDatabases) throws {
        guard !docs.isEmpty else { return }
        var stats = try SearchStats.read(txn, db)
        var analyzer = BatchAnalyzer(stemmer: db.language.makeStemmer())
        var byTerm: [[PostingChange]] = []
        var postings: [BatchAnalyzer.Posting] = []
        var cleared: [UInt32] = []
        for d in docs {
            guard let doc = try ordinal(of: d.id, in: txn, db) else { continue }
            postings.removeAll(keepingCapacity: true)
            let length = analyzer.analyze(title: d.title, body: d.body, into: &postings)
            for p in postings {
                let t = Int(p.term)
                while t >= byTerm.count { byTerm.append([]) }
                byTerm[t].append(
                    PostingChange(
                        doc: doc, titleTF: p.titleTF, bodyTF: p.bodyTF, length: 0, positions: p.positions, removed: true
                    ))
            }
            _ = try txn.delete(db.ids, key: d.id.bytes)
            stats.documents -= 1
            stats.totalLength = stats.totalLength &- UInt64(length)
            cleared.append(doc)
        }
        try apply(&byTerm, analyzed: analyzer, in: txn, db)
        for doc in cleared {
            let key = DocRecord.chunkKey(doc)
            guard var chunk = try txn.get(db.docs, key: key), chunk.count == DocRecord.size * DocRecord.perChunk
            else { continue }
            let at = DocRecord.offset(doc)
            chunk.replaceSubrange(at..<(at + DocRecord.size), with: repeatElement(0, count: DocRecord.size))
            try txn.put(db.docs, key: key, value: chunk)
        }
        try stats.write(txn, db)
    }

    static func ordinal(of id: Identifier, in txn: borrowing Transaction, _ db: SearchDatabases) throws -> UInt32? {
        // Read in place, the key from the stack: a note's append looks its doc number up once.
        guard let v = try id.withBytes({ k in try txn.get(db.ids, k) }) else { return nil }
        guard v.count == 4 else { throw SearchIndexError.damaged("a note's doc number has \(v.count) bytes") }
        return UInt32(v[0]) << 24 | UInt32(v[1]) << 16 | UInt32(v[2]) << 8 | UInt32(v[3])
    }

    static func record(_ doc: UInt32, in txn: borrowing Transaction, _ db: SearchDatabases) throws -> DocRecord? {
        guard let chunk = try DocRecord.chunkKey(doc).withUnsafeBytes({ k in try txn.get(db.docs, k) }) else {
            return nil
        }
        return try DocRecord(chunk, at: DocRecord.offset(doc))
    }

    /// Writes the records, reading and writing each 128-record chunk once.
    static func writeRecords(
        _ records: [(doc: UInt32, record: DocRecord)], in txn: borrowing Transaction, _ db: SearchDatabases
    ) throws {
        let sorted = records.sorted { $0.doc < $1.doc }
        var k = 0
        while k < sorted.count {
            let key = DocRecord.chunkKey(sorted[k].doc)
            let chunkNumber = sorted[k].doc / UInt32(DocRecord.perChunk)
            var chunk = try txn.get(db.docs, key: key) ?? []
            if chunk.count != DocRecord.size * DocRecord.perChunk {
                chunk = [UInt8](repeating: 0, count: DocRecord.size * DocRecord.perChunk)
            }
            chunk.withUnsafeMutableBytes { p in
                while k < sorted.count && sorted[k].doc / UInt32(DocRecord.perChunk) == chunkNumber {
                    sorted[k].record.store(into: p, at: DocRecord.offset(sorted[k].doc))
                    k += 1
                }
            }
            try txn.put(db.docs, key: key, value: chunk)
        }
    }

    /// Applies each term's changes (indexed by the analyzer's term numbers) to its blocks, in the
    /// terms' key order (LMDB inserts in order touch each page once), through one cursor.
    private static func apply(
        _ byTerm: inout [[PostingChange]], analyzed analyzer: BatchAnalyzer, in txn: borrowing Transaction,
        _ db: SearchDatabases
    ) throws {
        var scratch = PostingScratch()
        try txn.withCursor(db.postings) { c in
            for t in analyzer.terms.sortedTerms() where t < byTerm.count && !byTerm[t].isEmpty {
                let term = analyzer.terms.term(t)
                var list = byTerm[t]
                byTerm[t] = []
                if !zip(list, list.dropFirst()).allSatisfy({ $0.doc < $1.doc }) { list.sort { $0.doc < $1.doc } }
                let applied = try applyPostings(term, list, positions: analyzer.positions, cursor: c, &scratch)
                try keepTerm(term, applied, cursor: c, in: txn, db)
            }
        }
    }

    /// The buffers ``applyPostings(_:_:positions:cursor:_:)`` reuses from term to term of a
    /// batch (each was an allocation for every term a note's text holds).
    struct PostingScratch {
        var old: [PostingBlock.Entry] = []
        var oldPositions: [Range<Int>] = []
        var entries: [PostingBlock.Entry] = []
        /// Whether each entry is a new posting, whose positions are a range of the pass's store;
        /// a kept one's are a range of the old block's bytes.
        var fresh: [Bool] = []
        var positions: [Range<Int>] = []
        var cuts: [Int] = []
        var blockPositions: [UInt8] = []
        /// The encoded blocks, one after another, and each one's last doc and extent.
        var encoded: [UInt8] = []
        var blocks: [(lastDoc: UInt32, bytes: Range<Int>)] = []
        var key: [UInt8] = []
    }

    /// Applies `changes` (sorted by doc, one per doc) to `term`'s blocks, rewriting each touched
    /// block once; returns how many postings were added minus removed, and whether the term had
    /// a block before.
    ///
    /// Changes up to a block's last doc go into that block (split when it grows past
    /// ``PostingBlock/maxSize``); changes past the last block fill it up to
    /// ``PostingBlock/targetSize`` and then make new blocks of that size, as a bulk load would.
    /// `cursor` is on the postings database; the block a change falls in is found by one search
    /// of its tree and replaced (or deleted) where the cursor stands.
    static func applyPostings(
        _ term: [UInt8], _ changes: [PostingChange], positions store: [UInt32], cursor c: borrowing Cursor,
        _ s: inout PostingScratch
    ) throws -> (delta: Int, existed: Bool) {
        var delta = 0
        var existed = false
        s.key.removeAll(keepingCapacity: true)
        s.key.append(contentsOf: term)
        for _ in 0..<5 { s.key.append(0) }
        let lastDocAt = term.count + 1
        func setLastDoc(_ doc: UInt32) {
            for i in 0..<4 { s.key[lastDocAt + i] = UInt8(truncatingIfNeeded: doc >> UInt32(24 - 8 * i)) }
        }
        var k = 0
        while k < changes.count {
            // The block holding the first change's doc or the first after it; past the end, the
            // last (the entry before the one the search lands on: no block of the term lies
            // between).
            setLastDoc(changes[k].doc)
            var found = try s.key.withUnsafeBytes { key in try c.seek(key) }
            var tail = false
            if found == nil || !isBlockKey(found!.key, of: term) {
                tail = true
                found = found != nil ? try c.previous() : try c.last()
                if let f = found, !isBlockKey(f.key, of: term) { found = nil }
            }
            var foundLast: UInt32?
            var source = UnsafeRawBufferPointer(start: nil, count: 0)
            if let f = found {
                guard let last = readBigEndianUInt32(f.key, at: lastDocAt) else {
                    throw SearchIndexError.damaged("a posting block key is malformed")
                }
                existed = true
                try PostingBlock.decode(f.value, into: &s.old, positions: &s.oldPositions)
                if tail && s.old.count >= PostingBlock.targetSize {
                    // Appending past a full last block: start a new block and leave this one alone.
                    s.old.removeAll(keepingCapacity: true)
                } else {
                    foundLast = last
                    source = f.value
                }
            } else {
                s.old.removeAll(keepingCapacity: true)
            }
            var end = changes.count
            if !tail, let last = foundLast {
                end = k
                while end < changes.count && changes[end].doc <= last { end += 1 }
            }
            // Merge the block's entries with the changes, both in doc order.
            s.entries.removeAll(keepingCapacity: true)
            s.fresh.removeAll(keepingCapacity: true)
            s.positions.removeAll(keepingCapacity: true)
            var a = 0
            var g = k
            var touched = false
            while a < s.old.count || g < end {
                if g == end || (a < s.old.count && s.old[a].doc < changes[g].doc) {
                    s.entries.append(s.old[a])
                    s.fresh.append(false)
                    s.positions.append(s.oldPositions[a])
                    a += 1
                    continue
                }
                let present = a < s.old.count && s.old[a].doc == changes[g].doc
                let n = changes[g]
                if !n.removed {
                    s.entries.append(
                        PostingBlock.Entry(doc: n.doc, titleTF: n.titleTF, bodyTF: n.bodyTF, length: n.length))
                    s.fresh.append(true)
                    s.positions.append(n.positions)
                    if !present { delta += 1 }
                    touched = true
                } else if present {
                    delta -= 1
                    touched = true
                }
                if present { a += 1 }
                g += 1
            }
            guard touched else {
                k = end
                continue
            }
            // Cut into blocks: a grown middle block into even parts, a tail into full blocks.
            let count = s.entries.count
            s.cuts.removeAll(keepingCapacity: true)
            s.cuts.append(0)
            if tail {
                var c = 0
                while c < count {
                    c = min(count, c + PostingBlock.targetSize)
                    s.cuts.append(c)
                }
            } else if count > 0 {
                let parts =
                    count > PostingBlock.maxSize ? (count + PostingBlock.targetSize - 1) / PostingBlock.targetSize : 1
                for p in 1...parts { s.cuts.append(p * count / parts) }
            }
            // Encode everything before touching the database: `source` points into it.
            s.encoded.removeAll(keepingCapacity: true)
            s.blocks.removeAll(keepingCapacity: true)
            for (lo, hi) in zip(s.cuts, s.cuts.dropFirst()) where lo < hi {
                s.blockPositions.removeAll(keepingCapacity: true)
                // Runs of kept postings have adjacent positions in the old block: one copy each.
                var run = 0..<0
                for i in lo..<hi {
                    let p = s.positions[i]
                    if s.fresh[i] {
                        s.blockPositions.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[run]))
                        run = 0..<0
                        PostingBlock.appendPositions(store[p], to: &s.blockPositions)
                    } else if run.isEmpty || run.upperBound == p.lowerBound {
                        run = (run.isEmpty ? p.lowerBound : run.lowerBound)..<p.upperBound
                    } else {
                        s.blockPositions.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[run]))
                        run = p
                    }
                }
                s.blockPositions.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[run]))
                let from = s.encoded.count
                s.blockPositions.withUnsafeBytes { pos in
                    PostingBlock.encode(s.entries[lo..<hi], positions: pos, into: &s.encoded)
                }
                s.blocks.append((s.entries[hi - 1].doc, from..<s.encoded.count))
            }
            // The cursor still stands on the block read: a block keeping its key replaces it
            // there, else it goes; the other blocks are put by key.
            let kept = foundLast.flatMap { last in s.blocks.firstIndex { $0.lastDoc == last } }
            if foundLast != nil && kept == nil { try c.deleteCurrent() }
            func put(_ i: Int, flags: PutFlags) throws {
                setLastDoc(s.blocks[i].lastDoc)
                try s.key.withUnsafeBytes { key in
                    try s.encoded.withUnsafeBytes { v in
                        try c.put(key, UnsafeRawBufferPointer(rebasing: v[s.blocks[i].bytes]), flags: flags)
                    }
                }
            }
            if let kept { try put(kept, flags: .current) }
            for i in s.blocks.indices where i != kept { try put(i, flags: []) }
            k = end
        }
        return (delta, existed)
    }

    /// Keeps `term` in the vocabulary exactly while it has a posting: entered when its first
    /// block is written, taken out with its last. A term's df is the sum of its blocks' counts,
    /// so a posting added to or taken from a term that keeps others writes nothing here (it
    /// was a get and a put of the term's entry, a page of the terms database for each term a
    /// note's text gained or lost). `cursor` is on the postings database.
    static func keepTerm(
        _ term: [UInt8], _ applied: (delta: Int, existed: Bool), cursor c: borrowing Cursor,
        in txn: borrowing Transaction, _ db: SearchDatabases
    ) throws {
        if applied.delta > 0 && !applied.existed {
            try txn.put(db.terms, key: term, value: [])
        } else if applied.delta < 0 {
            let remains = try blockKey(term, 0).withUnsafeBytes { key in
                guard let e = try c.seek(key) else { return false }
                return isBlockKey(e.key, of: term)
            }
            if !remains { try txn.delete(db.terms, key: term) }
        }
    }
}

/// Analyzes the notes of one batch pass into one term table, so postings are grouped by term
/// number without a term array or a positions array per posting.
struct BatchAnalyzer {
    /// One note's posting of a term; `positions` is a range of ``positions``.
    struct Posting {
        var term: Int32
        var titleTF: UInt32
        var bodyTF: UInt32
        var positions: Range<Int>
    }

    var terms = TermTable()
    let stemmer: Stemmer?

    init(stemmer: Stemmer?) { self.stemmer = stemmer }
    /// The positions of every posting analyzed so far.
    private(set) var positions: [UInt32] = []
    private var occurrences: [UInt64] = []

    /// Appends the note's postings to `out` in term-number order; returns its length in terms.
    mutating func analyze(title: String, body: String, into out: inout [Posting]) -> UInt32 {
        occurrences.removeAll(keepingCapacity: true)
        let titleEnd = terms.occurrences(title: title, body: body, stemmer: stemmer, into: &occurrences)
        occurrences.sort()
        var i = 0
        while i < occurrences.count {
            let term = occurrences[i] >> 32
            let start = positions.count
            var titleTF: UInt32 = 0
            while i < occurrences.count && occurrences[i] >> 32 == term {
                let p = UInt32(truncatingIfNeeded: occurrences[i])
                positions.append(p)
                if p < titleEnd { titleTF += 1 }
                i += 1
            }
            let n = UInt32(truncatingIfNeeded: positions.count - start)
            out.append(
                Posting(
                    term: Int32(truncatingIfNeeded: term), titleTF: titleTF, bodyTF: n - titleTF,
                    positions: start..<positions.count))
        }
        return UInt32(clamping: occurrences.count)
    }
}
