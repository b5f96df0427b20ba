import Basics
import EventStore
import Notes
import TextDiff

let historyCommand = Command(
    "history", abstract: "Every change to a note, oldest first: version, time, who, what.",
    usage: ["history ID"],
    discussion: """
        One line per stored event. A legacy NoteUpdated event is one line with both of its changes.
        An event of a synced notebook whose device claims another instant than the one the shared
        log recorded by a minute or more ends with "(written INSTANT on the device)" ("writtenAt"
        in --json, wherever it differs): the device's claim, never used for order or time travel.
        """,
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...1)
    let book = try ctx.notebook()
    let id = try ctx.noteID(ctx.positionals[0])
    // Versions still in the outbox of a store that syncs: `v5*`, `"pending": true`.
    let sync = try ctx.syncMarks()
    func pending(_ e: HistoryEntry) -> Bool { sync?.isPending(position: e.revision.position) ?? false }
    // Each entry becomes its row (or JSON) as it comes: the entries hold the note's whole body at
    // each version, which for a large note with many versions took a gigabyte.
    if ctx.json {
        var values: [JSONValue] = []
        try book.history(of: id) { e in
            guard pending(e), case .object(var fields) = historyJSON(e) else { return values.append(historyJSON(e)) }
            fields.append(("pending", .bool(true)))
            values.append(.object(fields))
        }
        ctx.printJSON(.array(values))
        return
    }
    let t = ctx.terminal
    var rows: [[String]] = []
    try book.history(of: id) { e in
        let r = e.revision
        rows.append([
            "v\(r.version)" + (pending(e) ? "*" : ""), ctx.relative(r.recordedAt), actorCell(r.metadata.actor),
            r.storedType,
            e.summary
                + (shownClaim(r.metadata, r.recordedAt).map { " (written \(wholeSeconds($0)) on the device)" } ?? ""),
        ])
    }
    ctx.printTable(rows, styles: [t.cyan, t.dim, t.dim, { $0 }, { $0 }])
}

let diffCommand = Command(
    "diff", abstract: "Compare two versions of a note: field changes, then a unified diff of the body.",
    usage: ["diff ID FROM [TO]"],
    discussion: """
        FROM and TO are versions (3 or v3) or instants (RFC 3339, YYYY-MM-DD, "2h ago", yesterday...).
        TO defaults to the latest version. The body diff is in `diff -u` form, so `patch` applies
        it. Versions that do not differ (one version given twice) print one line saying so.
        """,
    options: [OptionSpec("context", short: "U", value: "N", "lines of context around each change (default 3)")],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(2...3)
    let book = try ctx.notebook()
    let id = try ctx.noteID(ctx.positionals[0])
    let from = try ctx.revisionSelector(ctx.positionals[1], option: "FROM")
    let to = try ctx.positionals.count > 2 ? ctx.revisionSelector(ctx.positionals[2], option: "TO") : nil
    let context = try ctx.integer("context") ?? 3
    let diff = try book.diff(id, from: from, to: to, context: min(context, 1_000_000))
    if ctx.json {
        ctx.printJSON(
            .object([
                ("from", .uint(diff.from.version)), ("to", .uint(diff.to.version)),
                ("fields", .array(diff.fields.map(changeJSON))),
                ("hunks", .array(diff.hunks.map(hunkJSON))),
            ]))
        return
    }
    let t = ctx.terminal
    let short = shortID(id)
    // Nothing printed read as a command that did nothing (before 2026-12-07).
    if diff.fields.isEmpty && diff.hunks.isEmpty {
        let (a, b) = (diff.from.version, diff.to.version)
        t.print(
            a == b
                ? "\(short) v\(a) and v\(b) are the same version: nothing differs"
                : "\(short) v\(a) and v\(b) do not differ")
        return
    }
    for change in diff.fields { t.print(t.bold(t.shown(fieldLine(change)))) }
    let hunks = diff.hunks.map { h in
        var h = h
        for i in h.lines.indices { h.lines[i].text = t.shown(h.lines[i].text) }
        return h
    }
    // A tab ends the file name, as in GNU diff's headers, so `patch -p1` reads the name alone.
    let text = UnifiedDiff.render(
        hunks, oldLabel: "a/\(short)\tv\(diff.from.version)", newLabel: "b/\(short)\tv\(diff.to.version)",
        color: t.colorAllowed)
    t.print(text, terminator: "")
}

