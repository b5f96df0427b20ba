import Testing

@testable import NotesInterchange

@Suite("YAML front matter")
struct YAMLFrontMatterTests {
    private func parse(_ text: String) throws -> FrontMatterYAML {
        try FrontMatterYAML.parse(text)
    }

    private func problem(_ text: String) -> YAMLProblem? {
        do {
            _ = try FrontMatterYAML.parse(text)
            return nil
        } catch {
            return error
        }
    }

    /// `leading` and every entry's source, concatenated, are the text byte for byte.
    private func expectRoundTrip(_ yaml: FrontMatterYAML, _ text: String) {
        let joined = yaml.leading + yaml.entries.map(\.source).joined()
        #expect(Array(joined.utf8) == Array(text.utf8))
    }

    private func value(_ yaml: FrontMatterYAML, _ key: String) -> YAMLNode? {
        yaml.entries.first { $0.key == key }?.value
    }

    private func plain(_ s: String) -> YAMLNode { .scalar(s, plain: true) }

    @Test func obsidianProperties() throws {
        let text = """
            title: "Meeting: Q3 #planning"
            aliases:
              - Q3 meeting
              - 'Planning: third quarter'
            tags:
              - work
              - planning/q3
            cssclasses: [wide, "no-title"]
            created: 2024-05-01
            updated: 2024-05-01T10:30:00Z
            rating: 4.5
            done: false
            cover:
            location:
              city: Tel Aviv
              geo: {lat: 32.08, lon: 34.78}
            summary: |
              First line.
                indented: kept
              Last line.
            folded: >
              one
              two

              three
            note: it's # a comment after a space
            multi: a plain
              scalar over lines

            """
        let yaml = try parse(text)
        #expect(yaml.leading == "")
        #expect(
            yaml.entries.map(\.key) == [
                "title", "aliases", "tags", "cssclasses", "created", "updated", "rating", "done", "cover", "location",
                "summary", "folded", "note", "multi",
            ])
        #expect(value(yaml, "title") == .scalar("Meeting: Q3 #planning", plain: false))
        #expect(value(yaml, "aliases")?.strings == ["Q3 meeting", "Planning: third quarter"])
        #expect(value(yaml, "tags")?.strings == ["work", "planning/q3"])
        #expect(value(yaml, "cssclasses") == .sequence([plain("wide"), .scalar("no-title", plain: false)]))
        #expect(value(yaml, "created") == plain("2024-05-01"))
        #expect(value(yaml, "updated") == plain("2024-05-01T10:30:00Z"))
        #expect(value(yaml, "rating") == plain("4.5"))
        #expect(value(yaml, "done")?.bool == false)
        #expect(value(yaml, "cover") == plain(""))
        #expect(value(yaml, "cover")?.isNull == true)
        #expect(value(yaml, "cover")?.strings == [])
        #expect(
            value(yaml, "location")
                == .mapping([
                    YAMLPair(key: plain("city"), value: plain("Tel Aviv")),
                    YAMLPair(
                        key: plain("geo"),
                        value: .mapping([
                            YAMLPair(key: plain("lat"), value: plain("32.08")),
                            YAMLPair(key: plain("lon"), value: plain("34.78")),
                        ])),
                ]))
        #expect(value(yaml, "summary") == .scalar("First line.\n  indented: kept\nLast line.\n", plain: false))
        #expect(value(yaml, "folded") == .scalar("one two\nthree\n", plain: false))
        #expect(value(yaml, "note") == plain("it's"))
        #expect(value(yaml, "multi") == plain("a plain scalar over lines"))
        #expect(yaml.entries[1].source == "aliases:\n  - Q3 meeting\n  - 'Planning: third quarter'\n")
        expectRoundTrip(yaml, text)
    }

    @Test func tagsInEveryShape() throws {
        let yaml = try parse("a: [x, \"y z\", 'w']\nb: single\nc: ~\nd:\n  - one\ne: []\nf: [[x]]\n")
        #expect(value(yaml, "a")?.strings == ["x", "y z", "w"])
        #expect(value(yaml, "b")?.strings == ["single"])
        #expect(value(yaml, "c")?.strings == [])
        #expect(value(yaml, "d")?.strings == ["one"])
        #expect(value(yaml, "e")?.strings == [])
        #expect(value(yaml, "f")?.strings == nil)
        #expect(YAMLNode.scalar("null", plain: false).strings == ["null"])
    }

    @Test func quotedScalarsAndEscapes() throws {
        let yaml = try parse(
            #"""
            a: "tab\there \"q\" \u00e9 \x41 back\\slash"
            b: 'it''s: #not a comment'
            c: "line one
              continued"
            d: "nul\0inside"
            e: "true"
            f: 'key: with colon'
            """#)
        #expect(value(yaml, "a") == .scalar("tab\there \"q\" é A back\\slash", plain: false))
        #expect(value(yaml, "b") == .scalar("it's: #not a comment", plain: false))
        #expect(value(yaml, "c") == .scalar("line one continued", plain: false))
        #expect(value(yaml, "d") == .scalar("nul\u{0}inside", plain: false))
        #expect(value(yaml, "e")?.bool == nil)
        #expect(value(yaml, "f")?.text == "key: with colon")
    }

    @Test func helpers() {
        #expect(plain("Yes").bool == true)
        #expect(plain("OFF").bool == false)
        #expect(plain("maybe").bool == nil)
        #expect(plain("~").isNull && plain("NULL").isNull && plain("Null").isNull && !plain("nil").isNull)
        #expect(!YAMLNode.scalar("", plain: false).isNull)
        #expect(YAMLNode.sequence([]).text == nil)
    }

    @Test func sourcesWithCommentsBlankLinesAndLeading() throws {
        let text = """
            # Written by hand

            title: Groceries   # trailing comment
            # about tags:

            tags:
              - home
            \t
            empty: \("  ")
            last: x
            # the end
            """
        let yaml = try parse(text)
        #expect(yaml.leading == "# Written by hand\n\n")
        #expect(
            yaml.entries.map(\.source) == [
                "title: Groceries   # trailing comment\n# about tags:\n\n",
                "tags:\n  - home\n\t\n",
                "empty:   \n",
                "last: x\n# the end",
            ])
        #expect(value(yaml, "empty") == plain(""))
        expectRoundTrip(yaml, text)
    }

    @Test func sourcesWithCRLFAndMultibyteText() throws {
        let text =
            "# שלום עולם\r\ntitle: 日本語のノート\r\nbody: \"עברית: כן\"\r\n\r\ntags: [猫, 犬]\r\n"
            + "emoji: 🧪🧪🧪\r\nlong: \(String(repeating: "長", count: 3000))\r\nafter: end\r\n"
        let yaml = try parse(text)
        #expect(yaml.leading == "# שלום עולם\r\n")
        #expect(yaml.entries.map(\.key) == ["title", "body", "tags", "emoji", "long", "after"])
        #expect(yaml.entries[0].source == "title: 日本語のノート\r\n")
        #expect(yaml.entries[1].source == "body: \"עברית: כן\"\r\n\r\n")
        #expect(yaml.entries[3].source == "emoji: 🧪🧪🧪\r\n")
        #expect(yaml.entries[5].source == "after: end\r\n")
        #expect(value(yaml, "body")?.text == "עברית: כן")
        #expect(value(yaml, "tags")?.strings == ["猫", "犬"])
        #expect(value(yaml, "long")?.text?.count == 3000)
        expectRoundTrip(yaml, text)
    }

    @Test func sourcesAroundBlockScalarsAndUnicodeLineBreaks() throws {
        // libyaml reads YAML 1.1: NEL, U+2028 and U+2029 break lines, so a key after U+2028 in a
        // comment is a key; it shares the line (as an editor shows it) of the entry before it.
        let text = "a: |\n  x\n\n  z\n# c\nb: \"p\u{2029}q\"\nc: x # c\u{2028}d: 1\ne: 1"
        let yaml = try parse(text)
        #expect(yaml.entries.map(\.key) == ["a", "b", "c", "d", "e"])
        #expect(value(yaml, "a")?.text == "x\n\nz\n")
        #expect(value(yaml, "b")?.text == "p\u{2029}q")  // folding keeps LS and PS
        #expect(
            yaml.entries.map(\.source) == [
                "a: |\n  x\n\n  z\n# c\n", "b: \"p\u{2029}q\"\n", "c: x # c\u{2028}d: 1\n", "", "e: 1",
            ])
        expectRoundTrip(yaml, text)
    }

    @Test func tabs() throws {
        // Tabs in values are text; a line of only tabs and spaces is blank (libyaml alone refuses
        // it), and a block scalar's tabs after its indentation are kept.
        let text = "a: x\ty\nb:\n  - one\n\t\n  - two\n \t \nc: |\n  p\n  \tq\n"
        let yaml = try parse(text)
        #expect(value(yaml, "a")?.text == "x\ty")
        #expect(value(yaml, "b")?.strings == ["one", "two"])
        #expect(value(yaml, "c")?.text == "p\n\tq\n")
        #expect(yaml.entries[1].source == "b:\n  - one\n\t\n  - two\n \t \n")
        expectRoundTrip(yaml, text)
    }

    @Test func flowMappingSharesLines() throws {
        let text = "{a: 1, b: [2, 3],\n c: 4}\n"
        let yaml = try parse(text)
        #expect(yaml.entries.map(\.key) == ["a", "b", "c"])
        #expect(yaml.entries.map(\.source) == ["{a: 1, b: [2, 3],\n", "", " c: 4}\n"])
        expectRoundTrip(yaml, text)
    }

    @Test("kept entries that share a line with the store's keys, or name their anchors, are written from their values")
    func keptTextStandsAlone() throws {
        let flow = try MarkdownNote.parse(
            "---\n{title: Plan, author: Ana, n: 12, l: [x, \"y z\", {k: v}]}\n---\nbody\n")
        #expect(flow.keptText == "author: Ana\nn: 12\nl: [x, \"y z\", {k: v}]\n")
        let anchors = try MarkdownNote.parse("---\ntitle: &t Plan\nsubtitle: *t\ntags: &g [x]\nkeywords: *g\n---\nb\n")
        #expect(anchors.keptText == "subtitle: Plan\nkeywords: [x]\n")
        // Entries of their own lines, comments and all, stay byte for byte.
        let own = try MarkdownNote.parse("---\ntitle: Plan\n# by hand\nauthor:   Ana  # me\n---\nb\n")
        #expect(own.keptText == "author:   Ana  # me\n")
        // Every value written in flow style reads back as the same value.
        let values: [YAMLNode] = [
            plain("12"), plain("true"), plain(""), .scalar("true", plain: false), .scalar("a: b # c", plain: false),
            plain("https://example.org/a?b=c"), .scalar("-lead", plain: false),
            .scalar("quote \" and \\", plain: false),
            .scalar("tab\tline\nbell\u{7}sep\u{2028}end", plain: false), .scalar("  spaced  ", plain: false),
            .sequence([
                plain("a"), .scalar("b, c", plain: false), .mapping([YAMLPair(key: plain("k"), value: plain("v"))]),
            ]),
            .scalar("café 東京", plain: true),
        ]
        for v in values {
            let text = "key: " + MarkdownNote.flowYAML(v) + "\n"
            let back = try parse(text).entries.first?.value
            #expect(back == v || (v == plain("") && back?.isNull == true), "\(text)")
        }
    }

    @Test func emptyAndCommentOnly() throws {
        for text in ["", "\n", "# only a comment\n\n# another", "   \n\t\n", "{}"] {
            let yaml = try parse(text)
            #expect(yaml.entries.isEmpty)
            #expect(yaml.leading == text)
        }
    }

    @Test func aliasesAreCopied() throws {
        let yaml = try parse("base: &b {x: 1}\nother: *b\nlist: &l [a, b]\nagain: *l\ns: &s word\nt: *s\n")
        #expect(value(yaml, "other") == value(yaml, "base"))
        #expect(value(yaml, "again")?.strings == ["a", "b"])
        #expect(value(yaml, "t") == plain("word"))
    }

    @Test func errorsNameLineAndColumn() throws {
        let badIndent = try #require(problem("title: x\ntags:\n  - a\n - b\n"))
        #expect(badIndent.line == 4)
        #expect(badIndent.description.hasPrefix("line 4, column 2: "))

        let mapIndent = try #require(problem("a: 1\nb:\n  c: 1\n d: 2\n"))
        #expect(mapIndent.line == 4 && mapIndent.column == 2)
        #expect(mapIndent.message.hasPrefix("did not find expected key (while parsing a block mapping"))
        #expect(mapIndent.description == "line 4, column 2: \(mapIndent.message)")

        let quote = try #require(problem("a: 1\nb: \"open\nc: 2\n"))
        #expect(quote.message.contains("while scanning a quoted scalar"))
        #expect(quote.message.contains("line 2, column 4"))

        let flow = try #require(problem("a: [1, 2\nb: 3\n"))
        #expect(flow.message.contains("flow sequence"))
        #expect(flow.line == 2)

        let tab = try #require(problem("a:\n\t- b\n"))
        #expect(tab.line == 2 && tab.column == 1)

        let list = try #require(problem("# c\n- a\n- b\n"))
        #expect(list.line == 2 && list.column == 1)
        #expect(list.message.contains("list, not a mapping"))

        let scalar = try #require(problem("just text"))
        #expect(scalar.message.contains("single value"))

        let duplicate = try #require(problem("a: 1\nb: 2\n\"a\": 3\n"))
        #expect(duplicate.line == 3 && duplicate.column == 1)
        #expect(duplicate.message.contains("\"a\" is given twice (first on line 1)"))

        let complexKey = try #require(problem("a: 1\n? [x, y]\n: 2\n"))
        #expect(complexKey.line == 2)
        #expect(complexKey.message.contains("key must be text"))

        let second = try #require(problem("a: 1\n---\nb: 2\n"))
        #expect(second.line == 2 && second.message.contains("second YAML document"))

        let undefined = try #require(problem("a: *nowhere\n"))
        #expect(undefined.message.contains("*nowhere"))
    }

    @Test func errorColumnsCountCharacters() throws {
        // The marks count characters; the column after Hebrew and CJK text is in characters too.
        let bad = try #require(problem("שם: 日本\nb: 日本: y\n"))
        #expect(bad.line == 2 && bad.column == 6)
        let afterCRLF = try #require(problem("a: 1\r\nb: 2\r\n c: 3\r\n"))
        #expect(afterCRLF.line == 3)
    }

    @Test func controlCharactersAndNulAreRefused() throws {
        let nul = try #require(problem("a: 1\nb: x\u{0}y\n"))
        #expect(nul.line == 2 && nul.column == 5)
        #expect(nul.message.contains("U+0000"))
        let bell = try #require(problem("a: \u{7}"))
        #expect(bell.message.contains("control characters"))
    }

    @Test func depthLimit() throws {
        // 64 levels, the top-level mapping included, are fine; one more is refused.
        let ok = "a: " + String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
        #expect(try parse(ok).entries.count == 1)
        let deep = "a: " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        let tooDeep = try #require(problem(deep))
        #expect(tooDeep.line == 1 && tooDeep.column == 67)
        #expect(tooDeep.message.contains("deeper than 64"))
        // Far deeper input stops at the limit, without recursion.
        let hostile = try #require(problem("a: " + String(repeating: "{b: ", count: 100_000)))
        #expect(hostile.message.contains("deeper than 64"))
        var block = "a:\n"
        for level in 1...70 { block += String(repeating: " ", count: level) + "b:\n" }
        #expect(problem(block)?.message.contains("deeper than 64") == true)
    }

    @Test func aliasBombIsRefused() throws {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1...9 {
            let refs = Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ")
            text += "a\(i): &a\(i) [\(refs)]\n"
        }
        let bomb = try #require(problem(text))
        #expect(bomb.message.contains("more than 100000 values"))
        #expect(bomb.line == 5)
        // A few aliases are fine.
        #expect(try parse("a: &a [1, 2]\nb: [*a, *a, *a]\n").entries.count == 2)
    }

    @Test func entryValuesPreserveOrderAndKeysAreText() throws {
        let yaml = try parse("z: 1\n'quoted key': 2\n\"42\": 3\n? explicit\n: 4\n")
        #expect(yaml.entries.map(\.key) == ["z", "quoted key", "42", "explicit"])
        #expect(yaml.entries.map(\.value) == ["1", "2", "3", "4"].map(plain))
        #expect(yaml.entries[3].source == "? explicit\n: 4\n")
    }
}
