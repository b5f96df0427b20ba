import Dispatch
import Glibc
public import LMDB
import Synchronization

/// A search index built in memory from a set of notes, ready to be written.
///
/// Building is pure CPU work (tokenizing every note), so it is split between the cores: each
/// part tokenizes a run of consecutive documents into its own ``IndexBuilder``, and the writer
/// reads each term's postings from the parts in document order, so the blocks written are the
/// same bytes whatever the number of parts. A rebuild also prepares it on another thread while
/// it writes the other projections; the value is handed over once, when the building threads
/// are done, which is why it may cross threads.
public final class PreparedSearchIndex: @unchecked Sendable {
    let notes: [SearchDocument]
    let order: [Int]
    let records: [UInt8]
    let stats: SearchStats
    let parts: [BuilderPart]
    /// Every distinct term once, in byte order: `(part, term number)` of each part holding it,
    /// `holders[starts[i]..<starts[i + 1]]` for the i-th term, parts in increasing order.
    let holders: [(part: Int32, term: Int32)]
    let starts: [Int]

    init(
        notes: [SearchDocument], order: [Int], records: [UInt8], stats: SearchStats, parts: [BuilderPart],
        holders: [(part: Int32, term: Int32)], starts: [Int]
    ) {
        self.notes = notes
        self.order = order
        self.records = records
        self.stats = stats
        self.parts = parts
        self.holders = holders
        self.starts = starts
    }

    /// Distinct terms.
    var termCount: Int { starts.count - 1 }

    /// Notes holding the `i`-th term (in byte order).
    func df(_ i: Int) -> UInt32 {
        var df: UInt32 = 0
        for h in holders[starts[i]..<starts[i + 1]] { df &+= parts[Int(h.part)].builder.df(Int(h.term)) }
        return df
    }
}

/// One core's share of a bulk build: the postings of a run of consecutive documents.
final class BuilderPart: @unchecked Sendable {
    var builder: IndexBuilder
    var totalLength: UInt64 = 0
    var failure: (any Error)?

    init(stemmer: Stemmer?) { builder = IndexBuilder(stemmer: stemmer) }
}

/// Memory that parallel workers write at disjoint offsets; each worker owns its own range.
private struct DisjointBytes: @unchecked Sendable {
    let base: UnsafeMutableRawBufferPointer
}

extension SearchIndex {
    /// Notes below this many are tokenized on one core: a thread costs more than it saves.
    static let notesPerExtraPart = 2_000

    /// How many parts a bulk build of `count` notes is split into: one per online core, at most 8.
    public static func defaultParts(for count: Int) -> Int {
        let cores = max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        return max(1, min(cores, count / notesPerExtraPart))
    }