let blameCommand = Command(
    "blame", abstract: "Show each line of a note's body with the version, date and author that last changed it.",
    usage: ["blame ID [--at VERSION|INSTANT]"],
    options: [OptionSpec("at", value: "VERSION|INSTANT", "blame the body as it was then")],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...1)
    let book = try ctx.notebook()
    let id = try ctx.noteID(ctx.positionals[0])
    let at = try ctx.value("at").map { (text) in try ctx.revisionSelector(text, option: "--at") }
    let blame = try book.bodyBlame(id, at: at)
    let lines = blame.lines
    if ctx.json {
        ctx.printJSON(
            .array(
                lines.enumerated().map { i, l in
                    .object([
                        ("line", .int(i + 1)), ("version", .uint(l.version)),
                        ("recordedAt", .string(RFC3339.format(micros: l.recordedAt))), ("actor", .string(l.actor)),
                        ("text", .string(l.text)), ("newline", .bool(l.hasNewline)),
                    ])
                }))
        return
    }
    let t = ctx.terminal
    // An empty body has no line to blame: nothing printed read as a command that did nothing
    // (before 2026-12-07). Said as `diff` says versions that do not differ, with the version that
    // emptied it.
    if lines.isEmpty {
        let since = blame.bodySince
        t.print(
            "\(shortID(id)) v\(blame.version) has an empty body (since v\(since.version), "
                + "\(localDate(since.recordedAt)), \(t.shown(actorCell(since.actor)))): no lines to blame")
        return
    }
    let versionWidth = lines.map { "v\($0.version)".count }.max() ?? 0
    // Each actor's cell and width once: a note's lines have a few authors (each line's own cell
    // was a fifth of the blame of a 1,600-line proposal).
    var cells: [String: (cell: String, width: Int)] = [:]
    let actors = lines.map { l in
        if let known = cells[l.actor] { return known }
        let cell = actorCell(l.actor)
        let made = (cell: cell, width: displayWidth(cell))
        cells[l.actor] = made
        return made
    }
    let actorWidth = actors.map(\.width).max() ?? 0
    for (l, actor) in zip(lines, actors) {
        let version = "v\(l.version)"
        let prefix =
            version + String(repeating: " ", count: versionWidth - version.count) + "  "
            + localDate(l.recordedAt) + "  " + actor.cell + String(repeating: " ", count: actorWidth - actor.width)
        t.print(t.dim(t.shown(prefix) + " |") + " " + t.shown(l.text))
    }
}

let restoreCommand = Command(
    "restore", abstract: "Bring back a past version of a note (a new event; history is kept).",
    usage: ["restore ID --to VERSION|INSTANT [--expect-version N]"],
    discussion: """
        Restores the title, body, pinned flag, category and tags of that version and takes the note out of
        the trash. If that version's category or one of its tags has been deleted since, the note is
        restored without it (with a warning). A note that already is as that version is left alone.
        """,
    options: [
        OptionSpec("to", value: "VERSION|INSTANT", "the version to bring back (3, v3, or an instant)"),
        OptionSpec("expect-version", value: "N", "fail with exit code 4 unless the note is at version N"),
    ]
) { ctx in
    try ctx.expectPositionals(1...1)
    guard let toText = ctx.value("to") else {
        throw CLIError("missing --to VERSION|INSTANT; usage: notes \(ctx.command.usage[0])")
    }
    let target = try ctx.revisionSelector(toText, option: "--to")
    let book = try ctx.notebook()
    let id = try ctx.noteID(ctx.positionals[0])
    let expected = try ctx.integer("expect-version", min: 1).map(UInt64.init)
    let outcome = try book.restore(id, to: target, expectedVersion: expected)
    try ctx.report(outcome, verb: "restored from")
}

