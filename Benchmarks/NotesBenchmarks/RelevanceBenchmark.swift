import Basics
import Glibc
import LMDB
import NotesWorkload
import SearchEngine

/// Relevance on a judged collection: nDCG@`limit` of ours, FTS5 and Tantivy, in one run.
///
/// ```
/// notes-bench search --collection DIR [--limit K] [--dir DIR] [--language NAME] [--per-query FILE]
/// ```
///
/// Each document is a note (its title the note's title, its text the body). Each question goes
/// to each engine as its user would type it:
/// - ours: `SearchQuery.parse` of the question and the forgiving search of `notes search`
///   (every word first, then near spellings, then any of the words by BM25; english stems, the
///   default `search-language`; `--language` picks another); a question the parser refuses
///   finds nothing, as `notes search` finds nothing;
/// - FTS5: `fts5(body, tokenize='porter unicode61')` over title and text, the question's words
///   joined by `OR`, `ORDER BY bm25`;
/// - Tantivy: one field over title and text with its `en_stem` tokenizer, the question given to
///   its query parser as typed (any word, BM25), its syntax characters made spaces.
func runRelevanceBenchmark(collectionPath: String, options: [String: String]) throws {
    let limit = Int(options["limit"] ?? "") ?? 10
    let dir = options["dir"] ?? "/tmp/notes-bench-relevance-\(getpid())"
    guard let language = SearchLanguage(options["language"] ?? "english") else {
        throw BenchmarkFailure("search: unknown --language \(options["language"] ?? "")")
    }
    #if DEBUG
        print("*** WARNING: a debug build; build with -c release for meaningful figures ***")
    #endif
    let collection = try JudgedCollection.read(directory: collectionPath)
    let judged = collection.judgments.values.reduce(0) { $0 + $1.count }
    print(
        "relevance: \(collectionPath): \(collection.documents.count) documents, \(collection.queries.count) queries "
            + "with a relevant document, \(judged) judgments; nDCG@\(limit)")

    mkdir(dir, 0o700)
    let lmdbDir = dir + "/lmdb"
    let sqlitePath = dir + "/fts5.db"
    removeTree(lmdbDir)
    unlink(sqlitePath)
    defer {
        removeTree(lmdbDir)
        unlink(sqlitePath)
        rmdir(dir)
    }

    // Ours.
    var envOptions = Environment.Options()
    envOptions.noSync = true
    envOptions.mapSize = 1 << 32
    mkdir(lmdbDir, 0o700)
    let env = try Environment(path: lmdbDir, options: envOptions)
    var storage = try SearchDatabases(environment: env, prefix: "")
    storage.language = language
    let ids = collection.documents.indices.map { WorkloadRandom.identifier(seed: 18, salt: 7, index: $0) }
    var ordinalOf: [Identifier: Int] = [:]
    for (n, id) in ids.enumerated() { ordinalOf[id] = n }
    let documents = collection.documents.enumerated().map { n, d in
        SearchDocument(id: ids[n], title: d.title, body: d.text, updatedAt: Int64(n))
    }
    let ourCPU = cpuTime()
    let ourBuild = try measure { try SearchIndex.bulkLoad(documents, into: storage, environment: env) }
    let ourBuildCPU = cpuTime() - ourCPU

    // The peers index title and text as one field.
    let texts = collection.documents.map { $0.title.isEmpty ? $0.text : $0.title + "\n" + $0.text }
    let peer = try FTS5Peer(path: sqlitePath)
    let peerCPU = cpuTime()
    let peerBuild = try measure { try peer.build(texts, tokenizer: "porter unicode61") }
    let peerBuildCPU = cpuTime() - peerCPU

    let questions = collection.queries.map(\.text)
    let tantivy = TantivyPeer.run(
        texts: texts, tokenizer: "en_stem", limit: limit, sets: [.init(name: "judged", mode: "or", queries: questions)],
        dir: dir)

    // Ours, as `notes search QUESTION --limit K` runs it.
    var refused = 0
    var misread = 0
    let parsed = questions.map { q -> SearchQuery? in
        do {
            let (query, why) = try SearchQuery.parseLeniently(q)
            if why != nil { misread += 1 }
            return query
        } catch {
            refused += 1
            return nil
        }
    }
    var ours: [[Int]] = []
    var ourTimes: [Double] = []
    var matches: [ForgivingSearch.Match: Int] = [:]
    for pass in 0..<2 {
        ours.removeAll(keepingCapacity: true)
        ourTimes.removeAll(keepingCapacity: true)
        for q in parsed {
            let start = monotonicSeconds()
            var hits: [(hit: SearchHit, match: ForgivingSearch.Match)] = []
            if let q {
                hits = try env.read { txn in
                    try SearchIndex.forgivingSearch(
                        q, filter: SearchFilter(), limit: limit, exact: false, in: txn, storage)
                }.hits
            }
            ourTimes.append(monotonicSeconds() - start)
            if pass == 1 {
                ours.append(hits.compactMap { ordinalOf[$0.hit.id] })
                for (_, m) in hits { matches[m, default: 0] += 1 }
            }
        }
    }

    // FTS5.
    var theirs: [[Int]] = []
    var theirTimes: [Double] = []
    let expressions = questions.map(FTS5Peer.anyWord)
    for pass in 0..<2 {
        theirs.removeAll(keepingCapacity: true)
        theirTimes.removeAll(keepingCapacity: true)
        for e in expressions {
            let start = monotonicSeconds()
            let rows = try e.map { try peer.search($0, limit: limit) } ?? []
            theirTimes.append(monotonicSeconds() - start)
            if pass == 1 { theirs.append(rows.map { Int($0) }) }
        }
    }

    /// Each question's nDCG (0 for a question with no ranking).
    func each(_ rankings: [[Int]]) -> [Double] {
        zip(collection.queries, rankings).map { q, ranking in
            Relevance.ndcg(
                ranking.map { collection.documents[$0].id }, gains: collection.judgments[q.id] ?? [:], depth: limit)
                ?? 0
        }
    }
    func ndcg(_ rankings: [[Int]]) -> Double {
        each(rankings).reduce(0, +) / Double(max(1, collection.queries.count))
    }
    func row(_ name: String, _ rankings: [[Int]], _ times: [Double]) -> String {
        let rate = Double(times.count) / times.reduce(0, +)
        return "| \(name) | \(format(ndcg(rankings), 3)) | \(format(rate, 0)) | \(ms(percentile(times, 0.5))) | "
            + "\(ms(percentile(times, 0.99))) |"
    }

    print(
        "build: ours \(format(ourBuild, 2)) s (CPU \(format(ourBuildCPU, 2)) s), FTS5 \(format(peerBuild, 2)) s "
            + "(CPU \(format(peerBuildCPU, 2)) s)" + tantivyBuild(tantivy))
    print("")
    print("| engine | nDCG@\(limit) | q/s | p50 | p99 |")
    print("|---|---|---|---|---|")
    print(row("ours (`notes search` as typed, \(language) stems)", ours, ourTimes))
    print(row("SQLite FTS5 (porter, words OR'ed)", theirs, theirTimes))
    // Tantivy's rankings as document numbers (none when it was skipped).
    var peerRankings: [[Int]] = []
    if case .ran(let run) = tantivy { peerRankings = (run.hits["judged"] ?? []).map { $0.map { Int($0) } } }
    switch tantivy {
    case .ran(let run):
        print(row("Tantivy \(run.version) (en_stem, question as typed)", peerRankings, run.times["judged"] ?? []))
    case .skipped(let reason):
        print("| Tantivy | skipped: \(reason) | | | |")
    }
    if let path = options["per-query"] {
        // Each question's nDCG per engine, to see where one ranks better than another.
        let (o, f, t) = (each(ours), each(theirs), each(peerRankings))
        // Then each engine's ranking, as document ids, a relevant one marked with its grade.
        func ids(_ ranking: [Int], _ q: JudgedCollection.Query) -> String {
            ranking.map { n in
                let id = collection.documents[n].id
                return (collection.judgments[q.id]?[id]).map { "\(id)*\($0)" } ?? id
            }.joined(separator: " ")
        }
        var out = "query\tours\tfts5\ttantivy\tquestion\tours ranking\tfts5 ranking\ttantivy ranking\n"
        for (i, q) in collection.queries.enumerated() {
            let tantivyCell = i < t.count ? format(t[i], 3) : ""
            let tantivyRanking = i < peerRankings.count ? ids(peerRankings[i], q) : ""
            out +=
                "\(q.id)\t\(format(o[i], 3))\t\(format(f[i], 3))\t\(tantivyCell)\t\(q.text)\t"
                + "\(ids(ours[i], q))\t\(ids(theirs[i], q))\t\(tantivyRanking)\n"
        }
        guard writeFile(path, out) else { throw BenchmarkFailure("search: cannot write \(path)") }
    }
    print("")
    let shown = [ForgivingSearch.Match.exact, .nearSpelling, .someWords].map { "\($0.rawValue) \(matches[$0] ?? 0)" }
    print(
        "ours: hits by how they matched: \(shown.joined(separator: ", ")); questions the parser refused: \(refused), "
            + "read as their words for broken syntax: \(misread). "
            + "Tantivy's times are taken inside Python around searcher.search alone (parsing before, ids after).")
}

func tantivyBuild(_ outcome: TantivyPeer.Outcome) -> String {
    switch outcome {
    case .ran(let run):
        return
            ", Tantivy \(format(run.buildWall, 2)) s (CPU \(format(run.buildCPU, 2)) s, its default indexing threads)"
    case .skipped(let reason): return "; Tantivy skipped: \(reason)"
    }
}
