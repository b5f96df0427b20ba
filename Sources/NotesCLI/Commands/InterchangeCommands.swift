import Basics
import EventStore
import Glibc
import Notes
import NotesInterchange
import SwiftEvolutionHistory

let exportCommand = Command(
    "export", abstract: "Write every event as JSON Lines (the interchange format), oldest first.",
    usage: ["export [--output FILE] [--since POSITION] [--upcast]"],
    discussion: """
        One JSON object per line: position, eventId, stream, version, type, schemaVersion, recordedAt,
        metadata and data (the payload's fields by name). Events keep the schema they were stored with;
        --upcast lifts legacy events to the current schema (see the README). The export reads one
        snapshot and streams, so it runs in constant memory and never blocks writers.
        """,
    options: [
        OptionSpec("output", short: "o", value: "FILE", "write to FILE (replaced only when the export is complete)"),
        OptionSpec("since", value: "POSITION", "only events after this position (continue an earlier export)"),
        OptionSpec("upcast", "lift legacy events to the current schema"),
    ],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    let after = UInt64(try ctx.integer("since") ?? 0)
    let book = try ctx.notebook()
    var output = ctx.value("output")
    if let path = output, isStandardOutput(path) {
        // Standard output's file is written as without --output, but never when it is the
        // store's own (`1<>data.mdb`, or a hard link to it): before 2026-12-07 that export was
        // written over the store, though the same --output with standard output elsewhere is
        // refused.
        try book.refuseDescriptorInStore(1, named: path)
        output = nil
    }
    if let path = output {
        guard !path.isEmpty else { throw CLIError("--output needs a file path") }
        let summary = try book.exportEvents(toFile: path, after: after, upcast: ctx.flag("upcast"))
        if ctx.json {
            ctx.printJSON(
                .object([
                    ("file", .string(path)), ("lines", .int(summary.lines)), ("events", .int(summary.events)),
                    ("lastPosition", .uint(summary.lastPosition)),
                ]))
        } else {
            ctx.terminal.print("exported \(summary.lines) event\(summary.lines == 1 ? "" : "s") to \(path)")
        }
    } else {
        // Straight to standard output: the terminal's buffer would hold the whole log.
        ctx.terminal.flushDirect()
        try book.exportEvents(toFileDescriptor: 1, after: after, upcast: ctx.flag("upcast"))
    }
}

/// Whether `path` is the file standard output is (`/dev/stdout`, `/proc/self/fd/1`, or the file
/// it is redirected to): the export is then written to it as without `--output`, with no summary
/// after it. `/dev/stdout` into a pipe leads to `pipe:[N]`, which no path names: before
/// 2026-12-07 `export --output /dev/stdout | gzip` was refused, "a symbolic link that leads
/// nowhere".
private func isStandardOutput(_ path: String) -> Bool {
    var out = stat()
    var named = stat()
    return !path.isEmpty && fstat(1, &out) == 0 && stat(path, &named) == 0 && out.st_dev == named.st_dev
        && out.st_ino == named.st_ino
}

let importCommand = Command(
    "import", abstract: "Append the events of a JSON Lines export (FILE, or - for standard input).",
    usage: ["import FILE|-"],
    discussion: """
        All or nothing: every line is checked first and the events are appended in one transaction, so
        a bad line (reported with its number) imports nothing. Events already in the store (by event
        id) are skipped, so importing a file twice, or resuming with a longer export, is safe. Each
        stream's versions must continue the stream in this store; positions are this store's own.
        The log's time never goes back: an event dated before the store's last event is recorded at
        that event's instant, and a warning says how many were (import into a new store to keep
        their dates).
        """
) { ctx in
    try ctx.expectPositionals(1...1)
    try expectInput(ctx.positionals[0])
    let summary = try ctx.notebook().importEvents(fromFile: ctx.positionals[0])
    if ctx.json {
        ctx.printJSON(
            .object([
                ("events", .int(summary.events)), ("appended", .int(summary.appended)),
                ("skipped", .int(summary.skipped)), ("recordedLater", .int(summary.recordedLater)),
            ]))
    } else {
        var line = "imported \(summary.appended) event\(summary.appended == 1 ? "" : "s")"
        if summary.skipped > 0 { line += " (\(summary.skipped) already in the store)" }
        ctx.terminal.print(line)
    }
    warnRecordedLater(ctx, summary.recordedLater, storeInstant: summary.storeInstant)
}

