import Basics
public import LMDB

/// A search that does not stop at "no notes match": when the exact query finds fewer notes than
/// asked for, it widens the query in two steps, ranked below the notes it found.
///
/// 1. Near spellings: every word of 4 or more characters also matches the indexed words within
///    edit distance 1 (2 for words of 8 or more; a swap of two neighbours counts as one edit);
///    in a phrase, the phrases its words' near spellings make (``replacingInPhrases(_:in:)``).
/// 2. Some of the words: a query of more than one word (in groups, alternatives or not; its
///    exclusions still exclude, ``someWords(_:_:)``) also matches notes holding any of them,
///    ranked by BM25 (notes with more of the words, and rarer ones, first).
///    When it runs, the notes of step 1 are ranked with its notes, by the same score, but for
///    those with every word once the words in no note are read as their near spellings: first.
///    A word the notes hold, but ``rarity`` times more rarely than a near spelling of it
///    (``Correction/rare``), is read so there too.
///
/// The outcome says which hits came from which step, and which spellings were used, so the
/// caller can tell the reader what was done.
public enum ForgivingSearch {
    /// What a near spelling's score is multiplied by, against 1 for a word as written: a guess
    /// at what was meant counts half a word. Before 2026-12-07 it counted as much as the word, so
    /// `optimising linear networks` (no note holds `optimising`; `optimal` is a near spelling of
    /// its stem) ranked notes with `optimal` alone above those with `linear networks`: on NPL's
    /// 11,429 abstracts, a collection the search was not tuned on, nDCG@10 went from 0.431 to
    /// 0.436 with its questions lowercased (Tantivy 0.439, FTS5 0.431), and 0.365 to 0.366 on
    /// CISI, 0.478 to 0.479 on CACM,
    /// Cranfield the same (0.374); any factor from 0.3 to 0.7 gave the same figures.
    static let nearBoost = 0.5

    /// How a hit matched.
    public enum Match: String, Sendable, Equatable {
        /// The query as written.
        case exact
        /// The query with near spellings of its words.
        case nearSpelling = "near-spelling"
        /// Some of the query's words.
        case someWords = "some-words"
    }

    /// A word of the query and the indexed words it also matched.
    public struct Correction: Sendable, Equatable {
        public var word: String
        /// Nearest first (fewest edits, then the most notes).
        public var replacements: [String]
        /// Whether the word itself is in no note.
        public var unknown: Bool
        /// Whether the word is in notes, but in far fewer than a near spelling of it
        /// (``rarity`` times fewer or more): a typo some note holds, `seperate` beside
        /// `separate`, which is widened as a word in no note is.
        public var rare: Bool = false
    }

    public struct Outcome: Sendable, Equatable {
        public var hits: [(hit: SearchHit, match: Match)]
        public var corrections: [Correction]

        /// The corrections named by the words as the query gave them (folded), not by their
        /// stems: `stemmed` is `query` stemmed, clause for clause.
        func naming(_ query: SearchQuery, stemmed: SearchQuery) -> Outcome {
            let written = ForgivingSearch.written(query, stemmed: stemmed)
            var out = self
            for i in out.corrections.indices {
                let stem = Array(out.corrections[i].word.utf8)
                out.corrections[i].word =
                    written[stem].map { String(decoding: $0, as: UTF8.self) } ?? out.corrections[i].word
            }
            return out
        }

        public static func == (a: Outcome, b: Outcome) -> Bool {
            a.corrections == b.corrections && a.hits.map(\.hit) == b.hits.map(\.hit)
                && a.hits.map(\.match) == b.hits.map(\.match)
        }
    }

    /// Each word of `stemmed` (of a term or a phrase clause) as `query` wrote it (folded), by
    /// its stem.
    static func written(_ query: SearchQuery, stemmed: SearchQuery) -> [[UInt8]: [UInt8]] {
        var out: [[UInt8]: [UInt8]] = [:]
        for (a, b) in zip(query.clauses, stemmed.clauses)
        where (a.kind == .term || a.kind == .phrase) && a.terms.count == b.terms.count {
            for (w, s) in zip(a.terms, b.terms) { out[s] = w }
        }
        return out
    }

