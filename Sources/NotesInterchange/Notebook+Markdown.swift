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
    /// The files left out (with `skipInvalid`), each with why.
    public var skipped: [FileProblem]
    /// Files that are not `.md` (outside hidden folders), left alone.
    public var otherFiles: Int

    public init(
        created: Int, updated: Int, unchanged: Int, warnings: [String] = [], skipped: [FileProblem] = [],
        otherFiles: Int = 0
    ) {
        self.created = created
        self.updated = updated
        self.unchanged = unchanged
        self.warnings = warnings
        self.skipped = skipped
        self.otherFiles = otherFiles
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
        // A note imported from a file goes back to that file's path; the others are named
        // after their titles, in their categories' folders.
        for note in notes {
            if let path = note.sourcePath, MarkdownNote.isSafePath(path) { used.insert(path.lowercased()) }
        }
        var placed: Set<String> = []
        for note in notes {
            let category = note.category.flatMap { names[$0] }
            var file: String
            if let path = note.sourcePath, MarkdownNote.isSafePath(path), placed.insert(path.lowercased()).inserted {
                file = path
            } else {
                let folder = category.map { MarkdownNote.folderName($0) + "/" } ?? ""
                let slug = MarkdownNote.slug(note.title)
                var digits = 8
                file = "\(folder)\(slug)-\(note.id.hex.prefix(digits)).md"
                while used.contains(file.lowercased()) && digits < 32 {
                    digits += 4
                    file = "\(folder)\(slug)-\(note.id.hex.prefix(digits)).md"
                }
                used.insert(file.lowercased())
            }
            let folder = file.split(separator: "/").dropLast().joined(separator: "/")
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

    /// The `.md` files under `directory` (relative paths, sorted), skipping hidden entries, and
    /// how many other files there are.
    func markdownFiles(in directory: String, prefix: String = "") throws(NotesError) -> [String] {
        try vaultFiles(in: directory).markdown
    }

    private func vaultFiles(in directory: String, prefix: String = "") throws(NotesError) -> (
        markdown: [String], others: Int
    ) {
        var out: [String] = []
        var others = 0
        let entries = try io { () throws(IOFailure) in
            try directoryEntries(directory + (prefix.isEmpty ? "" : "/" + prefix))
        }
        for entry in entries.sorted(by: { $0.name < $1.name }) {
            if entry.name.hasPrefix(".") { continue }
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            if entry.isDirectory {
                let inner = try vaultFiles(in: directory, prefix: relative)
                out += inner.markdown
                others += inner.others
            } else if entry.name.hasSuffix(".md") {
                out.append(relative)
            } else {
                others += 1
            }
        }
        return (out, others)
    }

    /// Reads a folder of `.md` files (a vault), one note each, and creates or updates the notes
    /// in one write transaction.
    ///
    /// Each file is read as ``MarkdownNote`` says. The title is the front matter's `title` when
    /// not empty, else the body's first `# heading` without its Markdown syntax, else the file
    /// name (cut at a word boundary with `…` and a warning when over the limit); the category
    /// the front matter's `category`, else the top folder the file is in; the tags those of its
    /// `tags` and the `#tags` of its body (missing tags are created); the aliases those of its
    /// `aliases`; `pinned`, `archived` and `trashed` the front matter's when given. The body is
    /// the text after the front matter, byte for byte. Front matter keys the store does not
    /// read are kept with the note and written back by ``exportMarkdown(to:)``.
    ///
    /// A file whose `id` names a note in the store updates that note, and so does a file
    /// imported from this folder before (matched by its path within the folder, recorded with
    /// the note): one event per changed field, nothing when nothing changed. Any other file
    /// creates a note, with the file's `id` when it has one.
    ///
    /// Files that cannot be read are refused all at once, each with why, and nothing is
    /// imported; with `skipInvalid` the others are imported and the refused ones listed in the
    /// summary.
    @discardableResult
    public func importMarkdown(from directory: String, skipInvalid: Bool = false) throws(NotesError)
        -> MarkdownImportSummary
    {
        struct Item {
            var file: String
            var md: MarkdownNote
            var title: String
            var body: String
            var category: String?
            var tags: [String]
            var aliases: String
        }
        let (files, others) = try vaultFiles(in: directory)
        let vault = Self.absolutePath(directory)
        var items: [Item] = []
        var warnings: [String] = []
        var problems: [FileProblem] = []
        var seen: [Identifier: String] = [:]
        for file in files {
            func item() throws(NotesError) -> Item {
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
                let stem = String((file.split(separator: "/").last ?? Substring(file)).dropLast(3))
                let (rawTitle, cut) = MarkdownNote.title(frontMatter: md.title, body: md.body, fileStem: stem)
                if cut {
                    warnings.append(
                        "\(file): the title is over \(Self.maxTitleCharacters) characters; cut at a word boundary")
                }
                let parts = file.split(separator: "/")
                var item = Item(file: file, md: md, title: "", body: md.body, category: nil, tags: [], aliases: "")
                do {
                    item.title = try Self.validTitle(rawTitle)
                    item.body = try validBody(md.body)
                    item.tags = try Self.validTagNames(md.tags)
                    for name in MarkdownNote.inlineTags(md.body) {
                        // An inline `#tag` the store cannot hold stays text in the body.
                        guard let valid = try? Self.validTagName(name) else {
                            warnings.append("\(file): #\(name) is not a tag name the store can hold; left as text")
                            continue
                        }
                        if !item.tags.contains(where: { $0.lowercased() == valid.lowercased() }) {
                            item.tags.append(valid)
                        }
                    }
                    item.aliases = try Self.aliasesValue(md.aliases ?? [])
                    if let given = md.category {
                        item.category = try given.map { (n) throws(NotesError) in try Self.validCategoryName(n) }
                    } else if parts.count > 1 {
                        item.category = try Self.validCategoryName(String(parts[0]))
                    }
                    _ = try Self.validProperty(
                        key: NoteProperty.frontMatter.rawValue, value: md.keptText,
                        limit: options.maxBodyBytes)
                } catch { throw refuse(error.description) }
                if let id = md.id {
                    if let other = seen[id] { throw refuse("\(other) has the same id \(id)") }
                    seen[id] = file
                }
                return item
            }
            do { items.append(try item()) } catch {
                guard case .validation(.file(let f, let reason)) = error else { throw error }
                problems.append(FileProblem(file: f, reason: reason))
            }
        }
        if !problems.isEmpty && !skipInvalid {
            if problems.count == 1 { throw .validation(.file(problems[0].file, reason: problems[0].reason)) }
            throw .validation(.files(problems))
        }
        let bytes = items.reduce(0) { $0 &+ $1.body.utf8.count &+ 512 }
        return try write(reserving: importReservation(forFileBytes: bytes)) { session, dbs in
            var summary = MarkdownImportSummary(
                created: 0, updated: 0, unchanged: 0, warnings: warnings, skipped: problems, otherFiles: others)
            // The notes imported from this folder before, by path.
            var byPath: [String: Identifier] = [:]
            var all = ListQuery()
            all.status = .all
            for note in try projection.list(all, in: session.transaction, databases: dbs)
            where note.properties[NoteProperty.vault.rawValue] == vault {
                if let path = note.sourcePath { byPath[path] = note.id }
            }
            for item in items {
                let categoryID = try item.category.map {
                    try ensureCategory($0, session: session, dbs: dbs)
                }
                var tagIDs: [Identifier] = []
                for name in item.tags {
                    let t = try ensureTag(name, session: session, dbs: dbs)
                    if !tagIDs.contains(t) { tagIDs.append(t) }
                }
                let existing = try (item.md.id ?? byPath[item.file]).flatMap {
                    try projection.note($0, in: session.transaction, databases: dbs)
                }
                var properties: [(NoteProperty, String)] = [(.aliases, item.aliases), (.frontMatter, item.md.keptText)]
                // The path is recorded for a note made from a file of this folder, and for one
                // matched in it (by path, or by id when the file moved within it); a note the
                // store exported elsewhere and reads back keeps its own.
                if existing == nil || existing?.properties[NoteProperty.vault.rawValue] == vault {
                    properties += [(.source, item.file), (.vault, vault)]
                }
                if let note = existing {
                    var events: [NoteEvent] = []
                    for t in tagIDs where !note.tags.contains(t) { events.append(.tagged(tag: t)) }
                    for t in note.tags where !tagIDs.contains(t) { events.append(.untagged(tag: t)) }
                    if item.title != note.title { events.append(.retitled(title: item.title)) }
                    if item.body != note.body { events.append(.bodyEdited(body: item.body)) }
                    if categoryID != note.category { events.append(.categorized(category: categoryID)) }
                    if let p = item.md.pinned, p != note.pinned { events.append(p ? .pinned : .unpinned) }
                    if let a = item.md.archived, a != note.archived { events.append(a ? .archived : .unarchived) }
                    if let t = item.md.trashed, t != note.trashed { events.append(t ? .trashed : .untrashed) }
                    for (key, value) in properties where note.properties[key.rawValue, default: ""] != value {
                        events.append(.propertySet(key: key.rawValue, value: value))
                    }
                    if events.isEmpty {
                        summary.unchanged += 1
                    } else {
                        _ = try append(
                            events, to: note.id, expecting: .exact(note.version), session: session, dbs: dbs)
                        summary.updated += 1
                    }
                } else {
                    let id = item.md.id ?? session.newID()
                    if try store.streamVersion(Note.stream(id), in: session.transaction) != 0 {
                        throw NotesError.validation(.streamWithoutNote(file: item.file, id: id))
                    }
                    var events: [NoteEvent] = [
                        .created(
                            title: item.title, body: item.body, pinned: item.md.pinned ?? false, category: categoryID)
                    ]
                    for t in tagIDs { events.append(.tagged(tag: t)) }
                    if item.md.archived == true { events.append(.archived) }
                    if item.md.trashed == true { events.append(.trashed) }
                    for (key, value) in properties where !value.isEmpty {
                        events.append(.propertySet(key: key.rawValue, value: value))
                    }
                    _ = try append(events, to: id, expecting: .noStream, session: session, dbs: dbs)
                    summary.created += 1
                }
            }
            return summary
        }
    }

    /// `path` made absolute against the working directory, without `.` parts or a trailing `/`
    /// (symbolic links resolved when it exists).
    static func absolutePath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return path
    }
}
