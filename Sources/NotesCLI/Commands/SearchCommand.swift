import Basics
import EventStore
import Notes
import SearchEngine

let searchCommand = Command(
    "search", abstract: "Find notes by words in their title and body, best first.",
    usage: [
        "search QUERY [--category NAME | --uncategorized] [--pinned] [--archived | --trashed | --all] [--limit N] [--as-of INSTANT]"
    ],
    discussion: """
        Terms are ANDed; "exact phrase", prefix*, -excluded and title:word are understood. Case and
        accents are ignored. Results are ranked by BM25 (title matches count more). See `notes help search`.
        """,
    options: listOptions + [
        OptionSpec("limit", short: "n", value: "N", "at most N results (default 20)"),
        OptionSpec("as-of", value: "INSTANT", "search the notebook as it was at that instant"),
    ],
    readsOnly: true
) { ctx in
    guard !ctx.positionals.isEmpty else { throw CLIError("missing QUERY; usage: notes \(ctx.command.usage[0])") }
    let text = ctx.positionals.joined(separator: " ")
    let query: SearchQuery
    do { query = try SearchQuery.parse(text) } catch { throw CLIError("bad query: \(error)") }
    let list = try ctx.listQuery()
    var filter = SearchFilter()
    switch list.status {
    case .active: filter.statuses = [.active]
    case .archived: filter.statuses = [.archived]
    case .trashed: filter.statuses = [.trashed]
    case .all: filter.statuses = Set(SearchDocument.Status.allCases)
    }
    switch list.scope {
    case .any: filter.category = .any
    case .uncategorized: filter.category = .uncategorized
    case .category(let id): filter.category = .id(id)
    }
    filter.pinnedOnly = list.pinnedOnly
    let limit = try ctx.integer("limit", min: 1) ?? 20
    let book = try ctx.notebook()
    let results: [Notebook.SearchResult]
    if let asOf = ctx.value("as-of") {
        let instant = try ctx.instant(asOf)
        if let name = ctx.value("category") {
            let state = try book.state(asOf: instant)
            guard let c = state.category(named: name) else {
                throw CLIError("no category was named \"\(name)\" at that time", code: .notFound)
            }
            filter.category = .id(c.id)
        }
        results = try book.search(query, filter: filter, limit: limit, asOf: instant)
    } else {
        results = try book.search(query, filter: filter, limit: limit)
    }
    if ctx.json {
        ctx.printJSON(
            .array(
                try results.map { r in
                    .object([
                        ("id", .string(r.note.id.uuidString)), ("title", .string(r.note.title)),
                        ("score", .double(r.score)),
                        (
                            "snippet",
                            .string(Snippet.make(title: r.note.title, body: r.note.body, query: query, highlight: nil))
                        ),
                        ("category", try ctx.categoryName(r.note.category).map(JSONValue.string) ?? .null),
                        ("updatedAt", .string(RFC3339.format(micros: r.note.updatedAt))),
                    ])
                }))
        return
    }
    if results.isEmpty {
        ctx.terminal.print(ctx.terminal.dim("no notes match"))
        return
    }
    let highlight: (open: String, close: String)? = ctx.terminal.colorAllowed ? ("\u{1B}[1;33m", "\u{1B}[0m") : nil
    for r in results {
        var header = ctx.terminal.bold(truncate(r.note.title, 70)) + "  " + ctx.terminal.cyan(shortID(r.note.id))
        if let c = try ctx.categoryName(r.note.category) { header += "  " + ctx.terminal.dim("[\(c)]") }
        ctx.terminal.print(header)
        let snippet = Snippet.make(title: r.note.title, body: r.note.body, query: query, highlight: highlight)
        ctx.terminal.print("  " + snippet)
    }
}
