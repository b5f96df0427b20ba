import Basics
import CIntrinsics
public import LMDB

extension SearchIndex {
    /// Top-`limit` notes matching `query` among those passing `filter`, best first (BM25, ties
    /// by the most recent update, then by id).
    ///
    /// Reads the stored blocks in place (no copies) and skips every block whose best possible
    /// score cannot enter the current top `limit` (block-max pruning), so a query for the
    /// commonest words decodes only a few blocks.
    public static func search(
        _ query: SearchQuery, filter: SearchFilter, limit: Int, in txn: borrowing Transaction, _ db: SearchDatabases
    ) throws -> [SearchHit] {
        try search(stemmed: query.stemmed(db.language), filter: filter, limit: limit, in: txn, db)
    }

    /// ``search(_:filter:limit:in:_:)`` of a query whose words are stems already.
    static func search(
        stemmed query: SearchQuery, filter: SearchFilter, limit: Int, in txn: borrowing Transaction,
        _ db: SearchDatabases
    ) throws -> [SearchHit] {
        try withSearcher(in: txn, db) { s in try s.search(stemmed: query, filter: filter, limit: limit) }
    }

    /// Runs `body` with a ``Searcher`` over the snapshot `txn`, for a caller that asks several
    /// queries of one snapshot: the statistics are read and the cursors opened once, and the note
    /// records each query reads are found once for all of them.
    public static func withSearcher<R>(
        in txn: borrowing Transaction, _ db: SearchDatabases, _ body: (borrowing Searcher) throws -> R
    ) throws -> R {
        let searcher = try Searcher(txn, db)
        return try body(searcher)
    }

    /// Queries of one read snapshot (lent to the body of ``withSearcher(in:_:_:)``; it must not
    /// outlive it): the index's statistics, a cursor on each database a query reads, and a table
    /// of the note record chunks already found, so that a record is one load, not a B-tree
    /// search, once its chunk has been met.
    public struct Searcher: ~Copyable {
        let db: SearchDatabases
        let stats: SearchStats
        let terms: Cursor
        let postings: Cursor
        let docs: Cursor
        let records: RecordReader
        /// The slot table of two-word queries (``runTwo(_:_:filter:limit:docs:_:slots:matches:deferred:)``),
        /// -1 throughout between windows: made once for the searcher, not cleared for each query
        /// (8 KB, a sixth of a two-word query's instructions).
        let slots: UnsafeMutablePointer<Int16>
        /// The entry numbers of a window's matches in a two-word query, the lead's then the
        /// other's (room for two blocks of the largest size and one more each): made once for
        /// the searcher, not for each query.
        let matches: UnsafeMutablePointer<Int32>

        init(_ txn: borrowing Transaction, _ db: SearchDatabases) throws {
            // Every throwing step first: a noncopyable value is initialized all at once.
            let stats = try SearchStats.read(txn, db)
            let terms = try txn.openCursor(db.terms)
            let postings = try txn.openCursor(db.postings)
            let docs = try txn.openCursor(db.docs)
            self.db = db
            self.stats = stats
            self.terms = terms
            self.postings = postings
            self.docs = docs
            // In a write transaction a write may move or free the pages a chunk met lies on:
            // nothing is remembered there. The table is bounded (damaged statistics cannot make
            // it huge); chunks past it are found by the cursor each time.
            records = RecordReader(
                chunks: txn.readOnly ? min(Int(stats.nextDoc / UInt32(DocRecord.perChunk)) + 1, 8192) : 0)
            slots = .allocate(capacity: SearchIndex.slotSpan)
            slots.initialize(repeating: -1, count: SearchIndex.slotSpan)
            matches = .allocate(capacity: 2 * (PostingBlock.maxSize + 1))
        }

        deinit {
            records.deallocate()
            slots.deallocate()
            matches.deallocate()
        }

        /// ``SearchIndex/search(_:filter:limit:in:_:)`` in this searcher's snapshot.
        public func search(_ query: SearchQuery, filter: SearchFilter, limit: Int) throws -> [SearchHit] {
            try search(stemmed: query.stemmed(db.language), filter: filter, limit: limit)
        }

        func search(
            stemmed query: SearchQuery, filter: SearchFilter, limit: Int, lookups: TermLookups = TermLookups()
        ) throws -> [SearchHit] {
            guard limit > 0, stats.documents > 0 else { return [] }
            let collection = stats.collection
            // A query of clauses side by side runs as one conjunction (its rarest clause leads);
            // any other shape as the iterator of its tree.
            let (parts, out): ([SearchQuery.Node], [SearchQuery.Node])
            if case .all(let a, let e) = query.root {
                (parts, out) = (a, e)
            } else {
                (parts, out) = ([query.root], [])
            }
            guard
                let (positive, excluded) = try conjunction(
                    parts, out, collection: collection, terms: terms, postings: postings, lookups),
                !positive.isEmpty
            else { return [] }
            // A query of words only (the usual one) runs on the concrete iterators: calls through
            // the protocol retain and release the iterator around every call.
            let words = positive.compactMap { $0 as? TermIterator }
            let compiled = CompiledFilter(filter)
            if words.count == 1 && positive.count == 1 && excluded.isEmpty {
                if let hits = try runOne(words[0], filter: compiled, limit: limit, docs: docs, records) {
                    return hits
                }
                return try runOne(words[0], filter: compiled, limit: limit, docs: docs, records, deferred: false) ?? []
            }
            if words.count == 2 && positive.count == 2 && excluded.isEmpty && words[0].field == .any
                && words[1].field == .any
            {
                if let hits = try runTwo(
                    words[0], words[1], filter: compiled, limit: limit, docs: docs, records, slots: slots,
                    matches: matches)
                {
                    return hits
                }
                words[0].rewind()
                words[1].rewind()
                return try runTwo(
                    words[0], words[1], filter: compiled, limit: limit, docs: docs, records, slots: slots,
                    matches: matches, deferred: false) ?? []
            }
            if words.count == positive.count {
                return try run(
                    positive: words, excluded: excluded, filter: compiled, limit: limit, docs: docs, records)
            }
            if positive.count == 1, let any = positive[0] as? OrIterator,
                any.parts.contains(where: { $0 is PhraseIterator })
            {
                return try runAny(
                    any.parts, slots: any.slots, excluded: excluded, filter: compiled, limit: limit, docs: docs,
                    records, lookups)
            }
            return try run(
                positive: positive.map(ErasedClause.init), excluded: excluded, filter: compiled, limit: limit,
                docs: docs, records)
        }
    }

    /// The iterator of a query node, or nil when no note can match it.
    static func makeIterator(
        _ node: SearchQuery.Node, collection: BM25.Collection, terms tc: borrowing Cursor,
        postings pc: borrowing Cursor, _ lookups: TermLookups
    ) throws -> (any ClauseIterator)? {
        switch node {
        case .clause(let c):
            return try makeIterator(c, collection: collection, terms: tc, postings: pc, lookups)
        case .all(let parts, let out):
            guard
                let (iterators, excluded) = try conjunction(
                    parts, out, collection: collection, terms: tc, postings: pc, lookups)
            else { return nil }
            if iterators.count == 1 && excluded.isEmpty { return iterators[0] }
            return AndIterator(iterators, excluded: excluded)
        case .any(let parts):
            // An alternative written more than once (`a* OR b* OR a*`) is one iterator, moved
            // once, its score counted as often as it is written: before 2026-12-07 each was moved
            // on its own, and 500 one-letter prefixes OR'ed moved 500 iterators at every note.
            var iterators: [any ClauseIterator] = []
            var slots: [Int] = []
            var made: [SearchQuery.Node: Int?] = [:]
            for p in parts {
                if let known = made[p] {
                    if let u = known { slots.append(u) }
                    continue
                }
                if let it = try makeIterator(p, collection: collection, terms: tc, postings: pc, lookups) {
                    made[p] = .some(iterators.count)
                    slots.append(iterators.count)
                    iterators.append(it)
                } else {
                    made[p] = .some(nil)
                }
            }
            switch slots.count {
            case 0: return nil
            case 1: return iterators[0]
            default: return OrIterator(iterators, slots: slots)
            }
        }
    }