    /// Builds the whole index in memory, then writes every database in key order with
    /// `.append`. `write` runs a body in a write transaction (the rebuild's, or a test's).
    /// Tokenizes every note and collects the postings in memory (no store access), on `parts`
    /// threads (by default one per core for a large set); the result does not depend on `parts`.
    public static func prepare(_ notes: [SearchDocument], language: SearchLanguage = .none, parts: Int? = nil)
        throws -> PreparedSearchIndex
    {
        var order = Array(notes.indices)
        if !zip(notes, notes.dropFirst()).allSatisfy({ $0.id < $1.id }) {
            order.sort { notes[$0].id < notes[$1].id }
        }
        for (a, b) in zip(order, order.dropFirst()) where notes[a].id == notes[b].id {
            throw SearchIndexError.inconsistent("note \(notes[a].id) is listed twice")
        }
        guard notes.count < Int(UInt32.max - 1) else { throw SearchIndexError.full }

        let partCount = max(1, min(parts ?? defaultParts(for: notes.count), max(1, notes.count)))
        let built = (0..<partCount).map { _ in BuilderPart(stemmer: language.makeStemmer(remembering: true)) }
        let chunkBytes = DocRecord.size * DocRecord.perChunk
        var records = [UInt8](
            repeating: 0, count: (notes.count + DocRecord.perChunk - 1) / DocRecord.perChunk * chunkBytes)
        let docOrder = order
        records.withUnsafeMutableBytes { p in
            let out = DisjointBytes(base: p)
            let work = { @Sendable (k: Int) in
                let part = built[k]
                let lo = k * docOrder.count / partCount
                let hi = (k + 1) * docOrder.count / partCount
                do {
                    for doc in lo..<hi {
                        let note = notes[docOrder[doc]]
                        let length = try part.builder.add(note, doc: UInt32(doc))
                        DocRecord(note, length: length).store(into: out.base, at: doc * DocRecord.size)
                        part.totalLength &+= UInt64(length)
                    }
                } catch { part.failure = error }
            }
            if partCount == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: partCount, execute: work) }
        }
        var stats = SearchStats()
        for part in built {
            if let failure = part.failure { throw failure }
            stats.totalLength &+= part.totalLength
        }
        stats.documents = UInt64(notes.count)
        stats.nextDoc = UInt32(notes.count)
        let (holders, starts) = mergeTerms(built)
        return PreparedSearchIndex(
            notes: notes, order: order, records: records, stats: stats, parts: built, holders: holders,
            starts: starts)
    }

    /// The parts' terms merged into one byte-ordered list (see ``PreparedSearchIndex/holders``).
    private static func mergeTerms(_ parts: [BuilderPart]) -> ([(part: Int32, term: Int32)], [Int]) {
        let sorted = parts.map { $0.builder.sortedTerms() }
        var holders: [(part: Int32, term: Int32)] = []
        var starts: [Int] = [0]
        holders.reserveCapacity(sorted.reduce(0) { $0 + $1.count })
        var next = [Int](repeating: 0, count: parts.count)
        while true {
            // The smallest term among the parts' next ones, and every part holding it.
            var least: Int?
            for k in parts.indices where next[k] < sorted[k].count {
                guard let l = least else {
                    least = k
                    continue
                }
                if parts[k].builder.compare(sorted[k][next[k]], with: parts[l].builder, sorted[l][next[l]]) < 0 {
                    least = k
                }
            }
            guard let l = least else { break }
            let term = sorted[l][next[l]]
            for k in parts.indices where next[k] < sorted[k].count {
                if k == l || parts[k].builder.compare(sorted[k][next[k]], with: parts[l].builder, term) == 0 {
                    holders.append((Int32(k), Int32(sorted[k][next[k]])))
                    next[k] += 1
                }
            }
            starts.append(holders.count)
        }
        return (holders, starts)
    }

    /// Writes a prepared index into empty databases, in key order with `.append`.
    public static func write(
        _ prepared: PreparedSearchIndex, into db: SearchDatabases,
        write: (_ body: (borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        try Self.write(prepared, into: db, batches: EncodedTermBatches(prepared), write: write)
    }

    /// Writes a prepared index into empty databases, its terms' batches taken from `batches`
    /// (encoded ahead on another thread, or as they are asked for).
    public static func write(
        _ prepared: PreparedSearchIndex, into db: SearchDatabases, batches: EncodedTermBatches,
        write: (_ body: (borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        let notes = prepared.notes
        let order = prepared.order
        let stats = prepared.stats
        let chunkBytes = DocRecord.size * DocRecord.perChunk
        try write { txn in
            try txn.withCursor(db.ids) { c in
                for (doc, index) in order.enumerated() {
                    try notes[index].id.bytes.withUnsafeBytes { k in
                        try bigEndian(UInt32(doc)).withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                    }
                }
            }
            try txn.withCursor(db.docs) { c in
                try prepared.records.withUnsafeBytes { all in
                    var chunk = 0
                    while chunk * chunkBytes < all.count {
                        let value = UnsafeRawBufferPointer(
                            rebasing: all[(chunk * chunkBytes)..<((chunk + 1) * chunkBytes)])
                        try bigEndian(UInt32(chunk)).withUnsafeBytes { k in try c.put(k, value, flags: .append) }
                        chunk += 1
                    }
                }
            }
            try stats.write(txn, db)
        }
        while let encoded = batches.next() {
            try write { txn in
                try txn.withCursor(db.terms) { tc in
                    try txn.withCursor(db.postings) { pc in
                        for piece in encoded { try piece.put(terms: tc, postings: pc) }
                    }
                }
            }
        }
    }
}

/// The terms and postings of a prepared index in batches of about four million postings, each
/// put in a transaction of its own, so a large rebuild never holds one huge transaction.
///
/// Encoding is nine tenths of writing the terms, the puts one tenth. By default each batch is
/// encoded when ``next()`` asks for it, in as many pieces as the index was tokenized in, each on
/// its own core. Made `encodedAhead`, the batches come from ``produce()``, run by a thread of its
/// own ahead of the writer (at most ``ahead`` of them waiting), so that only the puts are left to
/// the writer: what a rebuild does with the thread that prepared the index, while its single
/// writer is busy with the other projections. Either way the pieces are put in order, so the
/// bytes written do not depend on how or where they were encoded.
public final class EncodedTermBatches: Sendable {
    private let prepared: PreparedSearchIndex
    /// Each batch's terms and how many postings they hold.
    private let ranges: [(terms: Range<Int>, postings: Int)]
    private let pieces: Int
    /// Whether ``produce()`` encodes the batches (else ``next()`` does).
    public let encodedAhead: Bool
    /// How many encoded batches may wait for the writer.
    public let ahead: Int
    private struct Shared {
        var ready: [[EncodedTerms]] = []
        var taken = 0
        var finished = false
        var cancelled = false
    }
    private let shared = Mutex(Shared())
    private let slots: DispatchSemaphore
    private let available = DispatchSemaphore(value: 0)

    /// Batches of about `postingsPerBatch` postings (at least one term each).
    public init(
        _ prepared: PreparedSearchIndex, encodedAhead: Bool = false, ahead: Int = 2, postingsPerBatch: Int = 4_000_000
    ) {
        self.prepared = prepared
        self.pieces = max(1, prepared.parts.count)
        self.encodedAhead = encodedAhead
        self.ahead = max(1, ahead)
        // Made at zero and raised, not made at `ahead`: libdispatch traps when a semaphore is
        // let go of below the value it was made with (a producer cancelled while it waited).
        slots = DispatchSemaphore(value: 0)
        for _ in 0..<self.ahead { slots.signal() }
        var ranges: [(terms: Range<Int>, postings: Int)] = []
        var next = 0
        while next < prepared.termCount {
            var end = next
            var postings = 0
            while end < prepared.termCount && (postings < postingsPerBatch || end == next) {
                postings += Int(prepared.df(end))
                end += 1
            }
            ranges.append((next..<end, postings))
            next = end
        }
        self.ranges = ranges
    }

    /// How many batches the terms take.
    public var count: Int { ranges.count }

    /// The batch's terms encoded, in up to `pieces` pieces.
    private func encode(_ batch: Int, pieces: Int) -> [EncodedTerms] {
        let split = prepared.split(ranges[batch].terms, postings: ranges[batch].postings, into: pieces)
        let encoded = split.map { _ in EncodedTerms() }
        let index = prepared
        let work = { @Sendable (k: Int) in index.encodeTerms(split[k], into: encoded[k]) }
        if split.count == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: split.count, execute: work) }
        return encoded
    }

    /// Encodes every batch in order on the calling thread, waiting while ``ahead`` of them wait
    /// for the writer; returns early once ``cancel()`` is called. For batches `encodedAhead`
    /// only, called once.
    public func produce() {
        precondition(encodedAhead, "produce() is for batches encoded ahead")
        for batch in ranges.indices {
            slots.wait()
            if shared.withLock({ $0.cancelled }) { break }
            let encoded = encode(batch, pieces: 1)
            shared.withLock { $0.ready.append(encoded) }
            available.signal()
        }
        shared.withLock { $0.finished = true }
        // Wakes a writer waiting for a batch that will not come (after a cancel).
        available.signal()
    }

    /// Stops ``produce()`` before its next batch and lets go of the batches waiting; ``next()``
    /// returns nil from then on.
    public func cancel() {
        shared.withLock {
            $0.cancelled = true
            $0.ready = []
        }
        for _ in 0..<ahead { slots.signal() }
        available.signal()
    }

    /// The next batch, in order; nil after the last (or after ``cancel()``).
    func next() -> [EncodedTerms]? {
        let taken = shared.withLock { $0.cancelled ? ranges.count : $0.taken }
        guard taken < ranges.count else { return nil }
        guard encodedAhead else {
            shared.withLock { $0.taken += 1 }
            return encode(taken, pieces: pieces)
        }
        while true {
            let (batch, over): ([EncodedTerms]?, Bool) = shared.withLock {
                if $0.cancelled { return (nil, true) }
                if $0.ready.isEmpty { return (nil, $0.finished) }
                $0.taken += 1
                return ($0.ready.removeFirst(), false)
            }
            if let batch {
                slots.signal()
                return batch
            }
            if over { return nil }
            available.wait()
        }
    }
}

/// The term entries and posting blocks of a run of terms, encoded and ready to be put in key
/// order: each entry's key and value side by side in one byte buffer. Filled by one thread,
/// then read by the writer once that thread is done, which is why it may cross threads.
final class EncodedTerms: @unchecked Sendable {
    var bytes: [UInt8] = []
    /// Per entry: whether it goes to the postings (else the terms), and its key's and value's sizes.
    var entries: [(posting: Bool, keyCount: Int, valueCount: Int)] = []

    func append(posting: Bool, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: value)
        entries.append((posting, key.count, value.count))
    }

    /// Puts every entry with `.append` (the entries are in key order in each database).
    func put(terms tc: borrowing Cursor, postings pc: borrowing Cursor) throws {
        try bytes.withUnsafeBytes { all in
            var at = 0
            for e in entries {
                let k = UnsafeRawBufferPointer(rebasing: all[at..<(at + e.keyCount)])
                at += e.keyCount
                let v = UnsafeRawBufferPointer(rebasing: all[at..<(at + e.valueCount)])
                at += e.valueCount
                if e.posting { try pc.put(k, v, flags: .append) } else { try tc.put(k, v, flags: .append) }
            }
        }
    }
}

