/// A short extract of a note around its best matches, with the matched words marked.
///
/// ```swift
/// Snippet.make(title: n.title, body: n.body, query: q, highlight: ("\u{1B}[1m", "\u{1B}[0m"))
/// // "…the budget for next year is…" with `budget` in bold
/// ```
public enum Snippet {
    /// The window of about `width` characters of the body (the title when the body is empty)
    /// holding the most matches; white space runs become one space, cut ends get `…`, and each
    /// word matching a (not excluded) clause is wrapped in `highlight` when given. Words and
    /// query terms are compared by their stems in `language`, as the index compares them.
    public static func make(
        title: String, body: String, query: SearchQuery, width: Int = 160, highlight: (open: String, close: String)?,
        language: SearchLanguage = .none
    ) -> String {
        let (text, matches) = extract(title: title, body: body, query: query, width: width, language: language)
        guard let highlight, !matches.isEmpty else { return text }
        return wrap(text, matches, highlight)
    }

    /// The snippet ``make(title:body:query:width:highlight:language:)`` gives without
    /// highlighting, and where its matched words are: offsets in Unicode scalars (code points),
    /// `start..<end`, in order.
    public static func extract(
        title: String, body: String, query: SearchQuery, width: Int = 160, language: SearchLanguage = .none
    ) -> (text: String, matches: [Range<Int>]) {
        let source = body.isEmpty ? title : body
        let width = max(width, 16)
        let matcher = Matcher(query: query, language: language, inTitle: body.isEmpty)
        let matches = matcher.matches
        var tokens: [(start: Int, end: Int, matched: Bool)] = []
        Tokenizer.forEachTerm(in: source) { t, s, e in tokens.append((s, e, matches(t))) }
        let utf8 = Array(source.utf8)

        // The UTF-8 offset where each character starts (and the end), to map term offsets to characters.
        let chars = Array(source)
        var charStarts: [Int] = []
        charStarts.reserveCapacity(chars.count + 1)
        var offset = 0
        for c in chars {
            charStarts.append(offset)
            offset += c.utf8.count
        }
        charStarts.append(offset)
        /// The character holding `utf8` (rounding down), or the first starting at or after it.
        func char(_ utf8: Int, roundingUp: Bool) -> Int {
            var lo = 0
            var hi = charStarts.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if charStarts[mid] < utf8 { lo = mid + 1 } else { hi = mid }
            }
            if lo < charStarts.count && charStarts[lo] == utf8 { return lo }
            return roundingUp ? min(lo, chars.count) : max(lo - 1, 0)
        }
        let spans = tokens.map {
            (
                start: char($0.start, roundingUp: false), end: char($0.end, roundingUp: true), matched: $0.matched,
                // The word's own scalars: a mark that joins it to the next (an emoji modifier)
                // is shown with it but not counted in its range.
                scalars: String(decoding: utf8[$0.start..<$0.end], as: UTF8.self).unicodeScalars.count
            )
        }
        let hits = spans.filter(\.matched)

        // The window start (at a word) that covers the most matches, with a little context before.
        var start = 0
        if !hits.isEmpty {
            var best = -1
            for (i, h) in hits.enumerated() {
                let covered = hits[i...].prefix { $0.end <= h.start + width }.count
                if covered > best {
                    best = covered
                    start = h.start
                }
            }
            let context = width / 5
            let earlier = spans.last { $0.start >= start - context && $0.start <= start }
            start = spans.first { $0.start >= start - context }?.start ?? earlier?.start ?? start
            if start < context { start = 0 }
        }
        var end = min(chars.count, start + width)
        if end < chars.count, let space = chars[start..<end].lastIndex(where: \.isWhitespace), space > start + width / 2
        {
            end = space
        }

        var out = start > 0 ? "…" : ""
        var scalars = out.unicodeScalars.count
        var marks: [Range<Int>] = []
        var k = 0
        var i = start
        var lastWasSpace = false
        while i < end {
            while k < spans.count && spans[k].start < i { k += 1 }
            if k < spans.count, spans[k].start == i, spans[k].matched, spans[k].end <= end {
                let word = String(chars[spans[k].start..<spans[k].end])
                let n = word.unicodeScalars.count
                marks.append(scalars..<(scalars + min(n, spans[k].scalars)))
                out += word
                scalars += n
                i = spans[k].end
                lastWasSpace = false
                continue
            }
            let c = chars[i]
            if c.isWhitespace {
                if !lastWasSpace {
                    out += " "
                    scalars += 1
                }
                lastWasSpace = true
            } else {
                out.append(c)
                scalars += c.unicodeScalars.count
                lastWasSpace = false
            }
            i += 1
        }
        while out.last == " " { out.removeLast() }
        if end < chars.count { out += "…" }
        return (out, marks)
    }

    /// Where the words of `text` (a title, whole) that match `query` are: offsets in Unicode
    /// scalars, as ``extract(title:body:query:width:language:)`` gives them.
    public static func matches(in text: String, query: SearchQuery, inTitle: Bool, language: SearchLanguage = .none)
        -> [Range<Int>]
    {
        let matcher = Matcher(query: query, language: language, inTitle: inTitle)
        var ranges: [Range<Int>] = []
        // UTF-8 offsets of the tokens, to scalar offsets: walk the scalars once.
        var utf8ToScalar: [Int: Int] = [:]
        var u = 0
        var n = 0
        for sc in text.unicodeScalars {
            utf8ToScalar[u] = n
            u += UTF8.width(sc)
            n += 1
        }
        utf8ToScalar[u] = n
        Tokenizer.forEachTerm(in: text) { t, s, e in
            if matcher.matches(t), let a = utf8ToScalar[s], let b = utf8ToScalar[e] { ranges.append(a..<b) }
        }
        return ranges
    }

    /// `text` with each of `ranges` (scalar offsets) wrapped in `highlight`.
    static func wrap(_ text: String, _ ranges: [Range<Int>], _ highlight: (open: String, close: String)) -> String {
        var out = ""
        var r = 0
        for (i, sc) in text.unicodeScalars.enumerated() {
            if r < ranges.count && ranges[r].lowerBound == i { out += highlight.open }
            out.unicodeScalars.append(sc)
            if r < ranges.count && ranges[r].upperBound == i + 1 {
                out += highlight.close
                r += 1
            }
        }
        return out
    }

    /// Which words match a query's (not excluded) clauses: by stem for words and phrases, as
    /// written for prefixes.
    private struct Matcher {
        let stems: Set<[UInt8]>
        let prefixes: [[UInt8]]
        let stemmer: Stemmer?

        init(query: SearchQuery, language: SearchLanguage, inTitle: Bool) {
            stemmer = language.makeStemmer()
            let positive = query.clauses.filter {
                !$0.excluded && (inTitle ? $0.field != .body : $0.field != .title)
            }
            stems = Set(
                positive.filter { $0.kind != .prefix }.flatMap { [stemmer] c in c.terms.map { stemmer?.stem($0) ?? $0 }
                })
            prefixes = positive.filter { $0.kind == .prefix }.compactMap(\.terms.first)
        }

        func matches(_ term: UnsafeBufferPointer<UInt8>) -> Bool {
            if prefixes.contains(where: { term.starts(with: $0) }) { return true }
            guard let stemmer else { return stems.contains(Array(term)) }
            var found = false
            stemmer.stem(term) { found = stems.contains(Array($0.isEmpty ? term : $0)) }
            return found
        }
    }
}
