import Foundation
import Testing

@testable import NotesCLI

/// The search command as a new user meets it: OR, groups, fields, forgiving matching and its
/// messages, and refused queries.
@Suite("CLI: search")
struct CLISearchTests {
    /// The titles found, by the query as written (`--exact`) unless `forgiving`.
    func titles(_ s: Sandbox, _ args: String..., forgiving: Bool = false) throws -> [String] {
        let r = s.run(["search"] + args + ["--json"] + (forgiving ? [] : ["--exact"]))
        try #require(r.code == 0, "notes search \(args): \(r)")
        return try r.array().compactMap { $0["title"] as? String }
    }

    func fixture() throws -> Sandbox {
        let s = try Sandbox()
        try s.add("Shopping", "--body", "buy ham and eggs")
        try s.add("Groceries", "--body", "milk and bread; receive the delivery at noon", "--category", "food")
        try s.add("Both", "--body", "ham with milk", "--tag", "kitchen")
        try s.add("Mediterranean diet", "--body", "olive oil")
        return s
    }

    @Test("OR, |, groups, exclusions of groups, body:, title: and category: select the right notes")
    func operators() throws {
        let s = try fixture()
        #expect(try Set(titles(s, "ham OR milk")) == ["Shopping", "Groceries", "Both"])
        #expect(try Set(titles(s, "ham | bread")) == ["Shopping", "Groceries", "Both"])
        #expect(try titles(s, "(ham OR bread) -eggs -with") == ["Groceries"])
        #expect(try Set(titles(s, "milk -(eggs OR delivery)")) == ["Both"])
        #expect(try titles(s, "body:milk category:food") == ["Groceries"])
        #expect(try titles(s, "milk category:\"food\"") == ["Groceries"])
        #expect(try titles(s, "title:(shopping OR nothing)") == ["Shopping"])
        #expect(try titles(s, "ham AND milk") == ["Both"])
        #expect(try titles(s, "tag:kitchen ham OR bread") == ["Both"])
        // An empty alternative in a category of its own: nothing, and exit 0.
        #expect(try titles(s, "milk category:food category:food") == ["Groceries"])
    }

    @Test("a note's aliases are words of its title: a search by an alias finds it first, and an alias removed no more")
    func aliasesAreSearched() throws {
        let s = try Sandbox()
        let proposal = try s.add("Async/await", "--body", "Functions may suspend.")
        try s.add("Citing", "--body", "Builds on SE-0296; see SE-0296 for the model.")
        // Before 2026-12-07 only the note citing it was found.
        #expect(try titles(s, "SE-0296") == ["Citing"])
        _ = try s.ok("alias", proposal, "SE-0296", "Swift concurrency")
        #expect(try titles(s, "SE-0296") == ["Async/await", "Citing"])
        #expect(try titles(s, "title:SE-0296") == ["Async/await"])
        #expect(try titles(s, "\"swift concurrency\"") == ["Async/await"])
        _ = try s.ok("alias", proposal, "--none")
        #expect(try titles(s, "SE-0296") == ["Citing"])
        #expect(try titles(s, "concurrency").isEmpty)
    }

