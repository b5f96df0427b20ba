public import Basics
import CIntrinsics
import Dispatch
public import EventStore
import Glibc
public import LMDB
public import SearchEngine
import Synchronization

/// The notes projections: current notes by id, their listing rows by id, the listing index,
/// categories with counts and the search index. Applied inline with every append and rebuilt in bulk from the log.
public final class NotesProjection: ProjectionSet {
    /// Index entries a rebuild writes per transaction; smaller batches hold the store's write
    /// lock for less time at once, so commands of other processes are not held up.
    public let rebuildBatch: Int
    /// The language whose stems the search index holds.
    public let searchLanguage: SearchLanguage

    /// From how many notes on a rebuild builds its parts one after another, letting go of each
    /// before the next (see ``write(_:context:databases:)``).
    package let boundedRebuildNotes: Int

    public convenience init(rebuildBatch: Int = 250_000, searchLanguage: SearchLanguage = .english) {
        self.init(rebuildBatch: rebuildBatch, searchLanguage: searchLanguage, boundedRebuildNotes: 400_000)
    }

    /// While true (inside the write of a command renaming or deleting a subtree of tags), a
    /// tag's rename or deletion leaves the tag name index alone, and the command rewrites it once
    /// at the end (``rewriteTagNames(in:databases:)``). Each such event read every tag's record
    /// to find who holds its names: a subtree of 10,000 tags took minutes (before trial-s31).
    let tagNamesDeferred = Mutex(false)

    package init(rebuildBatch: Int, searchLanguage: SearchLanguage, boundedRebuildNotes: Int) {
        self.rebuildBatch = max(1, rebuildBatch)
        self.searchLanguage = searchLanguage
        self.boundedRebuildNotes = boundedRebuildNotes
    }

    /// The search language is part of it: a store opened with another language rebuilds.
    /// `notes-13`: links on a body's first line after a byte-order mark are found. `notes-14`:
    /// category and tag names are keyed in Unicode's composed form (see `nameKey`), and titles
    /// with accents sort by their letters (see `ListIndex.titleKey(_:)`). `notes-15`: no listing
    /// keys under "every status" (see ``ListIndex``). `notes-16`: no links in the fenced blocks
    /// of list items and block quotes, in indented code blocks or in HTML comments (see
    /// ``MarkdownCode``). `notes-17`: a heading right under a list item ends the list, so the
    /// indented code after it holds no links (see ``IndentedBlocks``). `notes-18`: so does a
    /// thematic break, and a setext heading's underline under a paragraph. `notes-19`: a code span
    /// over lines of a paragraph is code, and a `<!--` in it opens no comment (see
    /// ``MarkdownCode/LineState``). `notes-20`: a setext heading's underline ends the paragraph,
    /// and so does a block quote's first line, so no span goes on past them (see
    /// ``IndentedBlocks/endsParagraph(_:_:)``). `notes-21`: so do an HTML block's first line
    /// (`<div>`) and a nested quote; an ordered item not numbered 1, an empty item and a marker
    /// indented 4 columns past the paragraph's item do not. `notes-22`: nor does a setext
    /// underline on a lazy line (`> a` then `===`: the quote's paragraph goes on). `notes-23`: a
    /// Markdown link to a note's file, `[text](other.md)`, is a link (see ``MarkdownLink``).
    /// `notes-24`: a wiki link by a path from the note's folder or the vault's root,
    /// `[[../Plan]]`, leads to that file's note (see ``WikiLink/relativePath(_:from:)``).
    /// `notes-25`: so does a reference link whose definition names one, `[text][ref]` with
    /// `[ref]: other.md`.
    /// `notes-26`: a file link's key is its path as written, not folded (``LinkKey/file(_:)``).
    /// `notes-27`: a reference definition right under a paragraph's line is that paragraph's
    /// text, defining nothing (``MarkdownLink/definitions(_:)``).
    /// `notes-28`: a reference definition in a block quote or on a list item's line (`> [a]: x.md`,
    /// `- [a]: x.md`) defines its label for the whole note, as CommonMark reads it.
    /// `notes-29`: an HTML block's quote or list item is its text, defining nothing (`<div>` then
    /// `- [a]: x.md`); a nested item or a quote in an item is looked past (`- - [a]: x.md`), and
    /// `- > a` then `  > [a]: x.md` is the quote's paragraph.
    public var version: String { "notes-29+" + SearchBridge.version + "+" + searchLanguage.name }

    /// The search language of projections of this program whose ``version`` is `version`, or nil
    /// (another program's, or no language this one knows).
    static func searchLanguage(ofVersion version: String) -> SearchLanguage? {
        guard let name = version.split(separator: "+").last, let language = SearchLanguage(String(name)),
            NotesProjection(searchLanguage: language).version == version
        else { return nil }
        return language
    }

    enum DB {
        static let notes = "notes"
        static let list = "list"
        /// Each note's ``NoteRow`` by id: what a listing reads instead of the whole note.
        static let rows = "rows"
        static let categories = "categories"
        static let categoryNames = "category_names"
        static let tags = "tags"
        static let tagNames = "tag_names"
        /// The ids of the notes an event ever left pinned (keys only): where a past listing
        /// finds the notes that were pinned then (``NotebookState/everPinned``).
        static let pinnedEver = "pinned_ever"
        /// The ids of the notes whose body holds a sync conflict not resolved yet (keys only):
        /// what `notes conflicts` and the end of a sync read, whatever the size of the store.
        static let conflicts = "conflicts"
        /// Each note an event ever filed under a category or a tag, by scope and by note (keys
        /// only, see ``Filing``): where a past listing filtered by one finds the notes it may hold.
        static let filedEver = "filed_ever"
    }

    public var databaseSpecs: [(name: String, flags: DatabaseFlags)] {
        let own: [(name: String, flags: DatabaseFlags)] = [
            (DB.notes, []), (DB.rows, []), (DB.list, []), (DB.categories, []), (DB.categoryNames, []), (DB.tags, []),
            (DB.tagNames, []), (DB.pinnedEver, []), (DB.conflicts, []), (DB.filedEver, []), (LinkIndex.titles, []),
            (LinkIndex.aliases, []),
            (LinkIndex.noteTitles, []),
            (LinkIndex.links, []),
        ]
        return own + SearchBridge.databaseSpecs
    }

