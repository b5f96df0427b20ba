import Foundation
import Glibc
import Testing

@Suite("CLI: persistence across processes and the editor round trip")
struct CLIPersistenceAndEditorTests {
    @Test("create, reopen, edit, reopen, trash, reopen: every process sees what the last one did")
    func persistence() throws {
        let s = try Sandbox()
        let id = try s.add("Plan", "--body", "v1 body", "--category", "Work")
        var note = try s.object("show", id)
        #expect(note["title"] as? String == "Plan" && note["version"] as? Int == 1)
        #expect(note["category"] as? String == "Work")
        try s.ok("edit", id, "--title", "Plan B", "--body", "v2 body", env: ["NOTES_NOW": "2026-11-29T13:00:00Z"])
        note = try s.object("show", id)
        #expect(note["title"] as? String == "Plan B" && note["body"] as? String == "v2 body")
        #expect(note["version"] as? Int == 3)
        #expect(note["createdAt"] as? String == "2026-11-29T12:00:00.000000Z")
        #expect(note["updatedAt"] as? String == "2026-11-29T13:00:00.000000Z")
        try s.ok("trash", id)
        #expect(try s.titles().isEmpty)
        #expect(try s.titles("--trashed") == ["Plan B"])
        note = try s.object("show", id)
        #expect(note["trashed"] as? Bool == true && note["version"] as? Int == 4)
        let stats = try s.object("stats")
        #expect(stats["notes"] as? Int == 1 && stats["events"] as? Int == 5)
    }

    @Test("edit with no content flag opens $EDITOR on title, blank line, body, and saves what it writes")
    func editorRoundTrip() throws {
        let s = try Sandbox()
        let id = try s.add("Groceries", "--body", "- milk\n")
        let seen = s.path("seen.md")
        let editor = s.script(
            "fake-editor",
            """
            cp "$1" '\(seen)'
            printf 'Groceries for Sunday\\n\\n- milk\\n- eggs\\n' > "$1"
            """)
        let r = s.run("edit", id, env: ["EDITOR": editor, "VISUAL": nil])
        #expect(r.code == 0, "\(r)")
        #expect(r.line == "\(id) v3")
        #expect(String(decoding: read(file: seen), as: UTF8.self) == "Groceries\n\n- milk\n")
        let note = try s.object("show", id)
        #expect(note["title"] as? String == "Groceries for Sunday")
        #expect(note["body"] as? String == "- milk\n- eggs\n")
        // The temporary file is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("tmp")).isEmpty)

        // $VISUAL wins over $EDITOR; an editor that saves the text unchanged changes nothing.
        let untouched = s.script("untouched", "cp \"$1\" '\(seen)'\n")
        let j = s.run("edit", id, "--json", env: ["VISUAL": untouched, "EDITOR": editor])
        #expect(j.code == 0, "\(j)")
        #expect(try j.object()["version"] as? Int == 3)
        #expect(String(decoding: read(file: seen), as: UTF8.self) == "Groceries for Sunday\n\n- milk\n- eggs\n")

        // A failing editor is exit 1 and changes nothing.
        let failing = s.script("failing", "echo 'Changed' > \"$1\"\nexit 3\n")
        let f = s.run("edit", id, env: ["EDITOR": failing, "VISUAL": nil])
        CLIErrorTests.expectFailure(f, 1, mentioning: "status 3")
        #expect(try s.object("show", id)["title"] as? String == "Groceries for Sunday")

        // A stale --expect-version fails before the editor opens.
        let marker = s.path("editor-ran")
        let touching = s.script("touching", "touch '\(marker)'\n")
        let stale = s.run("edit", id, "--expect-version", "1", env: ["EDITOR": touching, "VISUAL": nil])
        #expect(stale.code == 4, "\(stale)")
        #expect(!fileExists(marker))
    }