extension PreparedSearchIndex {
    /// `range` (of the byte-ordered terms, holding `postings` postings) cut into at most
    /// `pieces` runs of consecutive terms with about as many postings each.
    func split(_ range: Range<Int>, postings: Int, into pieces: Int) -> [Range<Int>] {
        guard pieces > 1 else { return [range] }
        var out: [Range<Int>] = []
        var start = range.lowerBound
        var sum = 0
        for i in range {
            sum += Int(df(i))
            if sum >= (out.count + 1) * postings / pieces && out.count < pieces - 1 {
                out.append(start..<(i + 1))
                start = i + 1
            }
        }
        if start < range.upperBound || out.isEmpty { out.append(start..<range.upperBound) }
        return out
    }

    /// Encodes the terms `range` (of the byte-ordered list) and their blocks into `out`, reading
    /// each term's postings from its parts in document order.
    func encodeTerms(_ range: Range<Int>, into out: EncodedTerms) {
        var pos: [UInt8] = []
        var entries: [PostingBlock.Entry] = []
        let none: [UInt8] = []
        for i in range {
            let held = holders[starts[i]..<starts[i + 1]]
            guard let first = held.first else { continue }
            var key = parts[Int(first.part)].builder.termBytes(Int(first.term))
            // The vocabulary entry holds nothing: a term's df is its blocks' counts.
            key.withUnsafeBytes { k in
                none.withUnsafeBytes { v in out.append(posting: false, key: k, value: v) }
            }
            let tail = key.count + 1
            key.append(contentsOf: [0, 0, 0, 0, 0])
            // The current part's stream; each starts at doc 0 (its first delta is absolute).
            var h = held.startIndex
            var reader = parts[Int(held[h].part)].builder.reader(Int(held[h].term))
            var leftInPart = Int(parts[Int(held[h].part)].builder.df(Int(held[h].term)))
            var doc: UInt32 = 0
            var left = Int(df(i))
            while left > 0 {
                let n = min(left, PostingBlock.targetSize)
                pos.removeAll(keepingCapacity: true)
                entries.removeAll(keepingCapacity: true)
                for _ in 0..<n {
                    if leftInPart == 0 {
                        h += 1
                        let part = parts[Int(held[h].part)]
                        reader = part.builder.reader(Int(held[h].term))
                        leftInPart = Int(part.builder.df(Int(held[h].term)))
                        doc = 0
                    }
                    leftInPart -= 1
                    doc &+= reader.varint()
                    let titleTF = reader.varint()
                    let bodyTF = reader.varint()
                    let length = reader.varint()
                    entries.append(
                        PostingBlock.Entry(doc: doc, titleTF: titleTF, bodyTF: bodyTF, length: length))
                    reader.copyVarints(UInt64(titleTF) + UInt64(bodyTF), into: &pos)
                }
                let value = PostingBlock.encode(entries, positions: pos)
                key.withUnsafeMutableBytes { k in
                    k.storeBytes(of: doc.bigEndian, toByteOffset: tail, as: UInt32.self)
                }
                key.withUnsafeBytes { k in
                    value.withUnsafeBytes { v in out.append(posting: true, key: k, value: v) }
                }
                left -= n
            }
        }
    }
}