    /// The iterators of a conjunction's parts and of its exclusions (those that match nothing are
    /// dropped), or nil when a part matches nothing.
    static func conjunction(
        _ parts: [SearchQuery.Node], _ out: [SearchQuery.Node], collection: BM25.Collection,
        terms tc: borrowing Cursor, postings pc: borrowing Cursor, _ lookups: TermLookups
    ) throws -> (positive: [any ClauseIterator], excluded: [any ClauseIterator])? {
        var positive: [any ClauseIterator] = []
        positive.reserveCapacity(parts.count)
        for p in parts {
            guard let it = try makeIterator(p, collection: collection, terms: tc, postings: pc, lookups) else {
                return nil
            }
            positive.append(it)
        }
        var excluded: [any ClauseIterator] = []
        for e in out {
            if let it = try makeIterator(e, collection: collection, terms: tc, postings: pc, lookups) {
                excluded.append(it)
            }
        }
        return (positive, excluded)
    }

    /// The iterator of a clause, or nil when no note can match it.
    static func makeIterator(
        _ clause: SearchQuery.Clause, collection: BM25.Collection, terms tc: borrowing Cursor,
        postings pc: borrowing Cursor, _ lookups: TermLookups
    ) throws -> (any ClauseIterator)? {
        func termIterator(_ term: [UInt8], positions: Bool) throws -> TermIterator? {
            // The df is the sum of the blocks' counts (the index keeps the two equal; see
            // `contents(in:databases:)`), read from the blocks listed anyway: the terms
            // database's B-tree is not searched (a cache miss at each level). Listed once for
            // the search, however many clauses hold the term.
            let blocks: [BlockRef]
            let df: UInt64
            if let known = lookups.blocks(of: term) {
                (blocks, df) = known
            } else {
                var counted: UInt64 = 0
                blocks = try blockList(term, pc, counting: &counted)
                df = counted
                lookups.remember(term, blocks: blocks, df: df)
            }
            guard !blocks.isEmpty, df > 0 else { return nil }
            var shared: DecodedPositions?
            if positions {
                shared = lookups.positions[term] ?? DecodedPositions()
                lookups.positions[term] = shared
            }
            return TermIterator(
                blocks: blocks, scorer: collection.scorer(df: df, boost: clause.boost),
                field: positions ? .any : clause.field,
                cost: Int(df), sharing: shared)
        }
        switch clause.kind {
        case .term:
            guard let term = clause.terms.first else { return nil }
            return try termIterator(term, positions: false)
        case .phrase:
            var parts: [TermIterator] = []
            for term in clause.terms {
                guard let it = try termIterator(term, positions: true) else { return nil }
                parts.append(it)
            }
            return PhraseIterator(parts, field: clause.field)
        case .prefix:
            guard let prefix = clause.terms.first else { return nil }
            // A prefix the query writes again (`a* OR b* OR a*`) is expanded once.
            var key = clause
            key.excluded = false
            if let known = lookups.unions[key] {
                guard !known.docs.isEmpty else { return nil }
                return UnionIterator(docs: known.docs, scores: known.scores, best: known.best)
            }
            lookups.expansions += 1
            var union: [UInt32: Double] = [:]
            func add(_ term: [UInt8]) throws {
                guard let it = try termIterator(term, positions: false) else { return }
                var d = try it.advance(to: 0)
                while d != TermIterator.end {
                    union[d, default: 0] += it.score()
                    d = try it.advance(to: d + 1)
                }
            }
            var entry = try prefix.withUnsafeBytes { k in try tc.seek(k) }
            while let e = entry, e.key.starts(with: prefix) {
                try add(Array(e.key))
                entry = try tc.next()
            }
            // The stems of words starting with the prefix that do not start with it themselves
            // (`SearchQuery.stemmed(_:)` gives only those).
            for stem in clause.terms.dropFirst() { try add(stem) }
            let sorted = union.sorted { $0.key < $1.key }
            let (docs, scores) = (sorted.map(\.key), sorted.map(\.value))
            let best = scores.max() ?? 0
            lookups.unions[key] = (docs, scores, best)
            guard !docs.isEmpty else { return nil }
            return UnionIterator(docs: docs, scores: scores, best: best)
        }
    }

    /// The df of `term` (the sum of its blocks' counts; 0 when it has none).
    static func df(of term: [UInt8], _ pc: borrowing Cursor) throws -> UInt64 {
        var df: UInt64 = 0
        _ = try blockList(term, pc, counting: &df)
        return df
    }

    /// Every block of `term`: its last doc and its bytes in the map.
    static func blockList(_ term: [UInt8], _ pc: borrowing Cursor, df: UInt64 = 0) throws -> [BlockRef] {
        var counted: UInt64 = 0
        return try blockList(term, pc, df: df, counting: &counted)
    }

    /// Every block of `term`, and the sum of their counts (the term's df) in `counted`.
    static func blockList(_ term: [UInt8], _ pc: borrowing Cursor, df: UInt64 = 0, counting counted: inout UInt64)
        throws -> [BlockRef]
    {
        var out: [BlockRef] = []
        // Blocks written in bulk hold 128 notes; inline ones may hold fewer, and then it grows.
        out.reserveCapacity(max(16, Int(min(df, 1 << 24)) / PostingBlock.targetSize + 1))
        // The key of the term's first block (its last doc 0 or above), built without an array;
        // the run is every key of the term's length plus 5 that begins with the term and a 0.
        try withUnsafeTemporaryAllocation(byteCount: term.count + 5, alignment: 1) { k in
            term.withUnsafeBytes { t in k.copyMemory(from: t) }
            for i in term.count..<(term.count + 5) { k[i] = 0 }
            try pc.forEachInRun(from: UnsafeRawBufferPointer(k), prefix: term.count + 1, keyLength: term.count + 5) {
                e in
                let last = UInt32(bigEndian: e.key.loadUnaligned(fromByteOffset: term.count + 1, as: UInt32.self))
                guard last < TermIterator.end else {
                    throw SearchIndexError.damaged("a posting block key is malformed")
                }
                // LMDB lays the entries of a page written in key order one below the other, each
                // key after its 8-byte node header and before its value: the next blocks of a
                // term, of about this one's size, most likely lie just below it. Asking for them
                // now lets their cache misses overlap (the walk waited on each node in turn);
                // where they lie elsewhere the hint is merely unused.
                if let k = e.key.baseAddress {
                    let node = 8 &+ e.key.count &+ e.value.count
                    notes_prefetch(k - (8 &+ node))
                    notes_prefetch(k - (8 &+ 2 &* node))
                }
                var r = VarintReader(e.value, at: 0)
                counted &+= UInt64(try r.next())
                out.append(BlockRef(lastDoc: last, bytes: e.value))
            }
        }
        return out
    }

