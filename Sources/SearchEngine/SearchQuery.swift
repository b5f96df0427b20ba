public import Basics

/// A parsed search query: a tree of clauses joined by AND (side by side), OR, and exclusion.
///
/// The syntax (words are separated by white space):
/// - `word`: notes containing the word, in the title or the body.
/// - `"exact phrase"`: the words next to each other, in this order.
/// - `prefix*`: any word starting with `prefix`.
/// - `a b`, `a AND b`: both. `a OR b`, `a | b`: either (OR binds looser than AND, so
///   `a b OR c` is `(a b) OR c`). `(...)` groups.
/// - `-word`, `-"a phrase"`, `-prefix*`, `-(a OR b)`: notes that do not match it.
/// - `title:`, `body:` before a word, phrase, prefix or group: the match must be in that part.
///
/// Words are folded like the indexed text (`Résumé` matches `resume`). A word that the tokenizer
/// splits into several terms (`e-mail`, `東京`) is searched as a phrase. `OR` and `AND` are
/// operators only in capitals and outside quotes.
///
/// ```swift
/// let q = try SearchQuery.parse("title:budget (\"next year\" OR 2027) -draft plan*")
/// ```
public struct SearchQuery: Sendable, Equatable, CustomStringConvertible {
    /// How a clause matches.
    public enum Kind: Sendable, Hashable {
        case term
        case prefix
        case phrase
    }

    /// Where a clause must match.
    public enum Field: Sendable, Hashable {
        case any
        case title
        case body
    }

    /// One word, phrase or prefix of a query.
    public struct Clause: Sendable, Hashable {
        public var kind: Kind
        /// Folded terms (UTF-8): one for `.term`, two or more for `.phrase`; for `.prefix`, the
        /// prefix, then (once stemmed) the stems it also matches exactly (see `stemmed(_:)`).
        public var terms: [[UInt8]]
        /// The part of the note the match must be in.
        public var field: Field
        /// The clause is under an exclusion: notes matching it are left out.
        public var excluded: Bool
        /// A phrase the tokenizer made of one unquoted word (`e-mail`, `wind-tunnel`), not one
        /// the query quoted: a ranking by some of the query's words counts its words one by one.
        public var compound: Bool
        /// What the clause's score is multiplied by: 1 for the words a query gives, less for
        /// the near spellings a forgiving search adds for them (``ForgivingSearch``).
        public var boost: Double

        public init(
            kind: Kind, terms: [[UInt8]], field: Field = .any, excluded: Bool = false, compound: Bool = false,
            boost: Double = 1
        ) {
            self.kind = kind
            self.terms = terms
            self.field = field
            self.excluded = excluded
            self.compound = compound
            self.boost = boost
        }
    }

    /// The query's structure.
    public indirect enum Node: Sendable, Hashable {
        case clause(Clause)
        /// Every one of `all` matches and none of `excluded` does (`all` is never empty).
        case all([Node], excluded: [Node])
        /// At least one matches; the scores of those that do are summed.
        case any([Node])
    }

    /// The query tree.
    public let root: Node

    /// Every clause, group by group (in each, the words to find, then the excluded ones).
    public var clauses: [Clause] {
        var out: [Clause] = []
        func walk(_ n: Node) {
            switch n {
            case .clause(let c): out.append(c)
            case .all(let a, let e):
                a.forEach(walk)
                e.forEach(walk)
            case .any(let a): a.forEach(walk)
            }
        }
        walk(root)
        return out
    }

    /// Whether the query is only words, phrases and prefixes side by side (no OR, no group, no
    /// exclusion).
    public var isPlainWords: Bool {
        switch root {
        case .clause: return true
        case .all(let parts, let excluded):
            return excluded.isEmpty && parts.allSatisfy { if case .clause = $0 { return true } else { return false } }
        case .any: return false
        }
    }

    /// Whether the query has OR (alternatives, at any depth).
    public var hasAlternatives: Bool {
        func walk(_ n: Node) -> Bool {
            switch n {
            case .clause: return false
            case .all(let a, let e): return a.contains(where: walk) || e.contains(where: walk)
            case .any: return true
            }
        }
        return walk(root)
    }

