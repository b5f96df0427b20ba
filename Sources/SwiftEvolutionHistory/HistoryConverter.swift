import Basics
import EventStore
import LMDB
public import Notes
public import NotesInterchange

/// Turns a document edit history (the swift-evolution corpus format, one JSON object per line)
/// into note events: each document lineage is one note.
///
/// A line is `{"doc", "commit", "time", "author", "op", "title", "status", "text", "from"}`
/// (see `Samples/README.md`). `create` gives `NoteCreated` (title: `title`, else the file
/// name; body: `text`; category: the coarse category of `status`, see ``ProposalStatus``);
/// `edit` and `rename` (which follows `from`, so the note keeps its identity) give
/// `NoteRetitled`, `NoteBodyEdited` and `NoteCategorized` for what changed; `delete` gives
/// `NoteTrashed`. The document's path (`doc`) is the note's `source` (a `NotePropertySet` after
/// its creation and after a rename that moves it), so that the documents' Markdown links to one
/// another (`[SE-0296](0296-async-await.md)`) lead to their notes. The author is the actor and
/// the commit time `recordedAt`.
///
/// Ids are derived from the input (note ids from the creating commit and path, event ids from
/// commit, path, operation and what changed), so converting the same file again yields the same
/// events and importing it twice changes nothing.
public struct HistoryConverter: Sendable {
    /// One event to append, with the category still by name (resolved in the store).
    struct Planned: Sendable {
        enum Change: Sendable {
            case created(title: String, body: String, category: String?)
            case retitled(String)
            case bodyEdited(String)
            case categorized(String?)
            case trashed
            /// The document's path, the note's `source`.
            case placed(String)
        }
        var line: Int
        var note: Identifier
        var id: Identifier
        var change: Change
        var actor: String
        var recordedAt: Int64

        /// The bytes it brings to the store: its texts, and about 512 of its own.
        var bytes: Int {
            switch change {
            case .created(let title, let body, _): title.utf8.count &+ body.utf8.count &+ 512
            case .retitled(let title): title.utf8.count &+ 512
            case .bodyEdited(let body): body.utf8.count &+ 512
            case .categorized, .trashed: 512
            case .placed(let path): path.utf8.count &+ 512
            }
        }
    }

    struct Lineage: Sendable {
        var note: Identifier
        var title: String
        var body: String
        var category: String?
    }

    public let maxBodyBytes: Int
    private(set) var planned: [Planned] = []
    private var lineages: [Lineage] = []
    private var byPath: [String: Int] = [:]
    /// Lines read so far.
    public private(set) var lineCount = 0

    /// The notes (lineages) seen so far.
    public var noteCount: Int { lineages.count }
    /// The events produced so far.
    public var eventCount: Int { planned.count }

    public init(maxBodyBytes: Int = 1 << 20) { self.maxBodyBytes = maxBodyBytes }

    /// Converts the next line (without its newline); blank lines are skipped.
    package mutating func add(line bytes: UnsafeRawBufferPointer) throws(InterchangeError) {
        lineCount += 1
        let n = lineCount
        if ImportInput.isBlank(bytes) { return }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch {
            if n == 1, bytes.starts(with: ImportInput.gzipMagic) {
                throw InterchangeError(line: n, ImportInput.gzipRefusal)
            }
            if error.reason == .invalidUTF8 { throw InterchangeError(line: n, "invalid UTF-8 at byte \(error.offset)") }
            throw InterchangeError(line: n, "malformed JSON: \(error)")
        }
        do { try convert(value, line: n) } catch { throw InterchangeError(line: n, error.message) }
    }

    /// ``add(line:)`` for any byte collection.
    public mutating func add(line: some Collection<UInt8>) throws(InterchangeError) {
        try withContiguousBytes(line) { (b) throws(InterchangeError) in try add(line: b) }
    }

    struct Problem: Error { let message: String }

    private static let keys: Set<String> = ["doc", "commit", "time", "author", "op", "title", "status", "text", "from"]