/// Says how many imported events were recorded at the store's last instant, later than their
/// own (the log's time never goes back): time travel to their dates does not find them.
func warnRecordedLater(_ ctx: Context, _ count: Int, storeInstant: Int64?) {
    guard count > 0, let storeInstant else { return }
    ctx.terminal.warn(
        "\(counted(count, "event")) \(count == 1 ? "is" : "are") dated before the store's last event "
            + "(\(RFC3339.format(micros: storeInstant))) and recorded at its instant, as the log's time never "
            + "goes back: `--as-of` or `--at` an earlier instant does not show \(count == 1 ? "it" : "them"); "
            + "to keep the dates, import into a new store (--store DIR)")
}

let exportMarkdownCommand = Command(
    "export-markdown", abstract: "Write every note as a Markdown file with front matter into DIR.",
    usage: ["export-markdown DIR"],
    discussion: """
        One .md file per note. A note imported from a Markdown folder goes back to the path it came
        from; the others are named after their title and id, in a folder per category. The front
        matter holds id, title, category, tags (those not written as #tags in the body), aliases,
        pinned, archived, trashed, created and updated, then every key the imported file had that the
        store does not read, as the file had it; the body follows byte for byte. Exporting again into
        DIR rewrites the files (a renamed note moves to its new file); a note in the trash imported from
        DIR whose file was deleted from it (import-markdown --prune) is not written back. A DIR that does
        not exist is written all or nothing: into a hidden folder beside it, renamed to DIR once every
        file is written, and removed if the export fails (a full disk); one that a killed export left
        is removed by the next export beside it, or by an import-markdown of the folder holding it. In
        a DIR that exists, every file is written into a hidden folder inside it first and renamed into
        place once all are: a failure while writing leaves DIR as it was, one while renaming leaves
        each file whole, some new and some old. The store's own folder, or one inside it, is refused, and
        so is a DIR where a folder the export would write (a category's, or that of a note's file) is
        one of them, before anything is written.
        """,
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...1)
    let dir = ctx.positionals[0]
    guard !dir.isEmpty else { throw CLIError("the folder name is empty; give a folder to write into", code: .usage) }
    // A file (or a device) where the folder should be: said as such, not as the system's
    // "cannot list DIR: Not a directory".
    var st = stat()
    if stat(dir, &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR {
        throw CLIError(
            "\(dir) is not a folder; give a folder to write into (one that does not exist is made)", code: .usage)
    }
    // The store's own folder, however it is spelled (a link to it, `.` in it): before 2026-12-07
    // the Markdown files were written beside data.mdb. A folder inside it too, made or not
    // (`STORE/md`, `STORE/../STORE/md`): the first fix refused the folder alone, and the files
    // went into a folder of the store's.
    switch storeFolderHolding(dir, store: try ctx.storePath()) {
    case .some(true):
        throw CLIError(
            "\(dir) is the store's own folder; give another folder to write the Markdown files into", code: .usage)
    case .some(false):
        throw CLIError(
            "\(dir) is inside the store's folder; give a folder outside it to write the Markdown files into",
            code: .usage)
    case nil: break
    }
    let summary = try ctx.notebook().exportMarkdown(to: dir)
    if ctx.json {
        ctx.printJSON(
            .object([
                ("directory", .string(dir)), ("files", .int(summary.files)), ("moved", .int(summary.moved)),
                ("deletedInTrash", .int(summary.deletedInTrash)),
            ]))
    } else {
        var line = "exported \(summary.files) note\(summary.files == 1 ? "" : "s") to \(dir)"
        if summary.deletedInTrash > 0 {
            let n = summary.deletedInTrash
            line +=
                "; \(n) note\(n == 1 ? "" : "s") in the trash whose file\(n == 1 ? " was" : "s were") deleted from it not written back"
        }
        ctx.terminal.print(line)
    }
}

