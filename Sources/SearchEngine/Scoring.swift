import Basics
import Glibc
import LMDB

/// BM25F-lite: BM25 (k1 = 1.2, b = 0.75) over a note's title and body as one field, normalized by
/// the note's length, plus a share of the title's own, saturated apart and with no length in it:
/// for a term `t` times in the title and `b` in the body of a note `length` terms long,
/// `weight * tf / (tf + c0 + c1 * length)` with `tf = b + t`, plus
/// `weight * titleWeight * t / (t + titleK)`. Before 2026-12-07 the title had no share of its own
/// and a title occurrence counted three in the one field, so that in a long note hundreds of body
/// occurrences drowned the title (`async await` ranked the note titled "Async/await" second, after
/// "`async let` bindings"). The constants are those that ranked best on the known-item test of
/// the Swift Evolution proposals and the four judged collections (README, Search relevance).
/// Both indexes (LMDB and in memory) score through these functions, in the same order of
/// operations, so their scores are bit for bit equal.
enum BM25 {
    static let k1 = 1.2
    static let b = 0.75
    /// The title's own share at saturation, as a fraction of the one field's.
    static let titleWeight = 0.5
    /// The title occurrences that give half the title's own share.
    static let titleK = 1.0

    /// The tf of the one field: body occurrences plus title occurrences, saturating. At most
    /// ``PostingBlock/frontierTF(title:body:)``, which block bounds are made of.
    @inline(__always)
    static func fieldTF(title: UInt32, body: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: min(UInt64(body) + UInt64(title), UInt64(UInt32.max)))
    }

    /// The collection statistics a score depends on.
    struct Collection: Equatable {
        /// Notes in the index, whatever their status.
        var documents: UInt64
        /// The sum of their lengths (in terms, title and body).
        var totalLength: UInt64

        var averageLength: Double {
            documents > 0 && totalLength > 0 ? Double(totalLength) / Double(documents) : 1
        }

        /// The scorer of a term found in `df` notes.
        func scorer(df: UInt64, boost: Double = 1) -> TermScorer {
            let n = Double(documents)
            let d = Double(min(df, documents))
            let idf = log(1 + (n - d + 0.5) / (d + 0.5))
            let weight = idf * (k1 + 1) * boost
            return TermScorer(
                weight: weight, c0: k1 * (1 - b), c1: k1 * b / averageLength, titleWeight: weight * titleWeight,
                titleK: titleK)
        }
    }

    /// Scores one term: `weight / (1 + (c0 + c1 * length) / tf)` for its occurrences in the note
    /// (title and body), plus `titleWeight / (1 + titleK / t)` for its `t` in the title.
    ///
    /// Written so that each step is monotonic in floating point: a larger tf or a shorter
    /// length never gives a smaller score, which keeps block bounds exact upper bounds.
    struct TermScorer {
        let weight: Double
        let c0: Double
        let c1: Double
        let titleWeight: Double
        let titleK: Double

        /// The score of a note with the term `title` times in its title and `body` times in its
        /// body, `length` terms long.
        @inline(__always)
        func score(title: UInt32, body: UInt32, length: UInt32) -> Double {
            let s = score(tf: BM25.fieldTF(title: title, body: body), length: length)
            return title == 0 ? s : s + titleScore(title)
        }

        /// The one field's share: `tf` occurrences in a note `length` terms long.
        @inline(__always)
        func score(tf: UInt32, length: UInt32) -> Double {
            weight / (1 + (c0 + c1 * Double(length)) / Double(tf))
        }

        /// The title's share: `tf` occurrences in the title.
        @inline(__always)
        func titleScore(_ tf: UInt32) -> Double {
            titleWeight / (1 + titleK / Double(tf))
        }

        /// The highest score any note could get for this term.
        var ceiling: Double { weight + titleWeight }

        /// A test of "scores below `threshold`" without a division, for skipping most entries
        /// of a common word (those with no title occurrence, whose score is the one field's
        /// share alone): it never holds of an entry whose ``score(tf:length:)`` is at or
        /// above `threshold`, so skipping by it changes no result (the score itself decides the
        /// rest).
        ///
        /// For a threshold t > 0, score < t is `weight / t - 1 < (c0 + c1 * length) / tf`, that
        /// is `q * tf < c0 + c1 * length` with `q = weight / t - 1`. `q` is rounded up and the
        /// right side down by far more than the floating-point error of either (under 1e-15
        /// relative; the margin is 1e-9), so an entry on the threshold or within rounding of it
        /// is scored in full.
        func below(_ threshold: Double) -> Below {
            guard threshold > 0, threshold.isFinite else { return Below(q: .infinity, c0: 0, c1: 0) }
            let q = weight / threshold - 1
            return Below(q: q + 1e-9 * (1 + abs(q)), c0: c0 * (1 - 1e-9), c1: c1 * (1 - 1e-9))
        }

        /// See ``below(_:)``.
        struct Below {
            let q: Double
            let c0: Double
            let c1: Double

            /// Whether the entry surely scores below the threshold (`q` infinite: never).
            @inline(__always)
            func holds(tf: UInt32, length: UInt32) -> Bool { q * Double(tf) < c0 + c1 * Double(length) }
        }
    }
}