    /// One word: its blocks best bound first, so the top fills with high scores at once and
    /// every block whose bound is below the k-th best is never decoded. The order of the blocks
    /// does not change the result: ties are ranked by the records, not by the order met.
    ///
    /// Deferred (see ``Collector``), nil when it must be run again undeferred.
    static func runOne(
        _ term: TermIterator, filter: CompiledFilter, limit: Int, docs dc: borrowing Cursor, _ records: RecordReader,
        deferred: Bool = true
    ) throws -> [SearchHit]? {
        var top = Collector(limit: limit, filter: filter, deferred: deferred)
        defer { top.deallocate() }
        // The blocks by falling bound (the lower block first on a tie), taken from a heap: the
        // top is usually complete after a few blocks, so sorting all of a common word's
        // hundreds of blocks was wasted.
        var order = BlockHeap(try term.blocks.indices.map { (try term.bound(ofBlock: $0), $0) })
        let scorer = term.scorer
        let field = term.field
        // The k-th best score, kept in a local: a closure or a call per entry would cost more
        // than the entry's scoring (a note scoring below it cannot enter the top).
        var threshold = top.threshold
        var below = scorer.below(threshold)
        while let (bound, b) = order.pop() {
            // A little slack keeps floating-point summation order from ever pruning a tie.
            if top.isFull && bound * (1 + 1e-9) < threshold { break }
            if let next = order.peek { term.prefetch(block: next) }
            let (docs, count, columns, bytes) = try term.entries(ofBlock: b)
            for k in 0..<count {
                let (bodyTF, titleTF, length) = columns.entry(k, bytes)
                switch field {
                case .any: break
                case .title: if titleTF == 0 { continue }
                case .body: if bodyTF == 0 { continue }
                }
                let score: Double
                if titleTF == 0 {
                    // Most entries of a common word score below the threshold: tell them without
                    // the score's two divisions (on long notes, a third of a one-word query's
                    // time). Without the word in the title, the score is the one field's share alone.
                    if below.holds(tf: bodyTF, length: length) { continue }
                    score = scorer.score(tf: bodyTF, length: length)
                } else {
                    score = scorer.score(title: titleTF, body: bodyTF, length: length)
                }
                if score < threshold { continue }
                try top.add(docs[k], score: score, records: records, filter: filter, through: dc)
                threshold = top.threshold
                below = scorer.below(threshold)
            }
        }
        return try top.finish(records: records, filter: filter, through: dc)
    }

    /// Two words anywhere in the note (the commonest conjunction): block-max pruning as in
    /// ``run(positive:excluded:filter:limit:docs:_:)``, but once both words' blocks are loaded,
    /// the doc numbers the two blocks share are found in one pass over each (through a table of
    /// slots by doc number when their span is narrow, else by comparing four docs of each with
    /// four of the other at once, or by a binary search of each doc of the sparser side when
    /// one has far fewer), not by a call of each iterator per doc, whose branches the processor
    /// cannot predict. The same notes are scored with the same sums (first word's score plus the
    /// second's), so the results are the same.
    ///
    /// Deferred (see ``Collector``), nil when it must be run again undeferred (on rewound iterators).
    /// `matches` has room for `2 * (PostingBlock.maxSize + 1)` entry numbers (the searcher's).
    static func runTwo(
        _ first: TermIterator, _ second: TermIterator, filter: CompiledFilter, limit: Int,
        docs dc: borrowing Cursor, _ records: RecordReader, slots: UnsafeMutablePointer<Int16>,
        matches: UnsafeMutablePointer<Int32>, deferred: Bool = true
    ) throws -> [SearchHit]? {
        var top = Collector(limit: limit, filter: filter, deferred: deferred)
        defer { top.deallocate() }
        // The rarer word leads (the first on a tie, as the sort by cost in `run` does).
        let leadIsFirst = first.cost <= second.cost
        let lead = leadIsFirst ? first : second
        let other = leadIsFirst ? second : first
        // Entry numbers of the matches of a window, lead's and other's: the searcher's buffer
        // (two allocations a query before 2026-12-07), or one of this query's own once a damaged
        // or foreign block needs more room.
        var capacity = PostingBlock.maxSize + 1
        var matchLead = matches
        var matchOther = matches + capacity
        var owned = false
        defer {
            if owned {
                matchLead.deallocate()
                matchOther.deallocate()
            }
        }
        var target: UInt32 = 0
        search: while true {
            // The last doc this window may reach: where the bounds checked stop holding.
            var windowEnd = TermIterator.end - 1
            if top.isFull {
                // Skip whole runs of blocks whose summed best scores cannot beat the k-th best.
                while true {
                    guard let a = try first.bound(at: target), let b = try second.bound(at: target) else {
                        break search
                    }
                    let last = min(a.lastDoc, b.lastDoc)
                    // A little slack keeps floating-point summation order from ever pruning a tie.
                    if (0 + a.score + b.score) * (1 + 1e-9) >= top.threshold {
                        windowEnd = last
                        break
                    }
                    if last >= TermIterator.end - 1 { break search }
                    target = last + 1
                }
            }
            let x = try lead.advance(to: target)
            if x == TermIterator.end { break }
            if x > windowEnd {
                target = x
                continue
            }
            let y = try other.advance(to: x)
            if y == TermIterator.end { break }
            let (pa, na, ia) = lead.loaded
            let (pb, nb, ib) = other.loaded
            // Both blocks hold every doc of theirs up to `end`.
            let end = min(windowEnd, pa[na &- 1], pb[nb &- 1])
            if y > end {
                target = y
                continue
            }
            let ea = upperBound(pa, from: ia, to: na, of: end)
            let eb = upperBound(pb, from: ib, to: nb, of: end)
            let most = min(ea &- ia, eb &- ib)
            if most >= capacity {
                // Only damaged or foreign blocks are this large.
                if owned {
                    matchLead.deallocate()
                    matchOther.deallocate()
                }
                owned = true
                capacity = most &+ 1
                matchLead = .allocate(capacity: capacity)
                matchOther = .allocate(capacity: capacity)
            }
            var m = 0
            if (eb &- ib) > 8 &* (ea &- ia) {
                // A few lead docs against many: each sought in the other's block.
                m = seekEach(pa, ia, ea, in: pb, ib, eb, sparseOut: matchLead, denseOut: matchOther)
            } else if (ea &- ia) > 8 &* (eb &- ib) {
                m = seekEach(pb, ib, eb, in: pa, ia, ea, sparseOut: matchOther, denseOut: matchLead)
            } else if let span = slotted(from: pb[ib], through: end, entries: ea) {
                // The lead writes the slots, the other reads them (its first doc is the higher).
                m = intersectBySlots(
                    pa, ia, ea, pb, ib, eb, from: pb[ib], span: span, slots: slots,
                    writerOut: matchLead, readerOut: matchOther)
            } else {
                // Four docs of each side against each other at once (a merge waited on each
                // comparison in turn: a fifth of a two-word query's time on sparse blocks).
                m = Int(
                    notes_intersect_sorted(
                        pa + ia, Int32(truncatingIfNeeded: ea &- ia), pb + ib, Int32(truncatingIfNeeded: eb &- ib),
                        Int32(truncatingIfNeeded: ia), Int32(truncatingIfNeeded: ib), matchLead, matchOther,
                        Int32(truncatingIfNeeded: capacity)))
            }
            // The other's score is at most its block's bound, and a sum at most the lead's score
            // plus that bound (rounding is monotonic, and the sum is the same in either order):
            // a match below the k-th best with it is not scored further (one division and three
            // column reads fewer). Until the top is full nothing is below it: the bound is not
            // computed for that.
            let otherBound = top.isFull ? try other.loadedBound() : Double.infinity
            var threshold = top.threshold
            for k in 0..<m {
                let i = Int(matchLead[k])
                let leadScore = lead.score(entry: i)
                if leadScore + otherBound < threshold { continue }
                let otherScore = other.score(entry: Int(matchOther[k]))
                let s = leadIsFirst ? leadScore + otherScore : otherScore + leadScore
                if s >= threshold {
                    try top.add(pa[i], score: s, records: records, filter: filter, through: dc)
                    threshold = top.threshold
                }
            }
            // Every doc of both up to `end` is done.
            lead.move(toEntry: ea)
            other.move(toEntry: eb)
            if end >= TermIterator.end - 1 { break }
            target = end + 1
        }
        return try top.finish(records: records, filter: filter, through: dc)
    }

