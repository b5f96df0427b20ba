import Basics
import EventStore
import Glibc
import LMDB
public import Notes

/// What an export to a Markdown folder wrote.
public struct MarkdownExportSummary: Sendable, Equatable {
    /// Files written, one per note.
    public var files: Int
    /// Files of an earlier export removed because their note moved to another file name.
    public var moved: Int

    public init(files: Int, moved: Int) {
        self.files = files
        self.moved = moved
    }
}

/// What an import of a Markdown folder did.
public struct MarkdownImportSummary: Sendable, Equatable {
    public var created: Int
    public var updated: Int
    public var unchanged: Int
    /// What was changed to import a file (a title cut to the limit), one line each.
    public var warnings: [String]

    public init(created: Int, updated: Int, unchanged: Int, warnings: [String] = []) {
        self.created = created
        self.updated = updated
        self.unchanged = unchanged
        self.warnings = warnings
    }
}

extension Notebook {
    /// Writes every note (archived and trashed ones too) as a `.md` file under `directory`:
    /// uncategorized notes at the top, the others in a folder named after their category.
    /// A file is named after the note's title (slugified) and the first 8 hex digits of its id.
    ///
    /// Exporting again into the same folder rewrites the files; when a note's title or
    /// category changed, the file of the earlier export (found by the `id` in its front
    /// matter) is removed. Files without a known id are left alone.
    @discardableResult
    public func exportMarkdown(to directory: String) throws(NotesError) -> MarkdownExportSummary {
        var all = ListQuery()
        all.status = .all
        all.sort = .created
        let notes = try list(all)
        var names: [Identifier: String] = [:]
        // Deleting a category uncategorizes its notes, so the live ones name every folder; the
        // same goes for tags.
        for c in try categories() { names[c.id] = c.name }
        var tagNames: [Identifier: String] = [:]
        for t in try allTags() { tagNames[t.id] = t.name }
        try io { () throws(IOFailure) in try makeDirectories(directory) }
        var earlier: [Identifier: [String]] = [:]
        for file in try markdownFiles(in: directory) {
            guard let bytes = try? readFile(directory + "/" + file, upTo: options.maxBodyBytes + (1 << 16)),
                let text = String(validating: bytes, as: UTF8.self), let id = (try? MarkdownNote.parse(text))?.id
            else { continue }
            earlier[id, default: []].append(file)
        }
        var used: Set<String> = []
        var summary = MarkdownExportSummary(files: 0, moved: 0)
        for note in notes {
            let category = note.category.flatMap { names[$0] }
            let folder = category.map { MarkdownNote.folderName($0) + "/" } ?? ""
            let slug = MarkdownNote.slug(note.title)
            var digits = 8
            var file = "\(folder)\(slug)-\(note.id.hex.prefix(digits)).md"
            while used.contains(file.lowercased()) && digits < 32 {
                digits += 4
                file = "\(folder)\(slug)-\(note.id.hex.prefix(digits)).md"
            }
            used.insert(file.lowercased())
            try io { () throws(IOFailure) in
                if !folder.isEmpty { try makeDirectories(directory + "/" + folder) }
                let out = try AtomicFile(path: directory + "/" + file)
                let labels = NoteLabels(category: category, tags: note.tags.compactMap { tagNames[$0] })
                try out.write(Array(MarkdownNote.render(note, labels: labels).utf8))
                try out.commit(sync: false)
            }
            summary.files += 1
            for old in earlier[note.id] ?? [] where old != file {
                unlink(directory + "/" + old)
                summary.moved += 1
            }
        }
        return summary
    }

    /// The `.md` files under `directory` (relative paths, sorted), skipping hidden entries.
    func markdownFiles(in directory: String, prefix: String = "") throws(NotesError) -> [String] {
        var out: [String] = []
        let entries = try io { () throws(IOFailure) in
            try directoryEntries(directory + (prefix.isEmpty ? "" : "/" + prefix))
        }
        for entry in entries {
            if entry.name.hasPrefix(".") { continue }
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            if entry.isDirectory {
                out += try markdownFiles(in: directory, prefix: relative)
            } else if entry.name.hasSuffix(".md") {
                out.append(relative)
            }
        }
        return out
    }

