/// The search index's semantics over notes held in memory: for `search --as-of` (the notebook
/// as it was at an instant) and as the oracle the LMDB index is tested against.
///
/// It scores with the same functions as ``SearchIndex`` (so scores are equal bit for bit) but
/// evaluates each query by brute force over every note, which keeps it simple enough to trust.
public struct InMemorySearchIndex: Sendable {
    struct Document: Sendable {
        let record: DocRecord
        /// Sorted by term bytes.
        let entries: [AnalyzedNote.Entry]
        let index: [[UInt8]: Int]
    }

    let documents: [Document]
    let df: [[UInt8]: UInt64]
    let collection: BM25.Collection
    /// The language whose stems are indexed.
    public let language: SearchLanguage

    public init(documents given: some Sequence<SearchDocument>, language: SearchLanguage = .none) {
        self.language = language
        let stemmer = language.makeStemmer()
        var documents: [Document] = []
        var df: [[UInt8]: UInt64] = [:]
        var total: UInt64 = 0
        for note in given {
            let a = AnalyzedNote(note, stemmer: stemmer)
            var index: [[UInt8]: Int] = [:]
            for (i, e) in a.entries.enumerated() {
                index[e.term] = i
                df[e.term, default: 0] += 1
            }
            documents.append(Document(record: DocRecord(note, length: a.length), entries: a.entries, index: index))
            total &+= UInt64(a.length)
        }
        self.documents = documents
        self.df = df
        self.collection = BM25.Collection(documents: UInt64(documents.count), totalLength: total)
    }

    /// Top-`limit` notes matching `query` among those passing `filter`, best first.
    public func search(_ query: SearchQuery, filter: SearchFilter, limit: Int) -> [SearchHit] {
        search(stemmed: query.stemmed(language), filter: filter, limit: limit)
    }

    /// ``search(_:filter:limit:)`` of a query whose words are stems already.
    func search(stemmed query: SearchQuery, filter: SearchFilter, limit: Int) -> [SearchHit] {
        guard limit > 0 else { return [] }
        let compiled = CompiledFilter(filter)
        var scorers: [[UInt8]: BM25.TermScorer] = [:]
        func scorer(_ term: [UInt8]) -> BM25.TermScorer {
            if let s = scorers[term] { return s }
            let s = collection.scorer(df: df[term] ?? 0)
            scorers[term] = s
            return s
        }
        var matches: [RankedNote] = []
        for doc in documents where compiled.accepts(doc.record) {
            if let score = evaluate(query.root, doc, scorer) {
                matches.append(RankedNote(score: score, updatedAt: doc.record.updatedAt, id: doc.record.id))
            }
        }
        matches.sort { $0.isBetter(than: $1) }
        return matches.prefix(limit).map { SearchHit(id: $0.id, score: $0.score) }
    }

    /// The node's score in `doc` (summed in query order, as the stored index sums), or nil when
    /// it does not match.
    private func evaluate(
        _ node: SearchQuery.Node, _ doc: Document, _ scorer: ([UInt8]) -> BM25.TermScorer
    ) -> Double? {
        switch node {
        case .clause(let c):
            return evaluate(c, doc, scorer)
        case .all(let parts, let excluded):
            var score = 0.0
            for p in parts {
                guard let s = evaluate(p, doc, scorer) else { return nil }
                score += s
            }
            for e in excluded where evaluate(e, doc, scorer) != nil { return nil }
            return score
        case .any(let parts):
            var score = 0.0
            var matched = false
            for p in parts {
                if let s = evaluate(p, doc, scorer) {
                    score += s
                    matched = true
                }
            }
            return matched ? score : nil
        }
    }

    /// The clause's score in `doc`, or nil when it does not match.
    private func evaluate(
        _ clause: SearchQuery.Clause, _ doc: Document, _ scorer: ([UInt8]) -> BM25.TermScorer
    ) -> Double? {
        func termScore(_ e: AnalyzedNote.Entry) -> Double {
            // A boosted clause's scorer is made as the stored index makes it (the same products).
            let s = clause.boost == 1 ? scorer(e.term) : collection.scorer(df: df[e.term] ?? 0, boost: clause.boost)
            return s.score(title: e.titleTF, body: e.bodyTF, length: doc.record.length)
        }
        switch clause.kind {
        case .term:
            guard let t = clause.terms.first, let i = doc.index[t] else { return nil }
            let e = doc.entries[i]
            guard Self.inField(e, clause.field) else { return nil }
            return termScore(e)
        case .prefix:
            guard let prefix = clause.terms.first else { return nil }
            var score = 0.0
            var any = false
            // The stems after the prefix are matched whole (see `SearchQuery.stemmed(_:)`).
            for e in doc.entries
            where (e.term.starts(with: prefix) || clause.terms.dropFirst().contains(e.term))
                && Self.inField(e, clause.field)
            {
                score += termScore(e)
                any = true
            }
            return any ? score : nil
        case .phrase:
            var parts: [AnalyzedNote.Entry] = []
            for t in clause.terms {
                guard let i = doc.index[t] else { return nil }
                parts.append(doc.entries[i])
            }
            guard let first = parts.first else { return nil }
            let starts: [UInt32]
            switch clause.field {
            case .any: starts = first.positions
            case .title: starts = Array(first.positions.prefix(Int(first.titleTF)))
            case .body: starts = Array(first.positions.dropFirst(Int(first.titleTF)))
            }
            let found = starts.contains { p in
                parts.indices.allSatisfy { k in
                    let (want, overflow) = p.addingReportingOverflow(UInt32(k))
                    return !overflow && parts[k].positions.contains(want)
                }
            }
            guard found else { return nil }
            var score = 0.0
            for e in parts { score += termScore(e) }
            return score
        }
    }

    private static func inField(_ e: AnalyzedNote.Entry, _ field: SearchQuery.Field) -> Bool {
        switch field {
        case .any: return true
        case .title: return e.titleTF > 0
        case .body: return e.bodyTF > 0
        }
    }
}