    public init(root: Node) { self.root = root }

    /// The most clauses a query may have, and the most terms a phrase may have: more than a
    /// pasted paragraph has words.
    public static let maxClauses = 1_024
    /// The longest query, in UTF-8 bytes.
    public static let maxLength = 65_536

    /// Parses `text`. Throws a ``SearchQueryError`` that says what is wrong and where; never traps.
    public static func parse(_ text: String) throws(SearchQueryError) -> SearchQuery {
        guard text.utf8.count <= maxLength else { throw SearchQueryError(.tooLong) }
        var parser = QueryParser(Array(text.unicodeScalars))
        return SearchQuery(root: try parser.parseQuery())
    }

    /// The query as written or, when its syntax is broken the way a pasted sentence's is (an
    /// unclosed quote or parenthesis, an operator with nothing on one side, a stray `*` or `:`),
    /// the words it asks for side by side, and the error that the text as written gives. A word it
    /// excludes (`-word`) stays excluded; an excluded phrase or group (`-"a phrase`, `-(a group`)
    /// is left out rather than sought; `OR`, `AND`, `title:` and `body:` are dropped. A query that only excludes (a group
    /// that only excludes is read as its words), a misplaced `-`, limits (too long, too many
    /// words) and a text with no word to search for stay errors.
    ///
    /// ```swift
    /// let (q, why) = try SearchQuery.parseLeniently("wing (flutter -draft")  // q: wing flutter -draft
    /// ```
    public static func parseLeniently(_ text: String) throws(SearchQueryError) -> (
        query: SearchQuery, misread: SearchQueryError?
    ) {
        do {
            return (try parse(text), nil)
        } catch {
            switch error.reason {
            case .empty, .noSearchableWords, .tooManyTerms, .tooLong, .misplacedExclusion:
                throw error
            case .unterminatedQuote, .emptyPrefix, .emptyField, .unbalancedParenthesis, .danglingOperator,
                .conflictingFields, .tooDeep, .misplacedStar:
                break
            case .onlyExclusions, .groupOnlyExclusions:
                // A group that only excludes (`plan (-draft)`, pasted "(-O)"): its words' query
                // (`plan -draft`), when that has a word to find; a query that only excludes (the
                // guard below) or an alternative that does (`a OR -b`: "a, or anything but b")
                // stays an error, its words would mean something else.
                let words = text.unicodeScalars.split { $0.properties.isWhitespace || $0 == "(" || $0 == ")" }
                if text.contains("|") || words.contains(where: { String($0) == "OR" }) { throw error }
            }
            guard let words = try? parse(wordsOnly(text)) else { throw error }
            return (words, error)
        }
    }

    /// The words a text asks for: every character of the query syntax made a space, excluded
    /// plain words kept as exclusions, excluded phrases and groups left out (to their end, or
    /// the text's), and the operator words and field names dropped.
    static func wordsOnly(_ text: String) -> String {
        let s = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var atWordStart = true
        while i < s.count {
            let c = s[i]
            if atWordStart && c == "-" && i + 1 < s.count && !s[i + 1].properties.isWhitespace {
                // An exclusion: skip the word, the phrase or the group it excludes.
                i += 1
                if s[i] == "\"" {
                    i += 1
                    while i < s.count && s[i] != "\"" { i += 1 }
                    i += 1
                } else if s[i] == "(" {
                    var depth = 0
                    while i < s.count {
                        if s[i] == "(" { depth += 1 } else if s[i] == ")" { depth -= 1 }
                        i += 1
                        if depth == 0 { break }
                    }
                } else {
                    // A plain word stays excluded; one holding query syntax is left out.
                    let start = i
                    while i < s.count && !s[i].properties.isWhitespace && s[i] != "(" && s[i] != ")" { i += 1 }
                    let word = s[start..<i]
                    if !word.contains(where: { "\"|*:-".unicodeScalars.contains($0) }) {
                        out.append(" ")
                        out.append("-")
                        out.append(contentsOf: word)
                    }
                }
                out.append(" ")
                atWordStart = true
                continue
            }
            // A field name in any case, as the parser reads it (`Title:Body:ham` is `ham`).
            if atWordStart, let field = ["title:", "body:"].first(where: { QueryParser.holds($0, in: s, at: i) }) {
                i += field.unicodeScalars.count
                out.append(" ")
                continue
            }
            let syntax = c == "\"" || c == "(" || c == ")" || c == "|" || c == "*" || c == ":"
            out.append(syntax ? " " : c)
            atWordStart = syntax || c.properties.isWhitespace
            i += 1
        }
        let dropped: Set<Substring> = ["OR", "AND"]
        return String(out).split(whereSeparator: { $0.isWhitespace }).filter { !dropped.contains($0) }.joined(
            separator: " ")
    }