    /// The widest span of doc numbers a window of ``runTwo(_:_:filter:limit:docs:_:slots:matches:deferred:)`` intersects
    /// through a table of slots (8 KB); a wider one is merged.
    static let slotSpan = 4096

    /// The span `first...end` of doc numbers when the slot table can intersect it (entry numbers
    /// of the writing side, up to `entries`, fit an `Int16`), else nil.
    @inline(__always)
    static func slotted(from first: UInt32, through end: UInt32, entries: Int) -> Int? {
        guard end >= first, entries <= Int(Int16.max) else { return nil }
        let span = Int(end &- first) &+ 1
        return span <= slotSpan ? span : nil
    }

    /// The docs both `writer` (entries `wFrom..<wTo`) and `reader` (`rFrom..<rTo`, none below
    /// `first`) hold, from doc `first` (the writer's below it cannot match) through
    /// `first + span - 1` (where both entry ranges end): the writer's entry number of each of
    /// its docs is written into a slot per doc number, then each of the reader's docs reads its
    /// slot. Unlike a merge, no step waits on the comparison before it, which on common words
    /// (long runs of close doc numbers on both sides) made the merge wait on each load in turn.
    /// Writes the matches' entry numbers, in doc order, from 0 on; returns how many.
    ///
    /// `slots` must be -1 throughout, and is again on return: the slots written are put back
    /// (clearing the whole span each window, 8 KB, was a fifth of a two-word query's
    /// instructions and pushed the blocks out of the first-level cache).
    @inline(__always)
    static func intersectBySlots(
        _ writer: UnsafeMutablePointer<UInt32>, _ wFrom: Int, _ wTo: Int, _ reader: UnsafeMutablePointer<UInt32>,
        _ rFrom: Int, _ rTo: Int, from first: UInt32, span: Int, slots: UnsafeMutablePointer<Int16>,
        writerOut: UnsafeMutablePointer<Int32>, readerOut: UnsafeMutablePointer<Int32>
    ) -> Int {
        let written = lowerBound(writer, from: wFrom, to: wTo, of: first)..<wTo
        for i in written {
            slots[Int(writer[i] &- first)] = Int16(truncatingIfNeeded: i)
        }
        var m = 0
        for j in rFrom..<rTo {
            let s = slots[Int(reader[j] &- first)]
            writerOut[m] = Int32(truncatingIfNeeded: s)
            readerOut[m] = Int32(truncatingIfNeeded: j)
            // 1 when the slot holds an entry, 0 when it is -1.
            m &+= 1 &+ (Int(s) &>> 15)
        }
        for i in written { slots[Int(writer[i] &- first)] = -1 }
        return m
    }

    /// The docs of `sparse` in `sFrom..<sTo` that `dense` holds in `dFrom..<dTo` (both rising),
    /// each sought by binary search over the whole of `dFrom..<dTo`: their entry numbers go to
    /// `sparseOut` and `denseOut` from 0 on. Returns how many.
    ///
    /// Each search is over the same range, not from the entry the one before found (which gives
    /// the same entry: the docs before it are below the doc before, hence below this one), so
    /// that the searches do not wait on each other and their halving steps are as many each
    /// time (a branch the processor predicts): before 2026-12-07 each search started where the
    /// one before ended, its loads waited on that one's, and the halving loop's exit moved with
    /// the range left; a sixth of the two-word loop's time was spent waiting in these searches.
    @inline(__always)
    static func seekEach(
        _ sparse: UnsafeMutablePointer<UInt32>, _ sFrom: Int, _ sTo: Int, in dense: UnsafeMutablePointer<UInt32>,
        _ dFrom: Int, _ dTo: Int, sparseOut: UnsafeMutablePointer<Int32>, denseOut: UnsafeMutablePointer<Int32>
    ) -> Int {
        var m = 0
        for i in sFrom..<sTo {
            let d = sparse[i]
            let j = lowerBound(dense, from: dFrom, to: dTo, of: d)
            if j == dTo { break }
            sparseOut[m] = Int32(truncatingIfNeeded: i)
            denseOut[m] = Int32(truncatingIfNeeded: j)
            m &+= dense[j] == d ? 1 : 0
        }
        return m
    }

    /// The first index in `from..<to` of `p` (rising) whose doc is `d` or above (`to` when
    /// none), by a branch-free binary search (`notes_bound`).
    @inline(__always)
    static func lowerBound(_ p: UnsafeMutablePointer<UInt32>, from: Int, to: Int, of d: UInt32) -> Int {
        Int(notes_bound(p, Int32(truncatingIfNeeded: from), Int32(truncatingIfNeeded: to), d, 0))
    }

    /// The first index in `from..<to` of `p` (rising) whose doc is above `end`.
    @inline(__always)
    static func upperBound(_ p: UnsafeMutablePointer<UInt32>, from: Int, to: Int, of end: UInt32) -> Int {
        if p[to &- 1] <= end { return to }
        return Int(notes_bound(p, Int32(truncatingIfNeeded: from), Int32(truncatingIfNeeded: to), end, 1))
    }

    /// Document-at-a-time conjunction with block-max pruning.
    ///
    /// The iterators are called through unretained references (`positive`, which the caller
    /// keeps alive, holds them): taking one out of an array retains and releases it, two atomic
    /// operations that cost more than a step of the lead (a third of a two-word query's time).
    @_specialize(where Iterator == TermIterator)
    @_specialize(where Iterator == ErasedClause)
    static func run<Iterator: ClauseIterator>(
        positive: [Iterator], excluded: [any ClauseIterator], filter: CompiledFilter, limit: Int,
        docs dc: borrowing Cursor, _ records: RecordReader
    ) throws -> [SearchHit] {
        var top = TopK(limit: limit)
        let n = positive.count
        guard n > 0 else { return [] }
        // In query order (scores are summed in it), and by cost (the rarest leads).
        let all = UnsafeMutablePointer<Unmanaged<Iterator>>.allocate(capacity: n)
        let byCost = UnsafeMutablePointer<Unmanaged<Iterator>>.allocate(capacity: n)
        defer {
            all.deallocate()
            byCost.deallocate()
        }
        for (k, it) in positive.enumerated() { all[k] = Unmanaged.passUnretained(it) }
        for (k, it) in positive.sorted(by: { $0.cost < $1.cost }).enumerated() {
            byCost[k] = Unmanaged.passUnretained(it)
        }
        let lead = byCost[0]
        let hasExcluded = !excluded.isEmpty
        // Docs up to `clearedUpTo` are known to have a bound at or above the threshold.
        var clearedUpTo: UInt32 = 0
        var haveCleared = false
        var target: UInt32 = 0
        do {
            while true {
                if top.isFull && !(haveCleared && target <= clearedUpTo) {
                    // Skip whole runs of blocks whose summed best scores cannot beat the k-th best.
                    var exhausted = false
                    while true {
                        var bound = 0.0
                        var minLast = TermIterator.end
                        for k in 0..<n {
                            guard let b = try all[k]._withUnsafeGuaranteedRef({ try $0.bound(at: target) }) else {
                                exhausted = true
                                break
                            }
                            bound += b.score
                            minLast = min(minLast, b.lastDoc)
                        }
                        if exhausted { break }
                        // A little slack keeps floating-point summation order from ever pruning a tie.
                        if bound * (1 + 1e-9) >= top.threshold {
                            clearedUpTo = minLast
                            haveCleared = true
                            break
                        }
                        if minLast >= TermIterator.end - 1 {
                            exhausted = true
                            break
                        }
                        target = minLast + 1
                    }
                    if exhausted { break }
                }
                let d = try lead._withUnsafeGuaranteedRef { try $0.advance(to: target) }
                if d == TermIterator.end { break }
                if top.isFull && d > clearedUpTo {
                    target = d
                    haveCleared = false
                    continue
                }
                var next = d
                for k in 1..<n {
                    let x = try byCost[k]._withUnsafeGuaranteedRef { try $0.advance(to: d) }
                    if x != d {
                        next = x
                        break
                    }
                }
                if next == TermIterator.end { break }
                if next != d {
                    target = next
                    continue
                }
                var skip = false
                if hasExcluded {
                    for ex in excluded where try ex.advance(to: d) == d {
                        skip = true
                        break
                    }
                }
                if !skip {
                    var score = 0.0
                    for k in 0..<n { score += all[k]._withUnsafeGuaranteedRef { $0.score() } }
                    try records.offer(d, score: score, to: &top, filter: filter, through: dc)
                }
                target = d + 1
            }
        }
        return top.results()
    }
}

