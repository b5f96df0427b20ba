public import Basics
import EventStore
import LMDB
import SearchEngine

/// A note a link leads to, or that links: its id, title and status at the instant asked about.
public struct LinkedNote: Sendable, Equatable {
    public var id: Identifier
    public var title: String
    public var status: Note.Status

    init(_ note: Note) {
        id = note.id
        title = note.title
        status = note.status
    }
}

/// Where a link leads.
public enum LinkTarget: Sendable, Equatable {
    case note(LinkedNote)
    /// No note has (or had) the title, or no note's id starts with the digits.
    case missing
    /// Id digits that start the ids of several notes.
    case ambiguous([Identifier])
    /// No note has (or had) the name, and it is a file's, an image's or a PDF's
    /// (``WikiLink/isAttachment``): a vault's attachment, not a missing note.
    case attachment
}

/// A link of a note's body and where it leads.
public struct OutgoingLink: Sendable, Equatable {
    public var link: WikiLink
    public var target: LinkTarget
}

/// A link to a note from another one: the note that links, the link, and the line it is on.
public struct Backlink: Sendable, Equatable {
    public var source: LinkedNote
    public var link: WikiLink
    public var line: String
}

/// A link that leads nowhere, and the note it is in.
public struct MissingLink: Sendable, Equatable {
    public var source: LinkedNote
    public var link: WikiLink
}

/// What resolving links reads: the links projection now, or a replayed state at an instant.
protocol LinkWorld: ~Copyable {
    /// Every note that holds or held the folded title, with its latest holding.
    func holders(of folded: String) throws -> [TitleHolder]
    /// Every note that holds or held the folded name as another name (an alias, a file name).
    func aliasHolders(of folded: String) throws -> [TitleHolder]
    /// The notes whose lowercase hex id starts with `hex`.
    func notes(withIDPrefix hex: String) throws -> [Identifier]
    func note(_ id: Identifier) throws -> Note?
    /// Every folded title and other name the note held.
    func titles(of id: Identifier) throws -> [String]
    /// The links naming `key` and their sources; for an id key, every id key with its first
    /// eight digits; for a title key, every file key of that file name too (a Markdown link may
    /// lead to the note by its title or file name).
    func linkers(of key: LinkKey) throws -> [(key: LinkKey, source: Identifier)]
    /// Every link key of every note's body, by source.
    func forEachLink(_ body: (LinkKey, Identifier) throws -> Void) throws
}

/// The rules that turn a link into a note, and the queries made of them.
///
/// A title link leads to the note that holds the title (case and accents folded); when several
/// do, to one not in the trash, then to the one that took it first. When no note holds it as a
/// title, to the one that holds it as another name (an alias, the name of the file it came
/// from), by the same rule. When none holds it at all, to the note that held it last, as a title
/// or another name: `[[Old title]]` follows its note through renames. An id link leads to the
/// one note whose id starts with its digits; when none does, the digits are a name, resolved as
/// a title link's is. A Markdown link's file leads to the note that holds its path as another
/// name now (the note imported from that very file first, then one from a file whose path ends
/// with it, each by the rule above); else its file name without
/// `.md` is a title link's (the note of that title, or of that file name in another folder);
/// else to the note that held the path last. Paths are relative to a vault, and two vaults may
/// hold the same one: the note from that very file comes first, whichever vault it was imported
/// from (the linking note's own, or one inside its folder or around it: vaults may nest), then
/// one from that path in another vault; wherever a Markdown link has a choice, a note of the
/// linking note's own vault (its `vault` property) comes first, so where a file link leads
/// depends on the vault of the note it is in. A note from no vault has no such preference; nor
/// has a wiki link. Vaults are compared as the import compares them, byte for byte: two folders
/// whose names differ only in Unicode form (NFC, NFD) are two vaults.
enum LinkResolution {
    /// The notes `key` leads to, written in a note of `vault` (which only a file key heeds).
    static func resolve<W: LinkWorld & ~Copyable>(
        _ key: LinkKey, from vault: [UInt8]?, in world: borrowing W, memo: ResolutionMemo = ResolutionMemo()
    ) throws -> [Identifier] {
        switch key {
        case .id(let hex):
            // Digits no id starts with may be a name (`[[20240105]]`, a daily note's file).
            let ids = try world.notes(withIDPrefix: hex)
            return ids.isEmpty ? try resolve(title: hex, preferring: nil, in: world, memo: memo) : ids
        case .title(let folded):
            return try resolve(title: folded, preferring: nil, in: world, memo: memo)
        case .file(let written):
            // The note from that very file first (every note from a file that ends with the
            // path holds it as another name too), then one from that path in another vault, then
            // one from a file that ends with it; of each, one of the linking note's vault first.
            // Of the first two, the notes whose file is spelled as the link spells it come first:
            // `Plan.md` and `plan.md` are two files, one folded name.
            let path = TextFolding.fold(written)
            let placed = try world.aliasHolders(of: path)
            var same: [(TitleHolder, Int)] = []
            var exact: [(TitleHolder, Int)] = []
            for h in placed where h.until == nil {
                guard let note = try world.note(h.note), let from = note.sourcePath else { continue }
                if let vault, let grade = spelling(of: written, from: vault, in: note) {
                    same.append((h, grade))
                } else if let grade = spelling(from, written) {
                    exact.append((h, grade))
                }
            }
            // A vault inside the linking note's folder holds the file under a shorter path,
            // which ends with the file's name.
            if let vault, same.isEmpty, let slash = path.lastIndex(of: "/") {
                let name = String(path[path.index(after: slash)...])
                for (h, inner) in try nested(name, within: vault, in: world, memo: memo) {
                    if let grade = spelling(inner, written) { same.append((h, grade)) }
                }
            }
            if let best = try current(closest(same), preferring: vault, in: world)
                ?? current(closest(exact), preferring: vault, in: world)
                ?? current(placed, preferring: vault, in: world)
            {
                return [best]
            }
            let named = try resolve(title: key.fileName ?? "", preferring: vault, in: world, memo: memo)
            return named.isEmpty ? try latest(placed, preferring: vault, in: world).map { [$0] } ?? [] : named
        }
    }