    /// Reads a folder of `.md` files, one note each, and creates or updates the notes in one
    /// write transaction: all of them or, when any file is refused, none.
    ///
    /// The title comes from the front matter's `title` when not empty, else the body's first
    /// `# heading` without its Markdown syntax, else the file name (cut at a word boundary with
    /// `…` and a warning when over the limit); the category from the front matter's `category`, else the top
    /// folder the file is in; the tags from its `tags` (missing tags are created; without the
    /// key a note keeps its tags); `pinned`, `archived` and `trashed` from the front matter when
    /// given. The body is the text after the front matter, byte for byte. A file whose `id`
    /// names a note in the store updates that note (one event per changed field, nothing when
    /// nothing changed); any other file creates a note, with the file's `id` when it has one.
    @discardableResult
    public func importMarkdown(from directory: String) throws(NotesError) -> MarkdownImportSummary {
        struct Item {
            var file: String
            var id: Identifier?
            var title: String
            var body: String
            var category: String?
            var tags: [String]?
            var pinned: Bool?
            var archived: Bool?
            var trashed: Bool?
        }
        var items: [Item] = []
        var warnings: [String] = []
        var seen: [Identifier: String] = [:]
        for file in try markdownFiles(in: directory) {
            func refuse(_ reason: String) -> NotesError { .validation(.file(file, reason: reason)) }
            let bytes: [UInt8]
            let limit = options.maxBodyBytes + (1 << 16)
            do { bytes = try readFile(directory + "/" + file, upTo: limit) } catch { throw .io(error) }
            if bytes.count > limit { throw refuse("the file is over \(limit) bytes") }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw refuse("the file is not valid UTF-8")
            }
            let md: MarkdownNote
            do { md = try MarkdownNote.parse(text) } catch { throw refuse(error.message) }
            var stem = Substring(file.split(separator: "/").last ?? Substring(file))
            stem = stem.dropLast(3)
            let (rawTitle, cut) = MarkdownNote.title(frontMatter: md.title, body: md.body, fileStem: String(stem))
            if cut {
                warnings.append(
                    "\(file): the title is over \(Self.maxTitleCharacters) characters; cut at a word boundary")
            }
            let folder = file.split(separator: "/").count > 1 ? file.split(separator: "/").first.map(String.init) : nil
            var item = Item(
                file: file, id: md.id, title: "", body: md.body, category: nil,
                pinned: md.pinned, archived: md.archived, trashed: md.trashed)
            do {
                item.title = try Self.validTitle(rawTitle)
                item.body = try validBody(md.body)
                item.tags = try md.tags.map { (names) throws(NotesError) in try Self.validTagNames(names) }
                if let given = md.category {
                    item.category = try given.map { (n) throws(NotesError) in try Self.validCategoryName(n) }
                } else if let folder {
                    item.category = try Self.validCategoryName(folder)
                }
            } catch { throw refuse(error.description) }
            if let id = md.id {
                if let other = seen[id] { throw refuse("\(other) has the same id \(id)") }
                seen[id] = file
            }
            items.append(item)
        }
        let bytes = items.reduce(0) { $0 &+ $1.body.utf8.count &+ 512 }
        return try write(reserving: importReservation(forFileBytes: bytes)) { session, dbs in
            var summary = MarkdownImportSummary(created: 0, updated: 0, unchanged: 0, warnings: warnings)
            for item in items {
                let categoryID = try item.category.map {
                    try ensureCategory($0, session: session, dbs: dbs)
                }
                var tagIDs: [Identifier]?
                if let names = item.tags {
                    var ids: [Identifier] = []
                    for name in names {
                        let t = try ensureTag(name, session: session, dbs: dbs)
                        if !ids.contains(t) { ids.append(t) }
                    }
                    tagIDs = ids
                }
                if let id = item.id, let note = try projection.note(id, in: session.transaction, databases: dbs) {
                    var events: [NoteEvent] = []
                    if let tagIDs {
                        for t in tagIDs where !note.tags.contains(t) { events.append(.tagged(tag: t)) }
                        for t in note.tags where !tagIDs.contains(t) { events.append(.untagged(tag: t)) }
                    }
                    if item.title != note.title { events.append(.retitled(title: item.title)) }
                    if item.body != note.body { events.append(.bodyEdited(body: item.body)) }
                    if categoryID != note.category { events.append(.categorized(category: categoryID)) }
                    if let p = item.pinned, p != note.pinned { events.append(p ? .pinned : .unpinned) }
                    if let a = item.archived, a != note.archived { events.append(a ? .archived : .unarchived) }
                    if let t = item.trashed, t != note.trashed { events.append(t ? .trashed : .untrashed) }
                    if events.isEmpty {
                        summary.unchanged += 1
                    } else {
                        _ = try append(
                            events, to: id, expecting: .exact(note.version), session: session, dbs: dbs)
                        summary.updated += 1
                    }
                } else {
                    let id = item.id ?? session.newID()
                    if try store.streamVersion(Note.stream(id), in: session.transaction) != 0 {
                        throw NotesError.validation(.streamWithoutNote(file: item.file, id: id))
                    }
                    var events: [NoteEvent] = [
                        .created(
                            title: item.title, body: item.body, pinned: item.pinned ?? false, category: categoryID)
                    ]
                    for t in tagIDs ?? [] { events.append(.tagged(tag: t)) }
                    if item.archived == true { events.append(.archived) }
                    if item.trashed == true { events.append(.trashed) }
                    _ = try append(events, to: id, expecting: .noStream, session: session, dbs: dbs)
                    summary.created += 1
                }
            }
            return summary
        }
    }
}
