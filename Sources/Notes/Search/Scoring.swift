import EventStore
import Glibc

/// BM25 (k1 = 1.2, b = 0.75) over a note's title and body as one field in which a title
/// occurrence counts ``titleWeight`` times. Both indexes (LMDB and in memory) score through these
/// functions, in the same order of operations, so their scores are bit for bit equal.
enum BM25 {
    static let k1 = 1.2
    static let b = 0.75
    static let titleWeight: UInt64 = 3

    /// The term frequency BM25 sees: body occurrences plus weighted title occurrences.
    @inline(__always)
    static func weightedTF(title: UInt32, body: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: min(UInt64(body) + UInt64(title) * titleWeight, UInt64(UInt32.max)))
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
        func scorer(df: UInt64) -> TermScorer {
            let n = Double(documents)
            let d = Double(min(df, documents))
            let idf = log(1 + (n - d + 0.5) / (d + 0.5))
            return TermScorer(weight: idf * (k1 + 1), c0: k1 * (1 - b), c1: k1 * b / averageLength)
        }
    }

    /// Scores one term: `weight / (1 + (c0 + c1 * length) / tf)`.
    ///
    /// Written so that each step is monotonic in floating point: a larger tf or a shorter
    /// length never gives a smaller score, which keeps block bounds exact upper bounds.
    struct TermScorer {
        let weight: Double
        let c0: Double
        let c1: Double

        @inline(__always)
        func score(tf: UInt32, length: UInt32) -> Double {
            weight / (1 + (c0 + c1 * Double(length)) / Double(tf))
        }

        /// The highest score any note could get for this term.
        var ceiling: Double { weight }
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

    init(title: String, body: String) {
        var index: [[UInt8]: Int] = [:]
        var entries: [Entry] = []
        var position: UInt32 = 0
        var count: UInt32 = 0
        func add(_ term: UnsafeBufferPointer<UInt8>, inTitle: Bool) {
            let key = Array(term)
            if let i = index[key] {
                if inTitle { entries[i].titleTF &+= 1 } else { entries[i].bodyTF &+= 1 }
                entries[i].positions.append(position)
            } else {
                index[key] = entries.count
                entries.append(
                    Entry(term: key, titleTF: inTitle ? 1 : 0, bodyTF: inTitle ? 0 : 1, positions: [position]))
            }
            // Saturate rather than trap: no real note has four billion terms.
            position = position == .max ? .max : position + 1
            count = count == .max ? .max : count + 1
        }
        Tokenizer.forEachTerm(in: title) { t, _, _ in add(t, inTitle: true) }
        position = position == .max ? .max : position + 1
        Tokenizer.forEachTerm(in: body) { t, _, _ in add(t, inTitle: false) }
        self.length = count
        self.entries = entries.sorted { $0.term.lexicographicallyPrecedes($1.term) }
    }

    init(_ note: Note) { self.init(title: note.title, body: note.body) }
}