    /// The most near spellings one word expands to.
    static let maxReplacements = 8
    /// How many times more notes a near spelling must be in than a word (or than another near
    /// spelling at most as far) for the word to count as rare beside it: a word the notes hold
    /// so much more rarely is likely a typo of it (`seperate`, `separate`), and a near spelling
    /// of a typo that much rarer likely not what was meant (`protoc` for `protocl`, beside
    /// `protocol`).
    static let rarity: UInt64 = 8
    /// The most near spellings a word of a phrase expands to, and the most phrases one phrase
    /// is searched as: each variant is a phrase of its own (its words' positions read again),
    /// and their number multiplies with the phrase's words.
    static let maxPhraseReplacements = 3
    static let maxPhraseVariants = 32

    /// Runs `query` through `search` (top-`n` of a query) and widens it when it finds fewer
    /// than `limit` notes, unless `exact`. `vocabulary` visits every indexed word (folded UTF-8,
    /// valid only during the call); `documentFrequency` gives the number of notes holding a word
    /// (asked only of the near spellings found).
    ///
    /// With a stemmer, the index holds stems, and a typo in a word's ending leaves a stem far
    /// from the right one (`appropriatte` stems to `appropriatt`, three edits from `appropri`):
    /// so each word as `written` (by its stem in `query`) is also changed by every single edit,
    /// and each change's `stem` that the index holds (`documentFrequency`) is a near spelling
    /// one edit away.
    public static func run(
        _ query: SearchQuery, limit: Int, exact: Bool,
        search: (SearchQuery, Int) throws -> [SearchHit],
        vocabulary: (_ visit: (UnsafeBufferPointer<UInt8>) -> Void) throws -> Void,
        written: [[UInt8]: [UInt8]] = [:], stem: (([UInt8]) -> [UInt8])? = nil,
        documentFrequency: ([UInt8]) throws -> UInt64? = { _ in nil }
    ) throws -> Outcome {
        var outcome = Outcome(hits: try search(query, limit).map { ($0, .exact) }, corrections: [])
        guard !exact, outcome.hits.count < limit else { return outcome }
        var seen = Set(outcome.hits.map(\.hit.id))
        func add(_ q: SearchQuery, as match: Match) throws {
            let wanted = limit - outcome.hits.count
            guard wanted > 0 else { return }
            for hit in try search(q, wanted + seen.count) where !seen.contains(hit.id) {
                seen.insert(hit.id)
                outcome.hits.append((hit, match))
                if outcome.hits.count == limit { break }
            }
        }
        // 1. Near spellings of the words the query looks for, alone or in a phrase (before
        // 2026-12-06 a phrase's words had none: `"recieve the package"` found nothing).
        let words = Set(
            query.clauses.filter { !$0.excluded && ($0.kind == .term || $0.kind == .phrase) }.flatMap(\.terms)
        ).filter { Self.editBudget(Self.scalars($0).count) > 0 }
        var near: [[UInt8]: [(term: [UInt8], distance: Int, df: UInt64)]] = [:]
        var known: Set<[UInt8]> = []
        if !words.isEmpty {
            let targets = words.map { word in
                let scalars = Self.scalars(word)
                return (bytes: word, scalars: scalars, budget: Self.editBudget(scalars.count))
            }
            // Every indexed word is visited for each query: no allocation per word, and the
            // distance only for words whose length in scalars is within the budget.
            var candidate: [Unicode.Scalar] = []
            var rows: [Int] = []
            // Plain integers for the tests most words fail (no reference counting in the loop).
            let byteCounts = targets.map(\.bytes.count)
            let scalarCounts = targets.map(\.scalars.count)
            let budgets = targets.map(\.budget)
            let signatures = targets.map { Self.signature($0.bytes) }
            try vocabulary { term in
                var length = -1
                var signature = (bits: UInt64(0), ascii: true)
                for k in 0..<byteCounts.count {
                    if term.count == byteCounts[k] && term.elementsEqual(targets[k].bytes) {
                        known.insert(targets[k].bytes)
                        continue
                    }
                    if length < 0 {
                        // Scalars in UTF-8: the bytes that do not continue one.
                        length = 0
                        for b in term where b & 0xC0 != 0x80 { length += 1 }
                        signature = Self.signature(term)
                        candidate.removeAll(keepingCapacity: true)
                    }
                    guard abs(length - scalarCounts[k]) <= budgets[k] else { continue }
                    // An edit adds at most one character the other word lacks and takes away at
                    // most one, so words whose sets of characters differ more are too far apart
                    // (checked on ASCII words, where a character is a byte).
                    if signature.ascii && signatures[k].ascii {
                        let budget = budgets[k]
                        if (signature.bits & ~signatures[k].bits).nonzeroBitCount > budget
                            || (signatures[k].bits & ~signature.bits).nonzeroBitCount > budget
                        {
                            continue
                        }
                    }
                    if candidate.isEmpty { Self.decode(term, into: &candidate) }
                    if let d = Self.distance(targets[k].scalars, candidate, atMost: budgets[k], rows: &rows) {
                        near[targets[k].bytes, default: []].append((Array(term), d, 0))
                    }
                }
            }
            // How common each near spelling is, which ranks them: asked once the walk is done.
            for (word, found) in near {
                near[word] = try found.map { ($0.term, $0.distance, try documentFrequency($0.term) ?? 0) }
            }
        }
        if let stem {
            // Only for the words no note holds: a word the notes hold has no typo in its ending
            // to undo, and its near spellings are those of the walk above. (Stemming every
            // single edit of every word of a question made `search --collection` 6x slower.)
            for word in words.sorted(by: { $0.lexicographicallyPrecedes($1) }) where !known.contains(word) {
                guard let asWritten = written[word], Self.editBudget(Self.scalars(asWritten).count) > 0 else {
                    continue
                }
                var tried: Set<[UInt8]> = [word]
                for found in near[word] ?? [] { tried.insert(found.term) }
                let budget = Self.editBudget(Self.scalars(asWritten).count)
                let wordScalars = Self.scalars(word)
                var rows: [Int] = []
                for variant in Self.singleEdits(of: asWritten) {
                    let s = stem(variant)
                    guard tried.insert(s).inserted else { continue }
                    // A variant that is no word may stem to a short, unrelated stem (`thing`
                    // changed to `theing` stems to `the`): its stem must be what the word as
                    // written starts with (the stemmer took an ending off, typo and all:
                    // `appropriatte` and `appropri`), four characters at least (`piing`, one
                    // edit from `ping`, stems to `pi`), or near the word's own stem.
                    let stemScalars = Self.scalars(s)
                    guard
                        (asWritten.starts(with: s) && stemScalars.count >= 4)
                            || Self.distance(wordScalars, stemScalars, atMost: budget, rows: &rows) != nil
                    else { continue }
                    guard let df = try documentFrequency(s), df > 0 else { continue }
                    near[word, default: []].append((s, 1, df))
                }
            }
        }
        var widened = query
        // The some-words step widens only the words in no note: a word found as written ranks
        // by itself (its near spellings, each scored as a word of its own, would outweigh it).
        var widenedUnknown = query
        // The typo step reads the words in no note, and the rare ones (``Correction/rare``), as
        // their near spellings.
        var widenedTypos = query
        var inPhrases: [[UInt8]: [[UInt8]]] = [:]
        var unknownInPhrases: [[UInt8]: [[UInt8]]] = [:]
        var typoInPhrases: [[UInt8]: [[UInt8]]] = [:]
        for word in words.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            guard var found = near[word], !found.isEmpty else { continue }
            found.sort { a, b in
                if a.distance != b.distance { return a.distance < b.distance }
                if a.df != b.df { return a.df > b.df }
                return a.term.lexicographicallyPrecedes(b.term)
            }
            let kept = found.prefix(maxReplacements)
            let chosen = kept.map(\.term)
            // A typo reads as the common spellings near it, not a rare one as near (before
            // 2026-12-07 `protocl` ranked the notes with `protoc`, in few notes and so weighing
            // more, above those with `protocol`): a near spelling as far as another or farther
            // and `rarity` times rarer is left to the steps after the typo step (every word,
            // once typos are read right) and, for a query of one word, after the likely
            // spellings' notes. The some-words step keeps every near spelling, each a word of its
            // own: reading a typo there as its likely spellings only cost CISI's nDCG@10 0.001.
            let likely = kept.filter { a in
                !kept.contains { b in b.distance <= a.distance && b.df / rarity >= a.df }
            }.map(\.term)
            let unknown = !known.contains(word)
            // A word some notes hold, but `rarity` times fewer than a near spelling of it: a typo
            // too, likely (before 2026-12-07 `seperate targets` ranked the one note with
            // `seperate` above the many with `separate targets`, found through `separate` as any
            // word's near spelling, by their other words only). It reads as its near spellings
            // that much more common only.
            var commoner: [[UInt8]] = []
            if !unknown, let df = try documentFrequency(word), df > 0 {
                commoner = kept.filter { $0.df / rarity >= df }.map(\.term).filter(likely.contains)
            }
            let rare = !commoner.isEmpty
            outcome.corrections.append(
                Correction(
                    word: String(decoding: word, as: UTF8.self),
                    replacements: chosen.map { String(decoding: $0, as: UTF8.self) }, unknown: unknown, rare: rare))
            widened = SearchQuery(root: Self.replacing(word, by: chosen, in: widened.root))
            inPhrases[word] = Array(chosen.prefix(maxPhraseReplacements))
            if unknown {
                widenedUnknown = SearchQuery(root: Self.replacing(word, by: chosen, in: widenedUnknown.root))
                unknownInPhrases[word] = inPhrases[word]
            }
            if unknown || rare {
                let typos = unknown ? likely : commoner
                widenedTypos = SearchQuery(root: Self.replacing(word, by: typos, in: widenedTypos.root))
                typoInPhrases[word] = Array(typos.prefix(maxPhraseReplacements))
            }
        }
        widened = SearchQuery(root: Self.replacingInPhrases(inPhrases, in: widened.root))
        widenedUnknown = SearchQuery(root: Self.replacingInPhrases(unknownInPhrases, in: widenedUnknown.root))
        widenedTypos = SearchQuery(root: Self.replacingInPhrases(typoInPhrases, in: widenedTypos.root))
        let typos = outcome.corrections.contains { $0.unknown || $0.rare }
        // 2. Any of the words, for a query of more than one.
        guard let (parts, excluded) = Self.someWords(query.root, widenedUnknown.root).map(Self.distinct),
            parts.count > 1
        else {
            // The typos read as their likely spellings first, then every near spelling.
            if typos { try add(widenedTypos, as: .nearSpelling) }
            if !outcome.corrections.isEmpty { try add(widened, as: .nearSpelling) }
            return outcome
        }
        let someWords = SearchQuery(root: excluded.isEmpty ? .any(parts) : .all([.any(parts)], excluded: excluded))
        // The notes of both steps ranked together by the words they hold, as the some-words
        // query scores them: a note found through a near spelling of a word the notes hold
        // (`them` for `theme`) ranks by its other words. Before 2026-12-07 every near-spelling
        // note came first, so `how do I install a theme?` ranked "how do I install them" above
        // the notes with both `install` and `theme`.
        let wanted = limit - outcome.hits.count
        // First the notes with every word once the words in no note (typos) are read as their
        // near spellings: such a word counts as the word. The some-words score cannot rank
        // them, as it scores each near spelling as a word of its own: before this, for
        // `generic paramter packs` a note holding only `parameter`, `param1` and `param2` (three
        // near spellings of one word) ranked above the notes with all three words.
        let typoHits = try typos ? search(widenedTypos, wanted + seen.count).filter { !seen.contains($0.id) } : []
        let typoIDs = Set(typoHits.map(\.id))
        seen.formUnion(typoIDs)
        let nearHits =
            try outcome.corrections.isEmpty
            ? [] : search(widened, wanted + seen.count).filter { !seen.contains($0.id) }
        let some = try search(someWords, wanted + seen.count + nearHits.count).filter { !seen.contains($0.id) }
        outcome.hits += (typoHits.map { ($0, Match.nearSpelling) } + Self.ranked(near: nearHits, some: some))
            .prefix(wanted)
        return outcome
    }

    /// The near-spelling hits and the some-words hits as one list: by the score the some-words
    /// query gives each note (a near-spelling note it did not return holds none of its words, or
    /// fewer than every note it returned: 0), then a near-spelling note first, then each step's
    /// own order. A near-spelling note carries that score.
    static func ranked(near: [SearchHit], some: [SearchHit]) -> [(hit: SearchHit, match: Match)] {
        var scores: [Identifier: Double] = [:]
        for hit in some { scores[hit.id] = hit.score }
        var all: [(hit: SearchHit, match: Match, order: Int)] = []
        for (k, hit) in near.enumerated() {
            all.append((SearchHit(id: hit.id, score: scores[hit.id] ?? 0), .nearSpelling, k))
        }
        let nearIDs = Set(near.map(\.id))
        for (k, hit) in some.enumerated() where !nearIDs.contains(hit.id) {
            all.append((hit, .someWords, near.count + k))
        }
        all.sort { a, b in a.hit.score != b.hit.score ? a.hit.score > b.hit.score : a.order < b.order }
        return all.map { ($0.hit, $0.match) }
    }

    /// The words (phrases, prefixes) and the exclusions of a query, in groups, alternatives or
    /// not (`a (b c) -d` and `a OR b c -d` are `a b c -d`), a word the tokenizer split
    /// (`wind-tunnel`) as its words: from `widened`, the same query with near spellings as
    /// alternatives of its words, whose shape `original` gives. Every exclusion, wherever it
    /// stands, excludes (a note the reader left out of one alternative is not brought back).
    /// Before 2026-12-07 a query with OR had no some-words step: a question typed in capitals,
    /// `LOW OR VERY LOW FREQUENCY RADIO WAVES`, found nothing (each side needs every word of
    /// its own) and said so. Nil when the two do not have one shape (never, as they are made).
    static func someWords(_ original: SearchQuery.Node, _ widened: SearchQuery.Node) -> (
        parts: [SearchQuery.Node], excluded: [SearchQuery.Node]
    )? {
        func join(_ parts: [SearchQuery.Node], _ wideParts: [SearchQuery.Node], excluded: [SearchQuery.Node])
            -> (parts: [SearchQuery.Node], excluded: [SearchQuery.Node])?
        {
            guard parts.count == wideParts.count else { return nil }
            var out: (parts: [SearchQuery.Node], excluded: [SearchQuery.Node]) = ([], excluded)
            for (part, wide) in zip(parts, wideParts) {
                guard let inner = someWords(part, wide) else { return nil }
                out.parts += inner.parts
                out.excluded += inner.excluded
            }
            return out
        }
        switch (original, widened) {
        case (.clause(let c), _) where c.compound:
            // `wind-tunnel`: its words, each on its own.
            return (c.terms.map { .clause(SearchQuery.Clause(kind: .term, terms: [$0], field: c.field)) }, [])
        case (.clause, _): return ([widened], [])
        case (.all(let parts, let excluded), .all(let wideParts, _)): return join(parts, wideParts, excluded: excluded)
        case (.any(let parts), .any(let wideParts)): return join(parts, wideParts, excluded: [])
        default: return nil
        }
    }

    /// The some-words query's parts and exclusions with each distinct one once, in the order
    /// first met: a word the query repeats (`(swift AND actor) OR (swift AND task)`) is one word
    /// of the ranking, as the words of a note are counted once each. Before 2026-12-07 it
    /// counted as many times as it was written, so `swift` outweighed `actor` and `task`.
    static func distinct(_ split: (parts: [SearchQuery.Node], excluded: [SearchQuery.Node])) -> (
        parts: [SearchQuery.Node], excluded: [SearchQuery.Node]
    ) {
        func once(_ nodes: [SearchQuery.Node]) -> [SearchQuery.Node] {
            var seen: Set<SearchQuery.Node> = []
            return nodes.filter { seen.insert($0).inserted }
        }
        return (once(split.parts), once(split.excluded))
    }

    /// The set of a word's bytes (each as bit `byte % 64`), and whether they are all ASCII.
    @inline(__always)
    static func signature(_ bytes: some Sequence<UInt8>) -> (bits: UInt64, ascii: Bool) {
        var bits: UInt64 = 0
        var ascii = true
        for b in bytes {
            bits |= 1 &<< UInt64(b & 63)
            if b >= 0x80 { ascii = false }
        }
        return (bits, ascii)
    }

    /// Every word one edit from `word` (folded UTF-8): a character taken out, two neighbours
    /// swapped, one replaced or put in by a letter or digit of ASCII or of the word itself.
    static func singleEdits(of word: [UInt8]) -> [[UInt8]] {
        let w = scalars(word)
        var alphabet: [Unicode.Scalar] = (UInt8(ascii: "a")...UInt8(ascii: "z")).map { Unicode.Scalar($0) }
        alphabet += (UInt8(ascii: "0")...UInt8(ascii: "9")).map { Unicode.Scalar($0) }
        for c in w where !alphabet.contains(c) { alphabet.append(c) }
        var out: [[UInt8]] = []
        func emit(_ s: [Unicode.Scalar]) {
            var bytes: [UInt8] = []
            for c in s { bytes.append(contentsOf: String(c).utf8) }
            out.append(bytes)
        }
        for i in w.indices {
            var v = w
            v.remove(at: i)
            emit(v)
            if i + 1 < w.count, w[i] != w[i + 1] {
                var t = w
                t.swapAt(i, i + 1)
                emit(t)
            }
            for c in alphabet where c != w[i] {
                var r = w
                r[i] = c
                emit(r)
            }
        }
        for i in 0...w.count {
            for c in alphabet {
                var v = w
                v.insert(c, at: i)
                emit(v)
            }
        }
        return out
    }

    /// The most edits a word of `n` characters may take: 0 under 4, 1 under 8, else 2.
    static func editBudget(_ n: Int) -> Int { n < 4 ? 0 : n < 8 ? 1 : 2 }

    /// The Unicode scalars of a term (folded UTF-8).
    static func scalars(_ term: [UInt8]) -> [Unicode.Scalar] {
        Array(String(decoding: term, as: UTF8.self).unicodeScalars)
    }

    /// `node` with every positive term clause for `word` matching `replacements` too.
    static func replacing(_ word: [UInt8], by replacements: [[UInt8]], in node: SearchQuery.Node) -> SearchQuery.Node {
        switch node {
        case .clause(let c):
            guard !c.excluded, c.kind == .term, c.terms.first == word else { return node }
            return .any(
                [node]
                    + replacements.map { r in
                        .clause(SearchQuery.Clause(kind: .term, terms: [r], field: c.field, boost: nearBoost))
                    })
        case .all(let parts, let excluded):
            return .all(parts.map { replacing(word, by: replacements, in: $0) }, excluded: excluded)
        case .any(let parts):
            return .any(parts.map { replacing(word, by: replacements, in: $0) })
        }
    }

    /// `node` with every positive phrase that holds a word of `replacements` matching the
    /// phrases its near spellings make too: the phrase as written, then each word of it in turn
    /// replaced by its near spellings (nearest first), in every phrase made so far, up to
    /// ``maxPhraseVariants`` phrases.
    static func replacingInPhrases(_ replacements: [[UInt8]: [[UInt8]]], in node: SearchQuery.Node)
        -> SearchQuery.Node
    {
        guard !replacements.isEmpty else { return node }
        switch node {
        case .clause(let c):
            guard !c.excluded, c.kind == .phrase else { return node }
            var variants = [c.terms]
            for (i, term) in c.terms.enumerated() {
                guard let near = replacements[term] else { continue }
                for variant in variants where variants.count < maxPhraseVariants {
                    for r in near where variants.count < maxPhraseVariants {
                        var v = variant
                        v[i] = r
                        variants.append(v)
                    }
                }
            }
            guard variants.count > 1 else { return node }
            return .any(
                [node]
                    + variants.dropFirst().map { terms in
                        var v = c
                        v.terms = terms
                        v.boost = nearBoost
                        return .clause(v)
                    })
        case .all(let parts, let excluded):
            return .all(parts.map { replacingInPhrases(replacements, in: $0) }, excluded: excluded)
        case .any(let parts):
            return .any(parts.map { replacingInPhrases(replacements, in: $0) })
        }
    }

    /// The scalars of valid UTF-8 `bytes` appended to `out` (as `String(decoding:as:)` reads
    /// them: a malformed sequence is U+FFFD).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [Unicode.Scalar]) {
        var iterator = bytes.makeIterator()
        var codec = UTF8()
        while true {
            switch codec.decode(&iterator) {
            case .scalarValue(let s): out.append(s)
            case .error: out.append("\u{FFFD}")
            case .emptyInput: return
            }
        }
    }

    /// The optimal string alignment distance of `a` and `b` (insertions, deletions,
    /// substitutions, and swaps of two neighbours, each one edit), or nil when it exceeds `limit`.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost limit: Int) -> Int? {
        var rows: [Int] = []
        return distance(a, b, atMost: limit, rows: &rows)
    }

    /// ``distance(_:_:atMost:)`` with `rows` as its scratch space (kept from call to call).
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost limit: Int, rows: inout [Int]) -> Int? {
        let (n, m) = (a.count, b.count)
        guard abs(n - m) <= limit else { return nil }
        if n == 0 || m == 0 { return max(n, m) <= limit ? max(n, m) : nil }
        let width = m + 1
        if rows.count < 3 * width { rows = [Int](repeating: 0, count: 3 * width) }
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                rows.withUnsafeMutableBufferPointer { rows in
                    // Three rows of the dynamic programme, one after the other in `rows`: the one
                    // before last (for swaps), last, current.
                    var (before, last, row) = (0, width, 2 * width)
                    for j in 0...m { rows[last + j] = j }
                    for i in 1...n {
                        rows[row] = i
                        var smallest = i
                        for j in 1...m {
                            let cost = a[i - 1] == b[j - 1] ? 0 : 1
                            var v = min(rows[last + j] + 1, rows[row + j - 1] + 1, rows[last + j - 1] + cost)
                            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                                v = min(v, rows[before + j - 2] + 1)
                            }
                            rows[row + j] = v
                            smallest = min(smallest, v)
                        }
                        if smallest > limit { return nil }
                        (before, last, row) = (last, row, before)
                    }
                    return rows[last + m] <= limit ? rows[last + m] : nil
                }
            }
        }
    }

}