/// The term lookups of one search, shared by its clauses: a word in several clauses (phrases,
/// alternatives, near spellings) has its blocks listed once, and a prefix written several times
/// (`a* OR b* OR a*`) is expanded once, its notes and scores shared by each place it stands.
/// Before 2026-12-07 each clause read them again: on 100,000 notes, 500 one-letter prefixes
/// OR'ed expanded each letter about 19 times (16 s, 342 MB).
final class TermLookups {
    /// The first terms listed, found by comparing them: a query of a few words hashes none.
    /// Before 2026-12-07 every term went into `many`, whose hashing of the term byte by byte and
    /// whose storage were a twentieth of a two-word query's time.
    private var few: [(term: [UInt8], blocks: [BlockRef], df: UInt64)] = []
    /// The terms listed after the first ``fewest`` (a pasted paragraph, near spellings).
    private var many: [[UInt8]: (blocks: [BlockRef], df: UInt64)] = [:]
    static let fewest = 8

    /// The blocks of `term` and its df, when listed before in this search.
    func blocks(of term: [UInt8]) -> (blocks: [BlockRef], df: UInt64)? {
        for e in few where e.term == term { return (e.blocks, e.df) }
        return many.isEmpty ? nil : many[term]
    }

    /// Keeps the blocks of `term` and its df for the rest of the search.
    func remember(_ term: [UInt8], blocks: [BlockRef], df: UInt64) {
        if few.count < Self.fewest {
            if few.isEmpty { few.reserveCapacity(Self.fewest) }
            few.append((term, blocks, df))
        } else {
            many[term] = (blocks, df)
        }
    }
    var unions: [SearchQuery.Clause: (docs: [UInt32], scores: [Double], best: Double)] = [:]
    /// The prefixes expanded (each walks its words' postings), and the phrases whose positions
    /// ``SearchIndex/runAny(_:slots:excluded:filter:limit:docs:_:_:)`` read: what a search cost,
    /// for the tests.
    var expansions = 0
    var positionChecks = 0
    /// The terms whose blocks were listed (each once a search, however often the query names it).
    var listings: Int { few.count + many.count }
    /// Each phrase word's positions last decoded, shared by the phrases holding it.
    var positions: [[UInt8]: DecodedPositions] = [:]
}

/// The positions of one posting block, decoded (``TermIterator/positions()``): `offsets[k]` is
/// where entry k's start in `flat`.
final class DecodedPositions {
    var block: UnsafeRawPointer?
    var flat: [UInt32] = []
    var offsets: [Int] = []
}

extension SearchIndex {
    /// Alternatives, some of them phrases (a forgiving search's "some of the words" of a query
    /// of phrases, or phrases OR'ed): as the ``OrIterator`` in ``run(positive:excluded:filter:limit:docs:_:)``
    /// gives them, the same notes with the same scores, but a phrase's words are found together
    /// first and their positions read only for a note whose best possible score (every phrase
    /// whose words it holds counted as found) could enter the top: most notes holding the common
    /// words of a phrase score too low. Before 2026-12-07 every such note's positions were read:
    /// 300 three-word phrases side by side, none in one note, took 15.8 s on 100,000 notes (their
    /// some-words step, about 50 ms a phrase).
    static func runAny(
        _ parts: [any ClauseIterator], slots: [Int], excluded: [any ClauseIterator], filter: CompiledFilter,
        limit: Int, docs dc: borrowing Cursor, _ records: RecordReader, _ lookups: TermLookups
    ) throws -> [SearchHit] {
        var top = TopK(limit: limit)
        let n = parts.count
        guard n > 0 else { return [] }
        let phrases = parts.map { $0 as? PhraseIterator }
        for p in phrases { p?.deferPositions = true }
        // How many times the query writes each part.
        var weights = [Int](repeating: 0, count: n)
        for k in slots { weights[k] += 1 }
        let current = UnsafeMutablePointer<UInt32>.allocate(capacity: n)
        let scores = UnsafeMutablePointer<Double>.allocate(capacity: n)
        let found = UnsafeMutablePointer<Bool>.allocate(capacity: n)
        defer {
            current.deallocate()
            scores.deallocate()
            found.deallocate()
        }
        for k in 0..<n { current[k] = try parts[k].advance(to: 0) }
        while true {
            var d = TermIterator.end
            for k in 0..<n where current[k] < d { d = current[k] }
            if d == TermIterator.end { break }
            for k in 0..<n where current[k] == d { scores[k] = parts[k].score() }
            // The best the note can score: every part there, its phrases found (summed in query
            // order, as the score is: a sum of fewer of the same scores is never more).
            var worth = true
            var bound = 0.0
            if top.isFull {
                for k in slots where current[k] == d { bound += scores[k] }
                // A little slack keeps floating-point summation order from ever pruning a tie.
                worth = bound * (1 + 1e-9) >= top.threshold
            }
            if worth {
                var matched = false
                var here: [Int] = []
                for k in 0..<n where current[k] == d {
                    found[k] = true
                    if phrases[k] != nil { here.append(k) } else { matched = true }
                }
                // The phrases best scoring first: each not found takes its score off the bound,
                // and once the note cannot enter the top, the others are not read (with more slack:
                // the subtractions round too).
                if top.isFull { here.sort { scores[$0] * Double(weights[$0]) > scores[$1] * Double(weights[$1]) } }
                for k in here {
                    if top.isFull && bound * (1 + 1e-6) < top.threshold {
                        found[k] = false
                        continue
                    }
                    lookups.positionChecks += 1
                    found[k] = try phrases[k]?.positionsMatch() ?? true
                    if found[k] { matched = true } else { bound -= scores[k] * Double(weights[k]) }
                }
                if top.isFull && bound * (1 + 1e-6) < top.threshold { matched = false }
                if matched {
                    for ex in excluded where try ex.advance(to: d) == d {
                        matched = false
                        break
                    }
                }
                if matched {
                    var score = 0.0
                    for k in slots where current[k] == d && found[k] { score += scores[k] }
                    try records.offer(d, score: score, to: &top, filter: filter, through: dc)
                }
            }
            for k in 0..<n where current[k] == d { current[k] = try parts[k].advance(to: d + 1) }
        }
        return top.results()
    }
}

