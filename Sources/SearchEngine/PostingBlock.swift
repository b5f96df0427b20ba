/// The byte format of a block of postings: the value under `term 0x00 lastDoc` in the postings
/// database. Up to ``maxSize`` documents of one term, in ordinal order:
///
/// ```
/// header     varint count, varint firstDoc, varint docsBytes, u8 boundCount, boundCount x (varint tf, varint length)
/// documents  u8 docBits, u8 bodyBits, u8 titleBits, then three bit-packed columns, each starting
///            on a byte: count - 1 doc deltas less one, count body tfs, count title tfs (each value
///            `bits` wide, least significant bit first)
/// ```
///
/// A posting holds only what changes when the note's use of this term does: its doc number and
/// its tfs. The note's length is in `search_lengths` and its word positions in
/// `search_positions`, so an edit rewrites the blocks of the terms whose tf it changed and no
/// other.
///
/// The columns have a fixed width per block, so a reader unpacks the doc numbers without a
/// branch per byte and reads the tfs of just the documents it scores (a conjunction scores few
/// of the documents it decodes). A column whose values are all zero (titles, mostly) takes no
/// byte.
///
/// The bounds are the block's impact frontier: (weighted tf, length) pairs such that every
/// posting has a smaller or equal tf and a note at least as long as one of them. Since BM25 grows
/// with tf and falls with length, the best score of a pair is an upper bound of every score in
/// the block whatever the collection statistics are, which is what block-max pruning needs. The
/// lengths of the pairs are rounded down to three significant bits (``boundLength(_:)``), so a
/// note whose length changes keeps its bound unless it falls below the rounded value: an edit
/// only then checks the blocks of the terms it kept, and rewrites those whose bounds no longer
/// cover it. Inline updates only ever add pairs to a block's frontier (a removed posting leaves
/// it as it was), so its bound may be looser than a bulk load's, never lower than a score.
enum PostingBlock {
    /// Documents per block written by a bulk load and by appends.
    static let targetSize = 128
    /// An inline insertion into the middle of a list splits a block that grows past this.
    static let maxSize = 256
    /// At most this many frontier pairs are kept (merged pairs still bound the block).
    static let maxBounds = 4

    /// One document's entry of a term.
    struct Entry: Equatable {
        var doc: UInt32
        var titleTF: UInt32
        var bodyTF: UInt32
    }

    /// A pair of a block's frontier: a weighted tf and a note length (rounded down).
    typealias Bound = (tf: UInt32, length: UInt32)

    /// The pair a posting of weighted tf `tf` in a note of `length` terms adds to its block's
    /// frontier: the length rounded down to three significant bits (25, 31 and 32 stay; 47
    /// becomes 40), so that most changes of a note's length leave its pairs valid.
    @inline(__always)
    static func bound(tf: UInt32, length: UInt32) -> Bound { (tf, boundLength(length)) }

    /// `length` rounded down to its three most significant bits.
    @inline(__always)
    static func boundLength(_ length: UInt32) -> UInt32 {
        let width = UInt32.bitWidth - length.leadingZeroBitCount
        guard width > 3 else { return length }
        let drop = UInt32(width - 3)
        return (length >> drop) << drop
    }

    /// Whether some pair of `bounds` has a tf as high and a length as short as `pair`'s: a
    /// posting with that pair is under the block's bound.
    static func covers(_ bounds: [Bound], _ pair: Bound) -> Bool {
        bounds.contains { $0.tf >= pair.tf && $0.length <= pair.length }
    }

    /// The parsed header of a block.
    struct Header {
        var count: Int
        var firstDoc: UInt32
        var docsStart: Int
        var docsEnd: Int
        /// Frontier pairs, flattened: tf0, length0, tf1, length1, ...
        var bounds: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
        var boundCount: Int
        var columns: Columns