    /// The query in canonical form (folded terms; in each group the words to find, then the
    /// exclusions), e.g. `title:budget ("next year" OR x) -draft`.
    public var description: String { Self.describe(root, top: true) }

    private static func describe(_ n: Node, top: Bool) -> String {
        switch n {
        case .clause(let c):
            var s = ""
            switch c.field {
            case .any: break
            case .title: s += "title:"
            case .body: s += "body:"
            }
            let words = c.terms.map { String(decoding: $0, as: UTF8.self) }
            switch c.kind {
            case .term: s += words.joined()
            case .prefix: s += (words.first ?? "") + "*"
            case .phrase: s += "\"" + words.joined(separator: " ") + "\""
            }
            return s
        case .all(let parts, let excluded):
            let inner = (parts.map { describe($0, top: false) } + excluded.map { "-" + describe($0, top: false) })
                .joined(separator: " ")
            return top ? inner : "(" + inner + ")"
        case .any(let parts):
            let inner = parts.map { describe($0, top: false) }.joined(separator: " OR ")
            return top ? inner : "(" + inner + ")"
        }
    }
}

/// The recursive-descent parser of ``SearchQuery/parse(_:)``.
private struct QueryParser {
    let s: [Unicode.Scalar]
    var i = 0
    var clauseCount = 0
    /// Whether any word was met (to tell an empty query from one of punctuation only).
    var sawWord = false

    init(_ scalars: [Unicode.Scalar]) { s = scalars }