/// A block of a term's postings: its last doc number and its bytes in the map.
struct BlockRef {
    let lastDoc: UInt32
    let bytes: UnsafeRawBufferPointer
}

/// Reads note records through one cursor, remembering where each 128-record chunk met lies in
/// the map (valid for the snapshot): a record of a chunk met before is one load.
struct RecordReader {
    /// The chunk of each chunk number below `count` that was met, or nil.
    private let table: UnsafeMutablePointer<UnsafeRawPointer?>
    private let count: Int

    init(chunks: Int) {
        count = max(0, chunks)
        table = .allocate(capacity: max(1, count))
        table.initialize(repeating: nil, count: max(1, count))
    }

    func deallocate() { table.deallocate() }

    @inline(__always)
    func locate(_ doc: UInt32, through cursor: borrowing Cursor) throws -> (UnsafeRawBufferPointer, Int)? {
        let n = Int(doc / UInt32(DocRecord.perChunk))
        let bytes = DocRecord.size * DocRecord.perChunk
        if n < count, let p = table[n] {
            return (UnsafeRawBufferPointer(start: p, count: bytes), DocRecord.offset(doc))
        }
        guard let c = try withUnsafeBytes(of: UInt32(n).bigEndian, { k in try cursor.seekExact(k) })?.value else {
            return nil
        }
        guard c.count == bytes, let base = c.baseAddress else {
            throw SearchIndexError.damaged("a note record chunk has \(c.count) bytes")
        }
        if n < count { table[n] = base }
        return (c, DocRecord.offset(doc))
    }

    /// Asks for the record of `doc` to be brought into the cache when its chunk was met (a
    /// caller about to read several records asks for them all first, so that their cache
    /// misses overlap).
    @inline(__always)
    func prefetch(_ doc: UInt32) {
        let n = Int(doc / UInt32(DocRecord.perChunk))
        guard n < count, let p = table[n] else { return }
        let o = DocRecord.offset(doc)
        notes_prefetch(p + o)
        notes_prefetch(p + (o &+ DocRecord.size &- 1))
    }

    /// Offers doc `d` with `score` to `top` when the score could enter and its record passes
    /// `filter` (the record gives the tie-breaking update time and the id).
    @inline(__always)
    func offer(
        _ d: UInt32, score: Double, to top: inout TopK, filter: CompiledFilter, through cursor: borrowing Cursor
    ) throws {
        guard top.admits(score), let (chunk, o) = try locate(d, through: cursor),
            DocRecord.accepts(chunk, at: o, filter)
        else { return }
        top.offer(
            RankedNote(score: score, updatedAt: DocRecord.updatedAt(chunk, at: o), id: DocRecord.id(chunk, at: o)))
    }
}

/// Any clause iterator as one concrete type, for ``SearchIndex/run(positive:excluded:filter:limit:in:_:)``
/// of a query that is not words only.
final class ErasedClause: ClauseIterator {
    let base: any ClauseIterator
    init(_ base: any ClauseIterator) { self.base = base }
    var cost: Int { base.cost }
    func advance(to target: UInt32) throws -> UInt32 { try base.advance(to: target) }
    func score() -> Double { base.score() }
    func bound(at target: UInt32) throws -> (score: Double, lastDoc: UInt32)? { try base.bound(at: target) }
}

/// Walks the notes matching one clause in doc order.
protocol ClauseIterator: AnyObject {
    /// An estimate of how many notes match (the rarest clause leads the conjunction).
    var cost: Int { get }
    /// Moves to the first matching doc `>= target` and returns it (``TermIterator/end`` when none).
    func advance(to target: UInt32) throws -> UInt32
    /// The clause's score at the current doc.
    func score() -> Double
    /// An upper bound of the score of every doc from `target` through `lastDoc`, or nil when no
    /// doc at or after `target` matches.
    func bound(at target: UInt32) throws -> (score: Double, lastDoc: UInt32)?
}

/// The postings of one term, decoded a block at a time.
///
/// Loading a block unpacks its doc numbers only, into one manually managed buffer; the tf and
/// length of a document are read from the block's columns when it is scored or filtered by
/// field, which in a conjunction is a few of the documents loaded. The hot loops work on
/// locals: class properties and arrays would cost an exclusivity check or a uniqueness check per
/// entry.
final class TermIterator: ClauseIterator {
    static let end = UInt32.max

    let blocks: [BlockRef]
    let scorer: BM25.TermScorer
    /// The field whose tf must be above zero, or `.any` when the match may be anywhere.
    let field: SearchQuery.Field
    let cost: Int
    private var blockIndex = -1
    /// The doc numbers of the loaded block.
    private var docs: UnsafeMutablePointer<UInt32>
    private var capacity: Int
    private var count = 0
    private var columns = PostingBlock.Columns(
        docs: 0, body: 0, title: 0, length: 0, docBits: 0, bodyBits: 0, titleBits: 0, lengthBits: 0)
    private var positionsStart = 0
    private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    private var i = 0
    /// Positions of the current block, decoded on demand (phrases only).
    private var positionsBlock = -1
    private var positionsFlat: [UInt32] = []
    private var positionsOffsets: [Int] = []
    /// Block bounds, computed on first use (-1 before). A buffer of its own, not an array
    /// property: each write of an array held by a class is an exclusivity check at run time,
    /// about a hundred instructions (a common word's query asks for hundreds of bounds).
    private let bounds: UnsafeMutablePointer<Double>
    private var shallowIndex = 0

    /// The positions of the block last decoded by any iterator of the same term in the search
    /// (phrases that share a word, at one note, decode its block once), or nil.
    private let shared: DecodedPositions?

    init(
        blocks: [BlockRef], scorer: BM25.TermScorer, field: SearchQuery.Field, cost: Int,
        sharing: DecodedPositions? = nil
    ) {
        shared = sharing
        self.blocks = blocks
        self.scorer = scorer
        self.field = field
        self.cost = cost
        bounds = .allocate(capacity: max(1, blocks.count))
        bounds.initialize(repeating: -1, count: max(1, blocks.count))
        capacity = PostingBlock.maxSize + 1
        docs = .allocate(capacity: capacity)
    }

    deinit {
        docs.deallocate()
        bounds.deallocate()
    }

    private func load(_ b: Int) throws {
        blockIndex = b
        i = 0
        count = 0
        guard b < blocks.count else { return }
        let bytes = blocks[b].bytes
        // The next block is usually the next loaded: its first lines (header and doc numbers)
        // load while this one is decoded.
        if b &+ 1 < blocks.count { prefetch(block: b &+ 1) }
        let h = try PostingBlock.Header(bytes)
        if h.count > capacity {
            // Only a damaged or foreign block is this large; still decode it rather than fail.
            docs.deallocate()
            capacity = h.count
            docs = .allocate(capacity: capacity)
        }
        guard try PostingBlock.unpackDocs(bytes, h, into: docs) == blocks[b].lastDoc else {
            throw SearchIndexError.damaged("a posting block does not match its key")
        }
        columns = h.columns
        positionsStart = h.docsEnd
        self.bytes = bytes
        count = h.count
    }

