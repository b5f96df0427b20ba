import LMDB

/// The lengths of the notes, dense: `search_lengths` maps `doc / perChunk` (u32 BE) to
/// ``perChunk`` little-endian u32 lengths (0 for a number no note holds). Scoring reads a note's
/// length here, by its doc number, so that no posting carries it: a thousand notes to a value,
/// so a query reads few values, and one page holds a value.
enum LengthChunk {
    static let perChunk = 1_000
    static let size = perChunk * 4

    static func key(_ doc: UInt32) -> [UInt8] { bigEndian(doc / UInt32(perChunk)) }
    static func offset(_ doc: UInt32) -> Int { Int(doc % UInt32(perChunk)) * 4 }

    static func store(_ length: UInt32, into p: UnsafeMutableRawBufferPointer, at o: Int) {
        p.storeBytes(of: length.littleEndian, toByteOffset: o, as: UInt32.self)
    }

    static func load(_ p: UnsafeRawBufferPointer, at o: Int) -> UInt32 {
        UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))
    }
}

/// The word positions of one note: the value under its doc number (u32 BE) in
/// `search_positions`, absent for a note without terms. Each term of the note, in the order of
/// its first occurrence:
///
/// ```
/// varint termBytes, the term, varint positionBytes, the positions (varints: first absolute, then deltas)
/// ```
///
/// Title positions are numbered from 0 and body positions from the title's length + 1 (see
/// ``TermTable/occurrences(title:body:stemmer:into:)``). Phrases read them; nothing else does, so
/// an edit writes this one value instead of every posting whose positions moved.
enum NotePositions {
    /// Appends one term's entry to a note's value; `scratch` is working space.
    static func append(
        term: UnsafeBufferPointer<UInt8>, positions: some Collection<UInt32>, to out: inout [UInt8],
        scratch: inout [UInt8]
    ) {
        putVarint(UInt32(truncatingIfNeeded: term.count), &out)
        out.append(contentsOf: term)
        scratch.removeAll(keepingCapacity: true)
        PostingBlock.appendPositions(positions, to: &scratch)
        putVarint(UInt32(truncatingIfNeeded: scratch.count), &out)
        out.append(contentsOf: scratch)
    }

    /// Calls `body` with each term of a note's value and the byte range of its positions.
    static func forEachTerm(
        _ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Range<Int>) throws -> Bool
    ) throws {
        var r = VarintReader(value, at: 0)
        while r.offset < value.count {
            let termBytes = Int(try r.next())
            guard termBytes <= value.count - r.offset else {
                throw SearchIndexError.damaged("a note's positions are cut short")
            }
            let term = UnsafeRawBufferPointer(rebasing: value[r.offset..<(r.offset + termBytes)])
            r.offset += termBytes
            let positionBytes = Int(try r.next())
            guard positionBytes <= value.count - r.offset else {
                throw SearchIndexError.damaged("a note's positions are cut short")
            }
            let range = r.offset..<(r.offset + positionBytes)
            r.offset += positionBytes
            guard try body(term, range) else { return }
        }
    }

    /// The positions of `term` in a note's value, or nil when the note has no such term.
    static func positions(of term: [UInt8], in value: UnsafeRawBufferPointer) throws -> [UInt32]? {
        var found: Range<Int>?
        try forEachTerm(value) { t, range in
            if t.elementsEqual(term) {
                found = range
                return false
            }
            return true
        }
        return try found.map { try decode(value, $0) }
    }

    /// Decodes positions from `range` of `bytes` (first absolute, then deltas).
    static func decode(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws(SearchIndexError) -> [UInt32] {
        var out: [UInt32] = []
        var r = VarintReader(UnsafeRawBufferPointer(rebasing: bytes[..<range.upperBound]), at: range.lowerBound)
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

/// What a query reads of a note besides its postings, through the query's transaction: its
/// length, from a cache of the last length chunk (docs mostly arrive in order), and its word
/// positions. Lives only as long as the read it was made for.
final class NoteReader {
    private let txn: Transaction
    private let db: SearchDatabases
    private var chunkNumber = UInt32.max
    private var chunk = UnsafeRawBufferPointer(start: nil, count: 0)

    init(_ txn: borrowing Transaction, _ db: SearchDatabases) {
        self.txn = txn.lend()
        self.db = db
    }

    /// The length of the note numbered `doc`.
    @inline(__always)
    func length(of doc: UInt32) throws -> UInt32 {
        let n = doc / UInt32(LengthChunk.perChunk)
        if n != chunkNumber { try load(n) }
        return LengthChunk.load(chunk, at: LengthChunk.offset(doc))
    }

    private func load(_ n: UInt32) throws {
        guard let c = try bigEndian(n).withUnsafeBytes({ k in try txn.get(db.lengths, k) }) else {
            throw SearchIndexError.damaged(
                "the lengths of notes \(UInt64(n) * UInt64(LengthChunk.perChunk)) on are missing")
        }
        guard c.count == LengthChunk.size else { throw SearchIndexError.damaged("a length chunk has \(c.count) bytes") }
        chunk = c
        chunkNumber = n
    }

    /// The positions of `term` in the note numbered `doc` (empty when it has none).
    func positions(of term: [UInt8], in doc: UInt32) throws -> [UInt32] {
        guard let value = try bigEndian(doc).withUnsafeBytes({ k in try txn.get(db.positions, k) }) else {
            throw SearchIndexError.damaged("note \(doc) has postings but no positions")
        }
        guard let found = try NotePositions.positions(of: term, in: value) else {
            throw SearchIndexError.damaged("note \(doc) has a posting of a term it has no positions of")
        }
        return found
    }
}

extension SearchIndex {
    /// Writes `items` into the fixed-size slots of the chunks of `db` (`perChunk` slots of
    /// `slotSize` bytes under `doc / perChunk`, u32 BE), reading and writing each chunk once;
    /// a chunk not there yet starts as zeros.
    static func writeSlots<Value>(
        _ items: [(doc: UInt32, value: Value)], perChunk: Int, slotSize: Int, into db: Database,
        in txn: borrowing Transaction, store: (Value, UnsafeMutableRawBufferPointer, Int) -> Void
    ) throws {
        let sorted = items.sorted { $0.doc < $1.doc }
        let chunkBytes = perChunk * slotSize
        var k = 0
        while k < sorted.count {
            let chunkNumber = sorted[k].doc / UInt32(perChunk)
            let key = bigEndian(chunkNumber)
            var chunk = try txn.get(db, key: key) ?? []
            if chunk.count != chunkBytes { chunk = [UInt8](repeating: 0, count: chunkBytes) }
            chunk.withUnsafeMutableBytes { p in
                while k < sorted.count && sorted[k].doc / UInt32(perChunk) == chunkNumber {
                    store(sorted[k].value, p, Int(sorted[k].doc % UInt32(perChunk)) * slotSize)
                    k += 1
                }
            }
            try txn.put(db, key: key, value: chunk)
        }
    }

    /// Writes the lengths of notes, each chunk once.
    static func writeLengths(
        _ lengths: [(doc: UInt32, value: UInt32)], in txn: borrowing Transaction, _ db: SearchDatabases
    ) throws {
        try writeSlots(
            lengths, perChunk: LengthChunk.perChunk, slotSize: 4, into: db.lengths, in: txn, store: LengthChunk.store)
    }
}
