import Dispatch
import EventStore
import Glibc
import LMDB
public import SearchEngine

extension SearchDocument {
    /// What the search engine indexes of a note: its other names (aliases) are words of its
    /// title, one line each after the title (before 2026-12-07 a search found no note by an
    /// alias, though a link did), a phrase spanning none (``SearchIndex/version`` `search-6`).
    /// An alias that is the title but for case is left out: its words counted twice, ranking the
    /// note above the same note without it.
    init(_ note: Note) {
        var aliases = note.aliases
        if !aliases.isEmpty {
            // Lowercased only for a note with aliases (every append and rebuild makes documents).
            let title = note.title.lowercased()
            aliases.removeAll { $0.lowercased() == title }
        }
        self.init(
            id: note.id, title: aliases.isEmpty ? note.title : ([note.title] + aliases).joined(separator: "\n"),
            body: note.body, category: note.category, updatedAt: note.updatedAt, pinned: note.pinned,
            status: Status(note.status))
    }
}

extension SearchDocument.Status {
    init(_ status: Note.Status) {
        switch status {
        case .active: self = .active
        case .archived: self = .archived
        case .trashed: self = .trashed
        }
    }
}

extension SearchDatabases {
    /// The index's databases in a projection slot, holding the stems of `language`.
    init(_ p: ProjectionDatabases, language: SearchLanguage) {
        self.init(
            terms: p[SearchIndex.Names.terms], postings: p[SearchIndex.Names.postings], docs: p[SearchIndex.Names.docs],
            ids: p[SearchIndex.Names.ids], stats: p[SearchIndex.Names.stats])
        self.language = language
    }
}

extension InMemorySearchIndex {
    /// The index of `notes`, in memory (`search --as-of`, verification).
    init(notes: some Sequence<Note>, language: SearchLanguage) {
        self.init(documents: notes.lazy.map(SearchDocument.init), language: language)
    }
}

/// The notes projection's one door to the search engine: notes become search documents, and
/// projection slots the index's databases.
enum SearchBridge {
    /// The index's format, then what a note gives it (`documents-2`, 2026-12-07: its aliases in
    /// its title): a change of either rebuilds the index of a store at open.
    static let version = SearchIndex.version + "/documents-2"
    static let databaseSpecs = SearchIndex.databaseSpecs

    static func update(
        changes: [(old: Note?, new: Note)], in txn: borrowing Transaction, databases: ProjectionDatabases,
        language: SearchLanguage
    ) throws {
        try SearchIndex.update(
            changes: changes.map { (old: $0.old.map(SearchDocument.init), new: SearchDocument($0.new)) }, in: txn,
            databases: SearchDatabases(databases, language: language))
    }

    /// Takes `notes` (as the index holds them) out of the index.
    static func remove(
        _ notes: [Note], in txn: borrowing Transaction, databases: ProjectionDatabases, language: SearchLanguage
    ) throws {
        try SearchIndex.remove(
            notes.map(SearchDocument.init), in: txn, databases: SearchDatabases(databases, language: language))
    }

    /// Builds the index of `notes` on the other cores while `meanwhile` runs (the rebuild writes
    /// the other projections then), and writes it once both are done. Tokenizing is the largest
    /// CPU cost of a rebuild after the fold, and LMDB has a single writer, so this is where more
    /// cores help; the tokenizing takes one core fewer than the machine has (at least one), so
    /// that it does not compete with the writer. The thread that tokenized then encodes the
    /// posting blocks ahead of the writer (``EncodedTermBatches``), which only puts them.
    static func bulkLoad(
        _ notes: [Note], context: any ProjectionBulkWriter, databases: ProjectionDatabases, language: SearchLanguage,
        meanwhile: () throws -> Void
    ) throws {
        final class Preparation: @unchecked Sendable {
            // Written by the building thread before it signals `prepared`, read after the wait.
            var result: Result<PreparedSearchIndex, any Error>?
            var batches: EncodedTermBatches?
            let prepared = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
        }
        let preparation = Preparation()
        DispatchQueue.global(qos: .userInitiated).async {
            let parts = max(1, SearchIndex.defaultParts(for: notes.count) - 1)
            let result = Result {
                try SearchIndex.prepare(notes.map(SearchDocument.init), language: language, parts: parts)
            }
            preparation.result = result
            // Then the terms' postings, encoded ahead of the writer, which only puts them.
            let batches = (try? result.get()).map { EncodedTermBatches($0, encodedAhead: true, ahead: 4) }
            preparation.batches = batches
            preparation.prepared.signal()
            batches?.produce()
            preparation.done.signal()
        }
        let stop = {
            preparation.prepared.wait()
            preparation.batches?.cancel()
            preparation.done.wait()
        }
        do { try meanwhile() } catch {
            stop()
            throw error
        }
        preparation.prepared.wait()
        guard let result = preparation.result, let batches = preparation.batches else {
            preparation.done.wait()
            _ = try preparation.result?.get()
            throw SearchIndexError.inconsistent("the index was not built")
        }
        do {
            try SearchIndex.write(
                try result.get(), into: SearchDatabases(databases, language: language), batches: batches
            ) { body in
                try context.write(body)
            }
        } catch {
            batches.cancel()
            preparation.done.wait()
            throw error
        }
        preparation.done.wait()
    }