extension SearchIndex {
    /// ``search(_:filter:limit:in:_:)``, widened as ``ForgivingSearch`` does when it finds fewer
    /// than `limit` notes (unless `exact`).
    public static func forgivingSearch(
        _ query: SearchQuery, filter: SearchFilter, limit: Int, exact: Bool, in txn: borrowing Transaction,
        _ db: SearchDatabases
    ) throws -> ForgivingSearch.Outcome {
        let stemmed = query.stemmed(db.language)
        let stemmer = db.language.makeStemmer()
        // The steps' queries share their words: each word's blocks are listed once for all of
        // them, and a prefix expanded once.
        let lookups = TermLookups()
        return try withSearcher(in: txn, db) { searcher in
            try ForgivingSearch.run(
                stemmed, limit: limit, exact: exact,
                search: { q, n in try searcher.search(stemmed: q, filter: filter, limit: n, lookups: lookups) },
                vocabulary: { visit in
                    try txn.withCursor(db.terms) { c in
                        var entry = try c.first()
                        while let e = entry {
                            visit(e.key.assumingMemoryBound(to: UInt8.self))
                            entry = try c.next()
                        }
                    }
                },
                written: ForgivingSearch.written(query, stemmed: stemmed), stem: stemmer.map { s in { s.stem($0) } },
                documentFrequency: { term in
                    let notes = try txn.withCursor(db.postings) { c in try SearchIndex.df(of: term, c) }
                    return notes > 0 ? notes : nil
                }
            )
        }.naming(query, stemmed: stemmed)
    }
}

extension InMemorySearchIndex {
    /// ``search(_:filter:limit:)``, widened as ``ForgivingSearch`` does.
    public func forgivingSearch(_ query: SearchQuery, filter: SearchFilter, limit: Int, exact: Bool)
        -> ForgivingSearch.Outcome
    {
        // Neither closure throws here.
        let stemmed = query.stemmed(language)
        let stemmer = language.makeStemmer()
        return
            (try? ForgivingSearch.run(
                stemmed, limit: limit, exact: exact,
                search: { q, n in search(stemmed: q, filter: filter, limit: n) },
                vocabulary: { visit in
                    for term in df.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                        term.withUnsafeBufferPointer { visit($0) }
                    }
                },
                written: ForgivingSearch.written(query, stemmed: stemmed), stem: stemmer.map { s in { s.stem($0) } },
                documentFrequency: { df[$0] }
            ).naming(query, stemmed: stemmed)) ?? ForgivingSearch.Outcome(hits: [], corrections: [])
    }
}
