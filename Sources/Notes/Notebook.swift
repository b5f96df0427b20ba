public import Basics
public import EventStore
public import LMDB
public import SearchEngine

/// The notes store: commands that validate and append events, and queries over the
/// projections. Every command runs in one write transaction; a failing command changes nothing.
///
/// ```swift
/// let book = try Notebook(path: "~/.local/share/notes", options: .init(actor: "ana@laptop"))
/// let note = try book.add(title: "Groceries", body: "- milk\n", category: "Home")
/// try book.pin(note.id)
/// ```
public final class Notebook: Sendable {
    /// How to open a notebook.
    public struct Options: Sendable {
        /// Recorded on every event: who acted.
        public var actor: String
        /// Recorded on every event: the command that made it.
        public var command: String?
        public var clock: @Sendable () -> Int64 = EventStore.systemClock
        /// When set, an event the clock would record more than this many microseconds ahead of
        /// ``EventStore/systemClock`` is refused (``InvalidInput/clockAhead(_:)``): the log's time
        /// never goes back, so every later event would be held at that instant.
        public var maximumClockLead: Int64?
        public var ids: any IdentifierGenerator = RandomIdentifiers()
        /// Bodies larger than this many UTF-8 bytes are refused.
        public var maxBodyBytes = 1 << 20
        public var readOnly = false
        /// The size the map may grow to, in bytes.
        public var maxStoreBytes = 1 << 40
        /// The map a new store starts with, in bytes; it grows as the store does (tests start
        /// tiny to make every write grow it).
        public var initialMapBytes = 64 << 20
        /// Grow the map ahead of an import, from the size of its input, so that the import's
        /// write does not fill the map and start over. Off, the map grows as the write fills it
        /// (slower; tests turn it off to exercise that path).
        public var reservesMapForImports = true
        /// The event schemas and upcasters: the notes catalogue by default. A program embedding
        /// the library may register its own upcasters on a copy (never edit shipped ones).
        public var registry: SchemaRegistry = NotesSchema.registry
        /// The language whose Snowball stemmer the search index uses (`none`: words as written,
        /// folded). Changing it rebuilds the projections at open.
        public var searchLanguage: SearchLanguage = .english
        /// Called with (done, total) during a rebuild at open.
        public var progress: (@Sendable (UInt64, UInt64) -> Void)?
        /// How a write or a rebuild that waits for another process's to end says so, once it
        /// has waited a moment (nil: without a word).
        public var waitNotice: WaitNotice?
        /// For the benchmark that compares them: a sync's rebase rebuilds every projection instead
        /// of re-folding the records of the streams it touched.
        package var rebaseRebuildsProjections = false
        /// For the benchmark that compares them: false confirms a push by pulling it back, as
        /// every sync did before a push's answer confirmed it.
        package var pushAnswerConfirms = true

        public init(actor: String, command: String? = nil) {
            self.actor = actor
            self.command = command
        }
    }

    public static let maxTitleCharacters = 500
    public static let maxCategoryCharacters = 100

    public let store: EventStore
    /// The projections' rules; in a store opened read-only whose index was built for another
    /// search language than the options', that language's (the index is read as it was built).
    public let projection: NotesProjection
    public let options: Options
    /// The rebuild the open ran (projection version changed), or nil.
    public let rebuildAtOpen: RebuildReport?
    /// Read-only, projections this program cannot read: another version built them, and the
    /// store lacks databases this one reads. Reads of projections are refused with it; the log
    /// is read as it is (`export`, `log`, `verify`).
    let unbuiltProjections: StoreError?