    /// Builds the index of `notes` on every core and writes it, the notes let go of once their
    /// documents are made (the documents share their texts): the path of a rebuild that builds
    /// its parts one after another, where nothing else runs meanwhile.
    static func bulkLoad(
        taking notes: consuming [Note], context: any ProjectionBulkWriter, databases: ProjectionDatabases,
        language: SearchLanguage
    ) throws {
        let documents = notes.map(SearchDocument.init)
        _ = consume notes
        let prepared = try SearchIndex.prepare(documents, language: language)
        try SearchIndex.write(prepared, into: SearchDatabases(databases, language: language)) { body in
            try context.write(body)
        }
    }

    /// Differences between the stored index and one built from the replayed notes.
    static func compare(
        with state: NotebookState, in txn: borrowing Transaction, databases: ProjectionDatabases,
        language: SearchLanguage
    ) throws -> [String] {
        let stored: SearchIndexDigest
        do {
            stored = try SearchIndex.digest(in: txn, databases: SearchDatabases(databases, language: language))
        } catch {
            return ["the search index is damaged: \(error)"]
        }
        let expected = SearchIndexDigest(
            documents: state.notes.values.lazy.map(SearchDocument.init), language: language)
        if stored == expected { return [] }
        var problems: [String] = []
        if stored.documents != expected.documents {
            problems.append("the search index holds \(stored.documents) documents, the log \(expected.documents)")
        }
        let differing = Set(stored.records.keys).union(expected.records.keys).filter {
            stored.records[$0] != expected.records[$0]
        }
        for id in differing.sorted().prefix(20) {
            problems.append("search record of note \(shortID(id)) differs from the log")
        }
        let terms = Set(stored.terms.keys).union(expected.terms.keys).filter { stored.terms[$0] != expected.terms[$0] }
        if !terms.isEmpty { problems.append("\(terms.count) search terms have postings that differ from the log") }
        if problems.isEmpty { problems.append("the search index differs from the log") }
        return problems
    }
}

extension Notebook {
    /// One search result: the note and its score.
    public struct SearchResult: Sendable {
        public var note: Note
        public var score: Double
    }

    /// The best `limit` notes for `query` among those passing `filter`.
    public func search(_ query: SearchQuery, filter: SearchFilter = SearchFilter(), limit: Int = 20) throws(NotesError)
        -> [SearchResult]
    {
        try read { txn, dbs in
            let hits = try SearchIndex.search(
                query, filter: filter, limit: limit, in: txn, SearchDatabases(dbs, language: projection.searchLanguage))
            return try hits.compactMap { hit in
                try projection.note(hit.id, in: txn, databases: dbs).map { SearchResult(note: $0, score: hit.score) }
            }
        }
    }

    /// What a forgiving search found: the results, each with how it matched, and the near
    /// spellings it used (see ``ForgivingSearch``).
    public struct ForgivingResults: Sendable {
        public var results: [(result: SearchResult, match: ForgivingSearch.Match)]
        public var corrections: [ForgivingSearch.Correction]
        /// The words of `corrections` that the notes hold (not ``ForgivingSearch/Correction/unknown``)
        /// and that every near-spelling result holds as written: no result was found through
        /// their near spellings, whatever the search widened (a note with every word once a typo
        /// is read right holds the others as written).
        public var heldByEveryNearSpellingResult: Set<String> = []
        /// The words of `corrections` that the notes hold and that some result holds as written:
        /// their near spellings are shown beside it. For one that no result holds (excluded too,
        /// `async -async`, or held only by notes the filter leaves out, such as those in the trash)
        /// they are shown instead of it.
        public var heldBySomeResult: Set<String> = []