let undoCommand = Command(
    "undo", abstract: "Undo a note's last change by restoring the version before it.",
    usage: ["undo ID [--expect-version N]"],
    discussion: """
        The last change is the last command's events together (an edit of title and body, an undo's \
        restore and trash). Undo appends events too, so undoing twice brings the change back.
        """,
    options: [OptionSpec("expect-version", value: "N", "fail with exit code 4 unless the note is at version N")]
) { ctx in
    try ctx.expectPositionals(1...1)
    let book = try ctx.notebook()
    let id = try ctx.noteID(ctx.positionals[0])
    let expected = try ctx.integer("expect-version", min: 1).map(UInt64.init)
    let outcome = try book.undo(id, expectedVersion: expected)
    try ctx.report(outcome, verb: "back to")
}

let logCommand = Command(
    "log", abstract: "The audit log of every change to every note, category and tag, newest first.",
    usage: [
        "log [--since INSTANT] [--until INSTANT] [--note ID] [--type TYPE] [--actor NAME] [--limit N] [--reverse]"
    ],
    options: [
        OptionSpec("since", value: "INSTANT", "only events at or after this instant"),
        OptionSpec("until", value: "INSTANT", "only events at or before this instant (a date: to the end of that day)"),
        OptionSpec("note", value: "ID", "only this note's events"),
        OptionSpec("type", value: "TYPE", "only events of this type (e.g. NoteRetitled)"),
        OptionSpec("actor", value: "NAME", "only events by this actor (the whole name, any case)"),
        OptionSpec("limit", short: "n", value: "N", "at most N events"),
        OptionSpec("reverse", short: "r", "oldest first"),
    ],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    var q = LogQuery()
    q.since = try ctx.value("since").map { (text) in try ctx.instant(text, option: "--since") }
    // A date alone ends the range at the end of its day: `--since 2026-12-07 --until 2026-12-07`
    // is that day's events (before 2026-12-07 the --until was the day's midnight, and it found
    // none). An instant given whole is taken as given.
    q.until = try ctx.value("until").map { (text) in try ctx.instant(text, option: "--until", upperBound: true) }
    // A range that ends before it starts holds no event: a mistake (the two swapped), not a
    // query. Before 2026-12-06 it printed nothing and exited 0.
    if let since = q.since, let until = q.until, since > until {
        throw CLIError(
            "--since \"\(ctx.value("since") ?? "")\" is later than --until \"\(ctx.value("until") ?? "")\", so no "
                + "event can match; give a --since at or before the --until (swap them)")
    }
    q.type = ctx.value("type")
    q.actor = ctx.value("actor")
    // No event has an empty type: a mistake (an unset shell variable), not a query. (An actor
    // may be empty, in an imported history.)
    if q.type == "" {
        throw CLIError("--type needs an event type, e.g. NoteCreated (see `notes log`), not an empty string")
    }
    q.limit = try ctx.integer("limit", min: 1) ?? Int.max
    q.oldestFirst = ctx.flag("reverse")
    let book = try ctx.notebook()
    if let note = ctx.value("note") { q.note = try ctx.noteID(note) }
    let entries = try book.log(q)
    if ctx.json {
        ctx.printJSON(.array(entries.map(logJSON)))
        return
    }
    if entries.isEmpty {
        // An actor is matched whole: say so, since a first name alone finds nothing.
        let byActor = q.actor.map { " by \"\($0)\" (an actor is matched whole, in any case, as `notes log` shows it)" }
        ctx.terminal.print(ctx.terminal.dim("no events" + (byActor ?? "")))
        return
    }
    let t = ctx.terminal
    ctx.printTable(
        entries.map { e in
            let subject: String
            switch e.subject {
            case .note(let h): subject = "\(shortID(h.revision.note.id)) v\(e.version)"
            case .entity(let kind, _, let name, _): subject = "\(kind.rawValue) " + truncate(name, 30)
            case .other: subject = truncate(e.stream, 30)
            }
            return [ctx.relative(e.recordedAt), actorCell(e.metadata.actor), subject, e.storedType, e.summary]
        }, styles: [t.dim, t.dim, t.cyan, { $0 }, { $0 }])
}