    /// Asks for the first lines of block `b` (its header and doc numbers) to be brought into
    /// the cache.
    @inline(__always)
    func prefetch(block b: Int) {
        let bytes = blocks[b].bytes
        guard let p = bytes.baseAddress else { return }
        var o = 0
        while o < min(bytes.count, 256) {
            notes_prefetch(p + o)
            o &+= 64
        }
    }

    /// Whether entry `k` of the loaded block has the term in the iterator's field.
    @inline(__always)
    private func inField(_ k: Int) -> Bool {
        let c = columns
        switch field {
        case .any: return true
        case .title: return PostingBlock.unpack(bytes, c.title, k, c.titleBits) > 0
        case .body: return PostingBlock.unpack(bytes, c.body, k, c.bodyBits) > 0
        }
    }

    func advance(to target: UInt32) throws -> UInt32 {
        let anyField = field == .any
        var k = i
        if blockIndex >= 0 && k < count {
            if docs[k] >= target && (anyField || inField(k)) { return docs[k] }
            // The next entry: a conjunction's lead moves one doc at a time.
            let next = k &+ 1
            if anyField && next < count && docs[next] >= target {
                i = next
                return docs[next]
            }
        }
        var b = max(blockIndex, 0)
        if b < blocks.count && blocks[b].lastDoc < target {
            // Gallop, then binary search, to the first block that can hold `target`.
            var step = 1
            var lo = b + 1
            while lo + step < blocks.count && blocks[lo + step].lastDoc < target {
                lo += step
                step *= 2
            }
            var hi = min(blocks.count, lo + step + 1)
            while lo < hi {
                let mid = (lo + hi) / 2
                if blocks[mid].lastDoc < target { lo = mid + 1 } else { hi = mid }
            }
            b = lo
        }
        while b < blocks.count {
            if b != blockIndex {
                try load(b)
                k = 0
            }
            let n = count
            let p = docs
            if anyField {
                // Far targets (a rarer clause leads) by binary search, near ones by a scan.
                if k &+ 8 < n && p[k &+ 8] < target {
                    k = SearchIndex.lowerBound(p, from: k &+ 9, to: n, of: target)
                } else {
                    while k < n && p[k] < target { k += 1 }
                }
            } else {
                while k < n && (p[k] < target || !inField(k)) { k += 1 }
            }
            if k < n {
                i = k
                return p[k]
            }
            b += 1
        }
        blockIndex = blocks.count
        count = 0
        i = 0
        return TermIterator.end
    }

    func score() -> Double { score(entry: i) }

    /// The score of entry `k` of the loaded block.
    @inline(__always)
    func score(entry k: Int) -> Double {
        let (body, title, length) = columns.entry(k, bytes)
        return scorer.score(title: title, body: body, length: length)
    }

    /// The loaded block's doc numbers, how many, and the current entry (valid after an
    /// ``advance(to:)`` that did not return ``end``, until the next).
    @inline(__always)
    var loaded: (docs: UnsafeMutablePointer<UInt32>, count: Int, index: Int) { (docs, count, i) }

    /// Back before the first doc, as made (a query run again).
    func rewind() {
        blockIndex = -1
        count = 0
        i = 0
        shallowIndex = 0
    }

    /// Makes entry `k` of the loaded block (at most its count) the current one.
    @inline(__always)
    func move(toEntry k: Int) { i = k }

    /// The best score any entry of the loaded block can have.
    @inline(__always)
    func loadedBound() throws -> Double { try bound(ofBlock: blockIndex) }

    /// The best score any entry of block `b` can have.
    func bound(ofBlock b: Int) throws -> Double {
        if bounds[b] < 0 { bounds[b] = try PostingBlock.bound(of: blocks[b].bytes, scorer) }
        return bounds[b]
    }

    /// Loads block `b` and gives its entries: doc numbers, how many, and the columns of their
    /// tf and length in the block's bytes (valid until the next load).
    func entries(ofBlock b: Int) throws -> (
        docs: UnsafeMutablePointer<UInt32>, count: Int, columns: PostingBlock.Columns, bytes: UnsafeRawBufferPointer
    ) {
        try load(b)
        return (docs, count, columns, bytes)
    }

    func bound(at target: UInt32) throws -> (score: Double, lastDoc: UInt32)? {
        var s = shallowIndex
        while s < blocks.count && blocks[s].lastDoc < target { s += 1 }
        shallowIndex = s
        guard s < blocks.count else { return nil }
        return (try bound(ofBlock: s), blocks[s].lastDoc)
    }

    /// The current doc's positions, and how many of the first are in the title.
    func positions() throws -> (all: ArraySlice<UInt32>, inTitle: Int) {
        let c = columns
        if positionsBlock != blockIndex, let shared, let at = bytes.baseAddress, shared.block == at {
            positionsBlock = blockIndex
            positionsFlat = shared.flat
            positionsOffsets = shared.offsets
        }
        if positionsBlock != blockIndex {
            positionsBlock = blockIndex
            positionsFlat.removeAll(keepingCapacity: true)
            positionsOffsets.removeAll(keepingCapacity: true)
            var r = VarintReader(bytes, at: positionsStart)
            for k in 0..<count {
                positionsOffsets.append(positionsFlat.count)
                var p: UInt32 = 0
                let (body, title, _) = c.entry(k, bytes)
                let n = UInt64(title) + UInt64(body)
                for m in 0..<n {
                    let v = try r.next()
                    p = m == 0 ? v : p &+ v
                    positionsFlat.append(p)
                }
            }
            positionsOffsets.append(positionsFlat.count)
            if let shared {
                shared.block = bytes.baseAddress
                shared.flat = positionsFlat
                shared.offsets = positionsOffsets
            }
        }
        let title = PostingBlock.unpack(bytes, c.title, i, c.titleBits)
        return (positionsFlat[positionsOffsets[i]..<positionsOffsets[i + 1]], Int(title))
    }
}

/// Notes where the terms occur next to each other, in order (in the title or in the body).
final class PhraseIterator: ClauseIterator {
    let parts: [TermIterator]
    let field: SearchQuery.Field
    let cost: Int
    private var doc: UInt32 = 0
    /// Set before the first move: ``advance(to:)`` stops at every note holding the words, and
    /// ``positionsMatch()`` says whether they form the phrase there (see ``SearchIndex/runAny``).
    var deferPositions = false

    init(_ parts: [TermIterator], field: SearchQuery.Field) {
        self.parts = parts
        self.field = field
        self.cost = parts.map(\.cost).min() ?? 0
    }

    func advance(to target: UInt32) throws -> UInt32 {
        var target = target
        while true {
            var d = try parts[0].advance(to: target)
            var aligned = false
            while !aligned && d != TermIterator.end {
                aligned = true
                for p in parts.dropFirst() {
                    let x = try p.advance(to: d)
                    if x != d {
                        d = try parts[0].advance(to: x)
                        aligned = false
                        break
                    }
                }
            }
            if d == TermIterator.end {
                doc = d
                return d
            }
            if deferPositions {
                doc = d
                return d
            }
            if try matches() {
                doc = d
                return d
            }
            target = d + 1
        }
    }

    /// Whether the words form the phrase at the current doc (reached with ``deferPositions``).
    func positionsMatch() throws -> Bool { try matches() }

