import Glibc

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
        SnippetMaker(query: query, language: language).make(
            title: title, body: body, width: width, highlight: highlight)
    }

    /// The snippet ``make(title:body:query:width:highlight:language:)`` gives without
    /// highlighting, and where its matched words are: offsets in Unicode scalars (code points),
    /// `start..<end`, in order.
    public static func extract(
        title: String, body: String, query: SearchQuery, width: Int = 160, language: SearchLanguage = .none
    ) -> (text: String, matches: [Range<Int>]) {
        SnippetMaker(query: query, language: language).extract(title: title, body: body, width: width)
    }

    static func extract(title: String, body: String, width: Int, matcher: Matcher) -> (
        text: String, matches: [Range<Int>]
    ) {
        var source = body.isEmpty ? title : body
        // A byte-order mark that starts the body (a file saved by a Windows editor, imported byte
        // for byte) marks the encoding, not text: before 2026-12-07 it began the snippet, an
        // invisible character on the terminal and in `--json`, counted in the match offsets.
        if source.unicodeScalars.first == "\u{FEFF}" { source = String(source.unicodeScalars.dropFirst()) }
        let width = max(width, 16)
        guard source.utf8.count > wholeTextLimit else { return extract(source, width: width, matcher: matcher) }
        return extract(region: source, width: width, matcher: matcher)
    }

    /// Texts longer than this (in UTF-8 bytes) give their snippet from a region around their
    /// best matches: the characters of the whole text and a position for each of its words made
    /// a search that found a note of 20 MB take 1.1 s and 416 MB (release build), 0.55 s and
    /// 151 MB with the region.
    static let wholeTextLimit = 1 << 20

    /// The snippet of a long `source`, from the region of it around the matches that lie closest
    /// together (counted in bytes, not characters), cut at white space, with `…` where the region
    /// cuts the text.
    static func extract(region source: String, width: Int, matcher: Matcher) -> (text: String, matches: [Range<Int>]) {
        let count = source.utf8.count
        let span = 4 * width
        var best = 0
        let hits = matcher.tokens(of: source).filter(\.matched)
        var most = -1
        var j = 0
        for (i, h) in hits.enumerated() {
            j = max(j, i)
            while j < hits.count && hits[j].end <= h.start + span { j += 1 }
            if j - i > most {
                most = j - i
                best = h.start
            }
        }
        // A region of a few widths either side, each end at white space (never inside a character),
        // read in place (the text is not copied).
        func whiteSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }
        var whole = source
        let (lo, hi, region) = whole.withUTF8 { bytes in
            var lo = max(0, best - 2 * span)
            while lo > 0 && !whiteSpace(bytes[lo - 1]) && lo > best - 4 * span { lo -= 1 }
            var hi = min(count, best + 3 * span)
            while hi < count && !whiteSpace(bytes[hi]) && hi < best + 5 * span { hi += 1 }
            // Without white space near: back to the start of a scalar.
            while lo > 0 && lo < count && bytes[lo] & 0xC0 == 0x80 { lo -= 1 }
            while hi < count && bytes[hi] & 0xC0 == 0x80 { hi += 1 }
            return (lo, hi, String(decoding: UnsafeBufferPointer(rebasing: bytes[lo..<hi]), as: UTF8.self))
        }
        var (text, matches) = extract(region, width: width, matcher: matcher)
        let ellipsis = "\u{2026}"
        if lo > 0 && !text.hasPrefix(ellipsis) {
            text = ellipsis + text
            matches = matches.map { ($0.lowerBound + 1)..<($0.upperBound + 1) }
        }
        if hi < count && !text.hasSuffix(ellipsis) { text += ellipsis }
        return (text, matches)
    }

    /// The snippet of the whole of `source`.
    static func extract(_ source: String, width: Int, matcher: Matcher) -> (text: String, matches: [Range<Int>]) {
        let tokens = matcher.tokens(of: source)
        let utf8 = Array(source.utf8)
        let text = Characters(source, utf8)
        let chars = text.count

        /// The character holding `utf8` (rounding down), or the first starting at or after it.
        /// Sought from `from`, the answer for the token before: tokens come in text order, so
        /// each cursor walks the characters once (a binary search for each end of each word was
        /// 70% of a snippet's time, a fifth of a search's in a notebook of long notes).
        func char(_ utf8: Int, roundingUp: Bool, from: inout Int) -> Int {
            if from > 0 && text.starts[from - 1] >= utf8 { from = 0 }
            while from < text.starts.count && text.starts[from] < utf8 { from += 1 }
            let lo = from
            if lo < text.starts.count && text.starts[lo] == utf8 { return lo }
            return roundingUp ? min(lo, chars) : max(lo - 1, 0)
        }
        var startCursor = 0
        var endCursor = 0
        let spans = tokens.map {
            (
                start: char($0.start, roundingUp: false, from: &startCursor),
                end: char($0.end, roundingUp: true, from: &endCursor), matched: $0.matched,
                // The word's own scalars: a mark that joins it to the next (an emoji modifier)
                // is shown with it but not counted in its range.
                scalars: scalarCount(utf8[$0.start..<$0.end]), utf8: $0.start
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
        var end = min(chars, start + width)
        if end < chars, let space = (start..<end).last(where: { text.isSpace[$0] }), space > start + width / 2 {
            end = space
        }

        // The snippet is put together as UTF-8: each character's bytes are the source's.
        let ellipsis: [UInt8] = [0xE2, 0x80, 0xA6]
        var out: [UInt8] = start > 0 ? ellipsis : []
        out.reserveCapacity(4 * width)
        var scalars = start > 0 ? 1 : 0
        var marks: [Range<Int>] = []
        var k = 0
        var i = start
        var lastWasSpace = false
        while i < end {
            while k < spans.count && spans[k].start < i { k += 1 }
            // The words that start in this character: more than one where a character holds
            // several (a family emoji joined by zero-width joiners, a flag's two halves), each
            // marked at its own scalars, as in titles (before 2026-12-07 only the first was
            // looked at: `👩` found "👨‍👩‍👧" but marked nothing).
            var last = k
            while last < spans.count && spans[last].start == i { last += 1 }
            if last > k, spans[k..<last].contains(where: \.matched),
                let wordEnd = spans[k..<last].map(\.end).max(), wordEnd <= end
            {
                let from = text.starts[i]
                let word = utf8[from..<text.starts[wordEnd]]
                let n = scalarCount(word)
                for span in spans[k..<last] where span.matched {
                    let at = scalars + scalarCount(utf8[from..<max(from, span.utf8)])
                    marks.append(at..<min(at + span.scalars, scalars + n))
                }
                out += word
                scalars += n
                i = wordEnd
                lastWasSpace = false
                continue
            }
            if text.isSpace[i] {
                if !lastWasSpace {
                    out.append(0x20)
                    scalars += 1
                }
                lastWasSpace = true
            } else if text.starts[i + 1] - text.starts[i] == 1 {
                // A character of one byte (most of them), without a slice.
                out.append(utf8[text.starts[i]])
                scalars += 1
                lastWasSpace = false
            } else {
                let c = utf8[text.starts[i]..<text.starts[i + 1]]
                out += c
                scalars += scalarCount(c)
                lastWasSpace = false
            }
            i += 1
        }
        while out.last == 0x20 { out.removeLast() }
        if end < chars { out += ellipsis }
        return (String(decoding: out, as: UTF8.self), marks)
    }

    /// The Unicode scalars of valid UTF-8: its bytes that do not continue a scalar.
    private static func scalarCount(_ utf8: ArraySlice<UInt8>) -> Int {
        utf8.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }

    /// A text's characters (grapheme clusters, as `String` counts them): where each starts in
    /// its UTF-8 (and the end), and whether it is white space.
    struct Characters {
        var starts: [Int] = []
        var isSpace: [Bool] = []
        var count: Int { isSpace.count }

        /// `utf8` is `text`'s. An ASCII byte followed by another is one character (but CR LF),
        /// found without breaking the text into grapheme clusters (most of the instructions of
        /// a search's snippets); the text is broken into clusters only where it goes beyond
        /// ASCII (a note of 50 KB with a few dashes and quotes beyond ASCII was broken whole: a
        /// search showing 20 such notes spent half its instructions here). `general` breaks all
        /// of it, as the reference the tests compare.
        init(_ text: String, _ utf8: [UInt8], general: Bool = false) {
            if general {
                // The reference: every character as `String` breaks the text.
                var offset = 0
                for c in text {
                    starts.append(offset)
                    isSpace.append(c.isWhitespace)
                    offset += c.utf8.count
                }
                starts.append(utf8.count)
                return
            }
            let n = utf8.count
            // At most a character a byte: both arrays written in place (appending to them was a
            // quarter of the snippets' instructions on long notes).
            var count = 0
            var spaces: [Bool] = []
            starts = [Int](unsafeUninitializedCapacity: n + 1) { st, made in
                spaces = [Bool](unsafeUninitializedCapacity: n) { sp, madeSpaces in
                    utf8.withUnsafeBufferPointer { u in
                        var i = 0
                        while i < n {
                            let b = u[i]
                            if b < 0x80 {
                                if b == 0x0D && i &+ 1 < n && u[i &+ 1] == 0x0A {
                                    st[count] = i
                                    sp[count] = true
                                    count &+= 1
                                    i &+= 2
                                    continue
                                }
                                // An ASCII byte before another (or at the end) is a character of its own.
                                if i &+ 1 == n || u[i &+ 1] < 0x80 {
                                    st[count] = i
                                    // White space among ASCII: tab, line feed, vertical tab, form
                                    // feed, carriage return, space.
                                    sp[count] = b == 0x20 || (b >= 0x09 && b <= 0x0D)
                                    count &+= 1
                                    i &+= 1
                                    continue
                                }
                            }
                            // Text beyond ASCII, broken into characters by `String`, up to the first
                            // ASCII byte that follows another (not LF after CR): a character always
                            // starts there, as no rule joins an ASCII character to the one before
                            // unless that is CR (or a prepended mark, which is not ASCII).
                            var j = i &+ 1
                            while j < n && !(u[j] < 0x80 && u[j &- 1] < 0x80 && !(u[j &- 1] == 0x0D && u[j] == 0x0A)) {
                                j &+= 1
                            }
                            var offset = i
                            for c in String(decoding: UnsafeBufferPointer(rebasing: u[i..<j]), as: UTF8.self) {
                                st[count] = offset
                                // White space when its first scalar is: among ASCII, the rule
                                // above, without a look-up of the scalar's properties.
                                let first = c.utf8.first ?? 0
                                sp[count] =
                                    first < 0x80 ? first == 0x20 || (first >= 0x09 && first <= 0x0D) : c.isWhitespace
                                count &+= 1
                                offset &+= c.utf8.count
                            }
                            i = j
                        }
                    }
                    madeSpaces = count
                }
                st[count] = n
                made = count &+ 1
            }
            isSpace = spaces
        }
    }

    /// Where the words of `text` (a title, whole) that match `query` are: offsets in Unicode
    /// scalars, as ``extract(title:body:query:width:language:)`` gives them.
    public static func matches(in text: String, query: SearchQuery, inTitle: Bool, language: SearchLanguage = .none)
        -> [Range<Int>]
    {
        matches(in: text, matcher: Matcher(query: query, stemmer: language.makeStemmer(), inTitle: inTitle))
    }

    static func matches(in text: String, matcher: Matcher) -> [Range<Int>] {
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
        for t in matcher.tokens(of: text) where t.matched {
            if let a = utf8ToScalar[t.start], let b = utf8ToScalar[t.end] { ranges.append(a..<b) }
        }
        return ranges
    }

    /// `text` with each of `ranges` (scalar offsets, as ``extract(title:body:query:width:language:)``
    /// gives them) wrapped in `highlight`. A caller that shows some scalars of the text as others,
    /// one for one, wraps the shown text with the same ranges.
    public static func wrap(_ text: String, _ ranges: [Range<Int>], _ highlight: (open: String, close: String))
        -> String
    {
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

    /// Which words match a query's (not excluded) clauses: by stem for words, as written for
    /// prefixes, and for a phrase only where its words stand in order, next to each other (a
    /// word of a phrase alone elsewhere is not a match).
    struct Matcher {
        /// The stems of the words that match alone.
        let stems: [[UInt8]]
        let prefixes: [[UInt8]]
        /// The stems of the phrases' words, each once, and each phrase as numbers of them.
        let phraseStems: [[UInt8]]
        let phrases: [[Int]]
        let stemmer: Stemmer?
        /// The same stemmer remembering the stems of the words it met, for long texts (see
        /// ``rememberingFrom``), made when the first one comes; or nil.
        let remembering: RememberingStemmer?

        /// Texts of at least this many UTF-8 bytes are stemmed through ``remembering``: a long
        /// text repeats its words (the snippets of 20 Swift Evolution proposals, 20 to 60 KB
        /// each, stemmed 160,000 words, 31% of a search's instructions), and its cache's pages
        /// cost a short text more than its stemming.
        static let rememberingFrom = 8 << 10

        init(query: SearchQuery, stemmer: Stemmer?, remembering: RememberingStemmer? = nil, inTitle: Bool) {
            self.stemmer = stemmer
            self.remembering = remembering
            let positive = query.clauses.filter {
                !$0.excluded && (inTitle ? $0.field != .body : $0.field != .title)
            }
            func stem(_ t: [UInt8]) -> [UInt8] { stemmer?.stem(t) ?? t }
            let words = positive.filter { $0.kind == .term || ($0.kind == .phrase && $0.terms.count == 1) }
            stems = Array(Set(words.flatMap { $0.terms.map(stem) }))
            prefixes = positive.filter { $0.kind == .prefix }.compactMap(\.terms.first)
            var phraseStems: [[UInt8]] = []
            var phrases: [[Int]] = []
            for c in positive where c.kind == .phrase && c.terms.count > 1 {
                phrases.append(
                    c.terms.map { t in
                        let s = stem(t)
                        if let k = phraseStems.firstIndex(of: s) { return k }
                        phraseStems.append(s)
                        return phraseStems.count - 1
                    })
            }
            self.phraseStems = phraseStems
            self.phrases = phrases
        }

        /// The words of `text` (UTF-8 offsets) and whether each matches.
        func tokens(of text: String) -> [(start: Int, end: Int, matched: Bool)] {
            var tokens: [(start: Int, end: Int, matched: Bool)] = []
            // Each word's number among the phrases' stems (-1: none), when there are phrases.
            var codes: [Int] = []
            let stemmer = text.utf8.count >= Self.rememberingFrom ? remembering?.stemmer ?? stemmer : stemmer
            /// Whether `word` (a stem) is one of the query's, and its number among the phrases'.
            /// A function, not a closure kept in a constant: such a closure put the two
            /// variables it sets on the heap, for every word of the text.
            func look(_ word: UnsafeBufferPointer<UInt8>, _ matched: inout Bool, _ code: inout Int) {
                if !matched { matched = Matcher.index(of: word, in: stems) != nil }
                if !phrases.isEmpty { code = Matcher.index(of: word, in: phraseStems) ?? -1 }
            }
            Tokenizer.forEachTerm(in: text) { t, s, e in
                var matched = prefixes.contains { Matcher.starts(t, with: $0) }
                var code = -1
                // A word a prefix matched needs no stem, unless phrases number it.
                if !matched || !phrases.isEmpty {
                    if let stemmer {
                        stemmer.stem(t) { look($0.isEmpty ? t : $0, &matched, &code) }
                    } else {
                        look(t, &matched, &code)
                    }
                }
                tokens.append((s, e, matched))
                if !phrases.isEmpty { codes.append(code) }
            }
            for phrase in phrases where phrase.count <= codes.count {
                for i in 0...(codes.count - phrase.count) where codes[i] == phrase[0] {
                    guard (1..<phrase.count).allSatisfy({ codes[i + $0] == phrase[$0] }) else { continue }
                    for k in i..<(i + phrase.count) { tokens[k].matched = true }
                }
            }
            return tokens
        }

        /// Where `word` is among `list`, without making an array of it for each word of the
        /// text (a query has few stems).
        private static func index(of word: UnsafeBufferPointer<UInt8>, in list: [[UInt8]]) -> Int? {
            list.firstIndex { $0.count == word.count && starts(word, with: $0) }
        }

        /// Whether `word` starts with `prefix`, compared with `memcmp` (the generic comparison
        /// goes a byte at a time, for every word of every note shown).
        @inline(__always)
        private static func starts(_ word: UnsafeBufferPointer<UInt8>, with prefix: [UInt8]) -> Bool {
            guard word.count >= prefix.count else { return false }
            guard let w = word.baseAddress, !prefix.isEmpty else { return true }
            return prefix.withUnsafeBufferPointer { memcmp(w, $0.baseAddress!, prefix.count) == 0 }
        }
    }
}

/// The snippets of one query over many notes (a page of search results): the stemmer is made
/// and the query's stems found once, not for each note. Gives what ``Snippet`` gives. Belongs to
/// one thread.
///
/// ```swift
/// let snippets = SnippetMaker(query: q, language: .english)
/// for n in page { print(snippets.make(title: n.title, body: n.body, highlight: nil)) }
/// ```
public struct SnippetMaker {
    private let inBody: Snippet.Matcher
    private let inTitle: Snippet.Matcher

    public init(query: SearchQuery, language: SearchLanguage = .none) {
        let stemmer = language.makeStemmer()
        let remembering = stemmer == nil ? nil : RememberingStemmer(language)
        inBody = Snippet.Matcher(query: query, stemmer: stemmer, remembering: remembering, inTitle: false)
        inTitle = Snippet.Matcher(query: query, stemmer: stemmer, inTitle: true)
    }

    /// ``Snippet/extract(title:body:query:width:language:)``.
    public func extract(title: String, body: String, width: Int = 160) -> (text: String, matches: [Range<Int>]) {
        Snippet.extract(title: title, body: body, width: width, matcher: body.isEmpty ? inTitle : inBody)
    }

    /// ``Snippet/make(title:body:query:width:highlight:language:)``.
    public func make(title: String, body: String, width: Int = 160, highlight: (open: String, close: String)?)
        -> String
    {
        let (text, matches) = extract(title: title, body: body, width: width)
        guard let highlight, !matches.isEmpty else { return text }
        return Snippet.wrap(text, matches, highlight)
    }

    /// ``Snippet/matches(in:query:inTitle:language:)`` of a title.
    public func matches(inTitle text: String) -> [Range<Int>] { Snippet.matches(in: text, matcher: inTitle) }
}

/// A stemmer of `language` that remembers the stems of the words it met, made when first asked
/// for: the snippets of short notes never make it. Belongs to one thread.
final class RememberingStemmer {
    private let language: SearchLanguage
    private var made: Stemmer?

    init(_ language: SearchLanguage) { self.language = language }

    var stemmer: Stemmer? {
        if made == nil { made = language.makeStemmer(remembering: true) }
        return made
    }
}