    @Test(
        "an editor that saves CRLF line endings or a byte-order mark gives the title without them, the body byte for byte"
    )
    func editorCRLFAndByteOrderMark() throws {
        let s = try Sandbox()
        let id = try s.add("Groceries", "--body", "- milk\n")
        // An editor set to Windows line endings (`:set ff=dos`, VS Code's "files.eol") writes
        // every line with CR LF: before 2026-12-06 the whole file was taken for the title and
        // refused, "the title contains a line break".
        let crlf = s.script(
            "crlf-editor", "printf 'Groceries for Sunday\\r\\n\\r\\n- milk\\r\\n- eggs\\r\\n' > \"$1\"\n")
        let r = s.run("edit", id, env: ["EDITOR": crlf, "VISUAL": nil])
        #expect(r.code == 0, "\(r)")
        var note = try s.object("show", id)
        #expect(note["title"] as? String == "Groceries for Sunday")
        #expect(note["body"] as? String == "- milk\r\n- eggs\r\n")
        // One that starts the file with a byte-order mark (Notepad, `:set bomb`): before
        // 2026-12-06 the title began with an invisible U+FEFF that no link or search typed it.
        let bom = s.script("bom-editor", "printf '\\357\\273\\277Groceries\\n\\n- bread\\n' > \"$1\"\n")
        let b = s.run("edit", id, env: ["EDITOR": bom, "VISUAL": nil])
        #expect(b.code == 0, "\(b)")
        note = try s.object("show", id)
        #expect((note["title"] as? String).map { Array($0.unicodeScalars) } == Array("Groceries".unicodeScalars))
        #expect(note["body"] as? String == "- bread\n")
        // A title alone, ended by CR LF, and a body that starts with a blank CRLF line.
        let alone = s.script("title-only-editor", "printf 'Shopping\\r\\n\\r\\n\\r\\nsecond\\r\\n' > \"$1\"\n")
        let a = s.run("edit", id, env: ["EDITOR": alone, "VISUAL": nil])
        #expect(a.code == 0, "\(a)")
        note = try s.object("show", id)
        #expect(note["title"] as? String == "Shopping")
        #expect(note["body"] as? String == "\r\nsecond\r\n")
    }

