import Basics
import EventStore
import Glibc
import LMDB

/// The links projection's four databases for a folded state, each in key order: what a rebuild
/// writes and what `verify` compares with.
///
/// Held compactly, for a large notebook's sake: one ``LinkIndex/Holding`` per (note, title) and
/// (note, other name) pair, and the order of their keys; each entry's key and value are made as
/// it is written. A table of the entries' bytes (keys and values side by side, then sorted
/// copies) held about three times as much: 600 MB of a rebuild's peak at 10 M events, where the
/// holdings take 160 MB.
struct LinkTables {
    /// The title holdings, grouped by note in id order (see ``LinkIndex/holdings(parts:through:)``).
    private let titles: [LinkIndex.Holding]
    /// The other names' holdings, the same way.
    private let names: [LinkIndex.Holding]
    /// Indices of `titles` and `names` in their entries' key order, one per key.
    private let titleOrder: [Int]
    private let nameOrder: [Int]
    /// The distinct link targets of every current body, by target then source.
    private let links: EntryTable

    /// The tables of `state`'s notes and title history.
    init(_ state: NotebookState) {
        self.init(titleChanges: state.titleChangeParts, nameChanges: state.nameChanges, notes: state.notes)
    }

    /// The tables of notes whose title history is `titleChanges`, in parts (a note's changes
    /// all in one part, in log order).
    init(titleChanges: [[TitleChange]], nameChanges: [NameChange], notes: NoteCollection) {
        titles = LinkIndex.holdings(parts: titleChanges)
        names = LinkIndex.holdings(nameChanges)
        titleOrder = Self.keyOrder(titles)
        nameOrder = Self.keyOrder(names)
        var links = EntryTable()
        for note in notes.values where WikiLink.mayHoldLink(note.body.utf8) {
            for key in LinkIndex.keys(of: note) {
                links.append(key: LinkIndex.linkKey(key, source: note.id), value: LinkIndex.linkValue(key))
            }
        }
        links.sort()
        self.links = links
    }

    /// One of the four databases.
    enum Table: CaseIterable {
        case titles, aliases, noteTitles, links

        var database: String {
            switch self {
            case .titles: LinkIndex.titles
            case .aliases: LinkIndex.aliases
            case .noteTitles: LinkIndex.noteTitles
            case .links: LinkIndex.links
            }
        }
    }

    /// How many entries `table` gets (for `link_note_titles`, counted by making them).
    func count(_ table: Table) -> Int {
        switch table {
        case .titles: return titleOrder.count
        case .aliases: return nameOrder.count
        case .noteTitles:
            var count = 0
            Self.forEachNoteTitle(titles, names, from: Position(), limit: .max) { _ in count += 1 }
            return count
        case .links: return links.count
        }
    }

    /// Where an enumeration of a table stands: the next entry (for `link_note_titles`, the next
    /// title and other name holdings).
    struct Position: Equatable {
        var first = 0
        var second = 0
    }

