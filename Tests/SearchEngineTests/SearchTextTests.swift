import Basics
import TestSupport
import Testing

@testable import SearchEngine

/// The tokenizer, the query parser and snippets: everything of search that needs no store.
@Suite("Search text")
struct SearchTextTests {
    private func terms(_ text: String) -> [String] {
        Tokenizer.terms(text).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("words are lowercased and lose their diacritics")
    func folding() {
        #expect(terms("Résumé RÉSUMÉ resume") == ["resume", "resume", "resume"])
        #expect(terms("Crème Brûlée à la Ñandú") == ["creme", "brulee", "a", "la", "nandu"])
        #expect(terms("ΆΛΦΑ ἄλφα Ёлка йод") == ["αλφα", "αλφα", "елка", "иод"])
        #expect(terms("Straße ﬁnd ＡＢＣ１２ Œuvre Ærø") == ["strasse", "find", "abc12", "oeuvre", "aero"])
        #expect(terms("Tiếng Việt İstanbul") == ["tieng", "viet", "istanbul"])
        // Decomposed input (e + combining acute) folds like the composed form.
        #expect(terms("e\u{301}cole") == terms("école"))
    }

    @Test("Hebrew points and Arabic harakat fold away, as accents do; the letters stay whole")
    func pointsAndHarakat() {
        // שָׁלוֹם (pointed) is שלום; cantillation marks go too; maqaf (U+05BE) still separates.
        #expect(terms("שָׁלוֹם שלום") == ["שלום", "שלום"])
        #expect(terms("בְּרֵאשִׁ֖ית") == ["בראשית"])
        #expect(terms("בית־ספר") == ["בית", "ספר"])
        // كَتَبَ is كتب; tatweel (كـتـب) only stretches the word; shadda and sukun fold too.
        #expect(terms("كَتَبَ كـتـب كتب") == ["كتب", "كتب", "كتب"])
        #expect(terms("مُحَمَّد") == ["محمد"])
        // Marks that belong to their word are kept (Devanagari's vowel signs and virama).
        #expect(terms("हिन्दी") == ["हिन्दी"])
    }

    @Test("a stemmer that remembers stems gives the Snowball stemmer's stems, repeated words and all")
    func rememberedStems() throws {
        let plain = try #require(SearchLanguage.english.makeStemmer())
        let remembering = try #require(SearchLanguage.english.makeStemmer(remembering: true))
        var words = [
            "running", "runs", "run", "ran", "generously", "generalization", "caresses", "ponies", "ties", "sky",
            "", "a", "y", "yes", "dying", "happily", "internationalization", "abcdefghijklmnopqrstuvwx",
            "abcdefghijklmnopqrstuvwxy", "résumés", "straße", "naïvely", "1,000", "3.14", "東",
        ]
        // More distinct words than the cache has slots, so that sets overflow and words are
        // found in either slot of their set (each met twice before it is met again).
        for i in 0..<140_002 { words.append("w\(i % 70_001)ing") }
        for _ in 0..<2 {
            for w in words {
                let bytes = Array(w.utf8)
                #expect(remembering.stem(bytes) == plain.stem(bytes), "\(w)")
            }
        }
    }

    /// Before 2026-12-07 the first form met was shown: `showing "receivers"` for `recieve`.
    @Test("a stem is shown as the word the texts hold most often, then the shortest, not the first met")
    func wordForAStem() throws {
        let stemmer = try #require(SearchLanguage.english.makeStemmer())
        let stem = String(decoding: stemmer.stem(Array("receive".utf8)), as: UTF8.self)
        #expect(stemmer.stem(Array("receivers".utf8)) == Array(stem.utf8), "one stem of the three forms")
        let texts = ["Receivers of the parcel", "They receive it. Received?", "We receive mail"]
        #expect(Snippet.words(forStems: [stem], in: texts, language: .english) == [stem: "receive"])
        // As often: the shortest; as long: the first in byte order, whatever the texts' order.
        let once = ["Receivers", "received", "receive"]
        #expect(Snippet.words(forStems: [stem], in: once, language: .english) == [stem: "receive"])
        #expect(Snippet.words(forStems: [stem], in: once.reversed(), language: .english) == [stem: "receive"])
        #expect(
            Snippet.words(forStems: [stem], in: ["receivers", "received"], language: .english) == [stem: "received"])
        #expect(Snippet.words(forStems: [stem, "absent"], in: texts, language: .english)["absent"] == nil)
    }