    /// A title link's note; with a `vault`, one of that vault wherever there is a choice.
    /// Many file keys fall back to one file name (every folder's `index.md`): each name is
    /// resolved once a query, not once a key, whose holders it would read again.
    private static func resolve<W: LinkWorld & ~Copyable>(
        title folded: String, preferring vault: [UInt8]?, in world: borrowing W, memo: ResolutionMemo
    ) throws -> [Identifier] {
        let asked = ResolutionMemo.Named(name: folded, vault: vault)
        if let known = memo.titles[asked] { return known }
        let found: [Identifier]
        let titles = try world.holders(of: folded)
        if let best = try current(titles, preferring: vault, in: world) {
            found = [best]
        } else {
            let others = try world.aliasHolders(of: folded)
            if let best = try current(others, preferring: vault, in: world) {
                found = [best]
            } else {
                found = try latest(titles + others, preferring: vault, in: world).map { [$0] } ?? []
            }
        }
        memo.titles[asked] = found
        return found
    }

    /// The notes that hold the file name `name` now from a vault inside `vault`'s folder, each
    /// with its file's path from `vault`; read once a query for each name and vault (none at
    /// all where no vault nests in another, however many paths ask).
    private static func nested<W: LinkWorld & ~Copyable>(
        _ name: String, within vault: [UInt8], in world: borrowing W, memo: ResolutionMemo
    ) throws -> [(holder: TitleHolder, path: String)] {
        let asked = ResolutionMemo.Named(name: name, vault: vault)
        if let known = memo.nested[asked] { return known }
        var found: [(holder: TitleHolder, path: String)] = []
        for h in try world.aliasHolders(of: name) where h.until == nil {
            guard let note = try world.note(h.note), let from = note.sourcePath, let place = self.vault(of: note),
                let between = within(place, vault)
            else { continue }
            found.append((h, between + "/" + from))
        }
        memo.nested[asked] = found
        return found
    }

    /// The path from `outer` of `folder`, a folder inside it (places as bytes), or nil.
    private static func within(_ folder: [UInt8], _ outer: [UInt8]) -> String? {
        let start = outer.last == 0x2F ? outer : outer + [0x2F]
        guard folder.count > start.count, folder.starts(with: start) else { return nil }
        return String(decoding: folder[start.count...], as: UTF8.self)
    }

    /// The vault a note was imported from (its `vault` property), if any, as bytes: the import
    /// tells places apart byte for byte, and so do links (Swift's `==` takes `café` composed and
    /// decomposed for one name, two folders on Linux).
    static func vault(of note: Note?) -> [UInt8]? { note?.sourceFolder.map { Array($0.utf8) } }