let importMarkdownCommand = Command(
    "import-markdown", abstract: "Create or update notes from the .md files in DIR (a vault).",
    usage: ["import-markdown DIR [--skip-invalid] [--prune]"],
    discussion: """
        Front matter is YAML. Title: its `title` when not empty, else the first `# heading` as text
        (links become their text, images and badges drop out), else the file name; over 500
        characters it is cut at a word boundary with a warning. Category: `category`, else the top
        folder the file is in. Tags: `tags` (a list or one name) and the #tags and #nested/tags of the
        body (letters, digits, emoji, _, - and /; not all digits). Aliases: `aliases`; a wiki link to an
        alias, to the file's name or to its path leads to the note, and so does a Markdown link to the
        file, [text](path.md), from the linking file's folder. Other keys are kept and written back by
        export-markdown.

        A file whose `id` names a note updates it, and so does a file imported from DIR before
        (matched by its path in DIR; DIR reached through another path, a bind mount, is the same
        folder): only what changed. A file moved within DIR (into a subfolder,
        or renamed) keeps its note when its bytes, else its name, match one gone file only; moved
        unchanged into another top folder, a file that names no category gives its note that folder's
        (none at the top) unless the store set another since, which stands, with a warning. Other
        files create notes, so importing DIR again changes nothing. A folder imported before that moved (renamed, or imported on another
        device from another place) is matched the same way when its files are gone from their
        place and DIR holds most of them unchanged at the same paths; a file imported before through
        a folder inside DIR or around it is the same file, and updates its note. Files that are not
        .md are counted and left alone; hidden folders (.obsidian) are skipped. A file that cannot be read refuses the import, every such file named
        with why, and nothing is imported; --skip-invalid imports the others and lists those skipped.
        A file removed while DIR is read (an editor or a sync saving it) is left out with a warning.

        Notes whose files were deleted from DIR are kept as they are, and counted; --prune moves them
        to the trash (notes untrash brings one back), and export-markdown into DIR then does not write
        them back. When such a file is put back in DIR, the next import takes its note out of the
        trash (unless the file says trashed: true).
        """,
    options: [
        OptionSpec("skip-invalid", "import the readable files; list each file skipped and why"),
        OptionSpec("prune", "move the notes whose files were deleted from DIR to the trash"),
    ]
) { ctx in
    try ctx.expectPositionals(1...1)
    try expectInput(ctx.positionals[0], folder: true)
    let summary = try ctx.notebook().importMarkdown(
        from: ctx.positionals[0], skipInvalid: ctx.flag("skip-invalid"), prune: ctx.flag("prune"))
    for warning in summary.warnings { ctx.terminal.warn(warning) }
    for problem in summary.skipped { ctx.terminal.warn("skipped \(problem.file): \(problem.reason)") }
    if ctx.json {
        ctx.printJSON(
            .object([
                ("created", .int(summary.created)), ("updated", .int(summary.updated)),
                ("unchanged", .int(summary.unchanged)),
                (
                    "skipped",
                    .array(
                        summary.skipped.map { .object([("file", .string($0.file)), ("reason", .string($0.reason))]) })
                ),
                ("otherFiles", .int(summary.otherFiles)), ("missingFiles", .int(summary.missingFiles)),
                ("pruned", .int(summary.pruned)), ("prunable", .int(summary.prunable)),
                ("restored", .int(summary.restored)),
                (
                    "missingAttachments",
                    .array(
                        summary.missingAttachments.map {
                            .object([("file", .string($0.file)), ("link", .string($0.link))])
                        })
                ),
                ("movedFiles", .int(summary.movedFiles)), ("olderExports", .int(summary.olderExports)),
                ("legacyMatched", .int(summary.legacyMatched)),
                ("movedFrom", .array(summary.movedFrom.map { .string($0) })),
            ]))
    } else {
        var line = "created \(summary.created), updated \(summary.updated), unchanged \(summary.unchanged)"
        if !summary.skipped.isEmpty { line += ", skipped \(summary.skipped.count)" }
        if summary.otherFiles > 0 {
            line += "; \(summary.otherFiles) other file\(summary.otherFiles == 1 ? "" : "s") left alone"
        }
        if summary.missingFiles > 0 {
            let n = summary.missingFiles
            line += "; \(n) note\(n == 1 ? "" : "s") from files no longer in the folder kept"
            if summary.prunable > 0 {
                let p = summary.prunable
                let which = p == n ? (n == 1 ? "it" : "them") : "the \(p) not in the trash"
                line += " (--prune moves \(which) to the trash)"
            }
        }
        if summary.pruned > 0 {
            let n = summary.pruned
            line +=
                "; \(n) note\(n == 1 ? "" : "s") whose file\(n == 1 ? " was" : "s were") deleted from the folder moved to the trash (notes untrash ID brings one back)"
        }
        if summary.restored > 0 {
            let n = summary.restored
            line += "; \(n) note\(n == 1 ? " whose file is" : "s whose files are") back taken out of the trash"
        }
        if summary.movedFiles > 0 {
            let n = summary.movedFiles
            line += "; \(n) file\(n == 1 ? "" : "s") found moved within the folder"
        }
        if summary.olderExports > 0 {
            let n = summary.olderExports
            line +=
                "; \(n) file\(n == 1 ? "" : "s") an export wrote before \(n == 1 ? "its note was" : "their notes were") edited here left as the store has \(n == 1 ? "it" : "them")"
        }
        if summary.legacyMatched > 0 {
            let n = summary.legacyMatched
            line +=
                "; \(n) note\(n == 1 ? "" : "s") an earlier build imported without \(n == 1 ? "its file" : "their files") matched to \(n == 1 ? "it" : "them") by title and body"
        }
        for from in summary.movedFrom {
            line += "; matched the notes imported from \(oneLine(ctx.terminal.shown(from))) (moved) by their paths"
        }
        ctx.terminal.print(line)
    }
}

