import Notes
import Testing

@Suite("Markdown links between notes: parsing")
struct MarkdownLinkTests {
    func targets(_ body: String, place: String? = nil) -> [WikiLink.Target] {
        WikiLink.parse(body, place: place).map(\.target)
    }

    @Test("forms of a link to a note's file, from the linking note's folder; what is not one")
    func forms() {
        let body = """
            [a](other.md) [b](sub/Other%20Note.md) [c](other.md#heading) [d](<other note.md>)
            [e](https://example.com/a.md) [f](mailto:a@b.md) ![img](pic.md) [g](file.txt) [h](#local) [i](//host/a.md)
            `[code](x.md)` [j](x.MD "a title") [k]( y.md  'title' ) [](empty.md) [l](C:x.md) [m](a%2.md)
            """
        let links = WikiLink.parse(body, place: "notes/n.md")
        #expect(
            links.map(\.target) == [
                .file("notes/other.md"), .file("notes/sub/Other Note.md"), .file("notes/other.md"),
                .file("notes/other note.md"), .file("notes/x.MD"), .file("notes/y.md"), .file("notes/empty.md"),
                .file("notes/C:x.md"), .file("notes/a%2.md"),
            ])
        #expect(links.map(\.label) == ["a", "b", "c", "d", "j", "k", "empty.md", "l", "m"])
        #expect(links.map(\.line) == [0, 0, 0, 0, 2, 2, 2, 2, 2])
        #expect(links[2].text == "[c](other.md#heading)")
        #expect(links[5].text == "[k]( y.md  'title' )")
        // The key keeps the path as written (it is looked up folded, its own spelling first).
        #expect(links[1].key == .file("notes/sub/Other Note.md"))
        // From a note of no file, and paths through `.`, `..` and the vault's root.
        #expect(targets("[a](other.md)") == [.file("other.md")])
        #expect(
            targets("[a](../up.md) [b](./here.md) [c](/root/x.md) [d](sub/../x.md)", place: "a/b/n.md") == [
                .file("a/up.md"), .file("a/b/here.md"), .file("root/x.md"), .file("a/b/x.md"),
            ])
        // Out of the vault, or naming no file: no link.
        #expect(targets("[a](../../../out.md) [b](..) [c](.md) [d](dir/)", place: "a/b/n.md").isEmpty)
        // Wiki links and Markdown links together, in order.
        #expect(targets("[[Wiki]] and [md](m.md) [[Again]]") == [.title("Wiki"), .file("m.md"), .title("Again")])
    }

    @Test("a wiki link by a path from the note's folder or the vault's root names that file")
    func relativeWikiLinks() {
        // As Obsidian's "relative path to file" format writes them (before 2026-12-07, titles).
        #expect(
            targets("[[../Plan]] [[./Sib#Part|s]] [[/B/Plan]] [[../x.MD]] [[./a/../b]]", place: "B/C/n.md") == [
                .file("B/Plan.md"), .file("B/C/Sib.md"), .file("B/Plan.md"), .file("B/x.MD"), .file("B/C/b.md"),
            ])
        // Out of the vault, an attachment's path, a bare name, a name that only starts with dots: names.
        #expect(
            targets("[[../../../out]] ![[../img/a.png]] [[Plan]] [[...later]] [[.hidden]]", place: "B/C/n.md") == [
                .title("../../../out"), .title("../img/a.png"), .title("Plan"), .title("...later"), .title(".hidden"),
            ])
        #expect(targets("[[../Up]] [[/Root]]") == [.title("../Up"), .file("Root.md")], "a note of no file")
        #expect(WikiLink.parse("[[../Plan|up]]", place: "B/n.md").map(\.label) == ["up"])
    }

    @Test("reference links to a note's file: full, collapsed and shortcut, defined anywhere in the body")
    func referenceLinks() {
        // Before 2026-12-07 each was text.
        let body = """
            See [the other][Other Note], [Sub][] and [shortcut] [here][  other   NOTE ].

            [Other Note]: other.md
              [sub]: <sub/Sub Note.md> "a title"
            [shortcut]: ../up.md#heading
            [Other note]: ignored.md
            """
        let links = WikiLink.parse(body, place: "notes/n.md")
        #expect(
            links.map(\.target) == [
                .file("notes/other.md"), .file("notes/sub/Sub Note.md"), .file("up.md"), .file("notes/other.md"),
            ])
        #expect(links.map(\.label) == ["the other", "Sub", "shortcut", "here"])
        #expect(links.map(\.text) == ["[the other][Other Note]", "[Sub][]", "[shortcut]", "[here][  other   NOTE ]"])
        #expect(links.map(\.line) == [0, 0, 0, 0])
        // A definition before its use; a definition line is no link, nor is its label.
        #expect(targets("[a]: x.md\n[b][a]") == [.file("x.md")])
        #expect(targets("[a]: x.md").isEmpty)
        // Not links: an undefined label (and the text before it is no shortcut), a definition of
        // a URL or another extension, an image, a label with brackets, and one in code.
        #expect(targets("[a][nope] [b][] [c]\n\n[a]: x.md\n[c]: https://e.com/c.md\n[b]: pic.png").isEmpty)
        #expect(targets("![img][a] ![a]\n\n[a]: x.md").isEmpty)
        #expect(targets("[x [a] y]\n\n[a]: x.md") == [.file("x.md")], "the inner one; no link inside a link")
        #expect(targets("`[a]` and\n```\n[a]\n```\n\n[a]: x.md").isEmpty)
        #expect(targets("```\n[a]: x.md\n```\n[a]").isEmpty, "a definition in code defines nothing")
        // Not definitions: 4 spaces in (code), text after the destination, no destination.
        #expect(targets("    [a]: x.md\n[a]").isEmpty)
        #expect(targets("[a]: x.md more\n[a]").isEmpty)
        #expect(targets("[a]:\n[a]").isEmpty)
        // An inline link is read first; a bad one falls back to the reference.
        #expect(targets("[a](y.md) [a](<y.md)\n\n[a]: x.md") == [.file("y.md"), .file("x.md")])
        // With wiki links, in order.
        #expect(targets("[[Wiki]] [a] [[Again]]\n\n[a]: x.md") == [.title("Wiki"), .file("x.md"), .title("Again")])
    }

    @Test("a definition cannot interrupt a paragraph (CommonMark 0.31, 4.7)")
    func definitionInParagraph() {
        // `Foo` then `[bar]: x.md` is one paragraph of text in CommonMark (its example of this
        // rule), so `[bar]` defines nothing: before 2026-12-07 the scan took the second line for
        // a definition.
        #expect(targets("Foo\n[bar]: x.md\n\n[bar]").isEmpty)
        // Under a list item's or a quote's line it is their paragraph's lazy line; under an HTML
        // block's first line, that block's (it goes on to a blank line); a `===` with no paragraph
        // above is text that opens one.
        for before in ["- item\n", "1. item\n", "> quote\n", "<div>\n", "===\n", "[a]: y.md\nFoo\n", "| a | b |\n"] {
            #expect(targets(before + "[bar]: x.md\n\n[bar]").isEmpty, "\(before.debugDescription)")
        }
        // Where a paragraph cannot be open it is one: at the start, after a blank line (in a quote
        // too), a heading, a thematic break, a setext underline, a fenced or an indented code
        // block, an HTML comment that started its line and ended, and another definition.
        for before in [
            "", "Foo\n\n", "Foo\n   \n", "> quote\n>\n", "# Heading\n", "***\n", "Foo\n---\n", "Foo\n===\n",
            "```\ncode\n```\n", "~~~\n[bar]: y.md\n~~~\n", "\n    code\n", "<!-- note -->\n", "<!--\nnote\n-->\n",
            "[other]: y.md\n",
        ] {
            #expect(targets(before + "[bar]: x.md\n\n[bar]") == [.file("x.md")], "\(before.debugDescription)")
        }
        // A run of definitions, each after the other, and text after them.
        #expect(
            targets("[a]: x.md\n[b]: y.md\n  [c]: z.md\nText [a] [b] [c]") == [
                .file("x.md"), .file("y.md"), .file("z.md"),
            ])
        // An HTML comment in a paragraph's line leaves the paragraph open.
        #expect(targets("Foo <!-- a\nb -->\n[bar]: x.md\n\n[bar]").isEmpty)
        // The line is the paragraph's text: a shortcut link to a definition elsewhere.
        #expect(targets("Foo\n[bar]: x.md\n\n[bar]: y.md") == [.file("y.md")])
    }

    @Test("a definition in a block quote or a list item defines its label for the whole note (CommonMark 0.31, 4.7)")
    func definitionsInContainers() {
        // Before 2026-12-07 each of these defined nothing: the scan took only a line of its own.
        for before in [
            "> [bar]: x.md\n", "Foo\n\n> [bar]: x.md\n", "> quote\n>\n> [bar]: x.md\n", "- [bar]: x.md\n",
            "* [bar]: x.md\n", "1. [bar]: x.md\n", "3) [bar]: x.md\n", "> - [bar]: x.md\n", ">> [bar]: x.md\n",
            // A quote or an item interrupts a paragraph (but for an item not numbered 1).
            "Foo\n> [bar]: x.md\n", "Foo\n- [bar]: x.md\n", "- item\n- [bar]: x.md\n", "> quote\n>> [bar]: x.md\n",
            "- item\n  - [bar]: x.md\n", "Foo\n1. [bar]: x.md\n",
        ] {
            #expect(targets(before + "\n[bar]") == [.file("x.md")], "\(before.debugDescription)")
        }
        // A paragraph's line goes on: under a quote's line in the same quote, or lazily.
        for before in [
            "> quote\n> [bar]: x.md\n", "> quote\n[bar]: x.md\n", "Foo\n2. [bar]: x.md\n", "- item\n  [bar]: x.md\n",
            "-     [bar]: x.md\n",
        ] {
            #expect(targets(before + "\n[bar]").isEmpty, "\(before.debugDescription)")
        }
        // The definition's line holds no link, and no `#tag` for an import.
        #expect(targets("> [bar]: x.md\n> [x](y.md)\n\n[a](z.md)") == [.file("y.md"), .file("z.md")])
        #expect(MarkdownLink.definitionLines(Array("Text\n\n> [a]: #b\n- [c]: d.md\n".utf8)) == [2, 3])
    }

    @Test("an HTML block's quote or item defines nothing; nested items and quotes in items are looked past")
    func definitionsInHTMLBlocksAndNestedContainers() {
        // Before 2026-12-07 (notes-28) each of these was taken for a definition: an HTML block
        // goes on to a blank line, a quote or an item in it is HTML; and a quote in an item goes
        // on with the item's quote's paragraph.
        for before in [
            "<div>\n- [bar]: x.md\n", "<div>\n> [bar]: x.md\n", "<table>\n1. [bar]: x.md\n</table>\n",
            "> <div>\n> - [bar]: x.md\n", "- > quote\n  > [bar]: x.md\n", "<!-- a\nb -->\nFoo\n[bar]: x.md\n",
        ] {
            #expect(targets(before + "\n[bar]").isEmpty, "\(before.debugDescription)")
        }
        // Before 2026-12-07 (notes-28) each of these defined nothing: a nested item, a quote in
        // an item, a list in a quote that interrupts a paragraph; the blank line or the quote's
        // end closes an HTML block; a comment block is no HTML block after its end.
        for before in [
            "- - [bar]: x.md\n", "- > [bar]: x.md\n", "1. - [bar]: x.md\n", "Foo\n> 2. [bar]: x.md\n",
            "<div>\n\n- [bar]: x.md\n", "> <div>\n- [bar]: x.md\n", "<!-- a\nb -->\n- [bar]: x.md\n",
            "<!-- a -->\nFoo\n- [bar]: x.md\n",
        ] {
            #expect(targets(before + "\n[bar]") == [.file("x.md")], "\(before.debugDescription)")
        }
    }

    @Test("hostile brackets: unbalanced, nested, escaped, images in links, unclosed destinations")
    func hostile() {
        #expect(targets("[a [b](x.md)") == [.file("x.md")], "the nearest open bracket")
        #expect(WikiLink.parse("[a [b](x.md)").first?.label == "b")
        #expect(targets("[a [b](x.md) c](y.md)") == [.file("x.md")], "no link inside a link")
        #expect(targets("[a [b] c](y.md)") == [.file("y.md")], "balanced brackets in the text")
        #expect(WikiLink.parse("[![img](pic.png)](z.md)").map(\.label) == ["![img](pic.png)"])
        #expect(targets("[![img](pic.md)](z.md)") == [.file("z.md")], "an image in a link's text is no link")
        #expect(targets(#"\[a](x.md) [b\](x.md) [c\]](y.md)"#) == [.file("y.md")], "escaped brackets are text")
        #expect(targets(#"\![a](x.md) \\[b](y.md)"#) == [.file("x.md"), .file("y.md")])
        #expect(targets(#"[a](x\ y.md) [b](<x\>y.md>) [c](a\(b.md)"#) == [.file("x>y.md"), .file("a(b.md")])
        #expect(targets("[a](x.md [b](x.md \"t) [c](<x.md) [d](x.md 'a' 'b')").isEmpty)
        #expect(targets("[a](x(1).md) [b](x((1)).md) [c](x(.md)") == [.file("x(1).md"), .file("x((1)).md")])
        #expect(
            targets("[a](" + String(repeating: "(", count: 40) + "x.md" + String(repeating: ")", count: 41)).isEmpty)
        #expect(targets("]](x.md) [a]](y.md) [[b](z.md)") == [.file("z.md")])
        #expect(targets("[a](%E6%9D%B1%E4%BA%AC.md) [b](%FF.md)") == [.file("東京.md")], "bytes no UTF-8 name has")
    }

    @Test("links in code and comments are text, as for wiki links")
    func code() {
        let body = """
            ```
            [a](x.md)
            ```
                [b](y.md)
            <!-- [c](z.md) -->
            `[d](w.md)` [e](v.md) [f `]` g](u.md)
            - item
              ~~~
              [h](t.md)
              ~~~
            > ```
            > [i](s.md)
            > ```
            """
        #expect(targets(body) == [.file("v.md"), .file("u.md")])
        #expect(WikiLink.parse(body).map(\.label) == ["e", "f `]` g"])
        #expect(WikiLink.parse(body).map(\.line) == [5, 5])
    }

    @Test("very long lines of brackets and parentheses are read in one pass")
    func longLines() {
        // Each of these took quadratic time in a scan that looked for each `(`'s `)` to the line's
        // end: 300,000 bytes, about 10^10 steps.
        let n = 100_000
        #expect(targets(String(repeating: "[](x", count: n) + "[ok](y.md)") == [.file("y.md")])
        #expect(targets(String(repeating: "[", count: n) + "](z.md)") == [.file("z.md")])
        #expect(targets(String(repeating: "](", count: n) + "[a](b.md)") == [.file("b.md")])
        #expect(targets(String(repeating: "[a](x \"", count: n)).isEmpty)
        #expect(targets(String(repeating: "[a](x (", count: n)).isEmpty)
        #expect(targets(String(repeating: "[a](<x", count: n)).isEmpty)
        #expect(targets("[a](" + String(repeating: "(", count: n)).isEmpty)
        #expect(targets(String(repeating: "[[a](b.md)", count: n)).count == n)
        // Reference links: each label is read once (`[a][a]` is one link; `[a]` before a `[`
        // that opens no label, or a label over 999 characters, a shortcut).
        #expect(targets(String(repeating: "[a] ", count: n) + "\n\n[a]: x.md").count == n)
        #expect(targets(String(repeating: "[a]", count: n) + "\n\n[a]: x.md").count == n / 2)
        #expect(targets(String(repeating: "[a][", count: n) + "\n\n[a]: x.md").count == n)
        #expect(targets("[a][" + String(repeating: "b", count: n) + "]\n\n[a]: x.md") == [.file("x.md")])
        #expect(targets(String(repeating: "[", count: n) + "a]" + "\n\n[a]: x.md") == [.file("x.md")])
    }
}