        init(_ bytes: UnsafeRawBufferPointer) throws(SearchIndexError) {
            var r = VarintReader(bytes, at: 0)
            let count = Int(try r.next())
            let firstDoc = try r.next()
            let docsBytes = Int(try r.next())
            let boundCount = Int(try r.byte())
            // Writers never make a block of more than maxSize entries; a larger count is damage
            // (with columns of width 0 it would take no byte, and readers allocate by it).
            guard count > 0, count <= PostingBlock.maxSize, boundCount >= 1, boundCount <= PostingBlock.maxBounds
            else {
                throw .damaged("a posting block has a bad header")
            }
            // Read into locals: this runs once per block in the query path and must not allocate.
            var b: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)
            b.0 = try r.next()
            b.1 = try r.next()
            if boundCount > 1 {
                b.2 = try r.next()
                b.3 = try r.next()
            }
            if boundCount > 2 {
                b.4 = try r.next()
                b.5 = try r.next()
            }
            if boundCount > 3 {
                b.6 = try r.next()
                b.7 = try r.next()
            }
            guard docsBytes <= bytes.count - r.offset, docsBytes >= 3 else {
                throw .damaged("a posting block is cut short")
            }
            let start = r.offset
            let docBits = Int(bytes.load(fromByteOffset: start, as: UInt8.self))
            let bodyBits = Int(bytes.load(fromByteOffset: start + 1, as: UInt8.self))
            let titleBits = Int(bytes.load(fromByteOffset: start + 2, as: UInt8.self))
            // Every posting has the term at least once, so the tf columns are not both empty.
            guard docBits <= 32, bodyBits <= 32, titleBits <= 32, bodyBits + titleBits > 0 else {
                throw .damaged("a posting block has a bad column width")
            }
            let docsColumn = start + 3
            let bodyColumn = docsColumn + PostingBlock.columnBytes(count - 1, docBits)
            let titleColumn = bodyColumn + PostingBlock.columnBytes(count, bodyBits)
            guard titleColumn + PostingBlock.columnBytes(count, titleBits) == start + docsBytes else {
                throw .damaged("a posting block's documents do not add up")
            }
            guard start + docsBytes == bytes.count else { throw .damaged("a posting block has trailing bytes") }
            self.count = count
            self.firstDoc = firstDoc
            self.docsStart = start
            self.docsEnd = start + docsBytes
            self.bounds = b
            self.boundCount = boundCount
            self.columns = Columns(
                docs: docsColumn, body: bodyColumn, title: titleColumn, docBits: docBits, bodyBits: bodyBits,
                titleBits: titleBits)
        }

        /// The frontier's pairs.
        var boundPairs: [Bound] {
            let flat = [bounds.0, bounds.1, bounds.2, bounds.3, bounds.4, bounds.5, bounds.6, bounds.7]
            return (0..<boundCount).map { (flat[2 * $0], flat[2 * $0 + 1]) }
        }

