import Basics
import EventStore
import Notes

let bodyOptions = [
    OptionSpec("body", short: "b", value: "TEXT", "the body text, kept byte for byte"),
    OptionSpec("body-file", value: "PATH", "read the body from a file (- for standard input)"),
]

let addCommand = Command(
    "add", abstract: "Create a note and print its id.",
    usage: ["add TITLE [--body TEXT | --body-file PATH | -] [--category NAME] [--tag TAG]... [--pin]"],
    discussion: "The body comes from --body, --body-file, or standard input (- or when it is not a terminal).",
    options: bodyOptions + [
        OptionSpec("category", short: "c", value: "NAME", "put the note in this category (created if needed)"),
        OptionSpec("tag", value: "TAG", repeatable: true, "tag the note (repeatable; missing tags are created)"),
        OptionSpec("pin", short: "p", "pin the note"),
    ]
) { ctx in
    let rest = ctx.textArguments
    guard let title = rest.first else { throw CLIError("missing TITLE; usage: notes \(ctx.command.usage[0])") }
    if rest.count > 1 {
        throw ctx.unexpectedArgument(rest[1], "quote a title with spaces, give the body with --body")
    }
    // A title the store cannot hold is refused before the store is opened: a first `add ""`
    // made an empty store. Names typed here refuse DEL and the C1 controls too (as the category
    // and the tags do; before 2026-12-07 they were taken).
    do {
        _ = try Notebook.validCommandTitle(title)
        if let category = ctx.value("category") { _ = try Notebook.validCommandCategoryName(category) }
        for tag in ctx.tagValues { _ = try Notebook.validCommandTagName(tag) }
    } catch { throw CLIError.from(error) }
    var body = try ctx.bodyArgument()
    if body == nil && !ctx.terminal.stdinIsTTY {
        body = try readText(
            path: "-", limit: ctx.bodyLimit, what: "body", raise: InvalidInput.raiseBodyLimit, closedIsEmpty: true)
    }
    let note = try ctx.notebook().add(
        title: title, body: body ?? "", category: ctx.value("category"), tags: ctx.tagValues,
        pinned: ctx.flag("pin"))
    if ctx.json { try ctx.printJSON(ctx.noteJSON(note)) } else { ctx.terminal.print(shortID(note.id)) }
}

let showCommand = Command(
    "show", abstract: "Show a note.", usage: ["show ID [--at VERSION|INSTANT]"],
    options: [OptionSpec("at", value: "VERSION|INSTANT", "the note as it was after that version or at that instant")],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...1)
    let id = try ctx.noteID(ctx.positionals[0])
    if let at = ctx.value("at") {
        // The category and tags are named as they were called at that version, or at that
        // instant (as `list --as-of` names them: a rename after the note's version counts).
        let book = try ctx.notebook()
        let selector = try ctx.revisionSelector(at, option: "--at")
        let revision = try book.revision(of: id, at: selector)
        var position = revision.position
        if case .instant(let instant) = selector { position = max(position, try book.position(atOrBefore: instant)) }
        try ctx.printNote(revision.note, labels: try book.labels(of: revision.note, at: position))
    } else {
        try ctx.printNote(try ctx.notebook().note(id))
    }
}

let editCommand = Command(
    "edit", abstract: "Change a note's title or body, or edit it in $VISUAL/$EDITOR.",
    usage: ["edit ID [--title T] [--body TEXT | --body-file PATH | -] [--expect-version N]"],
    discussion: """
        With no --title or body, the note opens in $VISUAL (else $EDITOR, else the config's editor, else vi,
        which needs a terminal: without one, the edit is refused with exit code 2): the first line is the
        title, then a blank line, then the body. If the note changed while the editor was open, nothing is
        overwritten: the edited text is saved to a recovery file and the exit code is 4. Any other refused
        save (an empty title, a full disk) keeps the text in a recovery file too, with that error's code.
        """,
    options: [OptionSpec("title", short: "t", value: "TITLE", "the new title")] + bodyOptions + [
        OptionSpec("expect-version", value: "N", "fail with exit code 4 unless the note is at version N")
    ]
) { ctx in
    let rest = ctx.textArguments
    guard let idText = rest.first else { throw CLIError("missing ID; usage: notes \(ctx.command.usage[0])") }
    if rest.count > 1 { throw ctx.unexpectedArgument(rest[1], "usage: notes \(ctx.command.usage[0])") }
    let id = try ctx.noteID(idText)
    let expected = try ctx.integer("expect-version", min: 1).map(UInt64.init)
    let body = try ctx.bodyArgument()
    let title = ctx.value("title")
    if let title {
        do { _ = try Notebook.validCommandTitle(title) } catch { throw CLIError.from(error) }
    }
    let note: Note
    if title == nil && body == nil {
        note = try ctx.editInEditor(id, expectedVersion: expected)
    } else {
        note = try ctx.notebook().edit(id, title: title, body: body, expectedVersion: expected)
    }
    if ctx.json {
        try ctx.printJSON(ctx.noteJSON(note))
    } else {
        ctx.terminal.print("\(shortID(note.id)) v\(note.version)")
    }
}