    public init(path: String, options: Options) throws(NotesError) {
        self.options = options
        let projection = NotesProjection(searchLanguage: options.searchLanguage)
        var config = EventStore.Configuration(registry: options.registry, projections: projection)
        config.clock = options.clock
        if let lead = options.maximumClockLead {
            config.checkClock = { at in
                if at > EventStore.systemClock() &+ lead { throw NotesError.validation(.clockAhead(at)) }
            }
        }
        config.ids = options.ids
        config.environment.readOnly = options.readOnly
        config.environment.maxMapSize = options.maxStoreBytes
        config.environment.mapSize = options.initialMapBytes
        config.progress = options.progress
        config.environment.waitNotice = options.waitNotice
        do {
            store = try EventStore(path: path, configuration: config)
            rebuildAtOpen = try store.rebuildIfNeeded()
        } catch { throw NotesError.store(error) }
        // Read-only, the projections cannot be rebuilt for a changed `search-language`: queries
        // are stemmed in the language the index was built in, not in one it does not hold.
        let opened = store
        // The stored version is the projections' own, then the schemas' part (`/schemas-...`).
        let current = opened.currentProjectionVersion
        let schemas = current.hasPrefix(projection.version) ? String(current.dropFirst(projection.version.count)) : ""
        if options.readOnly, !schemas.isEmpty,
            let stored = try? opened.read({ txn in try opened.storedProjectionVersion(in: txn) }),
            stored != current, stored.hasSuffix(schemas),
            let language = NotesProjection.searchLanguage(ofVersion: String(stored.dropLast(schemas.count)))
        {
            self.projection = NotesProjection(searchLanguage: language)
        } else {
            self.projection = projection
        }
        // An older program's store on a read-only mount (a backup, a snapshot): before 2026-12-07
        // every command failed at open, "open database p0.rows: MDB_NOTFOUND", `export` too.
        if options.readOnly, !opened.missingProjectionDatabases.isEmpty {
            let stored = try? opened.read { txn in try opened.storedProjectionVersion(in: txn) }
            unbuiltProjections = .projectionsNotBuilt(stored: stored ?? nil, missing: opened.missingProjectionDatabases)
        } else {
            unbuiltProjections = nil
        }
    }

    package var metadata: EventMetadata { EventMetadata(actor: options.actor, command: options.command) }

    package func newID() -> Identifier { options.ids.next() }

    // MARK: Reading

    /// Runs `body` with a read snapshot and the active projection databases.
    public func read<R>(_ body: (borrowing Transaction, ProjectionDatabases) throws -> R) throws(NotesError) -> R {
        if let unbuiltProjections { throw .store(unbuiltProjections) }
        return try readLog(body)
    }

    /// ``read(_:)`` without refusing projections this program cannot read (see
    /// ``unbuiltProjections``): for readers of the log alone, which must not touch `dbs` then.
    func readLog<R>(_ body: (borrowing Transaction, ProjectionDatabases) throws -> R) throws(NotesError) -> R {
        do {
            return try store.read { txn in try body(txn, try store.activeProjections(in: txn)) }
        } catch { throw NotesError.wrap(error) }
    }

    /// Runs `body` in one write transaction with its session and the projection databases.
    ///
    /// The body may start over when the map must grow (see ``WriteSession``): it takes its ids
    /// from the session and has no effect outside the transaction. `reserving` grows the map
    /// ahead for a write of about that many bytes.
    package func write<R>(reserving bytes: Int = 0, _ body: (borrowing WriteSession, ProjectionDatabases) throws -> R)
        throws(NotesError) -> R
    {
        do {
            return try store.write(reserving: bytes) { session in try body(session, try session.projectionDatabases()) }
        } catch { throw NotesError.wrap(error) }
    }

    /// Resolves a full id or a unique prefix of at least 4 hex digits (dashes ignored).
    public func resolve(_ text: String) throws(NotesError) -> Identifier {
        let cleaned = String(text.lowercased().filter { $0 != "-" })
        if cleaned.count == 32, let id = Identifier(cleaned) { return id }
        guard cleaned.count >= 4, cleaned.count <= 32, cleaned.allSatisfy(\.isHexDigit) else {
            throw .validation(.notAnID(text))
        }
        // Projections this program cannot read (an older version's store, read-only here): the
        // notes are found in the log, folded, so that what reads the log alone (`history`, `show
        // --at`, `diff`, `blame`) takes a short id there too (before 2026-12-07 refused, exit 5).
        let matches: [(id: Identifier, title: String)]
        if unbuiltProjections != nil {
            let state: NotebookState
            do { state = try NotebookState.replay(store: store) } catch { throw NotesError.wrap(error) }
            matches = state.notes.values.filter { $0.id.hex.hasPrefix(cleaned) }.sorted { $0.id < $1.id }
                .map { (id: $0.id, title: $0.title) }
        } else {
            matches = try read { txn, dbs in
                try projection.notes(withPrefix: cleaned, limit: .max, in: txn, databases: dbs).map { id in
                    (id: id, title: try projection.row(id, in: txn, databases: dbs)?.title ?? "")
                }
            }
        }
        switch matches.count {
        case 0: throw .notFound(.noteMatching(text))
        case 1: return matches[0].id
        default: throw .ambiguous(prefix: text, candidates: matches)
        }
    }