/// Collects every term's postings as it goes, each term in its own byte stream, so writing the
/// blocks later reads memory in order instead of gathering scattered postings.
///
/// Terms are interned in an open-addressing table over one byte arena (no token allocates). The
/// streams live in one pool of chained slices that grow from 16 to 2048 bytes (the idea of
/// Lucene's byte block pool): a posting is `varint docDelta, titleTF, bodyTF, length`, then its
/// positions (first absolute, then deltas). Pool and term table are raw memory because array
/// uniqueness checks in this loop cost as much as the work; a noncopyable struct rather than a
/// class so that its fields need no dynamic exclusivity checks.
struct IndexBuilder: ~Copyable {
    struct TermState {
        /// Offsets in the pool: first slice, next byte to write, link field of the current slice.
        var head: UInt32
        var tail: UInt32
        var end: UInt32
        var level: UInt32
        var lastDoc: UInt32
        var df: UInt32
        /// The note being added when the term was last met in it (``IndexBuilder/added``), and
        /// the indices in `occurrences` of its first and last occurrences in that note.
        var note: UInt32
        var first: Int32
        var last: Int32
    }

    static let sliceSizes: [UInt32] = [16, 32, 64, 128, 256, 512, 1024, 2048]

    private var arena: [UInt8] = []
    private var starts: [UInt32] = []
    private var lengths: [UInt8] = []
    private var hashes: [UInt32] = []
    private var slots = [Int32](repeating: -1, count: 1 << 16)
    private var states: UnsafeMutablePointer<TermState>
    private var stateCapacity = 1 << 12
    private var pool: UnsafeMutablePointer<UInt8>
    private var poolCapacity = 1 << 22
    private var poolUsed: UInt32 = 0
    /// (term number << 32 | position) of the current note, in the order met.
    private var occurrences: [UInt64] = []
    /// For each of `occurrences`, the index of the next occurrence of its term (or -1): the
    /// note's occurrences grouped by term in one pass. Until 2026-12-08 they were sorted, a
    /// fifteenth of the bulk build's tokenizing thread.
    private var nextOfTerm: [Int32] = []
    /// The terms of the current note, in the order first met.
    private var noteTerms: [Int32] = []
    /// The number of notes added, wrapping past 0 (see ``TermState/note``).
    private var added: UInt32 = 0
    /// Reduces each word to its stem (nil: words as folded).
    let stemmer: Stemmer?

