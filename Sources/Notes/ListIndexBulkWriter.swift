import Basics
import EventStore
import Glibc
import LMDB

/// Writes the listing index of a rebuild in key order without sorting the keys themselves.
///
/// A note has 6 keys and 3 per tag, one per (scope, sort order) under its status (see ``ListIndex``). Sorting
/// every key of a large notebook as byte arrays used to dominate the rebuild's own work (1.2
/// million arrays for 100,000 notes). Instead the notes are sorted once per sort order, on
/// fixed-width integers or the title bytes, each note is dropped into the buckets (one per key
/// prefix) it belongs to, in that order, and the buckets are written in prefix order. No prefix
/// is a prefix of another (they differ within their fixed layout), so this is exactly the byte
/// order of the keys, and every put can use `MDB_APPEND`.
struct ListIndexBulkWriter {
    /// The notes, for the rows the default listing's keys hold (see ``ListIndex/covers(_:)``).
    private let notes: [Note]
    private let ids: [Identifier]
    /// Per note: the date sort values as the integers whose big-endian bytes the keys hold.
    private let updated: [UInt64]
    private let created: [UInt64]
    /// The suffix of every title key (title key bytes, then the id), one after another;
    /// note `i`'s ends at `titleEnds[i]`.
    private var titles: [UInt8] = []
    private var titleEnds: [Int] = []
    private var categories: [Identifier] = []
    private var tags: [Identifier] = []
    /// Note indices per bucket, in key order within each bucket.
    private var buckets: [[Int32]] = []

    private static let sorts = ListQuery.Sort.allCases.count

    init(_ notes: [Note]) {
        self.notes = notes
        let count = notes.count
        var ids: [Identifier] = []
        var updated: [UInt64] = []
        var created: [UInt64] = []
        var titles: [UInt8] = []
        var titleEnds: [Int] = []
        var categories: [Identifier] = []
        var tags: [Identifier] = []
        ids.reserveCapacity(count)
        updated.reserveCapacity(count)
        created.reserveCapacity(count)
        titleEnds.reserveCapacity(count)
        var categoryIndex: [Identifier: Int] = [:]
        var tagIndex: [Identifier: Int] = [:]
        // Fields read in place (a note taken out of the array whole is four retains and four
        // releases, a few percent of a rebuild's writer).
        notes.withUnsafeBufferPointer { notes in
            for i in 0..<count {
                ids.append(notes[i].id)
                updated.append(Self.descending(notes[i].updatedAt))
                created.append(Self.descending(notes[i].createdAt))
                titles.append(contentsOf: ListIndex.titleKey(notes[i].title))
                notes[i].id.withBytes { titles.append(contentsOf: $0) }
                titleEnds.append(titles.count)
                if let c = notes[i].category, categoryIndex[c] == nil {
                    categoryIndex[c] = categories.count
                    categories.append(c)
                }
                for t in notes[i].tags where tagIndex[t] == nil {
                    tagIndex[t] = tags.count
                    tags.append(t)
                }
            }
        }
        self.ids = ids
        self.updated = updated
        self.created = created
        self.titles = titles
        self.titleEnds = titleEnds
        self.categories = categories
        self.tags = tags
        let scopes = 2 + categories.count + tags.count
        let firstTag = 2 + categories.count
        buckets = Array(repeating: [], count: 4 * scopes * Self.sorts * 2)
        // Per note: its status and pinned group, and its scopes beyond "every note" (its category
        // or uncategorized, then its tags), one flat list (`scopeEnds[i]` ends note i's).
        var status: [UInt8] = []
        var pinned: [UInt8] = []
        var scopeList: [Int32] = []
        var scopeEnds: [Int] = []
        status.reserveCapacity(count)
        pinned.reserveCapacity(count)
        scopeEnds.reserveCapacity(count)
        scopeList.reserveCapacity(count)
        notes.withUnsafeBufferPointer { notes in
            for i in 0..<count {
                status.append(notes[i].status.rawValue)
                pinned.append(notes[i].pinned ? 0 : 1)
                scopeList.append(Int32(notes[i].category.flatMap { categoryIndex[$0] }.map { 2 + $0 } ?? 1))
                for t in notes[i].tags { scopeList.append(Int32(firstTag + tagIndex[t]!)) }
                scopeEnds.append(scopeList.count)
            }
        }
        for sort in ListQuery.Sort.allCases {
            for i in order(sort) {
                let n = Int(i)
                let (s, p) = (Int(status[n]), Int(pinned[n]))
                buckets[Self.bucket(status: s, scope: 0, scopes: scopes, sort: sort, pinned: p)].append(i)
                for k in (n == 0 ? 0 : scopeEnds[n - 1])..<scopeEnds[n] {
                    buckets[Self.bucket(status: s, scope: Int(scopeList[k]), scopes: scopes, sort: sort, pinned: p)]
                        .append(i)
                }
            }
        }
    }

    static func bucket(status: Int, scope: Int, scopes: Int, sort: ListQuery.Sort, pinned: Int) -> Int {
        ((status * scopes + scope) * sorts + Int(sort.rawValue)) * 2 + pinned
    }

    /// The sort value of a date key, as the integer whose big-endian bytes the key holds.
    static func descending(_ t: Int64) -> UInt64 { ~(UInt64(bitPattern: t) ^ 0x8000_0000_0000_0000) }

    private func titleRange(_ i: Int) -> Range<Int> { (i == 0 ? 0 : titleEnds[i - 1])..<titleEnds[i] }

