import Basics
import EventStore
import Notes

let categoriesCommand = Command(
    "categories", abstract: "List categories with their note counts, or add, rename and delete them.",
    usage: ["categories", "categories add NAME", "categories rename OLD NEW", "categories delete NAME"],
    discussion: "Deleting a category keeps its notes: each is uncategorized by an event of its own."
) { ctx in
    let args = ctx.positionals
    // A name the store cannot hold is refused before the store is opened: where there was no
    // store, a refused `categories add` made an empty one (before 2026-12-07).
    if args.first == "add" {
        try ctx.expectPositionals(2...2)
        do { _ = try Notebook.validCommandCategoryName(args[1]) } catch { throw CLIError.from(error) }
    }
    let book = try ctx.notebook()
    switch args.first {
    case nil:
        let cats = try book.categories()
        if ctx.json {
            ctx.printJSON(.array(cats.map { .object([("name", .string($0.name)), ("count", .int($0.count))]) }))
        } else if cats.isEmpty {
            ctx.terminal.print(ctx.terminal.dim("no categories"))
        } else {
            ctx.printTable(cats.map { [$0.name, String($0.count)] }, styles: [{ $0 }, ctx.terminal.dim])
        }
    case "add":
        let c = try book.addCategory(args[1])
        if ctx.json {
            ctx.printJSON(.object([("name", .string(c.name)), ("count", .int(c.count))]))
        } else {
            ctx.terminal.print("added \(c.name)")
        }
    case "rename":
        try ctx.expectPositionals(3...3)
        let before = try book.category(named: args[1]).name
        do { _ = try Notebook.validCommandCategoryName(args[2]) } catch { throw CLIError.from(error) }
        let c = try book.renameCategory(args[1], to: args[2])
        if ctx.json {
            ctx.printJSON(.object([("name", .string(c.name)), ("count", .int(c.count))]))
        } else if c.name == before {
            // The name it has (a rename appends nothing then), as `tags rename` says.
            ctx.terminal.print("\(c.name) already has that name; nothing changed")
        } else {
            ctx.terminal.print("renamed to \(c.name)")
        }
    case "delete":
        try ctx.expectPositionals(2...2)
        let n = try book.deleteCategory(args[1])
        if ctx.json {
            ctx.printJSON(.object([("deleted", .string(args[1])), ("uncategorized", .int(n))]))
        } else {
            ctx.terminal.print("deleted \(args[1]); \(n) note\(n == 1 ? "" : "s") uncategorized")
        }
    case let other?:
        let hint = didYouMean(other, among: ["add", "rename", "delete"])
        throw CLIError("unknown categories action \"\(other)\"\(hint); use add, rename or delete")
    }
}

extension Context {
    /// `3`, `v3` or `V3`; nil when the text is not a version.
    func parseVersion(_ text: String) throws(CLIError) -> UInt64? {
        let t = text.hasPrefix("v") || text.hasPrefix("V") ? String(text.dropFirst()) : text
        guard !t.isEmpty, t.allSatisfy(\.isASCII), t.allSatisfy(\.isNumber) else { return nil }
        guard let v = UInt64(t) else {
            throw CLIError(
                "no note has a version \(t) (past the largest number, \(UInt64.max)); `notes history ID` lists the versions",
                code: .notFound)
        }
        return v
    }

    /// The notebook as it was at `instant`, replayed in memory.
    func stateAsOf(_ instant: Int64) throws -> NotebookState {
        try notebook().state(asOf: instant)
    }

    /// `query` with its --category and --tag filters naming categories and tags as they were
    /// called in `state`.
    func pastScope(_ query: ListQuery, in state: NotebookState) throws -> ListQuery {
        var q = query
        if let name = value("category") {
            guard let c = state.category(named: name) else {
                throw CLIError("no category was named \"\(name)\" at that time", code: .notFound)
            }
            q.scope = .category(c.id)
        }
        q.tags = try tagValues.map { name in
            let found = state.tags(within: name)
            guard !found.isEmpty else { throw CLIError("no tag was named \"\(name)\" at that time", code: .notFound) }
            return found.map(\.id)
        }
        return q
    }
}