    init(stemmer: Stemmer?) {
        self.stemmer = stemmer
        states = .allocate(capacity: stateCapacity)
        pool = .allocate(capacity: poolCapacity)
    }

    deinit {
        states.deallocate()
        pool.deallocate()
    }

    var termCount: Int { starts.count }

    private mutating func newSlice(_ level: Int) throws -> UInt32 {
        let size = Int(IndexBuilder.sliceSizes[level])
        if Int(poolUsed) + size > poolCapacity {
            let grown = poolCapacity * 2
            guard grown < Int(UInt32.max) else { throw SearchIndexError.full }
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            p.update(from: pool, count: Int(poolUsed))
            pool.deallocate()
            pool = p
            poolCapacity = grown
        }
        let at = poolUsed
        poolUsed += UInt32(size)
        return at
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8, _ s: inout TermState) throws {
        if s.tail == s.end {
            let level = min(Int(s.level) + 1, IndexBuilder.sliceSizes.count - 1)
            let next = try newSlice(level)
            UnsafeMutableRawPointer(pool + Int(s.end)).storeBytes(of: next, as: UInt32.self)
            s.tail = next
            s.end = next + IndexBuilder.sliceSizes[level] - 4
            s.level = UInt32(level)
        }
        pool[Int(s.tail)] = byte
        s.tail += 1
    }

    @inline(__always)
    private mutating func put(varint v: UInt32, _ s: inout TermState) throws {
        var v = v
        while v >= 0x80 {
            try put(UInt8(truncatingIfNeeded: v) | 0x80, &s)
            v >>= 7
        }
        try put(UInt8(truncatingIfNeeded: v), &s)
    }

