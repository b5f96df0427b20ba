import Basics
import EventStore
import Notes

let tagCommand = Command(
    "tag", abstract: "Tag a note (missing tags are created).", usage: ["tag ID TAG..."],
    discussion: "Tags nest with `/`: `work/acme` is below `work`. A tag the note has already changes nothing."
) { ctx in
    guard ctx.positionals.count >= 2 else { throw CLIError("missing TAG; usage: notes \(ctx.command.usage[0])") }
    let id = try ctx.noteID(ctx.positionals[0])
    let names = ctx.positionals.dropFirst().map(Context.tagName)
    // A new name typed here refuses the C1 controls too (before 2026-12-07 they were taken); an
    // existing tag's name holding one (brought by an import) is taken as `untag` takes it (before
    // 2026-12-07 it was refused too).
    let note = try ctx.notebook().tag(id, with: names, typed: true)
    try ctx.printChangedNote(note)
}

let untagCommand = Command(
    "untag", abstract: "Remove tags from a note.", usage: ["untag ID TAG..."],
    discussion: "Removes exactly the tags named (not those below them). A tag the note lacks changes nothing."
) { ctx in
    guard ctx.positionals.count >= 2 else { throw CLIError("missing TAG; usage: notes \(ctx.command.usage[0])") }
    let id = try ctx.noteID(ctx.positionals[0])
    let note = try ctx.notebook().untag(id, from: ctx.positionals.dropFirst().map(Context.tagName))
    try ctx.printChangedNote(note)
}

let tagsCommand = Command(
    "tags", abstract: "The tag tree with note counts, or rename and delete tags.",
    usage: ["tags [--all]", "tags rename OLD NEW", "tags delete NAME"],
    discussion: """
        Each tag shows the notes tagged with it and, in the total, those tagged with it or any tag below
        it (notes in the trash are not counted). A tag that no such note carries, itself or below it, is
        left out; `--all` lists it too. Renaming `work` to `job` renames `work/acme` to `job/acme`;
        deleting a tag deletes the tags below it, and untags their notes with an event each.
        """,
    options: [OptionSpec("all", "also the tags that no note carries (or only notes in the trash)")]
) { ctx in
    let args = ctx.positionals
    if args.first != nil, ctx.flag("all") {
        throw CLIError("--all is an option of the listing, not of tags \(args[0]); usage: notes \(ctx.usageForm)")
    }
    switch args.first {
    case nil:
        // A tag stays after its last note is untagged or trashed (a tag is an entity of its own,
        // renamed and deleted by name); listed, it is a row of zeros the user never asked for.
        // Before 2026-12-06 every such tag was listed.
        let every = try ctx.notebook().tagTree()
        let tree = ctx.flag("all") ? every : every.filter { $0.total > 0 }
        if ctx.json {
            ctx.printJSON(
                .array(
                    tree.map {
                        .object([
                            ("name", .string($0.name)), ("count", .int($0.count)), ("total", .int($0.total)),
                            // False for a parent that no tag is named after (`-` in the table).
                            ("tag", .bool($0.id != nil)),
                        ])
                    }))
        } else if tree.isEmpty {
            let hidden = every.filter { $0.id != nil }.count
            ctx.terminal.print(
                ctx.terminal.dim(
                    hidden == 0
                        ? "no tags"
                        : "no tag has a note; `notes tags --all` lists the \(hidden) tag\(hidden == 1 ? "" : "s") without one"
                ))
        } else {
            let t = ctx.terminal
            ctx.printTable(
                tree.map { node in
                    let indent = String(repeating: "  ", count: node.depth)
                    let own = node.id == nil ? "-" : String(node.count)
                    return [indent + node.leaf, own, String(node.total)]
                }, styles: [{ $0 }, t.dim, t.dim])
        }
    case "rename":
        try ctx.expectPositionals(3...3)
        do { _ = try Notebook.validCommandTagName(Context.tagName(args[2])) } catch { throw CLIError.from(error) }
        let renamed = try ctx.notebook().renameTag(Context.tagName(args[1]), to: Context.tagName(args[2]))
        if ctx.json {
            ctx.printJSON(.array(renamed.map { .object([("name", .string($0.name)), ("count", .int($0.count))]) }))
        } else if renamed.isEmpty {
            ctx.terminal.print("\(args[2]) already has that name; nothing changed")
        } else {
            let n = renamed.count
            ctx.terminal.print("renamed \(n) tag\(n == 1 ? "" : "s"): " + summarizedNames(renamed.map(\.name)))
        }
    case "delete":
        try ctx.expectPositionals(2...2)
        let d = try ctx.notebook().deleteTag(Context.tagName(args[1]))
        if ctx.json {
            ctx.printJSON(
                .object([("deleted", .array(d.tags.map(JSONValue.string))), ("untagged", .int(d.notes))]))
        } else {
            let n = d.tags.count
            ctx.terminal.print(
                "deleted \(n) tag\(n == 1 ? "" : "s") (\(summarizedNames(d.tags))); \(d.notes) note\(d.notes == 1 ? "" : "s") untagged"
            )
        }
    case let other?:
        let hint = didYouMean(other, among: ["rename", "delete"])
        throw CLIError("unknown tags action \"\(other)\"\(hint); use rename or delete")
    }
}

extension Context {
    /// What a command that changed one note prints: its id and version, or its JSON.
    func printChangedNote(_ note: Note) throws {
        if json {
            try printJSON(noteJSON(note))
        } else {
            terminal.print("\(shortID(note.id)) v\(note.version)")
        }
    }
}

/// The first 10 of `names`, then how many others: a rename or deletion of a subtree of
/// thousands of tags printed each on the one line (before trial-s31). `--json` lists them all.
func summarizedNames(_ names: [String]) -> String {
    let shown = names.prefix(10).joined(separator: ", ")
    return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
}