    static func isSpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace }
    static func isBreak(_ c: Unicode.Scalar) -> Bool { isSpace(c) || c == "\"" || c == "(" || c == ")" || c == "|" }

    mutating func skipSpace() { while i < s.count, Self.isSpace(s[i]) { i += 1 } }

    /// The operator word (`OR`, `AND`) at `i`, if one stands there alone.
    func keyword() -> String? {
        for word in ["OR", "AND"] {
            let w = Array(word.unicodeScalars)
            guard i + w.count <= s.count, Array(s[i..<(i + w.count)]) == w else { continue }
            if i + w.count == s.count || Self.isBreak(s[i + w.count]) { return word }
        }
        return nil
    }

    mutating func parseQuery() throws(SearchQueryError) -> SearchQuery.Node {
        let node = try parseOr(field: .any, depth: 0)
        skipSpace()
        if i < s.count {
            // Only a closing parenthesis stops the top level early.
            throw SearchQueryError(.unbalancedParenthesis, at: i)
        }
        guard let node else { throw SearchQueryError(sawWord ? .noSearchableWords : .empty) }
        return node
    }

    /// Alternatives separated by OR or `|`; nil when the part holds no searchable word.
    mutating func parseOr(field: SearchQuery.Field, depth: Int) throws(SearchQueryError) -> SearchQuery.Node? {
        guard depth <= 64 else { throw SearchQueryError(.tooDeep, at: i) }
        var alternatives: [SearchQuery.Node] = []
        while true {
            let before = alternatives.count
            if let part = try parseAnd(field: field, depth: depth) { alternatives.append(part) }
            skipSpace()
            guard i < s.count else { break }
            let op = i
            if s[i] == "|" {
                i += 1
            } else if keyword() == "OR" {
                i += 2
            } else {
                break
            }
            skipSpace()
            if alternatives.count == before || i >= s.count || s[i] == ")" || s[i] == "|" || keyword() == "OR" {
                throw SearchQueryError(.danglingOperator, at: op)
            }
        }
        switch alternatives.count {
        case 0: return nil
        case 1: return alternatives[0]
        default: return .any(alternatives)
        }
    }

    /// Items side by side (or joined by AND), some excluded.
    mutating func parseAnd(field: SearchQuery.Field, depth: Int) throws(SearchQueryError) -> SearchQuery.Node? {
        var parts: [SearchQuery.Node] = []
        var excluded: [SearchQuery.Node] = []
        let start = i
        var sawExclusion = false
        while true {
            skipSpace()
            guard i < s.count, s[i] != ")", s[i] != "|", keyword() != "OR" else { break }
            if keyword() == "AND" {
                let op = i
                i += 3
                skipSpace()
                if parts.isEmpty && excluded.isEmpty || i >= s.count || s[i] == ")" || s[i] == "|"
                    || keyword() != nil
                {
                    throw SearchQueryError(.danglingOperator, at: op)
                }
                continue
            }
            let itemStart = i
            var negated = false
            if s[i] == "-", i + 1 < s.count, !Self.isSpace(s[i + 1]) {
                negated = true
                i += 1
            }
            guard let item = try parseItem(field: field, excluded: negated, depth: depth, start: itemStart) else {
                continue
            }
            if negated {
                excluded.append(item)
                sawExclusion = true
            } else {
                parts.append(item)
            }
        }
        if parts.isEmpty {
            guard sawExclusion else { return nil }
            // A group that only excludes, `(-O)` pasted from a sentence: named, from its `(`.
            var open = start - 1
            while open >= 0 && Self.isSpace(s[open]) { open -= 1 }
            if open >= 0, s[open] == "(", i < s.count, s[i] == ")" {
                throw SearchQueryError(
                    .groupOnlyExclusions, at: open, part: String(String.UnicodeScalarView(s[open...i])))
            }
            throw SearchQueryError(.onlyExclusions, at: start < s.count ? start : nil)
        }
        if parts.count == 1 && excluded.isEmpty { return parts[0] }
        return .all(parts, excluded: excluded)
    }

    /// Whether the query holds `word` (ASCII, lower case) at `k`, in any case.
    func startsWith(_ word: String, at k: Int) -> Bool { Self.holds(word, in: s, at: k) }

    /// Whether `s` holds `word` (ASCII, lower case) at `k`, in any case.
    static func holds(_ word: String, in s: [Unicode.Scalar], at k: Int) -> Bool {
        let w = Array(word.unicodeScalars)
        return k + w.count <= s.count && (0..<w.count).allSatisfy { lower(s[k + $0]) == w[$0] }
    }

    /// A word, phrase, prefix or group, with its field; nil for a word of punctuation only.
    mutating func parseItem(field inherited: SearchQuery.Field, excluded: Bool, depth: Int, start: Int)
        throws(SearchQueryError) -> SearchQuery.Node?
    {
        var field = inherited
        for (name, f) in [("title:", SearchQuery.Field.title), ("body:", .body)] {
            guard startsWith(name, at: i) else { continue }
            i += name.unicodeScalars.count
            if i >= s.count || Self.isSpace(s[i]) || s[i] == ")" || s[i] == "|" {
                throw SearchQueryError(.emptyField, at: start)
            }
            if inherited != .any && inherited != f { throw SearchQueryError(.conflictingFields, at: start) }
            if s[i] == "-" { throw SearchQueryError(.misplacedExclusion, at: i) }
            // `title:body:word` asks for both at once.
            if startsWith(f == .title ? "body:" : "title:", at: i) { throw SearchQueryError(.conflictingFields, at: i) }
            field = f
            break
        }
        if s[i] == "(" {
            let open = i
            i += 1
            let inner = try parseOr(field: field, depth: depth + 1)
            skipSpace()
            guard i < s.count, s[i] == ")" else { throw SearchQueryError(.unbalancedParenthesis, at: open) }
            i += 1
            guard let inner else { return nil }
            return excluded ? Self.markExcluded(inner) : inner
        }
        sawWord = true
        var quoted = false
        var prefix = false
        var body = ""
        if s[i] == "\"" {
            quoted = true
            let open = i
            i += 1
            while i < s.count, s[i] != "\"" {
                body.unicodeScalars.append(s[i])
                i += 1
            }
            guard i < s.count else { throw SearchQueryError(.unterminatedQuote, at: open) }
            i += 1
        } else {
            let wordStart = i
            while i < s.count, !Self.isBreak(s[i]) {
                body.unicodeScalars.append(s[i])
                i += 1
            }
            while body.unicodeScalars.last == "*" {
                body.unicodeScalars.removeLast()
                prefix = true
            }
            // `*` ends a prefix; at a word's start or inside it, it means nothing the index can do.
            if let star = body.unicodeScalars.firstIndex(of: "*") {
                throw SearchQueryError(
                    .misplacedStar,
                    at: wordStart + body.unicodeScalars.distance(from: body.unicodeScalars.startIndex, to: star))
            }
        }
        let terms = Tokenizer.terms(body)
        if terms.isEmpty {
            if prefix { throw SearchQueryError(.emptyPrefix, at: start) }
            // A word of punctuation only ("&", "-", "...") searches for nothing; skip it.
            return nil
        }
        guard terms.count <= SearchQuery.maxClauses else { throw SearchQueryError(.tooManyTerms, at: start) }
        clauseCount += 1
        guard clauseCount <= SearchQuery.maxClauses else { throw SearchQueryError(.tooManyTerms, at: start) }
        if terms.count > 1 && prefix && !quoted {
            // A word the tokenizer splits, with a `*` (`type-chec*`, `Foundation.Bund*`): its
            // leading words as written and its last as a prefix, each required (a phrase cannot
            // end in a prefix). Before, the `*` was dropped and the phrase found nothing.
            clauseCount += 1
            guard clauseCount <= SearchQuery.maxClauses else { throw SearchQueryError(.tooManyTerms, at: start) }
            let leading = Array(terms.dropLast())
            return .all(
                [
                    .clause(
                        SearchQuery.Clause(
                            kind: leading.count > 1 ? .phrase : .term, terms: leading, field: field,
                            excluded: excluded, compound: leading.count > 1)),
                    .clause(
                        SearchQuery.Clause(
                            kind: .prefix, terms: [terms[terms.count - 1]], field: field, excluded: excluded,
                            compound: false)),
                ], excluded: [])
        }
        let kind: SearchQuery.Kind = terms.count > 1 ? .phrase : (prefix && !quoted ? .prefix : .term)
        return .clause(
            SearchQuery.Clause(
                kind: kind, terms: terms, field: field, excluded: excluded, compound: kind == .phrase && !quoted))
    }

    static func lower(_ c: Unicode.Scalar) -> Unicode.Scalar {
        c.value >= 0x41 && c.value <= 0x5A ? Unicode.Scalar(UInt8(truncatingIfNeeded: c.value | 0x20)) : c
    }

    /// Marks every clause under an exclusion (snippets leave them out).
    static func markExcluded(_ n: SearchQuery.Node) -> SearchQuery.Node {
        switch n {
        case .clause(var c):
            c.excluded = true
            return .clause(c)
        case .all(let a, let e): return .all(a.map(markExcluded), excluded: e.map(markExcluded))
        case .any(let a): return .any(a.map(markExcluded))
        }
    }
}