    /// Calls `body` with each entry of `table`, key and value, in key order, from `start` on,
    /// at most `limit` of them (for `link_note_titles`, the keys of whole notes, at least one
    /// note's); returns where the next entry is, nil after the last.
    @discardableResult
    func forEach(
        _ table: Table, from start: Position = Position(), limit: Int = .max,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Position? {
        switch table {
        case .titles: return try Self.forEachHolding(titles, in: titleOrder, from: start, limit: limit, body)
        case .aliases: return try Self.forEachHolding(names, in: nameOrder, from: start, limit: limit, body)
        case .noteTitles:
            return try [UInt8]().withUnsafeBytes { none in
                try Self.forEachNoteTitle(titles, names, from: start, limit: limit) { key in try body(key, none) }
            }
        case .links:
            let next = try links.forEach(from: start.first, limit: limit, body)
            return next < links.count ? Position(first: next) : nil
        }
    }

    /// Writes every table into its empty database, at most about `batch` entries a transaction.
    func write(context: any ProjectionBulkWriter, databases: ProjectionDatabases, batch: Int) throws {
        for table in Table.allCases {
            var next: Position? = Position()
            while let start = next {
                next = try context.write { txn in
                    try txn.withCursor(databases[table.database]) { c in
                        try forEach(table, from: start, limit: max(1, batch)) { k, v in try c.put(k, v, flags: .append)
                        }
                    }
                }
            }
        }
    }

    /// Whether `table`'s database holds exactly its entries; and how many it holds.
    func matches(_ table: Table, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> (
        equal: Bool, stored: Int
    ) {
        var stored = 0
        var equal = true
        try txn.withCursor(databases[table.database]) { c in
            var entry = try c.first()
            _ = try forEach(table) { k, v in
                if let e = entry {
                    if !e.key.elementsEqual(k) || !e.value.elementsEqual(v) { equal = false }
                    stored += 1
                    entry = try c.next()
                } else {
                    equal = false
                }
            }
            while entry != nil {
                stored += 1
                equal = false
                entry = try c.next()
            }
        }
        return (equal, stored)
    }

    // MARK: Keys

    /// A holding's key part (the folded name itself, or its cut, see ``LinkIndex/keyPart(_:)``),
    /// passed to `body` without an array when the name is short enough to be its own key.
    @inline(__always)
    private static func withKeyPart<R>(_ h: LinkIndex.Holding, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows
        -> R
    {
        if h.folded.utf8.count <= LinkIndex.keyLimit,
            let r = try h.folded.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) })
        {
            return r
        }
        return try LinkIndex.keyPart(h.folded).withUnsafeBytes(body)
    }