    /// Whether `note` is from the file at `path` within `vault` (a note of that vault from that
    /// path, or of a vault inside that folder or around it from the same file), and how closely
    /// its file's name spells the path (``spelling(_:_:)``); nil when it is from another file.
    private static func spelling(of path: String, from vault: [UInt8], in note: Note) -> Int? {
        guard let from = note.sourcePath, let place = self.vault(of: note) else { return nil }
        if place == vault { return spelling(from, path) }
        if let between = within(place, vault) { return spelling(between + "/" + from, path) }
        if let between = within(vault, place) { return spelling(from, between + "/" + path) }
        return nil
    }

    /// How closely `path` spells `written`: 1 as written (as Swift compares text: one composed
    /// and the other decomposed, as macOS writes names, are one spelling, as they are one key),
    /// 0 only folded (case, accents, white space), nil not at all.
    private static func spelling(_ path: String, _ written: String) -> Int? {
        if path == written { return 1 }
        return TextFolding.fold(path) == TextFolding.fold(written) ? 0 : nil
    }

    /// The holders of the closest spelling.
    private static func closest(_ graded: [(TitleHolder, Int)]) -> [TitleHolder] {
        guard let top = graded.map(\.1).max() else { return [] }
        return graded.filter { $0.1 == top }.map(\.0)
    }

    /// The vault a link of `key` in note `source` is read in: the note's for a Markdown link's
    /// file, none for any other link (a wiki link leads where it leads from every vault).
    static func vault<W: LinkWorld & ~Copyable>(
        reading key: LinkKey, in source: Identifier, of world: borrowing W, memo: ResolutionMemo
    ) throws -> [UInt8]? {
        guard case .file = key else { return nil }
        // A note of many file links is read once a query for its vault, not once a link.
        if let known = memo.vaults[source] { return known }
        let found = vault(of: try world.note(source))
        memo.vaults[source] = .some(found)
        return found
    }

    /// Whether note `id` is of `vault` (always, when no vault is asked for).
    private static func isOf<W: LinkWorld & ~Copyable>(_ vault: [UInt8]?, _ id: Identifier, in world: borrowing W)
        throws -> Bool
    {
        guard let vault else { return true }
        return self.vault(of: try world.note(id)) == vault
    }

    /// The holder that gave the name up last; with a `vault`, of that vault if one is.
    private static func latest<W: LinkWorld & ~Copyable>(
        _ holders: [TitleHolder], preferring vault: [UInt8]?, in world: borrowing W
    ) throws -> Identifier? {
        var pool = holders
        if vault != nil {
            var own: [TitleHolder] = []
            for h in holders where try isOf(vault, h.note, in: world) { own.append(h) }
            if !own.isEmpty { pool = own }
        }
        return pool.max { ($0.until ?? 0, $1.note) < ($1.until ?? 0, $0.note) }?.note
    }

    /// Of the holders that hold the name now, one of `vault` (when asked for), then one not in
    /// the trash, then the first to take it.
    private static func current<W: LinkWorld & ~Copyable>(
        _ holders: [TitleHolder], preferring vault: [UInt8]?, in world: borrowing W
    ) throws -> Identifier? {
        var best: (other: Int, trashed: Int, since: UInt64, id: Identifier)?
        for h in holders where h.until == nil {
            let note = try world.note(h.note)
            let trashed = note?.trashed ?? true
            let other = vault == nil || self.vault(of: note) == vault ? 0 : 1
            let candidate = (other, trashed ? 1 : 0, h.since, h.note)
            if let b = best {
                if candidate < b { best = candidate }
            } else {
                best = candidate
            }
        }
        return best?.id
    }

    /// The sources of each key, parted by the vault the key is read in (see
    /// ``vault(reading:in:of:memo:)``): each part resolves once.
    private static func byVault<W: LinkWorld & ~Copyable>(
        _ sources: [LinkKey: [Identifier]], in world: borrowing W, memo: ResolutionMemo
    ) throws -> [(key: LinkKey, vault: [UInt8]?, sources: [Identifier])] {
        var out: [(key: LinkKey, vault: [UInt8]?, sources: [Identifier])] = []
        for (key, ids) in sources {
            guard case .file = key else {
                out.append((key, nil, ids))
                continue
            }
            var parts: [[UInt8]?: [Identifier]] = [:]
            var order: [[UInt8]?] = []
            for s in ids {
                let v = try vault(reading: key, in: s, of: world, memo: memo)
                if parts[v] == nil { order.append(v) }
                parts[v, default: []].append(s)
            }
            for v in order { out.append((key, v, parts[v]!)) }
        }
        return out
    }