/// A candidate result: ordered by score, then the most recently updated, then by id.
struct RankedNote {
    var score: Double
    var updatedAt: Int64
    var id: Identifier

    @inline(__always)
    func isBetter(than other: RankedNote) -> Bool {
        if score != other.score { return score > other.score }
        if updatedAt != other.updatedAt { return updatedAt > other.updatedAt }
        return id < other.id
    }
}

/// The best `limit` notes seen so far: a binary heap whose root is the worst kept note.
struct TopK {
    let limit: Int
    private(set) var heap: [RankedNote] = []

    init(limit: Int) {
        self.limit = max(0, limit)
        heap.reserveCapacity(min(self.limit, 1024))
    }

    var isFull: Bool { heap.count >= limit }

    /// Notes scoring below this cannot enter (-infinity until the heap is full).
    var threshold: Double { isFull ? (heap.first?.score ?? .infinity) : -.infinity }

    /// Whether a note with this score could enter, before looking at its update time and id.
    @inline(__always)
    func admits(_ score: Double) -> Bool { limit > 0 && (!isFull || score >= threshold) }

    mutating func offer(_ note: RankedNote) {
        guard limit > 0 else { return }
        if heap.count < limit {
            heap.append(note)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard heap[parent].isBetter(than: heap[i]) else { break }
                heap.swapAt(parent, i)
                i = parent
            }
            return
        }
        guard note.isBetter(than: heap[0]) else { return }
        heap[0] = note
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var worst = i
            if l < heap.count && heap[worst].isBetter(than: heap[l]) { worst = l }
            if r < heap.count && heap[worst].isBetter(than: heap[r]) { worst = r }
            if worst == i { break }
            heap.swapAt(i, worst)
            i = worst
        }
    }

    /// The kept notes, best first.
    func results() -> [SearchHit] {
        heap.sorted { $0.isBetter(than: $1) }.map { SearchHit(id: $0.id, score: $0.score) }
    }
}

/// The `limit`-th best score among those inserted (scores only: no note's record is read to
/// find it). A min-heap of the best `limit` scores.
struct ScoreCut {
    let limit: Int
    private let heap: UnsafeMutablePointer<Double>
    private(set) var count = 0

    init(limit: Int) {
        self.limit = max(1, limit)
        heap = .allocate(capacity: self.limit)
    }

    func deallocate() { heap.deallocate() }

    @inline(__always)
    var isFull: Bool { count >= limit }

    /// Scores below this are below `limit` others (-infinity until `limit` were inserted).
    @inline(__always)
    var value: Double { count >= limit ? heap[0] : -.infinity }

    @inline(__always)
    mutating func insert(_ score: Double) {
        if count < limit {
            var i = count
            count &+= 1
            while i > 0 {
                let parent = (i &- 1) &>> 1
                if heap[parent] <= score { break }
                heap[i] = heap[parent]
                i = parent
            }
            heap[i] = score
            return
        }
        guard score > heap[0] else { return }
        var i = 0
        while true {
            let l = 2 &* i &+ 1
            if l >= limit { break }
            let r = l &+ 1
            let c = r < limit && heap[r] < heap[l] ? r : l
            if heap[c] >= score { break }
            heap[i] = heap[c]
            i = c
        }
        heap[i] = score
    }
}

