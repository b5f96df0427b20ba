import Basics
import Dispatch
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
    /// Notes in the trash not written back into their own folder, whose files were deleted from
    /// it (`import-markdown --prune` trashed them).
    public var deletedInTrash = 0

    public init(files: Int, moved: Int) {
        self.files = files
        self.moved = moved
    }
}

/// A link or embed of an attachment whose file a vault does not hold.
public struct MissingAttachment: Sendable, Equatable {
    /// The vault's file that holds the link (its path in the folder).
    public var file: String
    /// The attachment as the link names it (`diagram.png`, `img/a.png`).
    public var link: String
}

/// A vault file read and checked: what its note will be.
struct VaultItem: Sendable {
    var file: String
    var md: MarkdownNote
    var title: String
    var body: String
    var category: String?
    var tags: [String]
    var aliases: String
    /// The front matter entries the store does not read, as YAML text (``MarkdownNote/keptText``).
    var kept: String
    /// The SHA-256 of the file's bytes, hex.
    var digest: String
    /// What was changed to import it (a title cut to the limit).
    var warnings: [String] = []
    /// Whether the title is the file's name (neither a front matter `title` nor a heading gives
    /// one): renamed, the file retitles its note.
    var titleFromName = false
    /// The attachments its body links to or embeds.
    var attachments: [VaultAttachments.Reference] = []
    /// The file's whole text, kept only when its body links to its own name (`[[Name`): renamed
    /// by an editor that rewrote those links to the new name (Obsidian does), it is found moved
    /// by its text with the links named as before (``Notebook/filesMoved(gone:newcomers:)``).
    var selfLinkedText: String?
}