        /// The near spellings as words of the notes found (the index matched their stems).
        init(
            results: [(result: SearchResult, match: ForgivingSearch.Match)],
            corrections: [ForgivingSearch.Correction], language: SearchLanguage, query: SearchQuery
        ) {
            self.results = results
            let shown = results.map(\.result.note)
            let near = results.filter { $0.match == .nearSpelling }.map(\.result.note)
            let held = corrections.filter { !$0.unknown }
            // Asked only when a near spelling found a note, the one case where either is said.
            if !near.isEmpty, !held.isEmpty {
                // Which of them hold each word, as the search reads it (stemmed, folded).
                let nearIndex = InMemorySearchIndex(notes: near, language: language)
                let shownIndex = InMemorySearchIndex(notes: shown, language: language)
                var every = SearchFilter()
                every.statuses = Set(SearchDocument.Status.allCases)
                for c in held {
                    // In each part of the note the query looks for it in: before 2026-12-07 a
                    // note holding `theme` in its body alone, found through `title:them` for
                    // `title:theme`, counted as holding it, and the near spelling went unnamed.
                    let term = Array(c.word.utf8)
                    let fields = Set(
                        query.clauses.filter { !$0.excluded && $0.terms.contains(term) }.map(\.field))
                    func holding(_ field: SearchQuery.Field, in index: InMemorySearchIndex, of count: Int) -> Int {
                        let clause = SearchQuery.Clause(kind: .term, terms: [term], field: field)
                        return index.search(SearchQuery(root: .clause(clause)), filter: every, limit: count).count
                    }
                    let places: Set<SearchQuery.Field> = fields.isEmpty ? [.any] : fields
                    if places.allSatisfy({ holding($0, in: nearIndex, of: near.count) == near.count }) {
                        heldByEveryNearSpellingResult.insert(c.word)
                    }
                    // Before 2026-12-07 near spellings were "also" shown over notes none of
                    // which held the word (`async -async`; a word only a trashed note holds).
                    if places.contains(where: { holding($0, in: shownIndex, of: 1) > 0 }) {
                        heldBySomeResult.insert(c.word)
                    }
                }
            }
            let texts = results.filter { $0.match != .exact }.flatMap { [$0.result.note.title, $0.result.note.body] }
            let words = Snippet.words(
                forStems: corrections.flatMap(\.replacements), in: texts, language: language)
            // Only the near spellings a note shown holds: before 2026-12-07 one that `--limit`
            // had cut was named too, as its stem (`showing "copi", "loopi"` over a note with
            // neither), a word no note holds.
            self.corrections = corrections.map { c in
                var named = c
                var seen: Set<String> = []
                named.replacements = c.replacements.compactMap { words[$0] }.filter { seen.insert($0).inserted }
                return named
            }
        }
    }

    /// The best `limit` notes for `query`; when fewer match it exactly (and not `exact`), notes
    /// matching near spellings of its words, then some of its words, ranked below them.
    public func search(_ query: SearchQuery, filter: SearchFilter = SearchFilter(), limit: Int = 20, exact: Bool)
        throws(NotesError) -> ForgivingResults
    {
        try read { txn, dbs in
            let outcome = try SearchIndex.forgivingSearch(
                query, filter: filter, limit: limit, exact: exact, in: txn,
                SearchDatabases(dbs, language: projection.searchLanguage))
            var results: [(result: SearchResult, match: ForgivingSearch.Match)] = []
            for (hit, match) in outcome.hits {
                if let note = try projection.note(hit.id, in: txn, databases: dbs) {
                    results.append((SearchResult(note: note, score: hit.score), match))
                }
            }
            return ForgivingResults(
                results: results, corrections: outcome.corrections, language: projection.searchLanguage, query: query)
        }
    }

    /// The forgiving search over a state replayed in memory (`search --as-of`), through an index
    /// of its notes built for it (``ScratchSearchIndex``; in memory when none can be made in
    /// the temporary folder).
    public static func search(
        _ query: SearchQuery, filter: SearchFilter, limit: Int, exact: Bool, in state: NotebookState,
        language: SearchLanguage, temporaryFolder: String = Notebook.temporaryFolder
    ) -> ForgivingResults {
        let documents = state.notes.values.map(SearchDocument.init)
        let outcome =
            (try? ScratchSearchIndex.with(documents, language: language, temporaryFolder: temporaryFolder) {
                txn, db in
                try SearchIndex.forgivingSearch(query, filter: filter, limit: limit, exact: exact, in: txn, db)
            })
            ?? InMemorySearchIndex(documents: documents, language: language).forgivingSearch(
                query, filter: filter, limit: limit, exact: exact)
        return ForgivingResults(
            results: outcome.hits.compactMap { hit, match in
                state.notes[hit.id].map { (SearchResult(note: $0, score: hit.score), match) }
            }, corrections: outcome.corrections, language: language, query: query)
    }

    /// The same search over the notebook as it was at `instant` (replayed in memory).
    public func search(
        _ query: SearchQuery, filter: SearchFilter = SearchFilter(), limit: Int = 20, asOf instant: Int64
    ) throws(NotesError) -> [SearchResult] {
        Self.search(
            query, filter: filter, limit: limit, in: try state(asOf: instant), language: projection.searchLanguage)
    }

    /// The same search over a state replayed in memory, its words stemmed in `language`: the
    /// forgiving one's exact step (``search(_:filter:limit:exact:in:language:temporaryFolder:)``).
    public static func search(
        _ query: SearchQuery, filter: SearchFilter, limit: Int, in state: NotebookState, language: SearchLanguage,
        temporaryFolder: String = Notebook.temporaryFolder
    ) -> [SearchResult] {
        search(
            query, filter: filter, limit: limit, exact: true, in: state, language: language,
            temporaryFolder: temporaryFolder
        ).results.map(\.result)
    }

    /// Where scratch indexes are made unless told: `TMPDIR`, else `/tmp`.
    public static var temporaryFolder: String {
        guard let value = getenv("TMPDIR").map({ String(cString: $0) }), !value.isEmpty else { return "/tmp" }
        return value
    }
}