    private mutating func intern(_ term: UnsafeBufferPointer<UInt8>) throws -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in term { h = (h ^ UInt32(b)) &* 16_777_619 }
        let mask = slots.count - 1
        var i = Int(h) & mask
        while true {
            let s = slots[i]
            if s < 0 { break }
            if hashes[Int(s)] == h && Int(lengths[Int(s)]) == term.count {
                let start = Int(starts[Int(s)])
                // memcmp: the generic elementsEqual took a tenth of the interning.
                let same = arena.withUnsafeBufferPointer { a in
                    term.count == 0 || memcmp(a.baseAddress! + start, term.baseAddress!, term.count) == 0
                }
                if same { return UInt32(s) }
            }
            i = (i + 1) & mask
        }
        let id = starts.count
        if id == stateCapacity {
            let p = UnsafeMutablePointer<TermState>.allocate(capacity: stateCapacity * 2)
            p.moveInitialize(from: states, count: stateCapacity)
            states.deallocate()
            states = p
            stateCapacity *= 2
        }
        let slice = try newSlice(0)
        (states + id).initialize(
            to: TermState(
                head: slice, tail: slice, end: slice + IndexBuilder.sliceSizes[0] - 4, level: 0, lastDoc: 0, df: 0,
                note: 0, first: -1, last: -1))
        starts.append(UInt32(truncatingIfNeeded: arena.count))
        lengths.append(UInt8(truncatingIfNeeded: term.count))
        hashes.append(h)
        arena.append(contentsOf: term)
        slots[i] = Int32(id)
        if starts.count * 2 > slots.count {
            slots = [Int32](repeating: -1, count: slots.count * 2)
            let mask = slots.count - 1
            for (t, th) in hashes.enumerated() {
                var j = Int(th) & mask
                while slots[j] >= 0 { j = (j + 1) & mask }
                slots[j] = Int32(t)
            }
        }
        return UInt32(id)
    }

    /// Adds a note as `doc` (docs must come in increasing order); returns its length in terms.
    mutating func add(_ note: SearchDocument, doc: UInt32) throws -> UInt32 {
        occurrences.removeAll(keepingCapacity: true)
        var position: UInt32 = 0
        var failure: (any Error)?
        // Written out in each closure rather than as a local function: the variables a local
        // function captures are checked for exclusive access at run time on every call (a
        // twentieth of a rebuild's instructions).
        // A title's lines one position apart, as `TermTable.occurrences` numbers them.
        var lines = TitleLines(note.title)
        Tokenizer.forEachTerm(in: note.title, stemmer: stemmer) { t, start, end in
            position = lines.position(start: start, end: end, next: position)
            do {
                occurrences.append(UInt64(try intern(t)) << 32 | UInt64(position))
            } catch { failure = error }
            position = position == .max ? .max : position + 1
        }
        let titleEnd = position
        position = position == .max ? .max : position + 1
        Tokenizer.forEachTerm(in: note.body, stemmer: stemmer) { t, _, _ in
            do {
                occurrences.append(UInt64(try intern(t)) << 32 | UInt64(position))
            } catch { failure = error }
            position = position == .max ? .max : position + 1
        }
        if let failure { throw failure }
        // The chains index occurrences by Int32 (a note of two billion words is not one).
        guard occurrences.count < Int(Int32.max) else { throw SearchIndexError.full }
        let length = UInt32(clamping: occurrences.count)
        groupByTerm()
        for n in 0..<noteTerms.count {
            let term = noteTerms[n]
            var s = states[Int(term)]
            var titleTF: UInt32 = 0
            var tf: UInt32 = 0
            var k = Int(s.first)
            while k >= 0 {
                if UInt32(truncatingIfNeeded: occurrences[k]) < titleEnd { titleTF += 1 }
                tf += 1
                k = Int(nextOfTerm[k])
            }
            try put(varint: doc &- s.lastDoc, &s)
            try put(varint: titleTF, &s)
            try put(varint: tf - titleTF, &s)
            try put(varint: length, &s)
            var previous: UInt32 = 0
            k = Int(s.first)
            while k >= 0 {
                let p = UInt32(truncatingIfNeeded: occurrences[k])
                try put(varint: k == Int(s.first) ? p : p &- previous, &s)
                previous = p
                k = Int(nextOfTerm[k])
            }
            s.lastDoc = doc
            s.df += 1
            states[Int(term)] = s
        }
        return length
    }

    /// Links each of the note's `occurrences` to the next of its term and lists the note's terms
    /// (``TermState/first`` of each the first of its chain): the postings need each term's
    /// occurrences in the order met, which is the order of their positions. It works on local
    /// copies of the fields: written on `self`'s fields directly, this function kept Swift
    /// 6.3.1's debug build compiling the file for more than fifteen minutes.
    private mutating func groupByTerm() {
        let states = self.states
        added &+= 1
        if added == 0 {
            // Four billion notes later: no state may still carry a number about to be reused.
            for t in 0..<starts.count { states[t].note = 0 }
            added = 1
        }
        let note = added
        var terms = noteTerms
        var next = nextOfTerm
        noteTerms = []
        nextOfTerm = []
        terms.removeAll(keepingCapacity: true)
        next.removeAll(keepingCapacity: true)
        next.reserveCapacity(occurrences.count)
        occurrences.withUnsafeBufferPointer { occurrences in
            for k in occurrences.indices {
                let state = states + Int(occurrences[k] >> 32)
                next.append(-1)
                if state.pointee.note != note {
                    state.pointee.note = note
                    state.pointee.first = Int32(truncatingIfNeeded: k)
                    terms.append(Int32(truncatingIfNeeded: occurrences[k] >> 32))
                } else {
                    next[Int(state.pointee.last)] = Int32(truncatingIfNeeded: k)
                }
                state.pointee.last = Int32(truncatingIfNeeded: k)
            }
        }
        noteTerms = terms
        nextOfTerm = next
    }

    /// Term numbers in the byte order of their terms.
    func sortedTerms() -> [Int] {
        var order = Array(0..<starts.count)
        let starts = self.starts
        let lengths = self.lengths
        arena.withUnsafeBufferPointer { a in
            order.sort { x, y in
                let sx = Int(starts[x])
                let sy = Int(starts[y])
                return UnsafeBufferPointer(rebasing: a[sx..<(sx + Int(lengths[x]))]).lexicographicallyPrecedes(
                    UnsafeBufferPointer(rebasing: a[sy..<(sy + Int(lengths[y]))]))
            }
        }
        return order
    }

    func df(_ t: Int) -> UInt32 { states[t].df }

    /// The bytes of term `t`.
    func termBytes(_ t: Int) -> [UInt8] {
        let start = Int(starts[t])
        return Array(arena[start..<(start + Int(lengths[t]))])
    }

    /// Compares term `t` with term `u` of `other` by their bytes: negative, zero or positive.
    func compare(_ t: Int, with other: borrowing IndexBuilder, _ u: Int) -> Int {
        let st = Int(starts[t])
        let su = Int(other.starts[u])
        let lt = Int(lengths[t])
        let lu = Int(other.lengths[u])
        return arena.withUnsafeBufferPointer { a in
            other.arena.withUnsafeBufferPointer { b in
                for i in 0..<min(lt, lu) where a[st + i] != b[su + i] { return a[st + i] < b[su + i] ? -1 : 1 }
                return lt - lu
            }
        }
    }

    /// A reader of term `t`'s stream of postings.
    func reader(_ t: Int) -> SliceReader { SliceReader(pool: pool, head: states[t].head) }
}

