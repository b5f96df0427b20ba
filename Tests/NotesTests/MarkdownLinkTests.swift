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
    }
}
