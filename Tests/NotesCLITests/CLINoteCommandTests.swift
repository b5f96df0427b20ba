import Basics
import Foundation
import Testing

/// Issue 3's commands end to end through the built binary: add, show, edit and the one-flag
/// commands, with the body taken byte for byte from every source.
@Suite("CLI: add, show, edit, pin and friends")
struct CLINoteCommandTests {
    @Test("add takes the body from --body, --body-file, - and piped stdin, byte for byte")
    func addBodySources() throws {
        let s = try Sandbox()
        let body = "  leading spaces, no final newline\n\n\ttab"
        let viaFlag = try s.add("Flag", "--body", body)
        #expect(viaFlag.count == 8 && viaFlag.allSatisfy(\.isHexDigit), "add prints the short id: \(viaFlag)")
        write(file: s.path("body.txt"), body + "\n\n")
        let viaFile = try s.add("File", "--body-file", s.path("body.txt"))
        let viaDash = try s.ok("add", "Dash", "-", stdin: "from stdin\n").line
        let viaPipe = try s.ok("add", "Piped", stdin: "piped\r\n").line
        let viaBodyFileDash = try s.ok("add", "BodyFileDash", "--body-file", "-", stdin: "dash file").line
        let empty = try s.add("Empty")

        #expect(try s.object("show", viaFlag)["body"] as? String == body)
        #expect(try s.object("show", viaFile)["body"] as? String == body + "\n\n")
        #expect(try s.object("show", viaDash)["body"] as? String == "from stdin\n")
        #expect(try s.object("show", viaPipe)["body"] as? String == "piped\r\n")
        #expect(try s.object("show", viaBodyFileDash)["body"] as? String == "dash file")
        #expect(try s.object("show", empty)["body"] as? String == "")

        // Two body sources at once is a usage error and adds nothing.
        let twice = s.run("add", "Twice", "--body", "a", "-", stdin: "b")
        #expect(twice.code == 2, "\(twice)")
        #expect(try s.titles("--all").count == 6)
    }

    @Test("add trims the title, puts the note in a category (creating it) and pins it")
    func addCategoryAndPin() throws {
        let s = try Sandbox()
        let id = try s.add("  Groceries \t", "--category", "Home", "--pin", "--body", "- milk\n- eggs\n")
        let note = try s.object("show", id)
        expectNoteShape(note)
        #expect(note["title"] as? String == "Groceries")
        #expect(note["category"] as? String == "Home")
        #expect(isJSONBool(note["pinned"]) && note["pinned"] as? Bool == true)
        #expect(note["body"] as? String == "- milk\n- eggs\n")
        #expect(note["version"] as? Int == 1)
        #expect((note["id"] as? String)?.hasPrefix(id) == true)
        #expect(
            note["createdAt"] as? String == "2026-11-29T12:00:00.000000Z" || note["createdAt"] as? String == fixedNow)