        /// The highest score any posting of the block can have.
        @inline(__always)
        func bound(_ scorer: BM25.TermScorer) -> Double {
            var best = scorer.score(tf: bounds.0, length: bounds.1)
            if boundCount > 1 { best = max(best, scorer.score(tf: bounds.2, length: bounds.3)) }
            if boundCount > 2 { best = max(best, scorer.score(tf: bounds.4, length: bounds.5)) }
            if boundCount > 3 { best = max(best, scorer.score(tf: bounds.6, length: bounds.7)) }
            return best
        }
    }

    /// The frontier of `(tf, length)` pairs, at most `maxBounds` long, flattened.
    static func frontier(_ pairs: [Bound]) -> [UInt32] {
        // The Pareto points (no other pair has a tf as high and a length as short), found in one
        // pass: the frontier is short, so this beats sorting every pair of the block.
        var points: [Bound] = []
        for p in pairs {
            if points.contains(where: { $0.tf >= p.tf && $0.length <= p.length }) { continue }
            points.removeAll { p.tf >= $0.tf && p.length <= $0.length }
            points.append(p)
        }
        // By falling tf, hence by falling length.
        points.sort { $0.tf > $1.tf }
        // Along the frontier tf falls and length falls; a run merged into (its first tf, its
        // last length) dominates every point of the run.
        var out: [UInt32] = []
        let groups = min(points.count, maxBounds)
        for g in 0..<groups {
            let lo = g * points.count / groups
            let hi = (g + 1) * points.count / groups - 1
            out.append(points[lo].tf)
            out.append(points[hi].length)
        }
        return out
    }

    /// Where a block's columns start (byte offsets in the block) and how wide their values are.
    struct Columns {
        var docs: Int
        var body: Int
        var title: Int
        var docBits: Int
        var bodyBits: Int
        var titleBits: Int

        /// The body tf and title tf of entry `k`.
        @inline(__always)
        func entry(_ k: Int, _ bytes: UnsafeRawBufferPointer) -> (body: UInt32, title: UInt32) {
            (PostingBlock.unpack(bytes, body, k, bodyBits), PostingBlock.unpack(bytes, title, k, titleBits))
        }
    }

    /// Bytes of a column of `count` values `bits` wide.
    @inline(__always)
    static func columnBytes(_ count: Int, _ bits: Int) -> Int { (max(0, count) &* bits &+ 7) >> 3 }

    /// Bits needed for `v` (0 for 0).
    @inline(__always)
    static func bitWidth(_ v: UInt32) -> Int { UInt32.bitWidth - v.leadingZeroBitCount }

    /// Value `k` of the column at byte `column` of `bytes`, `bits` wide (at most 32). Reads eight
    /// bytes at once where the value has them, and never past its end.
    @inline(__always)
    static func unpack(_ bytes: UnsafeRawBufferPointer, _ column: Int, _ k: Int, _ bits: Int) -> UInt32 {
        if bits == 0 { return 0 }
        let bit = k &* bits
        let at = column &+ bit &>> 3
        let word = littleEndianWord(bytes, at: at)
        return UInt32(truncatingIfNeeded: (word &>> UInt64(bit & 7)) & ((1 &<< UInt64(bits)) &- 1))
    }

    /// The eight bytes at `at` as a little-endian number, those past the value's end read as
    /// zeros (one load where the value has them all).
    @inline(__always)
    static func littleEndianWord(_ bytes: UnsafeRawBufferPointer, at: Int) -> UInt64 {
        if at &+ 8 <= bytes.count {
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        var w: UInt64 = 0
        var b = 0
        while at &+ b < bytes.count {
            w |= UInt64(bytes[at &+ b]) &<< UInt64(8 &* b)
            b &+= 1
        }
        return w
    }

    /// Appends `values` as a column `bits` wide.
    static func pack(_ values: some Collection<UInt32>, bits: Int, to out: inout [UInt8]) {
        guard bits > 0 else { return }
        var acc: UInt64 = 0
        var filled = 0
        for v in values {
            acc |= UInt64(v) &<< UInt64(filled)
            filled += bits
            while filled >= 8 {
                out.append(UInt8(truncatingIfNeeded: acc))
                acc >>= 8
                filled -= 8
            }
        }
        if filled > 0 { out.append(UInt8(truncatingIfNeeded: acc)) }
    }

    /// Encodes a block whose frontier is that of `bounds` (each entry's pair, or pairs that
    /// cover them).
    static func encode(_ entries: [Entry], bounds: [Bound]) -> [UInt8] {
        var docs: [UInt8] = []
        encodeDocuments(entries, into: &docs)
        var out = header(count: entries.count, firstDoc: entries.first?.doc ?? 0, docsBytes: docs.count, pairs: bounds)
        out.append(contentsOf: docs)
        return out
    }

    /// The documents section of `entries` (in doc order), appended to `out`.
    static func encodeDocuments(_ entries: [Entry], into out: inout [UInt8]) {
        var docMax: UInt32 = 0
        var bodyMax: UInt32 = 0
        var titleMax: UInt32 = 0
        for (k, e) in entries.enumerated() {
            if k > 0 { docMax = max(docMax, e.doc &- entries[k - 1].doc &- 1) }
            bodyMax = max(bodyMax, e.bodyTF)
            titleMax = max(titleMax, e.titleTF)
        }
        let widths = [bitWidth(docMax), bitWidth(bodyMax), bitWidth(titleMax)]
        out.reserveCapacity(out.count + 3 + widths.reduce(0) { $0 + columnBytes(entries.count, $1) })
        for w in widths { out.append(UInt8(w)) }
        pack(
            entries.indices.dropFirst().lazy.map { entries[$0].doc &- entries[$0 - 1].doc &- 1 }, bits: widths[0],
            to: &out)
        pack(entries.lazy.map(\.bodyTF), bits: widths[1], to: &out)
        pack(entries.lazy.map(\.titleTF), bits: widths[2], to: &out)
    }

    static func header(count: Int, firstDoc: UInt32, docsBytes: Int, pairs: [Bound])
        -> [UInt8]
    {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        putVarint(UInt32(truncatingIfNeeded: count), &out)
        putVarint(firstDoc, &out)
        putVarint(UInt32(truncatingIfNeeded: docsBytes), &out)
        let f = frontier(pairs)
        out.append(UInt8(truncatingIfNeeded: f.count / 2))
        for v in f { putVarint(v, &out) }
        return out
    }

    @inline(__always)
    static func appendPositions(_ positions: some Collection<UInt32>, to out: inout [UInt8]) {
        var previous: UInt32 = 0
        var first = true
        for p in positions {
            putVarint(first ? p : p &- previous, &out)
            previous = p
            first = false
        }
    }

    /// Unpacks the doc numbers of a block into `out` (room for `h.count`); checks that they rise
    /// and returns the last.
    @inline(__always)
    static func unpackDocs(
        _ bytes: UnsafeRawBufferPointer, _ h: Header, into out: UnsafeMutablePointer<UInt32>
    ) throws(SearchIndexError) -> UInt32 {
        let c = h.columns
        var doc = UInt64(h.firstDoc)
        out[0] = h.firstDoc
        let bits = UInt64(c.docBits)
        let mask = (1 &<< bits) &- 1
        // A running buffer of bits, refilled 32 at a time (bytewise near the value's end).
        var acc: UInt64 = 0
        var have: UInt64 = 0
        var at = c.docs
        for k in 1..<max(1, h.count) {
            if have < bits {
                acc |= (littleEndianWord(bytes, at: at) & 0xFFFF_FFFF) &<< have
                have &+= 32
                at &+= 4
            }
            doc &+= (acc & mask) &+ 1
            acc &>>= bits
            have &-= bits
            out[k] = UInt32(truncatingIfNeeded: doc)
        }
        // Each delta is at least one, so only the sum can overflow, and only past the last.
        guard doc < UInt64(UInt32.max) else { throw .damaged("a posting block's document numbers overflow") }
        return UInt32(truncatingIfNeeded: doc)
    }

    /// Decodes every entry.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(SearchIndexError) -> [Entry] {
        let h = try Header(bytes)
        let docs = UnsafeMutablePointer<UInt32>.allocate(capacity: h.count)
        defer { docs.deallocate() }
        _ = try unpackDocs(bytes, h, into: docs)
        var entries: [Entry] = []
        entries.reserveCapacity(h.count)
        for k in 0..<h.count {
            let (body, title) = h.columns.entry(k, bytes)
            entries.append(Entry(doc: docs[k], titleTF: title, bodyTF: body))
        }
        return entries
    }
}