    @Test("numbers, apostrophes and separators")
    func wordBoundaries() {
        #expect(terms("don't stop 3.14 1,000 end. x,y") == ["dont", "stop", "3.14", "1,000", "end", "x", "y"])
        #expect(
            terms("snake_case foo-bar e-mail@host.org") == ["snake", "case", "foo", "bar", "e", "mail", "host", "org"])
        #expect(terms("abc123 2024-05-01") == ["abc123", "2024", "05", "01"])
        #expect(terms("co\u{00AD}operate") == ["cooperate"])  // a soft hyphen never splits
    }

    @Test("CJK, kana and emoji are one term each; other scripts stay whole")
    func scripts() {
        #expect(terms("東京都に行く") == ["東", "京", "都", "に", "行", "く"])
        #expect(terms("party🎉 👨‍👩‍👧!") == ["party", "🎉", "👨", "👩", "👧"])
        #expect(terms("हिन्दी भाषा") == ["हिन्दी", "भाषा"])
        #expect(terms("한국어 텍스트") == ["한국어", "텍스트"])
    }

    @Test("odd input gives no terms and no trap")
    func oddInput() {
        #expect(terms("") == [])
        #expect(terms("\u{301}\u{200D}\u{FE0F} ... ---") == [])
        let long = terms(String(repeating: "a", count: 100) + " " + String(repeating: "Ж", count: 100))
        #expect(long.map(\.utf8.count) == [64, 64])
        #expect(long[1].hasPrefix(String(repeating: "ж", count: 28)))
        // A cut never splits a scalar: 27 two-byte letters, an ASCII one, then two-byte ones
        // again (the 56th byte is the second of a letter's two).
        let odd = terms(String(repeating: "ж", count: 27) + "a" + String(repeating: "ж", count: 20))
        #expect(odd.first?.utf8.count == 55 + 8)
        #expect(odd.first?.hasPrefix(String(repeating: "ж", count: 27) + "a") == true)
    }

    @Test("a word longer than a term ends in a hash of all of it: two long words that start alike are two terms")
    func longWords() {
        let x64 = String(repeating: "x", count: 64)
        let yes = terms(x64 + "yes")
        let nope = terms(x64 + "nope")
        // Before search-7 both were their first 64 bytes, one term.
        #expect(yes.count == 1 && nope.count == 1 && yes != nope, "\(yes) \(nope)")
        #expect(yes[0].utf8.count == 64 && yes[0].hasPrefix(String(repeating: "x", count: 56)))
        #expect(yes == terms(x64.uppercased() + "YES"), "folded, then hashed")
        #expect(terms(x64) == [x64], "64 bytes stay as they are")
        #expect(terms(x64 + "a") != terms(x64 + "b") && terms(x64 + "ж") != terms(x64 + "a"))
    }

    @Test("a long word's hash is in capitals, which no word's own term holds: no 64-byte word and no prefix meets it")
    func longWordHashApart() {
        let x56 = String(repeating: "x", count: 56)
        let long = terms(x56 + String(repeating: "z", count: 20))[0]
        let hash = String(long.dropFirst(56))
        // Before, the hash was 8 lowercase hex digits: the 64-byte word written as that term
        // was that term (a search for either found both), and `x56` and the hash's first
        // digits, as a prefix, found the long word, though it does not start so.
        #expect(terms(x56 + hash) != [long], "a 64-byte word is never a long word's term")
        #expect(!long.hasPrefix(x56 + hash.prefix(3).lowercased()), "no folded prefix reaches into the hash")
        #expect(hash.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x50 }, "\(hash)")
        // Every scalar folds to no ASCII capital, so no word's own term holds one.
        var capitals: [UInt32] = []
        for v in UInt32(0x80)...0x10_FFFF where !(0xD800...0xDFFF).contains(v) {
            Tokenizer.foldNonASCII(v) { if $0 >= 0x41 && $0 <= 0x5A { capitals.append(v) } }
        }
        #expect(capitals.isEmpty, "\(capitals.prefix(20).map { String($0, radix: 16) })")
        #expect(terms("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ["abcdefghijklmnopqrstuvwxyz"])
    }

    @Test("tokens report their place in the text")
    func offsets() {
        var spans: [String] = []
        let text = "Hi, Résumé—東京!"
        Tokenizer.forEachTerm(in: text) { _, start, end in
            let u = Array(text.utf8)
            spans.append(String(decoding: u[start..<end], as: UTF8.self))
        }
        #expect(spans == ["Hi", "Résumé", "東", "京"])
    }

    // MARK: Query parser

    private func parse(_ text: String) throws(SearchQueryError) -> String {
        try SearchQuery.parse(text).description
    }

    @Test("each query form parses")
    func queryForms() throws {
        #expect(try parse("budget plan") == "budget plan")
        #expect(try parse("\"Next  Year\"") == "\"next year\"")
        #expect(try parse("plan*") == "plan*")
        #expect(try parse("-draft budget") == "budget -draft")
        #expect(try parse("TITLE:Budget") == "title:budget")
        #expect(try parse("title:\"next year\" -title:old* x") == "title:\"next year\" x -title:old*")
        #expect(try parse("e-mail") == "\"e mail\"")
        #expect(try parse("東京") == "\"東 京\"")
        #expect(try parse("\"résumé\"") == "resume")
        #expect(try parse("a & b") == "a b")
        #expect(try parse("ham OR milk") == "ham OR milk")
        #expect(try parse("ham | milk | eggs") == "ham OR milk OR eggs")
        #expect(try parse("a b OR c") == "(a b) OR c")
        #expect(try parse("a (b OR c)") == "a (b OR c)")
        #expect(try parse("a AND b") == "a b")
        #expect(try parse("a -(b OR c)") == "a -(b OR c)")
        #expect(try parse("title:(a OR b)") == "title:a OR title:b")
        #expect(try parse("BODY:word title:x") == "body:word title:x")
        #expect(try parse("or and Or") == "or and or")
        #expect(try parse("(a)") == "a")
        #expect(try parse("f(x)") == "f x")
        #expect(try parse("ORANGE ANDES") == "orange andes")
        // A pasted paragraph is a query of plain words, however long.
        let paragraph = Array(repeating: "the quick brown fox jumps over the lazy dog", count: 40).joined(
            separator: " ")
        #expect(try SearchQuery.parse(paragraph).clauses.count == 360)
        #expect(try SearchQuery.parse(paragraph).isPlainWords)
        #expect(try !SearchQuery.parse("a OR b").isPlainWords)
        let q = try SearchQuery.parse("-\"a b\" c*")
        #expect(q.clauses.map(\.kind) == [.prefix, .phrase])
        #expect(q.clauses.map(\.excluded) == [false, true])
        // A word the tokenizer splits is a phrase too, marked as one word, unlike a quoted one.
        let compound = try SearchQuery.parse("wind-tunnel \"wind tunnel\" wind")
        #expect(compound.clauses.map(\.kind) == [.phrase, .phrase, .term])
        #expect(compound.clauses.map(\.compound) == [true, false, false])
    }

    @Test("bad queries say what is wrong")
    func queryErrors() {
        func reason(_ text: String) -> SearchQueryError.Reason? {
            do {
                _ = try SearchQuery.parse(text)
                return nil
            } catch { return error.reason }
        }
        #expect(reason("") == .empty)
        #expect(reason("   ") == .empty)
        #expect(reason("!!! ...") == .noSearchableWords)
        #expect(reason("-draft") == .onlyExclusions)
        #expect(reason("\"open phrase") == .unterminatedQuote)
        #expect(reason("*") == .emptyPrefix)
        #expect(reason("title:") == .emptyField)
        #expect(reason(Array(repeating: "w", count: 1_025).joined(separator: " ")) == .tooManyTerms)
        #expect(reason(String(repeating: "a", count: 70_000)) == .tooLong)
        #expect(reason("a OR -b") == .onlyExclusions)
        #expect(reason("a (-b)") == .groupOnlyExclusions)
        #expect(reason("(-b OR c)") == .onlyExclusions, "an alternative that only excludes, not the group")
        #expect(reason("(a") == .unbalancedParenthesis)
        #expect(reason("a)") == .unbalancedParenthesis)
        #expect(reason("a OR") == .danglingOperator)
        #expect(reason("| a") == .danglingOperator)
        #expect(reason("a AND") == .danglingOperator)
        #expect(reason("a OR OR b") == .danglingOperator)
        #expect(reason("title:(body:x)") == .conflictingFields)
        #expect(reason(String(repeating: "(", count: 70) + "a" + String(repeating: ")", count: 70)) == .tooDeep)
        #expect(reason(String(repeating: "(", count: 64) + "a" + String(repeating: ")", count: 64)) == nil)
        #expect(reason(String(repeating: "(", count: 65) + "a" + String(repeating: ")", count: 65)) == .tooDeep)
        #expect(reason("title:-x y") == .misplacedExclusion)
        // Errors name the position, counted in characters from 1.
        func at(_ text: String) -> Int? {
            do {
                _ = try SearchQuery.parse(text)
                return nil
            } catch { return error.offset.map { $0 + 1 } }
        }
        #expect(at("ham OR") == 5)
        #expect(at("ham (milk") == 5)
        #expect(at("a b)") == 4)
        #expect(at("x AND") == 3)
        #expect(at("optimization ( -O ) enabled") == 14, "a group that only excludes, from its parenthesis")
        #expect(at("a OR -b") == 6)
        #expect(SearchQueryError(.unterminatedQuote, at: 0).description.contains("closing quote"))
    }

    @Test("read leniently, broken syntax becomes the words of the text; limits and empty texts are still errors")
    func lenientQueries() throws {
        func words(_ text: String) throws -> (String, SearchQueryError.Reason?) {
            let (q, why) = try SearchQuery.parseLeniently(text)
            return (q.description, why?.reason)
        }
        #expect(try words("wing flutter") == ("wing flutter", nil))
        #expect(try words("ham OR milk") == ("ham OR milk", nil), "a good query is read as written")
        #expect(try words("wing (flutter") == ("wing flutter", .unbalancedParenthesis))
        #expect(try words("what is \"mach number") == ("what is mach number", .unterminatedQuote))
        #expect(try words("lift OR") == ("lift", .danglingOperator), "an operator left alone is dropped")
        #expect(try words("milk title:(eggs") == ("milk eggs", .unbalancedParenthesis), "field names are dropped")
        #expect(try words("the title of (a") == ("the title of a", .unbalancedParenthesis), "the word title stays")
        #expect(try words("Title:Body:ham") == ("ham", .conflictingFields), "field names in any case are dropped")
        #expect(try words("BODY:(eggs milk") == ("eggs milk", .unbalancedParenthesis))
        // What the text excludes stays out, rather than being sought.
        #expect(try words("budget -draft (2024") == ("budget 2024 -draft", .unbalancedParenthesis))
        #expect(try words("budget -dr*ft (2024") == ("budget 2024", .misplacedStar), "the first fault is named")
        #expect(try words("plan -\"old draft\" (x") == ("plan x", .unbalancedParenthesis))
        #expect(try words("plan -(a OR b) \"x") == ("plan x", .unterminatedQuote))
        #expect(try words("plan -\"old draft") == ("plan", .unterminatedQuote))
        // A query that only excludes, or a misplaced minus, is still refused: its meaning is clear.
        for refused in ["a OR -b", "title:-x y", "-draft"] {
            #expect(throws: SearchQueryError.self) { try SearchQuery.parseLeniently(refused) }
        }
        #expect(
            try words("well-known * effects") == (
                try SearchQuery.parse("well-known effects").description, .emptyPrefix
            ),
            "a hyphen inside a word stays")
        for bad in ["", "!!! ...", String(repeating: "a", count: 70_000)] {
            #expect(throws: SearchQueryError.self) { try SearchQuery.parseLeniently(bad) }
        }
    }

    @Test("100,000 random queries never trap")
    func fuzzParser() {
        var rng = SeededGenerator(seed: 0x5EA2C4)
        let pieces: [String] = [
            "a", "b", "z", "é", "\u{301}", "\"", "\"", "-", "*", ":", "title:", "TITLE:", " ", " ", "  ", "\t", "\n",
            "東", "🎉", "\u{200D}", "'", ".", ",", "3", "0", "-\"", "*\"", "x*", "ß", "İ", "\u{FFFD}", "\u{0}", "ﬁ",
            "Ж", "ά", "\u{10FFFF}", "title", "\\", "(", ")", "OR", " OR ", "|", " AND ", "body:", "-(",
        ]
        var parsed = 0
        let index = InMemorySearchIndex(documents: [
            SearchDocument(id: Identifier(high: 1, low: 1), title: "a b", body: "z é 東 🎉 3", updatedAt: 0)
        ])
        for _ in 0..<100_000 {
            var s = ""
            for _ in 0..<rng.next(in: 0...12) { s += pieces[rng.next(below: pieces.count)] }
            if let q = try? SearchQuery.parse(s) {
                parsed += 1
                #expect(!q.clauses.isEmpty && q.clauses.contains { !$0.excluded })
                #expect(q.clauses.allSatisfy { !$0.terms.isEmpty && $0.terms.allSatisfy { !$0.isEmpty } })
                _ = index.search(q, filter: .everything, limit: 3)
                let made = Snippet.make(title: "a b", body: s, query: q, width: 20, highlight: ("[", "]"))
                // One maker for many notes gives what each call gives alone.
                if parsed % 16 == 0 {
                    let maker = SnippetMaker(query: q, language: .english)
                    for (title, body) in [("a b", s), (s, ""), ("z", "a b " + s)] {
                        #expect(
                            maker.make(title: title, body: body, width: 20, highlight: ("[", "]"))
                                == Snippet.make(
                                    title: title, body: body, query: q, width: 20, highlight: ("[", "]"),
                                    language: .english))
                        #expect(
                            maker.matches(inTitle: title)
                                == Snippet.matches(in: title, query: q, inTitle: true, language: .english))
                    }
                    #expect(
                        SnippetMaker(query: q).make(title: "a b", body: s, width: 20, highlight: ("[", "]")) == made)
                }
            }
        }
        #expect(parsed > 10_000)
    }

    // MARK: Snippets

    @Test("a body over a megabyte gives the snippet of its whole text from a region around its matches")
    func snippetOfALongBody() throws {
        var rng = SeededGenerator(seed: 7)
        let words = ["alpha", "beta", "gamma", "délta", "epsilon", "zeta", "théta", "kappa", "λάμδα", "omicron"]
        func text(_ bytes: Int) -> [String] {
            var out: [String] = []
            var n = 0
            while n < bytes {
                let w = words[rng.below(words.count)]
                out.append(w)
                n += w.utf8.count + 1
            }
            return out
        }
        let base = text(Snippet.wholeTextLimit + 200_000)
        let q = try SearchQuery.parse("needle OR haystack")
        let matcher = Snippet.Matcher(query: q, stemmer: nil, inTitle: false)
        var cases: [[String]] = []
        // A match near the start, at the very end, none, and a cluster of three in the middle
        // beside a lone one.
        for at in [3, base.count - 1] {
            var t = base
            t[at] = "needle"
            cases.append(t)
        }
        cases.append(base)
        var cluster = base
        cluster[1_000] = "needle"
        for k in [base.count / 3, base.count / 3 + 4, base.count / 3 + 9] { cluster[k] = "haystack" }
        cases.append(cluster)
        for (i, words) in cases.enumerated() {
            let body = words.joined(separator: i % 2 == 0 ? " " : "\n")
            #expect(body.utf8.count > Snippet.wholeTextLimit)
            let whole = Snippet.extract(body, width: 160, matcher: matcher)
            let regional = Snippet.extract(title: "T", body: body, width: 160, matcher: matcher)
            #expect(regional.text == whole.text, "case \(i)")
            #expect(regional.matches == whole.matches, "case \(i)")
        }
    }

    @Test("snippets mark matches and cut around the best window")
    func snippets() throws {
        let q = try SearchQuery.parse("budget plan* -draft")
        let body = "Intro words here.\n\nThe Budget for next year: planning starts; the draft is old."
        #expect(
            Snippet.make(title: "T", body: body, query: q, width: 200, highlight: ("[", "]"))
                == "Intro words here. The [Budget] for next year: [planning] starts; the draft is old.")
        #expect(
            Snippet.make(title: "T", body: body, query: q, width: 200, highlight: nil)
                == "Intro words here. The Budget for next year: planning starts; the draft is old.")
        let long =
            String(repeating: "filler ", count: 60) + "the budget is here " + String(repeating: "tail ", count: 60)
        let s = Snippet.make(title: "T", body: long, query: q, width: 40, highlight: ("<", ">"))
        #expect(s.hasPrefix("…") && s.hasSuffix("…"))
        #expect(s.contains("<budget>"))
        #expect(s.count <= 40 + 2 + 2)
        // No match in the body: its beginning; an empty body: the title.
        #expect(Snippet.make(title: "T", body: "nothing here", query: q, highlight: ("[", "]")) == "nothing here")
        #expect(Snippet.make(title: "Budget", body: "", query: q, highlight: ("[", "]")) == "[Budget]")
        let cjk = try SearchQuery.parse("東京")
        #expect(Snippet.make(title: "", body: "私は東京に", query: cjk, highlight: ("[", "]")) == "私は[東][京]に")
        // A phrase marks its words where they stand in order, next to each other, not alone;
        // the window goes to the phrase (it went to the lone words before 2026-12-04).
        let phrase = try SearchQuery.parse("\"async let\"")
        #expect(
            Snippet.make(
                title: "", body: "async func; let x = 1; async let y = f()", query: phrase, highlight: ("[", "]"))
                == "async func; let x = 1; [async] [let] y = f()")
        let far = String(repeating: "async and let apart. ", count: 20) + "here: async let binding"
        let cut = Snippet.make(title: "", body: far, query: phrase, width: 40, highlight: ("[", "]"))
        #expect(cut.contains("[async] [let] binding"), "\(cut)")
        #expect(
            Snippet.matches(in: "let async let", query: phrase, inTitle: true) == [4..<9, 10..<13])
        // A CR LF is one character, in the ASCII path too; every white space run is one space.
        #expect(
            Snippet.make(title: "", body: "a\r\nbudget\t\u{0B}\u{0C}x", query: q, highlight: ("[", "]"))
                == "a [budget] x")
        // Words inside one character (a family emoji joined by zero-width joiners, a flag's two
        // halves) are each marked at their own scalars, as in titles: before 2026-12-07 only the
        // character's first word was looked at, so `👩` found "👨‍👩‍👧" and marked nothing, and a
        // flag was marked half.
        let family = "a 👨\u{200D}👩\u{200D}👧 b"
        let woman = try SearchQuery.parse("👩")
        #expect(Snippet.extract(title: "", body: family, query: woman).matches == [4..<5])
        #expect(Snippet.matches(in: family, query: woman, inTitle: true) == [4..<5])
        #expect(
            Snippet.make(title: "", body: family, query: woman, highlight: ("[", "]")) == "a 👨\u{200D}[👩]\u{200D}👧 b")
        let flag = try SearchQuery.parse("🇯🇵")
        #expect(Snippet.extract(title: "", body: "to 🇯🇵 soon", query: flag).matches == [3..<4, 4..<5])
        // A byte-order mark that starts the body is not shown, nor counted in the offsets.
        let marked = Snippet.extract(title: "T", body: "\u{FEFF}budget\r\nplan", query: q)
        #expect(marked.text == "budget plan" && marked.matches == [0..<6, 7..<11], "\(marked)")
    }

    @Test(
        "snippets see the same characters and white space as grapheme breaking of the whole text, which they skip where it is ASCII",
        arguments: [false, true])
    func snippetCharacters(beyondASCII: Bool) {
        var rng = SeededGenerator(seed: 7)
        var pieces = ["a", "b", " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{1F}", "~", "\u{7F}", "\n\r"]
        if beyondASCII {
            // Marks that join what comes before (combining, zero-width joiner, spacing, virama),
            // a prepended mark (joins what follows), flags' halves, emoji, white space beyond
            // ASCII, letters of other scripts.
            pieces += [
                "é", "e\u{301}", "\u{301}", "\u{200D}", "\u{93E}", "\u{94D}", "क", "\u{600}", "🇫", "🇷", "🎉", "👩",
                "\u{1F3FD}", "\u{A0}", "\u{85}", "\u{2028}", "\u{3000}", "東", "—", "\u{FE0F}",
            ]
        }
        for _ in 0..<4_000 {
            let text = (0..<rng.below(40)).map { _ in pieces[rng.below(pieces.count)] }.joined()
            let utf8 = Array(text.utf8)
            let fast = Snippet.Characters(text, utf8)
            let general = Snippet.Characters(text, utf8, general: true)
            #expect(fast.starts == general.starts && fast.isSpace == general.isSpace, "\(Array(text.utf8))")
        }
    }

    @Test("titles of ASCII fold eight bytes at a time exactly as a scalar at a time")
    func asciiFoldMatchesScalars() {
        // Words, capitals, runs and kinds of white space, at every length around the 8-byte
        // blocks, from a fixed seed.
        let alphabet = Array("aZ9 \t\n\r\u{0B}\u{0C}\u{1F}-Mx  Q".unicodeScalars)
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<next(40) { text.append(alphabet[next(alphabet.count)]) }
            let s = String(text)
            if TextFolding.fold(s) != TextFolding.foldScalars(s) { mismatches.append(s.debugDescription) }
        }
        for s in [
            "", " ", "        ", "ABCDEFGH", " ABCDEFG", "ABCDEFG ", "ABCD EFGH IJKL", "ABCDEFG  H", "\tABCDEFGH\t",
        ] {
            if TextFolding.fold(s) != TextFolding.foldScalars(s) { mismatches.append(s.debugDescription) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(TextFolding.fold("  The QUICK\tbrown   Fox  ") == "the quick brown fox")
        #expect(TextFolding.fold("ABCDEFGHé") == TextFolding.foldScalars("ABCDEFGHé"), "a byte over 0x7F after a block")
    }

    @Test("every ASCII byte, and bytes over 0x7F anywhere, fold eight at a time as a scalar at a time")
    func asciiFoldEveryByte() {
        var state: UInt64 = 0xF01D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        // Mostly white space and capitals, so that runs cross the blocks' bounds often.
        let likely: [UInt8] = [0x20, 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x41, 0x5A, 0x61, 0x1C, 0x1F, 0x7F, 0x00]
        var mismatches: [String] = []
        for round in 0..<60_000 {
            var bytes: [UInt8] = []
            for _ in 0..<next(41) { bytes.append(next(3) == 0 ? UInt8(next(128)) : likely[next(likely.count)]) }
            if round % 7 == 0, !bytes.isEmpty { bytes.insert(contentsOf: Array("é".utf8), at: next(bytes.count)) }
            let s = String(decoding: bytes, as: UTF8.self)
            let viaUTF8 = bytes.withUnsafeBytes { TextFolding.fold(utf8: $0) }
            if TextFolding.fold(s) != TextFolding.foldScalars(s) || viaUTF8 != TextFolding.foldScalars(s) {
                mismatches.append("\(bytes)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
    }
}