    private mutating func convert(_ value: JSONValue, line: Int) throws(Problem) {
        guard let members = value.objectValue else { throw Problem(message: "expected a JSON object") }
        // Before 2026-12-07 `unknown key "position"`, which did not say which command reads the file.
        if line == 1, value["eventId"] != nil, value["stream"] != nil, value["doc"] == nil {
            throw Problem(
                message: "an event of `notes export`, not a line of an edit history: import it with `notes import FILE`"
            )
        }
        for m in members where !Self.keys.contains(m.key) { throw Problem(message: "unknown key \"\(m.key)\"") }
        func string(_ key: String) throws(Problem) -> String {
            guard let v = value[key] else { throw Problem(message: "missing key \"\(key)\"") }
            guard let s = v.stringValue else { throw Problem(message: "\"\(key)\" must be a string") }
            return s
        }
        /// A document's path: never empty (the corpus' `doc` and `from` are paths of Markdown
        /// files; before 2026-12-07 an empty one made a note titled "untitled").
        func path(_ key: String) throws(Problem) -> String {
            let s = try string(key)
            guard !s.isEmpty else {
                throw Problem(message: "\"\(key)\" is empty: it must be the document's path (proposals/NNNN-name.md)")
            }
            return s
        }
        func optionalString(_ key: String) throws(Problem) -> String? {
            guard let v = value[key], !v.isNull else { return nil }
            guard let s = v.stringValue else { throw Problem(message: "\"\(key)\" must be a string or null") }
            return s
        }
        let doc = try path("doc")
        let commit = try string("commit")
        let timeText = try string("time")
        guard let time = RFC3339.parse(timeText) else {
            throw Problem(message: "time \(timeText.jsonQuoted) is not an RFC 3339 instant")
        }
        let author = try string("author")
        let op = try string("op")
        let title = try optionalString("title")
        let status = try optionalString("status")
        let actor = author.isEmpty ? "unknown" : author

        func id(_ kind: String) -> Identifier { Identifier.derived("swift-evolution", commit, doc, op, kind) }
        func plan(_ lineage: Int, _ kind: String, _ change: Planned.Change) {
            planned.append(
                Planned(
                    line: line, note: lineages[lineage].note, id: id(kind), change: change, actor: actor,
                    recordedAt: time))
        }

        switch op {
        case "create":
            if byPath[doc] != nil { throw Problem(message: "create of \(doc), which exists already") }
            let text = try body(try string("text"))
            let lineage = Lineage(
                note: Identifier.derived("swift-evolution", commit, doc, "note"), title: Self.title(title, doc: doc),
                body: text, category: ProposalStatus.category(of: status))
            lineages.append(lineage)
            byPath[doc] = lineages.count - 1
            plan(
                lineages.count - 1, "created",
                .created(title: lineage.title, body: lineage.body, category: lineage.category))
            plan(lineages.count - 1, "source", .placed(doc))
        case "edit", "rename":
            let index: Int
            var moved = false
            if op == "rename" {
                let from = try path("from")
                moved = from != doc
                guard let i = byPath[from] else {
                    throw Problem(message: "rename of \(from), which no earlier line created")
                }
                if from != doc, byPath[doc] != nil {
                    throw Problem(message: "rename of \(from) onto \(doc), which exists already")
                }
                byPath[from] = nil
                byPath[doc] = i
                index = i
            } else {
                guard let i = byPath[doc] else {
                    throw Problem(message: "edit of \(doc), which no earlier line created")
                }
                index = i
            }
            let newTitle = Self.title(title, doc: doc)
            let newBody = try body(try string("text"))
            let newCategory = ProposalStatus.category(of: status)
            if newTitle != lineages[index].title {
                lineages[index].title = newTitle
                plan(index, "retitled", .retitled(newTitle))
            }
            if newBody != lineages[index].body {
                lineages[index].body = newBody
                plan(index, "body", .bodyEdited(newBody))
            }
            if newCategory != lineages[index].category {
                lineages[index].category = newCategory
                plan(index, "categorized", .categorized(newCategory))
            }
            if moved { plan(index, "source", .placed(doc)) }
        case "delete":
            guard let i = byPath[doc] else { throw Problem(message: "delete of \(doc), which no earlier line created") }
            byPath[doc] = nil
            plan(i, "trashed", .trashed)
        default:
            throw Problem(message: "op \(op.jsonQuoted) is not create, edit, rename or delete")
        }
    }