/// A command that changes one flag of a note: pin, unpin, archive...
func flagCommand(
    _ name: String, _ abstract: String, _ action: @escaping @Sendable (Notebook, Identifier) throws -> Note
)
    -> Command
{
    Command(name, abstract: abstract, usage: ["\(name) ID"]) { ctx in
        try ctx.expectPositionals(1...1)
        let id = try ctx.noteID(ctx.positionals[0])
        let note = try action(try ctx.notebook(), id)
        if ctx.json {
            try ctx.printJSON(ctx.noteJSON(note))
        } else {
            ctx.terminal.print("\(shortID(note.id)) v\(note.version)")
        }
    }
}

let pinCommand = flagCommand("pin", "Pin a note (pinned notes list first).") { try $0.pin($1) }
let unpinCommand = flagCommand("unpin", "Unpin a note.") { try $0.unpin($1) }
let archiveCommand = flagCommand("archive", "Archive a note (hidden from list and search by default).") {
    try $0.archive($1)
}
let unarchiveCommand = flagCommand("unarchive", "Bring an archived note back.") { try $0.unarchive($1) }
let trashCommand = flagCommand("trash", "Move a note to the trash (its history is kept).") { try $0.trash($1) }
let untrashCommand = flagCommand("untrash", "Take a note out of the trash.") { try $0.untrash($1) }

let categorizeCommand = Command(
    "categorize", abstract: "Put a note in a category (created if needed), or in none.",
    usage: ["categorize ID NAME", "categorize ID --none"],
    options: [OptionSpec("none", "remove the note from its category")]
) { ctx in
    let none = ctx.flag("none")
    try ctx.expectPositionals(none ? 1...1 : 2...2)
    let id = try ctx.noteID(ctx.positionals[0])
    if !none {
        do { _ = try Notebook.validCommandCategoryName(ctx.positionals[1]) } catch { throw CLIError.from(error) }
    }
    let note = try ctx.notebook().categorize(id, as: none ? nil : ctx.positionals[1])
    if ctx.json {
        try ctx.printJSON(ctx.noteJSON(note))
    } else {
        ctx.terminal.print("\(shortID(note.id)) v\(note.version)")
    }
}

let listOptions = [
    OptionSpec("category", short: "c", value: "NAME", "only notes in this category"),
    OptionSpec("uncategorized", "only notes without a category"),
    OptionSpec(
        "tag", value: "TAG", repeatable: true, "only notes with this tag or one below it (repeatable: all must match)"),
    OptionSpec("pinned", "only pinned notes"),
    OptionSpec("archived", "archived notes instead"),
    OptionSpec("trashed", "notes in the trash instead"),
    OptionSpec("all", "notes anywhere: active, archived and trashed"),
]

let listCommand = Command(
    "list", abstract: "List notes: pinned first, then by last update.",
    usage: [
        "list [--category NAME | --uncategorized] [--tag TAG]... [--pinned] [--archived | --trashed | --all] [--orphans] [--sort updated|created|title] [--reverse] [--limit N] [--as-of INSTANT]"
    ],
    options: listOptions + [
        OptionSpec("sort", short: "s", value: "KEY", "updated (default), created or title"),
        OptionSpec("reverse", short: "r", "reverse the order within pinned and unpinned notes"),
        OptionSpec("limit", short: "n", value: "N", "at most N notes"),
        OptionSpec("orphans", "only notes with no wiki link to another note and none from one"),
        OptionSpec("as-of", value: "INSTANT", "the notebook as it was at that instant"),
    ],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    var q = try ctx.listQuery()
    switch ctx.value("sort") ?? ctx.config["sort"] {
    case nil, "updated": q.sort = .updated
    case "created": q.sort = .created
    case "title": q.sort = .title
    case let other?:
        let hint = didYouMean(other, among: ["updated", "created", "title"])
        throw CLIError("--sort must be updated, created or title, not \"\(other)\"\(hint)")
    }
    q.reverse = ctx.flag("reverse")
    q.limit = try ctx.integer("limit", min: 1) ?? Int.max
    let book = try ctx.notebook()
    // JSON prints whole notes (bodies too); the table prints rows, read without the bodies.
    var notes: [Note] = []
    var rows: [NoteRow] = []
    var past: NotebookState?
    if let asOf = ctx.value("as-of") {
        let instant = try ctx.instant(asOf, option: "--as-of")
        if ctx.flag("orphans") { q.excluding = try book.linkedNotes(asOf: instant) }
        let then = try book.past(asOf: instant)
        notes = try book.list(try ctx.pastScope(q, in: then.names), in: then)
        if !ctx.json { rows = notes.map(NoteRow.init) }
        past = then.names
    } else {
        if ctx.flag("orphans") { q.excluding = try book.linkedNotes() }
        if ctx.json { notes = try book.list(q) } else { rows = try book.listRows(q) }
    }
    // Categories and tags are named as they were at the --as-of instant, or else as they are
    // now, read for the whole page at once.
    if past == nil {
        if ctx.json {
            try ctx.preloadLabels(categories: notes.map { $0.category }, tags: notes.map { $0.tags })
        } else {
            try ctx.preloadLabels(categories: rows.map { $0.category }, tags: rows.map { $0.tags })
        }
    }
    // Notes whose version (now, or at the --as-of instant) is still in the outbox of a store
    // that syncs. A past listing reads the outbox too, so its versions from there are marked as
    // `show --at` marks them (before 2026-12-07 `list --as-of now` showed them unmarked).
    let sync = try ctx.syncMarks()
    func pending(_ id: Identifier, _ version: UInt64) throws -> Bool {
        try !ctx.pendingMark(id, version: version, state: sync).isEmpty
    }
    if ctx.json {
        ctx.printJSON(
            .array(
                try notes.map { n in
                    let value = ctx.noteJSON(n, labels: try past?.labels(of: n) ?? ctx.labels(n))
                    guard try pending(n.id, n.version), case .object(var fields) = value else { return value }
                    fields.append(("pending", .bool(true)))
                    return .object(fields)
                }))
    } else if rows.isEmpty {
        ctx.terminal.print(ctx.terminal.dim("no notes"))
    } else {
        try ctx.printNoteTable(rows, pending: { r in try pending(r.id, r.version) }) { r in
            try past?.labels(of: r) ?? ctx.labels(r)
        }
    }
}

