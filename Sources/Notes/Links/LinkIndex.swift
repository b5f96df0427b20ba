public import Basics
import EventStore
import LMDB
import SearchEngine

/// A title a note was given by the event at `position` (folded: case and accents, see
/// ``TextFolding``).
public struct TitleChange: Sendable, Equatable {
    public var note: Identifier
    public var position: UInt64
    public var folded: String

    public init(note: Identifier, position: UInt64, folded: String) {
        self.note = note
        self.position = position
        self.folded = folded
    }
}

/// The other names a note had after the event at `position`: its aliases and the name of the
/// file it was imported from (folded, distinct, sorted; see ``LinkIndex/names(of:)``).
public struct NameChange: Sendable, Equatable {
    public var note: Identifier
    public var position: UInt64
    public var names: [String]

    public init(note: Identifier, position: UInt64, names: [String]) {
        self.note = note
        self.position = position
        self.names = names
    }
}

/// A note that holds, or held, a title: since the event at `since`, until the event at
/// `until` changed it (nil while it still holds it). When a note held a title more than once,
/// its latest time.
public struct TitleHolder: Sendable, Equatable {
    public var note: Identifier
    public var since: UInt64
    public var until: UInt64?
}

/// The links projection: four databases kept inline with every append and rebuilt from the
/// log.
///
/// - `link_titles`: `key part of the folded title | 0 | note id` → `since | until | folded
///   title`: every title every note held (positions big-endian, `until` 0 while held), what a
///   title link resolves through.
/// - `link_aliases`: the same for the other names of notes (aliases, the names of the files
///   they came from), which a link resolves to when no note holds it as a title.
/// - `link_note_titles`: `note id | key part of the folded name` → nothing: the titles and other
///   names of each note, what its backlinks are found by.
/// - `links`: `kind | key part of the key | 0 | source note id` → the whole key: one entry
///   per distinct link target written in a note's current body (kind 1 a folded title, 2 id
///   digits), what backlinks and missing links are read from. A Markdown link's file (kind 3)
///   is keyed by the key part of its file name without `.md` (folded), then 0, the first 16
///   bytes of the path's SHA-256, and the source: a note is found by what links to its name,
///   whatever folder the link's path names.
///
/// A key part is the text itself, or for a text over 400 bytes its first 384 bytes and the first
/// 16 bytes of its SHA-256 (LMDB keys are at most 511 bytes); readers compare the whole text
/// kept in the value.
///
/// Links are stored by what they name, not by the note they resolve to: a resolution depends on
/// every note's titles at the instant asked about, so it is made when a link is read
/// (``LinkResolution``), from these records.
enum LinkIndex {
    static let titles = "link_titles"
    static let aliases = "link_aliases"
    static let noteTitles = "link_note_titles"
    static let links = "links"

    /// The longest key part a title or link key takes; the whole text is in the value.
    static let keyLimit = 400

    /// The key part of a text: the text itself up to ``keyLimit`` bytes; a longer one, its first
    /// 384 bytes and the first 16 bytes of its SHA-256, so that two long texts sharing a
    /// beginning keep keys of their own (and every text one key).
    static func keyPart(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        guard bytes.count > keyLimit else { return bytes }
        return Array(bytes.prefix(keyLimit - 16)) + SHA256.hash(bytes).prefix(16)
    }

    static func titleKey(_ folded: String, note: Identifier) -> [UInt8] {
        var k = keyPart(folded)
        k.append(0)
        note.withBytes { k.append(contentsOf: $0) }
        return k
    }

    static func titlePrefix(_ folded: String) -> [UInt8] {
        var k = keyPart(folded)
        k.append(0)
        return k
    }

    static func titleValue(since: UInt64, until: UInt64?, folded: String) -> [UInt8] {
        var v = withUnsafeBytes(of: since.bigEndian) { Array($0) }
        v += withUnsafeBytes(of: (until ?? 0).bigEndian) { Array($0) }
        v += Array(folded.utf8)
        return v
    }