/// Reads a term's stream back, following the slice links.
struct SliceReader {
    let pool: UnsafeMutablePointer<UInt8>
    var at: Int
    var end: Int
    var level = 0

    init(pool: UnsafeMutablePointer<UInt8>, head: UInt32) {
        self.pool = pool
        at = Int(head)
        end = Int(head) + Int(IndexBuilder.sliceSizes[0]) - 4
    }

    @inline(__always)
    mutating func byte() -> UInt8 {
        if at == end {
            let next = UnsafeRawPointer(pool + end).loadUnaligned(as: UInt32.self)
            level = min(level + 1, IndexBuilder.sliceSizes.count - 1)
            at = Int(next)
            end = at + Int(IndexBuilder.sliceSizes[level]) - 4
        }
        let b = pool[at]
        at += 1
        return b
    }

    /// Appends the bytes of the next `count` varints to `out` as they are: the block holds
    /// positions as the builder wrote them (LEB128, as ``putVarint(_:_:)`` writes), so they
    /// are copied rather than decoded and encoded again.
    @inline(__always)
    mutating func copyVarints(_ count: UInt64, into out: inout [UInt8]) {
        var left = count
        while left > 0 {
            let b = byte()
            out.append(b)
            if b < 0x80 { left -= 1 }
        }
    }

    /// Reads a varint this builder wrote (so it is well formed).
    @inline(__always)
    mutating func varint() -> UInt32 {
        var result: UInt32 = 0
        var shift: UInt32 = 0
        while true {
            let b = byte()
            result |= UInt32(b & 0x7F) &<< shift
            if b < 0x80 || shift >= 28 { return result }
            shift += 7
        }
    }
}