/// A value handed between threads that never touch it at once (each writes its own slots).
private struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
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
    /// Notes imported from this folder before whose files are gone (the notes are kept), those
    /// moved to the trash by this import (`prune`) left out.
    public var missingFiles = 0
    /// Notes whose files were deleted from the folder, moved to the trash by this import
    /// (`prune`; `notes untrash` brings one back).
    public var pruned = 0
    /// Of ``missingFiles``, the notes not in the trash: those an import with `prune` would move there.
    public var prunable = 0
    /// Notes an import with `prune` moved to the trash whose files are back in the folder: taken
    /// out of the trash by this import (unless the file's front matter says `trashed: true`).
    public var restored = 0
    /// The links and embeds of attachments (`![[photo.png]]`, `![](img/a.png)`) whose files are
    /// not in the folder, each with the file that holds it (the import goes on: they lead
    /// nowhere until the files are added).
    public var missingAttachments: [MissingAttachment] = []
    /// Folders imported before whose files are no longer in their place and whose notes this
    /// folder holds unchanged at the same paths: the folder moved (or another device imported
    /// it from another place), so its files update those notes rather than make new ones.
    public var movedFrom: [String] = []
    /// Files of this folder found at a new path in it (moved into a subfolder, or renamed), each
    /// matched to its note by its bytes or its name (``Notebook/filesMoved(gone:newcomers:)``).
    public var movedFiles = 0
    /// Files that hold what `export-markdown` wrote for an earlier version of their note (a
    /// folder exported before the note's later edits): left as the store has the note.
    public var olderExports = 0
    /// Notes an earlier build's `import-markdown` made without recording their files (before
    /// 2026-12-01), matched to their files by title and body (``Notebook/legacyImports(of:among:in:)``):
    /// they record their files now, and no note is made again.
    public var legacyMatched = 0

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
    ///
    /// A folder that does not exist yet is written all or nothing: the files go into a private
    /// folder beside it, `.notes-export-XXXXXX`, renamed to `directory` once all are written;
    /// on a failure (a full disk) that folder is removed, and the error says nothing was written.
    /// Into a folder that exists, the files go into such a private folder inside it first, and
    /// each is renamed into place only once all are written (the earlier files of notes that
    /// moved removed after): a failure while writing (a full disk) leaves the folder as it was;
    /// one while renaming (or a kill then) leaves each file whole, some new and some as they were.
    /// The export holds it under an `flock` while it writes; such folders that killed exports
    /// left beside `directory` are removed first (``removeAbandonedExportStagings(in:)``).
    ///
    /// No file is written into the store's own folder, however `directory` is spelled: an
    /// export whose `directory`, or a folder in it that it would write (a category's, named
    /// after it, or the folder of a note's file), is the store's folder, or such a folder is
    /// inside the store's while `directory` is not, is refused before anything is written
    /// (``refuseStoreFolders(of:in:)``, ``InvalidInput/exportIntoStore(folder:itself:what:category:store:)``):
    /// before 2026-12-07 a category named as the store's folder, exported into the folder above
    /// it, was written beside `data.mdb`.
    @discardableResult
    public func exportMarkdown(to directory: String) throws(NotesError) -> MarkdownExportSummary {
        let plan = try exportPlan(into: directory)
        try refuseStoreFolders(of: plan, in: directory)
        var target = directory
        while target.utf8.count > 1 && target.hasSuffix("/") { target.removeLast() }
        let parent = AtomicFile.directory(of: target)
        Self.removeAbandonedExportStagings(in: parent)
        var st = stat()
        guard lstat(directory, &st) != 0 && errno == ENOENT else {
            // Its own private folder is inside it: those killed exports left there too.
            Self.removeAbandonedExportStagings(in: target)
            return try exportMarkdown(plan, to: directory, writingInto: directory, staged: true)
        }
        // The folders above it made for it, deepest first: removed too when the export fails.
        var madeAbove: [String] = []
        var above = parent
        while lstat(above, &st) != 0 && errno == ENOENT && !madeAbove.contains(above) {
            madeAbove.append(above)
            above = AtomicFile.directory(of: above)
        }
        try io { () throws(IOFailure) in try makeDirectories(parent) }
        let staging: String
        let lock: Int32
        do throws(IOFailure) {
            (staging, lock) = try Self.makeExportStaging(in: parent)
        } catch {
            for folder in madeAbove { rmdir(folder) }
            throw .io(error)
        }
        defer { if lock >= 0 { close(lock) } }
        do throws(NotesError) {
            let summary = try exportMarkdown(plan, to: directory, writingInto: staging)
            // Its mark goes before it becomes the folder (a kill between the two leaves a private
            // folder no sweep takes: kept, as anything unmarked is).
            unlink(staging + "/" + Self.exportStagingMark)
            guard rename(staging, target) == 0 else {
                throw NotesError.io(IOFailure(.rename, "\(staging) to \(target)"))
            }
            return summary
        } catch {
            Self.removeTree(staging)
            for folder in madeAbove { rmdir(folder) }
            guard case .io(let failure) = error else { throw error }
            throw .io(
                failure.placed(from: staging, in: target).adding(
                    "nothing was exported: \(target) was not made, and what was written of it was removed"))
        }
    }

    /// What `prune` appends to a note whose file is gone: it goes to the trash, marked as trashed
    /// for that (``NoteProperty/sourceGone``), so that the import finding the file back takes it out.
    static let pruneEvents: [NoteEvent] = [
        .propertySet(key: NoteProperty.sourceGone.rawValue, value: "true"), .trashed,
    ]

    /// What an export's private folder of a new folder is named by before its six characters.
    static let exportStagingPrefix = ".notes-export-"

    /// The file an export writes first into its private folder: only a folder holding it is
    /// taken for one a killed export left (a user's own `.notes-export-backup` is not one).
    static let exportStagingMark = "making"

    /// Makes an export's private folder in `folder` (`mkdtemp`), holds it under an `flock` (the
    /// descriptor returned; -1 when it could not be opened) and writes its mark in it.
    static func makeExportStaging(in folder: String) throws(IOFailure) -> (path: String, lock: Int32) {
        var template = Array((folder + "/" + exportStagingPrefix + "XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw IOFailure(.makeDirectory, folder + "/" + exportStagingPrefix + "XXXXXX", detail: "check the folder")
        }
        let staging = String(cString: made)
        // Held while this export has it (by the process's end too): a later export or import
        // takes a folder no process holds for a killed export's, and removes it.
        let lock = open(staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if lock >= 0 { _ = flock(lock, LOCK_EX | LOCK_NB) }
        let mark = open(staging + "/" + exportStagingMark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard mark >= 0 else {
            let failure = IOFailure(.create, staging + "/" + exportStagingMark)
            rmdir(staging)
            if lock >= 0 { close(lock) }
            throw failure
        }
        close(mark)
        return (staging, lock)
    }

    /// Removes the private folders that exports killed midway (Ctrl-C, SIGKILL) left in `parent`
    /// (before 2026-12-07 each stayed there for good), as a new store's are removed
    /// (``removeAbandonedFolders(in:prefix:holdsOnlyItsOwn:remove:)``: held by no process,
    /// unchanged for 2 seconds), when they hold nothing but what an export writes: folders,
    /// `.md` files and the temporaries of them. Called by an export beside them and by an import
    /// of the folder holding them.
    static func removeAbandonedExportStagings(in parent: String) {
        removeAbandonedFolders(in: parent, prefix: exportStagingPrefix, holdsOnlyItsOwn: holdsOnlyExportFiles) {
            removeTree($0)
        }
    }

    /// Whether the folder `path` holds the mark of an export's private folder
    /// (``exportStagingMark``; before 2026-12-07 none was asked for, and a user's own folder
    /// named as one, `.notes-export-backup`, holding notes, was removed) and, with each folder
    /// in it, only folders, `.md` files and their temporaries (`NAME.tmp-XXXXXX`, see
    /// ``AtomicFile``): what an export writes.
    private static func holdsOnlyExportFiles(_ path: String) -> Bool {
        guard let entries = try? directoryEntries(path),
            entries.contains(where: { $0.kind == .file && $0.name == exportStagingMark })
        else { return false }
        return entries.allSatisfy { $0.kind == .file && $0.name == exportStagingMark || holdsOnlyExportFiles(path, $0) }
    }

    /// Whether `entry` of the folder `path` is what an export writes: a folder holding only
    /// that, a `.md` file or a temporary of one.
    private static func holdsOnlyExportFiles(_ path: String, _ entry: DirectoryEntry) -> Bool {
        switch entry.kind {
        case .directory:
            guard let entries = try? directoryEntries(path + "/" + entry.name) else { return false }
            return entries.allSatisfy { holdsOnlyExportFiles(path + "/" + entry.name, $0) }
        case .file:
            let name = Array(entry.name.utf8)
            let temporary = name.count > 11 && name[(name.count - 11)...].starts(with: Array(".tmp-".utf8))
            return entry.nameIsUTF8 && (entry.name.lowercased().hasSuffix(".md") || temporary)
        default: return false
        }
    }

    /// Removes the folder `path` and all it holds (the export's own staging folder).
    static func removeTree(_ path: String) {
        for entry in (try? directoryEntries(path)) ?? [] {
            let full = path + "/" + entry.name
            if entry.kind == .directory { removeTree(full) } else { unlink(full) }
        }
        rmdir(path)
    }

    /// What an export into `directory` writes: each note's file (a path in the folder) and the
    /// name of its category, in the order written; the trashed notes left out (see
    /// ``MarkdownExportSummary/deletedInTrash``), counted; and the names of the tags.
    struct MarkdownExportPlan {
        var files: [(note: Note, file: String, category: String?)] = []
        var deletedInTrash = 0
        var tagNames: [Identifier: String] = [:]
    }

    /// Where ``exportMarkdown(to:)`` writes each note in `directory`.
    func exportPlan(into directory: String) throws(NotesError) -> MarkdownExportPlan {
        var all = ListQuery()
        all.status = .all
        all.sort = .created
        let notes = try list(all)
        var names: [Identifier: String] = [:]
        // Deleting a category uncategorizes its notes, so the live ones name every folder; the
        // same goes for tags.
        for c in try categories() { names[c.id] = c.name }
        var plan = MarkdownExportPlan()
        for t in try allTags() { plan.tagNames[t.id] = t.name }
        // The folder as it was: a trashed note imported from it whose file was deleted from it
        // is not written back (an import with `prune` trashed it for that; before 2026-12-07
        // each export brought the file back).
        var st = stat()
        let existing = stat(directory, &st) == 0 ? try? Self.vaultPath(directory) : nil
        // Names compared by their bytes, lowercased: `café` in two normal forms, or `Note.md`
        // beside `note.md`, are two files (a generated name avoids both, for file systems that
        // ignore case).
        var used: Set<[UInt8]> = []
        // A note imported from a file goes back to that file's path; the others are named
        // after their titles, in their categories' folders.
        for note in notes {
            if let path = note.sourcePath, MarkdownNote.isSafePath(path) { used.insert(Array(path.lowercased().utf8)) }
        }
        var placed: Set<[UInt8]> = []
        for note in notes {
            if let existing, note.trashed, let path = note.sourcePath, MarkdownNote.isSafePath(path),
                note.sourceFolder.map({ Array($0.utf8) == Array(existing.utf8) }) == true,
                !Self.exists(Array(existing.utf8), Array(path.utf8))
            {
                plan.deletedInTrash += 1
                continue
            }
            let category = note.category.flatMap { names[$0] }
            var file: String
            if let path = note.sourcePath, MarkdownNote.isSafePath(path), placed.insert(Array(path.utf8)).inserted {
                file = path
            } else {
                let folder = category.map { MarkdownNote.folderName($0) + "/" } ?? ""
                let slug = MarkdownNote.slug(note.title)
                var digits = 8
                file = "\(folder)\(slug)-\(note.id.hex.prefix(digits)).md"
                while used.contains(Array(file.lowercased().utf8)) && digits < 32 {
                    digits += 4
                    file = "\(folder)\(slug)-\(note.id.hex.prefix(digits)).md"
                }
                used.insert(Array(file.lowercased().utf8))
            }
            plan.files.append((note, file, category))
        }
        return plan
    }

    /// Refuses the export `plan` into `directory` when `directory`, or a folder of it that the
    /// plan writes a file into (or makes for one), is the store's own folder, or when such a
    /// folder is inside the store's folder and `directory` is not (the export would cross into
    /// it: a category named as the store's folder, exported into the folder above it), by
    /// device and inode (``storeFolderHolding(_:store:)``: links, `.` and `..` followed). The
    /// first such folder is named, with what would be written into it; nothing is written.
    /// (`notes export-markdown` refuses a `directory` inside the store's folder too.)
    func refuseStoreFolders(of plan: MarkdownExportPlan, in directory: String) throws(NotesError) {
        let store = self.store.environment.path
        let holder = storeFolderHolding(directory, store: store)
        if holder == true {
            throw .validation(
                .exportIntoStore(
                    folder: directory, itself: true, what: "every note's file", category: nil, store: store))
        }
        var checked: Set<String> = []
        var base = directory
        while base.utf8.count > 1 && base.hasSuffix("/") { base.removeLast() }
        for (note, file, category) in plan.files {
            let parts = file.split(separator: "/").dropLast()
            // Each folder from the top: the first one in the store is the one named.
            for depth in parts.indices {
                let folder = parts[...depth].joined(separator: "/")
                guard checked.insert(folder).inserted else { continue }
                let path = base + "/" + folder
                guard let itself = storeFolderHolding(path, store: store), itself || holder == nil else { continue }
                if let category, file.hasPrefix(MarkdownNote.folderName(category) + "/"),
                    note.sourcePath.map({ $0 != file }) ?? true
                {
                    throw .validation(
                        .exportIntoStore(
                            folder: path, itself: itself, what: "the files of the category \"\(category)\"",
                            category: category, store: store))
                }
                throw .validation(
                    .exportIntoStore(
                        folder: path, itself: itself,
                        what: "the file \(file) of note \(shortID(note.id)), where it was imported from", category: nil,
                        store: store))
            }
        }
    }

    /// Writes `plan`'s files as ``exportMarkdown(to:)`` says into `root`: `directory` itself, or
    /// the staging folder of a new one. `staged` (an existing `directory`): every file is written
    /// into a private folder inside `root` first, and renamed into place once all are.
    private func exportMarkdown(
        _ plan: MarkdownExportPlan, to directory: String, writingInto root: String, staged: Bool = false
    ) throws(NotesError) -> MarkdownExportSummary {
        try io { () throws(IOFailure) in try makeDirectories(root) }
        var earlier: [Identifier: [String]] = [:]
        for file in try markdownFiles(in: root) {
            guard let bytes = try? readFile(root + "/" + file, upTo: options.maxBodyBytes + (1 << 16)),
                let text = String(validating: bytes, as: UTF8.self), let id = (try? MarkdownNote.parse(text))?.id
            else { continue }
            earlier[id, default: []].append(file)
        }
        var summary = MarkdownExportSummary(files: 0, moved: 0)
        summary.deletedInTrash = plan.deletedInTrash
        // The files this export wrote: a note's earlier file is removed only when no note of
        // this export was written there (two notes imported from one path in two folders, or
        // a file copied under another name, leave one note's earlier file where another's now is).
        var written: Set<String> = []
        // An existing folder's private folder, held under an `flock` while this export has it
        // (see ``removeAbandonedExportStagings(in:)``): where the files are written first.
        var staging: String?
        var lock: Int32 = -1
        defer {
            if let staging { Self.removeTree(staging) }
            if lock >= 0 { close(lock) }
        }
        if staged {
            let made = try io { () throws(IOFailure) in try Self.makeExportStaging(in: root) }
            (staging, lock) = (made.path, made.lock)
        }
        let writeRoot = staging ?? root
        // With `staging`: the files written there, and the earlier files to remove once they
        // are in place.
        var pending: [String] = []
        var removals: [String] = []
        for (note, file, category) in plan.files {
            let folder = file.split(separator: "/").dropLast().joined(separator: "/")
            do throws(IOFailure) {
                if !folder.isEmpty { try makeDirectories(writeRoot + "/" + folder) }
                // Not swept here (one look through the folder per note): once per folder below.
                let out = try AtomicFile(path: writeRoot + "/" + file, removingAbandoned: false)
                let labels = NoteLabels(category: category, tags: note.tags.compactMap { plan.tagNames[$0] })
                try out.write(Array(MarkdownNote.render(note, labels: labels, inFolder: !folder.isEmpty).utf8))
                try out.commit(sync: false)
            } catch {
                guard let staging else { throw .io(error) }
                // Nothing of the folder was changed yet: said so, of the file's place in it.
                throw .io(
                    error.placed(from: staging, in: root).adding("nothing was exported: \(directory) is as it was"))
            }
            summary.files += 1
            written.insert(file)
            if staging != nil { pending.append(file) }
            for old in earlier[note.id] ?? [] where !written.contains(old) {
                if staging != nil { removals.append(old) } else { unlink(root + "/" + old) }
                summary.moved += 1
            }
        }
        if let staging {
            // Every file is written: each goes into place, then the earlier files of notes that
            // moved go (those no note of this export was written at).
            for (done, file) in pending.enumerated() {
                let folder = file.split(separator: "/").dropLast().joined(separator: "/")
                do throws(IOFailure) {
                    if !folder.isEmpty { try makeDirectories(root + "/" + folder) }
                    if rename(staging + "/" + file, root + "/" + file) != 0 {
                        // A folder of it on another file system (a link to one, a mount point),
                        // which no rename reaches: the file is written there whole, as it was
                        // before 2026-12-07 (since then the export failed, moving nothing).
                        guard errno == EXDEV else { throw IOFailure(.rename, root + "/" + file) }
                        let bytes = try readFile(staging + "/" + file, upTo: Int(Int32.max))
                        let out = try AtomicFile(path: root + "/" + file, removingAbandoned: false)
                        try out.write(bytes)
                        try out.commit(sync: false)
                    }
                } catch {
                    throw .io(
                        error.adding(
                            "\(done) of \(pending.count) files of the export were put in place, each whole, the "
                                + "others left as they were: export again"))
                }
            }
            for old in removals where !written.contains(old) { unlink(root + "/" + old) }
        }
        // The temporaries an export killed midway left of these files, one look through each
        // folder (not one per note file): before 2026-12-06 they stayed in the folder for good.
        var byFolder: [String: Set<String>] = [:]
        for file in written {
            let slash = file.lastIndex(of: "/")
            let folder = slash.map { root + "/" + file[..<$0] } ?? root
            byFolder[folder, default: []].insert(slash.map { String(file[file.index(after: $0)...]) } ?? file)
        }
        for (folder, names) in byFolder { AtomicFile.removeAbandonedTemporaries(in: folder, of: names) }
        return summary
    }

    /// The position of the last event that recorded where the note's file is (its path or its
    /// folder), 0 when none.
    private func fileRecorded(of id: Identifier, in txn: borrowing Transaction) throws -> UInt64 {
        var last: UInt64 = 0
        let keys = [NoteProperty.source.rawValue, NoteProperty.vault.rawValue]
        try store.forEachEvent(inStream: Note.stream(id), in: txn) { view in
            for e in try store.lift(view) {
                if case .propertySet(let key, _) = try NoteEvent.decode(e), keys.contains(key) { last = view.position }
            }
            return true
        }
        return last
    }

    /// The version of `note` whose export `item`'s file is, byte for byte (what
    /// ``exportMarkdown(to:)`` writes for it, with today's names of its category and tags), or
    /// nil: a folder exported, read back (after the note's later edits, or untouched). Such a
    /// file changes nothing, not even the tags of `#words` in a body that `notes` did not take for
    /// tags; any other file, one edited back to an earlier text too, is an edit.
    private func exportedVersion(
        _ item: VaultItem, _ note: Note, session: borrowing WriteSession, dbs: ProjectionDatabases
    ) throws -> UInt64? {
        var names: [Identifier: String?] = [:]
        var found: UInt64?
        try foldRevisions(of: note.id, upToVersion: note.version, in: session.transaction) { revision in
            let text = try exportedText(
                revision.note, file: item.file, in: session.transaction, dbs: dbs, names: &names)
            if SHA256.hex(SHA256.hash(Array(text.utf8))) == item.digest { found = revision.version }
            return found == nil
        }
        return found
    }

    /// What ``exportMarkdown(to:)`` writes for `note` at the path `file` of a folder, with today's
    /// names of its category and tags (`names` keeps those looked up).
    private func exportedText(
        _ note: Note, file: String, in txn: borrowing Transaction, dbs: ProjectionDatabases,
        names: inout [Identifier: String?]
    ) throws -> String {
        var tags: [String] = []
        for id in note.tags {
            if names[id] == nil { names[id] = .some(try projection.tag(id, in: txn, databases: dbs)?.name) }
            if let name = names[id] ?? nil { tags.append(name) }
        }
        var category: String?
        if let id = note.category {
            if names[id] == nil { names[id] = .some(try projection.category(id, in: txn, databases: dbs)?.name) }
            category = names[id] ?? nil
        }
        return MarkdownNote.render(
            note, labels: NoteLabels(category: category, tags: tags), inFolder: file.contains("/"))
    }

    /// The `.md` files under `directory` (relative paths, sorted), skipping hidden entries.
    func markdownFiles(in directory: String) throws(NotesError) -> [String] {
        var listing = VaultListing()
        // A folder inside that cannot be listed (a drive's `lost+found`) holds no file an export
        // wrote, and is left alone: before 2026-12-07 the export stopped, exit 1, "cannot list".
        try listVault(directory, into: &listing)
        return listing.markdown
    }

    /// The files of a vault skipped (refused with `--skip-invalid`, or over the size limit and
    /// unchanged), and the folders that could not be listed: a note whose file is among them is
    /// in the folder all the same, not gone from it.
    struct SkippedFiles {
        var files: Set<[UInt8]>
        /// Each folder's path with a `/` after it.
        var folders: [[UInt8]]

        func contains(_ path: [UInt8]) -> Bool {
            files.contains(path) || folders.contains { path.starts(with: $0) }
        }
    }

    /// What a vault's folders hold.
    struct VaultListing {
        /// The `.md` files (any case of the extension), relative paths in order.
        var markdown: [String] = []
        /// Other files, left alone.
        var others = 0
        /// Their paths, which attachments are looked up in.
        var otherPaths: [String] = []
        /// Symbolic links, not followed: a vault's files are read where they are, and a link
        /// could lead out of the folder or back into it.
        var links: [String] = []
        /// Entries whose names are not UTF-8.
        var badNames: [FileProblem] = []
        /// `.md` files whose names start with a dot (in folders that do not), not read.
        var hidden: [String] = []
        /// Folders inside that cannot be listed (no permission: another user's, `lost+found`),
        /// refused by an import as unreadable files are, and skipped with them.
        var unlistable: [FileProblem] = []
    }

    /// Lists the folder `prefix` of the vault `directory` (hidden entries skipped).
    /// `beforeFolder` runs before each folder inside is listed, with its path (tests: a folder
    /// removed then).
    private func listVault(
        _ directory: String, prefix: String = "", into listing: inout VaultListing,
        beforeFolder: ((String) -> Void)? = nil
    ) throws(NotesError) {
        if !prefix.isEmpty { beforeFolder?(prefix) }
        let entries: [DirectoryEntry]
        do { entries = try directoryEntries(directory + (prefix.isEmpty ? "" : "/" + prefix)) } catch {
            // A folder inside removed (or replaced) since its parent was listed, by a sync client
            // or an editor: as if it were not there. Before 2026-12-07 the import stopped, exit 1,
            // "cannot list DIR/sub: No such file or directory".
            if !prefix.isEmpty, error.code == ENOENT || error.code == ENOTDIR { return }
            // One that cannot be listed is refused as a file that cannot be read is, and skipped
            // with `--skip-invalid`: before 2026-12-07 it stopped the import, exit 1, "cannot list
            // DIR/sub: Permission denied", even with `--skip-invalid`.
            guard !prefix.isEmpty else { throw .io(error) }
            listing.unlistable.append(
                FileProblem(file: prefix, reason: "the folder cannot be read: \(error); check its permissions"))
            return
        }
        for entry in entries {
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            if entry.name.hasPrefix(".") {
                if entry.kind == .file, entry.nameIsUTF8, entry.name.lowercased().hasSuffix(".md") {
                    listing.hidden.append(relative)
                }
                continue
            }
            guard entry.nameIsUTF8 else {
                listing.badNames.append(
                    FileProblem(file: relative, reason: "the name is not valid UTF-8; rename it to read it"))
                continue
            }
            switch entry.kind {
            case .directory: try listVault(directory, prefix: relative, into: &listing, beforeFolder: beforeFolder)
            case .symbolicLink: listing.links.append(relative)
            case .file where entry.name.lowercased().hasSuffix(".md"): listing.markdown.append(relative)
            case .file, .other:
                listing.others += 1
                listing.otherPaths.append(relative)
            }
        }
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
    /// the note): one event per changed field, nothing when nothing changed. A folder imported
    /// before whose files are gone from their place counts as this one when this folder holds
    /// most of its notes' files unchanged at the same paths (it moved; see
    /// ``movedFolders(_:present:)`` and ``MarkdownImportSummary/movedFrom``).
    /// Any other file creates a note, with the file's `id` when it has one.
    ///
    /// Files that cannot be read are refused all at once, each with why, and nothing is
    /// imported; with `skipInvalid` the others are imported and the refused ones listed in the
    /// summary.
    ///
    /// The notes of this folder whose files are gone from it (neither moved within it nor
    /// skipped as invalid) are kept as they are; with `prune` those not in the trash are moved
    /// there (one `NoteTrashed` each, undone by `untrash`), and ``exportMarkdown(to:)`` into
    /// this folder does not write them back.
    @discardableResult
    public func importMarkdown(from directory: String, skipInvalid: Bool = false, prune: Bool = false)
        throws(NotesError) -> MarkdownImportSummary
    {
        try importMarkdown(from: directory, skipInvalid: skipInvalid, prune: prune, afterListing: nil)
    }

    /// ``importMarkdown(from:skipInvalid:prune:)``, running `beforeFolder` before each folder
    /// inside is listed and `afterListing` between the listing and the reading of the files
    /// (tests: a folder or a file removed then), and `digesting` with the path of each file over
    /// the size limit as it is read whole to be hashed (tests: which files are).
    func importMarkdown(
        from directory: String, skipInvalid: Bool, prune: Bool, beforeFolder: ((String) -> Void)? = nil,
        afterListing: (() -> Void)?, digesting: ((String) -> Void)? = nil
    ) throws(NotesError) -> MarkdownImportSummary {
        // The private folders that exports into new folders here, killed midway, left.
        Self.removeAbandonedExportStagings(in: directory)
        var listing = VaultListing()
        try listVault(directory, into: &listing, beforeFolder: beforeFolder)
        afterListing?()
        let (files, others) = (listing.markdown, listing.others)
        let realFolder = try Self.vaultPath(directory)
        // Files are read and parsed on every core (they are independent), then taken in order.
        let parsed = Self.inParallel(files) { readVaultFile($0, in: directory) }
        var items: [VaultItem] = []
        var warnings: [String] = []
        if !listing.links.isEmpty {
            let n = listing.links.count
            warnings.append(
                "\(n) symbolic link\(n == 1 ? "" : "s") not followed (\(listing.links.prefix(3).joined(separator: ", "))\(n > 3 ? ", …" : "")): a vault's files are read where they are"
            )
        }
        if !listing.hidden.isEmpty {
            // Before 2026-12-06 they were left out without a word.
            let n = listing.hidden.count
            warnings.append(
                "\(n) hidden file\(n == 1 ? "" : "s") not read (\(listing.hidden.prefix(3).joined(separator: ", "))\(n > 3 ? ", …" : "")): names starting with a dot are left out, as editors' own files are; rename \(n == 1 ? "it" : "them") to import \(n == 1 ? "it" : "them")"
            )
        }
        var problems: [FileProblem] = listing.badNames + listing.unlistable
        // Files removed since the listing (an editor or a sync client saving one by removing it
        // first) are left out, as skipped files are (a prune leaves their notes): before
        // 2026-12-07 such a file refused the whole import, exit 2, "No such file or directory;
        // check its permissions".
        var vanished: [FileProblem] = []
        var seen: [Identifier: String] = [:]
        for (file, outcome) in zip(files, parsed) {
            switch outcome {
            case .failure(let problem) where problem.vanished:
                vanished.append(problem)
            case .failure(let problem):
                problems.append(problem)
            case .success(let item):
                if let id = item.md.id {
                    if let other = seen[id] {
                        problems.append(FileProblem(file: file, reason: "\(other) has the same id \(id)"))
                        continue
                    }
                    seen[id] = file
                }
                warnings += item.warnings
                items.append(item)
            }
        }
        // A file over the size limit that is the very file its note was imported from, unchanged
        // (imported with the limit raised), is left as the store has it, as any unchanged file
        // is: before 2026-12-07 it refused every later import of the folder, exit 2, unless the
        // limit was raised again.
        let unchangedOversized = try unchangedOversizedFiles(
            problems.filter(\.oversized), folder: realFolder, in: directory, digesting: digesting)
        problems.removeAll { unchangedOversized.contains(Array($0.file.utf8)) }
        if !problems.isEmpty && !skipInvalid {
            if problems.count == 1 { throw .validation(.file(problems[0].file, reason: problems[0].reason)) }
            throw .validation(.files(problems))
        }
        problems += vanished
        // Attachments linked to that the folder does not hold (before 2026-12-07 not a word).
        var missingAttachments: [MissingAttachment] = []
        if items.contains(where: { !$0.attachments.isEmpty }) {
            let index = VaultAttachments.Index(files + listing.otherPaths + listing.links)
            for item in items {
                var said: Set<String> = []
                for reference in item.attachments
                where !index.holds(reference, from: item.file) && said.insert(reference.target).inserted {
                    missingAttachments.append(MissingAttachment(file: item.file, link: reference.target))
                }
            }
        }
        if !missingAttachments.isEmpty {
            let n = missingAttachments.count
            let named = missingAttachments.prefix(3).map { "\($0.link) in \($0.file)" }.joined(separator: ", ")
            warnings.append(
                "\(n) linked attachment\(n == 1 ? " is" : "s are") not in the folder (\(named)\(n > 3 ? ", …" : "")): the link\(n == 1 ? " leads" : "s lead") nowhere until the file\(n == 1 ? " is" : "s are") added"
            )
        }
        // The map is grown ahead (for twice these bytes) so that the write runs once, not twice
        // (the first time to find the map too small). A file's text is stored twice (in its
        // events and its note) beside its postings; each note takes about 12 KB of its own (its
        // events and their indexes, listing keys, names and links, at the pages' fill), and
        // each of its tags 2 KB more (an event, six listing keys).
        let bytes = items.reduce(0) {
            $0 &+ ($1.body.utf8.count &+ $1.kept.utf8.count) * 3 / 2 &+ 6 << 10 &+ $1.tags.count << 10
        }
        return try write(reserving: importReservation(forFileBytes: bytes)) { session, dbs in
            var summary = MarkdownImportSummary(
                created: 0, updated: 0, unchanged: unchangedOversized.count, warnings: warnings, skipped: problems,
                otherFiles: others)
            summary.missingAttachments = missingAttachments
            // The notes imported from this folder before, by path (its bytes: two normal forms of
            // one name are two files, and two folders too: places are compared as bytes).
            var byPath: [[UInt8]: Identifier] = [:]
            var all = ListQuery()
            all.status = .all
            let listed = try projection.list(all, in: session.transaction, databases: dbs)
            // This folder as the notes recorded it when they came through another path to it (a
            // bind mount): that place's import, not a second folder's (before 2026-12-07 each of
            // its files made a note again).
            let vault = Self.recordedPlace(
                of: realFolder, among: Set(listed.compactMap { $0.sourceFolder }))
            let here = Array(vault.utf8)
            // Other folders' notes, by folder then path, for a folder that moved (below).
            var elsewhere: [[UInt8]: [[UInt8]: RecordedFile]] = [:]
            for note in listed {
                guard let path = note.sourcePath, let from = note.sourceFolder else {
                    continue
                }
                if Array(from.utf8) == here {
                    // Two notes recorded at one path (a file with an id renamed onto the path of a
                    // note whose file is gone): the path is the note's that took it last, every
                    // time, not whichever the listing gives last (the two took turns, each import
                    // writing the file into the other).
                    let key = Array(path.utf8)
                    if let other = byPath[key],
                        try fileRecorded(of: other, in: session.transaction)
                            > fileRecorded(of: note.id, in: session.transaction)
                    {
                        continue
                    }
                    byPath[key] = note.id
                } else {
                    elsewhere[Array(from.utf8), default: [:]][Array(path.utf8)] = RecordedFile(
                        id: note.id, digest: note.properties[NoteProperty.sourceDigest.rawValue])
                }
            }
            var present: [[UInt8]: String] = Dictionary(minimumCapacity: items.count)
            for item in items { present[Array(item.file.utf8)] = item.digest }
            // A folder imported before whose files are gone from their place, and most of whose
            // notes this folder holds unchanged at the same paths, is this folder moved: its notes
            // whose files are gone from the old place are matched by path as this folder's are
            // (those of this folder first), and all of them record their new place below, those
            // whose file is not here too (so that it finds them when it comes). A folder another
            // device imported from another place is matched the same way.
            var adopted: Set<Identifier> = []
            var moved: Set<[UInt8]> = []
            for from in Self.movedFolders(elsewhere, present: present) {
                for (path, file) in elsewhere[from]! where byPath[path] == nil && !Self.exists(from, path) {
                    byPath[path] = file.id
                    adopted.insert(file.id)
                    moved.insert(from)
                }
            }
            summary.movedFrom = moved.map { String(decoding: $0, as: UTF8.self) }.sorted()
            // A folder imported before inside this one, or around it, holds some of the same
            // files: each is matched by where it is on disk, and its note keeps its own place
            // (unless that folder moved here).
            var byLocation: [[UInt8]: Identifier] = [:]
            let inside = Self.folderPrefix(here)
            for (from, notes) in elsewhere {
                let base = Self.folderPrefix(from)
                guard base.starts(with: inside) || inside.starts(with: base) else { continue }
                for (path, file) in notes { byLocation[base + path] = file.id }
            }
            // A file skipped as invalid is in the folder all the same, and so is one over the size
            // limit left as it was.
            let skippedFiles = SkippedFiles(
                files: Set(problems.map { Array($0.file.utf8) }).union(unchangedOversized),
                folders: listing.unlistable.map { Array(($0.file + "/").utf8) })
            summary.missingFiles = byPath.keys.filter { present[$0] == nil && !skippedFiles.contains($0) }.count
            // Each file's note: updated by one file at most (by its id, else by its path). A file
            // unchanged since its last import leaves the note as the store has it (edits made
            // here since are kept).
            var changing: [(item: VaultItem, existing: Note?)] = []
            // Notes of a folder that moved here, unchanged or without their file here, to record
            // their new place: and the path in it, when their file is here under another name
            // (found by its id).
            var relocating: [Identifier: String?] = [:]
            for id in adopted { relocating[id] = .some(nil) }
            var matched: Set<Identifier> = []
            /// The folder a note was imported from, as bytes.
            func place(_ note: Note?) -> [UInt8]? {
                note?.sourceFolder.map { Array($0.utf8) }
            }
            /// Whether `file` is a copy of the note's own file (an export of it, matched by its
            /// id): the note is another folder's, not one that moved here, and `file` is not where
            /// the note's own file lies (a folder inside or around this one holds it as its own).
            func isCopy(_ note: Note?, file: String) -> Bool {
                guard let from = place(note), from != here, !moved.contains(from) else { return false }
                guard let source = note?.sourcePath else { return true }
                return Self.folderPrefix(from) + Array(source.utf8) != inside + Array(file.utf8)
            }
            /// The digest of the file this folder gave the note last: its own file's, unless
            /// `file` is a copy (then the copy's read here, if any).
            func digestHere(_ note: Note, file: String) -> String? {
                guard isCopy(note, file: file) else { return note.properties[NoteProperty.sourceDigest.rawValue] }
                let copy = NoteProperty.lines(note.properties[NoteProperty.copyDigest.rawValue] ?? "")
                return copy.count == 2 && Array(copy[1].utf8) == here ? copy[0] : nil
            }
            /// A file of this folder that names its note by id, at another path than the one
            /// recorded, where the note's own file is gone (or another file is now): the file
            /// moved within the folder, and its note records the new path (an export into the
            /// folder wrote the id; then the file was renamed). Where the note's file is still
            /// at its path, unchanged, the file is a copy and the note stays where it is.
            func movedByID(_ note: Note, to file: String) {
                guard place(note) == here, let recorded = note.sourcePath, recorded != file,
                    let holder = byPath[Array(recorded.utf8)], !skippedFiles.contains(Array(recorded.utf8))
                else { return }
                // Another note took the recorded path since (a file renamed onto it): this note's
                // own file is not there, whatever is.
                let own = holder == note.id
                let there = own ? present[Array(recorded.utf8)] : nil
                guard there == nil || there != note.properties[NoteProperty.sourceDigest.rawValue] else { return }
                relocating[note.id] = .some(file)
                summary.movedFiles += 1
                if own && there == nil { summary.missingFiles -= 1 }
            }
            // A file whose `id` names a note is that note's before any file is matched by its
            // path: the id is the surer sign (a file renamed in the folder, and a new file at
            // its old path, are matched each to its own note whatever their order).
            var existingOf = [Note?](repeating: nil, count: items.count)
            var claimedByID: [Identifier: Note] = [:]
            for (i, item) in items.enumerated() {
                guard let id = item.md.id, !matched.contains(id),
                    let note = try projection.note(id, in: session.transaction, databases: dbs)
                else { continue }
                existingOf[i] = note
                matched.insert(id)
                claimedByID[id] = note
            }
            /// The notes that `prune` trashed for their files being gone whose files are here
            /// again, with what their files say of the trash.
            var cameBack: [Identifier: (note: Note, trashed: Bool?)] = [:]
            for (i, item) in items.enumerated() {
                defer {
                    if let note = existingOf[i], note.properties[NoteProperty.sourceGone.rawValue] != nil {
                        cameBack[note.id] = (note, item.md.trashed)
                    }
                }
                let file = Array(item.file.utf8)
                var existing = existingOf[i]
                if existing == nil {
                    let byPlace = [byPath[file], byLocation[inside + file]].compactMap { $0 }
                    // The note's own file, unchanged since its import, beside a file that names
                    // the note by id (its export, which could not be written back here): the
                    // note's already, not a new one.
                    if item.md.id == nil, let claimant = byPlace.lazy.compactMap({ claimedByID[$0] }).first,
                        claimant.properties[NoteProperty.sourceDigest.rawValue] == item.digest
                    {
                        summary.unchanged += 1
                        continue
                    }
                    existing = try ([item.md.id].compactMap { $0 } + byPlace)
                        .first { !matched.contains($0) }.flatMap {
                            try projection.note($0, in: session.transaction, databases: dbs)
                        }
                    if let existing { matched.insert(existing.id) }
                    existingOf[i] = existing
                }
                if let existing, digestHere(existing, file: item.file) == item.digest {
                    summary.unchanged += 1
                    // The match is made once, and holds however the files change next.
                    if let from = place(existing), moved.contains(from) {
                        relocating[existing.id] = .some(item.file)
                    } else {
                        movedByID(existing, to: item.file)
                    }
                } else {
                    changing.append((item, existing))
                    // Its events below record the place.
                    if let existing { relocating[existing.id] = nil }
                }
            }
            // Notes an earlier build imported from a folder without recording their files (before
            // 2026-12-01 `import-markdown` recorded no path): a file matching none of this folder's
            // notes is the note's whose title and body are the file's, when the note was made by
            // `import-markdown`, records no file, and no other file or such note matches (before
            // 2026-12-07 every file made its note again, and links by file name led nowhere).
            // Several, and the file is left out, said why: a merge would be a guess, a new note
            // one more copy.
            var legacy: Set<Identifier> = []
            let unmatched = changing.indices.filter { changing[$0].existing == nil && changing[$0].item.md.id == nil }
            if !unmatched.isEmpty {
                let candidates = try legacyImports(
                    of: unmatched.map { changing[$0].item }, among: listed.filter { !matched.contains($0.id) },
                    in: session.transaction)
                var filesOf: [Identifier: Int] = [:]
                for notes in candidates { for note in notes { filesOf[note.id, default: 0] += 1 } }
                var left: Set<Int> = []
                for (k, notes) in candidates.enumerated() where !notes.isEmpty {
                    let i = unmatched[k]
                    if notes.count == 1, filesOf[notes[0].id] == 1 {
                        changing[i].existing = notes[0]
                        matched.insert(notes[0].id)
                        legacy.insert(notes[0].id)
                        summary.legacyMatched += 1
                        continue
                    }
                    left.insert(i)
                    let ids = notes.map(\.id.uuidString).joined(separator: ", ")
                    summary.skipped.append(
                        FileProblem(
                            file: changing[i].item.file,
                            reason: notes.count > 1
                                ? "an earlier build imported it as \(notes.count) notes (\(ids)) without recording the file; "
                                    + "trash all but one (`notes trash ID`) and import again"
                                : "another file has the same title and body as it, and as the note an earlier build "
                                    + "imported (\(ids)) without recording the file; change one of them and import again"
                        ))
                }
                if !left.isEmpty {
                    changing = changing.enumerated().filter { !left.contains($0.offset) }.map(\.element)
                }
            }
            // A file moved within the folder (into a subfolder, or renamed): a new path whose
            // file is the one a note's gone path had, by its bytes, else by its name and most
            // of its lines. A note in the trash is not looked for (its file was deleted).
            let gone = try byPath.filter {
                present[$0.key] == nil && !skippedFiles.contains($0.key) && !matched.contains($0.value)
            }
            .compactMap { try projection.note($0.value, in: session.transaction, databases: dbs) }
            .filter { !$0.trashed }
            // A first import has no gone notes: its newcomers (every file) are not copied and keyed
            // for nothing (7% of a first import's samples in `perf`, 2026-12-06).
            let newcomers =
                gone.isEmpty
                ? [] : changing.indices.filter { changing[$0].existing == nil && changing[$0].item.md.id == nil }
            let moves = Self.filesMoved(gone: gone, newcomers: newcomers.map { changing[$0].item })
            var movedUnchanged: Set<Int> = []
            for (k, i) in newcomers.enumerated() {
                guard let note = moves[k] else { continue }
                matched.insert(note.id)
                summary.movedFiles += 1
                summary.missingFiles -= 1
                if note.properties[NoteProperty.sourceDigest.rawValue] == changing[i].item.digest {
                    // The same bytes: the note as the store has it (edits made here since its
                    // import are kept), at its new path; the category its new folder gives
                    // when the store still has its old place's (see the relocations below).
                    relocating[note.id] = .some(changing[i].item.file)
                    summary.unchanged += 1
                    changing[i].existing = nil
                    movedUnchanged.insert(i)
                } else {
                    changing[i].existing = note
                    relocating[note.id] = nil
                }
            }
            if !movedUnchanged.isEmpty {
                changing = changing.enumerated().filter { !movedUnchanged.contains($0.offset) }.map(\.element)
            }
            // Categories and tags next: a name no category or tag has yet gets its id now, and is
            // created through the inline projections once the notes' events are known, only when
            // one of them files a note under it (a file that changes nothing, such as the store's
            // own export whose body holds `#words` the note is not tagged with, creates nothing:
            // before 2026-12-06 it made an empty tag). Then the notes' events, their projections
            // run in batches as a bulk import's are (so every lookup of the store is made before
            // the first note is appended).
            var categoryIDs: [String: Identifier] = [:]
            var tagIDsByName: [String: Identifier] = [:]
            var newEntities: [(id: Identifier, name: String, isTag: Bool)] = []
            var newByKey: [[UInt8]: Identifier] = [:]
            for (item, _) in changing {
                var wanted: [(name: String, isTag: Bool)] = []
                if let c = item.category, categoryIDs[c] == nil { wanted.append((c, false)) }
                for name in item.tags where tagIDsByName[name] == nil { wanted.append((name, true)) }
                for (name, isTag) in wanted {
                    var id =
                        isTag
                        ? try projection.tag(named: name, in: session.transaction, databases: dbs)?.id
                        : try projection.category(named: name, in: session.transaction, databases: dbs)?.id
                    if id == nil {
                        let key = [isTag ? 1 : 0] + entityNameKey(name)
                        id = newByKey[key]
                        if id == nil {
                            let drawn = session.newID()
                            newByKey[key] = drawn
                            newEntities.append((drawn, name, isTag))
                            id = drawn
                        }
                    }
                    if isTag { tagIDsByName[name] = id } else { categoryIDs[name] = id }
                }
            }
            var plans: [(id: Identifier, events: [NoteEvent], expecting: ExpectedVersion)] = []
            // The names tags had when files were read before, each tag's stream read once.
            let tagNames = TagNames(store: store)
            for (item, existing) in changing {
                let categoryID = item.category.flatMap { categoryIDs[$0] }
                var tagIDs: [Identifier] = []
                var fileTags: [(id: Identifier, name: String)] = []
                var tagSet: Set<Identifier> = []
                for name in item.tags {
                    if let t = tagIDsByName[name], tagSet.insert(t).inserted {
                        tagIDs.append(t)
                        fileTags.append((t, name))
                    }
                }
                var properties: [(NoteProperty, String)] = [(.aliases, item.aliases), (.frontMatter, item.kept)]
                // The path is recorded for a note made from a file of this folder, and for one
                // matched in it (by path, or by id when the file moved within it) or in a folder
                // that moved here; a note the store exported elsewhere and reads back, or of a
                // folder inside or around this one, keeps its own, and its own file's digest.
                let recordedHere =
                    existing.map { legacy.contains($0.id) } == true
                    ? true : place(existing).map { $0 == here || moved.contains($0) }
                // The note's own file (of this folder, or of one inside or around it, or a file
                // the store's export wrote for a note imported from none), not a copy.
                let ownFile: Bool
                if existing == nil || recordedHere == true {
                    properties += [(.sourceDigest, item.digest), (.source, item.file), (.vault, vault)]
                    ownFile = true
                } else if isCopy(existing, file: item.file) {
                    properties.append((.copyDigest, item.digest + "\n" + vault))
                    ownFile = false
                } else {
                    properties.append((.sourceDigest, item.digest))
                    ownFile = true
                }
                // A note's own file changes the tags it changed since its last import: one added,
                // removed or renamed in the store since stands (a copy's tags are taken as it
                // says). A new note's tags are its file's: its creation records them (see
                // ``tagsAtLastImport(of:exportedAt:names:in:)``), with no event more. Before 2026-12-08 the file's
                // tags replaced the note's, and a tag added in the store was removed. What the file
                // names is recorded when the note's tags are not the file's after (else the tags at
                // this import's digest say it, as a creation's do), or was recorded before.
                let merged =
                    try existing.flatMap { note in
                        ownFile
                            ? try mergedTags(
                                of: note, file: fileTags, exportedAt: item.md.exportedAt, names: tagNames,
                                in: session.transaction, dbs)
                            : nil
                    }
                if let merged, let note = existing,
                    note.properties[NoteProperty.sourceTags.rawValue] != nil || Set(merged.tags) != tagSet
                {
                    properties.append((.sourceTags, merged.record))
                }
                if let note = existing {
                    var events: [NoteEvent] = []
                    let (added, removed) = NoteChange.difference(from: note.tags, to: merged?.tags ?? tagIDs)
                    events += added.map { .tagged(tag: $0) } + removed.map { .untagged(tag: $0) }
                    if !item.title.isSameBytes(as: note.title) { events.append(.retitled(title: item.title)) }
                    if !item.body.isSameBytes(as: note.body) { events.append(.bodyEdited(body: item.body)) }
                    // The category a folder gives depends on the folder imported: a note of a
                    // folder inside or around this one keeps its own, unless the file names one.
                    // A file of this folder that names none gives its folder's category only
                    // while the note has the one its recorded place gave (as a moved file does):
                    // one set in the store since stands. Before 2026-12-07 an edited file
                    // imported again replaced it (with none, for a file at the folder's top).
                    let takesFolder =
                        try categoryID != note.category && recordedHere == true && item.md.category == nil
                        && hasCategory(givenByFileAt: note.sourcePath ?? item.file, note, in: session.transaction, dbs)
                    if categoryID != note.category && (takesFolder || item.md.category != nil) {
                        events.append(.categorized(category: categoryID))
                    }
                    // A file moved into another top folder and edited: the category set in the
                    // store since stands, said so as for a file moved unchanged (before 2026-12-08
                    // nothing was said).
                    var keptCategory: String?
                    if categoryID != note.category, !takesFolder, item.md.category == nil, recordedHere == true,
                        let old = note.sourcePath, old != item.file,
                        Self.folderCategory(of: old) != Self.folderCategory(of: item.file)
                    {
                        keptCategory = try keepsCategoryWarning(
                            item.file, movedFrom: old, note, given: item.category, in: session.transaction, dbs)
                    }
                    if let p = item.md.pinned, p != note.pinned { events.append(p ? .pinned : .unpinned) }
                    if let a = item.md.archived, a != note.archived { events.append(a ? .archived : .unarchived) }
                    if let t = item.md.trashed, t != note.trashed { events.append(t ? .trashed : .untrashed) }
                    for (key, value) in properties where note.properties[key.rawValue, default: ""] != value {
                        events.append(.propertySet(key: key.rawValue, value: value))
                    }
                    // A file that says what the note says changes nothing, not even the digest;
                    // unless it changed the tags it names, which the note had already or lacked
                    // (the store's change met the file's): then its digest and tags are recorded,
                    // for its next change to be compared with (before 2026-12-08 they were not,
                    // and a tag it then dropped again stayed; test `fileTagsMeetingStoreTagsRecorded`).
                    let recordOnly = events.allSatisfy({
                        if case .propertySet(let key, _) = $0 {
                            return key == NoteProperty.sourceDigest.rawValue || key == NoteProperty.copyDigest.rawValue
                                || key == NoteProperty.sourceTags.rawValue
                        }
                        return false
                    })
                    if recordOnly && merged?.fileChanged != true {
                        events = []
                    }
                    if events.isEmpty {
                        summary.unchanged += 1
                    } else if let version = try exportedVersion(item, note, session: session, dbs: dbs) {
                        // The store's own export, not an edit: the edits made here since stand
                        // (at the file's new path, when it was renamed in the folder since).
                        summary.unchanged += 1
                        if version < note.version { summary.olderExports += 1 }
                        movedByID(note, to: item.file)
                    } else {
                        plans.append((note.id, events, .exact(note.version)))
                        if let keptCategory { summary.warnings.append(keptCategory) }
                        // A note an earlier build imported, as its file is: only the file recorded;
                        // so too a file whose tags came to be the note's.
                        let fileRecordOnly = events.allSatisfy {
                            if case .propertySet(let key, _) = $0 { return NoteProperty.fileRecord.contains(key) }
                            return false
                        }
                        if recordOnly || legacy.contains(note.id) && fileRecordOnly {
                            summary.unchanged += 1
                        } else {
                            summary.updated += 1
                        }
                    }
                } else {
                    let id = item.md.id.flatMap { matched.contains($0) ? nil : $0 } ?? session.newID()
                    matched.insert(id)
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
                    plans.append((id, events, .noStream))
                    summary.created += 1
                }
            }
            // The notes whose files were deleted from the folder: its notes whose path holds no
            // file (nor a file skipped as invalid) that no file of the folder was matched to (by
            // its id, or moved). With `prune` those not in the trash go there.
            var pruning: Set<Identifier> = []
            if summary.missingFiles > 0 {
                for (path, id) in byPath
                where present[path] == nil && !skippedFiles.contains(path) && !matched.contains(id)
                    && relocating[id].flatMap({ $0 }) == nil
                {
                    guard let note = try projection.note(id, in: session.transaction, databases: dbs), !note.trashed
                    else { continue }
                    pruning.insert(id)
                }
            }
            if prune {
                summary.pruned = pruning.count
                summary.missingFiles -= pruning.count
            } else {
                summary.prunable = pruning.count
                pruning = []
            }
            // The titles files whose text gives none take from their names, by path.
            var nameTitles: [String: String] = [:]
            for item in items where item.titleFromName { nameTitles[item.file] = item.title }
            // The files moved, by their new paths: the category their new folder gives.
            var itemAt: [String: VaultItem] = [:]
            if relocating.values.contains(where: { $0 != nil }) {
                for item in items { itemAt[item.file] = item }
            }
            for (id, source) in relocating.sorted(by: { $0.key < $1.key }) {
                guard let note = try projection.note(id, in: session.transaction, databases: dbs) else { continue }
                var events: [NoteEvent] = []
                // As bytes: two normal forms of one name are two places.
                if place(note) != here {
                    events.append(.propertySet(key: NoteProperty.vault.rawValue, value: vault))
                }
                if let source, source != note.sourcePath {
                    events.append(.propertySet(key: NoteProperty.source.rawValue, value: source))
                    var edited = false
                    // A file whose title is its name, renamed (its bytes unchanged): the rename
                    // is the file's edit of the title, taken as any edit of the file is (a move
                    // into another folder that keeps the name changes no title). Before
                    // 2026-12-07 the note kept the old name's title.
                    if let title = nameTitles[source], let old = note.sourcePath,
                        Self.titleOfName(old).map({ !$0.isSameBytes(as: title) }) ?? true,
                        !title.isSameBytes(as: note.title)
                    {
                        events.append(.retitled(title: title))
                        edited = true
                    }
                    // A file that names no category, moved into another top folder: the note
                    // takes the category a first import of the file there gives (that folder's,
                    // or none at the top), when the store still has the one its old place gave;
                    // one set in the store since stands, said so. Before 2026-12-07 it kept the
                    // old place's category (none, for a file moved out of the top into `sub/`).
                    // Within this folder only: a note of a folder inside or around it keeps its
                    // own category, as an edited file of it does.
                    if place(note) == here, let old = note.sourcePath, let item = itemAt[source],
                        item.md.category == nil
                    {
                        let now = item.category
                        var nowExisting: Identifier?
                        if let now {
                            nowExisting =
                                try categoryIDs[now]
                                ?? projection.category(named: now, in: session.transaction, databases: dbs)?.id
                        }
                        // A category no note has yet differs from the note's too.
                        let differs =
                            now == nil ? note.category != nil : nowExisting == nil || nowExisting != note.category
                        if try differs && hasCategory(givenByFileAt: old, note, in: session.transaction, dbs) {
                            var newID = nowExisting
                            if let now, newID == nil {
                                let key = [0] + entityNameKey(now)
                                if let drawn = newByKey[key] {
                                    newID = drawn
                                } else {
                                    let drawn = session.newID()
                                    newByKey[key] = drawn
                                    newEntities.append((drawn, now, false))
                                    newID = drawn
                                }
                                categoryIDs[now] = newID
                            }
                            events.append(.categorized(category: newID))
                            edited = true
                        } else if differs {
                            summary.warnings.append(
                                try keepsCategoryWarning(
                                    source, movedFrom: old, note, given: now, in: session.transaction, dbs))
                        }
                    }
                    if edited {
                        summary.unchanged -= 1
                        summary.updated += 1
                    }
                }
                if pruning.remove(id) != nil { events += Self.pruneEvents }
                if !events.isEmpty { plans.append((id, events, .exact(note.version))) }
            }
            for id in pruning.sorted() {
                guard let note = try projection.note(id, in: session.transaction, databases: dbs) else { continue }
                plans.append((id, Self.pruneEvents, .exact(note.version)))
            }
            // A file that `prune` trashed the note of, for being gone, is back: the note comes
            // out of the trash (before 2026-12-07 it stayed there, though its file was imported
            // again), unless the file says `trashed: true`; a note trashed otherwise stays.
            for (id, back) in cameBack.sorted(by: { $0.key < $1.key }) {
                let index = plans.firstIndex { $0.id == id }
                let planned = index.map { plans[$0].events } ?? []
                var events: [NoteEvent] = []
                if back.note.trashed, back.trashed != true {
                    let untrashing = planned.contains { if case .untrashed = $0 { true } else { false } }
                    if !untrashing { events.append(.untrashed) }
                    summary.restored += 1
                }
                events.append(.propertySet(key: NoteProperty.sourceGone.rawValue, value: ""))
                if let index {
                    plans[index].events += events
                } else {
                    plans.append((id, events, .exact(back.note.version)))
                }
            }
            var named: Set<Identifier> = []
            for plan in plans {
                for event in plan.events {
                    switch event {
                    case .created(_, _, _, let c?), .categorized(let c?): named.insert(c)
                    case .tagged(let t): named.insert(t)
                    default: break
                    }
                }
            }
            var created: Identifier?
            for new in newEntities where named.contains(new.id) {
                if new.isTag {
                    _ = try ensureTag(new.name, id: new.id, session: session, dbs: dbs, command: &created)
                } else {
                    _ = try ensureCategory(new.name, id: new.id, session: session, dbs: dbs, command: &created)
                }
            }
            try session.deferProjections(expecting: plans.reduce(0) { $0 + $1.events.count })
            for plan in plans {
                try appendEvents(plan.events, to: plan.id, expecting: plan.expecting, session: session)
                if session.deferredBytes >= Self.importProjectionBytes { try session.applyDeferredProjections() }
            }
            return summary
        }
    }

    /// For each of `items`, the notes of `notes` an earlier build's `import-markdown` made from
    /// its file without recording the file (before 2026-12-01): notes with no file recorded,
    /// whose first event `import-markdown` wrote, whose title and body are the file's, byte for
    /// byte (and in the trash only for a file that says `trashed: true`).
    func legacyImports(of items: [VaultItem], among notes: [Note], in txn: borrowing Transaction) throws
        -> [[Note]]
    {
        struct Text: Hashable {
            var title: [UInt8]
            var body: [UInt8]
        }
        var byText: [Text: [Int]] = [:]
        for (k, item) in items.enumerated() {
            byText[Text(title: Array(item.title.utf8), body: Array(item.body.utf8)), default: []].append(k)
        }
        var found = [[Note]](repeating: [], count: items.count)
        for note in notes where note.sourcePath == nil && note.sourceFolder == nil {
            guard let ks = byText[Text(title: Array(note.title.utf8), body: Array(note.body.utf8))] else { continue }
            var byImport = false
            try store.forEachEvent(inStream: Note.stream(note.id), versions: 1...1, in: txn) { view in
                byImport = view.metadata.command == Self.importMarkdownCommand
                return false
            }
            guard byImport else { continue }
            for k in ks where !note.trashed || items[k].md.trashed == true { found[k].append(note) }
        }
        return found
    }

    /// The command recorded with the events `notes import-markdown` writes.
    static let importMarkdownCommand = "notes import-markdown"

    /// The paths (as bytes) of the files of `oversized`, each refused for being over the size
    /// limit, that are unchanged since their notes were imported from them (a note of this
    /// folder recorded at that path whose file digest is the file's), or that hold, byte for
    /// byte, what ``exportMarkdown(to:)`` writes for the note their `id` names as it is now (an
    /// export read back: before 2026-12-07 it was refused, exit 2, even by the store it came from).
    ///
    /// What each file would have to hash to is found first: a file no note could be is never
    /// read past its first bytes, nor one of another size than the export it would have to be.
    /// Before 2026-12-07 every such file was hashed whole on every import: a 10 GB file took
    /// 41 s to be refused by a first import into an empty store.
    private func unchangedOversizedFiles(
        _ oversized: [FileProblem], folder: String, in directory: String, digesting: ((String) -> Void)?
    ) throws(NotesError) -> Set<[UInt8]> {
        guard !oversized.isEmpty else { return [] }
        /// A digest the file would have, and its size when known (an export's text).
        struct Expected {
            var digest: String
            var bytes: Int?
        }
        let files = Set(oversized.map { Array($0.file.utf8) })
        let expected: [[UInt8]: [Expected]] = try read { txn, dbs in
            var all = ListQuery()
            all.status = .all
            let listed = try projection.list(all, in: txn, databases: dbs)
            let here = Array(Self.recordedPlace(of: folder, among: Set(listed.compactMap { $0.sourceFolder })).utf8)
            var found: [[UInt8]: [Expected]] = [:]
            for note in listed {
                guard let from = note.sourceFolder, Array(from.utf8) == here, let path = note.sourcePath else {
                    continue
                }
                let key = Array(path.utf8)
                if files.contains(key), let digest = note.properties[NoteProperty.sourceDigest.rawValue],
                    note.properties[NoteProperty.sourceGone.rawValue] == nil
                {
                    found[key, default: []].append(Expected(digest: digest, bytes: nil))
                }
            }
            var names: [Identifier: String?] = [:]
            for problem in oversized {
                guard let id = problem.oversizedID, let note = try projection.note(id, in: txn, databases: dbs) else {
                    continue
                }
                let text = Array(try exportedText(note, file: problem.file, in: txn, dbs: dbs, names: &names).utf8)
                found[Array(problem.file.utf8), default: []].append(
                    Expected(digest: SHA256.hex(SHA256.hash(text)), bytes: text.count))
            }
            return found
        }
        var out: Set<[UInt8]> = []
        for problem in oversized {
            let key = Array(problem.file.utf8)
            guard let candidates = expected[key] else { continue }
            let path = directory + "/" + problem.file
            if candidates.allSatisfy({ $0.bytes != nil }) {
                var st = stat()
                guard stat(path, &st) == 0, candidates.contains(where: { $0.bytes == Int(st.st_size) }) else {
                    continue
                }
            }
            digesting?(problem.file)
            guard let digest = Self.fileDigest(path) else { continue }
            if candidates.contains(where: { $0.digest == digest }) { out.insert(key) }
        }
        return out
    }

    /// The SHA-256 (hex) of the whole file at `path`, read in chunks (a file over the size limit
    /// is never held in memory); nil when it cannot be read.
    private static func fileDigest(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            chunk.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
        }
        return SHA256.hex(hasher.finalize())
    }

    /// Reads and checks one file of a vault: the note it makes, or why it cannot make one.
    private func readVaultFile(_ file: String, in directory: String) -> Result<VaultItem, FileProblem> {
        func refuse(_ reason: String) -> Result<VaultItem, FileProblem> {
            .failure(FileProblem(file: file, reason: reason))
        }
        let bytes: [UInt8]
        let limit = options.maxBodyBytes + (1 << 16)
        do { bytes = try readFile(directory + "/" + file, upTo: limit) } catch {
            if error.code == ENOENT {
                var problem = FileProblem(
                    file: file, reason: "the file was removed while the folder was read; import again to read it")
                problem.vanished = true
                return .failure(problem)
            }
            return refuse("the file cannot be read: \(error); check its permissions")
        }
        if bytes.count > limit {
            var problem = FileProblem(
                file: file,
                reason:
                    "the file is over \(limit) bytes (a body may hold \(options.maxBodyBytes); \(InvalidInput.raiseBodyLimit))"
            )
            problem.oversized = true
            problem.oversizedID = MarkdownNote.id(inHeadOf: bytes)
            return .failure(problem)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return refuse("the file is not valid UTF-8") }
        let md: MarkdownNote
        do { md = try MarkdownNote.parse(text) } catch { return refuse(error.message) }
        let stem = Self.fileStem(file)
        let named = MarkdownNote.namedBy(frontMatter: md.title, body: md.body)
        let (rawTitle, cut) = MarkdownNote.title(named: named, fileStem: stem)
        var item = VaultItem(
            file: file, md: md, title: "", body: md.body, category: nil, tags: [], aliases: "", kept: md.keptText,
            digest: SHA256.hex(SHA256.hash(bytes)))
        item.titleFromName = named == nil
        item.attachments = VaultAttachments.references(md.body)
        if textContains(md.body, "[[" + stem) { item.selfLinkedText = text }
        // A title taken from a heading stays whole in the body; one from the front matter would
        // be lost past the cut, so the body starts with it as a heading.
        var body = md.body
        if cut {
            if let given = md.title.map(Notebook.trim), !given.isEmpty {
                body = "# \(given)\n\n" + body
                item.warnings.append(
                    "\(file): the title is over \(Self.maxTitleCharacters) characters; cut at a word boundary, "
                        + "the whole title kept as the body's first heading")
            } else {
                item.warnings.append(
                    "\(file): the title is over \(Self.maxTitleCharacters) characters; cut at a word boundary")
            }
        }
        let parts = file.split(separator: "/")
        do {
            item.title = try Self.validTitle(rawTitle)
            item.body = try validBody(body)
            item.tags = try Self.validTagNames(md.tags)
            // By a set: a body of 40,000 `#words` took 24 s searching the list for each.
            var folded = Set(item.tags.map { $0.lowercased() })
            for name in MarkdownNote.inlineTags(md.body) {
                // An inline `#tag` the store cannot hold stays text in the body.
                guard let valid = try? Self.validTagName(name) else {
                    item.warnings.append("\(file): #\(name) is not a tag name the store can hold; left as text")
                    continue
                }
                if folded.insert(valid.lowercased()).inserted { item.tags.append(valid) }
            }
            item.aliases = try Self.aliasesValue(md.aliases ?? [])
            for a in NoteProperty.lines(item.aliases) {
                if let warning = WikiLink.unreachableAlias(a) { item.warnings.append("\(file): \(warning)") }
            }
            if let given = md.category {
                item.category = try given.map { (n) throws(NotesError) in try Self.validCategoryName(n) }
            } else if parts.count > 1 {
                item.category = try Self.validCategoryName(MarkdownNote.oneLine(String(parts[0])))
            }
            _ = try Self.validProperty(
                key: NoteProperty.frontMatter.rawValue, value: item.kept, limit: options.maxBodyBytes)
        } catch { return refuse(error.description) }
        return .success(item)
    }

    /// The tags `note` has after its file, naming `file` now (each tag's id and the name the
    /// file gives it), is imported again, and the record of them to keep
    /// (``NoteProperty/sourceTags``). The file's tags are compared by name (as the store compares
    /// names: without regard to case) with those it named at its last import: a name it names
    /// now and did not then adds its tag (in the file's order, after the note's); one it named
    /// then and names no more removes the tag it named then (by id: renamed since, it goes all
    /// the same) and the tag of that name now. Every other tag of the note stands: one added,
    /// removed, renamed or deleted in the store since. `fileChanged`: the file names other tags
    /// than then.
    private func mergedTags(
        of note: Note, file: [(id: Identifier, name: String)], exportedAt: Int64?, names: TagNames,
        in txn: borrowing Transaction, _ dbs: ProjectionDatabases
    ) throws -> (tags: [Identifier], record: String, fileChanged: Bool) {
        let before = try tagsAtLastImport(of: note, exportedAt: exportedAt, names: names, in: txn)
        var idThen: [[UInt8]: Identifier] = [:]
        for tag in before where idThen[entityNameKey(tag.name)] == nil { idThen[entityNameKey(tag.name)] = tag.id }
        let now = Set(file.map { entityNameKey($0.name) })
        var removed: Set<Identifier> = []
        for tag in before where !now.contains(entityNameKey(tag.name)) {
            removed.insert(tag.id)
            if let live = try projection.tag(named: tag.name, in: txn, databases: dbs) { removed.insert(live.id) }
        }
        var tags = note.tags.filter { !removed.contains($0) }
        var have = Set(tags)
        for tag in file where idThen[entityNameKey(tag.name)] == nil && have.insert(tag.id).inserted {
            tags.append(tag.id)
        }
        // The id a name led to when it was first named is kept while the file names it.
        let record = file.map { (idThen[entityNameKey($0.name)] ?? $0.id).uuidString + " " + $0.name }
        return (tags, record.isEmpty ? "none" : record.joined(separator: "\n"), Set(idThen.keys) != now)
    }

    /// The tags the file of `note` named when it was last imported, each with the id of its tag
    /// then and the name the file gave it: its ``NoteProperty/sourceTags``, recorded by every
    /// import of the file but the first (each line the id and the name; a line of an id alone,
    /// as a hand could write it, takes the tag's name at that record); else
    /// the note's tags, with their names then, at the version whose import last set its
    /// ``NoteProperty/sourceDigest`` (the first import's, which made the note with its file's
    /// tags, or one before 2026-12-08, when the file's tags replaced the note's); the note's
    /// tags when none did (a note an import matched by its text). But when the file is what the
    /// store's export wrote after that import (its `updated`, `exportedAt`, is a version's, later
    /// than the import's), then edited: that version's tags, with their names then.
    private func tagsAtLastImport(
        of note: Note, exportedAt: Int64?, names: TagNames, in txn: borrowing Transaction
    ) throws -> [(id: Identifier, name: String)] {
        var tags: [(id: Identifier, name: String?)] = []
        let key: NoteProperty
        if let recorded = note.properties[NoteProperty.sourceTags.rawValue] {
            var named: [(id: Identifier, name: String)] = []
            for line in NoteProperty.lines(recorded) where line != "none" {
                let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                guard let id = Identifier(canonical: String(parts[0])) else { continue }
                tags.append((id, parts.count == 2 ? String(parts[1]) : nil))
                if parts.count == 2 { named.append((id, String(parts[1]))) }
            }
            if named.count == tags.count && exportedAt == nil { return named }
            key = .sourceTags
        } else {
            key = .sourceDigest
        }
        // The position of the import that set `key` last: the names of its tags then; and of
        // the last import (that changed the digest or the record: one that recorded the tags
        // recorded before writes only the digest).
        var value: String?
        var position: UInt64?
        var then: [Identifier]?
        var record: (digest: String?, tags: String?) = (nil, nil)
        var imported: UInt64?
        var exported: (position: UInt64, tags: [Identifier])?
        try foldRevisions(of: note.id, upToVersion: note.version, in: txn) { revision in
            let properties = revision.note.properties
            let v = properties[key.rawValue]
            if let v, v != value {
                position = revision.position
                then = revision.note.tags
            }
            value = v
            let now = (properties[NoteProperty.sourceDigest.rawValue], properties[NoteProperty.sourceTags.rawValue])
            if now != record { imported = revision.position }
            record = now
            if revision.note.updatedAt == exportedAt { exported = (revision.position, revision.note.tags) }
            return true
        }
        // A file the store's export wrote (its `updated` is a version's) after the last import,
        // then edited: it named the tags that version had (by their names then). The version
        // the import itself made last (its record of the tags) was exported after it.
        if let exported, imported.map({ exported.position >= $0 }) ?? true {
            return try exported.tags.compactMap { id in
                try names.name(id, at: exported.position, in: txn).map { (id, $0) }
            }
        }
        if key == .sourceDigest { tags = (then ?? note.tags).map { ($0, nil) } }
        return try tags.compactMap { tag in
            try (tag.name ?? names.name(tag.id, at: position, in: txn)).map { (tag.id, $0) }
        }
    }

    /// What an import says of the file `file`, moved from `old` into a folder that gives the
    /// category `given` (none at the top), whose note keeps the category set in the store since.
    private func keepsCategoryWarning(
        _ file: String, movedFrom old: String, _ note: Note, given: String?, in txn: borrowing Transaction,
        _ dbs: ProjectionDatabases
    ) throws -> String {
        func named(_ name: String?) -> String { name.map { "the category \"\($0)\"" } ?? "no category" }
        let kept = try note.category.flatMap { try projection.category($0, in: txn, databases: dbs)?.name }
        return "\(file): moved from \(old); its note keeps \(named(kept)), set in the store since its import, not "
            + "\(named(given)) that its new folder gives (`notes categorize` changes it)"
    }

    /// Whether `note` still has the category a file at `file` gives (``folderCategory(of:)``): one
    /// set in the store since, or a folder's category renamed since, stands against a moved or
    /// edited file that names none.
    private func hasCategory(
        givenByFileAt file: String, _ note: Note, in txn: borrowing Transaction, _ dbs: ProjectionDatabases
    ) throws -> Bool {
        guard let given = Self.folderCategory(of: file) else { return note.category == nil }
        guard let id = try projection.category(named: given, in: txn, databases: dbs)?.id else { return false }
        return id == note.category
    }

    /// The category the top folder of the vault's file `file` gives its note (none at the top),
    /// as ``readVaultFile(_:in:)`` reads it for a file that names none.
    static func folderCategory(of file: String) -> String? {
        let parts = file.split(separator: "/")
        guard parts.count > 1 else { return nil }
        return try? validCategoryName(MarkdownNote.oneLine(String(parts[0])))
    }

    /// The name of a vault's file without its folders and `.md`, on one line (names from the file
    /// system may hold what a title cannot, a line break).
    static func fileStem(_ file: String) -> String {
        // An ASCII path without control characters, byte by byte (each byte is a character);
        // splitting a string into characters cost 20,000 instructions a path.
        var path = file
        let ascii = path.withUTF8 { b -> String? in
            guard isASCII(b), !b.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
            // The last part that is not empty (the whole path when there is none).
            var end = b.count
            while end > 0, b[end - 1] == UInt8(ascii: "/") { end -= 1 }
            var start = 0
            if end == 0 {
                end = b.count
            } else {
                start = (b[0..<end].lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
            }
            return String(decoding: UnsafeBufferPointer(rebasing: b[start..<max(start, end - 3)]), as: UTF8.self)
        }
        return ascii.map(MarkdownNote.oneLine) ?? fileStemByCharacters(file)
    }

    /// ``fileStem(_:)`` for any path (the reference its ASCII path must match).
    static func fileStemByCharacters(_ file: String) -> String {
        MarkdownNote.oneLine(String((file.split(separator: "/").last ?? Substring(file)).dropLast(3)))
    }

    /// The title the name of the vault's file `file` gives a note whose text gives none, or nil
    /// when it cannot be one.
    static func titleOfName(_ file: String) -> String? {
        try? validTitle(MarkdownNote.title(frontMatter: nil, body: "", fileStem: fileStem(file)).title)
    }

    /// `body` of each element, on as many threads as there are cores (at most 4), in order.
    static func inParallel<T: Sendable, R: Sendable>(_ elements: [T], _ body: @Sendable (T) -> R) -> [R] {
        let threads = max(1, min(4, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), elements.count / 64))
        let results = UnsafeMutableBufferPointer<R?>.allocate(capacity: elements.count)
        results.initialize(repeating: nil)
        defer {
            results.deinitialize()
            results.deallocate()
        }
        let slots = UncheckedSendable(results)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            var i = t
            while i < elements.count {
                slots.value[i] = body(elements[i])
                i += threads
            }
        }
        return results.map { $0! }
    }

    /// A note imported from a file: its id and the file's digest then.
    struct RecordedFile {
        var id: Identifier
        var digest: String?
    }

    /// For each of `newcomers` (files of the folder that match no note), the note of `gone`
    /// (notes of the folder whose files are no longer at their paths) it is the file of, moved:
    /// the one whose file had the same bytes, else the one whose file had the same name. Only a
    /// match that is the only one on both sides counts (two gone copies of a template, or two
    /// `index.md` files, say nothing of which went where).
    static func filesMoved(gone: [Note], newcomers: [VaultItem]) -> [Note?] {
        var found = [Note?](repeating: nil, count: newcomers.count)
        if gone.isEmpty { return found }
        var taken = Set<Identifier>()
        func match(
            _ goneKey: (Note) -> [UInt8]?, _ newKey: (VaultItem) -> [UInt8]?,
            alike: (Note, VaultItem) -> Bool = { _, _ in true }
        ) {
            var byKey: [[UInt8]: [Int]] = [:]
            for (g, note) in gone.enumerated() where !taken.contains(note.id) {
                if let key = goneKey(note) { byKey[key, default: []].append(g) }
            }
            var wanted: [[UInt8]: [Int]] = [:]
            for (n, item) in newcomers.enumerated() where found[n] == nil {
                if let key = newKey(item) { wanted[key, default: []].append(n) }
            }
            for (key, ns) in wanted where ns.count == 1 {
                guard let gs = byKey[key], gs.count == 1, alike(gone[gs[0]], newcomers[ns[0]]) else { continue }
                found[ns[0]] = gone[gs[0]]
                taken.insert(gone[gs[0]].id)
            }
        }
        func name(_ path: some StringProtocol) -> [UInt8] { Array((path.split(separator: "/").last ?? "").utf8) }
        // An empty file's bytes say nothing of which file it was.
        func digest(_ d: String?) -> [UInt8]? { d.flatMap { $0 == emptyFileDigest ? nil : Array($0.utf8) } }
        match({ digest($0.properties[NoteProperty.sourceDigest.rawValue]) }, { digest($0.digest) })
        // A name alone is common (`todo.md`, `index.md`): the texts must share most of their lines too.
        match(
            { $0.sourcePath.map(name) }, { name($0.file) },
            alike: { note, item in Self.mostlyAlike(note.body, item.body) })
        // Renamed by an editor that rewrote the file's links to itself to the new name (Obsidian
        // does): its text with them named as before is the gone file's, byte for byte. Before
        // 2026-12-07 such a file made a second note.
        var pairs: [(n: Int, g: Int)] = []
        for (n, item) in newcomers.enumerated() where found[n] == nil {
            guard let text = item.selfLinkedText else { continue }
            let stem = fileStem(item.file)
            for (g, note) in gone.enumerated() where !taken.contains(note.id) {
                guard let path = note.sourcePath, let digest = note.properties[NoteProperty.sourceDigest.rawValue]
                else { continue }
                let old = fileStem(path)
                guard old != stem else { continue }
                let before = text.replacing("[[" + stem, with: "[[" + old)
                if SHA256.hex(SHA256.hash(Array(before.utf8))) == digest { pairs.append((n, g)) }
            }
        }
        for pair in pairs
        where pairs.filter({ $0.n == pair.n }).count == 1 && pairs.filter({ $0.g == pair.g }).count == 1 {
            found[pair.n] = gone[pair.g]
            taken.insert(gone[pair.g].id)
        }
        return found
    }

    /// Whether two texts share at least half of their distinct non-empty lines (of the larger).
    static func mostlyAlike(_ a: String, _ b: String) -> Bool {
        func lines(_ t: String) -> Set<Substring> {
            Set(t.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) })
        }
        let (x, y) = (lines(a), lines(b))
        guard !x.isEmpty, !y.isEmpty else { return false }
        return x.intersection(y).count * 2 >= max(x.count, y.count)
    }

    /// The folders of `elsewhere` (each folder's notes by their paths in it) that moved to the
    /// folder whose files are `present` (their digests by path), in order of their name: more
    /// than half of a folder's notes, and at least three of them (all, when it had fewer), have
    /// their file here at the same path, unchanged since its import, and none of those files is
    /// at its place in the old folder any more (a copy of a folder still in place is a folder of
    /// its own). Only a text that one file of the old folder had counts: a file at the same path
    /// with other text, an empty file, or a text several of its files shared (an `Untitled.md`
    /// template) says nothing of where the folder went, so two folders that share only names
    /// (`index.md`, `README.md`) or templates stay apart.
    static func movedFolders(_ elsewhere: [[UInt8]: [[UInt8]: RecordedFile]], present: [[UInt8]: String])
        -> [[UInt8]]
    {
        elsewhere.filter { from, notes in
            var uses: [String: Int] = [:]
            for file in notes.values { if let d = file.digest { uses[d, default: 0] += 1 } }
            let unchanged = notes.filter { path, file in
                guard let d = file.digest, d != emptyFileDigest, uses[d] == 1 else { return false }
                return present[path] == d
            }
            guard unchanged.count * 2 > notes.count, unchanged.count >= min(notes.count, 3) else { return false }
            return unchanged.keys.allSatisfy { !exists(from, $0) }
        }.keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Whether the file `path` of the folder `folder` (both as bytes) is there (anything that is
    /// not plainly absent counts as there).
    static func exists(_ folder: [UInt8], _ path: [UInt8]) -> Bool {
        // Recorded places and paths came from strings: their bytes are UTF-8.
        access(String(decoding: folderPrefix(folder) + path, as: UTF8.self), F_OK) == 0 || errno != ENOENT
    }

    /// A folder's path as bytes, ending in `/` (the root is `/` alone): what its files' paths start with.
    static func folderPrefix(_ folder: [UInt8]) -> [UInt8] { folder.last == 0x2F ? folder : folder + [0x2F] }

    /// The place of `places` (folders notes were imported from) that is the folder `vault` under
    /// another path, else `vault`: a place other than `vault` whose directory is the same one,
    /// by device and inode (the first such place in byte order). One `stat` per place other
    /// than `vault`; a place that cannot be reached now is no match.
    static func recordedPlace(of vault: String, among places: Set<String>) -> String {
        var here = stat()
        guard stat(vault, &here) == 0, here.st_mode & S_IFMT == S_IFDIR else { return vault }
        for place in places.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        where place != vault {
            var there = stat()
            if stat(place, &there) == 0, there.st_mode & S_IFMT == S_IFDIR, there.st_dev == here.st_dev,
                there.st_ino == here.st_ino
            {
                return place
            }
        }
        return vault
    }

    /// The digest of a file of no bytes.
    static let emptyFileDigest = SHA256.hex(SHA256.hash([UInt8]()))

    /// The folder `directory` as an absolute path, refused when its name is not UTF-8 (two such
    /// folders would record one place, and the second would update the first one's notes).
    static func vaultPath(_ directory: String) throws(NotesError) -> String {
        guard let resolved = realpath(directory, nil) else { return directory }
        defer { free(resolved) }
        guard let path = String(validatingCString: resolved) else {
            throw .validation(.file(directory, reason: "the folder's path is not valid UTF-8; rename the folder"))
        }
        return path
    }
}

extension IOFailure {
    /// This failure with `note` said after its detail (`...; note`).
    fileprivate func adding(_ note: String) -> IOFailure {
        var failure = self
        failure.detail = (detail.map { $0 + "; " } ?? "") + note
        return failure
    }

    /// This failure of a file in an export's private folder `staging` named by its place in
    /// `folder`, where the export was to put it.
    fileprivate func placed(from staging: String, in folder: String) -> IOFailure {
        var failure = self
        if path.hasPrefix(staging) { failure.path = folder + path.dropFirst(staging.count) }
        return failure
    }
}
