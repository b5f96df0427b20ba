public import Basics

/// A parsed search query: clauses that must all match (AND), some of them excluded.
///
/// The syntax, word by word (words are separated by white space):
/// - `word`: notes containing the word, in the title or the body.
/// - `"exact phrase"`: the words next to each other, in this order.
/// - `prefix*`: any word starting with `prefix`.
/// - `-word`, `-"a phrase"`, `-prefix*`: notes that do not match it.
/// - `title:word`, `title:"a phrase"`, `title:prefix*`: the match must be in the title.
///
/// Words are folded like the indexed text (`Résumé` matches `resume`). A word that the tokenizer
/// splits into several terms (`e-mail`, `東京`) is searched as a phrase.
///
/// ```swift
/// let q = try SearchQuery.parse("title:budget \"next year\" -draft plan*")
/// ```
public struct SearchQuery: Sendable, Equatable, CustomStringConvertible {
    /// How a clause matches.
    public enum Kind: Sendable, Equatable {
        case term
        case prefix
        case phrase
    }

    /// One part of a query.
    public struct Clause: Sendable, Equatable {
        public var kind: Kind
        /// Folded terms (UTF-8): one for `.term` and `.prefix`, two or more for `.phrase`.
        public var terms: [[UInt8]]
        /// The match must be in the title.
        public var titleOnly: Bool
        /// Notes matching this clause are left out.
        public var excluded: Bool
    }

    /// The clauses in query order (scores are summed in this order).
    public let clauses: [Clause]

    /// The most clauses a query may have, and the most terms a phrase may have.
    public static let maxClauses = 32
    /// The longest query, in UTF-8 bytes.
    public static let maxLength = 4096

    /// Parses `text`. Throws a ``SearchQueryError`` that says what is wrong; never traps.
    public static func parse(_ text: String) throws(SearchQueryError) -> SearchQuery {
        guard text.utf8.count <= maxLength else { throw SearchQueryError(.tooLong) }
        let scalars = Array(text.unicodeScalars)
        var clauses: [Clause] = []
        var sawWord = false
        var i = 0

        func isSpace(_ s: Unicode.Scalar) -> Bool { s.properties.isWhitespace }
        func lower(_ s: Unicode.Scalar) -> Unicode.Scalar {
            s.value >= 0x41 && s.value <= 0x5A ? Unicode.Scalar(UInt8(truncatingIfNeeded: s.value | 0x20)) : s
        }

        while i < scalars.count {
            if isSpace(scalars[i]) {
                i += 1
                continue
            }
            let itemStart = i
            sawWord = true
            var excluded = false
            var titleOnly = false
            if scalars[i] == "-" {
                excluded = true
                i += 1
            }
            let field: [Unicode.Scalar] = ["t", "i", "t", "l", "e", ":"]
            if i + field.count <= scalars.count, (0..<field.count).allSatisfy({ lower(scalars[i + $0]) == field[$0] }) {
                titleOnly = true
                i += field.count
                if i >= scalars.count || isSpace(scalars[i]) { throw SearchQueryError(.emptyField, at: itemStart) }
            }
            var quoted = false
            var prefix = false
            var body = ""
            if i < scalars.count, scalars[i] == "\"" {
                quoted = true
                i += 1
                let open = i - 1
                while i < scalars.count, scalars[i] != "\"" {
                    body.unicodeScalars.append(scalars[i])
                    i += 1
                }
                guard i < scalars.count else { throw SearchQueryError(.unterminatedQuote, at: open) }
                i += 1
            } else {
                while i < scalars.count, !isSpace(scalars[i]), scalars[i] != "\"" {
                    body.unicodeScalars.append(scalars[i])
                    i += 1
                }
                while body.unicodeScalars.last == "*" {
                    body.unicodeScalars.removeLast()
                    prefix = true
                }
            }
            let terms = Tokenizer.terms(body)
            if terms.isEmpty {
                if prefix { throw SearchQueryError(.emptyPrefix, at: itemStart) }
                // A word of punctuation only ("&", "-", "...") searches for nothing; skip it.
                continue
            }
            guard terms.count <= maxClauses else { throw SearchQueryError(.tooManyTerms, at: itemStart) }
            let kind: Kind = terms.count > 1 ? .phrase : (prefix && !quoted ? .prefix : .term)
            clauses.append(Clause(kind: kind, terms: terms, titleOnly: titleOnly, excluded: excluded))
            guard clauses.count <= maxClauses else { throw SearchQueryError(.tooManyTerms, at: itemStart) }
        }
        if clauses.isEmpty { throw SearchQueryError(sawWord ? .noSearchableWords : .empty) }
        if clauses.allSatisfy(\.excluded) { throw SearchQueryError(.onlyExclusions) }
        return SearchQuery(clauses: clauses)
    }

    /// The query in canonical form (folded terms), e.g. `title:budget "next year" -draft plan*`.
    public var description: String {
        clauses.map { c in
            var s = c.excluded ? "-" : ""
            if c.titleOnly { s += "title:" }
            let words = c.terms.map { String(decoding: $0, as: UTF8.self) }
            switch c.kind {
            case .term: s += words.joined()
            case .prefix: s += words.joined() + "*"
            case .phrase: s += "\"" + words.joined(separator: " ") + "\""
            }
            return s
        }.joined(separator: " ")
    }
}

/// Why a query could not be parsed. The message says what to change.
public struct SearchQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case empty
        case noSearchableWords
        case onlyExclusions
        case unterminatedQuote
        case emptyPrefix
        case emptyField
        case tooManyTerms
        case tooLong
    }

    public let reason: Reason
    /// The offset (in Unicode scalars) of the part of the query at fault, when there is one.
    public let offset: Int?

    public init(_ reason: Reason, at offset: Int? = nil) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        let at = offset.map { " (at character \($0 + 1))" } ?? ""
        switch reason {
        case .empty: return "the search query is empty: give at least one word to search for"
        case .noSearchableWords:
            return "the search query has no words to search for (punctuation and symbols are ignored)"
        case .onlyExclusions:
            return "the search query only excludes words: add at least one word to find (e.g. `plan -draft`)"
        case .unterminatedQuote: return "a phrase is missing its closing quote \"" + at
        case .emptyPrefix: return "`*` must follow at least one letter or digit (e.g. `plan*`)" + at
        case .emptyField: return "`title:` must be followed by a word or a \"phrase\" (e.g. `title:budget`)" + at
        case .tooManyTerms:
            return "the search query has too many words: at most \(SearchQuery.maxClauses) are allowed" + at
        case .tooLong: return "the search query is too long: at most \(SearchQuery.maxLength) bytes are allowed"
        }
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