    /// The rows of the notes of every status whose hex id starts with `prefix` (lowercase hex
    /// digits, any number of them), at most `limit`, in the order of their ids: what shell
    /// completion offers for the digits typed.
    public func rows(withIDPrefix prefix: String, limit: Int) throws(NotesError) -> [NoteRow] {
        try read { txn, dbs in
            try projection.notes(withPrefix: prefix, limit: limit, in: txn, databases: dbs).compactMap { id in
                try projection.row(id, in: txn, databases: dbs)
            }
        }
    }

    /// The current note, or a not-found error.
    public func note(_ id: Identifier) throws(NotesError) -> Note {
        let n = try read { txn, dbs in try projection.note(id, in: txn, databases: dbs) }
        guard let n else { throw Self.missing(id) }
        return n
    }

    /// A page of notes, whole (bodies and properties too).
    public func list(_ query: ListQuery) throws(NotesError) -> [Note] {
        try read { txn, dbs in try projection.list(query, in: txn, databases: dbs) }
    }

    /// A page of a listing as rows: what `notes list` prints, without reading bodies.
    public func listRows(_ query: ListQuery) throws(NotesError) -> [NoteRow] {
        try read { txn, dbs in try projection.rows(query, in: txn, databases: dbs) }
    }

    /// Live categories with note counts, by name.
    public func categories() throws(NotesError) -> [Category] {
        try read { txn, dbs in try projection.categories(in: txn, databases: dbs) }
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// The live category called `name` (case-insensitive), or a not-found error.
    public func category(named name: String) throws(NotesError) -> Category {
        let c = try read { txn, dbs in try projection.category(named: Self.trim(name), in: txn, databases: dbs) }
        guard let c else { throw .notFound(.category(name: name)) }
        return c
    }

    /// The name of a category id (also of a deleted category), or nil.
    public func categoryName(_ id: Identifier?) throws(NotesError) -> String? {
        guard let id else { return nil }
        return try read { txn, dbs in try projection.category(id, in: txn, databases: dbs)?.name }
    }

    /// Counts for `notes stats`.
    public struct Stats: Sendable, Equatable {
        public var notes: Int
        public var events: UInt64
        public var categories: Int
        public var tags: Int
        public var storeBytes: Int
        public var fileBytes: Int
    }

    public func stats() throws(NotesError) -> Stats {
        let (notes, events, categories, tags) = try read { txn, dbs in
            (
                try projection.noteCount(in: txn, databases: dbs), try store.headPosition(in: txn),
                try projection.categories(in: txn, databases: dbs).count,
                try projection.tags(in: txn, databases: dbs).count
            )
        }
        return Stats(
            notes: notes, events: events, categories: categories, tags: tags, storeBytes: store.environment.usedBytes,
            fileBytes: store.environment.fileSize)
    }

    // MARK: Validation

    package static func trim(_ s: String) -> String {
        var sub = Substring(s)
        while let f = sub.first, f.isWhitespace { sub.removeFirst() }
        while let l = sub.last, l.isWhitespace { sub.removeLast() }
        return String(sub)
    }

    /// A trimmed, non-empty, one-line title of at most 500 characters.
    public static func validTitle(_ title: String) throws(NotesError) -> String {
        if let plain = plainTitle(title) { return plain }
        return try validTitleByCharacters(title)
    }

    /// ``validTitle(_:)`` a character at a time, for any title (the reference its shortcut must
    /// match).
    static func validTitleByCharacters(_ title: String) throws(NotesError) -> String {
        let t = trim(title)
        guard !t.isEmpty else {
            throw .validation(.emptyTitle)
        }
        guard t.count <= maxTitleCharacters else {
            throw .validation(.titleTooLong(characters: t.count, limit: maxTitleCharacters))
        }
        guard !t.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" }) else {
            throw .validation(.titleNotOneLine)
        }
        return t
    }