    /// The holder a `link_titles` entry records, when its value holds `folded` (a cut key can
    /// be shared by two long titles).
    static func holder(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, folded: String) -> TitleHolder? {
        guard value.count >= 16, key.count >= 16, let note = Identifier(bytes: key.suffix(16)),
            value[16...].elementsEqual(folded.utf8)
        else { return nil }
        let since = UInt64(bigEndianBytes: value[0..<8])
        let until = UInt64(bigEndianBytes: value[8..<16])
        return TitleHolder(note: note, since: since, until: until == 0 ? nil : until)
    }

    static func noteTitleKey(_ note: Identifier, _ folded: String) -> [UInt8] { note.bytes + keyPart(folded) }

    static func keyBytes(_ key: LinkKey) -> (kind: UInt8, text: String) {
        switch key {
        case .title(let t): return (1, t)
        case .id(let hex): return (2, hex)
        case .file(let path): return (3, path)
        }
    }

    /// The start of the keys of `key`'s entries; for a file, of every file of its name.
    static func linkPrefix(_ key: LinkKey) -> [UInt8] {
        let (kind, text) = keyBytes(key)
        var k: [UInt8] = [kind]
        k += keyPart(key.fileName ?? text)
        k.append(0)
        return k
    }

    static func linkKey(_ key: LinkKey, source: Identifier) -> [UInt8] {
        var k = linkPrefix(key)
        if case .file(let path) = key { k += SHA256.hash(Array(path.utf8)).prefix(16) }
        return k + source.bytes
    }

    static func linkValue(_ key: LinkKey) -> [UInt8] { Array(keyBytes(key).text.utf8) }

