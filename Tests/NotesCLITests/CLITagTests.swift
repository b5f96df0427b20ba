import Foundation
import Testing

/// Tags through the built binary: every command and flag of the tags issue.
@Suite("CLI: tags")
struct CLITagTests {
    func tags(_ s: Sandbox, _ id: String) throws -> [String] {
        try #require(try s.object("show", id)["tags"] as? [String])
    }

    @Test("add --tag, tag and untag; show, list and every note JSON carry the sorted tag names")
    func tagAndUntag() throws {
        let s = try Sandbox()
        let a = try s.add("Acme plan", "--tag", " work / acme ", "--tag", "Home", "--tag", "home")
        #expect(try tags(s, a) == ["Home", "work/acme"], "trimmed parts, one tag per name whatever its case")
        let shown = try s.ok("show", a)
        #expect(shown.lines.contains("  tags: #Home #work/acme"), "\(shown)")
        let b = try s.add("Budget")
        #expect(try tags(s, b) == [])
        let tagged = try s.object("tag", b, "work", "HOME")
        #expect(tagged["tags"] as? [String] == ["Home", "work"], "an existing tag is found without regard to case")
        #expect(tagged["version"] as? Int == 3, "one NoteTagged per tag")
        #expect(try s.ok("tag", b, "work").line == "\(b) v3", "a tag the note has already changes nothing")
        #expect(try s.ok("untag", b, "home").line == "\(b) v4")
        #expect(try tags(s, b) == ["work"])
        #expect(try s.ok("untag", b, "Home").line == "\(b) v4", "untagging a tag the note lacks changes nothing")

        let list = try s.ok("list", "--json").array()
        #expect(list.allSatisfy { $0["tags"] is [String] }, "every note object has tags")
        let table = try s.ok("list")
        #expect(table.stdout.contains("#Home #work/acme"), "\(table)")
        let search = try s.ok("search", "plan", "--json").array()
        #expect(search.first?["tags"] as? [String] == ["Home", "work/acme"])

        let history = try s.ok("history", a).lines
        #expect(history.contains { $0.hasSuffix("NoteTagged   tags +work/acme") }, "\(history)")
        #expect(try s.ok("history", b).lines.last?.hasSuffix("tags -Home") == true)
    }

    @Test("a tag named as it is shown, #work, names the tag work in every command; ## names a tag that starts with #")
    func hashNamesTheShownTag() throws {
        let s = try Sandbox()
        let a = try s.add("Acme plan", "--tag", "#work")
        #expect(try tags(s, a) == ["work"], "the shown form adds the tag, not a tag named #work")
        let b = try s.add("Budget plan")
        #expect(try s.object("tag", b, "#work", " #home ")["tags"] as? [String] == ["home", "work"])
        #expect(try s.ok("list", "--tag", "#work", "--json").array().count == 2)
        #expect(try s.ok("search", "plan", "tag:#home", "--json").array().count == 1)
        #expect(try s.ok("search", "plan", "--tag", "#home", "--json").array().count == 1)
        #expect(try s.object("untag", b, "#home")["tags"] as? [String] == ["work"])
        let hashed = try s.object("tag", b, "##hash")
        #expect(hashed["tags"] as? [String] == ["#hash", "work"], "two hashes: a tag whose name starts with one")
        #expect(try s.ok("tags", "rename", "##hash", "#plain").stdout.contains("plain"))
        #expect(try tags(s, b) == ["plain", "work"])
        #expect(try s.ok("tags", "delete", "#plain").stdout.contains("1 note untagged"))
        let bare = s.run("tag", a, "#")
        #expect(bare.code == 2 && bare.stderr.hasPrefix("notes: error: the tag name"), "\(bare)")
    }

