import Basics
import EventStore
import Notes

let linksCommand = Command(
    "links", abstract: "The wiki links of a note and where they lead, or every link that leads nowhere.",
    usage: ["links ID [--as-of INSTANT]", "links --missing [--as-of INSTANT]"],
    discussion: """
        In a body, `[[Title]]`, `[[Title|label]]`, `[[Title#section]]` and `[[8+ hex digits of an id]]` are
        links (not inside code). A title link leads to the note that has that title now (case and accents
        ignored); else to one with it as another name (an alias, or the name or path of the Markdown file
        it was imported from, with or without .md); else to the note that had it last, so a link follows
        its note through renames. Hex digits no id starts with are read as a name. A link or embed that
        no note's name matches and that names a file by its extension (`![[photo.png]]`, `[[report.pdf]]`:
        images, audio, video, PDF, canvas, office documents) is an attachment, not a missing note. A
        Markdown link to a note's file, `[text](other.md)`, `[text](sub/My%20Note.md#part)` or
        `[text](<my note.md>)`, is a link too (not a URL, an image or a file of another extension): its
        path is read from the folder of the file the note was imported from (from the vault's root for a
        note from no file) and leads to the note from that file (of the linking note's own vault first,
        when several vaults hold that path), else to the note the file name without .md names as
        `[[name]]` would. A wiki link by a path from the note's folder or the vault's root, `[[../Plan]]`
        or `[[/Projects/Plan]]`, is read as that Markdown link is. With --as-of, titles, names and bodies
        are those of that instant.
        """,
    options: [
        OptionSpec("missing", "every link of the notebook that leads to no note (attachments are not listed)"),
        OptionSpec("as-of", value: "INSTANT", "the links as they were at that instant"),
    ],
    readsOnly: true
) { ctx in
    let asOf = try ctx.value("as-of").map { (text) in try ctx.instant(text, option: "--as-of") }
    if ctx.flag("missing") {
        if let extra = ctx.positionals.first {
            throw CLIError("links --missing takes no note id (\"\(extra)\"); usage: notes \(ctx.command.usage[1])")
        }
        let missing = try ctx.notebook().missingLinks(asOf: asOf)
        if ctx.json {
            ctx.printJSON(
                .array(missing.map { m in .object(ctx.linkedNoteFields(m.source) + ctx.linkFields(m.link)) }))
        } else if missing.isEmpty {
            ctx.terminal.print(ctx.terminal.dim("no missing links"))
        } else {
            let t = ctx.terminal
            ctx.printTable(
                missing.map { [shortID($0.source.id), truncate($0.source.title, 40), $0.link.text] },
                styles: [t.cyan, { $0 }, t.yellow])
        }
        return
    }
    try ctx.expectPositionals(1...1)
    let id = try ctx.noteID(ctx.positionals[0])
    let links = try ctx.notebook().links(of: id, asOf: asOf)
    if ctx.json {
        ctx.printJSON(
            .array(links.map { l in .object(ctx.linkFields(l.link) + [("target", ctx.targetJSON(l.target))]) }))
        return
    }
    guard !links.isEmpty else {
        ctx.terminal.print(ctx.terminal.dim("no links"))
        return
    }
    let t = ctx.terminal
    ctx.printLinkTable(
        links.map { l in
            switch l.target {
            case .note(let n):
                return [truncate(l.link.label, 40), shortID(n.id), truncate(n.title, 50), ctx.statusMark(n)]
            case .missing: return [truncate(l.link.label, 40), "missing", "", ""]
            case .attachment: return [truncate(l.link.label, 40), "attachment", "", ""]
            case .ambiguous(let ids): return [truncate(l.link.label, 40), "ambiguous", "\(ids.count) notes", ""]
            }
        }, styles: [{ $0 }, t.cyan, { $0 }, t.red])
}