    static func target<W: LinkWorld & ~Copyable>(
        _ key: LinkKey, from vault: [UInt8]?, in world: borrowing W, memo: ResolutionMemo
    ) throws -> LinkTarget {
        let ids = try resolve(key, from: vault, in: world, memo: memo)
        guard ids.count == 1 else { return ids.isEmpty ? (key.isAttachment ? .attachment : .missing) : .ambiguous(ids) }
        guard let note = try world.note(ids[0]) else { return .missing }
        return .note(LinkedNote(note))
    }

    /// The links of note `id`'s body, in order, each with where it leads.
    static func outgoing<W: LinkWorld & ~Copyable>(of note: Note, in world: borrowing W) throws -> [OutgoingLink] {
        var targets: [LinkKey: LinkTarget] = [:]
        let memo = ResolutionMemo()
        var out: [OutgoingLink] = []
        for link in WikiLink.parse(note) {
            let key = link.key
            if targets[key] == nil {
                let vault = if case .file = key { vault(of: note) } else { [UInt8]?.none }
                targets[key] = try target(key, from: vault, in: world, memo: memo)
            }
            out.append(OutgoingLink(link: link, target: targets[key]!))
        }
        return out
    }

    /// The links of other notes (and the note itself) that lead to `id`, by linking note.
    static func backlinks<W: LinkWorld & ~Copyable>(to id: Identifier, in world: borrowing W) throws -> [Backlink] {
        var keysBySource: [Identifier: Set<LinkKey>] = [:]
        // Whether each key leads here, by the vault it is read in.
        var leads: [LinkKey: [[UInt8]?: Bool]] = [:]
        let memo = ResolutionMemo()
        func consider(_ key: LinkKey, _ source: Identifier, _ world: borrowing W) throws {
            let vault = try vault(reading: key, in: source, of: world, memo: memo)
            if leads[key]?[vault] == nil {
                leads[key, default: [:]][vault] = try resolve(key, from: vault, in: world, memo: memo) == [id]
            }
            if leads[key]![vault]! { keysBySource[source, default: []].insert(key) }
        }
        for title in try world.titles(of: id) {
            for (key, source) in try world.linkers(of: .title(title)) { try consider(key, source, world) }
            // A name of hex digits is written as an id link.
            if let digits = WikiLink.idDigits(title) {
                for (key, source) in try world.linkers(of: .id(String(digits.prefix(8)))) {
                    try consider(key, source, world)
                }
            }
        }
        let hex = id.hex
        for (key, source) in try world.linkers(of: .id(String(hex.prefix(8)))) {
            guard case .id(let digits) = key, hex.hasPrefix(digits) else { continue }
            try consider(key, source, world)
        }
        var out: [Backlink] = []
        for (source, keys) in keysBySource {
            guard let note = try world.note(source) else { continue }
            // One backlink per line: the first link of the line that leads here.
            var first: [WikiLink] = []
            for link in WikiLink.parse(note) where keys.contains(link.key) && link.line != first.last?.line {
                first.append(link)
            }
            guard !first.isEmpty else { continue }
            // Each such line's text, cut as the parser cut it (no CR, no byte-order mark).
            let wanted = Set(first.map(\.line))
            var lines: [Int: String] = [:]
            WikiLink.forEachLineOutsideFences(Array(note.body.utf8)) { line, index in
                if wanted.contains(index) { lines[index] = String(decoding: line, as: UTF8.self) }
            }
            for link in first {
                out.append(Backlink(source: LinkedNote(note), link: link, line: lines[link.line] ?? ""))
            }
        }
        return out.sorted(by: order)
    }

    /// Every link of the notebook that leads nowhere; a link to an attachment (a file of the
    /// vault, `![[photo.png]]`) that no note's name matches is none.
    static func missing<W: LinkWorld & ~Copyable>(in world: borrowing W) throws -> [MissingLink] {
        var sources: [LinkKey: [Identifier]] = [:]
        try world.forEachLink { key, source in sources[key, default: []].append(source) }
        var keysBySource: [Identifier: Set<LinkKey>] = [:]
        let memo = ResolutionMemo()
        for (key, vault, ids) in try byVault(sources, in: world, memo: memo) where !key.isAttachment {
            guard try resolve(key, from: vault, in: world, memo: memo).isEmpty else { continue }
            for s in ids { keysBySource[s, default: []].insert(key) }
        }
        var out: [MissingLink] = []
        for (source, keys) in keysBySource {
            guard let note = try world.note(source) else { continue }
            for link in WikiLink.parse(note) where keys.contains(link.key) {
                out.append(MissingLink(source: LinkedNote(note), link: link))
            }
        }
        return out.sorted { a, b in
            order((a.source, a.link), (b.source, b.link))
        }
    }