/// Why a query could not be parsed. The message says what to change.
public struct SearchQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case empty
        case noSearchableWords
        case onlyExclusions
        /// A group in parentheses that only excludes (`plan (-draft)`, a pasted "(-O)").
        case groupOnlyExclusions
        case unterminatedQuote
        case emptyPrefix
        case emptyField
        case tooManyTerms
        case tooLong
        case unbalancedParenthesis
        case danglingOperator
        case conflictingFields
        case misplacedExclusion
        case misplacedStar
        case tooDeep
    }

    public let reason: Reason
    /// The offset (in Unicode scalars) of the part of the query at fault, when there is one.
    public let offset: Int?
    /// The part of the query at fault as written, when the message names it (a group).
    public let part: String?

    public init(_ reason: Reason, at offset: Int? = nil, part: String? = nil) {
        self.reason = reason
        self.offset = offset
        self.part = part
    }

    public var description: String {
        let at = offset.map { " (at character \($0 + 1))" } ?? ""
        switch reason {
        case .empty: return "the search query is empty: give at least one word to search for"
        case .noSearchableWords:
            return "the search query has no words to search for (punctuation and symbols are ignored)"
        case .onlyExclusions:
            return "the search query only excludes words: add at least one word to find (e.g. `plan -draft`)" + at
        case .groupOnlyExclusions:
            let group = part.map { " " + Self.quoted($0) } ?? ""
            return "the group\(group) only excludes words: a group needs a word to find (e.g. `plan (notes -draft)`), "
                + "or write the exclusion outside parentheses (`plan -draft`)" + at
        case .unterminatedQuote: return "a phrase is missing its closing quote \"" + at
        case .emptyPrefix: return "`*` must follow at least one letter or digit (e.g. `plan*`)" + at
        case .emptyField:
            return "`title:` and `body:` must be followed by a word, a \"phrase\" or a (group) (e.g. `title:budget`)"
                + at
        case .unbalancedParenthesis:
            return "a parenthesis is not closed, or closes nothing: pair each ( with a )" + at
        case .danglingOperator:
            return "OR, | and AND must stand between two words or groups (e.g. `ham OR milk`)" + at
        case .conflictingFields: return "a `title:` group cannot hold `body:` words, nor the other way round" + at
        case .tooDeep: return "the search query nests parentheses too deeply: at most 64 levels" + at
        case .misplacedExclusion:
            return "put the - before the field to exclude: -title:word, not title:-word" + at
        case .misplacedStar:
            return "`*` ends a prefix (e.g. `plan*`); it cannot start a word or stand inside one" + at
        case .tooManyTerms:
            return "the search query has too many words: at most \(SearchQuery.maxClauses) are allowed" + at
        case .tooLong: return "the search query is too long: at most \(SearchQuery.maxLength) bytes are allowed"
        }
    }
}