    func categoryTable(_ databases: ProjectionDatabases) -> EntityTable<Category> {
        EntityTable(records: databases[DB.categories], names: databases[DB.categoryNames])
    }

    func tagTable(_ databases: ProjectionDatabases) -> EntityTable<Tag> {
        EntityTable(records: databases[DB.tags], names: databases[DB.tagNames])
    }

    // MARK: Inline

    public func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        // Categories and tags first, so every one a note names has its record; then each note
        // once, folding all its events of the batch (a bulk import touches each record once).
        // The events stay where they are: each note gets the indices of its events, in order.
        var noteIDs: [Identifier] = []
        var noteNumber: [Identifier: Int] = [:]
        var numbers = [Int](repeating: -1, count: events.count)
        var counts: [Int] = []
        // A batch of several tag events (a sync pulling another device's rename of a subtree, an
        // import) writes the tag name index once, after them: each rename or deletion read every
        // tag's record to find who holds its names, 3,000 pulled renames 20 s (before trial-s31).
        var tagEvents = 0
        if events.count > 1 {
            for e in events where e.stream.hasPrefix("tag/") { tagEvents += 1 }
        }
        let tagsInBatch = tagEvents > 1
        let deferTagNames = tagsInBatch || tagNamesDeferred.withLock { $0 }
        for i in events.indices {
            switch StreamRef(events[i].stream) {
            case .category(let id):
                try apply(
                    events[i], id: id, subject: .category(id), to: categoryTable(databases), as: CategoryEvent.self,
                    scope: .category(id), in: txn, databases: databases)
            case .tag(let id):
                try apply(
                    events[i], id: id, subject: .tag(id), to: tagTable(databases), as: TagEvent.self, scope: .tag(id),
                    deferringNames: deferTagNames, in: txn, databases: databases)
            case .note(let id):
                let n: Int
                if let known = noteNumber[id] {
                    n = known
                } else {
                    n = noteIDs.count
                    noteNumber[id] = n
                    noteIDs.append(id)
                    counts.append(0)
                }
                numbers[i] = n
                counts[n] += 1
            case .other:
                break
            }
        }
        if tagsInBatch { try rewriteTagNames(in: txn, databases: databases) }
        // Each note's event indices, contiguous and in log order (a counting sort).
        var starts = [Int](repeating: 0, count: noteIDs.count + 1)
        for n in noteIDs.indices { starts[n + 1] = starts[n] + counts[n] }
        var order = [Int](repeating: 0, count: starts[noteIDs.count])
        var fill = starts
        for i in events.indices where numbers[i] >= 0 {
            order[fill[numbers[i]]] = i
            fill[numbers[i]] += 1
        }
        // The search index takes the batch's changes at once: each posting block is written once.
        var changes: [(old: Note?, new: Note)] = []
        changes.reserveCapacity(noteIDs.count)
        for n in noteIDs.indices {
            if let change = try applyNote(
                id: noteIDs[n], events, order[starts[n]..<starts[n + 1]], in: txn, databases: databases)
            {
                changes.append(change)
            }
        }
        try SearchBridge.update(changes: changes, in: txn, databases: databases, language: searchLanguage)
    }

    private func apply<E, K>(
        _ e: LiftedEvent, id: Identifier, subject: FoldSubject, to table: EntityTable<E>,
        as: NamedEntityEvent<K>.Type, scope: ListQuery.Scope, deferringNames: Bool = false,
        in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws {
        guard let event = try NamedEntityEvent<K>.decode(e) else {
            throw FoldError.foreignType(e.type, version: e.schemaVersion, in: subject)
        }
        try table.apply(event, id: id, subject: subject, at: e.recordedAt, deferringNames: deferringNames, in: txn) {
            try notesNaming(scope: scope, in: txn, databases: databases)
        }
    }

    /// Rewrites the tag name index from every tag's record: once, at the end of a write whose tag
    /// events left it alone (``tagNamesDeferred``).
    package func rewriteTagNames(in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        let table = tagTable(databases)
        let entries = NameIndex.entries(try table.all(in: txn))
        try txn.clear(table.names)
        for (key, id) in entries { try txn.put(table.names, key: key, value: id.bytes) }
    }

    /// Folds the note's events into its records; returns the change for the search index.
    private func applyNote(
        id: Identifier, _ all: [LiftedEvent], _ indices: ArraySlice<Int>, in txn: borrowing Transaction,
        databases: ProjectionDatabases
    ) throws -> (old: Note?, new: Note)? {
        let old = try note(id, in: txn, databases: databases)
        let folded = try fold(id, from: old, all, indices)
        guard let new = folded.note else { return nil }
        try LinkIndex.update(
            note: id, old: old, new: new, titles: folded.titles, names: folded.names, in: txn,
            databases: linkDatabases(databases))
        // A note pinned before this batch is in the set already: only a pin writes it.
        if folded.pinned && old?.pinned != true { try txn.put(databases[DB.pinnedEver], key: id.bytes, value: []) }
        try storeFilings(folded.filings, old: old, in: txn, databases: databases)
        try storeRecords(old: old, new: new, in: txn, databases: databases)
        return (old, new)
    }

    /// A note folded from some of its events, and what the links and `pinned_ever` projections
    /// take from them.
    struct FoldedNote {
        var note: Note?
        /// Each event's title, folded, where the event sets one.
        var titles: [(position: UInt64, folded: String)] = []
        /// The note's names after each event that may rename it.
        var names: [(position: UInt64, names: [String])] = []
        /// Whether any of the events left it pinned.
        var pinned = false
        /// The categories and tags the events filed it under (see ``Filing``).
        var filings: [Filing] = []
        /// The same filings, to find one at once.
        var filed: Set<Filing> = []
    }

    /// Folds the events of `all` at `indices` (the note's, in log order) into `start`.
    func fold(_ id: Identifier, from start: Note?, _ all: [LiftedEvent], _ indices: some Sequence<Int>) throws
        -> FoldedNote
    {
        var folded = FoldedNote(note: start)
        for i in indices {
            let e = all[i]
            guard let kind = NoteEventKind.matcher.kind(e.type, version: e.schemaVersion) else {
                throw FoldError.foreignType(e.type, version: e.schemaVersion, in: .note(id))
            }
            let p = try e.payload.withUnsafeBytes { bytes in try NotePayload<String>(kind, decoding: bytes) }
            try NoteFold.apply(kind, p, to: &folded.note, id: id, at: e.recordedAt, version: e.version)
            folded.pinned = folded.pinned || folded.note?.pinned == true
            if let note = folded.note { Filing.after(kind, p, note, into: &folded.filings, seen: &folded.filed) }
            if kind.setsTitle, let title = folded.note?.title {
                folded.titles.append((e.position, TextFolding.fold(title)))
            }
            if LinkIndex.mayRename(kind, p), let note = folded.note {
                folded.names.append((e.position, LinkIndex.names(of: note)))
            }
        }
        return folded
    }

    func linkDatabases(_ databases: ProjectionDatabases) -> LinkDatabases {
        LinkDatabases(
            titles: databases[LinkIndex.titles], aliases: databases[LinkIndex.aliases],
            noteTitles: databases[LinkIndex.noteTitles], links: databases[LinkIndex.links])
    }

    /// Writes the note's record, row and listing keys, going from `old` to `new` (nil: the note
    /// is gone), and moves its share of the category and tag counts.
    func storeRecords(old: Note?, new: Note?, in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        guard let id = new?.id ?? old?.id else { return }
        let key = id.bytes
        let row = new.map { NoteRow($0).encoded() }
        if let new, let row {
            try txn.put(databases[DB.notes], key: key, value: new.encoded())
            try txn.put(databases[DB.rows], key: key, value: row)
        } else {
            _ = try txn.delete(databases[DB.notes], key: key)
            _ = try txn.delete(databases[DB.rows], key: key)
        }
        if let isConflicted = new?.isConflicted, isConflicted != old?.isConflicted {
            if isConflicted {
                try txn.put(databases[DB.conflicts], key: key, value: [])
            } else {
                _ = try txn.delete(databases[DB.conflicts], key: key)
            }
        } else if new == nil, old?.isConflicted == true {
            _ = try txn.delete(databases[DB.conflicts], key: key)
        }
        // A note whose listing fields other than its update time are unchanged (an edit of its
        // text) moves only in the listings by update time: only those keys are made and compared.
        let sorts = ListIndex.sortsMoved(from: old, to: new)
        try storeListKeys(
            old: old, new: new, row: row, oldKeys: old.map { ListIndex.keys(for: $0, sorts: sorts) } ?? [],
            newKeys: new.map { ListIndex.keys(for: $0, sorts: sorts) } ?? [], in: txn, list: databases[DB.list])
        // Counts are of notes not in the trash. Only a net change is written: an edit that keeps
        // the note's category and tags rewrites none of their records.
        let was = old.flatMap { $0.trashed ? nil : $0 }
        let now = new.flatMap { $0.trashed ? nil : $0 }
        let categories = Self.netCounts(was?.category.map { [$0] } ?? [], now?.category.map { [$0] } ?? [])
        for (c, delta) in categories { try categoryTable(databases).adjustCount(c, by: delta, in: txn) }
        for (t, delta) in Self.netCounts(was?.tags ?? [], now?.tags ?? []) {
            try tagTable(databases).adjustCount(t, by: delta, in: txn)
        }
    }

    /// Moves the note's listing keys from `oldKeys` to `newKeys` (those that may differ), the
    /// row kept in the default listing's keys (see ``ListIndex/covers(_:)``) brought up to date
    /// too: written with each new key, and in place under a key that did not move when the row
    /// changed all the same (two events at one instant move only its version).
    private func storeListKeys(
        old: Note?, new: Note?, row: [UInt8]?, oldKeys: [[UInt8]], newKeys: [[UInt8]], in txn: borrowing Transaction,
        list: Database
    ) throws {
        // A note has a key per tag and sort: with thousands of tags, comparing each key with
        // every other took minutes (before trial-s31), so many keys are compared through sets;
        // a few (nearly every note) as before, with no set to make.
        let many = oldKeys.count + newKeys.count > 64
        let oldSet: Set<[UInt8]> = many ? Set(oldKeys) : []
        let newSet: Set<[UInt8]> = many ? Set(newKeys) : []
        func inOld(_ k: [UInt8]) -> Bool { many ? oldSet.contains(k) : oldKeys.contains(k) }
        func inNew(_ k: [UInt8]) -> Bool { many ? newSet.contains(k) : newKeys.contains(k) }
        for k in oldKeys where !inNew(k) { try txn.delete(list, key: k) }
        for k in newKeys where !inOld(k) {
            try txn.put(list, key: k, value: ListIndex.covers(k) ? row ?? [] : [])
        }
        guard let new, let row, let old, NoteRow(old) != NoteRow(new) else { return }
        // The covering key is among the new keys unless no key moved.
        let made = newKeys.contains(where: ListIndex.covers) ? newKeys : ListIndex.keys(for: new, sorts: [.updated])
        for k in made where ListIndex.covers(k) {
            if inOld(k) || !inNew(k) { try txn.put(list, key: k, value: row) }
        }
    }

    /// How the count of each id changes when a note goes from being counted under `old` to
    /// under `new` (an id listed twice counts twice), in id order, changes of zero left out.
    static func netCounts(_ old: [Identifier], _ new: [Identifier]) -> [(Identifier, Int)] {
        var deltas: [Identifier: Int] = [:]
        for (ids, sign) in [(old, -1), (new, 1)] {
            for id in ids { deltas[id, default: 0] += sign }
        }
        return deltas.filter { $0.value != 0 }.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
    }

    /// Writes notes whose instants changed and nothing else (a sync that confirmed this device's
    /// events at the shared log's instants): their records, rows, listing keys and search entries.
    /// Every other field of each pair must be equal; the caller checks.
    package func refreshInstants(
        _ changes: [(old: Note, new: Note)], in txn: borrowing Transaction, databases: ProjectionDatabases
    ) throws {
        for (old, new) in changes {
            let row = NoteRow(new).encoded()
            try txn.put(databases[DB.notes], key: new.id.bytes, value: new.encoded())
            try txn.put(databases[DB.rows], key: new.id.bytes, value: row)
            try storeListKeys(
                old: old, new: new, row: row, oldKeys: ListIndex.keys(for: old), newKeys: ListIndex.keys(for: new),
                in: txn, list: databases[DB.list])
        }
        try SearchBridge.update(
            changes: changes.map { (old: Optional($0.old), new: $0.new) }, in: txn, databases: databases,
            language: searchLanguage)
    }

    // MARK: Queries

    /// The current note with `id`, or nil.
    public func note(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Note? {
        let key = id.bytes
        let raw = try key.withUnsafeBytes { k in try txn.get(databases[DB.notes], k) }
        guard let raw else { return nil }
        do { return try Note(decoding: raw) } catch {
            throw StoreError.damagedProjection("notes projection record of \(id): \(error)")
        }
    }

    /// Ids of notes whose hex id starts with `prefix` (lowercase hex), at most `limit`.
    public func notes(
        withPrefix prefix: String, limit: Int, in txn: borrowing Transaction, databases: ProjectionDatabases
    )
        throws -> [Identifier]
    {
        var start: [UInt8] = []
        var digits = Array(prefix.utf8)
        if digits.count % 2 == 1 { digits.append(UInt8(ascii: "0")) }
        var k = 0
        while k + 1 < digits.count {
            guard let hi = hexDigit(digits[k]), let lo = hexDigit(digits[k + 1]) else { return [] }
            start.append(hi << 4 | lo)
            k += 2
        }
        var found: [Identifier] = []
        try txn.withCursor(databases[DB.notes]) { c in
            var entry = try c.seek(start)
            while let e = entry, found.count < limit {
                guard let id = Identifier(bytes: e.key), id.hex.hasPrefix(prefix) else { break }
                found.append(id)
                entry = try c.next()
            }
        }
        return found
    }

    /// The category with `id` (including deleted ones), or nil.
    public func category(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> Category?
    {
        try categoryTable(databases).get(id, in: txn)
    }

    /// The live category named `name` (compared without regard to case), or nil.
    public func category(named name: String, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> Category?
    {
        try categoryTable(databases).named(name, in: txn)
    }

    /// Every live category (two may share a name when an import brought both).
    public func categories(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Category] {
        try categoryTable(databases).all(in: txn).filter { !$0.deleted }
    }

    /// The tag with `id` (including deleted ones), or nil.
    public func tag(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Tag? {
        try tagTable(databases).get(id, in: txn)
    }

    /// The live tag named `name` (compared without regard to case), or nil.
    public func tag(named name: String, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Tag? {
        try tagTable(databases).named(name, in: txn)
    }

    /// Every live tag.
    public func tags(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Tag] {
        try tagTable(databases).all(in: txn).filter { !$0.deleted }
    }

    /// The listing row of the note with `id`, or nil.
    public func row(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> NoteRow?
    {
        try row(id, in: txn, rows: databases[DB.rows])
    }

    /// The row of `id` in `db`, its key on the stack (a page reads 50 of them).
    private func row(_ id: Identifier, in txn: borrowing Transaction, rows db: Database) throws -> NoteRow? {
        let raw = try id.withBytes { k in try txn.get(db, k) }
        guard let raw else { return nil }
        do { return try NoteRow(id: id, decoding: raw) } catch {
            throw StoreError.damagedProjection("rows projection record of \(id): \(error)")
        }
    }

    /// One page of a listing as whole notes (bodies and properties too), reading only the
    /// index entries it returns (with tags: those of the tags asked for).
    public func list(_ query: ListQuery, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Note]
    {
        try page(query, in: txn, databases: databases) { id in try note(id, in: txn, databases: databases) }
    }

    /// One page of a listing as rows: what a listing prints, without bodies.
    public func rows(_ query: ListQuery, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> [NoteRow]
    {
        let db = databases[DB.rows]
        guard query.scope == .any, query.sort == .updated, query.tags.isEmpty else {
            return try page(query, in: txn, databases: databases) { id in try row(id, in: txn, rows: db) }
        }
        // The default listing's keys hold the rows: a page is one cursor walk, no lookup a note.
        var out: [NoteRow] = []
        out.reserveCapacity(min(query.limit, 256))
        for group: UInt8 in query.pinnedOnly ? [0] : [0, 1] {
            let prefix = ListIndex.prefix(status: query.status, scope: .any, sort: .updated, pinnedGroup: group)
            try scanEntries(prefix, reverse: query.reverse, in: txn, databases: databases) { key, value in
                guard key.count >= prefix.count + 16 else { return false }
                let id = Self.identifier(endingAt: key.count, of: key)
                guard !query.excluding.contains(id) else { return out.count < query.limit }
                if value.isEmpty {
                    // Projections from before `notes-12`, read where they cannot be rebuilt (a
                    // store opened read-only): their keys hold no row.
                    if let r = try row(id, in: txn, rows: db) { out.append(r) }
                } else {
                    do { out.append(try NoteRow(id: id, decoding: value)) } catch {
                        throw StoreError.damagedProjection("listing row of \(id): \(error)")
                    }
                }
                return out.count < query.limit
            }
            if out.count >= query.limit { break }
        }
        return out
    }

    /// The id held in the 16 bytes of `key` that end at `end`, read in place.
    @inline(__always)
    private static func identifier(endingAt end: Int, of key: UnsafeRawBufferPointer) -> Identifier {
        Identifier(
            high: UInt64(bigEndian: key.loadUnaligned(fromByteOffset: end - 16, as: UInt64.self)),
            low: UInt64(bigEndian: key.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self)))
    }

    /// One page of a listing, each entry read by `load`.
    private func page<N: ListedNote>(
        _ query: ListQuery, in txn: borrowing Transaction, databases: ProjectionDatabases,
        load: (Identifier) throws -> N?
    ) throws -> [N] {
        var out: [N] = []
        out.reserveCapacity(min(query.limit, 256))
        let groups: [UInt8] = query.pinnedOnly ? [0] : [0, 1]
        guard !query.tags.isEmpty else {
            for group in groups {
                let prefix = ListIndex.prefix(
                    status: query.status, scope: query.scope, sort: query.sort, pinnedGroup: group)
                try scan(prefix, reverse: query.reverse, in: txn, databases: databases) { id in
                    if !query.excluding.contains(id), let n = try load(id) {
                        out.append(n)
                    }
                    return out.count < query.limit
                }
                if out.count >= query.limit { break }
            }
            return out
        }
        // The tag group with the fewest notes is read from the index; the other conditions are
        // checked on each of its notes.
        let tags = tagTable(databases)
        var smallest = 0
        var fewest = Int.max
        for (i, group) in query.tags.enumerated() {
            var total = 0
            for id in group { total += try tags.get(id, in: txn)?.count ?? 0 }
            if total < fewest { (smallest, fewest) = (i, total) }
        }
        let driving = query.tags[smallest]
        func accepts(_ n: N) -> Bool {
            switch query.scope {
            case .any: break
            case .uncategorized: if n.category != nil { return false }
            case .category(let c): if n.category != c { return false }
            case .tag(let t): if !n.tags.contains(t) { return false }
            }
            return query.tags.allSatisfy { group in n.tags.contains { group.contains($0) } }
        }
        for group in groups {
            let prefixes = driving.map {
                ListIndex.prefix(status: query.status, scope: .tag($0), sort: query.sort, pinnedGroup: group)
            }
            if prefixes.count == 1 {
                try scan(prefixes[0], reverse: query.reverse, in: txn, databases: databases) { id in
                    if !query.excluding.contains(id), let n = try load(id), accepts(n) {
                        out.append(n)
                    }
                    return out.count < query.limit
                }
            } else {
                // Several tags (one and its descendants): their entries merged in key order, each
                // note once. Each tag's entries are read up to `want` at first: the merge is exact
                // up to the earliest last entry of a tag cut short, and reads more only when the
                // page is not full by then.
                let pageStart = out.count
                var want = query.limit >= Int.max / 8 ? Int.max : query.limit * 2 + 16
                while true {
                    var suffixes: [ArraySlice<UInt8>] = []
                    var boundary: ArraySlice<UInt8>?
                    for prefix in prefixes {
                        var taken = 0
                        try scanKeys(prefix, reverse: query.reverse, in: txn, databases: databases) { key in
                            let suffix = Array(key.dropFirst(prefix.count))[...]
                            suffixes.append(suffix)
                            taken += 1
                            guard taken < want else {
                                if boundary.map({ Self.before(suffix, $0, reverse: query.reverse) }) ?? true {
                                    boundary = suffix
                                }
                                return false
                            }
                            return true
                        }
                    }
                    suffixes.sort { Self.before($0, $1, reverse: query.reverse) }
                    var seen: Set<Identifier> = []
                    var complete = true
                    for s in suffixes where out.count < query.limit {
                        if let boundary, Self.before(boundary, s, reverse: query.reverse) {
                            complete = false
                            break
                        }
                        guard let id = Identifier(bytes: s.suffix(16)), seen.insert(id).inserted,
                            !query.excluding.contains(id)
                        else { continue }
                        if let n = try load(id), accepts(n) { out.append(n) }
                    }
                    if complete || out.count >= query.limit || boundary == nil { break }
                    out.removeSubrange(pageStart...)
                    want = want >= Int.max / 8 ? Int.max : want * 8
                }
            }
            if out.count >= query.limit { break }
        }
        return out
    }

    /// Calls `body` with the id of each listing entry under `prefix`, in order, while it
    /// returns true.
    func scan(
        _ prefix: [UInt8], reverse: Bool, in txn: borrowing Transaction, databases: ProjectionDatabases,
        _ body: (Identifier) throws -> Bool
    ) throws {
        try scanKeys(prefix, reverse: reverse, in: txn, databases: databases) { key in
            // The id is the key's last 16 bytes, read in place.
            guard key.count >= prefix.count + 16 else { return false }
            return try body(Self.identifier(endingAt: key.count, of: key))
        }
    }

    /// Whether suffix `a` comes before `b` in a listing read forwards or in `reverse`.
    private static func before(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, reverse: Bool) -> Bool {
        reverse ? b.lexicographicallyPrecedes(a) : a.lexicographicallyPrecedes(b)
    }

    /// Calls `body` with the key of each listing entry under `prefix`, in order, while it
    /// returns true.
    private func scanKeys(
        _ prefix: [UInt8], reverse: Bool, in txn: borrowing Transaction, databases: ProjectionDatabases,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scanEntries(prefix, reverse: reverse, in: txn, databases: databases) { key, _ in try body(key) }
    }

    /// Calls `body` with the key and value of each listing entry under `prefix`, in order, while
    /// it returns true. A prefix of every status (``ListQuery/StatusFilter/all``) holds no key of
    /// its own: the entries of the three statuses' prefixes (the same prefix but for its first
    /// byte) are merged, in the order of the keys' bytes after the status.
    private func scanEntries(
        _ prefix: [UInt8], reverse: Bool, in txn: borrowing Transaction, databases: ProjectionDatabases,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let list = databases[DB.list]
        guard prefix.first == ListQuery.StatusFilter.all.rawValue else {
            try txn.withCursor(list) { c in
                var entry = try Self.start(prefix, reverse: reverse, c)
                while let e = entry {
                    guard try body(e.key, e.value) else { break }
                    entry = try Self.step(prefix, reverse: reverse, c)
                }
            }
            return
        }
        let statuses: [[UInt8]] = [ListQuery.StatusFilter.active, .archived, .trashed].map { status in
            var p = prefix
            p[0] = status.rawValue
            return p
        }
        try txn.withCursor(list) { c0 in
            try txn.withCursor(list) { c1 in
                try txn.withCursor(list) { c2 in
                    var heads = [
                        try Self.start(statuses[0], reverse: reverse, c0),
                        try Self.start(statuses[1], reverse: reverse, c1),
                        try Self.start(statuses[2], reverse: reverse, c2),
                    ]
                    while true {
                        var next = -1
                        for i in 0..<3 {
                            guard let e = heads[i] else { continue }
                            if next < 0 || Self.afterStatus(e.key, precedes: heads[next]!.key) != reverse { next = i }
                        }
                        guard next >= 0, let e = heads[next] else { break }
                        guard try body(e.key, e.value) else { break }
                        switch next {
                        case 0: heads[0] = try Self.step(statuses[0], reverse: reverse, c0)
                        case 1: heads[1] = try Self.step(statuses[1], reverse: reverse, c1)
                        default: heads[2] = try Self.step(statuses[2], reverse: reverse, c2)
                        }
                    }
                }
            }
        }
    }

    /// The first entry under `prefix` (the last, in `reverse`), or nil.
    private static func start(_ prefix: [UInt8], reverse: Bool, _ c: borrowing Cursor) throws -> Entry? {
        let entry: Entry?
        if reverse {
            var after = prefix
            after.append(contentsOf: [UInt8](repeating: 0xFF, count: 300))
            entry = try after.withUnsafeBytes { k in try c.seekAtOrBefore(k) }
        } else {
            entry = try c.seek(prefix)
        }
        guard let entry, entry.key.starts(with: prefix) else { return nil }
        return entry
    }

    /// The entry after the cursor's under `prefix` (before it, in `reverse`), or nil.
    private static func step(_ prefix: [UInt8], reverse: Bool, _ c: borrowing Cursor) throws -> Entry? {
        guard let entry = reverse ? try c.previous() : try c.next(), entry.key.starts(with: prefix) else {
            return nil
        }
        return entry
    }

    /// Whether listing key `a` comes before `b` in the bytes after their status byte.
    private static func afterStatus(_ a: UnsafeRawBufferPointer, precedes b: UnsafeRawBufferPointer) -> Bool {
        let common = min(a.count, b.count) - 1
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let c = memcmp(x + 1, y + 1, common)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }

    /// The ids of the notes of `statuses` that carry any of `tags`, each once.
    func notes(
        taggedWithAnyOf tags: [Identifier], statuses: [ListQuery.StatusFilter], in txn: borrowing Transaction,
        databases: ProjectionDatabases
    ) throws -> Set<Identifier> {
        var ids: Set<Identifier> = []
        for t in tags {
            for status in statuses {
                for group: UInt8 in [0, 1] {
                    let prefix = ListIndex.prefix(status: status, scope: .tag(t), sort: .created, pinnedGroup: group)
                    try scan(prefix, reverse: false, in: txn, databases: databases) { id in
                        ids.insert(id)
                        return true
                    }
                }
            }
        }
        return ids
    }

    /// The ids of the notes holding a sync conflict not resolved yet, in id order.
    func conflictedIDs(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> [Identifier] {
        var ids: [Identifier] = []
        try txn.withCursor(databases[DB.conflicts]) { c in
            var entry = try c.first()
            while let e = entry {
                guard let id = Identifier(bytes: e.key) else {
                    throw StoreError.damagedProjection("a key of the conflicts projection is not a note id")
                }
                ids.append(id)
                entry = try c.next()
            }
        }
        return ids
    }

    /// How many notes an event ever left pinned: a superset of the notes pinned at any past
    /// instant.
    func everPinnedCount(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Int {
        try txn.count(databases[DB.pinnedEver])
    }

    /// Whether an event ever left the note pinned.
    func wasEverPinned(_ id: Identifier, in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Bool {
        try txn.get(databases[DB.pinnedEver], key: id.bytes) != nil
    }

    /// Calls `body` with each note an event ever left pinned, by id, while it returns true.
    func forEachEverPinned(
        in txn: borrowing Transaction, databases: ProjectionDatabases, _ body: (Identifier) throws -> Bool
    ) throws {
        try txn.withCursor(databases[DB.pinnedEver]) { c in
            var entry = try c.first()
            while let e = entry {
                guard let id = Identifier(bytes: e.key) else {
                    throw StoreError.damagedProjection("a pinned_ever key of \(e.key.count) bytes, not a note id")
                }
                guard try body(id) else { return }
                entry = try c.next()
            }
        }
    }

    /// Number of notes in the projection (any status).
    public func noteCount(in txn: borrowing Transaction, databases: ProjectionDatabases) throws -> Int {
        try txn.count(databases[DB.notes])
    }

    // MARK: Rebuild

    public func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws {
        // The first and last reports let a progress bar time the whole rebuild and clear itself.
        context.progress(0, of: head)
        let state = try NotebookState.replay(store: context.store, upTo: head, releasingPages: true) { done in
            context.progress(min(done, head &- 1), of: head)
        }
        try write(consume state, context: context, databases: databases)
        context.progress(head, of: head)
    }

    public func makeBulkFold() -> (any BulkProjectionFold)? { BulkFold(projection: self) }

    /// The notebook folded in memory as a transaction appends, then written as a rebuild
    /// writes it (see ``WriteSession/deferProjections(expecting:)``).
    private final class BulkFold: BulkProjectionFold {
        let projection: NotesProjection
        var state = NotebookState()

        init(projection: NotesProjection) { self.projection = projection }

        func fold(_ view: EventView, store: EventStore) throws { try state.apply(view, store: store) }

        /// The position of the last event folded (a stored event lifted to several shares it).
        var last: UInt64 = 0

        func fold(_ event: LiftedEvent) throws {
            if event.position != last { state.events += 1 }
            last = event.position
            try event.payload.withUnsafeBytes { p in
                try state.fold(
                    type: event.type, schemaVersion: event.schemaVersion, payload: p, stream: StreamRef(event.stream),
                    version: event.version, at: event.recordedAt, position: event.position)
            }
        }

        func write(into databases: ProjectionDatabases, writer: any ProjectionBulkWriter) throws {
            // The state handed over, so the write lets go of each part once it is written.
            let folded = state
            state = NotebookState()
            try projection.write(consume folded, context: writer, databases: databases)
        }
    }

    /// Writes a folded state into empty projection databases, in sorted bulk order.
    ///
    /// A notebook of fewer than ``boundedRebuildNotes`` notes is written with its parts built
    /// side by side: the listing's keys and then the links' tables on a thread of their own, the
    /// search index tokenized and its posting blocks encoded on another, while the other
    /// projections are written; the single writer is left with the puts of each part as it is
    /// ready. A
    /// larger one builds them one after another, each let go of before the next, so the peak is
    /// the folded notes and one part, not the sum of them (2.3 GB at 10 M events side by side):
    /// the filings, then the links' tables (and the title history they come from), then the
    /// notes, rows and listing keys, then the search index.
    func write(_ folded: consuming NotebookState, context: any ProjectionBulkWriter, databases: ProjectionDatabases)
        throws
    {
        var state = consume folded
        try writeFilings(state.takeFilings(), context: context, databases: databases)
        let (categories, tags) = state.entitiesWithCounts()
        let everPinned = state.everPinned.sorted()
        state.everPinned = []
        if state.notes.count >= boundedRebuildNotes {
            // Each part's memory is given back to the system once it is written: the next
            // part's large arrays are mapped afresh, not carved from the freed ones.
            notes_trim_heap()
            let links = LinkTables(state)
            state.titleChanges = []
            state.nameChanges = []
            try links.write(context: context, databases: databases, batch: rebuildBatch)
            _ = consume links
            notes_trim_heap()
            let notes = state.notes.takeSortedByID()
            try writeNotesListsAndEntities(
                notes, categories: categories, tags: tags, everPinned: everPinned, context: context,
                databases: databases, listing: { ListIndexBulkWriter(notes) })
            notes_trim_heap()
            try SearchBridge.bulkLoad(
                taking: consume notes, context: context, databases: databases, language: searchLanguage)
            notes_trim_heap()
            return
        }
        final class Links: @unchecked Sendable {
            // Each written by the thread before it signals, read after the wait.
            var listing: ListIndexBulkWriter?
            let listed = DispatchSemaphore(value: 0)
            var tables: LinkTables?
            let done = DispatchSemaphore(value: 0)
        }
        let links = Links()
        let whole = state
        // The listing's keys first (the writer needs them once the notes are written), then the
        // links' tables: the single writer is left with the puts of both.
        DispatchQueue.global(qos: .userInitiated).async {
            links.listing = ListIndexBulkWriter(whole.notes.values)
            links.listed.signal()
            links.tables = LinkTables(whole)
            links.done.signal()
        }
        let notes = state.notes.takeSortedByID()
        do {
            try SearchBridge.bulkLoad(notes, context: context, databases: databases, language: searchLanguage) {
                try writeNotesListsAndEntities(
                    notes, categories: categories, tags: tags, everPinned: everPinned, context: context,
                    databases: databases
                ) {
                    links.listed.wait()
                    guard let listing = links.listing else {
                        throw StoreError.damaged(position: nil, detail: "the listing was not built")
                    }
                    return listing
                }
            }
        } catch {
            links.done.wait()
            throw error
        }
        links.done.wait()
        guard let tables = links.tables else {
            throw StoreError.damaged(position: nil, detail: "the links were not built")
        }
        try tables.write(context: context, databases: databases, batch: rebuildBatch)
    }

    /// Writes `filed_ever` from the filings of a folded state, sorted where they lie: the keys
    /// by scope, then those by note, at most a batch of them a transaction.
    private func writeFilings(
        _ filings: consuming [Filing], context: any ProjectionBulkWriter, databases: ProjectionDatabases
    ) throws {
        Filing.sortByScope(&filings)
        let batch = max(1, rebuildBatch)
        for byNote in [false, true] {
            if byNote { Filing.sortByNote(&filings) }
            var next = 0
            while next < filings.count {
                let start = next
                next = try context.write { txn in
                    try txn.withCursor(databases[DB.filedEver]) { c in
                        try [UInt8]().withUnsafeBytes { v in
                            try Filing.forEachKey(of: filings, byNote: byNote, from: start, limit: batch) { k in
                                try c.put(k, v, flags: .append)
                            }
                        }
                    }
                }
            }
        }
    }

    private func writeNotesListsAndEntities(
        _ notes: [Note], categories: [Identifier: Category], tags: [Identifier: Tag], everPinned: [Identifier],
        context: any ProjectionBulkWriter, databases: ProjectionDatabases,
        listing: () throws -> ListIndexBulkWriter
    ) throws {
        let chunk = max(1, rebuildBatch / 12)
        var start = 0
        while start < notes.count {
            let slice = start..<min(start + chunk, notes.count)
            // Fields read in place: a note taken out of the array whole is four retains and four
            // releases.
            try notes.withUnsafeBufferPointer { notes in
                try context.write { txn in
                    try txn.withCursor(databases[DB.notes]) { c in
                        for i in slice {
                            let value = notes[i].encoded()
                            try notes[i].id.withBytes { k in
                                try value.withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                            }
                        }
                    }
                    try txn.withCursor(databases[DB.rows]) { c in
                        for i in slice {
                            let value = NoteRow(notes[i]).encoded()
                            try notes[i].id.withBytes { k in
                                try value.withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                            }
                        }
                    }
                }
            }
            start += chunk
        }
        try listing().write(context: context, into: databases[DB.list], batch: rebuildBatch)
        try context.write { txn in
            try categoryTable(databases).write(categories.values, in: txn)
            try tagTable(databases).write(tags.values, in: txn)
            try txn.withCursor(databases[DB.pinnedEver]) { c in
                for id in everPinned {
                    try id.bytes.withUnsafeBytes { k in
                        try [UInt8]().withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                    }
                }
            }
            try txn.withCursor(databases[DB.conflicts]) { c in
                try notes.withUnsafeBufferPointer { notes in
                    for i in notes.indices where notes[i].isConflicted {
                        try notes[i].id.bytes.withUnsafeBytes { k in
                            try [UInt8]().withUnsafeBytes { v in try c.put(k, v, flags: .append) }
                        }
                    }
                }
            }
        }
    }
}

/// What a listing shows.
public struct ListQuery: Sendable, Equatable {
    public enum Sort: UInt8, Sendable, CaseIterable {
        case updated = 0
        case created = 1
        case title = 2
    }
    public enum StatusFilter: UInt8, Sendable {
        case active = 0
        case archived = 1
        case trashed = 2
        case all = 3
    }
    public enum Scope: Sendable, Equatable {
        case any
        case uncategorized
        case category(Identifier)
        /// Notes tagged with exactly this tag.
        case tag(Identifier)
    }

    public var status: StatusFilter = .active
    public var scope: Scope = .any
    public var pinnedOnly = false
    /// Tag conditions, all of which a note must meet: each is a set of tag ids (a tag and its
    /// descendants), one of which the note must carry.
    public var tags: [[Identifier]] = []
    public var sort: Sort = .updated
    public var reverse = false
    public var limit = Int.max
    /// Notes left out of the listing (read from the index, never decoded).
    public var excluding: Set<Identifier> = []

    public init() {}
}

/// Keys of the listing index: one per (scope, sort) a note appears in, under its status. The
/// scopes are every note, its category (or uncategorized) and each of its tags.
///
/// `status | scope | sort | pinned group | sort value | id`; sort values are encoded so that
/// LMDB's byte order is the listing order (newest first for dates, A-Z for titles). A listing of
/// every status (`.all`) merges the three statuses' runs of keys, which differ only in their
/// first byte: before `notes-15` each note had a second set of keys under `.all`, which every
/// write of a note rewrote as well (a page or two of the B-tree each).
enum ListIndex {
    static func prefix(status: ListQuery.StatusFilter, scope: ListQuery.Scope, sort: ListQuery.Sort, pinnedGroup: UInt8)
        -> [UInt8]
    {
        var k: [UInt8] = []
        // Room for the whole key a caller goes on to make.
        k.reserveCapacity(longestKey)
        k.append(status.rawValue)
        switch scope {
        case .any: k.append(0)
        case .uncategorized: k.append(1)
        case .category(let id):
            k.append(2)
            id.withBytes { k.append(contentsOf: $0) }
        case .tag(let id):
            k.append(3)
            id.withBytes { k.append(contentsOf: $0) }
        }
        k.append(sort.rawValue)
        k.append(pinnedGroup)
        return k
    }

    /// The sorts whose keys of a note may differ between `old` and `new`: none when no field a
    /// key holds changed, only by update time when that is all that changed, else all of them.
    static func sortsMoved(from old: Note?, to new: Note?) -> [ListQuery.Sort] {
        guard let old, let new, old.id == new.id, old.status == new.status, old.category == new.category,
            old.tags == new.tags, old.pinned == new.pinned, old.createdAt == new.createdAt, old.title == new.title
        else { return ListQuery.Sort.allCases }
        return old.updatedAt == new.updatedAt ? [] : [.updated]
    }

    static func keys(for note: Note, sorts: [ListQuery.Sort] = ListQuery.Sort.allCases) -> [[UInt8]] {
        let status = ListQuery.StatusFilter(rawValue: note.status.rawValue)!
        var keys: [[UInt8]] = []
        keys.reserveCapacity((2 + note.tags.count) * sorts.count)
        // Each part made once (each was an array per key).
        let title = sorts.contains(.title) ? titleKey(note.title) : []
        let pinnedGroup: UInt8 = note.pinned ? 0 : 1
        func add(_ scope: ListQuery.Scope) {
            for sort in sorts {
                var k = prefix(status: status, scope: scope, sort: sort, pinnedGroup: pinnedGroup)
                switch sort {
                case .updated: appendDescending(note.updatedAt, to: &k)
                case .created: appendDescending(note.createdAt, to: &k)
                case .title: k.append(contentsOf: title)
                }
                note.id.withBytes { k.append(contentsOf: $0) }
                keys.append(k)
            }
        }
        add(.any)
        add(note.category.map { .category($0) } ?? .uncategorized)
        for t in note.tags { add(.tag(t)) }
        return keys
    }

    /// The longest key: the prefix of a category or tag (status, scope and its id, sort, pinned
    /// group: 20 bytes), a 64-byte title key and its terminator, the id.
    static let longestKey = 1 + 1 + 16 + 1 + 1 + 65 + 16

    static func appendDescending(_ t: Int64, to k: inout [UInt8]) {
        withUnsafeBytes(of: ListIndexBulkWriter.descending(t).bigEndian) { k.append(contentsOf: $0) }
    }

    /// Whether `key` is one of the default listing's (every note, by update time), whose value
    /// is the note's row (``NoteRow/encoded()``): the page `notes list` prints without options
    /// is read in one cursor walk. Every other key's value is empty.
    static func covers(_ key: [UInt8]) -> Bool {
        key.count > 3 && key[1] == 0 && key[2] == ListQuery.Sort.updated.rawValue
    }

    static func descending(_ t: Int64) -> [UInt8] {
        var k: [UInt8] = []
        appendDescending(t, to: &k)
        return k
    }

    /// Lowercased title bytes, cut at 64 bytes, then a 0 terminator so "a" sorts before "ab".
    /// A title with other than ASCII in its first 64 bytes is folded as the search index folds
    /// words (accents off, `Ångström` as `angstrom`), so that it sorts among the letters it is
    /// read as; before `notes-14` its lowercase bytes sorted `Ångström` and `émile` after `zebra`.
    static func titleKey(_ title: String) -> [UInt8] {
        // A title whose first 64 bytes are ASCII: those bytes lowercased, without lowercasing
        // the whole title as a `String` (ASCII letters lowercase alone, whatever follows them).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(65)
        for b in title.utf8.prefix(64) {
            guard b < 0x80 else {
                bytes = Array(TextFolding.fold(title).utf8.prefix(64))
                break
            }
            bytes.append(b >= 0x41 && b <= 0x5A ? b | 0x20 : b)
        }
        bytes.append(0)
        return bytes
    }
}

@inline(__always)
func hexDigit(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    default: return nil
    }
}