    /// Note indices in the order of their key suffixes for `sort` (value, then id).
    private func order(_ sort: ListQuery.Sort) -> [Int32] {
        var order = (0..<Int32(ids.count)).map { $0 }
        switch sort {
        case .updated, .created:
            let values = sort == .updated ? updated : created
            values.withUnsafeBufferPointer { v in
                ids.withUnsafeBufferPointer { id in
                    order.sort { a, b in
                        let (x, y) = (Int(a), Int(b))
                        return (v[x], id[x].high, id[x].low) < (v[y], id[y].high, id[y].low)
                    }
                }
            }
        case .title:
            titles.withUnsafeBytes { t in
                order.sort { a, b in
                    Self.bytesPrecede(
                        UnsafeRawBufferPointer(rebasing: t[titleRange(Int(a))]),
                        UnsafeRawBufferPointer(rebasing: t[titleRange(Int(b))]))
                }
            }
        }
        return order
    }

    static func bytesPrecede(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
        let common = min(x.count, y.count)
        let c = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
        return c != 0 ? c < 0 : x.count < y.count
    }

    static func bytesPrecede(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in bytesPrecede(x, y) } }
    }

    private struct Prefix {
        let bucket: Int
        let sort: ListQuery.Sort
        let bytes: [UInt8]
        /// Whether its keys hold the notes' rows.
        var covers: Bool { ListIndex.covers(bytes) }
    }

    /// The prefix of each bucket that holds notes, in key order.
    private func bucketPrefixes() -> [Prefix] {
        let scopes = 2 + categories.count + tags.count
        var out: [Prefix] = []
        for status in 0..<4 {
            guard let filter = ListQuery.StatusFilter(rawValue: UInt8(status)) else { continue }
            for s in 0..<scopes {
                let scope: ListQuery.Scope =
                    s == 0
                    ? .any
                    : s == 1
                        ? .uncategorized
                        : s < 2 + categories.count ? .category(categories[s - 2]) : .tag(tags[s - 2 - categories.count])
                for sort in ListQuery.Sort.allCases {
                    for pinned in 0..<2 {
                        let b = Self.bucket(status: status, scope: s, scopes: scopes, sort: sort, pinned: pinned)
                        guard !buckets[b].isEmpty else { continue }
                        let bytes = ListIndex.prefix(
                            status: filter, scope: scope, sort: sort, pinnedGroup: UInt8(pinned))
                        out.append(Prefix(bucket: b, sort: sort, bytes: bytes))
                    }
                }
            }
        }
        out.sort { Self.bytesPrecede($0.bytes, $1.bytes) }
        return out
    }

    /// Writes every key into the empty `database`, at most `batch` keys per transaction (so
    /// commands of other processes are not held up for the whole rebuild).
    func write(context: any ProjectionBulkWriter, into database: Database, batch: Int) throws {
        let prefixes = bucketPrefixes()
        var next = (bucket: 0, item: 0)
        while next.bucket < prefixes.count {
            // The body may run again (when the map grows): it starts from `start` each time.
            let start = next
            next = try context.write { txn in
                try txn.withCursor(database) { c in try write(prefixes, from: start, batch: max(batch, 1), cursor: c) }
            }
        }
    }

    private func write(
        _ prefixes: [Prefix], from start: (bucket: Int, item: Int), batch: Int, cursor c: borrowing Cursor
    )
        throws -> (bucket: Int, item: Int)
    {
        var (b, item) = start
        var written = 0
        var key = [UInt8](repeating: 0, count: ListIndex.longestKey)
        let empty: [UInt8] = []
        try empty.withUnsafeBytes { none in
            try titles.withUnsafeBytes { titleBytes in
                try key.withUnsafeMutableBytes { k in
                    guard let base = k.baseAddress else { return }
                    while b < prefixes.count && written < batch {
                        let prefix = prefixes[b]
                        let members = buckets[prefix.bucket]
                        let p = prefix.bytes.count
                        prefix.bytes.withUnsafeBytes { k.copyMemory(from: $0) }
                        while item < members.count && written < batch {
                            let i = Int(members[item])
                            var length = p
                            switch prefix.sort {
                            case .updated, .created:
                                let v = prefix.sort == .updated ? updated[i] : created[i]
                                base.storeBytes(of: v.bigEndian, toByteOffset: length, as: UInt64.self)
                                base.storeBytes(of: ids[i].high.bigEndian, toByteOffset: length + 8, as: UInt64.self)
                                base.storeBytes(of: ids[i].low.bigEndian, toByteOffset: length + 16, as: UInt64.self)
                                length += 24
                            case .title:
                                let suffix = UnsafeRawBufferPointer(rebasing: titleBytes[titleRange(i)])
                                UnsafeMutableRawBufferPointer(rebasing: k[length..<(length + suffix.count)])
                                    .copyMemory(from: suffix)
                                length += suffix.count
                            }
                            let key = UnsafeRawBufferPointer(rebasing: k[0..<length])
                            if prefix.covers {
                                try notes.withUnsafeBufferPointer { notes in
                                    try NoteRow(notes[i]).encoded().withUnsafeBytes { row in
                                        try c.put(key, row, flags: .append)
                                    }
                                }
                            } else {
                                try c.put(key, none, flags: .append)
                            }
                            item += 1
                            written += 1
                        }
                        if item == members.count {
                            b += 1
                            item = 0
                        }
                    }
                }
            }
        }
        return (b, item)
    }
}