    /// The indices of `holdings` in the order of their `link_titles` keys (key part, 0, note id),
    /// one per key: of two with the same key (two long names cut alike), the later holding.
    private static func keyOrder(_ holdings: [LinkIndex.Holding]) -> [Int] {
        // A name too long to be its own key is cut once, not at each comparison (a SHA-256).
        var longNames: [Int: [UInt8]] = [:]
        for (i, h) in holdings.enumerated() where h.folded.utf8.count > LinkIndex.keyLimit {
            longNames[i] = LinkIndex.keyPart(h.folded)
        }
        let cuts = longNames
        func withPart<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            // Most notebooks have no such name: no lookup then.
            if !cuts.isEmpty, let cut = cuts[i] { return cut.withUnsafeBytes(body) }
            return withKeyPart(holdings[i], body)
        }
        // The first eight bytes of each key: most comparisons end there, without reading a
        // holding (which retains its strings) or a closure per key (540 instructions a
        // comparison, 7.4 million comparisons and 18% of a rebuild's instructions at 1 M events).
        let heads = holdings.map(keyHead)
        var order = Array(holdings.indices)
        order.sort { a, b in
            if heads[a] != heads[b] { return heads[a] < heads[b] }
            return withPart(a) { x in
                withPart(b) { y in
                    precedes(x, holdings[a].holder.note, y, holdings[b].holder.note)
                }
            }
        }
        var out: [Int] = []
        out.reserveCapacity(order.count)
        for i in order {
            if let last = out.last, holdings[last].holder.note == holdings[i].holder.note,
                withPart(last, { x in withPart(i) { y in x.elementsEqual(y) } })
            {
                if holdings[last].holder.since < holdings[i].holder.since { out[out.count - 1] = i }
            } else {
                out.append(i)
            }
        }
        return out
    }

    /// The first eight bytes of a holding's `link_titles` key (key part, 0, note id) as a
    /// big-endian number: two keys whose heads differ are in the order of their heads. (A cut
    /// key part starts with the name's first bytes too.)
    private static func keyHead(_ h: LinkIndex.Holding) -> UInt64 {
        var head: UInt64 = 0
        var n = 0
        for b in h.folded.utf8.prefix(8) {
            head = head << 8 | UInt64(b)
            n += 1
        }
        guard n < 8 else { return head }
        // The 0 after the key part, then the first bytes of the note's id.
        head <<= 8
        n += 1
        let rest = 8 - n
        return rest == 0 ? head : head << (8 * rest) | h.holder.note.high >> (64 - 8 * rest)
    }

    /// Whether the key of key part `x` and note `a` comes before that of `y` and `b` in byte
    /// order.
    private static func precedes(
        _ x: UnsafeRawBufferPointer, _ a: Identifier, _ y: UnsafeRawBufferPointer, _ b: Identifier
    ) -> Bool {
        let common = min(x.count, y.count)
        let c = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
        if c != 0 { return c < 0 }
        if x.count == y.count { return a < b }
        // One key part is a prefix of the other: the shorter's 0 meets the longer's next byte,
        // which only a NUL in a name can equal; then the whole keys decide.
        let next = x.count < y.count ? y[common] : x[common]
        if next != 0 { return x.count < y.count }
        return ListIndexBulkWriter.bytesPrecede(Array(x) + [0] + a.bytes, Array(y) + [0] + b.bytes)
    }

    /// Each holding of `order` from `start` on, at most `limit`, as its `link_titles` (or
    /// `link_aliases`) entry.
    private static func forEachHolding(
        _ holdings: [LinkIndex.Holding], in order: [Int], from start: Position, limit: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Position? {
        var key = ByteWriter(capacity: LinkIndex.keyLimit + 17)
        var value = ByteWriter(capacity: 64)
        var k = start.first
        while k < order.count, k - start.first < limit {
            let h = holdings[order[k]]
            k += 1
            key.bytes.removeAll(keepingCapacity: true)
            withKeyPart(h) { key.write(raw: $0) }
            key.write(byte: 0)
            key.write(identifier: h.holder.note)
            value.bytes.removeAll(keepingCapacity: true)
            value.write(bigEndian: h.holder.since)
            value.write(bigEndian: h.holder.until ?? 0)
            value.write(raw: h.folded.utf8)
            try key.bytes.withUnsafeBytes { k in try value.bytes.withUnsafeBytes { v in try body(k, v) } }
        }
        return k < order.count ? Position(first: k) : nil
    }

    /// Each `link_note_titles` key (note id, then the key part of a title or other name it
    /// held), in order, each once: the two holdings' groups of each note, merged; from `start`
    /// on, the notes whose keys begin before `limit` keys are made.
    @discardableResult
    private static func forEachNoteTitle(
        _ titles: [LinkIndex.Holding], _ names: [LinkIndex.Holding], from start: Position, limit: Int,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> Position? {
        var (t, n) = (start.first, start.second)
        var made = 0
        var held: [LinkIndex.Holding] = []
        var key = ByteWriter(capacity: LinkIndex.keyLimit + 16)
        while t < titles.count || n < names.count, made < limit {
            let note =
                n == names.count || (t < titles.count && titles[t].holder.note < names[n].holder.note)
                ? titles[t].holder.note : names[n].holder.note
            held.removeAll(keepingCapacity: true)
            while t < titles.count, titles[t].holder.note == note {
                held.append(titles[t])
                t += 1
            }
            while n < names.count, names[n].holder.note == note {
                held.append(names[n])
                n += 1
            }
            // One note's keys differ in their key parts alone.
            held.sort { a, b in
                withKeyPart(a) { x in withKeyPart(b) { y in ListIndexBulkWriter.bytesPrecede(x, y) } }
            }
            key.bytes.removeAll(keepingCapacity: true)
            key.write(identifier: note)
            for (i, h) in held.enumerated() {
                if i > 0, withKeyPart(held[i - 1], { x in withKeyPart(h) { y in x.elementsEqual(y) } }) { continue }
                key.bytes.removeSubrange(16...)
                withKeyPart(h) { key.write(raw: $0) }
                try key.bytes.withUnsafeBytes(body)
                made += 1
            }
        }
        return t < titles.count || n < names.count ? Position(first: t, second: n) : nil
    }
}
