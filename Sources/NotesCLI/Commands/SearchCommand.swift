import Basics
import EventStore
import Notes
import SearchEngine

let searchCommand = Command(
    "search", abstract: "Find notes by words in their title and body, best first.",
    usage: [
        "search QUERY [--category NAME | --uncategorized] [--tag TAG]... [--pinned] [--archived | --trashed | --all] [--limit N] [--as-of INSTANT]"
    ],
    discussion: """
        Terms are ANDed; "exact phrase", prefix*, -excluded and title:word are understood, and
        tag:NAME (or tag:"two words") keeps notes with that tag or one below it, like --tag. Case and
        accents are ignored. Results are ranked by BM25 (title matches count more). See `notes help search`.
        """,
    options: listOptions + [
        OptionSpec("limit", short: "n", value: "N", "at most N results (default 20)"),
        OptionSpec("as-of", value: "INSTANT", "search the notebook as it was at that instant"),
    ],
    readsOnly: true
) { ctx in
    guard !ctx.positionals.isEmpty else { throw CLIError("missing QUERY; usage: notes \(ctx.command.usage[0])") }
    let (text, queryTags) = extractTagFilters(ctx.positionals.joined(separator: " "))
    let tagNames = ctx.values("tag") + queryTags
    if !tagNames.isEmpty, text.allSatisfy(\.isWhitespace) {
        let flags = tagNames.map { "--tag \($0.contains(" ") ? "\"\($0)\"" : $0)" }.joined(separator: " ")
        throw CLIError(
            "the search has only tag filters; add words to find, or list those notes with `notes list \(flags)`")
    }
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
    case .any, .tag: filter.category = .any
    case .uncategorized: filter.category = .uncategorized
    case .category(let id): filter.category = .id(id)
    }
    filter.pinnedOnly = list.pinnedOnly
    let limit = try ctx.integer("limit", min: 1) ?? 20
    let book = try ctx.notebook()
    let results: [Notebook.SearchResult]
    var past: NotebookState?
    if let asOf = ctx.value("as-of") {
        let state = try ctx.stateAsOf(ctx.instant(asOf))
        if let name = ctx.value("category") {
            guard let c = state.category(named: name) else {
                throw CLIError("no category was named \"\(name)\" at that time", code: .notFound)
            }
            filter.category = .id(c.id)
        }
        if !tagNames.isEmpty {
            var groups: [[Identifier]] = []
            for name in tagNames {
                let found = state.tags(within: name)
                guard !found.isEmpty else {
                    throw CLIError("no tag was named \"\(name)\" at that time", code: .notFound)
                }
                groups.append(found.map(\.id))
            }
            filter.only = Set(
                state.notes.values.filter { n in groups.allSatisfy { g in n.tags.contains(where: g.contains) } }.map(
                    \.id))
        }
        results = Notebook.search(query, filter: filter, limit: limit, in: state)
        past = state
    } else {
        if !tagNames.isEmpty {
            filter.only = try book.notes(taggedWithAll: tagNames.map { try book.tags(within: $0).map(\.id) })
        }
        results = try book.search(query, filter: filter, limit: limit)
    }
    func labels(_ n: Note) throws -> NoteLabels {
        if let past { return past.labels(of: n) }
        return try ctx.labels(n)
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
                        ("category", try labels(r.note).category.map(JSONValue.string) ?? .null),
                        ("tags", .array(try labels(r.note).tags.map(JSONValue.string))),
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
        let l = try labels(r.note)
        if let c = l.category { header += "  " + ctx.terminal.dim("[\(c)]") }
        if !l.tags.isEmpty { header += "  " + ctx.terminal.green(l.tags.map { "#" + $0 }.joined(separator: " ")) }
        ctx.terminal.print(header)
        let snippet = Snippet.make(title: r.note.title, body: r.note.body, query: query, highlight: highlight)
        ctx.terminal.print("  " + snippet)
    }
}

/// Takes the `tag:NAME` and `tag:"NAME WITH SPACES"` words out of a search text (outside
/// phrases, in any case), returning the rest and the names, in order.
func extractTagFilters(_ text: String) -> (rest: String, tags: [String]) {
    let chars = Array(text)
    var rest = ""
    var tags: [String] = []
    var i = 0
    var inPhrase = false
    while i < chars.count {
        let c = chars[i]
        let atWordStart = i == 0 || chars[i - 1].isWhitespace
        if !inPhrase, atWordStart, i + 4 <= chars.count, String(chars[i..<(i + 4)]).lowercased() == "tag:" {
            var j = i + 4
            var name = ""
            if j < chars.count, chars[j] == "\"" {
                j += 1
                while j < chars.count, chars[j] != "\"" {
                    name.append(chars[j])
                    j += 1
                }
                if j < chars.count { j += 1 }
            } else {
                while j < chars.count, !chars[j].isWhitespace {
                    name.append(chars[j])
                    j += 1
                }
            }
            if !name.isEmpty {
                tags.append(name)
                i = j
                continue
            }
        }
        if c == "\"" { inPhrase.toggle() }
        rest.append(c)
        i += 1
    }
    return (rest, tags)
}