extension SearchQueryError {
    /// `text` between double quotes, cut to 40 characters with an ellipsis.
    fileprivate static func quoted(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > 40 else { return "\"" + text + "\"" }
        return "\"" + String(String.UnicodeScalarView(scalars.prefix(39))) + "…\""
    }
}

/// Which notes a search may return. Filters need no note decode: the index keeps each note's
/// status, category, pinned flag and update time.
public struct SearchFilter: Sendable, Equatable {
    /// Which category a note must be in.
    public enum CategoryFilter: Sendable, Equatable, Hashable {
        case any
        case uncategorized
        case id(Identifier)
    }

    /// The statuses a note may have (default: active notes only).
    public var statuses: Set<SearchDocument.Status>
    public var category: CategoryFilter
    /// Only pinned notes.
    public var pinnedOnly: Bool
    /// Only these notes, when given (the notes of a tag, say).
    public var only: Set<Identifier>?

    public init(
        statuses: Set<SearchDocument.Status> = [.active], category: CategoryFilter = .any, pinnedOnly: Bool = false,
        only: Set<Identifier>? = nil
    ) {
        self.statuses = statuses
        self.category = category
        self.pinnedOnly = pinnedOnly
        self.only = only
    }

    /// Every note, whatever its status, category or pin.
    public static let everything = SearchFilter(statuses: Set(SearchDocument.Status.allCases))
}

/// One search result.
public struct SearchHit: Sendable, Equatable {
    public let id: Identifier
    /// The BM25 score (higher is better).
    public let score: Double

    public init(id: Identifier, score: Double) {
        self.id = id
        self.score = score
    }
}