        // Short flags, and an existing category matched without regard to case.
        let other = try s.add("Soap", "-c", "home", "-p")
        #expect(try s.object("show", other)["category"] as? String == "Home")
        let cats = try #require(try s.run("categories", "--json").json() as? [[String: Any]])
        #expect(cats.count == 1)
        #expect(cats.first?["name"] as? String == "Home" && cats.first?["count"] as? Int == 2)
    }

    @Test("show prints title, id, version, category, flags and the body; any unique prefix or the full id works")
    func show() throws {
        let s = try Sandbox()
        let id = try s.add("Groceries", "--body", "- milk\n", "--category", "Home", "--pin")
        let human = try s.ok("show", id)
        #expect(human.lines.first == "Groceries")
        #expect(human.lines.count >= 3)
        let meta = human.lines[1]
        #expect(meta.contains(id) && meta.contains("v1") && meta.contains("[Home]") && meta.contains("pinned"))
        #expect(human.stdout.hasSuffix("\n- milk\n"), "the body is printed as is: \(human.stdout)")

        let full = try #require(try s.object("show", id)["id"] as? String)
        for form in [full, full.uppercased(), full.filter { $0 != "-" }, String(id.prefix(4)), id.uppercased()] {
            #expect(try s.object("show", form)["id"] as? String == full, "show \(form)")
        }
        // A body without a final newline still ends the output with one.
        let bare = try s.add("Bare", "--body", "no newline")
        #expect(try s.ok("show", bare).stdout.hasSuffix("\nno newline\n"))
    }

    @Test("show escapes control and bidi characters in its header as tables do, through a pipe too; the body as is")
    func showEscapesHeader() throws {
        let s = try Sandbox()
        // Before 2026-12-07 the heading line printed the title raw: U+202E (a right-to-left
        // override) turned the line around, and through a pipe U+009B (a CSI) went out as it was.
        let title = "Bad\u{9B}2J abc\u{202E}def"
        let body = "body \u{202E}kept\n"
        // U+009B as an import or another device may give it (typed, it is refused since 2026-12-07).
        let id = try addThroughLibrary(s, title, body: body, category: "Work\u{2067}x", tags: ["t\u{200F}ag"])
        try s.ok("alias", id, "al\u{202D}ias")
        let human = try s.ok("show", id)
        #expect(human.lines.first == "Bad\u{FFFD}2J abc<U+202E>def", "\(human.stdout)")
        let header = human.lines.prefix { !$0.isEmpty }
        #expect(header.count == 4, "\(human.stdout)")
        #expect(
            !header.joined().unicodeScalars.contains { isBidiControl($0) || breaksLine($0) }, "\(human.stdout)")
        #expect(header[1].contains("[Work<U+2067>x]") && header[2].contains("#t<U+200F>ag"), "\(human.stdout)")
        #expect(header[3].contains("al<U+202D>ias"), "\(human.stdout)")
        #expect(human.stdout.hasSuffix("\n" + body), "the body is printed as is: \(human.stdout)")
        #expect(try s.object("show", id)["title"] as? String == title, "--json gives the title exactly")
    }

    @Test("edit changes the title and the body, one event each, and checks --expect-version")
    func edit() throws {
        let s = try Sandbox()
        let id = try s.add("Draft", "--body", "one")
        let retitled = try s.ok("edit", id, "--title", "  Final  ")
        #expect(retitled.line == "\(id) v2")
        var note = try s.object("show", id)
        #expect(note["title"] as? String == "Final" && note["version"] as? Int == 2)

        let both = try s.object("edit", id, "--title", "Both", "--body", "two\n")
        expectNoteShape(both)
        #expect(both["title"] as? String == "Both" && both["body"] as? String == "two\n")
        #expect(both["version"] as? Int == 4, "a title and a body change are two events")

        // No actual change appends nothing.
        #expect(try s.object("edit", id, "--title", "Both", "--body", "two\n")["version"] as? Int == 4)

        write(file: s.path("b.md"), "from a file")
        #expect(try s.object("edit", id, "--body-file", s.path("b.md"))["body"] as? String == "from a file")
        #expect(try s.object("edit", id, "-", stdin: "from stdin")["body"] as? String == "from stdin")
        #expect(try s.object("edit", id, "-b", "short flag")["body"] as? String == "short flag")
        note = try s.object("edit", id, "-t", "Short title", "--expect-version", "7")
        #expect(note["title"] as? String == "Short title" && note["version"] as? Int == 8)

        // A stale --expect-version is a conflict (exit 4) and changes nothing.
        let stale = s.run("edit", id, "--body", "lost", "--expect-version", "7")
        #expect(stale.code == 4, "\(stale)")
        #expect(stale.stdout.isEmpty)
        #expect(stale.stderr.hasPrefix("notes: error: ") && stale.stderr.contains("version 8"))
        note = try s.object("show", id)
        #expect(note["body"] as? String == "short flag" && note["version"] as? Int == 8)
        // The matching version succeeds.
        #expect(try s.object("edit", id, "--body", "kept", "--expect-version", "8")["version"] as? Int == 9)
    }

    @Test("an edit to text that differs only in its Unicode form (é as e and U+0301) is an edit, kept byte for byte")
    func editUnicodeForm() throws {
        let s = try Sandbox()
        // Swift's == takes canonically equivalent texts for one: before 2026-12-06 such an edit
        // printed the old version, exit 0, and appended nothing (and an editor's, the Markdown
        // import's and a restore's the same).
        let id = try s.add("Caf\u{E9}", "--body", "caf\u{E9} au lait\n")
        let edited = try s.object("edit", id, "--title", "Cafe\u{301}", "--body", "cafe\u{301} au lait\n")
        #expect(edited["version"] as? Int == 3, "a retitle and a body edit")
        let note = try s.object("show", id)
        #expect((note["title"] as? String).map { Array($0.unicodeScalars) } == Array("Cafe\u{301}".unicodeScalars))
        #expect(
            (note["body"] as? String).map { Array($0.unicodeScalars) } == Array("cafe\u{301} au lait\n".unicodeScalars))
        // History says what changed, and a restore of v1 puts the first form back.
        let history = try s.ok("history", id).stdout
        #expect(history.contains("NoteRetitled") && history.contains("body +1 -1 lines"), "\(history)")
        #expect(try s.object("restore", id, "--to", "1")["version"] as? Int == 4)
        let back = try s.object("show", id)
        #expect(
            (back["body"] as? String).map { Array($0.unicodeScalars) } == Array("caf\u{E9} au lait\n".unicodeScalars))
        // The same bytes again change nothing.
        #expect(try s.object("edit", id, "--body", "caf\u{E9} au lait\n")["version"] as? Int == 4)
    }

    @Test("pin, unpin, archive, unarchive, trash, untrash and categorize change one thing each")
    func flagCommands() throws {
        let s = try Sandbox()
        let id = try s.add("Note")
        #expect(try s.ok("pin", id).line == "\(id) v2")
        #expect(try s.ok("pin", id).line == "\(id) v2", "pinning a pinned note appends nothing")
        var o = try s.object("unpin", id)
        #expect(o["pinned"] as? Bool == false && o["version"] as? Int == 3)
        o = try s.object("archive", id)
        #expect(o["archived"] as? Bool == true && o["version"] as? Int == 4)
        #expect(try s.titles().isEmpty && s.titles("--archived") == ["Note"])
        o = try s.object("unarchive", id)
        #expect(o["archived"] as? Bool == false && o["version"] as? Int == 5)
        o = try s.object("trash", id)
        #expect(o["trashed"] as? Bool == true && o["version"] as? Int == 6)
        #expect(try s.titles().isEmpty && s.titles("--trashed") == ["Note"])
        o = try s.object("untrash", id)
        #expect(o["trashed"] as? Bool == false && o["version"] as? Int == 7)
        o = try s.object("categorize", id, "Work")
        expectNoteShape(o)
        #expect(o["category"] as? String == "Work" && o["version"] as? Int == 8)
        #expect(try s.ok("categorize", id, "work").line == "\(id) v8", "the same category (any case) is no change")
        o = try s.object("categorize", id, "--none")
        #expect(o["category"] is NSNull && o["version"] as? Int == 9)
        #expect(try s.titles("--uncategorized") == ["Note"])

        // categorize needs a name or --none, not both.
        #expect(s.run("categorize", id).code == 2)
        #expect(s.run("categorize", id, "Work", "--none").code == 2)
        for command in ["pin", "unpin", "archive", "unarchive", "trash", "untrash"] {
            #expect(s.run(command).code == 2, "\(command) without an id")
        }
    }

    @Test("--json: every command that shows or changes a note prints the note; list an array; others an object")
    func jsonShapes() throws {
        let s = try Sandbox()
        let added = try s.ok("add", "Shape", "--json", "--category", "Work", stdin: "body")
        let note = try added.object()
        expectNoteShape(note)
        let required: Set<String> = [
            "id", "title", "body", "category", "pinned", "archived", "trashed", "createdAt", "updatedAt", "version",
        ]
        #expect(required.isSubset(of: note.keys))
        let id = try #require(note["id"] as? String)
        for args in [
            ["show", id], ["edit", id, "--title", "Shape 2"], ["pin", id], ["unpin", id], ["archive", id],
            ["unarchive", id], ["trash", id], ["untrash", id], ["categorize", id, "Home"],
            ["categorize", id, "--none"],
        ] {
            let r = s.run(args + ["--json"])
            #expect(r.code == 0, "\(args): \(r)")
            let o = try r.object()
            expectNoteShape(o)
            #expect(required.isSubset(of: o.keys) && o["id"] as? String == id, "\(args)")
        }
        let list = try s.ok("--json", "list", "--all").array()
        #expect(list.count == 1)
        for o in list { expectNoteShape(o) }
        #expect(try s.ok("list", "--archived", "--json").json() as? [Any] != nil, "an empty list is []")
        let cats = try s.ok("categories", "--json").array()
        #expect(Set(cats.flatMap(\.keys)) == ["name", "count"])
        // The JSON is one document (pretty-printed), ending with a newline.
        #expect(added.stdout.hasPrefix("{") && added.stdout.hasSuffix("}\n"))

        let set = try s.ok("config", "set", "sort", "title", "--json").object()
        #expect(set["key"] as? String == "sort" && set["value"] as? String == "title")
        #expect(set["file"] as? String == s.configFile)
        #expect(try s.ok("config", "get", "sort", "--json").json() as? String == "title")
        let unset = try s.ok("config", "unset", "sort", "--json").object()
        #expect(unset["key"] as? String == "sort" && unset["value"] is NSNull)
    }

    @Test("an option's value may begin with a dash, and -- ends the options")
    func dashValues() throws {
        let s = try Sandbox()
        let milk = try s.add("Shopping", "--body", "- milk")
        #expect(try s.object("show", milk)["body"] as? String == "- milk")
        let dashed = try s.add("Dashed", "--body", "--json")
        #expect(try s.object("show", dashed)["body"] as? String == "--json")
        let inline = try s.add("Inline", "--body=- eggs --pin")
        let o = try s.object("show", inline)
        #expect(o["body"] as? String == "- eggs --pin" && o["pinned"] as? Bool == false)
        let title = try s.ok("add", "--", "--not-an-option").line
        #expect(try s.object("show", title)["title"] as? String == "--not-an-option")
        let afterCommand = try s.ok("add", "--pin", "--", "-5 degrees").line
        let cold = try s.object("show", afterCommand)
        #expect(cold["title"] as? String == "-5 degrees" && cold["pinned"] as? Bool == true)
        #expect(try s.object("edit", milk, "--title", "-x-")["title"] as? String == "-x-")
        // After `--` even `--json` is an argument, so give the global option first.
        let r = s.run("--json", "categorize", milk, "--", "-dash-")
        #expect(try r.object()["category"] as? String == "-dash-", "\(r)")
    }

    @Test("global options work before and after the command")
    func globalOptionsAnywhere() throws {
        let s = try Sandbox()
        let other = s.path("other-store")
        let a = try s.ok("--store", other, "add", "Before").line
        let b = try s.ok("add", "After", "--store", other).line
        let c = try s.ok("--store=\(other)", "add", "Equals").line
        #expect(!fileExists(s.store), "the default store is untouched")
        let before = try s.ok("--json", "--store", other, "list").array()
        let after = try s.ok("list", "--store", other, "--json").array()
        let mixed = try s.ok("--store", other, "list", "--json").array()
        #expect(before.count == 3 && before.map { $0["id"] as? String } == after.map { $0["id"] as? String })
        #expect(mixed.count == 3)
        for id in [a, b, c] {
            #expect(before.contains { ($0["id"] as? String)?.hasPrefix(id) == true })
        }
        #expect(try s.ok("--json", "show", a, "--store", other).object()["title"] as? String == "Before")
        #expect(try s.ok("--no-color", "--no-pager", "show", a, "--store", other).lines.first == "Before")
    }

    @Test("stats counts notes, events and categories, and reports the store's size")
    func stats() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--category", "Work")
        try s.add("B")
        try s.ok("pin", a)
        let o = try s.object("stats")
        #expect(o["notes"] as? Int == 2)
        #expect(o["events"] as? Int == 4, "category created, two notes created, one pin")
        #expect(o["categories"] as? Int == 1)
        #expect(o["store"] as? String == s.store)
        for key in ["notes", "events", "categories", "storeBytes", "fileBytes"] {
            #expect(isJSONInteger(o[key]), "\(key) is an integer")
        }
        #expect((o["storeBytes"] as? Int ?? 0) > 0 && (o["fileBytes"] as? Int ?? 0) >= (o["storeBytes"] as? Int ?? 0))
        let human = try s.ok("stats")
        #expect(human.stdout.contains(s.store))
        let rows = Dictionary(
            human.lines.compactMap { line -> (String, String)? in
                let parts = line.split(separator: " ", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
            }, uniquingKeysWith: { a, _ in a })
        #expect(rows["notes"] == "2" && rows["events"] == "4" && rows["categories"] == "1")
        #expect(rows["size"]?.contains("on disk") == true)
        #expect(s.run("stats", "extra").code == 2)
    }
}