    @Test("bad tag names and missing tags: one-line errors, documented exit codes, nothing changed")
    func errors() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--tag", "work")
        let before = try s.ok("export").stdout
        for bad in ["", "   ", "a//b", "/a", "a/", "a\u{7}b", String(repeating: "t", count: 201)] {
            let r = s.run("tag", a, bad)
            #expect(r.code == 2, "\(bad.debugDescription): \(r)")
            #expect(r.stderr.hasPrefix("notes: error: the tag name"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
        }
        #expect(s.run("add", "B", "--tag", "x//y").code == 2)
        let missing = s.run("untag", a, "nope")
        #expect(missing.code == 3 && missing.stderr.contains("no tag is named \"nope\"; see `notes tags`"))
        #expect(s.run("list", "--tag", "nope").code == 3)
        #expect(s.run("tags", "rename", "nope", "x").code == 3)
        #expect(s.run("tags", "delete", "nope").code == 3)
        let typo = s.run("tags", "renam", "a", "b")
        #expect(typo.code == 2 && typo.stderr.contains("did you mean \"rename\""))
        #expect(s.run("tag", a).code == 2, "a tag is needed")
        let onlyTags = s.run("search", "tag:work")
        #expect(onlyTags.code == 2 && onlyTags.stderr.contains("notes list --tag work"), "\(onlyTags)")
        #expect(try s.ok("export").stdout == before, "no refused command changed the store")
    }

    @Test("tags: a tree with own counts and totals including descendants; --json name, count, total")
    func tree() throws {
        let s = try Sandbox()
        try s.add("1", "--tag", "work/acme")
        try s.add("2", "--tag", "work/acme", "--tag", "work")
        try s.add("3", "--tag", "work/acme/q3")
        let t = try s.add("4", "--tag", "work/beta")
        try s.ok("trash", t)
        try s.add("5", "--tag", "home")
        try s.add("6", "--tag", "clients/zeta")
        let text = try s.ok("tags", "--all").lines
        #expect(
            text == [
                "clients  -  1",
                "  zeta   1  1",
                "home     1  1",
                "work     1  3",
                "  acme   2  3",
                "    q3   1  1",
                "  beta   0  0",
            ], "\(text)")
        let json = try s.ok("tags", "--json", "--all").array()
        #expect(
            json.map { $0["name"] as? String } == [
                "clients", "clients/zeta", "home", "work", "work/acme", "work/acme/q3", "work/beta",
            ])
        #expect(json.map { $0["total"] as? Int } == [1, 1, 1, 3, 3, 1, 0], "a note under two tags counts once")
        for o in json { #expect(Set(o.keys) == ["name", "count", "total", "tag"]) }
        // `clients` is no tag (`-` in the table), `work/beta` a tag of no note: before
        // (trial-s31) both were {"count": 0}, and JSON could not tell them apart.
        #expect(json.map { $0["tag"] as? Bool } == [false, true, true, true, true, true, true])
    }

    @Test("tags leaves out a tag no note carries (untagged, or only in the trash); --all lists it, 0 0")
    func tagsWithoutNotesLeftOut() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--tag", "work/acme", "--tag", "home")
        let b = try s.add("B", "--tag", "work/beta", "--tag", "old")
        try s.ok("untag", a, "home")
        try s.ok("trash", b)
        #expect(try s.ok("tags").lines == ["work    -  1", "  acme  1  1"])
        let json = try s.ok("tags", "--json").array()
        #expect(json.map { $0["name"] as? String } == ["work", "work/acme"])
        #expect(
            try s.ok("tags", "--all").lines == [
                "home    0  0", "old     0  0", "work    -  1", "  acme  1  1", "  beta  0  0",
            ])
        // The tag is still there: tagging with it again finds it, spelled as it was.
        try s.ok("tag", a, "HOME")
        #expect(try s.ok("tags").lines == ["home    1  1", "work    -  1", "  acme  1  1"])
        // None left with a note: the listing says how to see them.
        try s.ok("trash", a)
        let none = try s.ok("tags")
        #expect(none.lines == ["no tag has a note; `notes tags --all` lists the 4 tags without one"], "\(none)")
        #expect(try s.ok("tags", "--json").array().isEmpty)
        // --all belongs to the listing: with an action it is refused, and nothing changes.
        let refused = s.run("tags", "delete", "old", "--all")
        #expect(refused.code == 2 && refused.stdout.isEmpty, "\(refused)")
        #expect(
            refused.stderr
                == "notes: error: --all is an option of the listing, not of tags delete; usage: notes tags delete NAME\n"
        )
        #expect(try s.ok("tags", "--all").lines.count == 5)
    }

    @Test("list --tag: descendants included, repeated tags all must match, with --category and statuses")
    func listByTag() throws {
        let s = try Sandbox()
        try s.add("acme", "--tag", "work/acme")
        try s.add("work", "--tag", "work")
        try s.add("both", "--tag", "work/acme", "--tag", "home", "--category", "C")
        try s.add("home", "--tag", "home")
        let trashed = try s.add("gone", "--tag", "work")
        try s.ok("trash", trashed)
        #expect(try s.titles("--tag", "work", "--sort", "title") == ["acme", "both", "work"])
        #expect(try s.titles("--tag", "work/acme", "--sort", "title") == ["acme", "both"])
        #expect(try s.titles("--tag", "WORK", "--tag", "home") == ["both"])
        #expect(try s.titles("--tag", "work", "--category", "C") == ["both"])
        #expect(try s.titles("--tag", "work", "--trashed") == ["gone"])
        #expect(try s.titles("--tag", "work", "--limit", "1", "--sort", "title") == ["acme"])
        #expect(try s.titles("--tag", "work", "--reverse", "--sort", "title") == ["work", "both", "acme"])
        let search = try s.ok("search", "tag:work/acme", "both", "--json").array()
        #expect(search.map { $0["title"] as? String } == ["both"])
        #expect(try s.ok("search", "acme", "TAG:home", "--json").array().isEmpty)
        #expect(
            try s.ok("search", "both", "--tag", "work", "--json").array().map { $0["title"] as? String } == ["both"])
        #expect(try s.ok("search", "home", "--tag", "work", "--json").array().isEmpty)
    }

    @Test("tags rename moves the subtree in one event per tag; conflicts are refused and change nothing")
    func renameNested() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--tag", "work/acme")
        try s.add("B", "--tag", "work")
        try s.add("C", "--tag", "job2")
        let versions = try s.object("show", a)["version"] as? Int
        let renamed = try s.ok("tags", "rename", "work", "job").line
        #expect(renamed == "renamed 2 tags: job, job/acme")
        #expect(try tags(s, a) == ["job/acme"])
        #expect(try s.object("show", a)["version"] as? Int == versions, "a rename adds no event to the notes")
        #expect(try s.titles("--tag", "job", "--sort", "title") == ["A", "B"])
        let conflict = s.run("tags", "rename", "job/acme", "JOB2")
        #expect(conflict.code == 2 && conflict.stderr.contains("a tag named \"JOB2\" exists already"), "\(conflict)")
        #expect(try tags(s, a) == ["job/acme"])
        // A parent that is no tag is renamed through its children.
        try s.ok("tags", "rename", "job/acme", "clients/acme/main")
        #expect(try s.ok("tags", "rename", "clients", "customers").line == "renamed 1 tag: customers/acme/main")
        let log = try s.ok("log", "--type", "TagRenamed").lines
        #expect(log.count == 4, "\(log)")
        #expect(log.contains { $0.hasSuffix("tag renamed \"work/acme\" -> \"job/acme\"") })
    }

    @Test("tags rename and delete of a large subtree name the first 10 tags and count the others; --json all")
    func largeSubtreeSummarized() throws {
        let s = try Sandbox()
        let id = try s.add("N")
        #expect(s.run(["tag", id] + (1...25).map { "p/t\($0 < 10 ? "0" : "")\($0)" }).code == 0)
        // Before (trial-s31) every name was printed on the one line: 10,000 tags renamed made a
        // line of 100 KB.
        let first = (1...10).map { "q/t\($0 < 10 ? "0" : "")\($0)" }.joined(separator: ", ")
        #expect(try s.ok("tags", "rename", "p", "q").line == "renamed 25 tags: \(first) and 15 more")
        let deleted = try s.ok("tags", "delete", "q").line
        #expect(deleted == "deleted 25 tags (\(first) and 15 more); 1 note untagged", "\(deleted)")
        #expect(s.run(["tag", id] + (1...12).map { "r/\($0)" }).code == 0)
        #expect(try s.ok("tags", "rename", "r", "u", "--json").array().count == 12)
        #expect((try s.ok("tags", "delete", "u", "--json").object()["deleted"] as? [String])?.count == 12)
    }

    @Test("tags delete removes the subtree and untags its notes with an event each, trashed notes too")
    func deleteNested() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--tag", "work/acme", "--tag", "home")
        let b = try s.add("B", "--tag", "work")
        try s.ok("trash", b)
        try s.add("C", "--tag", "home")
        let deleted = try s.object("tags", "delete", "Work")
        #expect(deleted["deleted"] as? [String] == ["work", "work/acme"] && deleted["untagged"] as? Int == 2)
        #expect(try tags(s, a) == ["home"])
        #expect(try tags(s, b) == [])
        #expect(try s.ok("tags").lines == ["home  2  2"])
        let untags = try s.ok("export").lines.compactMap { line -> [String: Any]? in
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return o?["type"] as? String == "NoteUntagged" ? o : nil
        }
        #expect(untags.count == 2)
        let causes = untags.compactMap { ($0["metadata"] as? [String: Any])?["causationId"] as? String }
        #expect(causes.count == 2, "each untagging names the deletion that caused it")
        #expect(try s.ok("history", a).lines.last?.hasSuffix("tags -work/acme") == true)
        // The name is free again, for a new tag.
        try s.ok("tag", a, "work")
        #expect(try tags(s, a) == ["home", "work"])
    }

    @Test("show --at, diff and list --as-of name tags as they were then; restore brings tags back")
    func timeTravel() throws {
        let s = try Sandbox()
        func at(_ t: String) -> [String: String?] { ["NOTES_NOW": t] }
        let a = try s.ok("add", "A", "--tag", "work", env: at("2026-01-01T10:00:00Z")).line
        try s.ok("tag", a, "home", env: at("2026-01-02T10:00:00Z"))
        try s.ok("tags", "rename", "work", "job", env: at("2026-01-03T10:00:00Z"))
        try s.ok("untag", a, "home", env: at("2026-01-04T10:00:00Z"))
        try s.ok("tags", "delete", "home", env: at("2026-01-05T10:00:00Z"))

        #expect(try s.object("show", a, "--at", "2")["tags"] as? [String] == ["work"], "named as at v2")
        #expect(try s.object("show", a, "--at", "3")["tags"] as? [String] == ["home", "work"])
        // At an instant, the names of that instant, as `list --as-of` gives them: the rename at
        // 01-03 counts though the note's version then is still v3 (before 2026-12-06, `work`).
        #expect(try s.object("show", a, "--at", "2026-01-03T12:00:00Z")["tags"] as? [String] == ["home", "job"])
        #expect(try s.object("show", a, "--at", "2026-01-02T12:00:00Z")["tags"] as? [String] == ["home", "work"])
        #expect(try s.object("show", a)["tags"] as? [String] == ["job"])
        #expect(try s.ok("diff", a, "1", "3").lines.first == "tags: +home +work")
        let before = try s.ok("list", "--as-of", "2026-01-02T12:00:00Z", "--tag", "work", "--json").array()
        #expect(before.map { $0["tags"] as? [String] } == [["home", "work"]])
        #expect(s.run("list", "--as-of", "2026-01-02T12:00:00Z", "--tag", "job").code == 3, "no job tag then")
        let after = try s.ok("list", "--as-of", "2026-01-03T12:00:00Z", "--tag", "job", "--json").array()
        #expect(after.count == 1)
        #expect(
            try s.ok("search", "A", "tag:work", "--as-of", "2026-01-02T12:00:00Z", "--json").array().count == 1)

        let restored = s.run("restore", a, "--to", "3", "--json")
        #expect(restored.code == 0, "\(restored)")
        #expect(restored.stderr.contains("v3 had tag \"home\", deleted since; the note is restored without it"))
        let o = try restored.object()
        #expect(o["tags"] as? [String] == ["job"] && o["deletedTags"] as? [String] == ["home"])
        #expect(o["appended"] as? Bool == false, "without the deleted tag, v3 is what the note is now")
        try s.ok("untag", a, "job")
        #expect(try s.ok("undo", a).line == "\(a) v6 (back to v4)")
        #expect(try tags(s, a) == ["job"], "undo of an untagging tags again")
        #expect(try s.ok("verify").line.hasPrefix("ok:"))
    }

    @Test("export, import and verify of a store with tags; rebuild equals the inline projections")
    func interchange() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--tag", "work/acme", "--tag", "x")
        try s.ok("tags", "rename", "work", "job")
        try s.ok("tags", "delete", "x")
        try s.ok("tag", a, "y")
        let export = try s.ok("export").stdout
        #expect(export.contains("\"type\":\"TagCreated\"") && export.contains("\"stream\":\"tag/"))
        let other = s.path("other")
        #expect(s.run(["import", "--store", other, "-"], stdin: Array(export.utf8)).code == 0)
        #expect(try s.ok("export", "--store", other).stdout == export)
        #expect(try s.ok("tags", "--store", other, "--json").stdout == s.ok("tags", "--json").stdout)
        #expect(try s.ok("verify", "--store", other).line.hasPrefix("ok:"))
        try s.ok("rebuild", "--store", other)
        #expect(try s.ok("tags", "--store", other).stdout == s.ok("tags").stdout)
        #expect(
            try s.ok("list", "--store", other, "--tag", "job", "--json").stdout
                == s.ok("list", "--tag", "job", "--json").stdout)
        // A tag name that a command would refuse is refused by import too.
        let bad = export.replacingOccurrences(of: "\"name\":\"y\"", with: "\"name\":\"a//b\"")
        let refused = s.run(["import", "--store", s.path("third"), "-"], stdin: Array(bad.utf8))
        #expect(refused.code == 2 && refused.stderr.contains("has an empty part"), "\(refused)")
    }

    @Test("Markdown export writes tags: [...], import-markdown reads flow and block lists and creates tags")
    func markdown() throws {
        let s = try Sandbox()
        let a = try s.add("Plan", "--tag", "work/acme", "--tag", "say \"hi\", ok")
        try s.ok("export-markdown", s.path("md"))
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: s.path("md")).first)
        let text = try String(contentsOfFile: s.path("md/" + file), encoding: .utf8)
        #expect(text.contains("tags: [\"say \\\"hi\\\", ok\", \"work/acme\"]\n"), "\(text)")
        let other = s.path("other")
        try s.ok("import-markdown", "--store", other, s.path("md"))
        #expect(try s.object("show", "--store", other, a)["tags"] as? [String] == ["say \"hi\", ok", "work/acme"])

        try FileManager.default.createDirectory(atPath: s.path("vault"), withIntermediateDirectories: true)
        try "---\ntitle: Flow\ntags: [one, 'two words', \"three/four\"]\n---\nbody\n".write(
            toFile: s.path("vault/flow.md"), atomically: true, encoding: .utf8)
        try "---\ntitle: Block\ntags:\n  - one\n  - five\n---\n".write(
            toFile: s.path("vault/block.md"), atomically: true, encoding: .utf8)
        try s.ok("import-markdown", "--store", s.path("third"), s.path("vault"))
        let listed = try s.ok("list", "--store", s.path("third"), "--sort", "title", "--json").array()
        #expect(listed.map { $0["tags"] as? [String] } == [["five", "one"], ["one", "three/four", "two words"]])
        // Reimporting the export with a tag removed from the front matter untags the note.
        try text.replacingOccurrences(of: ", \"work/acme\"]", with: "]").write(
            toFile: s.path("md/" + file), atomically: true, encoding: .utf8)
        try s.ok("import-markdown", s.path("md"))
        #expect(try tags(s, a) == ["say \"hi\", ok"])
    }

    @Test("completion offers tag names after --tag and after the id of tag and untag")
    func completion() throws {
        let s = try Sandbox()
        try s.add("A", "--tag", "work/acme", "--tag", "home")
        #expect(try s.ok("__complete", "tags").lines == ["home", "work/acme"])
        let bash = try s.ok("completion", "bash").stdout
        #expect(bash.contains("\"$prev\" == \"--tag\"") && bash.contains("_notes_values tags"))
        let zsh = try s.ok("completion", "zsh").stdout
        #expect(zsh.contains("_notes_tags"))
        let fish = try s.ok("completion", "fish").stdout
        #expect(
            fish.contains(
                "-l tag -d 'tag the note (repeatable; missing tags are created)' -x -a '(__notes_complete tags)'"))
    }
}