    /// The notes with a link to another note or a link from one.
    static func linked<W: LinkWorld & ~Copyable>(in world: borrowing W) throws -> Set<Identifier> {
        var sources: [LinkKey: [Identifier]] = [:]
        try world.forEachLink { key, source in sources[key, default: []].append(source) }
        var linked: Set<Identifier> = []
        let memo = ResolutionMemo()
        for (key, vault, ids) in try byVault(sources, in: world, memo: memo) {
            let target = try resolve(key, from: vault, in: world, memo: memo)
            guard target.count == 1 else { continue }
            for s in ids where s != target[0] {
                linked.insert(s)
                linked.insert(target[0])
            }
        }
        return linked
    }

    private static func order(_ a: Backlink, _ b: Backlink) -> Bool { order((a.source, a.link), (b.source, b.link)) }

    /// By the linking note's title (ignoring case), then its id, then the link's place.
    private static func order(_ a: (LinkedNote, WikiLink), _ b: (LinkedNote, WikiLink)) -> Bool {
        let (ta, tb) = (a.0.title.lowercased(), b.0.title.lowercased())
        if ta != tb { return ta < tb }
        if a.0.id != b.0.id { return a.0.id < b.0.id }
        return a.1.line < b.1.line
    }
}

/// What the resolutions of one query share (the notebook does not change under it): the notes
/// each name leads to from each vault, the notes of each file name from the vaults inside each
/// vault, and the vault of each linking note.
final class ResolutionMemo {
    struct Named: Hashable {
        var name: String
        var vault: [UInt8]?
    }
    var titles: [Named: [Identifier]] = [:]
    var nested: [Named: [(holder: TitleHolder, path: String)]] = [:]
    /// The vault of each linking note read so far.
    var vaults: [Identifier: [UInt8]?] = [:]
}

/// The links projection as a ``LinkWorld``, read in the transaction it is lent.
struct ProjectionLinkWorld: LinkWorld, ~Copyable {
    let txn: Transaction
    let databases: ProjectionDatabases
    let projection: NotesProjection

    init(_ txn: borrowing Transaction, databases: ProjectionDatabases, projection: NotesProjection) {
        self.txn = txn.lend()
        self.databases = databases
        self.projection = projection
    }

    private func scan(_ db: String, prefix: [UInt8], _ body: (Entry) throws -> Void) throws {
        try txn.withCursor(databases[db]) { c in
            var entry = prefix.isEmpty ? try c.first() : try c.seek(prefix)
            while let e = entry, e.key.starts(with: prefix) {
                try body(e)
                entry = try c.next()
            }
        }
    }

    func holders(of folded: String) throws -> [TitleHolder] { try holders(of: folded, in: LinkIndex.titles) }

    func aliasHolders(of folded: String) throws -> [TitleHolder] { try holders(of: folded, in: LinkIndex.aliases) }

    private func holders(of folded: String, in db: String) throws -> [TitleHolder] {
        var out: [TitleHolder] = []
        try scan(db, prefix: LinkIndex.titlePrefix(folded)) { e in
            if let h = LinkIndex.holder(key: e.key, value: e.value, folded: folded) { out.append(h) }
        }
        return out
    }

    func notes(withIDPrefix hex: String) throws -> [Identifier] {
        try projection.notes(withPrefix: hex, limit: .max, in: txn, databases: databases)
    }

    func note(_ id: Identifier) throws -> Note? { try projection.note(id, in: txn, databases: databases) }

    func titles(of id: Identifier) throws -> [String] {
        var cut: [[UInt8]] = []
        try scan(LinkIndex.noteTitles, prefix: id.bytes) { e in cut.append(Array(e.key.dropFirst(16))) }
        var out: [String] = []
        for c in cut {
            let key = c + [0] + id.bytes
            for db in [LinkIndex.titles, LinkIndex.aliases] {
                let full = try key.withUnsafeBytes { k in try txn.get(databases[db], k) }
                if let full, full.count >= 16 { out.append(String(decoding: full[16...], as: UTF8.self)) }
            }
        }
        return out
    }