/// Appends `v` as a LEB128 varint.
@inline(__always)
func putVarint(_ v: UInt32, _ out: inout [UInt8]) {
    var v = v
    while v >= 0x80 {
        out.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
    }
    out.append(UInt8(truncatingIfNeeded: v))
}

/// Reads LEB128 varints from a buffer; damaged input throws instead of trapping.
struct VarintReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    @inline(__always)
    mutating func byte() throws(SearchIndexError) -> UInt8 {
        guard offset >= 0, offset < bytes.count else { throw .damaged("a search index value is cut short") }
        let b = bytes.load(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        return b
    }

    @inline(__always)
    mutating func next() throws(SearchIndexError) -> UInt32 {
        let b0 = try byte()
        if b0 < 0x80 { return UInt32(b0) }
        var result = UInt32(b0 & 0x7F)
        var shift: UInt32 = 7
        while true {
            let b = try byte()
            guard shift < 28 || (shift == 28 && b <= 0x0F) else { throw .damaged("a search index number overflows") }
            result |= UInt32(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }
}

/// The search index's stored bytes are not what this code wrote, or calls disagree with them.
public enum SearchIndexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stored bytes do not decode. Rebuilding the projections repairs the index.
    case damaged(String)
    /// A call does not match what the index holds (e.g. a note created twice).
    case inconsistent(String)
    /// More notes than document numbers (over 4 billion were ever indexed). A rebuild renumbers them.
    case full

    public var description: String {
        switch self {
        case .damaged(let what): return "the search index is damaged (\(what)); rebuild the projections to repair it"
        case .inconsistent(let what):
            return "the search index disagrees with the notes (\(what)); rebuild the projections"
        case .full: return "the search index ran out of document numbers; rebuild the projections to renumber them"
        }
    }
}