    /// ``validTitle(_:)`` of an ASCII title within the limit without control characters but tabs,
    /// byte by byte (each byte is a character, and white space is the space and the tab); nil
    /// for any other title, or one empty once trimmed, which the general path answers. Walking
    /// the characters cost 2,800 instructions a title, checked at every import of one.
    static func plainTitle(_ title: String) -> String? {
        var title = title
        return title.withUTF8 { b -> String? in
            guard b.count <= maxTitleCharacters, isASCII(b), !b.contains(where: { $0 < 0x20 && $0 != 0x09 }) else {
                return nil
            }
            var (lo, hi) = (0, b.count)
            while lo < hi, b[lo] == 0x20 || b[lo] == 0x09 { lo += 1 }
            while hi > lo, b[hi - 1] == 0x20 || b[hi - 1] == 0x09 { hi -= 1 }
            guard lo < hi else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: b[lo..<hi]), as: UTF8.self)
        }
    }

    /// A title typed for a new note or a retitle: ``validTitle(_:)``, and something to see. A
    /// title of only zero-width or direction characters, or of marks with nothing to combine
    /// with, shows as nothing. (Titles read from the log, an import or another device keep the
    /// rule they were written under: refusing them would stop a notebook that holds one.)
    public static func validTypedTitle(_ title: String) throws(NotesError) -> String {
        let t = try validTitle(title)
        guard
            t.unicodeScalars.contains(where: { s in
                switch s.properties.generalCategory {
                case .format, .control, .nonspacingMark, .enclosingMark, .spacingMark, .spaceSeparator,
                    .lineSeparator, .paragraphSeparator, .unassigned:
                    return false
                default: return !s.properties.isWhitespace
                }
            })
        else { throw .validation(.emptyTitle) }
        return t
    }

    // MARK: Names typed at a command

    // A title, category, tag or alias typed on the command line refuses DEL (U+007F) and the C1
    // controls (U+0080-U+009F, NEL U+0085 among them) as the store's rules refuse C0 ones: they
    // move a terminal's cursor or end a line as those do (before 2026-12-07 they were taken).
    // The store's own rules (``validTitle(_:)``, ``validCategoryName(_:)``, ``validTagName(_:)``)
    // are unchanged: what the log, an import or another device (an older program) holds still
    // reads, replays and syncs, and a name that finds what exists (`untag`, a rename's old name)
    // is looked up as it is.

    /// ``validTypedTitle(_:)`` of a title typed at a command: no DEL or C1 control either.
    package static func validCommandTitle(_ title: String) throws(NotesError) -> String {
        let t = try validTypedTitle(title)
        return try refusingDeleteOrC1(t, .titleNotOneLine)
    }

    /// ``validCategoryName(_:)`` of a category name typed at a command: no DEL or C1 control either.
    package static func validCommandCategoryName(_ name: String) throws(NotesError) -> String {
        let t = try validCategoryName(name)
        return try refusingDeleteOrC1(t, .categoryNameHasControlCharacter(t))
    }

    /// ``validTagName(_:)`` (which refuses DEL already) of a tag name typed at a command: no C1
    /// control either.
    package static func validCommandTagName(_ name: String) throws(NotesError) -> String {
        let t = try validTagName(name)
        return try refusingDeleteOrC1(t, .tagNameHasControlCharacter(t))
    }

    /// ``aliasesValue(_:)`` of aliases typed at a command: no DEL or C1 control in one either.
    package static func validCommandAliases(_ aliases: [String]) throws(NotesError) -> String {
        for a in aliases {
            _ = try refusingDeleteOrC1(
                a, .badAlias(String(a.prefix(60)), reason: "it contains a line break or control character"))
        }
        return try aliasesValue(aliases)
    }

    /// `name`, or `refusal` when it holds DEL or a C1 control.
    private static func refusingDeleteOrC1(_ name: String, _ refusal: InvalidInput) throws(NotesError) -> String {
        guard !name.unicodeScalars.contains(where: isDeleteOrC1Control) else { throw .validation(refusal) }
        return name
    }

    package func validBody(_ body: String) throws(NotesError) -> String {
        let size = body.utf8.count
        guard size <= options.maxBodyBytes else {
            throw .validation(.bodyTooLarge(bytes: size, limit: options.maxBodyBytes))
        }
        guard !body.unicodeScalars.contains("\u{0}") else {
            throw .validation(.bodyHasNUL)
        }
        return body
    }

    package static func validCategoryName(_ name: String) throws(NotesError) -> String {
        let t = trim(name)
        guard !t.isEmpty else { throw .validation(.emptyCategoryName) }
        guard t.count <= maxCategoryCharacters else {
            throw .validation(.categoryNameTooLong(characters: t.count, limit: maxCategoryCharacters))
        }
        guard !t.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .validation(.categoryNameHasControlCharacter(t))
        }
        return t
    }
}
