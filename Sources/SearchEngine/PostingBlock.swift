import CIntrinsics
/// The byte format of a block of postings: the value under `term 0x00 lastDoc` in the postings
/// database. Up to ``maxSize`` documents of one term, in ordinal order:
///
/// ```
/// header     varint count, varint firstDoc, varint docsBytes, u8 boundCount, boundCount x (varint tf, varint length)
/// documents  u8 docBits, u8 bodyBits, u8 titleBits, u8 lengthBits, then four bit-packed columns,
///            each starting on a byte: count - 1 doc deltas less one, count body tfs,
///            count title tfs, count lengths (each value `bits` wide, least significant bit first)
/// positions  count x (titleTF + bodyTF) x varint (first absolute, then deltas)
/// ```
///
/// The columns have a fixed width per block, so a reader unpacks the doc numbers without a
/// branch per byte and reads the tf and length of just the documents it scores (a conjunction
/// scores few of the documents it decodes). A column whose values are all zero (titles, mostly)
/// takes no byte.
///
/// The bounds are the block's impact frontier: (weighted tf, document length) pairs such that
/// every posting has a smaller or equal tf and a larger or equal length than one of them (the
/// weighted tf, ``frontierTF(title:body:)``, is at least the tf the score sees). Since BM25's
/// one-field share grows with tf and falls with length, the best share of a pair is an upper
/// bound of every such share in the block whatever the collection statistics are; the title's
/// own share is bounded by the title column's width (see ``bound(of:_:)``). That is what block-max pruning
/// needs. Positions come last so scoring never reads them.
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
        var length: UInt32
    }

    /// The parsed header of a block.
    struct Header {
        var count: Int
        var firstDoc: UInt32
        var docsStart: Int
        var docsEnd: Int
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
            // The frontier's pairs (read by ``PostingBlock/bound(of:_:)``), skipped.
            for _ in 0..<(2 * boundCount) { _ = try r.next() }
            guard docsBytes <= bytes.count - r.offset, docsBytes >= 4 else {
                throw .damaged("a posting block is cut short")
            }
            let start = r.offset
            let widths = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self))
            let docBits = Int(widths & 0xFF)
            let bodyBits = Int(widths >> 8 & 0xFF)
            let titleBits = Int(widths >> 16 & 0xFF)
            let lengthBits = Int(widths >> 24)
            // Every posting has the term at least once, so the tf columns are not both empty.
            guard docBits <= 32, bodyBits <= 32, titleBits <= 32, lengthBits <= 32, bodyBits + titleBits > 0 else {
                throw .damaged("a posting block has a bad column width")
            }
            let docsColumn = start + 4
            let bodyColumn = docsColumn + PostingBlock.columnBytes(count - 1, docBits)
            let titleColumn = bodyColumn + PostingBlock.columnBytes(count, bodyBits)
            let lengthColumn = titleColumn + PostingBlock.columnBytes(count, titleBits)
            guard lengthColumn + PostingBlock.columnBytes(count, lengthBits) == start + docsBytes else {
                throw .damaged("a posting block's documents do not add up")
            }
            self.count = count
            self.firstDoc = firstDoc
            self.docsStart = start
            self.docsEnd = start + docsBytes
            self.columns = Columns(
                docs: docsColumn, body: bodyColumn, title: titleColumn, length: lengthColumn, docBits: docBits,
                bodyBits: bodyBits, titleBits: titleBits, lengthBits: lengthBits)
        }
    }

    /// The highest score any posting of the block in `bytes` can have, from its header's
    /// frontier and its title column's width alone (a query asks it of every block of a common
    /// word, most of which it never loads; the columns are checked when a block is loaded): the
    /// best one-field share of a frontier pair (a pair's tf, ``frontierTF(title:body:)``, is at
    /// least each of its postings' ``BM25/fieldTF(title:body:)``) plus the title's own share of the
    /// most title occurrences the column's width can hold (none when it is 0, as in most blocks).
    @inline(__always)
    static func bound(of bytes: UnsafeRawBufferPointer, _ scorer: BM25.TermScorer) throws(SearchIndexError) -> Double {
        var r = VarintReader(bytes, at: 0)
        _ = try r.next()
        _ = try r.next()
        _ = try r.next()
        let boundCount = Int(try r.byte())
        guard boundCount >= 1, boundCount <= maxBounds else { throw .damaged("a posting block has a bad header") }
        var best = -Double.infinity
        for _ in 0..<boundCount {
            let tf = try r.next()
            best = max(best, scorer.score(tf: tf, length: try r.next()))
        }
        _ = try r.byte()
        _ = try r.byte()
        let titleBits = try r.byte()
        guard titleBits <= 32 else { throw .damaged("a posting block has a bad column width") }
        if titleBits > 0 {
            best += scorer.titleScore(UInt32(truncatingIfNeeded: (UInt64(1) << UInt64(titleBits)) - 1))
        }
        return best
    }

    /// The tf of a posting in the frontier's pairs: its body occurrences plus three times its
    /// title's, saturating (the one field's tf before 2026-12-07, when a title occurrence counted
    /// three; kept as what is stored, so that indexes written before and after are the same, and
    /// a bound of the one field's tf, body plus title, all the same).
    @inline(__always)
    static func frontierTF(title: UInt32, body: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: min(UInt64(body) + UInt64(title) * 3, UInt64(UInt32.max)))
    }

    /// Appends the frontier of the entries' `(weighted tf, length)` pairs, at most `maxBounds`
    /// long, to `out`: its count as a byte, then each pair as two varints.
    static func appendFrontier(of entries: ArraySlice<Entry>, to out: inout [UInt8]) {
        // The Pareto points (no other pair has a tf as high and a length as short), found in one
        // pass: the frontier is short, so this beats sorting every pair of the block. The points
        // live on the stack (this runs for every block an update writes).
        withUnsafeTemporaryAllocation(of: (tf: UInt32, length: UInt32).self, capacity: max(1, entries.count)) {
            points in
            var n = 0
            for e in entries {
                let p = (tf: frontierTF(title: e.titleTF, body: e.bodyTF), length: e.length)
                var dominated = false
                for i in 0..<n where points[i].tf >= p.tf && points[i].length <= p.length {
                    dominated = true
                    break
                }
                if dominated { continue }
                var kept = 0
                for i in 0..<n where !(p.tf >= points[i].tf && p.length <= points[i].length) {
                    points[kept] = points[i]
                    kept += 1
                }
                points[kept] = p
                n = kept + 1
            }
            // By falling tf, hence by falling length.
            var live = UnsafeMutableBufferPointer(rebasing: points[0..<n])
            live.sort { $0.tf > $1.tf }
            // Along the frontier tf falls and length falls; a run merged into (its first tf, its
            // last length) dominates every point of the run.
            let groups = min(n, maxBounds)
            out.append(UInt8(truncatingIfNeeded: groups))
            for g in 0..<groups {
                putVarint(points[g * n / groups].tf, &out)
                putVarint(points[(g + 1) * n / groups - 1].length, &out)
            }
        }
    }

    /// Where a block's columns start (byte offsets in the block) and how wide their values are.
    struct Columns {
        var docs: Int
        var body: Int
        var title: Int
        var length: Int
        var docBits: Int
        var bodyBits: Int
        var titleBits: Int
        var lengthBits: Int

        /// The body tf, title tf and length of entry `k`.
        @inline(__always)
        func entry(_ k: Int, _ bytes: UnsafeRawBufferPointer) -> (body: UInt32, title: UInt32, length: UInt32) {
            (
                PostingBlock.unpack(bytes, body, k, bodyBits), PostingBlock.unpack(bytes, title, k, titleBits),
                PostingBlock.unpack(bytes, length, k, lengthBits)
            )
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
    static func pack(_ values: some Sequence<UInt32>, bits: Int, to out: inout [UInt8]) {
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

    /// Encodes a block. `positions` gives each entry's encoded positions section.
    static func encode(_ entries: [Entry], positions: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        positions.withUnsafeBytes { encode(entries[...], positions: $0, into: &out) }
        return out
    }

    /// Appends the encoded block of `entries` (in doc order) and their positions sections to
    /// `out`, with no array but `out` (an update encodes a block for every term it touches).
    static func encode(_ entries: ArraySlice<Entry>, positions: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var docMax: UInt32 = 0
        var bodyMax: UInt32 = 0
        var titleMax: UInt32 = 0
        var lengthMax: UInt32 = 0
        var previous: UInt32?
        for e in entries {
            if let previous { docMax = max(docMax, e.doc &- previous &- 1) }
            previous = e.doc
            bodyMax = max(bodyMax, e.bodyTF)
            titleMax = max(titleMax, e.titleTF)
            lengthMax = max(lengthMax, e.length)
        }
        let count = entries.count
        let docBits = bitWidth(docMax)
        let bodyBits = bitWidth(bodyMax)
        let titleBits = bitWidth(titleMax)
        let lengthBits = bitWidth(lengthMax)
        let docsBytes =
            4 + columnBytes(count - 1, docBits) + columnBytes(count, bodyBits) + columnBytes(count, titleBits)
            + columnBytes(count, lengthBits)
        out.reserveCapacity(out.count + 24 + 10 * maxBounds + docsBytes + positions.count)
        putVarint(UInt32(truncatingIfNeeded: count), &out)
        putVarint(entries.first?.doc ?? 0, &out)
        putVarint(UInt32(truncatingIfNeeded: docsBytes), &out)
        appendFrontier(of: entries, to: &out)
        out.append(UInt8(docBits))
        out.append(UInt8(bodyBits))
        out.append(UInt8(titleBits))
        out.append(UInt8(lengthBits))
        pack(zip(entries, entries.dropFirst()).lazy.map { $1.doc &- $0.doc &- 1 }, bits: docBits, to: &out)
        pack(entries.lazy.map(\.bodyTF), bits: bodyBits, to: &out)
        pack(entries.lazy.map(\.titleTF), bits: titleBits, to: &out)
        pack(entries.lazy.map(\.length), bits: lengthBits, to: &out)
        out.append(contentsOf: positions)
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
    ///
    /// Each delta is read on its own from the eight bytes at its first byte (no running bit
    /// buffer): the loads do not wait on each other and there is no refill branch to mispredict,
    /// so only the running sum is serial. The last few deltas, whose eight bytes would run past
    /// the block, are read bytewise.
    ///
    /// Where the processor has AVX2 (``vectorUnpack``), whole groups of deltas at most 16 bits
    /// wide are unpacked eight at a time (`notes_unpack_doc_groups`); `vector: false` keeps to
    /// the scalar loop (for tests comparing the two).
    @inline(__always)
    static func unpackDocs(
        _ bytes: UnsafeRawBufferPointer, _ h: Header, into out: UnsafeMutablePointer<UInt32>,
        vector: Bool = vectorUnpack
    ) throws(SearchIndexError) -> UInt32 {
        let c = h.columns
        var doc = UInt64(h.firstDoc)
        out[0] = h.firstDoc
        let deltas = max(0, h.count &- 1)
        let bits = c.docBits
        let mask = (UInt64(1) &<< UInt64(bits)) &- 1
        // Deltas whose eight bytes lie in the block: their first byte at most `room` into the column.
        let room = bytes.count &- 8 &- c.docs
        let direct = room < 0 ? 0 : bits == 0 ? deltas : min(deltas, ((room &<< 3) &+ 7) / bits &+ 1)
        var done = 0
        if direct > 0, let base = bytes.baseAddress {
            let column = base + c.docs
            // Whole groups of eight, through a copy of the loop for each width: eight deltas take
            // `bits` bytes, so every shift and offset in a group is a constant (a shift by a
            // register costs three operations on this processor, and was a third of a query's
            // unpacking).
            let groups = direct &>> 3
            // Groups whose 16 bytes from their start lie in the block (all but the last one or
            // two, whose bytes the later columns and positions usually cover too).
            let room16 = bytes.count &- 16 &- c.docs
            let vectored = vector && bits >= 1 && bits <= 16 && room16 >= 0 ? min(groups, room16 / bits &+ 1) : 0
            if vectored > 0 {
                let start = UInt32(truncatingIfNeeded: doc)
                let last = notes_unpack_doc_groups(
                    column.assumingMemoryBound(to: UInt8.self), Int32(truncatingIfNeeded: vectored),
                    Int32(truncatingIfNeeded: bits), start, out + 1)
                // The groups' sum is below 2^24 (256 deltas of 16 bits at most), so a sum past
                // 2^32 shows as a last doc below the first: kept past 2^32 for the check below.
                doc = UInt64(last) &+ (last < start ? 1 &<< 32 : 0)
                done = vectored &<< 3
            }
            if groups > vectored {
                doc = unpackGroups(
                    column + vectored &* bits, groups: groups &- vectored, bits: bits, from: doc, into: out + 1 + done)
                done = groups &<< 3
            }
            for k in done..<direct {
                let bit = k &* bits
                let word = UInt64(littleEndian: (column + (bit &>> 3)).loadUnaligned(as: UInt64.self))
                doc &+= ((word &>> UInt64(bit & 7)) & mask) &+ 1
                out[k &+ 1] = UInt32(truncatingIfNeeded: doc)
            }
        }
        for k in direct..<deltas {
            let bit = k &* bits
            let word = littleEndianWord(bytes, at: c.docs &+ (bit &>> 3))
            doc &+= ((word &>> UInt64(bit & 7)) & mask) &+ 1
            out[k &+ 1] = UInt32(truncatingIfNeeded: doc)
        }
        // Each delta is at least one, so only the sum can overflow, and only past the last.
        guard doc < UInt64(UInt32.max) else { throw .damaged("a posting block's document numbers overflow") }
        return UInt32(truncatingIfNeeded: doc)
    }

    /// Whether ``unpackDocs(_:_:into:vector:)`` unpacks with AVX2 on this processor.
    static let vectorUnpack = notes_unpack_vector() == 1

    /// `groups` groups of eight deltas of width `bits` from `column` (each group's `bits` bytes
    /// and the eight after them readable), each doc the one before plus its delta plus one, from
    /// `doc`, into `out`; returns the last doc. One copy of ``unpackGroups(_:groups:width:from:into:)``
    /// per width, so that the compiler makes its shifts constants.
    @inline(__always)
    static func unpackGroups(
        _ column: UnsafeRawPointer, groups: Int, bits: Int, from doc: UInt64, into out: UnsafeMutablePointer<UInt32>
    ) -> UInt64 {
        switch bits {
        case 0: return unpackGroups(column, groups: groups, width: 0, from: doc, into: out)
        case 1: return unpackGroups(column, groups: groups, width: 1, from: doc, into: out)
        case 2: return unpackGroups(column, groups: groups, width: 2, from: doc, into: out)
        case 3: return unpackGroups(column, groups: groups, width: 3, from: doc, into: out)
        case 4: return unpackGroups(column, groups: groups, width: 4, from: doc, into: out)
        case 5: return unpackGroups(column, groups: groups, width: 5, from: doc, into: out)
        case 6: return unpackGroups(column, groups: groups, width: 6, from: doc, into: out)
        case 7: return unpackGroups(column, groups: groups, width: 7, from: doc, into: out)
        case 8: return unpackGroups(column, groups: groups, width: 8, from: doc, into: out)
        case 9: return unpackGroups(column, groups: groups, width: 9, from: doc, into: out)
        case 10: return unpackGroups(column, groups: groups, width: 10, from: doc, into: out)
        case 11: return unpackGroups(column, groups: groups, width: 11, from: doc, into: out)
        case 12: return unpackGroups(column, groups: groups, width: 12, from: doc, into: out)
        case 13: return unpackGroups(column, groups: groups, width: 13, from: doc, into: out)
        case 14: return unpackGroups(column, groups: groups, width: 14, from: doc, into: out)
        case 15: return unpackGroups(column, groups: groups, width: 15, from: doc, into: out)
        case 16: return unpackGroups(column, groups: groups, width: 16, from: doc, into: out)
        default: return unpackGroups(column, groups: groups, width: bits, from: doc, into: out)
        }
    }

    @inline(__always)
    private static func unpackGroups(
        _ column: UnsafeRawPointer, groups: Int, width: Int, from start: UInt64, into out: UnsafeMutablePointer<UInt32>
    ) -> UInt64 {
        let mask = (UInt64(1) &<< UInt64(width)) &- 1
        var doc = start
        var at = column
        var o = out
        for _ in 0..<groups {
            for u in 0..<8 {
                let bit = u &* width
                let word = UInt64(littleEndian: (at + (bit &>> 3)).loadUnaligned(as: UInt64.self))
                doc &+= ((word &>> UInt64(bit & 7)) & mask) &+ 1
                o[u] = UInt32(truncatingIfNeeded: doc)
            }
            at += width
            o += 8
        }
        return doc
    }

    /// Decodes every entry and the byte range of each entry's positions.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(SearchIndexError) -> (
        entries: [Entry], positions: [Range<Int>]
    ) {
        var entries: [Entry] = []
        var ranges: [Range<Int>] = []
        try decode(bytes, into: &entries, positions: &ranges)
        return (entries, ranges)
    }

    /// Decodes every entry and the byte range of each entry's positions into `entries` and
    /// `ranges`, replacing what they held (their storage is kept for the next block).
    static func decode(
        _ bytes: UnsafeRawBufferPointer, into entries: inout [Entry], positions ranges: inout [Range<Int>]
    )
        throws(SearchIndexError)
    {
        let h = try Header(bytes)
        entries.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        entries.reserveCapacity(h.count)
        ranges.reserveCapacity(h.count)
        try withUnsafeTemporaryAllocation(of: UInt32.self, capacity: h.count) { (docs) throws(SearchIndexError) in
            _ = try unpackDocs(bytes, h, into: docs.baseAddress!)
            for k in 0..<h.count {
                let (body, title, length) = h.columns.entry(k, bytes)
                entries.append(Entry(doc: docs[k], titleTF: title, bodyTF: body, length: length))
            }
        }
        // Only the extent of each entry's positions is needed (they are copied, not read): count
        // the bytes that end a varint. Readers of positions check the varints themselves.
        var o = h.docsEnd
        let end = bytes.count
        for e in entries {
            let start = o
            var left = UInt64(e.titleTF) + UInt64(e.bodyTF)
            guard left <= UInt64(end - start) else { throw .damaged("a posting block's positions are cut short") }
            while left > 0 {
                guard o < end else { throw .damaged("a posting block's positions are cut short") }
                if bytes.load(fromByteOffset: o, as: UInt8.self) < 0x80 { left -= 1 }
                o += 1
            }
            ranges.append(start..<o)
        }
        guard o == end else { throw .damaged("a posting block has trailing bytes") }
    }

    /// Decodes positions from `range` of `bytes` (first absolute, then deltas).
    static func positions(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws(SearchIndexError) -> [UInt32] {
        var out: [UInt32] = []
        var r = VarintReader(bytes, at: range.lowerBound)
        var p: UInt32 = 0
        var first = true
        while r.offset < range.upperBound {
            let d = try r.next()
            p = first ? d : p &+ d
            first = false
            out.append(p)
        }
        return out
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