    @Test("a typo and a question find notes, say how, and --exact keeps to the query as written")
    func forgiving() throws {
        let s = try fixture()
        let typo = try s.ok("search", "recieve")
        #expect(typo.lines.first == "no exact match for \"recieve\"; showing \"receive\"", "\(typo)")
        #expect(typo.stdout.contains("Groceries"))
        let jsonRun = try s.ok("search", "recieve", "--json")
        #expect(try jsonRun.array().map { $0["match"] as? String } == ["near-spelling"])
        // With --json the line goes to stderr, as a misread query's does (before 2026-12-07 it
        // was not given: a script saw "near-spelling" but not which word stood for "recieve").
        #expect(jsonRun.stderr == "no exact match for \"recieve\"; showing \"receive\"\n", "\(jsonRun)")
        #expect(try s.ok("search", "ham", "--json").stderr.isEmpty, "nothing beyond the query: no line")
        let some = try s.ok("search", "ham", "milk", "eggs")
        #expect(
            some.lines.first == "no note has every word; showing notes with some of them (--exact: only notes with all)"
        )
        // A query with OR falls back too (before 2026-12-07 it found nothing), in its own words.
        let alternatives = try s.ok("search", "olive zzzz OR bread zzzz")
        #expect(
            alternatives.lines.first
                == "no note matches the query as written; showing notes with some of its words (--exact: only notes that match)",
            "\(alternatives)")
        #expect(
            try titles(s, "olive zzzz OR bread zzzz", forgiving: true).sorted() == ["Groceries", "Mediterranean diet"])
        #expect(try titles(s, "olive zzzz OR bread zzzz").isEmpty)
        let partly = try s.ok("search", "olive OR bread zzzz")
        #expect(
            partly.lines.first == "1 note matches the query as written; then notes with some of its words", "\(partly)")
        // Both steps: their notes ranked together, the note with a near spelling of every word first.
        let both = try s.ok("search", "recieve", "milk")
        #expect(
            both.lines.prefix(2) == [
                "no exact match for \"recieve\"; showing \"receive\"",
                "no note has every word; showing notes with a near spelling or some of them (--exact: only notes with all)",
            ], "\(both)")
        let bothJSON = try s.ok("search", "recieve", "milk", "--json").array()
        #expect(bothJSON.map { $0["title"] as? String } == ["Groceries", "Both"])
        #expect(bothJSON.map { $0["match"] as? String } == ["near-spelling", "some-words"])
        let ranked = try s.ok("search", "ham", "milk", "eggs", "--json").array()
        #expect(ranked.first?["title"] as? String == "Shopping", "the note with more of the words first")
        #expect(ranked.count == 3)
        #expect(ranked.allSatisfy { $0["match"] as? String == "some-words" })
        let exact = try s.ok("search", "ham", "milk", "eggs", "--exact")
        #expect(exact.line == "no notes match")
        #expect(try titles(s, "recieve").isEmpty)
        #expect(try titles(s, "mediteranaen", forgiving: true) == ["Mediterranean diet"], "two edits in a long word")
        // A note found by one word of a split one (`wind-tunnel` is a phrase of two words): the
        // snippet is around that word, marked (before 2026-12-06, the body's start, nothing marked).
        let filler = Array(repeating: "filler words along", count: 20).joined(separator: " ")
        try s.add("Aero notes", "--body", filler + "\nThe wind blew hard over the hill.\n")
        let split = try s.ok("search", "wind-tunnel", "--json").array()
        let aero = try #require(split.first { $0["title"] as? String == "Aero notes" })
        #expect(aero["match"] as? String == "some-words")
        let snippet = try #require(aero["snippet"] as? String)
        let marked = try #require(((aero["matches"] as? [String: Any])?["snippet"] as? [[Int]])?.first)
        let scalars = Array(snippet.unicodeScalars)
        #expect(String(String.UnicodeScalarView(scalars[marked[0]..<marked[1]])) == "wind", "\(aero)")
        // Enough exact matches: nothing else, no message.
        let plain = try s.ok("search", "ham", "--limit", "2")
        #expect(!plain.stdout.contains("near spellings") && !plain.stdout.contains("some of them"))
        // A pasted sentence is a query, not an error.
        let sentence = Array(repeating: "how do I buy ham and milk for the week", count: 10).joined(separator: " ")
        #expect(
            try titles(s, sentence, forgiving: true).first == "Shopping", "buy, ham and \"and\": the most of its words")
    }

    @Test("the near spellings of a word the notes hold are named only when a near-spelling note is shown")
    func nearSpellingsNamedWhenShown() throws {
        let s = try fixture()
        try s.add("Theme setup", "--body", "install the theme")
        // Every word through `them`, one edit from `theme`; `plugin` is common, `theme` rare.
        try s.add("Plugins", "--body", "I install them, each plugin")
        try s.add("Plugin list", "--body", "a plugin")
        try s.add("Plugin docs", "--body", "the plugin docs")
        let both = try s.ok("search", "install", "theme", "plugin", "--json").array()
        #expect(both.prefix(2).map { $0["title"] as? String } == ["Theme setup", "Plugins"], "\(both)")
        #expect(both.prefix(2).map { $0["match"] as? String } == ["some-words", "near-spelling"])
        let all = try s.ok("search", "install", "theme", "plugin")
        #expect(all.stdout.contains("also showing near spellings of \"theme\""), "\(all)")
        // The near-spelling note cut by --limit: no near spelling of `theme` was used. A review's
        // trial: before 2026-12-07 the line said so all the same.
        let one = try s.ok("search", "install", "theme", "plugin", "--limit", "1")
        #expect(one.stdout.contains("Theme setup") && !one.stdout.contains("Plugins"), "\(one)")
        #expect(!one.stdout.contains("near spelling"), "\(one)")
        #expect(
            one.lines.first == "no note has every word; showing notes with some of them (--exact: only notes with all)",
            "\(one)")
    }

    @Test("a typo that one note holds is read as its far commoner near spelling too, and the search says so")
    func rareWordIsATypo() throws {
        let s = try Sandbox()
        try s.add("Typo", "--body", "keep the build outputs seperate from the sources")
        for k in 1...8 { try s.add("Targets \(k)", "--body", "separate targets for module \(k)") }
        try s.add("Other", "--body", "a list of targets")
        // Before 2026-12-07 "Typo" and "Other" came first, and the line said only "also showing
        // near spellings of "seperate"".
        let found = try s.ok("search", "seperate", "targets")
        #expect(found.lines.first == "few notes have \"seperate\"; also showing \"separate\"", "\(found)")
        let json = try s.ok("search", "seperate", "targets", "--json").array()
        #expect(json.prefix(8).allSatisfy { ($0["title"] as? String)?.hasPrefix("Targets") == true }, "\(json)")
        #expect(json.prefix(8).allSatisfy { $0["match"] as? String == "near-spelling" })
    }

    @Test("near spellings of a word every near-spelling note shown holds as written are not named")
    func nearSpellingsOfHeldWordNotNamed() throws {
        let s = try Sandbox()
        try s.add("Theme pack", "--body", "receive the theme pack")
        try s.add("Plugins", "--body", "I install them")
        // `them` is a near spelling of `theme`, but the one note shown holds `theme`: before
        // 2026-12-07 the search said "also showing near spellings of "theme": "them"".
        let found = try s.ok("search", "recieve", "theme")
        #expect(found.lines.first == "no exact match for \"recieve\"; showing \"receive\"", "\(found)")
        #expect(found.stdout.contains("Theme pack") && !found.stdout.contains("Plugins"), "\(found)")
        #expect(!found.stdout.contains("near spellings of"), "\(found)")
        // A note found through `them` is shown: the line says so.
        let widened = try s.ok("search", "install", "theme")
        #expect(widened.stdout.contains("also showing near spellings of \"theme\": \"them\""), "\(widened)")
    }

    @Test("near spellings are said to be shown \"also\" only when a note shown holds the word as written")
    func nearSpellingsAlsoOnlyBesideTheWord() throws {
        let s = try Sandbox()
        let asyncNote = try s.add("Async", "--body", "async functions")
        try s.add("Sync", "--body", "sync the files")
        // A new user's trial: before 2026-12-07 each said "also showing near spellings of
        // "async"", over notes with `sync` alone.
        let excluded = try s.ok("search", "async -async")
        #expect(excluded.lines.first == "showing near spellings of \"async\": \"sync\"", "\(excluded)")
        #expect(excluded.lines.map { $0.prefix(6) } == ["showin", "Sync  ", "  sync"], "\(excluded)")
        // The word held by a note in the trash alone.
        try s.ok("trash", asyncNote)
        let trashed = try s.ok("search", "async")
        #expect(trashed.lines.first == "showing near spellings of \"async\": \"sync\"", "\(trashed)")
        // Beside a note that holds it, "also".
        try s.add("Async again", "--body", "async and await")
        let both = try s.ok("search", "async")
        #expect(both.lines.first == "also showing near spellings of \"async\": \"sync\"", "\(both)")
    }

    @Test("a note found through a near spelling in a title is named, though its body holds the word")
    func nearSpellingInTitleNamed() throws {
        let s = try Sandbox()
        try s.add("Theme pack", "--body", "receive the theme pack")
        try s.add("Them", "--body", "receive the theme")
        // `Them` has no `theme` in its title: it is found through `title:them`, though its body
        // holds `theme` (before 2026-12-07 that body hid the line).
        let found = try s.ok("search", "recieve", "title:theme")
        #expect(found.stdout.contains("Them  "), "\(found)")
        #expect(found.stdout.contains("also showing near spellings of \"theme\": \"them\""), "\(found)")
        // A body search: every note shown holds `theme` in its body, and no line names `them`.
        let body = try s.ok("search", "recieve", "body:theme")
        #expect(!body.stdout.contains("near spellings of"), "\(body)")
    }

    @Test("a near spelling is named only as a word a note shown holds, never as a stem --limit cut")
    func nearSpellingsNamedAsShownWords() throws {
        let s = try fixture()
        try s.add("Copy", "--body", "copy this copy")
        try s.add("Ideas", "--body", "a loopy idea")
        // `oopi` is one edit from the stems of both `copy` and `loopy` (`copi`, `loopi`).
        #expect(try s.ok("search", "oopi").lines.first == "no exact match for \"oopi\"; showing \"copy\", \"loopy\"")
        // Before 2026-12-07 the note --limit cut was named by its stem: `showing "copy", "loopi"`.
        let one = try s.ok("search", "oopi", "--limit", "1")
        #expect(one.lines.first == "no exact match for \"oopi\"; showing \"copy\"", "\(one)")
        // No note shown holds either (a note with more of the words is first): the line says only
        // that the word matched nothing (before, `showing "copi", "loopi"`, two stems).
        let none = try s.ok("search", "oopi", "ham", "eggs", "--limit", "1")
        #expect(
            none.lines.prefix(2) == [
                "no exact match for \"oopi\"",
                "no note has every word; showing notes with some of them (--exact: only notes with all)",
            ], "\(none)")
        #expect(none.stdout.contains("Shopping"))
    }

    @Test("many words read as near spellings: a line for the first four, then one for the rest")
    func manyNearSpellingsOneLine() throws {
        let s = try fixture()
        let seven = ["recieve", "delivry", "shoping", "grocries", "mediteranean", "brread", "olivr"]
        // Before 2026-12-07 a line each: a pasted paragraph put 197 of them above its results.
        let r = s.run(["search"] + seven)
        #expect(r.code == 0, "\(r)")
        #expect(
            Array(r.lines.prefix(6)) == [
                "no exact match for \"brread\"; showing \"bread\"",
                "no exact match for \"delivry\"; showing \"delivery\"",
                "no exact match for \"grocries\"; showing \"groceries\"",
                "no exact match for \"mediteranean\"; showing \"mediterranean\"",
                "and 3 more words read as near spellings: \"olivr\", \"recieve\", \"shoping\"",
                "no note has every word; showing notes with some of them (--exact: only notes with all)",
            ], "\(r)")
        // Five are five lines, as before.
        let five = s.run(["search"] + seven.prefix(5))
        #expect(five.lines.filter { $0.hasPrefix("no exact match for") }.count == 5, "\(five)")
    }

    @Test("a word longer than 64 bytes finds the notes that hold it, not those whose word starts alike")
    func longWords() throws {
        let s = try Sandbox()
        let x64 = String(repeating: "x", count: 64)
        try s.add("Yes", "--body", "the \(x64)yes word")
        try s.add("Nope", "--body", "the \(x64)nope word")
        // Before 2026-12-07 (index search-6) both words were their first 64 bytes: each search
        // found both notes, and a word neither holds found both too.
        #expect(try titles(s, x64 + "yes") == ["Yes"])
        #expect(try titles(s, "\"the \(x64)nope word\"") == ["Nope"])
        #expect(try titles(s, x64 + "z").isEmpty)
        let r = try s.ok("search", x64 + "nope", "--json", "--exact").array()
        #expect((r.first?["matches"] as? [String: Any])?["snippet"] as? [[Int]] == [[4, 72]], "\(r)")
    }

    @Test("a phrase with a typo finds the phrase of near spellings, below the exact ones, and says so")
    func phraseTypo() throws {
        let s = try fixture()
        // Before 2026-12-06 a phrase's words had no near spellings: "no notes match".
        let typo = try s.ok("search", "\"recieve the delivery\"")
        #expect(typo.lines.first == "no exact match for \"recieve\"; showing \"receive\"", "\(typo)")
        #expect(typo.stdout.contains("Groceries"))
        #expect(try titles(s, "\"recieve the delivery\"", forgiving: true) == ["Groceries"])
        let json = try s.ok("search", "\"recieve the delivry\"", "--json").array()
        #expect(json.map { $0["title"] as? String } == ["Groceries"])
        #expect(json.map { $0["match"] as? String } == ["near-spelling"], "two words of the phrase corrected")
        // Still a phrase: the near spellings in another order, or apart, are no match.
        #expect(try titles(s, "\"delivery the recieve\"", forgiving: true).isEmpty)
        #expect(try titles(s, "\"recieve delivery\"", forgiving: true).isEmpty)
        // The phrase as written ranks first; --exact keeps to it.
        try s.add("Typed", "--body", "we recieve the delivery")
        let both = try s.ok("search", "\"recieve the delivery\"", "--json").array()
        #expect(both.map { $0["title"] as? String } == ["Typed", "Groceries"])
        #expect(both.map { $0["match"] as? String } == ["exact", "near-spelling"])
        #expect(try titles(s, "\"recieve the delivery\"") == ["Typed"])
        // An excluded phrase is not widened: it excludes what it says.
        #expect(try Set(titles(s, "milk -\"recieve the delivery\"", forgiving: true)) == ["Both", "Groceries"])
        #expect(try titles(s, "milk -\"receive the delivery\"", forgiving: true) == ["Both"])
    }

    @Test("--json results carry where the words matched, in title and snippet; a terminal gets them in bold")
    func matchOffsets() throws {
        let s = try Sandbox()
        try s.add("Ham and ham", "--body", "Naïve cooks buy ham; the ham is good")
        let r = try s.ok("search", "ham", "--json").array()
        let matches = try #require(r.first?["matches"] as? [String: Any])
        #expect(matches["title"] as? [[Int]] == [[0, 3], [8, 11]])
        // Offsets count Unicode scalars: "Naïve" is 5 (the ï precomposed).
        #expect(matches["snippet"] as? [[Int]] == [[16, 19], [25, 28]])
        let snippet = try #require(r.first?["snippet"] as? String)
        let scalars = Array(snippet.unicodeScalars)
        #expect(String(String.UnicodeScalarView(scalars[16..<19])) == "ham")
        // The near spelling the search used is marked too.
        let near = try s.ok("search", "hamm", "--json").array()
        #expect((near.first?["matches"] as? [String: Any])?["snippet"] as? [[Int]] == [[16, 19], [25, 28]])
        // Bold only where color is allowed: never through a pipe (as here) or with NO_COLOR.
        #expect(!(try s.ok("search", "ham").stdout.contains("\u{1B}[")))
        // A word joined to an emoji modifier: its range is the word's own scalars, as in titles.
        try s.add("Thumbs\u{1F3FD} up")
        let thumbs = try s.ok("search", "thumbs", "--json").array()
        let marks = try #require(thumbs.first?["matches"] as? [String: Any])
        #expect(marks["title"] as? [[Int]] == [[0, 6]])
        #expect(marks["snippet"] as? [[Int]] == [[0, 6]])
        // A near spelling the search tried is not marked in a note the query found as written.
        try s.add("Cafe", "--body", "a kafé and a cafe")
        let cafe = try s.ok("search", "cafe", "--json").array()
        #expect((cafe.first?["matches"] as? [String: Any])?["snippet"] as? [[Int]] == [[13, 17]])
    }

    @Test("on a terminal the marks fall on the matched words, after a direction control shown as its escape too")
    func marksAfterEscapes() {
        // U+202E is shown as `<U+202E>`, eight scalars for one: before 2026-12-07 the bold after
        // it fell seven scalars early (`<U+2[02C> t]hen the target word`).
        let text = "before \u{202E} flipped \u{202C} then the target word"
        let start = text.unicodeScalars.count - "target word".unicodeScalars.count
        #expect(
            shownSnippet(text, [start..<(start + 6)], highlight: ("[", "]"))
                == "before <U+202E> flipped <U+202C> then the [target] word")
        #expect(shownSnippet(text, [start..<(start + 6)], highlight: nil) == oneLine(text))
        // A control character is one symbol for one: the marks stay where they were.
        #expect(shownSnippet("a\u{1B}b target", [4..<10], highlight: ("[", "]")) == "a\u{241B}b [target]")
        // A mark on a control itself covers its escape.
        #expect(shownSnippet("x\u{200F}y", [1..<2], highlight: ("[", "]")) == "x[<U+200F>]y")
    }

    @Test("without --exact, a query with broken syntax searches its words and says what it read")
    func brokenSyntaxSearchesWords() throws {
        let s = try fixture()
        for (query, message) in [
            ("ham (milk", "a parenthesis is not closed, or closes nothing: pair each ( with a ) (at character 5)"),
            ("ham OR", "OR, | and AND must stand between two words or groups"),
            ("\"ham and milk", "a phrase is missing its closing quote"),
            // Also a filter's name (its words searched, as for title:).
            ("ham category:\"Home", "a phrase is missing its closing quote \" (at character 14)"),
            ("ham tag:\"open milk", "a phrase is missing its closing quote \" (at character 9)"),
            ("*ham", "`*` ends a prefix"),
            // A filter naming nothing says so too (it searched its words without a line).
            ("ham category: milk", "`category:` must be followed by a name"),
            ("tag: ham", "`tag:` must be followed by a name"),
            // A group that only excludes is named, with its position (before 2026-12-06: "the
            // search query only excludes words", which it did not).
            (
                "ham (-eggs)",
                "the group \"(-eggs)\" only excludes words: a group needs a word to find (e.g. `plan (notes -draft)`), "
                    + "or write the exclusion outside parentheses (`plan -draft`) (at character 5)"
            ),
        ] {
            let r = s.run("search", "--", query)
            #expect(r.code == 0, "\(query): \(r)")
            #expect(r.stdout.contains("searched the words of the query"), "\(query): \(r.stdout)")
            #expect(r.stdout.contains(message), "\(query): \(r.stdout)")
            // JSON stays JSON: the line goes to stderr.
            let j = s.run("search", "--json", "--", query)
            #expect(j.code == 0 && j.stderr.contains(message), "\(query): \(j)")
            #expect((try? j.array()) != nil, "\(query): \(j.stdout)")
        }
        // The words are what is searched: the note with ham is found.
        let r = try s.ok("search", "--json", "--", "ham (")
        #expect(!(try r.array()).isEmpty)
        // A group that only excludes is read as its words: ham, without eggs.
        #expect(try titles(s, "ham (-eggs)", forgiving: true) == ["Both"])
        #expect(s.run("search", "--", "(-eggs)").code == 2, "a query that only excludes stays an error")
        for alternative in ["ham OR -eggs", "ham OR(-eggs)", "(ham)OR(-eggs)", "ham | (-eggs)"] {
            #expect(s.run("search", "--", alternative).code == 2, "\(alternative): its words would mean AND NOT")
        }
        // A word the tokenizer splits, with a `*`: its last part is a prefix.
        try s.add("Checker", "--body", "the type-checker runs")
        #expect(try titles(s, "type-chec*") == ["Checker"])
        #expect(try s.run("search", "--exact", "--json", "--", "-type-chec* runs").array().isEmpty)
        #expect(try titles(s, "ham -type-chec*").count == 2)
        // A filter naming nothing, in pasted text, is a word: searched without --exact.
        let pasted = s.run("search", "--json", "--", "each delivery category: noon")
        #expect(pasted.code == 0, "\(pasted)")
        #expect(try pasted.array().compactMap { $0["title"] as? String }.contains("Groceries"))
    }

    @Test("a malformed query is refused with --exact, with the character at fault, exit 2, and nothing changes")
    func refusals() throws {
        let s = try fixture()
        for (query, message) in [
            ("ham (milk", "a parenthesis is not closed, or closes nothing: pair each ( with a ) (at character 5)"),
            ("ham OR", "OR, | and AND must stand between two words or groups (e.g. `ham OR milk`) (at character 5)"),
            ("ham OR -milk", "the search query only excludes words"),
            ("ham OR -milk", "(at character 8)"),
            ("optimization (-O) enabled", "the group \"(-O)\" only excludes words"),
            ("optimization (-O) enabled", "(at character 14)"),
            ("(tag:kitchen OR ham)", "tag:kitchen filters the whole search: put it outside the parentheses"),
            ("ham category:food category:other", "a note is in one category"),
            // Positions count the whole text, filters included, in Unicode scalars.
            ("tag:kitchen milk (eggs", "(at character 18)"),
            ("-tag:kitchen milk", "tag:NAME cannot be excluded yet (at character 1)"),
            (
                "milk title:-eggs",
                "put the - before the field to exclude: -title:word, not title:-word (at character 12)"
            ),
            ("category:food", "the search has only a category filter"),
            // The command it offers is quoted for a shell (before 2026-12-07 `--tag a(b` and
            // `--category "a"b"`, which a shell refuses or reads as other words).
            ("tag:a(b", "or list those notes with `notes list --tag 'a(b'`"),
            ("category:a\"b", "or list those notes with `notes list --category 'a\"b'`"),
            ("tag:\"two words\" tag:x", "`notes list --tag 'two words' --tag x`"),
            ("tag:\"open milk", "a phrase is missing its closing quote \" (at character 5)"),
            // A filter naming nothing is not the word "tag" searched for.
            ("milk tag:", "`tag:` must be followed by a name, e.g. tag:work or tag:\"two words\" (at character 6)"),
            ("tag:\"\" milk", "`tag:` must be followed by a name"),
            ("category: milk", "`category:` must be followed by a name"),
            // A `*` that ends no prefix; two fields at once.
            ("*ham", "`*` ends a prefix (e.g. `plan*`); it cannot start a word or stand inside one (at character 1)"),
            ("milk ha*m", "(at character 8)"),
            ("title:body:ham", "a `title:` group cannot hold `body:` words, nor the other way round (at character 7)"),
        ] {
            let r = s.run("search", "--exact", "--", query)
            #expect(r.code == 2, "\(query): \(r)")
            #expect(r.stderr.contains(message), "\(query): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }
}

@Suite("CLI: search languages")
struct CLISearchLanguageTests {
    @Test(
        "words match by their English stems by default; search-language none matches them as written, after a rebuild")
    func stems() throws {
        let s = try Sandbox()
        try s.add("Running log", "--body", "she runs daily; went running")
        try s.add("Cooking", "--body", "the cooks cooked")
        func titles(_ q: String...) throws -> [String] {
            let r = s.run(["search"] + q + ["--json", "--exact"])
            try #require(r.code == 0, "\(r)")
            return try r.array().compactMap { $0["title"] as? String }
        }
        #expect(try titles("run") == ["Running log"])
        #expect(try titles("cook") == ["Cooking"])
        #expect(try titles("\"cooks cooked\"") == ["Cooking"], "a phrase of stems")
        #expect(try titles("cook*") == ["Cooking"], "a prefix matches the stems")
        // A prefix of a word as written finds it, though its stem is shorter than the prefix or
        // ends otherwise (before 2026-12-06 each found nothing, and excluding one excluded nothing).
        try s.add("Actors", "--body", "actor isolation rules and concurrency")
        try s.add("Models", "--body", "actor model basics at a party")
        #expect(try titles("isolat*") == ["Actors"], "isolation is held as isol")
        #expect(try titles("concurrency*") == ["Actors"], "concurrency is held as concurr")
        #expect(try titles("concurren*") == ["Actors"], "concurrent and concurrency are held as concurr")
        #expect(try titles("party*") == ["Models"], "party is held as parti")
        #expect(try titles("actor -isolat*") == ["Models"])
        #expect(try titles("title:isolat*").isEmpty)
        #expect(try titles("body:isolat*") == ["Actors"])
        // A stem cut shorter than four characters, or by more than two, is left out: `comming`,
        // one ending from `comm`, is held as `com`, which would match every `.com`.
        try s.add("Links", "--body", "see example.com for the details")
        try s.add("Meeting", "--body", "the committee meets")
        #expect(try titles("comm*") == ["Meeting"])
        #expect(try titles("runn*").isEmpty, "running is held as run: three characters")
        let shown = try s.ok("search", "run")
        #expect(shown.stdout.contains("she runs daily"))
        try s.ok("config", "set", "search-language", "none")
        #expect(try titles("run").isEmpty, "no stems: run is not runs")
        #expect(try titles("runs") == ["Running log"])
        #expect(try s.ok("verify").stdout.hasPrefix("ok:"))
        try s.ok("config", "set", "search-language", "french")
        #expect(try s.ok("verify").stdout.hasPrefix("ok:"))
        let bad = s.run("config", "set", "search-language", "klingon")
        #expect(bad.code == 2)
        #expect(bad.stderr.contains("must be none or a Snowball language: none, arabic"), "\(bad.stderr)")
    }
}