    /// Whether the aligned parts form the phrase at the current doc.
    private func matches() throws -> Bool {
        let first = try parts[0].positions()
        var lists: [ArraySlice<UInt32>] = []
        for p in parts.dropFirst() { lists.append(try p.positions().all) }
        for (n, start) in first.all.enumerated() {
            if field == .title && n >= first.inTitle { break }
            if field == .body && n < first.inTitle { continue }
            var ok = true
            for (k, list) in lists.enumerated() {
                let (want, overflow) = start.addingReportingOverflow(UInt32(k + 1))
                if overflow || !contains(list, want) {
                    ok = false
                    break
                }
            }
            if ok { return true }
        }
        return false
    }

    private func contains(_ list: ArraySlice<UInt32>, _ v: UInt32) -> Bool {
        var lo = list.startIndex
        var hi = list.endIndex
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid] < v { lo = mid + 1 } else { hi = mid }
        }
        return lo < list.endIndex && list[lo] == v
    }

    func score() -> Double { parts.reduce(0) { $0 + $1.score() } }

    func bound(at target: UInt32) throws -> (score: Double, lastDoc: UInt32)? {
        try conjunctionBound(parts, at: target) { try $0.bound(at: $1) }
    }
}

/// A prefix clause, materialized: the union of the expanded terms' postings with summed scores.
final class UnionIterator: ClauseIterator {
    private let docs: [UInt32]
    private let scores: [Double]
    private let best: Double
    private var i = 0
    let cost: Int

    /// `docs` rising, each with its score in `scores`; `best` the highest score.
    init(docs: [UInt32], scores: [Double], best: Double) {
        self.docs = docs
        self.scores = scores
        self.best = best
        cost = docs.count
    }

    func advance(to target: UInt32) -> UInt32 {
        if i < docs.count && docs[i] < target {
            var lo = i
            var hi = docs.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if docs[mid] < target { lo = mid + 1 } else { hi = mid }
            }
            i = lo
        }
        return i < docs.count ? docs[i] : TermIterator.end
    }

    func score() -> Double { scores[i] }

    func bound(at target: UInt32) -> (score: Double, lastDoc: UInt32)? {
        guard let last = docs.last, last >= target else { return nil }
        return (best, TermIterator.end - 1)
    }
}

/// Notes matching every part and no excluded one (a group of a larger query).
final class AndIterator: ClauseIterator {
    let parts: [any ClauseIterator]
    let excluded: [any ClauseIterator]
    let cost: Int
    /// The parts, rarest first: the first leads.
    private let byCost: [any ClauseIterator]

    init(_ parts: [any ClauseIterator], excluded: [any ClauseIterator]) {
        self.parts = parts
        self.excluded = excluded
        byCost = parts.sorted { $0.cost < $1.cost }
        cost = byCost.first?.cost ?? 0
    }

    func advance(to target: UInt32) throws -> UInt32 {
        var target = target
        outer: while true {
            let d = try byCost[0].advance(to: target)
            if d == TermIterator.end { return d }
            for it in byCost.dropFirst() {
                let x = try it.advance(to: d)
                if x != d {
                    if x == TermIterator.end { return x }
                    target = x
                    continue outer
                }
            }
            for ex in excluded where try ex.advance(to: d) == d {
                target = d + 1
                continue outer
            }
            return d
        }
    }

    func score() -> Double { parts.reduce(0) { $0 + $1.score() } }

    func bound(at target: UInt32) throws -> (score: Double, lastDoc: UInt32)? {
        try conjunctionBound(parts, at: target) { try $0.bound(at: $1) }
    }
}

/// Notes matching at least one part; the scores of the parts at the note are summed.
final class OrIterator: ClauseIterator {
    /// Each distinct alternative once.
    let parts: [any ClauseIterator]
    /// The alternatives as the query writes them, each as its index in `parts`: scores are summed
    /// in this order (as the in-memory index sums them), one written twice counted twice.
    let slots: [Int]
    let cost: Int
    /// Each part's current doc (0 before its first move, when it may be anywhere).
    private var current: [UInt32]
    private var started: [Bool]
    /// Each part's score at `doc` (scratch of ``score()``).
    private var partScores: [Double]
    private var doc: UInt32 = 0
    /// No alternative is written twice: `slots` is `parts.indices`.
    private let distinct: Bool

    init(_ parts: [any ClauseIterator], slots: [Int]) {
        self.parts = parts
        self.slots = slots
        distinct = slots.count == parts.count
        cost = parts.reduce(0) { $0 &+ $1.cost }
        current = [UInt32](repeating: 0, count: parts.count)
        started = [Bool](repeating: false, count: parts.count)
        partScores = [Double](repeating: 0, count: parts.count)
    }

    func advance(to target: UInt32) throws -> UInt32 {
        var best = TermIterator.end
        for k in parts.indices {
            if !started[k] || current[k] < target {
                current[k] = try parts[k].advance(to: target)
                started[k] = true
            }
            best = min(best, current[k])
        }
        doc = best
        return best
    }

    func score() -> Double {
        var s = 0.0
        if distinct {
            for k in parts.indices where current[k] == doc { s += parts[k].score() }
            return s
        }
        for k in parts.indices where current[k] == doc { partScores[k] = parts[k].score() }
        for k in slots where current[k] == doc { s += partScores[k] }
        return s
    }

    func bound(at target: UInt32) throws -> (score: Double, lastDoc: UInt32)? {
        if distinct {
            var s = 0.0
            var last = TermIterator.end
            var any = false
            for p in parts {
                guard let b = try p.bound(at: target) else { continue }
                s += b.score
                last = min(last, b.lastDoc)
                any = true
            }
            return any ? (s, last) : nil
        }
        var bounds: [Double?] = []
        bounds.reserveCapacity(parts.count)
        var last = TermIterator.end
        for p in parts {
            let b = try p.bound(at: target)
            bounds.append(b?.score)
            if let b { last = min(last, b.lastDoc) }
        }
        var s = 0.0
        var any = false
        for k in slots {
            guard let b = bounds[k] else { continue }
            s += b
            any = true
        }
        return any ? (s, last) : nil
    }
}

/// The bound of a conjunction of `parts` from `target`: the sum of theirs, up to the nearest
/// end of their blocks; nil when one part has no doc left.
func conjunctionBound<Part>(
    _ parts: [Part], at target: UInt32, _ bound: (Part, UInt32) throws -> (score: Double, lastDoc: UInt32)?
) rethrows -> (score: Double, lastDoc: UInt32)? {
    var s = 0.0
    var last = TermIterator.end
    for p in parts {
        guard let b = try bound(p, target) else { return nil }
        s += b.score
        last = min(last, b.lastDoc)
    }
    return (s, last)
}

/// Blocks and their bounds as a binary max-heap, by falling bound and then rising block number:
/// popped, they come in the order a sort of them all would give.
struct BlockHeap {
    private var items: [(bound: Double, block: Int)]

    init(_ items: [(bound: Double, block: Int)]) {
        self.items = items
        var i = items.count / 2
        while i > 0 {
            i -= 1
            siftDown(i)
        }
    }

    @inline(__always)
    private static func before(_ a: (bound: Double, block: Int), _ b: (bound: Double, block: Int)) -> Bool {
        a.bound > b.bound || (a.bound == b.bound && a.block < b.block)
    }

    /// The block that comes next, without taking it.
    var peek: Int? { items.first?.block }

    /// Takes the block with the highest bound.
    mutating func pop() -> (bound: Double, block: Int)? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            siftDown(0)
        }
        return first
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        let n = items.count
        while true {
            let l = 2 * i + 1
            guard l < n else { return }
            var best = l
            if l + 1 < n && Self.before(items[l + 1], items[l]) { best = l + 1 }
            guard Self.before(items[best], items[i]) else { return }
            items.swapAt(i, best)
            i = best
        }
    }
}