extension Context {
    /// `3` or `v3` is a version; anything else an instant.
    func revisionSelector(_ text: String, option: String) throws -> RevisionSelector {
        if let v = try parseVersion(Notebook.trim(text)) { return .version(v) }
        return .instant(try instant(text, option: option, versions: true))
    }

    /// Prints what a restore or undo did.
    func report(_ outcome: RestoreOutcome, verb: String) throws {
        let n = outcome.note
        if let c = outcome.deletedCategory {
            terminal.warn(
                "v\(outcome.fromVersion) was in category \"\(c.name)\", deleted since; the note is restored without a category"
            )
        }
        if !outcome.deletedTags.isEmpty {
            let names = outcome.deletedTags.map { "\"\($0.name)\"" }.joined(separator: ", ")
            let s = outcome.deletedTags.count == 1 ? "" : "s"
            terminal.warn(
                "v\(outcome.fromVersion) had tag\(s) \(names), deleted since; the note is restored without \(s.isEmpty ? "it" : "them")"
            )
        }
        if json {
            var fields = try noteJSON(n).objectValue ?? []
            fields.append(("restoredFrom", .uint(outcome.fromVersion)))
            fields.append(("appended", .bool(outcome.appended)))
            fields.append(("deletedCategory", outcome.deletedCategory.map { .string($0.name) } ?? .null))
            fields.append(("deletedTags", .array(outcome.deletedTags.map { .string($0.name) })))
            printJSON(.object(fields))
        } else if outcome.appended {
            terminal.print("\(shortID(n.id)) v\(n.version) (\(verb) v\(outcome.fromVersion))")
        } else if outcome.deletedCategory != nil || !outcome.deletedTags.isEmpty {
            // What differs from that version cannot come back (see the warnings above).
            terminal.print(
                "\(shortID(n.id)) v\(n.version) is already as v\(outcome.fromVersion) was, but for what was deleted since; nothing changed"
            )
        } else {
            terminal.print(
                "\(shortID(n.id)) v\(n.version) is already as it was at v\(outcome.fromVersion); nothing changed")
        }
    }
}

/// The local calendar date of an instant, `YYYY-MM-DD`.
func localDate(_ micros: Int64) -> String {
    let local = LocalTimeZone.system.localMicros(fromUTC: micros)
    let perDay: Int64 = 86_400_000_000
    var day = local / perDay
    if local % perDay < 0 { day -= 1 }
    return CivilDate(daysSinceEpoch: day).description
}

/// A field change in `notes diff`: `title: "A" -> "B"`, `pinned: false -> true`.
func fieldLine(_ change: NoteChange) -> String {
    switch change {
    case .title(let from, let to): return "title: \(from.map(quote) ?? "none") -> \(quote(to))"
    case .body(let stat): return "body: +\(stat.added) -\(stat.removed) lines"
    case .category(let from, let to): return "category: \(from?.name ?? "none") -> \(to?.name ?? "none")"
    case .tags(let added, let removed): return "tags: " + NoteChange.tagList(added: added, removed: removed)
    case .pinned(let from, let to): return "pinned: \(from) -> \(to)"
    case .archived(let from, let to): return "archived: \(from) -> \(to)"
    case .trashed(let from, let to): return "trashed: \(from) -> \(to)"
    case .property(let key, let from, let to):
        return key + ": " + NoteChange.propertyChange(key: key, from: from, to: to)
    }
}

private func quote(_ s: String) -> String { "\"" + s + "\"" }