    private func body(_ text: String) throws(Problem) -> String {
        let size = text.utf8.count
        if size > maxBodyBytes { throw Problem(message: "the text is \(size) bytes; the limit is \(maxBodyBytes)") }
        if containsNUL(text) { throw Problem(message: "the text contains a NUL character") }
        return text
    }

    /// The `title` made a valid note title, else the file name without `.md`.
    static func title(_ title: String?, doc: String) -> String {
        func clean(_ s: String) -> String {
            let oneLine = String(s.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
            return String(Notebook.trim(oneLine).prefix(Notebook.maxTitleCharacters))
        }
        if let title {
            let t = clean(title)
            if !t.isEmpty { return t }
        }
        var name = Substring(doc.split(separator: "/").last ?? Substring(doc))
        if name.hasSuffix(".md") { name = name.dropLast(3) }
        let t = clean(String(name))
        return t.isEmpty ? "untitled" : t
    }
}

/// What an import of a history did.
public struct HistoryImportSummary: Sendable, Equatable {
    /// Input lines.
    public var lines: Int
    /// Notes (document lineages) in the input.
    public var notes: Int
    /// Note events the input converts to.
    public var events: Int
    /// Note events appended; with `skipped`, they make `events`.
    public var appended: Int
    /// Note events already stored by an earlier import of the same history.
    public var skipped: Int
    /// Categories created (one event each, beside the note events).
    public var categoriesCreated: Int
    /// Events appended (categories' too) dated before the store's last event from before the
    /// import (`storeInstant`), so recorded at that instant: the log's time never goes back.
    public var recordedLater: Int
    /// The instant of the store's last event before the import, when `recordedLater` is not 0.
    public var storeInstant: Int64?

    public init(
        lines: Int, notes: Int, events: Int, appended: Int, skipped: Int, categoriesCreated: Int = 0,
        recordedLater: Int = 0, storeInstant: Int64? = nil
    ) {
        self.lines = lines
        self.notes = notes
        self.events = events
        self.appended = appended
        self.skipped = skipped
        self.categoriesCreated = categoriesCreated
        self.recordedLater = recordedLater
        self.storeInstant = storeInstant
    }
}

extension Notebook {
    /// Appends the converted history in one write transaction, all or nothing.
    ///
    /// Categories are found by name (case-insensitive) or created. Events already stored are
    /// skipped, so importing the same history again changes nothing. The log never goes back
    /// in time: a commit older than the event before it is recorded at that event's instant.
    @discardableResult
    public func importHistory(_ converter: HistoryConverter) throws(NotesError) -> HistoryImportSummary {
        // The map is grown ahead for the texts, so that the write runs once: before 2026-12-07 it
        // was grown for 512 bytes an event, and the corpus' import (116 MB of texts) filled it and
        // ran again in a larger map, twice (64, 128, then 256 MiB).
        let bytes = converter.planned.reduce(0) { $0 &+ $1.bytes }
        return try write(reserving: importReservation(forFileBytes: bytes)) { session, dbs in
            try session.deferProjections(expecting: converter.planned.count)
            var writer = HistoryWriter(book: self, dbs: dbs, now: store.configuration.clock())
            writer.later = LaterRecording(storeInstant: try store.lastRecordedAt(in: session.transaction))
            writer.summary = HistoryImportSummary(
                lines: converter.lineCount, notes: converter.noteCount, events: converter.planned.count, appended: 0,
                skipped: 0)
            for p in converter.planned {
                try writer.add(p, session: session)
                if session.deferredBytes >= Self.importProjectionBytes { try session.applyDeferredProjections() }
            }
            try writer.flush(session: session)
            writer.summary.recordedLater = writer.later.count
            writer.summary.storeInstant = writer.later.reportedInstant
            return writer.summary
        }
    }

