/// A short extract of a note around its best matches, with the matched words marked.
///
/// ```swift
/// Snippet.make(title: n.title, body: n.body, query: q, highlight: ("\u{1B}[1m", "\u{1B}[0m"))
/// // "…the budget for next year is…" with `budget` in bold
/// ```
public enum Snippet {
    /// The window of about `width` characters of the body (the title when the body is empty)
    /// holding the most matches; white space runs become one space, cut ends get `…`, and each
    /// word matching a (not excluded) clause is wrapped in `highlight` when given.
    public static func make(
        title: String, body: String, query: SearchQuery, width: Int = 160, highlight: (open: String, close: String)?
    ) -> String {
        let source = body.isEmpty ? title : body
        let width = max(width, 16)
        let positive = query.clauses.filter { !$0.excluded && (!$0.titleOnly || body.isEmpty) }
        func matches(_ term: UnsafeBufferPointer<UInt8>) -> Bool {
            positive.contains { c in
                switch c.kind {
                case .term, .phrase: return c.terms.contains { $0.elementsEqual(term) }
                case .prefix: return c.terms.first.map { term.starts(with: $0) } ?? false
                }
            }
        }
        var tokens: [(start: Int, end: Int, matched: Bool)] = []
        Tokenizer.forEachTerm(in: source) { t, s, e in tokens.append((s, e, matches(t))) }

        // Character index of each UTF-8 offset that starts a character.
        let chars = Array(source)
        var charAt: [Int: Int] = [:]
        var offset = 0
        for (i, c) in chars.enumerated() {
            charAt[offset] = i
            offset += c.utf8.count
        }
        charAt[offset] = chars.count
        func char(_ utf8: Int, roundingUp: Bool) -> Int {
            var o = utf8
            while charAt[o] == nil && o > 0 && o < offset { o += roundingUp ? 1 : -1 }
            return charAt[o] ?? (roundingUp ? chars.count : 0)
        }
        let spans = tokens.map { (start: char($0.start, roundingUp: false), end: char($0.end, roundingUp: true), matched: $0.matched) }
        let hits = spans.filter(\.matched)

        // The window start (at a word) that covers the most matches, with a little context before.
        var start = 0
        if let firstHit = hits.first {
            var best = -1
            for (i, h) in hits.enumerated() {
                let covered = hits[i...].prefix { $0.end <= h.start + width }.count
                if covered > best {
                    best = covered
                    start = h.start
                }
            }
            _ = firstHit
            let context = width / 5
            let earlier = spans.last { $0.start >= start - context && $0.start <= start }
            start = spans.first { $0.start >= start - context }?.start ?? earlier?.start ?? start
            if start < context { start = 0 }
        }
        var end = min(chars.count, start + width)
        if end < chars.count, let space = chars[start..<end].lastIndex(where: \.isWhitespace), space > start + width / 2 {
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
