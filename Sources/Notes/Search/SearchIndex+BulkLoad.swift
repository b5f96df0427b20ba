import EventStore
import LMDB

extension SearchIndex {
    /// Builds the whole index in memory, then writes every database in key order with
    /// `.append`. `write` runs a body in a write transaction (the rebuild's, or a test's).
    static func bulkLoad(
        _ notes: [Note], into db: SearchDatabases,
        write: (_ body: (borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        var order = Array(notes.indices)
        if !zip(notes, notes.dropFirst()).allSatisfy({ $0.id < $1.id }) {
            order.sort { notes[$0].id < notes[$1].id }
        }
        for (a, b) in zip(order, order.dropFirst()) where notes[a].id == notes[b].id {
            throw SearchIndexError.inconsistent("note \(notes[a].id) is listed twice")
        }
        guard notes.count < Int(UInt32.max - 1) else { throw SearchIndexError.full }

        var builder = IndexBuilder()
        var records = [UInt8](repeating: 0, count: (notes.count + DocRecord.perChunk - 1) / DocRecord.perChunk * DocRecord.size * DocRecord.perChunk)
        var stats = SearchStats()
        for (doc, index) in order.enumerated() {
            let note = notes[index]
            let length = builder.add(note, doc: UInt32(doc))
            records.withUnsafeMutableBytes { p in
                DocRecord(note, length: length).store(into: p, at: doc * DocRecord.size)
            }
            stats.totalLength &+= UInt64(length)
        }
        stats.documents = UInt64(notes.count)
        stats.nextDoc = UInt32(notes.count)
        let terms = builder.finish()

        try write { txn in
            try txn.withCursor(db.ids) { c in
                for (doc, index) in order.enumerated() {
                    try notes[index].id.bytes.withUnsafeBytes { k in
                        try bigEndian(UInt32(doc)).withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                    }
                }
            }
            try txn.withCursor(db.docs) { c in
                let chunkBytes = DocRecord.size * DocRecord.perChunk
                try records.withUnsafeBytes { all in
                    var chunk = 0
                    while chunk * chunkBytes < all.count {
                        let value = UnsafeRawBufferPointer(rebasing: all[(chunk * chunkBytes)..<((chunk + 1) * chunkBytes)])
                        try bigEndian(UInt32(chunk)).withUnsafeBytes { k in try c.put(k, value, flags: .append) }
                        chunk += 1
                    }
                }
            }
            try stats.write(txn, db)
        }
        // Postings in batches of about 64 MB, so a large rebuild never holds one huge transaction.
        var next = 0
        while next < terms.count {
            var end = next
            var bytes = 0
            while end < terms.count && (bytes < 64 << 20 || end == next) {
                bytes += terms[end].blocks.count
                end += 1
            }
            let range = next..<end
            try write { txn in
                try txn.withCursor(db.terms) { tc in
                    try txn.withCursor(db.postings) { pc in
                        for t in terms[range] {
                            var df: [UInt8] = []
                            putVarint(t.df, &df)
                            try t.term.withUnsafeBytes { k in try df.withUnsafeBytes { v in try tc.put(k, v, flags: .append) } }
                            var key = t.term + [0, 0, 0, 0, 0]
                            let tail = t.term.count + 1
                            try t.blocks.withUnsafeBytes { all in
                                var start = 0
                                for (lastDoc, end) in t.index {
                                    key.withUnsafeMutableBytes { k in
                                        k.storeBytes(of: lastDoc.bigEndian, toByteOffset: tail, as: UInt32.self)
                                    }
                                    let value = UnsafeRawBufferPointer(rebasing: all[start..<Int(end)])
                                    try key.withUnsafeBytes { k in try pc.put(k, value, flags: .append) }
                                    start = Int(end)
                                }
                            }
                        }
                    }
                }
            }
            next = end
        }
    }
}

/// The postings of one term, encoded block by block while the notes stream in.
struct TermPostings {
    var term: [UInt8] = []
    var df: UInt32 = 0
    /// Finished blocks, concatenated.
    var blocks: [UInt8] = []
    /// Each finished block's last doc and end offset in `blocks`.
    var index: [(UInt32, UInt32)] = []
    var docs: [UInt8] = []
    var positions: [UInt8] = []
    var pairs: [(tf: UInt32, length: UInt32)] = []
    var firstDoc: UInt32 = 0
    var lastDoc: UInt32 = 0

    mutating func add(doc: UInt32, titleTF: UInt32, bodyTF: UInt32, length: UInt32, positions p: ArraySlice<UInt64>) {
        if pairs.count == PostingBlock.targetSize { flush() }
        if pairs.isEmpty { firstDoc = doc }
        let e = PostingBlock.Entry(doc: doc, titleTF: titleTF, bodyTF: bodyTF, length: length)
        PostingBlock.appendEntry(e, previous: pairs.isEmpty ? doc : lastDoc, to: &docs)
        var previous: UInt32 = 0
        var first = true
        for packed in p {
            let pos = UInt32(truncatingIfNeeded: packed)
            putVarint(first ? pos : pos &- previous, &positions)
            previous = pos
            first = false
        }
        pairs.append((BM25.weightedTF(title: titleTF, body: bodyTF), length))
        lastDoc = doc
        df += 1
    }

    mutating func flush() {
        guard !pairs.isEmpty else { return }
        blocks.append(contentsOf: PostingBlock.header(count: pairs.count, firstDoc: firstDoc, docsBytes: docs.count, pairs: pairs))
        blocks.append(contentsOf: docs)
        blocks.append(contentsOf: positions)
        index.append((lastDoc, UInt32(truncatingIfNeeded: blocks.count)))
        docs.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        pairs.removeAll(keepingCapacity: true)
    }
}

/// Interns terms (an open-addressing table over one byte arena, so no token allocates) and
/// collects their postings.
struct IndexBuilder {
    private var arena: [UInt8] = []
    private var starts: [UInt32] = []
    private var lengths: [UInt8] = []
    private var hashes: [UInt32] = []
    private var slots = [Int32](repeating: -1, count: 1 << 16)
    private var postings: [TermPostings] = []
    /// (term number << 32 | position) of the current note, sorted to group by term.
    private var occurrences: [UInt64] = []

    private mutating func intern(_ term: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in term { h = (h ^ UInt32(b)) &* 16_777_619 }
        var mask = slots.count - 1
        var i = Int(h) & mask
        while true {
            let s = slots[i]
            if s < 0 { break }
            if hashes[Int(s)] == h && Int(lengths[Int(s)]) == term.count {
                let start = Int(starts[Int(s)])
                var same = true
                for k in 0..<term.count where arena[start + k] != term[k] {
                    same = false
                    break
                }
                if same { return UInt32(s) }
            }
            i = (i + 1) & mask
        }
        let id = Int32(starts.count)
        starts.append(UInt32(arena.count))
        lengths.append(UInt8(truncatingIfNeeded: term.count))
        hashes.append(h)
        arena.append(contentsOf: term)
        postings.append(TermPostings())
        slots[i] = id
        if starts.count * 2 > slots.count {
            slots = [Int32](repeating: -1, count: slots.count * 2)
            mask = slots.count - 1
            for (t, th) in hashes.enumerated() {
                var j = Int(th) & mask
                while slots[j] >= 0 { j = (j + 1) & mask }
                slots[j] = Int32(t)
            }
        }
        return UInt32(id)
    }

    /// Adds a note as `doc`; returns its length in terms.
    mutating func add(_ note: Note, doc: UInt32) -> UInt32 {
        occurrences.removeAll(keepingCapacity: true)
        var position: UInt32 = 0
        Tokenizer.forEachTerm(in: note.title) { t, _, _ in
            occurrences.append(UInt64(intern(t)) << 32 | UInt64(position))
            position = position == .max ? .max : position + 1
        }
        let titleEnd = position
        position = position == .max ? .max : position + 1
        Tokenizer.forEachTerm(in: note.body) { t, _, _ in
            occurrences.append(UInt64(intern(t)) << 32 | UInt64(position))
            position = position == .max ? .max : position + 1
        }
        let length = UInt32(clamping: occurrences.count)
        occurrences.sort()
        var i = 0
        while i < occurrences.count {
            let term = Int(occurrences[i] >> 32)
            var j = i
            var titleTF: UInt32 = 0
            while j < occurrences.count && Int(occurrences[j] >> 32) == term {
                if UInt32(truncatingIfNeeded: occurrences[j]) < titleEnd { titleTF += 1 }
                j += 1
            }
            let total = UInt32(truncatingIfNeeded: j - i)
            postings[term].add(
                doc: doc, titleTF: titleTF, bodyTF: total - titleTF, length: length,
                positions: occurrences[i..<j])
            i = j
        }
        return length
    }

    /// Every term's postings, sorted by term bytes.
    consuming func finish() -> [TermPostings] {
        for t in postings.indices {
            postings[t].flush()
            let start = Int(starts[t])
            postings[t].term = Array(arena[start..<(start + Int(lengths[t]))])
        }
        return postings.sorted { $0.term.lexicographicallyPrecedes($1.term) }
    }
}
