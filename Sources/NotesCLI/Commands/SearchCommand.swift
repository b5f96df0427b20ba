import Basics
import EventStore
import Notes
import SearchEngine

let searchCommand = Command(
    "search", abstract: "Find notes by words in their title and body, best first.",
    usage: [
        "search QUERY [--category NAME | --uncategorized] [--tag TAG]... [--pinned] [--archived | --trashed | --all] [--limit N] [--exact] [--as-of INSTANT]"
    ],
    discussion: """
        Words side by side must all match; OR (or |) gives alternatives and (...) groups them;
        "exact phrase", prefix*, -excluded and title:word / body:word are understood; tag:NAME and
        category:NAME (or tag:"two words") keep notes with that tag (or one below it) or category, like
        --tag and --category. Case and accents are ignored. Results are ranked by BM25 (title matches
        count more). When fewer notes than asked for match, notes with near spellings of the words and
        notes with some of the words follow, ranked together (more of the words as written first), and a
        line says so; --exact turns that off. Matched words are
        bold on a terminal; --json gives their offsets (Unicode scalars) in title and snippet. See
        `notes help search`.
        """,
    options: listOptions + [
        OptionSpec("limit", short: "n", value: "N", "at most N results (default 20)"),
        OptionSpec("exact", "only notes matching the query as written: no near spellings, no partial matches"),
        OptionSpec("as-of", value: "INSTANT", "search the notebook as it was at that instant"),
    ],
    readsOnly: true
) { ctx in
    guard !ctx.positionals.isEmpty else { throw CLIError("missing QUERY; usage: notes \(ctx.command.usage[0])") }
    let (text, queryTags, queryCategories, emptyField) = try extractFilterFields(
        ctx.positionals.joined(separator: " "), exact: ctx.flag("exact"))
    let tagNames = ctx.tagValues + queryTags.map(Context.tagName)
    var categoryName = ctx.value("category")
    if let named = queryCategories.last {
        let given = Set(queryCategories + (categoryName.map { [$0] } ?? []))
        guard given.count == 1 else {
            throw CLIError(
                "a note is in one category: give one category (category:\"\(named)\" or --category), not several")
        }
        guard !ctx.flag("uncategorized") else {
            throw CLIError("category:\(named) and --uncategorized ask for different notes: give one of them")
        }
        categoryName = named
    }
    if !queryCategories.isEmpty, tagNames.isEmpty, text.allSatisfy(\.isWhitespace) {
        throw CLIError(
            "the search has only a category filter; add words to find, or list those notes with `notes list --category \(shellQuoted(queryCategories[0]))`"
        )
    }
    if !tagNames.isEmpty, text.allSatisfy(\.isWhitespace) {
        // Quoted for a shell: before 2026-12-07 `--tag a(b` and `--category "a"b"`.
        let flags = tagNames.map { "--tag \(shellQuoted($0))" }.joined(separator: " ")
        throw CLIError(
            "the search has only tag filters; add words to find, or list those notes with `notes list \(flags)`")
    }
    // As written; without --exact, a text whose syntax is broken the way a pasted sentence's is
    // searches its words instead, and says so.
    let query: SearchQuery
    var misread: SearchQueryError?
    do {
        if ctx.flag("exact") {
            query = try SearchQuery.parse(text)
        } else {
            (query, misread) = try SearchQuery.parseLeniently(text)
        }
    } catch { throw CLIError("bad query: \(error)") }
    if let reason = misread.map({ "\($0)" }) ?? emptyField {
        let line = "searched the words of the query (\(query)): \(reason); --exact refuses it"
        if ctx.json { ctx.terminal.stderr(line + "\n") } else { ctx.terminal.print(ctx.terminal.dim(line)) }
    }
    let list = try ctx.listQuery(category: categoryName)
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
    let found: Notebook.ForgivingResults
    var past: NotebookState?
    if let asOf = ctx.value("as-of") {
        let state = try ctx.stateAsOf(ctx.instant(asOf, option: "--as-of"))
        if let name = categoryName {
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
        found = Notebook.search(
            query, filter: filter, limit: limit, exact: ctx.flag("exact"), in: state,
            language: book.projection.searchLanguage,
            temporaryFolder: ctx.temporaryFolder)
        past = state
    } else {
        if !tagNames.isEmpty {
            filter.only = try book.notes(taggedWithAll: tagNames.map { try book.tags(within: $0).map(\.id) })
        }
        found = try book.search(query, filter: filter, limit: limit, exact: ctx.flag("exact"))
    }
    let results = found.results.map(\.result)
    // Every category and tag name the results show, read at once (not one read each).
    if past == nil {
        try ctx.preloadLabels(categories: results.map(\.note.category), tags: results.map(\.note.tags))
    }
    func labels(_ n: Note) throws -> NoteLabels {
        if let past { return past.labels(of: n) }
        return try ctx.labels(n)
    }
    // The words to mark: the query's, and the near spellings the search used.
    let replacements = found.corrections.flatMap(\.replacements).map {
        SearchQuery.Node.clause(SearchQuery.Clause(kind: .term, terms: [Array($0.utf8)]))
    }
    let marked = replacements.isEmpty ? query : SearchQuery(root: .any([query.root] + replacements))
    // The language the index was built in (a read-only store keeps its own).
    let language = book.projection.searchLanguage
    // One stemmer and one reading of each query for the whole page.
    let exactSnippets = SnippetMaker(query: query, language: language)
    let markedSnippets = replacements.isEmpty ? exactSnippets : SnippetMaker(query: marked, language: language)
    // A note found with only some of the words: each word on its own, a phrase's too (`wind-tunnel`
    // is a phrase of two words; a note with `wind` alone showed its body's start, nothing marked).
    let someWords = query.clauses.filter { !$0.excluded }.flatMap { c in
        c.kind == .prefix
            ? [SearchQuery.Node.clause(c)]
            : c.terms.map { SearchQuery.Node.clause(SearchQuery.Clause(kind: .term, terms: [$0])) }
    }
    let someWordsSnippets = SnippetMaker(query: SearchQuery(root: .any(someWords + replacements)), language: language)
    func snippets(for match: ForgivingSearch.Match) -> SnippetMaker {
        switch match {
        case .exact: exactSnippets
        case .nearSpelling: markedSnippets
        case .someWords: someWordsSnippets
        }
    }
    func ranges(_ rs: [Range<Int>]) -> JSONValue {
        .array(rs.map { .array([.int(Int64($0.lowerBound)), .int(Int64($0.upperBound))]) })
    }
    if ctx.json {
        // What the search did beyond the query as written, on stderr (the JSON stays JSON), as a
        // misread query's line is: before 2026-12-07 it was not given at all, and a script saw
        // "near-spelling" but not which word stood for the one typed.
        for line in searchNotices(found, alternatives: query.hasAlternatives) { ctx.terminal.stderr(line + "\n") }
        ctx.printJSON(
            .array(
                try found.results.map { r, match in
                    let snippets = snippets(for: match)
                    let snippet = snippets.extract(title: r.note.title, body: r.note.body)
                    let inTitle = snippets.matches(inTitle: r.note.title)
                    return .object([
                        ("id", .string(r.note.id.uuidString)), ("title", .string(r.note.title)),
                        ("score", .double(r.score)), ("match", .string(match.rawValue)),
                        ("snippet", .string(snippet.text)),
                        ("matches", .object([("title", ranges(inTitle)), ("snippet", ranges(snippet.matches))])),
                        ("category", try labels(r.note).category.map(JSONValue.string) ?? .null),
                        ("tags", .array(try labels(r.note).tags.map(JSONValue.string))),
                        ("updatedAt", .string(RFC3339.format(micros: r.note.updatedAt))),
                    ])
                }))
        return
    }
    for line in searchNotices(found, alternatives: query.hasAlternatives) {
        ctx.terminal.print(ctx.terminal.dim(line))
    }
    if results.isEmpty {
        ctx.terminal.print(ctx.terminal.dim("no notes match"))
        return
    }
    // Bold on a terminal that takes color (never with NO_COLOR, --no-color or a pipe).
    let highlight: (open: String, close: String)? = ctx.terminal.colorAllowed ? ("\u{1B}[1m", "\u{1B}[22m") : nil
    for (r, match) in found.results {
        // The header and the snippet are one line each: a control character in them is shown
        // as its symbol, through a pipe too (as a table's cells are), never acted on.
        var header =
            ctx.terminal.bold(oneLine(truncate(r.note.title, 70))) + "  " + ctx.terminal.cyan(shortID(r.note.id))
        let l = try labels(r.note)
        let mark = statusSuffix(trashed: r.note.trashed, archived: r.note.archived)
        if !mark.isEmpty { header += ctx.terminal.dim(mark) }
        if let c = l.category { header += "  " + ctx.terminal.dim("[\(oneLine(c))]") }
        if !l.tags.isEmpty {
            header += "  " + ctx.terminal.green(oneLine(l.tags.map { "#" + $0 }.joined(separator: " ")))
        }
        ctx.terminal.print(header)
        // Cut from the body as stored (the words and their offsets are those `--json` gives),
        // then shown one symbol for one control character, so the offsets still mark the words.
        let snippet = snippets(for: match).extract(title: r.note.title, body: r.note.body)
        ctx.terminal.print("  " + shownSnippet(snippet.text, snippet.matches, highlight: highlight))
    }
}

/// A snippet as a line of the text output: on one line (``oneLine(_:)``), its `marks` (scalar
/// offsets into `text`, as `--json` gives them) wrapped in `highlight` where the same scalars
/// stand in the line. A direction control is shown as its escape, `<U+202E>`, eight scalars for
/// one: before 2026-12-07 the marks after one fell seven scalars early, on the wrong words.
func shownSnippet(_ text: String, _ marks: [Range<Int>], highlight: (open: String, close: String)?) -> String {
    let shown = oneLine(text)
    guard let highlight, !marks.isEmpty else { return shown }
    var at: [Int] = []
    var n = 0
    for c in text.unicodeScalars {
        at.append(n)
        n += controlPicture(c) == nil && isBidiControl(c) ? formatEscape(c).unicodeScalars.count : 1
    }
    at.append(n)
    let moved = marks.compactMap { m in
        m.upperBound < at.count ? at[m.lowerBound]..<at[m.upperBound] : nil
    }
    return Snippet.wrap(shown, moved, highlight)
}

/// The most lines ``searchNotices(_:alternatives:)`` gives to the words read as near spellings.
let maxWordLines = 5

/// What a forgiving search did beyond the query as written, one line each; `alternatives`: the
/// query has OR.
func searchNotices(_ found: Notebook.ForgivingResults, alternatives: Bool = false) -> [String] {
    func quoted(_ words: [String]) -> String {
        let shown = words.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ")
        return words.count > 3 ? shown + " and \(words.count - 3) more" : shown
    }
    var lines: [String] = []
    let used = Set(found.results.map(\.match))
    if used.contains(.nearSpelling) || used.contains(.someWords) {
        // Words found nowhere first: they are what the reader most likely mistyped. Then the
        // words few notes hold beside a far commoner near spelling, likely typos too (`seperate`,
        // `separate`), then the other words the notes hold. The near spellings of a held word
        // widen only the near-spelling step, so it is named only when a note shown was found
        // through one: before 2026-12-07 it was named over some-words notes alone
        // (`install theme colour --limit 1`) and over notes holding the word as written
        // (`recieve theme`).
        let known =
            used.contains(.nearSpelling)
            ? found.corrections.filter { !$0.unknown && !found.heldByEveryNearSpellingResult.contains($0.word) } : []
        var named: [(word: String, line: String)] = []
        for c in found.corrections.filter(\.unknown) + known.filter(\.rare) + known.filter({ !$0.rare }) {
            // A word in no note whose near spellings no note shown holds (`--limit` cut them):
            // only that it matched nothing.
            guard !c.replacements.isEmpty else {
                if c.unknown { named.append((c.word, "no exact match for \"\(c.word)\"")) }
                continue
            }
            // "Also" only beside a note shown that holds the word: before 2026-12-07 it was said
            // over near spellings alone (`async -async`, or a word only a trashed note holds).
            let also = found.heldBySomeResult.contains(c.word) ? "also showing" : "showing"
            named.append(
                (
                    c.word,
                    c.unknown
                        ? "no exact match for \"\(c.word)\"; showing \(quoted(c.replacements))"
                        : c.rare
                            ? "few notes have \"\(c.word)\"; \(also) \(quoted(c.replacements))"
                            : "\(also) near spellings of \"\(c.word)\": \(quoted(c.replacements))"
                ))
        }
        // A pasted paragraph with many such words: the first few, then one line for the rest
        // (before 2026-12-07 a line each, 197 of them above the results for one paragraph).
        if named.count > maxWordLines {
            let rest = named[(maxWordLines - 1)...].map(\.word)
            named = Array(named.prefix(maxWordLines - 1))
            named.append(("", "and \(rest.count) more words read as near spellings: \(quoted(rest))"))
        }
        lines += named.map(\.line)
    }
    if used.contains(.someWords) {
        // The near-spelling notes are ranked with the some-words ones, by the words they hold.
        let every = found.results.filter { $0.match == .exact }.count
        let near = used.contains(.nearSpelling) ? "a near spelling or " : ""
        if alternatives {
            // A query with OR: what matched is an alternative, not every word.
            lines.append(
                every == 0
                    ? "no note matches the query as written; showing notes with \(near)some of its words "
                        + "(--exact: only notes that match)"
                    : "\(every) note\(every == 1 ? " matches" : "s match") the query as written; "
                        + "then notes with \(near)some of its words")
        } else {
            lines.append(
                every == 0
                    ? "no note has every word; showing notes with \(near)some of them (--exact: only notes with all)"
                    : "\(every) note\(every == 1 ? " has" : "s have") every word; then notes with \(near)some of them")
        }
    }
    return lines
}

/// Takes the `tag:NAME`, `category:NAME` (and `tag:"NAME WITH SPACES"`) words out of a search
/// text (outside phrases, in any case), returning the rest and the names, in order. They filter
/// the whole query, so one inside parentheses is refused. One that names nothing is refused
/// with `exact`, else left as words, and `emptyField` says why.
func extractFilterFields(_ text: String, exact: Bool = true) throws(CLIError) -> (
    rest: String, tags: [String], categories: [String], emptyField: String?
) {
    var emptyField: String?
    let chars = Array(text)
    var rest = ""
    var tags: [String] = []
    var categories: [String] = []
    var i = 0
    var inPhrase = false
    var depth = 0
    /// The 1-based position of `chars[k]` in Unicode scalars, as the query parser counts.
    func position(_ k: Int) -> Int { chars[0..<k].reduce(1) { $0 + $1.unicodeScalars.count } }
    while i < chars.count {
        let c = chars[i]
        let atWordStart = i == 0 || chars[i - 1].isWhitespace || chars[i - 1] == "(" || chars[i - 1] == "|"
        var field: String?
        if !inPhrase, atWordStart {
            for name in ["tag:", "category:"]
            where i + name.count <= chars.count && String(chars[i..<(i + name.count)]).lowercased() == name {
                field = name
            }
            for name in ["-tag:", "-category:"]
            where i + name.count <= chars.count && String(chars[i..<(i + name.count)]).lowercased() == name {
                throw CLIError(
                    "\(name.dropFirst())NAME cannot be excluded yet (at character \(position(i))): search without it, or list the other notes with `notes list`"
                )
            }
        }
        if let field {
            var j = i + field.count
            var name = ""
            if j < chars.count, chars[j] == "\"" {
                let open = j
                j += 1
                while j < chars.count, chars[j] != "\"" {
                    name.append(chars[j])
                    j += 1
                }
                guard j < chars.count else {
                    if exact {
                        throw CLIError(
                            "bad query: a phrase is missing its closing quote \" (at character \(position(open)))")
                    }
                    // Forgiven as any unclosed quote is: its words are searched (the parser says
                    // so), the field's name is not.
                    rest += String(repeating: " ", count: field.unicodeScalars.count)
                    rest += String(chars[open...])
                    i = chars.count
                    continue
                }
                j += 1
            } else {
                while j < chars.count, !chars[j].isWhitespace, chars[j] != ")" {
                    name.append(chars[j])
                    j += 1
                }
            }
            // `tag:` or `tag:""` names nothing: refused with --exact, as `title:` alone is;
            // otherwise (a pasted sentence, "traversal category: ...") it is words to search.
            if Notebook.trim(name).isEmpty {
                let reason =
                    "`\(field)` must be followed by a name, e.g. \(field)work or \(field)\"two words\" "
                    + "(at character \(position(i)))"
                guard !exact else { throw CLIError("bad query: " + reason) }
                if emptyField == nil { emptyField = reason }
                rest += String(chars[i..<j])
                i = j
                continue
            }
            if depth > 0 {
                throw CLIError(
                    "\(field)\(name) filters the whole search: put it outside the parentheses (at character \(position(i)))"
                )
            }
            if field == "tag:" { tags.append(name) } else { categories.append(name) }
            // Spaces in its place keep the positions the parser reports those of the text.
            rest += String(repeating: " ", count: chars[i..<j].reduce(0) { $0 + $1.unicodeScalars.count })
            i = j
            continue
        }
        if c == "\"" { inPhrase.toggle() }
        if !inPhrase && c == "(" { depth += 1 }
        if !inPhrase && c == ")" { depth = max(0, depth - 1) }
        rest.append(c)
        i += 1
    }
    return (rest, tags, categories, emptyField)
}