    /// The link key and source a `links` entry records.
    static func link(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> (LinkKey, Identifier)? {
        guard key.count >= 18, let source = Identifier(bytes: key.suffix(16)) else { return nil }
        let text = String(decoding: value, as: UTF8.self)
        switch key[0] {
        case 1: return (.title(text), source)
        case 2: return (.id(text), source)
        case 3: return (.file(text), source)
        default: return nil
        }
    }

    /// The other names a link can lead to `note` by, folded, distinct and sorted: its aliases,
    /// and for a note imported from a file, the file's path within its folder and every shorter
    /// end of it down to the file's name, each with and without `.md` (`[[b/c]]` and `[[c.md]]`
    /// lead to `a/b/c.md`, as Obsidian reads them).
    public static func names(of note: Note) -> [String] {
        var out = Set(note.aliases.map(TextFolding.fold))
        if let path = note.sourcePath {
            let parts = path.split(separator: "/")
            for k in parts.indices {
                let end = parts[k...].joined(separator: "/")
                out.insert(TextFolding.fold(end))
                if end.lowercased().hasSuffix(".md") { out.insert(TextFolding.fold(String(end.dropLast(3)))) }
            }
        }
        out.remove("")
        return out.sorted()
    }

    /// The properties a note's other names come from.
    static let naming = [NoteProperty.aliases.rawValue, NoteProperty.source.rawValue]

    /// Whether the `kind` event with payload `p` can change a note's other names.
    @inline(__always)
    static func mayRename<T: NoteText>(_ kind: NoteEventKind, _ p: NotePayload<T>) -> Bool {
        kind == .propertySet && p.key.isOne(of: naming)
    }

    /// The distinct link keys of a note's body (its Markdown links read from its file's folder).
    static func keys(of note: Note) -> Set<LinkKey> { Set(WikiLink.parse(note).map(\.key)) }

    /// Whether the links a note's body holds may differ between `old` and `new`: its body, or the
    /// file its Markdown links are read from, changed.
    static func linksMayDiffer(_ old: Note?, _ new: Note?) -> Bool {
        old?.body != new?.body || old?.sourcePath != new?.sourcePath
    }

    // MARK: Title spans

    /// Each (note, title) pair's latest holding, from title changes in log order within a note,
    /// as they stand after the event at `last`; grouped by note in id order, each note's
    /// holdings in the order it first took each title.
    static func holdings(_ changes: [TitleChange], through last: UInt64 = .max) -> [Holding] {
        holdings(parts: [changes], through: last)
    }

    /// The same of title changes in parts, each note's changes all in one part.
    static func holdings(parts: [[TitleChange]], through last: UInt64 = .max) -> [Holding] {
        // Each note's changes together, in log order: a stable sort of the indices by note.
        // The note and index of each change, sorted: no comparison touches a change's title.
        // An index counts through the parts one after another.
        var keyed: [(note: Identifier, index: Int)] = []
        keyed.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        var firsts: [Int] = []
        var total = 0
        for part in parts {
            firsts.append(total)
            for (i, c) in part.enumerated() where c.position <= last { keyed.append((c.note, total + i)) }
            total += part.count
        }
        keyed.sort { $0.note != $1.note ? $0.note < $1.note : $0.index < $1.index }
        func change(_ index: Int) -> TitleChange {
            var p = firsts.count - 1
            while firsts[p] > index { p -= 1 }
            return parts[p][index - firsts[p]]
        }
        var out: [Holding] = []
        out.reserveCapacity(keyed.count)
        var k = 0
        while k < keyed.count {
            let note = keyed[k].note
            var held = NoteHoldings(first: out.count)
            var current: (folded: String, since: UInt64)?
            func close(until: UInt64?) {
                guard let now = current else { return }
                let h = Holding(folded: now.folded, holder: TitleHolder(note: note, since: now.since, until: until))
                held.record(h, in: &out)
            }
            while k < keyed.count, keyed[k].note == note {
                let c = change(keyed[k].index)
                k += 1
                if let now = current, now.folded == c.folded { continue }
                close(until: c.position)
                current = (c.folded, c.position)
            }
            close(until: nil)
        }
        return out
    }

    /// Each (note, name) pair's latest holding, from the other names' changes in log order
    /// within a note: like ``holdings(_:through:)``, but a note holds several names at once.
    static func holdings(_ changes: [NameChange]) -> [Holding] {
        let order = changes.indices.sorted { a, b in
            changes[a].note != changes[b].note ? changes[a].note < changes[b].note : a < b
        }
        var out: [Holding] = []
        var k = 0
        while k < order.count {
            let note = changes[order[k]].note
            var recorded = NoteHoldings(first: out.count)
            var current: [(folded: String, since: UInt64)] = []
            // Each name held now, and since when (its first in `current`): looked up, not looked
            // for, as a note may have thousands of names (see ``NoteHoldings``).
            var since: [String: UInt64] = [:]
            func close(_ held: (folded: String, since: UInt64), until: UInt64?) {
                let h = Holding(folded: held.folded, holder: TitleHolder(note: note, since: held.since, until: until))
                recorded.record(h, in: &out)
            }
            while k < order.count, changes[order[k]].note == note {
                let c = changes[order[k]]
                k += 1
                let names = Set(c.names)
                for held in current where !names.contains(held.folded) { close(held, until: c.position) }
                current = c.names.map { name in (name, since[name] ?? c.position) }
                since = Dictionary(current.lazy.map { ($0.folded, $0.since) }, uniquingKeysWith: { first, _ in first })
            }
            for held in current { close(held, until: nil) }
        }
        return out
    }

    /// One note's holdings, those of an array from `first` on, found by their name: looked
    /// through while they are few (most notes have one title and no other name), and through a
    /// table of their places once they are many. A note's every holding was looked through for
    /// each of its names before 2026-12-07: `notes verify` of a store with one note of 10,000
    /// aliases took 9 s in a debug build, its 50 million comparisons 70% of the time.
    struct NoteHoldings {
        let first: Int
        private var places: [String: Int] = [:]

        init(first: Int) { self.first = first }

        /// Adds a holding: a name held again replaces its earlier holding.
        mutating func record(_ h: Holding, in out: inout [Holding]) {
            if places.isEmpty && out.count - first < 16 {
                if let i = out[first...].firstIndex(where: { $0.folded == h.folded }) {
                    out[i] = h
                } else {
                    out.append(h)
                }
                return
            }
            if places.isEmpty {
                for i in first..<out.count { places[out[i].folded] = i }
            }
            if let i = places[h.folded] {
                out[i] = h
            } else {
                places[h.folded] = out.count
                out.append(h)
            }
        }
    }

    /// A title and one note's latest holding of it.
    struct Holding: Equatable {
        var folded: String
        var holder: TitleHolder
    }

    // MARK: Inline

    /// Brings the records of one note up to date after a batch of its events: `titles` are the
    /// titles its events of the batch gave it (in order, with their positions), `old` and `new`
    /// the note before and after.
    static func update(
        note id: Identifier, old: Note?, new: Note, titles: [(position: UInt64, folded: String)],
        names: [(position: UInt64, names: [String])], in txn: borrowing Transaction, databases: LinkDatabases
    ) throws {
        var current = titles.isEmpty ? [] : old.map { [TextFolding.fold($0.title)] } ?? []
        for t in titles where [t.folded] != current {
            try hold([t.folded], after: current, at: t.position, note: id, in: txn, db: databases.titles, databases)
            current = [t.folded]
        }
        var held = names.isEmpty ? [] : old.map(Self.names(of:)) ?? []
        for n in names where n.names != held {
            try hold(n.names, after: held, at: n.position, note: id, in: txn, db: databases.aliases, databases)
            held = n.names
        }
        let linksDB = databases.links
        guard linksMayDiffer(old, new) else { return }
        let before = old.map { keys(of: $0) } ?? []
        let after = keys(of: new)
        for k in before where !after.contains(k) { _ = try txn.delete(linksDB, key: linkKey(k, source: id)) }
        for k in after where !before.contains(k) {
            try txn.put(linksDB, key: linkKey(k, source: id), value: linkValue(k))
        }
    }
}

/// The links projection's databases, for an inline update.
struct LinkDatabases {
    var titles: Database
    var aliases: Database
    var noteTitles: Database
    var links: Database
}

extension LinkIndex {
    /// Records that the note holds `names` from the event at `position` on, where it held
    /// `before`: the holdings of names it lost end there (their start is kept), new ones begin.
    fileprivate static func hold(
        _ names: [String], after before: [String], at position: UInt64, note id: Identifier,
        in txn: borrowing Transaction, db: Database, _ databases: LinkDatabases
    ) throws {
        // Sets where there are many names (a note's aliases): a look through both lists for each
        // name made `notes alias` of 10,000 names over 10,000 others take 12 s in a debug build
        // before 2026-12-07. A title is one name, looked through.
        let kept = names.count > 16 ? Set(names) : nil
        let held = before.count > 16 ? Set(before) : nil
        for was in before where !(kept?.contains(was) ?? names.contains(was)) {
            let key = titleKey(was, note: id)
            if let raw = try txn.get(db, key: key), raw.count >= 16 {
                let since = UInt64(bigEndianBytes: raw[0..<8])
                try txn.put(db, key: key, value: titleValue(since: since, until: position, folded: was))
            }
        }
        for name in names where !(held?.contains(name) ?? before.contains(name)) {
            try txn.put(db, key: titleKey(name, note: id), value: titleValue(since: position, until: nil, folded: name))
            try txn.put(databases.noteTitles, key: noteTitleKey(id, name), value: [])
        }
    }
}

extension UInt64 {
    init(bigEndianBytes bytes: some Collection<UInt8>) {
        var v: UInt64 = 0
        for b in bytes { v = v << 8 | UInt64(b) }
        self = v
    }
}