    func linkers(of key: LinkKey) throws -> [(key: LinkKey, source: Identifier)] {
        var prefix = LinkIndex.linkPrefix(key)
        if case .id = key { prefix.removeLast() }
        var out: [(key: LinkKey, source: Identifier)] = []
        try scan(LinkIndex.links, prefix: prefix) { e in
            guard let (k, source) = LinkIndex.link(key: e.key, value: e.value) else { return }
            if case .title = key, k != key { return }
            if case .file = key, k != key { return }
            out.append((k, source))
        }
        if case .title(let name) = key, !name.contains("/") {
            try scan(LinkIndex.links, prefix: LinkIndex.linkPrefix(.file(name + ".md"))) { e in
                guard let (k, source) = LinkIndex.link(key: e.key, value: e.value), k.fileName == name else { return }
                out.append((k, source))
            }
        }
        return out
    }

    func forEachLink(_ body: (LinkKey, Identifier) throws -> Void) throws {
        try scan(LinkIndex.links, prefix: []) { e in
            if let (k, source) = LinkIndex.link(key: e.key, value: e.value) { try body(k, source) }
        }
    }
}

/// A replayed state as a ``LinkWorld``: the notebook as it was after the state's last event.
struct StateLinkWorld: LinkWorld {
    let state: NotebookState
    private var holdersByTitle: [String: [TitleHolder]] = [:]
    private var holdersByName: [String: [TitleHolder]] = [:]
    private var titlesByNote: [Identifier: [String]] = [:]
    private var linksByKey: [LinkKey: [Identifier]] = [:]
    /// The file keys of ``linksByKey`` by their file names.
    private var filesByName: [String: Set<LinkKey>] = [:]
    /// Every note's hex id, sorted: id digits find their notes by binary search.
    private var hexIDs: [(hex: String, id: Identifier)]

    init(_ state: NotebookState) {
        self.state = state
        hexIDs = state.notes.values.map { ($0.id.hex, $0.id) }.sorted { $0.hex < $1.hex }
        for h in LinkIndex.holdings(parts: state.titleChangeParts) {
            holdersByTitle[h.folded, default: []].append(h.holder)
            titlesByNote[h.holder.note, default: []].append(h.folded)
        }
        for h in LinkIndex.holdings(state.nameChanges) {
            holdersByName[h.folded, default: []].append(h.holder)
            titlesByNote[h.holder.note, default: []].append(h.folded)
        }
        for note in state.notes.values {
            for key in LinkIndex.keys(of: note) {
                linksByKey[key, default: []].append(note.id)
                if let name = key.fileName { filesByName[name, default: []].insert(key) }
            }
        }
    }

    func holders(of folded: String) throws -> [TitleHolder] { holdersByTitle[folded] ?? [] }

    func aliasHolders(of folded: String) throws -> [TitleHolder] { holdersByName[folded] ?? [] }

    func notes(withIDPrefix hex: String) throws -> [Identifier] {
        var low = 0
        var high = hexIDs.count
        while low < high {
            let mid = (low + high) / 2
            if hexIDs[mid].hex < hex { low = mid + 1 } else { high = mid }
        }
        var out: [Identifier] = []
        while low < hexIDs.count, hexIDs[low].hex.hasPrefix(hex) {
            out.append(hexIDs[low].id)
            low += 1
        }
        return out
    }

    func note(_ id: Identifier) throws -> Note? { state.notes[id] }

    func titles(of id: Identifier) throws -> [String] { titlesByNote[id] ?? [] }

    func linkers(of key: LinkKey) throws -> [(key: LinkKey, source: Identifier)] {
        switch key {
        case .title(let name):
            var out = (linksByKey[key] ?? []).map { (key: key, source: $0) }
            for file in filesByName[name] ?? [] { out += (linksByKey[file] ?? []).map { (file, $0) } }
            return out
        case .file:
            return (linksByKey[key] ?? []).map { (key, $0) }
        case .id(let start):
            var out: [(key: LinkKey, source: Identifier)] = []
            for (k, sources) in linksByKey {
                guard case .id(let hex) = k, hex.hasPrefix(start) else { continue }
                out += sources.map { (k, $0) }
            }
            return out
        }
    }

    func forEachLink(_ body: (LinkKey, Identifier) throws -> Void) throws {
        for (key, sources) in linksByKey { for s in sources { try body(key, s) } }
    }
}