/// Where a query puts the notes it scores, and what it prunes by.
///
/// Deferred (when the filter takes every note whatever its record: status filters aside, which
/// a consistent index rarely meets at the top): a note is kept with its score, and the k-th best
/// score is found from the scores alone; the records, a cache miss each (the tie-breaking update
/// time and the id), are read at the end, for the notes at or above the final k-th best score
/// only (about `limit`, and the ties), not for every note that entered the top on the way (a
/// one-word query read some 60 records for 10 results). When the filter then rejects some of
/// them, so that fewer than `limit` remain, pruning by the unfiltered scores may have dropped a
/// note that belongs: ``finish(records:filter:through:)`` returns nil and the caller runs the
/// query again undeferred, which offers each note to the top as it is scored.
struct Collector {
    struct Candidate {
        var doc: UInt32
        var score: Double
    }

    var top: TopK
    let deferred: Bool
    private var cut: ScoreCut
    private var candidates: [Candidate] = []
    /// Notes scoring below this cannot enter.
    private(set) var threshold = -Double.infinity
    /// Whether the threshold is a score (pruning may start).
    private(set) var isFull = false

    init(limit: Int, filter: CompiledFilter, deferred allowed: Bool) {
        top = TopK(limit: limit)
        var deferring = allowed && filter.only == nil && !filter.pinnedOnly && limit <= 4096
        if case .any = filter.category {} else { deferring = false }
        deferred = deferring
        cut = ScoreCut(limit: deferring ? limit : 1)
        if deferring { candidates.reserveCapacity(4 * limit + 32) }
    }

    func deallocate() { cut.deallocate() }

    /// Takes doc `d` with `score`.
    @inline(__always)
    mutating func add(
        _ d: UInt32, score: Double, records: RecordReader, filter: CompiledFilter, through cursor: borrowing Cursor
    ) throws {
        if deferred {
            guard score >= threshold else { return }
            candidates.append(Candidate(doc: d, score: score))
            cut.insert(score)
            threshold = cut.value
            isFull = cut.isFull
        } else {
            try records.offer(d, score: score, to: &top, filter: filter, through: cursor)
            threshold = top.threshold
            isFull = top.isFull
        }
    }

    /// The results, best first; nil when a deferred run must be run again undeferred (see above).
    mutating func finish(records: RecordReader, filter: CompiledFilter, through cursor: borrowing Cursor) throws
        -> [SearchHit]?
    {
        if deferred {
            let t = cut.value
            // Each record a cache miss: all asked for first, they overlap (before 2026-12-07 each
            // was waited on in turn, a twentieth of a two-word query's time).
            for c in candidates where c.score >= t { records.prefetch(c.doc) }
            for c in candidates where c.score >= t {
                try records.offer(c.doc, score: c.score, to: &top, filter: filter, through: cursor)
            }
            if cut.isFull && !top.isFull { return nil }
        }
        return top.results()
    }
}

/// A note cut into terms: what the index stores for it.
struct AnalyzedNote {
    struct Entry: Equatable {
        var term: [UInt8]
        var titleTF: UInt32
        var bodyTF: UInt32
        /// Title terms are numbered from 0, body terms from the title's length + 1, so a phrase
        /// never spans the two.
        var positions: [UInt32]
    }

    /// Sorted by term bytes (the index's key order).
    var entries: [Entry]
    /// Terms in the title and the body.
    var length: UInt32

    init(title: String, body: String, stemmer: Stemmer? = nil) {
        // Terms are interned into one byte arena and occurrences collected as (term << 32 |
        // position), then sorted: no allocation per token, one per distinct term at the end.
        var table = TermTable()
        var occurrences: [UInt64] = []
        let titleEnd = table.occurrences(title: title, body: body, stemmer: stemmer, into: &occurrences)
        length = UInt32(clamping: occurrences.count)
        occurrences.sort()
        var first = [Int](repeating: 0, count: table.count + 1)
        for o in occurrences { first[Int(o >> 32) + 1] += 1 }
        for t in 0..<table.count { first[t + 1] += first[t] }
        entries = table.sortedTerms().map { t in
            let lo = first[t]
            let hi = first[t + 1]
            var positions: [UInt32] = []
            positions.reserveCapacity(hi - lo)
            var titleTF: UInt32 = 0
            for k in lo..<hi {
                let p = UInt32(truncatingIfNeeded: occurrences[k])
                positions.append(p)
                if p < titleEnd { titleTF += 1 }
            }
            return Entry(
                term: table.term(t), titleTF: titleTF, bodyTF: UInt32(truncatingIfNeeded: hi - lo) - titleTF,
                positions: positions)
        }
    }

    init(_ note: SearchDocument, stemmer: Stemmer? = nil) {
        self.init(title: note.title, body: note.body, stemmer: stemmer)
    }
}