func changeJSON(_ change: NoteChange) -> JSONValue {
    let field: (String, JSONValue) = ("field", .string(change.field))
    switch change {
    case .title(let from, let to):
        return .object([field, ("from", from.map(JSONValue.string) ?? .null), ("to", .string(to))])
    case .body(let stat):
        return .object([field, ("added", .int(stat.added)), ("removed", .int(stat.removed))])
    case .category(let from, let to):
        return .object([
            field, ("from", from.map { .string($0.name) } ?? .null), ("to", to.map { .string($0.name) } ?? .null),
        ])
    case .tags(let added, let removed):
        return .object([
            field, ("added", .array(added.map { .string($0.name) })),
            ("removed", .array(removed.map { .string($0.name) })),
        ])
    case .pinned(let from, let to), .archived(let from, let to), .trashed(let from, let to):
        return .object([field, ("from", .bool(from)), ("to", .bool(to))])
    case .property(_, let from, let to):
        return .object([
            field, ("from", from.map(JSONValue.string) ?? .null), ("to", to.map(JSONValue.string) ?? .null),
        ])
    }
}

func historyJSON(_ e: HistoryEntry) -> JSONValue {
    let r = e.revision
    var fields: [(String, JSONValue)] = [
        ("version", .uint(r.version)), ("position", .uint(r.position)), ("type", .string(r.storedType)),
        ("recordedAt", .string(RFC3339.format(micros: r.recordedAt))), ("actor", .string(r.metadata.actor)),
        ("changes", .array(e.changes.map(changeJSON))),
    ]
    if let at = claimedInstant(r.metadata, r.recordedAt) { fields.append(("writtenAt", .string(at))) }
    if let from = e.restoredFrom { fields.append(("restoredFrom", .uint(from))) }
    fields.append(("summary", .string(e.summary)))
    return .object(fields)
}

/// The instant the writing device claims for an event (RFC 3339), when it differs from the one
/// recorded: a shared log records every event at its own instant. Only shown, never ordered by.
func claimedInstant(_ metadata: EventMetadata, _ recordedAt: Int64) -> String? {
    guard let at = metadata.writtenAt, at != recordedAt else { return nil }
    return RFC3339.format(micros: at)
}

/// The device's claim as the history table shows it: only a minute or more from the recorded
/// instant. A sync records each event it pushes seconds after its device wrote it, and that delay
/// at the end of every line said nothing (before 2026-12-06); `--json` keeps every claim that
/// differs (``claimedInstant(_:_:)``).
func shownClaim(_ metadata: EventMetadata, _ recordedAt: Int64) -> String? {
    guard let at = metadata.writtenAt, abs(at - recordedAt) >= 60_000_000 else { return nil }
    return RFC3339.format(micros: at)
}

/// An RFC 3339 instant without a fraction of zeros, for reading.
func wholeSeconds(_ instant: String) -> String {
    instant.hasSuffix(".000000Z") ? instant.dropLast(8) + "Z" : instant
}

func hunkJSON(_ h: DiffHunk) -> JSONValue {
    .object([
        ("oldStart", .int(h.oldStart)), ("oldCount", .int(h.oldCount)), ("newStart", .int(h.newStart)),
        ("newCount", .int(h.newCount)),
        (
            "lines",
            .array(
                h.lines.map { l in
                    .object([
                        ("kind", .string(l.kind.rawValue)), ("text", .string(l.text)), ("newline", .bool(l.hasNewline)),
                    ])
                })
        ),
    ])
}

func logJSON(_ e: LogEntry) -> JSONValue {
    var fields: [(String, JSONValue)] = [
        ("position", .uint(e.position)), ("recordedAt", .string(RFC3339.format(micros: e.recordedAt))),
        ("actor", .string(e.metadata.actor)), ("type", .string(e.storedType)), ("stream", .string(e.stream)),
        ("version", .uint(e.version)),
    ]
    if let at = claimedInstant(e.metadata, e.recordedAt) { fields.append(("writtenAt", .string(at))) }
    switch e.subject {
    case .note(let h):
        fields.append(("note", .string(h.revision.note.id.uuidString)))
        fields.append(("changes", .array(h.changes.map(changeJSON))))
        if let from = h.restoredFrom { fields.append(("restoredFrom", .uint(from))) }
    case .entity(let kind, let id, let name, _):
        fields.append((kind.rawValue, .string(id.uuidString)))
        fields.append(("name", .string(name)))
    case .other:
        break
    }
    fields.append(("summary", .string(e.summary)))
    return .object(fields)
}