let backlinksCommand = Command(
    "backlinks", abstract: "The notes that link to a note, each with the line that links.",
    usage: ["backlinks ID [--as-of INSTANT]"],
    discussion: """
        A link written with a title the note had before a rename still counts. With --as-of, the links and
        titles are those of that instant.
        """,
    options: [OptionSpec("as-of", value: "INSTANT", "the backlinks as they were at that instant")],
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...1)
    let asOf = try ctx.value("as-of").map { (text) in try ctx.instant(text, option: "--as-of") }
    let id = try ctx.noteID(ctx.positionals[0])
    let backlinks = try ctx.notebook().backlinks(of: id, asOf: asOf)
    if ctx.json {
        ctx.printJSON(
            .array(
                backlinks.map { b in
                    .object(ctx.linkedNoteFields(b.source) + ctx.linkFields(b.link) + [("lineText", .string(b.line))])
                }))
    } else if backlinks.isEmpty {
        ctx.terminal.print(ctx.terminal.dim("no backlinks"))
    } else {
        let t = ctx.terminal
        ctx.printLinkTable(
            backlinks.map { b in
                [
                    shortID(b.source.id), truncate(b.source.title, 40), ctx.statusMark(b.source),
                    "\(b.link.line + 1): " + truncate(Notebook.trim(b.line), 80),
                ]
            }, styles: [t.cyan, { $0 }, t.red, t.dim])
    }
}

extension Context {
    /// A table without the columns that are empty on every row (the status of active notes).
    func printLinkTable(_ rows: [[String]], styles: [(String) -> String]) {
        let columns = rows.first.map { $0.indices.filter { c in rows.contains { !$0[c].isEmpty } } } ?? []
        printTable(rows.map { r in columns.map { r[$0] } }, styles: columns.map { styles[$0] })
    }

    func linkFields(_ link: WikiLink) -> [(String, JSONValue)] {
        [("link", .string(link.text)), ("label", .string(link.label)), ("line", .int(link.line + 1))]
    }

    func linkedNoteFields(_ n: LinkedNote) -> [(String, JSONValue)] {
        [("id", .string(n.id.uuidString)), ("title", .string(n.title)), ("status", .string(n.status.word))]
    }

    func targetJSON(_ target: LinkTarget) -> JSONValue {
        switch target {
        case .note(let n): return .object([("resolved", .bool(true))] + linkedNoteFields(n))
        case .missing: return .object([("resolved", .bool(false)), ("reason", .string("missing"))])
        case .attachment: return .object([("resolved", .bool(false)), ("reason", .string("attachment"))])
        case .ambiguous(let ids):
            return .object([
                ("resolved", .bool(false)), ("reason", .string("ambiguous")),
                ("candidates", .array(ids.map { .string($0.uuidString) })),
            ])
        }
    }

    /// `trashed` or `archived` beside a linked note, nothing for an active one.
    func statusMark(_ n: LinkedNote) -> String { n.status == .active ? "" : n.status.word }
}

extension Note.Status {
    fileprivate var word: String {
        switch self {
        case .active: return "active"
        case .archived: return "archived"
        case .trashed: return "trashed"
        }
    }
}

let aliasCommand = Command(
    "alias", abstract: "Give a note other names that wiki links lead to it by, or show them.",
    usage: ["alias ID [NAME...]", "alias ID --none"],
    discussion: """
        With names, they become the note's aliases (replacing those it had; the same name twice,
        ignoring case, is kept once); with --none the note has none; with neither, its aliases are
        printed, one a line ("no aliases" when it has none). A link `[[NAME]]` leads to the note
        when no note has NAME as its title. An import of a Markdown vault sets them from the front
        matter's `aliases`.
        """,
    options: [OptionSpec("none", "remove the note's aliases")]
) { ctx in
    let none = ctx.flag("none")
    try ctx.expectPositionals(none ? 1...1 : 1...Int.max)
    let id = try ctx.noteID(ctx.positionals[0])
    let book = try ctx.notebook()
    let note: Note
    if none || ctx.positionals.count > 1 {
        let names = none ? [] : Array(ctx.positionals.dropFirst())
        // Names typed here refuse DEL and the C1 controls too (before 2026-12-07 they were taken).
        do { _ = try Notebook.validCommandAliases(names) } catch { throw CLIError.from(error) }
        note = try book.setAliases(id, names)
        // Kept (an import or another device may hold such names), but said: no link reaches them.
        for warning in note.aliases.compactMap(WikiLink.unreachableAlias) { ctx.terminal.warn(warning) }
    } else {
        note = try book.note(id)
    }
    if ctx.json {
        ctx.printJSON(
            .object([
                ("id", .string(note.id.uuidString)), ("version", .uint(note.version)),
                ("aliases", .array(note.aliases.map(JSONValue.string))),
            ]))
    } else if none || ctx.positionals.count > 1 {
        ctx.terminal.print("\(shortID(note.id)) v\(note.version)")
    } else if note.aliases.isEmpty {
        ctx.terminal.print(ctx.terminal.dim("no aliases"))
    } else {
        for a in note.aliases { ctx.terminal.print(oneLine(a)) }
    }
}