/// The lines of a title (a note's other names, one a line after it), one position apart, so that
/// no phrase spans two: before search-6 they were one run of words, and a note titled `New York`
/// and also named `City Guide` held the phrase `"york city"`. Both numberings of a note's terms
/// (``TermTable/occurrences(title:body:stemmer:into:)`` and the bulk load's) go through it.
struct TitleLines {
    /// The title's bytes when it has more than one line (most have one: nothing to look at).
    private let bytes: [UInt8]?
    /// Where the term before ended.
    private var after = 0

    init(_ title: String) { bytes = title.utf8.contains(UInt8(ascii: "\n")) ? Array(title.utf8) : nil }

    /// The position of the term at bytes `start..<end` of the title, the terms met in order:
    /// `next`, the position after the term before's (0 for the first), or one more after a line
    /// break (saturating).
    @inline(__always)
    mutating func position(start: Int, end: Int, next: UInt32) -> UInt32 {
        defer { after = end }
        guard let bytes, next > 0, bytes[min(after, start)..<start].contains(UInt8(ascii: "\n")) else { return next }
        return next == .max ? .max : next + 1
    }
}

extension TermTable {
    /// Interns the terms of a title and a body and appends each occurrence as
    /// `term << 32 | position`. Title terms are numbered from 0 and body terms from the title's
    /// length + 1, so a phrase never spans the two; a title's lines (a note's other names, one
    /// a line after it) are one position apart too. Positions saturate rather than trap (no
    /// real note has four billion terms). Returns where the title's positions end.
    mutating func occurrences(title: String, body: String, stemmer: Stemmer?, into occurrences: inout [UInt64])
        -> UInt32
    {
        var position: UInt32 = 0
        var lines = TitleLines(title)
        Tokenizer.forEachTerm(in: title, stemmer: stemmer) { t, start, end in
            position = lines.position(start: start, end: end, next: position)
            occurrences.append(UInt64(intern(t)) << 32 | UInt64(position))
            position = position == .max ? .max : position + 1
        }
        let titleEnd = position
        position = position == .max ? .max : position + 1
        Tokenizer.forEachTerm(in: body, stemmer: stemmer) { t, _, _ in
            occurrences.append(UInt64(intern(t)) << 32 | UInt64(position))
            position = position == .max ? .max : position + 1
        }
        return titleEnd
    }
}

/// The distinct terms of one note: an open-addressing table over a byte arena.
struct TermTable {
    private var arena: [UInt8] = []
    private var starts: [Int] = [0]
    private var hashes: [UInt32] = []
    private var slots = [Int32](repeating: -1, count: 64)

    var count: Int { hashes.count }

    /// The number of `term`, adding it when new.
    mutating func intern(_ term: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt32 = 2_166_136_261
        for b in term { h = (h ^ UInt32(b)) &* 16_777_619 }
        let mask = slots.count - 1
        var i = Int(h) & mask
        while true {
            let s = Int(slots[i])
            if s < 0 { break }
            if hashes[s] == h && starts[s + 1] - starts[s] == term.count {
                let same = arena.withUnsafeBufferPointer { a in
                    UnsafeBufferPointer(rebasing: a[starts[s]..<starts[s + 1]]).elementsEqual(term)
                }
                if same { return s }
            }
            i = (i + 1) & mask
        }
        let id = hashes.count
        arena.append(contentsOf: term)
        starts.append(arena.count)
        hashes.append(h)
        slots[i] = Int32(truncatingIfNeeded: id)
        if hashes.count * 2 > slots.count {
            slots = [Int32](repeating: -1, count: slots.count * 2)
            let mask = slots.count - 1
            for (t, th) in hashes.enumerated() {
                var j = Int(th) & mask
                while slots[j] >= 0 { j = (j + 1) & mask }
                slots[j] = Int32(truncatingIfNeeded: t)
            }
        }
        return id
    }

    func term(_ t: Int) -> [UInt8] { Array(arena[starts[t]..<starts[t + 1]]) }

    /// Term numbers in the byte order of their terms.
    func sortedTerms() -> [Int] {
        var order = Array(0..<count)
        let starts = self.starts
        arena.withUnsafeBufferPointer { a in
            order.sort { x, y in
                UnsafeBufferPointer(rebasing: a[starts[x]..<starts[x + 1]]).lexicographicallyPrecedes(
                    UnsafeBufferPointer(rebasing: a[starts[y]..<starts[y + 1]]))
            }
        }
        return order
    }
}