extension Context {
    /// The status, category and pinned filters shared by list and search.
    /// The listing the options ask for; `category`, when given, stands for `--category`'s value
    /// (a search's `category:NAME`).
    func listQuery(category: String? = nil) throws -> ListQuery {
        let categoryName = category ?? value("category")
        var q = ListQuery()
        let statuses = ["archived", "trashed", "all"].filter(flag)
        if statuses.count > 1 { throw CLIError("give only one of --archived, --trashed and --all") }
        switch statuses.first {
        case "archived": q.status = .archived
        case "trashed": q.status = .trashed
        case "all": q.status = .all
        default: q.status = .active
        }
        if categoryName != nil && flag("uncategorized") {
            throw CLIError("give either --category NAME or --uncategorized, not both")
        }
        // With --as-of the name is looked up as it was then, by the caller.
        if let name = categoryName, value("as-of") == nil {
            q.scope = .category(try notebook().category(named: name).id)
        } else if flag("uncategorized") {
            q.scope = .uncategorized
        }
        if value("as-of") == nil {
            let book = try notebook()
            q.tags = try tagValues.map { try book.tags(within: $0).map(\.id) }
        }
        q.pinnedOnly = flag("pinned")
        return q
    }
}

let statsCommand = Command(
    "stats", abstract: "Counts of notes, events, categories and tags, and the store's size.", usage: ["stats"],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    let book = try ctx.notebook()
    let s = try book.stats()
    let path = try ctx.storePath()
    // Sync state, when the store syncs or a remote is set: the outbox, the remote's position
    // confirmed here, the last sync.
    let sync = try book.syncState()
    let syncs = sync.notebook != nil || remoteAddress(ctx) != nil
    if ctx.json {
        var fields: [(key: String, value: JSONValue)] = [
            ("notes", .int(s.notes)), ("events", .uint(s.events)), ("categories", .int(s.categories)),
            ("tags", .int(s.tags)),
            ("storeBytes", .int(s.storeBytes)), ("fileBytes", .int(s.fileBytes)), ("store", .string(path)),
        ]
        if syncs {
            fields.append(
                (
                    "sync",
                    .object([
                        ("notebook", sync.notebook.map { .string($0.uuidString) } ?? .null),
                        ("outbox", .uint(sync.pending)), ("remotePosition", .uint(sync.confirmed)),
                        ("lastSync", sync.lastSync.map { .string(RFC3339.format(micros: $0)) } ?? .null),
                    ])
                ))
        }
        ctx.printJSON(.object(fields))
    } else {
        var rows = [
            ["store", path], ["notes", String(s.notes)], ["events", String(s.events)],
            ["categories", String(s.categories)], ["tags", String(s.tags)],
            ["size", formatBytes(s.storeBytes) + " used, " + formatBytes(s.fileBytes) + " on disk"],
        ]
        if syncs {
            rows.append(["outbox", counted(sync.pending, "event") + " not yet pushed"])
            rows.append(["remote position", String(sync.confirmed)])
            rows.append(["last sync", sync.lastSync.map { ctx.relative($0) } ?? "never"])
        }
        ctx.printTable(rows, styles: [ctx.terminal.dim])
    }
}

func formatBytes(_ n: Int) -> String {
    if n < 1024 { return "\(n) B" }
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var v = Double(n) / 1024
    var i = 0
    while v >= 1024 && i < units.count - 1 {
        v /= 1024
        i += 1
    }
    let tenths = Int((v * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[i])"
}
