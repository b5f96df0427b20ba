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
        let source = body.isEmpty ? title : body
        let width = max(width, 16)
        let stemmer = language.makeStemmer()
        let positive = query.clauses.filter { !$0.excluded && (!$0.titleOnly || body.isEmpty) }
        let stems = Set(positive.filter { $0.kind != .prefix }.flatMap { c in c.terms.map { stemmer?.stem($0) ?? $0 } })
        let prefixes = positive.filter { $0.kind == .prefix }.compactMap(\.terms.first)
        func matches(_ term: UnsafeBufferPointer<UInt8>) -> Bool {
            if prefixes.contains(where: { term.starts(with: $0) }) { return true }
            guard let stemmer else { return stems.contains(Array(term)) }
            var found = false
            stemmer.stem(term) { found = stems.contains(Array($0.isEmpty ? term : $0)) }
            return found
        }
        var tokens: [(start: Int, end: Int, matched: Bool)] = []
        Tokenizer.forEachTerm(in: source) { t, s, e in tokens.append((s, e, matches(t))) }

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
            (start: char($0.start, roundingUp: false), end: char($0.end, roundingUp: true), matched: $0.matched)
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
        var k = 0
        var i = start
        var lastWasSpace = false
        while i < end {
            while k < spans.count && spans[k].start < i { k += 1 }
            if let h = highlight, k < spans.count, spans[k].start == i, spans[k].matched, spans[k].end <= end {
                out += h.open + String(chars[spans[k].start..<spans[k].end]) + h.close
                i = spans[k].end
                lastWasSpace = false
                continue
            }
            let c = chars[i]
            if c.isWhitespace {
                if !lastWasSpace { out += " " }
                lastWasSpace = true
            } else {
                out.append(c)
                lastWasSpace = false
            }
            i += 1
        }
        while out.last == " " { out.removeLast() }
        if end < chars.count { out += "…" }
        return out
    }
}