    /// Converts and imports a history file (`-` for standard input; `.gz` is decompressed
    /// with `gzip -dc`), all or nothing.
    @discardableResult
    public func importHistory(fromFile path: String) throws(NotesError) -> HistoryImportSummary {
        let maxBodyBytes = options.maxBodyBytes
        // One converter for the lines checked while the input is copied (the blank ones, then
        // the first that is not), so that a refusal numbers the line as the import would.
        var firstLines = HistoryConverter(maxBodyBytes: maxBodyBytes)
        let input = try ImportInput(
            path: path, spoolDirectory: store.environment.path,
            maxLineBytes: ImportInput.maxLineBytes(forBody: maxBodyBytes)
        ) { (line) throws(InterchangeError) in try firstLines.add(line: line) }
        var converter = HistoryConverter(maxBodyBytes: options.maxBodyBytes)
        do {
            try input.forEachLine(maxLineBytes: ImportInput.maxLineBytes(forBody: options.maxBodyBytes)) { line, _ in
                try converter.add(line: line)
            }
        } catch let e as InterchangeError {
            throw .validation(e.input)
        } catch {
            throw NotesError.wrap(error)
        }
        return try importHistory(converter)
    }
}

/// Appends converted events inside one write transaction, resolving categories by name.
private struct HistoryWriter {
    let book: Notebook
    let dbs: ProjectionDatabases
    var summary = HistoryImportSummary(lines: 0, notes: 0, events: 0, appended: 0, skipped: 0)
    var categories: [String: Identifier] = [:]
    var later = LaterRecording(storeInstant: nil)
    var group: [NewEvent] = []
    var groupNote: Identifier?
    /// The clock when the import began: a commit dated more than a day after it is refused.
    let now: Int64

    init(book: Notebook, dbs: ProjectionDatabases, now: Int64) {
        self.book = book
        self.dbs = dbs
        self.now = now
    }

    mutating func add(_ p: HistoryConverter.Planned, session: borrowing WriteSession) throws {
        // As `import` refuses it: the log's time never goes back, so an event dated far ahead
        // would date every later change of the store then, and hide them from `--as-of now`.
        if p.recordedAt > now &+ Notebook.importAllowedLead {
            throw NotesError.validation(
                .line(
                    p.line,
                    reason:
                        "time \(RFC3339.format(micros: p.recordedAt)) is more than a day after this machine's clock "
                        + "(\(RFC3339.format(micros: now))); every later change would be recorded then: fix the line, "
                        + "or the clock"))
        }
        if try book.store.position(ofEvent: p.id, in: session.transaction) != nil {
            summary.skipped += 1
            return
        }
        if p.note != groupNote {
            try flush(session: session)
            groupNote = p.note
        }
        let event: NoteEvent
        switch p.change {
        case .created(let title, let body, let name):
            event = .created(title: title, body: body, pinned: false, category: try category(name, p, session: session))
        case .retitled(let title): event = .retitled(title: title)
        case .bodyEdited(let body): event = .bodyEdited(body: body)
        case .categorized(let name): event = .categorized(category: try category(name, p, session: session))
        case .trashed: event = .trashed
        case .placed(let path): event = .propertySet(key: NoteProperty.source.rawValue, value: path)
        }
        let meta = EventMetadata(actor: p.actor, command: "notes import-history")
        later.note(p.recordedAt)
        group.append(event.newEvent(id: p.id, metadata: meta, recordedAt: p.recordedAt))
    }

    /// Consecutive events of one note go to the appender in one call.
    mutating func flush(session: borrowing WriteSession) throws {
        guard let note = groupNote, !group.isEmpty else { return }
        try session.append(group, to: Note.stream(note))
        summary.appended += group.count
        group.removeAll(keepingCapacity: true)
    }

    /// The live category called `name`, created (with an id derived from the name) if none is.
    mutating func category(_ name: String?, _ p: HistoryConverter.Planned, session: borrowing WriteSession) throws
        -> Identifier?
    {
        guard let name else { return nil }
        if let id = categories[name] { return id }
        let id: Identifier
        if let existing = try book.projection.category(named: name, in: session.transaction, databases: dbs) {
            id = existing.id
        } else {
            // Appended before the note events waiting in the group, which are no older.
            try flush(session: session)
            id = Identifier.derived("swift-evolution", "category", name)
            let meta = EventMetadata(actor: p.actor, command: "notes import-history")
            let created = CategoryEvent.created(name: name).newEvent(
                id: Identifier.derived("swift-evolution", "category-created", name), metadata: meta,
                recordedAt: p.recordedAt)
            let r = try session.append([created], to: Category.stream(id))
            summary.categoriesCreated += r.appended
            if r.appended > 0 { later.note(p.recordedAt) }
        }
        categories[name] = id
        return id
    }
}