let importHistoryCommand = Command(
    "import-history", abstract: "Turn a document edit history (swift-evolution corpus format) into notes.",
    usage: ["import-history FILE|-"],
    discussion: """
        Each line is one revision: {"doc", "commit", "time", "author", "op", "title", "status", "text"}
        (see Samples/README.md). A document and its renames become one note: create, edit, rename and
        delete become NoteCreated, NoteRetitled/NoteBodyEdited/NoteCategorized and NoteTrashed, by the
        commit's author at the commit's time, categorized by status. FILE may be gzip-compressed (.gz).
        Ids are derived from the input, so importing the same history again changes nothing. Into a
        store with later events, the revisions are recorded at the store's last instant (the log's
        time never goes back), and a warning says so: import into a new store to keep their dates.
        """
) { ctx in
    try ctx.expectPositionals(1...1)
    try expectInput(ctx.positionals[0])
    let summary = try ctx.notebook().importHistory(fromFile: ctx.positionals[0])
    if ctx.json {
        ctx.printJSON(
            .object([
                ("lines", .int(summary.lines)), ("notes", .int(summary.notes)), ("events", .int(summary.events)),
                ("appended", .int(summary.appended)), ("skipped", .int(summary.skipped)),
                ("categoriesCreated", .int(summary.categoriesCreated)),
                ("recordedLater", .int(summary.recordedLater)),
            ]))
    } else {
        var line = "imported \(summary.notes) note\(summary.notes == 1 ? "" : "s") from \(summary.lines) lines: "
        line += "\(summary.appended) event\(summary.appended == 1 ? "" : "s") appended"
        if summary.skipped > 0 { line += ", \(summary.skipped) already in the store" }
        if summary.categoriesCreated > 0 {
            line += ", \(summary.categoriesCreated) categor\(summary.categoriesCreated == 1 ? "y" : "ies") created"
        }
        ctx.terminal.print(line)
    }
    warnRecordedLater(ctx, summary.recordedLater, storeInstant: summary.storeInstant)
}
