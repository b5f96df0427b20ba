import Foundation
import Testing

/// Markdown vaults as other tools write them (Obsidian, Joplin's "Markdown + Front Matter"
/// export, zk, nb), imported through the built binary, imported again, edited elsewhere and
/// exported back.
@Suite("CLI: Markdown vaults")
struct CLIVaultTests {
    /// Writes `files` (path → bytes) under `dir`, making the folders.
    func vault(_ dir: String, _ files: [(String, String)]) throws {
        for (path, text) in files {
            let full = dir + "/" + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            write(file: full, text)
        }
    }

    /// Every note as `list --all --json` gives it, by title.
    func notes(_ s: Sandbox) throws -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for n in try s.ok("list", "--all", "--limit", "1000", "--json").array() {
            let id = try #require(n["id"] as? String)
            let full = try s.ok("show", id, "--json").object()
            out[try #require(full["title"] as? String)] = full
        }
        return out
    }

    /// The title each link of note `id` leads to (nil when it leads nowhere).
    func targets(_ s: Sandbox, _ id: String) throws -> [String: String?] {
        var out: [String: String?] = [:]
        for l in try s.ok("links", id, "--json").array() {
            let target = l["target"] as? [String: Any]
            out[try #require(l["link"] as? String)] = target?["title"] as? String
        }
        return out
    }

    /// The text after a file's front matter.
    func body(_ text: String) -> String {
        guard text.hasPrefix("---\n"), let end = text.range(of: "\n---\n") else { return text }
        return String(text[end.upperBound...])
    }

    static let obsidian: [(String, String)] = [
        (
            "Bases.md",
            """
            ---
            aliases:
              - Bases file format
              - bases
            tags:
              - format
              - obsidian/plugins
            cssclasses: [wide]
            created: 2024-03-05
            publish: true
            nested:
              owner: "Ann: the editor"
              since: 2023
            ---
            # Bases

            Views of notes. See [[Daily/2024-03-05|today]] and [[Properties#Types]], and #views.
            ![[diagram.png]]

            """
        ),
        (
            "Properties.md",
            "---\ntags: format, metadata\n---\nTypes are listed below. Links to [[bases]] and [[Bases file format]].\n\n## Types\n"
        ),
        (
            "Daily/2024-03-05.md",
            "Written in [[Bases]], linking [[Never written]] and ![[Properties]].\n```\n#not-a-tag [[not a link]]\n```\n"
        ),
        ("Languages/日本語のノート.md", "# 東京の計画\n\n本文 #旅行\n"),
        ("Languages/עברית.md", "---\ntitle: \"שלום עולם\"\n---\nגוף [[東京の計画]]\n"),
        ("Languages/deep/er/Crlf.md", "---\r\ntags: [windows]\r\n---\r\n# Line endings\r\n\r\nbody\r\n"),
        ("Bom.md", "\u{FEFF}# Byte order mark\n\ntext\n"),
        ("Daily/diagram.png", "\u{89}PNG not really"),
        (".obsidian/app.json", "{}"),
        (".obsidian/ignored.md", "# never read"),
    ]

    @Test("attachments linked but not in the folder: one warning on stderr, the first names, exit 0; --json lists them")
    func missingAttachmentsSaid() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(
            dir,
            [
                ("Plan.md", "![[here.png]] ![[gone.png]] ![](img/a.png) [r](docs/r%C3%A9sum%C3%A9.pdf)\n![[x.jpg]]\n"),
                ("Other.md", "![[gone2.png]]\n"), ("here.png", "P"),
            ])
        let r = s.run("import-markdown", dir)
        #expect(r.code == 0, "\(r)")
        #expect(r.line == "created 2, updated 0, unchanged 0; 1 other file left alone")
        #expect(
            r.stderr
                == "notes: warning: 5 linked attachments are not in the folder (gone2.png in Other.md, gone.png in Plan.md, img/a.png in Plan.md, …): the links lead nowhere until the files are added\n"
        )
        let json = try s.ok("import-markdown", dir, "--json").object()
        let listed = try #require(json["missingAttachments"] as? [[String: String]])
        #expect(listed.map { $0["link"] ?? "" } == ["gone2.png", "gone.png", "img/a.png", "docs/résumé.pdf", "x.jpg"])
        #expect(listed.first?["file"] == "Other.md")
    }

    @Test("wiki links by a relative or root path lead to that file's note; relative embeds are found")
    func relativeWikiLinks() throws {
        // Obsidian's "relative path to file" link format writes `[[../../hub]]`; before
        // 2026-12-07 each such link was missing, and each such embed said to be.
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(
            dir,
            [
                ("hub.md", "# Hub\n"), ("B/Plan.md", "# Plan\n"), ("B/C/Sib.md", "# Sib\n"), ("img/a.png", "P"),
                (
                    "B/C/rel.md",
                    "[[../../hub]] [[../Plan|up]] [[./Sib#Part]] [[/B/Plan]] ![[../../img/a.png]] [[../../gone]]\n"
                ),
            ])
        let r = s.run("import-markdown", dir)
        #expect(r.code == 0, "\(r)")
        #expect(r.stderr == "", "the embed's file is in the folder")
        let all = try notes(s)
        let id: (String) throws -> String = { try #require(all[$0]?["id"] as? String) }
        #expect(
            try targets(s, id("rel")) == [
                "[[../../hub]]": "Hub", "[[../Plan|up]]": "Plan", "[[./Sib#Part]]": "Sib", "[[/B/Plan]]": "Plan",
                "[[../../img/a.png]]": nil, "[[../../gone]]": nil,
            ])
        #expect(try s.ok("backlinks", id("Hub"), "--json").array().map { $0["title"] as? String } == ["rel"])
        #expect(try s.ok("links", "--missing", "--json").array().map { $0["link"] as? String } == ["[[../../gone]]"])
        #expect(try s.ok("list", "--orphans", "--json").array().isEmpty)
        try s.ok("verify")
    }

    @Test("a file over the size limit, unchanged since its import with the limit raised, does not refuse the import")
    func unchangedFileOverTheLimit() throws {
        // Before 2026-12-07 every later import of the folder was refused, exit 2, unless the
        // limit was raised again for it; --skip-invalid skipped the note's own file.
        let s = try Sandbox()
        let dir = s.path("vault")
        let big = "# Big\n" + String(repeating: "word ", count: 50_000)
        try vault(dir, [("Big.md", big), ("Small.md", "# Small\n")])
        let raised: [String: String?] = ["NOTES_BODY_LIMIT": "300000"]
        let low: [String: String?] = ["NOTES_BODY_LIMIT": "100000"]
        #expect(try s.ok("import-markdown", dir, env: raised).line == "created 2, updated 0, unchanged 0")
        let again = s.run("import-markdown", dir, "--prune", env: low)
        #expect(again.code == 0, "\(again)")
        #expect(again.line == "created 0, updated 0, unchanged 2")
        #expect(again.stderr == "")
        // Changed, it is over the limit as any file is, and nothing is imported.
        write(file: dir + "/Big.md", big + "more\n")
        write(file: dir + "/Small.md", "# Small\nedited\n")
        let changed = s.run("import-markdown", dir, env: low)
        #expect(changed.code == 2)
        #expect(changed.stderr.hasPrefix("notes: error: Big.md: the file is over 165536 bytes"), "\(changed)")
        #expect(try notes(s)["Small"]?["body"] as? String == "# Small\n")
        // Nor is a new file over the limit taken for another's.
        let other = try Sandbox()
        let fresh = other.run("import-markdown", dir, env: low)
        #expect(fresh.code == 2, "\(fresh)")
        try s.ok("verify")
    }

    @Test(
        "an export holding a note over the size limit reads back at the limit; edited, or into another store, it is refused"
    )
    func exportedFileOverTheLimit() throws {
        // Before 2026-12-07 the export was refused, exit 2, even by the store it came from.
        let s = try Sandbox()
        let dir = s.path("vault")
        let big = "# Big\n" + String(repeating: "word ", count: 50_000)
        try vault(dir, [("Big.md", big), ("Sub/Small.md", "# Small\n")])
        let raised: [String: String?] = ["NOTES_BODY_LIMIT": "300000"]
        let low: [String: String?] = ["NOTES_BODY_LIMIT": "100000"]
        try s.ok("import-markdown", dir, env: raised)
        let ex = s.path("ex")
        try s.ok("export-markdown", ex, env: raised)
        let back = s.run("import-markdown", ex, env: low)
        #expect(back.code == 0, "\(back)")
        #expect(back.line == "created 0, updated 0, unchanged 2")
        #expect(back.stderr == "")
        // Another store has no such note: the file is over the limit as any file is.
        let other = try Sandbox()
        #expect(other.run("import-markdown", ex, env: low).code == 2)
        // Edited (its id kept), it is not the export any more.
        let exported = try String(contentsOfFile: ex + "/Big.md", encoding: .utf8)
        write(file: ex + "/Big.md", exported + "more\n")
        let changed = s.run("import-markdown", ex, env: low)
        #expect(changed.code == 2)
        #expect(changed.stderr.hasPrefix("notes: error: Big.md: the file is over 165536 bytes"), "\(changed)")
        try s.ok("verify")
    }

    @Test("a file deleted from the folder: the import says --prune trashes its note; then an export into it skips it")
    func deletedFilePruned() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(dir, [("Keep.md", "# Keep\n"), ("Gone.md", "# Gone\n")])
        try s.ok("import-markdown", dir)
        #expect(unlink(dir + "/Gone.md") == 0)
        #expect(
            try s.ok("import-markdown", dir).line
                == "created 0, updated 0, unchanged 1; 1 note from files no longer in the folder kept (--prune moves it to the trash)"
        )
        #expect(try s.titles("--trashed").isEmpty)
        #expect(
            try s.ok("import-markdown", dir, "--prune").line
                == "created 0, updated 0, unchanged 1; 1 note whose file was deleted from the folder moved to the trash (notes untrash ID brings one back)"
        )
        #expect(try s.titles("--trashed") == ["Gone"])
        #expect(
            try s.ok("export-markdown", dir).line
                == "exported 1 note to \(dir); 1 note in the trash whose file was deleted from it not written back")
        #expect(!fileExists(dir + "/Gone.md"))
        let json = try s.ok("import-markdown", dir, "--prune", "--json").object()
        #expect(json["pruned"] as? Int == 0 && json["missingFiles"] as? Int == 1 && json["prunable"] as? Int == 0)
        // The file put back: its note comes out of the trash, and the summary says so (before
        // 2026-12-07 it stayed in the trash).
        write(file: dir + "/Gone.md", "# Gone\n")
        #expect(
            try s.ok("import-markdown", dir, "--prune").line
                == "created 0, updated 0, unchanged 2; 1 note whose file is back taken out of the trash")
        #expect(try s.titles("--trashed").isEmpty)
        let again = try s.ok("import-markdown", dir, "--prune", "--json").object()
        #expect(again["restored"] as? Int == 0 && again["updated"] as? Int == 0, "\(again)")
    }

    @Test("an Obsidian vault: YAML lists, aliases, tags, links to files and aliases, embeds; again: no change")
    func obsidianVault() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(dir, Self.obsidian)
        let first = try s.ok("import-markdown", dir, "--json").object()
        #expect(first["created"] as? Int == 7)
        #expect(first["otherFiles"] as? Int == 1)
        let all = try notes(s)
        #expect(
            Set(all.keys) == [
                "Bases", "Properties", "2024-03-05", "東京の計画", "שלום עולם", "Line endings", "Byte order mark",
            ])
        let bases = try #require(all["Bases"])
        #expect(bases["aliases"] as? [String] == ["Bases file format", "bases"])
        #expect(Set(bases["tags"] as? [String] ?? []) == ["format", "obsidian/plugins", "views"])
        #expect(bases["source"] as? String == "Bases.md")
        #expect(Set(all["Properties"]?["tags"] as? [String] ?? []) == ["format", "metadata"])
        #expect(all["東京の計画"]?["tags"] as? [String] == ["旅行"])
        #expect(all["東京の計画"]?["category"] as? String == "Languages")
        #expect(all["Line endings"]?["body"] as? String == "# Line endings\r\n\r\nbody\r\n")
        #expect(all["2024-03-05"]?["tags"] as? [String] == [])
        // Links by file name, path, alias (case folded), heading and label; embeds of notes.
        let id: (String) throws -> String = { try #require(all[$0]?["id"] as? String) }
        #expect(
            try targets(s, id("Bases")) == [
                "[[Daily/2024-03-05|today]]": "2024-03-05", "[[Properties#Types]]": "Properties",
                "[[diagram.png]]": nil,
            ])
        #expect(
            try targets(s, id("Properties")) == ["[[bases]]": "Bases", "[[Bases file format]]": "Bases"])
        #expect(try targets(s, id("שלום עולם")) == ["[[東京の計画]]": "東京の計画"])
        let backlinks = try s.ok("backlinks", id("Bases"), "--json").array().map { $0["title"] as? String }
        #expect(Set(backlinks) == ["Properties", "2024-03-05"])
        // Only links whose targets are not in the vault are missing: the embed of the image beside
        // the notes is an attachment (before 2026-12-06 it was listed missing, a new user's trial).
        let missing = try s.ok("links", "--missing", "--json").array().map { $0["link"] as? String }
        #expect(Set(missing) == ["[[Never written]]"])
        let embed = try s.ok("links", id("Bases"), "--json").array().first {
            $0["link"] as? String == "[[diagram.png]]"
        }
        #expect((embed?["target"] as? [String: Any])?["reason"] as? String == "attachment")
        #expect(
            try s.ok("links", id("Bases")).lines.contains { $0.hasPrefix("diagram.png") && $0.hasSuffix("attachment") })
        // Importing the same folder again changes nothing.
        let again = try s.ok("import-markdown", dir, "--json").object()
        #expect(again["created"] as? Int == 0)
        #expect(again["updated"] as? Int == 0)
        #expect(again["unchanged"] as? Int == 7)
        try s.ok("verify")
    }

    @Test("a file edited in another editor updates its note by path; export writes every file back")
    func editElsewhereAndRoundTrip() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(dir, Self.obsidian)
        try s.ok("import-markdown", dir)
        // Edited elsewhere: a body line, a tag and an alias; the file has no id of ours.
        let edited = Self.obsidian[0].1.replacingOccurrences(of: "  - bases\n", with: "  - bases\n  - BF\n")
            .replacingOccurrences(of: "Views of notes.", with: "Views of many notes.")
        write(file: dir + "/Bases.md", edited)
        let second = try s.ok("import-markdown", dir, "--json").object()
        #expect(second["updated"] as? Int == 1)
        #expect(second["created"] as? Int == 0)
        let bases = try #require(try notes(s)["Bases"])
        #expect(bases["aliases"] as? [String] == ["Bases file format", "bases", "BF"])
        #expect((bases["body"] as? String)?.contains("Views of many notes.") == true)
        let history = try s.ok("history", try #require(bases["id"] as? String)).stdout
        #expect(history.contains("aliases"))

        // Export: each note back at its path, its kept keys as the file had them, its body byte
        // for byte; the store's keys added.
        let out = s.path("out")
        try s.ok("export-markdown", out)
        var originals = Self.obsidian.filter { $0.0.hasSuffix(".md") && !$0.0.hasPrefix(".") }
        originals[0].1 = edited
        for (path, text) in originals {
            let exported = String(decoding: read(file: out + "/" + path), as: UTF8.self)
            try #require(!exported.isEmpty, "\(path) was not written back")
            // The byte-order mark stays first, before the front matter.
            #expect(exported.hasPrefix("\u{FEFF}") == text.hasPrefix("\u{FEFF}"), "\(path)")
            let unmarked: (String) -> String = { t in
                let lf = t.replacingOccurrences(of: "\r\n", with: "\n")
                return lf.hasPrefix("\u{FEFF}") ? String(lf.dropFirst()) : lf
            }
            #expect(body(unmarked(exported)) == body(unmarked(text)), "\(path)")
            #expect(exported.contains("\nid: "), "\(path)")
        }
        let exportedBases = String(decoding: read(file: out + "/Bases.md"), as: UTF8.self)
        for kept in [
            "cssclasses: [wide]\n", "created: 2024-03-05\n", "publish: true\n",
            "nested:\n  owner: \"Ann: the editor\"\n  since: 2023\n",
        ] {
            #expect(exportedBases.contains(kept), "\(kept)")
        }
        #expect(exportedBases.contains("aliases: [\"Bases file format\", \"bases\", \"BF\"]\n"))
        // A tag written in the body is not repeated in the front matter.
        #expect(exportedBases.contains("tags: [\"format\", \"obsidian/plugins\"]\n"))
        // The file's own date stands for the store's two.
        #expect(!exportedBases.contains("\nupdated: "))
        // The CRLF body is kept byte for byte.
        let crlf = read(file: out + "/Languages/deep/er/Crlf.md")
        #expect(String(decoding: crlf, as: UTF8.self).hasSuffix("---\n# Line endings\r\n\r\nbody\r\n"))

        // Imported elsewhere, the export gives the same notes; imported here, it changes nothing.
        let other = try Sandbox()
        try other.ok("import-markdown", out)
        let there = try notes(other)
        let here = try notes(s)
        #expect(Set(there.keys) == Set(here.keys))
        for (title, note) in here {
            for field in ["body", "category", "aliases", "pinned"] {
                #expect("\(note[field] ?? "nil")" == "\(there[title]?[field] ?? "nil")", "\(title) \(field)")
            }
            #expect(Set(note["tags"] as? [String] ?? []) == Set(there[title]?["tags"] as? [String] ?? []), "\(title)")
        }
        let back = try s.ok("import-markdown", out, "--json").object()
        #expect(back["unchanged"] as? Int == 7)
        try other.ok("export-markdown", s.path("out2"))
        #expect(
            String(decoding: read(file: s.path("out2") + "/Bases.md"), as: UTF8.self).contains("created: 2024-03-05\n"))
    }

    @Test("Joplin's Markdown + Front Matter export, zk and nb notebooks")
    func otherTools() throws {
        let s = try Sandbox()
        let joplin = s.path("joplin")
        try vault(
            joplin,
            [
                (
                    "Work/Meeting notes.md",
                    """
                    ---
                    title: Meeting notes
                    updated: 2021-03-04 10:12:30Z
                    created: 2021-03-01 09:00:00Z
                    latitude: 52.52000660
                    longitude: 13.40495400
                    altitude: 0.0000
                    author: Ann
                    source: https://example.com/page
                    completed?: no
                    tags:
                      - meetings
                      - q1
                    ---

                    Agenda for the week.

                    """
                ),
                ("Work/Empty title.md", "---\ntitle: ''\n---\n# From the heading\n"),
            ])
        try s.ok("import-markdown", joplin)
        let j = try notes(s)
        #expect(j["Meeting notes"]?["category"] as? String == "Work")
        #expect(Set(j["Meeting notes"]?["tags"] as? [String] ?? []) == ["meetings", "q1"])
        #expect(j["From the heading"] != nil)
        let out = s.path("joplin-out")
        try s.ok("export-markdown", out)
        let meeting = String(decoding: read(file: out + "/Work/Meeting notes.md"), as: UTF8.self)
        for kept in [
            "updated: 2021-03-04 10:12:30Z\n", "created: 2021-03-01 09:00:00Z\n", "latitude: 52.52000660\n",
            "source: https://example.com/page\n", "completed?: no\n",
        ] {
            #expect(meeting.contains(kept), "\(kept)")
        }
        #expect(meeting.hasSuffix("---\n\nAgenda for the week.\n"))

        // zk: files named by an id, links to those ids; nb: #tags in the body, a .git folder.
        let t = try Sandbox()
        let zk = t.path("zk")
        try vault(
            zk,
            [
                ("a1b2.md", "---\ntitle: Zettel one\ndate: 2022-01-01\ntags: [idea]\n---\nSee [[c3d4]].\n"),
                ("c3d4.md", "# Zettel two\n\nBack to [[a1b2|one]].\n"),
                (".zk/config.toml", "[note]\n"),
            ])
        try t.ok("import-markdown", zk)
        let z = try notes(t)
        #expect(try targets(t, try #require(z["Zettel one"]?["id"] as? String)) == ["[[c3d4]]": "Zettel two"])
        #expect(try targets(t, try #require(z["Zettel two"]?["id"] as? String)) == ["[[a1b2|one]]": "Zettel one"])
        let nb = t.path("nb")
        try vault(
            nb,
            [
                ("home/20230101120000.md", "# Groceries\n\n- milk #shopping #home/kitchen\n"),
                ("home/.index", "20230101120000.md\n"),
                (".git/HEAD", "ref: refs/heads/main\n"),
                ("home/todo.todo.md", "# [ ] Call Bob [[Groceries]]\n"),
            ])
        try t.ok("import-markdown", nb)
        let n = try notes(t)
        #expect(Set(n["Groceries"]?["tags"] as? [String] ?? []) == ["shopping", "home/kitchen"])
        #expect(n["Groceries"]?["category"] as? String == "home")
        #expect(
            try targets(t, try #require(n["[ ] Call Bob Groceries"]?["id"] as? String)) == [
                "[[Groceries]]": "Groceries"
            ])
    }

    @Test("bad files: every one named at once and nothing imported; --skip-invalid imports the rest")
    func badFiles() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(
            dir,
            [
                ("good.md", "# Good\n"),
                ("bad yaml.md", "---\ntags: [a, b\n---\nbody\n"),
                ("unclosed.md", "---\ntitle: x\n"),
                ("sub/not a bool.md", "---\npinned: maybe\n---\n"),
            ])
        write(file: dir + "/latin1.md", [0x23, 0x20, 0xE9, 0x0A])
        let refused = s.run(["import-markdown", dir])
        #expect(refused.code == 2)
        for name in ["bad yaml.md: front matter line 3", "unclosed.md:", "sub/not a bool.md:", "latin1.md:"] {
            #expect(refused.stderr.contains(name), "\(name): \(refused.stderr)")
        }
        #expect(refused.stderr.contains("4 files are refused; nothing was imported"))
        // One line per file, as the README says, then the verdict: five lines, none with `␊`.
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 5 && lines.allSatisfy { $0.hasPrefix("notes: error: ") }, "\(refused.stderr)")
        #expect(!refused.stderr.contains("\u{240A}"))
        // Nothing imported, and no store made where there was none (before 2026-12-06 an empty
        // one was left behind).
        #expect(!fileExists(s.store))
        #expect(s.run("list", "--all").code == 3)
        let skipped = try s.ok("import-markdown", dir, "--skip-invalid")
        #expect(skipped.stdout.contains("created 1, updated 0, unchanged 0, skipped 4"))
        #expect(skipped.stderr.contains("notes: warning: skipped latin1.md: the file is not valid UTF-8"))
        #expect(try s.titles() == ["Good"])
    }

    @Test("hidden .md files are not read, and the import says which (hidden folders stay unmentioned)")
    func hiddenFilesNamed() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(
            dir,
            [
                ("a.md", "# A\n"), (".draft.md", "# Draft\n"), ("sub/.later.MD", "# Later\n"),
                (".obsidian/workspace.md", "x\n"), (".notes.txt", "x\n"),
            ])
        let r = try s.ok("import-markdown", dir)
        #expect(r.stdout.contains("created 1,"))
        #expect(r.stderr.contains("2 hidden files not read (.draft.md, sub/.later.MD)"), "\(r.stderr)")
        #expect(!r.stderr.contains("obsidian"))
        #expect(try s.titles("--all") == ["A"])
    }

    @Test("hostile vaults: symbolic links not followed, bad names refused by name, odd names made one line")
    func hostileVaults() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(dir, [("a.md", "# A\n"), ("real/b.md", "# B\n")])
        symlink(".", dir + "/loop")
        symlink(dir + "/real", dir + "/again")
        symlink("/etc/passwd", dir + "/passwd.md")
        let r = try s.ok("import-markdown", dir)
        #expect(r.stdout.contains("created 2,"))
        #expect(r.stderr.contains("3 symbolic links not followed"))
        #expect(Set(try s.titles("--all")) == ["A", "B"])
        // A name that is not UTF-8 is refused by name; names with line breaks make one-line titles.
        let t = try Sandbox()
        let other = t.path("vault")
        try vault(other, [("x.md", "body\n"), ("new\nline.md", "text\n"), ("ctl\u{1}dir/in.md", "in\n")])
        write(file: other + "/bad\u{FFFD}.md", "z\n")
        // A name with the byte 0xFE, which no UTF-8 text has.
        let badName = (Array((other + "/bad").utf8) + [0xFE] + Array(".md".utf8) + [0]).map { CChar(bitPattern: $0) }
        close(open(badName, O_WRONLY | O_CREAT, 0o644))
        let refused = t.run(["import-markdown", other])
        #expect(refused.code == 2)
        #expect(refused.stderr.contains("the name is not valid UTF-8"), "\(refused.stderr)")
        try t.ok("import-markdown", other, "--skip-invalid")
        #expect(Set(try t.titles("--all")) == ["x", "new line", "in", "bad\u{FFFD}"])
        #expect(try notes(t)["in"]?["category"] as? String == "ctl dir")
        // Two normal forms of one name are two files, each matched to its own note.
        let u = try Sandbox()
        let forms = u.path("vault")
        try vault(forms, [("caf\u{E9}.md", "one\n"), ("cafe\u{301}.md", "two\n")])
        try u.ok("import-markdown", forms)
        write(file: forms + "/cafe\u{301}.md", "two, edited\n")
        let again = try u.ok("import-markdown", forms, "--json").object()
        #expect(again["updated"] as? Int == 1 && again["unchanged"] as? Int == 1 && again["created"] as? Int == 0)
        let bodies = try u.ok("list", "--json").array().compactMap { $0["id"] as? String }.map {
            try u.ok("show", $0, "--json").object()["body"] as? String
        }
        #expect(Set(bodies) == ["one\n", "two, edited\n"])
    }

    @Test("a file unchanged since its import keeps the store's edits; another tool's id survives a round trip")
    func editsAndForeignIDs() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(
            dir,
            [
                ("n.md", "---\ntitle: T1\n---\nbody #c\n"),
                ("zk.md", "---\nid: 20240101120000\ntags: null\n---\nzk body\n"),
                ("20240105.md", "# Daily\n\nBack to [[deadbeef]].\n"),
                ("deadbeef.md", "# Hex named\n\n[[20240105]], [[zk.md]], [[Sub/Deep]] and | [[T1\\|cell]] |\n"),
                ("A/Sub/Deep.md", "# Deep one\n"),
            ])
        try s.ok("import-markdown", dir)
        let all = try notes(s)
        let n = try #require(all["T1"]?["id"] as? String)
        try s.ok("edit", n, "--body", "store-edited body")
        let again = try s.ok("import-markdown", dir, "--json").object()
        #expect(again["updated"] as? Int == 0)
        #expect(try s.ok("show", n, "--json").object()["body"] as? String == "store-edited body")
        // The file changed since: it wins.
        write(file: dir + "/n.md", "---\ntitle: T1\n---\nbody #c, edited elsewhere\n")
        #expect(try s.ok("import-markdown", dir, "--json").object()["updated"] as? Int == 1)
        #expect(try s.ok("show", n, "--json").object()["body"] as? String == "body #c, edited elsewhere\n")
        #expect(all["zk"]?["tags"] as? [String] == [])
        // Names of hex digits, names with .md, path ends and an escaped table pipe all lead home.
        #expect(try targets(s, try #require(all["Daily"]?["id"] as? String)) == ["[[deadbeef]]": "Hex named"])
        #expect(
            try targets(s, try #require(all["Hex named"]?["id"] as? String)) == [
                "[[20240105]]": "Daily", "[[zk.md]]": "zk", "[[Sub/Deep]]": "Deep one", "[[T1\\|cell]]": "T1",
            ])
        let backlinks = try s.ok("backlinks", try #require(all["Daily"]?["id"] as? String), "--json").array()
        #expect(backlinks.map { $0["title"] as? String } == ["Hex named"])
        // Another tool's id is kept; the store's is written as notes-id, and read back.
        let out = s.path("out")
        try s.ok("export-markdown", out)
        let zk = String(decoding: read(file: out + "/zk.md"), as: UTF8.self)
        #expect(zk.contains("id: 20240101120000\n") && zk.contains("\nnotes-id: "))
        #expect(try s.ok("import-markdown", out, "--json").object()["created"] as? Int == 0)
        // An alias that cannot be one is named as an alias.
        let bad = s.path("bad")
        try vault(bad, [("x.md", "---\naliases: [\"\(String(repeating: "a", count: 600))\"]\n---\n")])
        let refused = s.run(["import-markdown", bad])
        #expect(refused.stderr.contains("alias \"aaaa"), "\(refused.stderr)")
        #expect(refused.stderr.contains("it has 600 characters; the limit is 500"))
    }

    @Test("a file rewritten in another Unicode form (é as e and U+0301) updates its note, and exports as it is")
    func fileInAnotherUnicodeForm() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        try vault(dir, [("cafe.md", "# Caf\u{E9}\n\ncaf\u{E9} au lait\n")])
        try s.ok("import-markdown", dir)
        // A tool that writes the decomposed form (as macOS file names have it): before
        // 2026-12-06 the import counted the file unchanged and an export wrote the old form back.
        try vault(dir, [("cafe.md", "# Cafe\u{301}\n\ncafe\u{301} au lait\n")])
        let second = try s.ok("import-markdown", dir, "--json").object()
        #expect(second["updated"] as? Int == 1, "\(second)")
        let out = s.path("out")
        try s.ok("export-markdown", out)
        let written = read(file: out + "/cafe.md")
        let body = Array("# Cafe\u{301}\n\ncafe\u{301} au lait\n".utf8)
        #expect(written.count >= body.count && Array(written.suffix(body.count)) == body, "\(written)")
        #expect(try s.ok("import-markdown", dir, "--json").object()["unchanged"] as? Int == 1)
    }

    @Test("show prints the file a note came from on its one line, a line break or escape in the name as a symbol")
    func sourcePathShownOnOneLine() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        // File names may hold any byte but `/`: before 2026-12-06 `show` printed the path as it
        // is, so a line break split the header (its second half read as the body's first line)
        // and an escape sequence reached the terminal.
        try vault(dir, [("two\nlines.md", "first body\n"), ("\u{1B}[31mred.md", "second body\n")])
        try s.ok("import-markdown", dir)
        for id in try s.ok("list", "--json").array().compactMap({ $0["id"] as? String }) {
            let shown = try s.ok("show", id).stdout
            let lines = shown.split(separator: "\n", omittingEmptySubsequences: false)
            let from = try #require(lines.first { $0.hasPrefix("  from: ") }, "\(shown)")
            #expect(from == "  from: two\u{240A}lines.md" || from == "  from: \u{241B}[31mred.md", "\(shown)")
            #expect(
                lines.count == 6 && lines[3].isEmpty && lines[4].hasSuffix("body"),
                "the body after one blank line: \(shown)")
            #expect(!shown.contains("\u{1B}"))
        }
    }
}