    @Test("the line break an editor adds at the end of the file is dropped from a body that had none")
    func editorFinalLineBreak() throws {
        let s = try Sandbox()
        // `notes add T --body TEXT` stores no final line break; vim (`:wq`) and nano end the
        // file they save with one. Before 2026-12-06 opening such a note and saving it unchanged
        // appended a body edit of that line break.
        let id = try s.add("Quick", "--body", "call the bank")
        let saving = s.script("eol-editor", "printf '\\n' >> \"$1\"\n")
        let r = s.run("edit", id, env: ["EDITOR": saving, "VISUAL": nil])
        #expect(r.code == 0 && r.line == "\(id) v1", "\(r)")
        // A change saved the same way: the text changes, and still no final line break.
        let typing = s.script("typing-editor", "printf 'Quick\\n\\ncall the bank at 9\\n' > \"$1\"\n")
        #expect(s.run("edit", id, env: ["EDITOR": typing, "VISUAL": nil]).code == 0)
        var note = try s.object("show", id)
        #expect(note["body"] as? String == "call the bank at 9" && note["version"] as? Int == 2)
        // CR LF too; and a body that ends with a line break keeps what the editor saved.
        let crlf = s.script("crlf-eol-editor", "printf 'Quick\\r\\n\\r\\nline one\\r\\nline two\\r\\n' > \"$1\"\n")
        #expect(s.run("edit", id, env: ["EDITOR": crlf, "VISUAL": nil]).code == 0)
        note = try s.object("show", id)
        #expect(
            (note["body"] as? String).map { Array($0.unicodeScalars) } == Array("line one\r\nline two".unicodeScalars))
        let other = try s.add("List", "--body", "- milk\n")
        let extra = s.run("edit", other, env: ["EDITOR": saving, "VISUAL": nil])
        #expect(extra.code == 0 && extra.line == "\(other) v2", "\(extra)")
        #expect(try s.object("show", other)["body"] as? String == "- milk\n\n")
    }

    @Test("a note whose body is over this device's limit can be retitled in the editor, its body unchanged")
    func editorTitleOfABodyOverTheLimit() throws {
        let s = try Sandbox()
        // A body another device or an import with a higher limit stored: before 2026-12-06 the
        // editor's save was refused for the body's size though only the title changed.
        let body = String(repeating: "x", count: 2000) + "\n"
        let id = try s.ok("add", "Big", "--body", body, env: ["NOTES_BODY_LIMIT": "3000"]).line
        let retitle = s.script("retitle-editor", "sed -i '1s/.*/Big, renamed/' \"$1\"\n")
        let r = s.run("edit", id, env: ["EDITOR": retitle, "VISUAL": nil, "NOTES_BODY_LIMIT": "1000"])
        #expect(r.code == 0 && r.line == "\(id) v2", "\(r)")
        let note = try s.object("show", id)
        #expect(note["title"] as? String == "Big, renamed" && note["body"] as? String == body)
        // A change to the body is the user's text, and the limit holds.
        let grow = s.script("grow-editor", "printf 'more\\n' >> \"$1\"\n")
        let g = s.run("edit", id, env: ["EDITOR": grow, "VISUAL": nil, "NOTES_BODY_LIMIT": "1000"])
        CLIErrorTests.expectFailure(g, 2, mentioning: "the limit is 1000")
    }

    @Test("without $VISUAL or $EDITOR and off a terminal, edit is refused (exit 2) rather than starting vi")
    func noEditorOffATerminal() throws {
        let s = try Sandbox()
        let id = try s.add("Groceries", "--body", "- milk\n")
        // A `vi` of our own first on PATH: it marks that it ran (the real one hung, "Output is
        // not to a terminal", before 2026-12-06).
        let marker = s.path("vi-ran")
        _ = s.script("vi", "touch '\(marker)'\n")
        let path = s.root + "/bin:" + (s.environment["PATH"] ?? "/usr/bin:/bin")
        let r = s.run("edit", id, env: ["EDITOR": nil, "VISUAL": nil, "PATH": path])
        CLIErrorTests.expectFailure(r, 2, mentioning: "give the text with --title, --body, --body-file or -")
        #expect(r.stderr.contains("set $VISUAL or $EDITOR") && r.stderr.split(separator: "\n").count == 1, "\(r)")
        #expect(!fileExists(marker), "vi was not started")
        #expect(try s.object("show", id)["version"] as? Int == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("tmp")).isEmpty)
        // An editor that is set is started as ever, terminal or not (a GUI one needs none).
        let editor = s.script("gui-editor", "printf 'Groceries\\n\\n- eggs\\n' > \"$1\"\n")
        try s.ok("edit", id, env: ["EDITOR": nil, "VISUAL": editor, "PATH": path])
        #expect(try s.object("show", id)["body"] as? String == "- eggs\n")
    }

    @Test("a change made while the editor is open is not overwritten: the text goes to a recovery file, exit 4")
    func editorConflict() throws {
        let s = try Sandbox()
        let id = try s.add("Shared", "--body", "original\n")
        // The "editor" itself edits the note through another notes process, as a second
        // terminal would, then writes its own text.
        let editor = s.script(
            "racing-editor",
            """
            notes edit \(id) --body 'changed elsewhere' > /dev/null || exit 9
            printf 'Mine\\n\\nmy text\\n' > "$1"
            """)
        let r = s.run("edit", id, env: ["EDITOR": editor, "VISUAL": nil])
        CLIErrorTests.expectFailure(r, 4, mentioning: "nothing was overwritten")
        let marker = "saved in "
        let range = try #require(r.stderr.range(of: marker), "the recovery path is printed: \(r.stderr)")
        let path = String(r.stderr[range.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasPrefix(s.path("state/notes/recovery/")), "under XDG_STATE_HOME: \(path)")
        #expect(String(decoding: read(file: path), as: UTF8.self) == "Mine\n\nmy text\n")
        let note = try s.object("show", id)
        #expect(note["title"] as? String == "Shared")
        #expect(note["body"] as? String == "changed elsewhere")
        #expect(note["version"] as? Int == 2)
    }

    @Test(
        "the terminal closing (SIGHUP) or a SIGTERM during `edit` removes the note's temporary file and exits 128 + the signal; an interrupt is the editor's"
    )
    func editorSignalsRemoveTheTemporaryFile() throws {
        let s = try Sandbox()
        let id = try s.add("Secret", "--body", "plain text\n")
        let started = s.path("started")
        let editor = s.script("slow-editor", "touch '\(started)'\nexec sleep 10\n")
        let temporary = s.path("tmp")
        for (signal, group, expected) in [(SIGHUP, false, 129), (SIGTERM, false, 143), (SIGINT, true, 1)] {
            unlink(started)
            // In a process group of its own, as a shell's job is: a terminal's Ctrl-C reaches the group.
            let errors = s.path("io/signal-\(signal).err")
            var vars = s.environment
            vars["EDITOR"] = editor
            let pid = try spawnJob([notesBinary, "edit", id], environment: vars, errors: errors, ownGroup: true)
            waitForFile(started)
            #expect(fileExists(started), "the editor started")
            let names = try FileManager.default.contentsOfDirectory(atPath: temporary)
            #expect(names.contains { $0.hasPrefix("notes-") && $0.hasSuffix(".md") }, "the note's file: \(names)")
            kill(group ? -pid : pid, signal)
            let code = waitForExit(pid, seconds: 30)
            #expect(code == Int32(expected), "signal \(signal): \(String(decoding: read(file: errors), as: UTF8.self))")
            let left = try FileManager.default.contentsOfDirectory(atPath: temporary)
            #expect(!left.contains { $0.hasPrefix("notes-") }, "signal \(signal) left \(left)")
            let note = try s.object("show", id)
            #expect(note["body"] as? String == "plain text\n" && note["version"] as? Int == 1)
        }
    }

    @Test(
        "a write refused after the editor closed keeps the typed text in a recovery file, with the refusal's exit code")
    func editorRefusedWrite() throws {
        let s = try Sandbox()
        let id = try s.add("Kept", "--body", "original\n")
        // An empty first line is an empty title: the edit is refused after the editor ran.
        let editor = s.script("blank-title-editor", "printf '\\n\\nall my typing\\n' > \"$1\"\n")
        let r = s.run("edit", id, env: ["EDITOR": editor, "VISUAL": nil])
        CLIErrorTests.expectFailure(r, 2, mentioning: "your text is saved in")
        let marker = "saved in "
        let range = try #require(r.stderr.range(of: marker), "the recovery path is printed: \(r.stderr)")
        let path = String(r.stderr[range.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(String(decoding: read(file: path), as: UTF8.self) == "\n\nall my typing\n")
        let note = try s.object("show", id)
        #expect(note["title"] as? String == "Kept" && note["version"] as? Int == 1)
    }

    @Test("text the note cannot take (not UTF-8, over the body limit) is kept in a recovery file, byte for byte")
    func editorTextKeptWhenRefused() throws {
        let s = try Sandbox()
        let id = try s.add("Draft", "--body", "v1\n")
        func recovered(_ r: CLIRun) throws -> [UInt8] {
            let range = try #require(r.stderr.range(of: "saved in "), "the recovery path is printed: \(r.stderr)")
            let path = String(r.stderr[range.upperBound...].prefix { $0 != " " && $0 != "\n" })
            #expect(path.hasPrefix(s.path("state/notes/recovery/")), "\(path)")
            return read(file: path)
        }
        // Latin-1 bytes: not UTF-8.
        let latin = s.script("latin1-editor", "printf 'Draft\\n\\ncareful writing, caf\\351\\n' > \"$1\"\n")
        let r = s.run("edit", id, env: ["EDITOR": latin, "VISUAL": nil])
        CLIErrorTests.expectFailure(r, 2, mentioning: "not valid UTF-8")
        #expect(try recovered(r) == Array("Draft\n\ncareful writing, caf".utf8) + [0xE9, 0x0A])
        // A body over the limit: the limit's own message, and the text kept.
        let long = s.script(
            "long-editor", "printf 'Draft\\n\\n' > \"$1\"; head -c 3000 /dev/zero | tr '\\0' x >> \"$1\"\n")
        let big = s.run("edit", id, env: ["EDITOR": long, "VISUAL": nil, "NOTES_BODY_LIMIT": "1000"])
        CLIErrorTests.expectFailure(big, 2, mentioning: "the body is 3000 bytes; the limit is 1000")
        #expect(try recovered(big) == Array("Draft\n\n".utf8) + [UInt8](repeating: 0x78, count: 3000))
        let note = try s.object("show", id)
        #expect(note["body"] as? String == "v1\n" && note["version"] as? Int == 1)
    }

    @Test(
        "typed text a recovery file cannot take (a full disk, an unwritable folder) stays in the editor's file, named")
    func recoveryFileUnwritable() throws {
        let s = try Sandbox()
        let id = try s.add("Draft", "--body", "v1\n")
        let latin = s.script("latin1-editor", "printf 'Draft\\n\\nunsaved caf\\351\\n' > \"$1\"\n")
        let typed = Array("Draft\n\nunsaved caf".utf8) + [0xE9, 0x0A]
        // NOTES_NOW fixes the recovery file's name: a link there to /dev/full is a disk that is
        // full; before 2026-12-06 the text was said to be saved there, and was lost.
        let recovery = s.path("state/notes/recovery")
        try FileManager.default.createDirectory(atPath: recovery, withIntermediateDirectories: true)
        symlink("/dev/full", recovery + "/\(id)-2026-11-29T120000.000000Z.md")
        for env: [String: String?] in [
            ["EDITOR": latin, "VISUAL": nil], ["EDITOR": latin, "VISUAL": nil, "XDG_STATE_HOME": s.path("io/file/x")],
        ] {
            write(file: s.path("io/file"), "a file, no folder\n")
            let r = s.run(["edit", id], env: env)
            CLIErrorTests.expectFailure(r, 2, mentioning: "not valid UTF-8")
            let range = try #require(r.stderr.range(of: "saved in "), "a path is printed: \(r.stderr)")
            let path = String(r.stderr[range.upperBound...].prefix { $0 != " " && $0 != "\n" })
            #expect(path.hasPrefix(s.path("tmp/")), "the editor's own file: \(r.stderr)")
            #expect(r.stderr.contains("cannot save the recovery file"), "\(r.stderr)")
            #expect(read(file: path) == typed, "\(r.stderr)")
        }
        let note = try s.object("show", id)
        #expect(note["body"] as? String == "v1\n" && note["version"] as? Int == 1)
    }
}
