import Foundation
import Testing

@Suite("CLI: export, import, Markdown folders, import-history")
struct InterchangeCLITests {
    static let sample = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Samples/swift-evolution-sample.jsonl").path

    private func events(_ s: Sandbox, store: String? = nil) throws -> Int {
        let r = s.run(["stats", "--json"] + (store.map { ["--store", $0] } ?? []))
        try #require(r.code == 0, "\(r)")
        return try #require(try r.object()["events"] as? Int)
    }

    @Test("a JSON Lines file in UTF-16 (PowerShell's `>` writes one) is refused, saying so and how to convert it")
    func utf16Refused() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let export = try s.ok("export").stdout
        // Before 2026-12-06: "line 1: malformed JSON: expected a value at byte 0 (found byte 0xFF)".
        for (name, mark, unit) in [("le", [UInt8](arrayLiteral: 0xFF, 0xFE), true), ("be", [0xFE, 0xFF], false)] {
            var bytes = mark
            for u in export.utf16 {
                let pair = [UInt8(u & 0xFF), UInt8(u >> 8)]
                bytes += unit ? pair : pair.reversed()
            }
            let file = s.path("utf16\(name).jsonl")
            write(file: file, bytes)
            let store = s.path("new-\(name)")
            for r in [s.run("import", file, "--store", store), s.run(["import", "-", "--store", store], stdin: bytes)] {
                CLIErrorTests.expectFailure(r, 2, mentioning: "line 1: the file is UTF-16, not UTF-8")
                #expect(r.stderr.contains("iconv -f UTF-16 -t UTF-8"), "\(r)")
            }
            #expect(!fileExists(store), "nothing made")
        }
    }

    @Test("gzip data under another name, or through standard input, is refused as such, with the command that reads it")
    func gzipWithoutSuffix() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let export = try s.ok("export").stdoutBytes
        let gz = s.run(["-c"], stdin: export, executable: "/bin/gzip")
        try #require(gz.code == 0 && gz.stdoutBytes.starts(with: [0x1F, 0x8B]), "\(gz)")
        let file = s.path("notes-backup.jsonl")
        write(file: file, gz.stdoutBytes)
        let store = s.path("new")
        // Before 2026-12-07: "line 1: malformed JSON: expected a value at byte 0 (found byte 0x1F)".
        for command in ["import", "import-history"] {
            for r in [
                s.run(command, file, "--store", store),
                s.run([command, "-", "--store", store], stdin: gz.stdoutBytes),
            ] {
                CLIErrorTests.expectFailure(r, 2, mentioning: "line 1: the file is gzip-compressed")
                #expect(r.stderr.contains("gzip -dc"), "\(r)")
            }
        }
        #expect(!fileExists(store), "nothing made")
    }

    @Test("an edit history given to import, or an export to import-history, is refused naming the command to use")
    func wrongImportCommand() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let export = s.path("export.jsonl")
        write(file: export, try s.ok("export").stdoutBytes)
        let history = s.path("history.jsonl")
        write(
            file: history,
            #"{"doc":"proposals/a.md","commit":"c1","time":"2016-01-01T00:00:00Z","author":"A","op":"create","#
                + #""title":"A","status":null,"text":"a"}"# + "\n")
        let store = s.path("new")
        // Before 2026-12-07: "line 1: unknown key "doc"" and "line 1: unknown key "position"".
        CLIErrorTests.expectFailure(
            s.run("import", history, "--store", store), 2,
            mentioning: "line 1: a line of a document edit history, not an event: import it with `notes import-h")
        CLIErrorTests.expectFailure(
            s.run("import-history", export, "--store", store), 2,
            mentioning: "line 1: an event of `notes export`, not a line of an edit history: import it with")
        #expect(!fileExists(store), "nothing made")
    }

    @Test(
        "export-markdown into a folder holding one the user cannot list writes the notes and leaves that one alone",
        .enabled(if: CLIErrorTests.canDropPrivileges, "running as root without setpriv: file modes cannot deny root"))
    func markdownExportBesideUnlistableFolder() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        // A vault on a drive of its own, with the drive's `lost+found` (root's, mode 0700): before
        // 2026-12-07 the export into it stopped, exit 1, "cannot list vault/lost+found".
        let vault = s.path("vault")
        try FileManager.default.createDirectory(atPath: vault + "/lost+found", withIntermediateDirectories: true)
        write(file: vault + "/Kept.md", "# Kept\n")
        var r: CLIRun
        if getuid() == 0 {
            chmod(s.root, 0o711)
            chmod(vault + "/lost+found", 0o700)
            for path in [s.store, s.store + "/data.mdb", s.store + "/lock.mdb", vault, vault + "/Kept.md"] {
                try #require(chown(path, 65534, 65534) == 0, "chown \(path)")
            }
            let copy = s.path("notes-copy")
            let copied = s.run([notesBinary, copy], executable: "/bin/cp")
            try #require(copied.code == 0, "cp: \(copied)")
            chmod(copy, 0o755)
            r = s.run(
                ["--reuid=65534", "--regid=65534", "--clear-groups", copy, "export-markdown", vault],
                executable: "/usr/bin/setpriv")
        } else {
            chmod(vault + "/lost+found", 0)
            defer { chmod(vault + "/lost+found", 0o700) }
            r = s.run("export-markdown", vault)
        }
        #expect(r.code == 0 && r.line == "exported 1 note to \(vault)", "\(r)")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: vault))?.sorted() ?? []
        #expect(written.count == 3 && written.contains("Kept.md") && written.contains("lost+found"), "\(written)")
        #expect(written.contains { $0.hasPrefix("one-") && $0.hasSuffix(".md") }, "\(written)")
    }

    @Test("a byte-order mark that starts a JSON Lines file is skipped: from a file, redirected stdin and a pipe")
    func byteOrderMark() throws {
        let s = try Sandbox()
        try s.add("Marked", "--body", "\u{FEFF}kept in the body\n")
        let export = try s.ok("export").stdoutBytes
        let file = s.path("bom.jsonl")
        write(file: file, [0xEF, 0xBB, 0xBF] + export)
        // Before 2026-12-06: "line 1: malformed JSON: expected a value at byte 0 (found byte 0xEF)".
        let runs: [(String) -> CLIRun] = [
            { store in s.run(["import", file, "--store", store]) },
            { store in s.run(["import", "-", "--store", store], stdin: [0xEF, 0xBB, 0xBF] + export) },
            { store in s.run(["-c", "cat \"$0\" | notes import - --store \"$1\"", file, store], executable: "/bin/sh")
            },
        ]
        for (n, run) in runs.enumerated() {
            let store = s.path("other\(n)")
            let r = run(store)
            #expect(r.code == 0 && r.stderr.isEmpty, "\(n): \(r)")
            #expect(try s.ok("export", "--store", store).stdoutBytes == export, "\(n): the same events, byte for byte")
        }
        // Only at the start of the file: one before a later line is that line's bad JSON.
        let lines = export.split(separator: 0x0A, omittingEmptySubsequences: false)
        try #require(lines.count >= 2)
        let later = s.run("import", file, "--store", s.path("other0"))
        #expect(later.code == 0, "importing again changes nothing: \(later)")
        write(file: file, Array(lines[0]) + [0x0A, 0xEF, 0xBB, 0xBF] + Array(lines[0]) + [0x0A])
        let refused = s.run("import", file, "--store", s.path("other4"))
        #expect(refused.code == 2 && refused.stderr.contains("line 2: malformed JSON"), "\(refused)")
    }

    @Test("a line over the limit through a pipe stops the copy of the input there, and a .gz's line too")
    func overlongLineThroughAPipe() throws {
        let s = try Sandbox()
        try s.add("Kept")
        let before = try events(s)
        let limit = 1_000 * 6 + (1 << 20)
        // 200 MB without a line break: the producer finishes only if notes reads it all. Before
        // 2026-12-06 a pipe was copied whole into the store's directory before its first line was
        // read (`notes import /dev/zero` filled the disk), and only then refused.
        let whole = s.path("whole")
        let r = s.run(
            ["-c", "{ head -c 200000000 /dev/zero && : > \"$0\"; } | notes import -", whole],
            env: ["NOTES_BODY_LIMIT": "1000"],
            executable: "/bin/sh")
        // The body limit the user set, then the line's (before 2026-12-07 the line's alone).
        #expect(
            r.code == 2
                && r.stderr.contains(
                    "line 1: the line is longer than any event with a body within the limit of 1000 bytes")
                && r.stderr.contains("it is over \(limit) bytes"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: whole), "the whole input was read")
        // A line break resets the count: short lines then an overlong one name the overlong one.
        let lines = s.run(
            ["-c", "{ printf '\\n\\n'; head -c 3000000 /dev/zero; } | notes import -"],
            env: ["NOTES_BODY_LIMIT": "1000"],
            executable: "/bin/sh")
        #expect(
            lines.code == 2
                && lines.stderr.contains(
                    "line 3: the line is longer than any event with a body within the limit of 1000 bytes"),
            "\(lines)")
        if hasProgram("gzip") {
            let gz = s.path("zeros.jsonl.gz")
            let made = s.run(["-c", "head -c 3000000 /dev/zero | gzip -c > '\(gz)'"], executable: "/bin/sh")
            try #require(made.code == 0, "\(made)")
            for command in ["import", "import-history"] {
                let refused = s.run([command, gz], env: ["NOTES_BODY_LIMIT": "1000"])
                #expect(
                    refused.code == 2
                        && refused.stderr.contains(
                            "line 1: the line is longer than any event with a body within the limit of 1000 bytes"),
                    "\(refused)")
            }
        }
        #expect(try events(s) == before)
    }

    @Test("a stream of anything but events through a pipe is refused at its first line, not copied whole first")
    func garbageThroughAPipe() throws {
        let s = try Sandbox()
        try s.add("Kept")
        let before = try events(s)
        // 200 MB of short lines: the producer finishes only if notes reads it all. Before
        // 2026-12-06 `yes | notes import -` was copied into the store's directory until the disk
        // was full, and only then refused at its line 1.
        for command in ["import", "import-history"] {
            let whole = s.path("whole-\(command)")
            let r = s.run(
                ["-c", "{ yes | head -c 200000000 && : > \"$0\"; } | notes \(command) -", whole], executable: "/bin/sh")
            #expect(r.code == 2 && r.stderr.contains("line 1: malformed JSON"), "\(command): \(r)")
            #expect(!FileManager.default.fileExists(atPath: whole), "\(command): the whole input was read")
        }
        #expect(try events(s) == before)
    }

    @Test("blank lines before a stream of anything but events do not let it be copied whole first")
    func garbageAfterBlankLinesThroughAPipe() throws {
        let s = try Sandbox()
        try s.add("Kept")
        let before = try events(s)
        // Blank lines are skipped by the import, so the first line to check is the first that
        // is not blank: checking line 1 alone let `{ echo; yes; } | notes import -` fill the disk.
        for command in ["import", "import-history"] {
            let whole = s.path("whole-blank-\(command)")
            let r = s.run(
                [
                    "-c", "{ printf '\\n \\r\\n\\t\\n'; yes | head -c 200000000 && : > \"$0\"; } | notes \(command) -",
                    whole,
                ],
                executable: "/bin/sh")
            #expect(r.code == 2 && r.stderr.contains("line 4: malformed JSON"), "\(command): \(r)")
            #expect(!FileManager.default.fileExists(atPath: whole), "\(command): the whole input was read")
        }
        // Blank lines and then events still import, through a pipe too.
        let export = try s.ok("export").stdoutBytes
        let file = s.path("blank-first.jsonl")
        write(file: file, Array("\n \r\n".utf8) + export)
        let store = s.path("other")
        let r = s.run(["-c", "cat \"$0\" | notes import - --store \"$1\"", file, store], executable: "/bin/sh")
        #expect(r.code == 0, "\(r)")
        #expect(try events(s, store: store) == before)
        #expect(try events(s) == before)
    }

    @Test("export to stdout and to a file agree; import into another store reproduces the export")
    func exportImport() throws {
        let s = try Sandbox()
        let a = try s.add("Groceries", "--body", "- milk\n", "--category", "Home", "--pin")
        try s.add("Plans", "--body", "")
        try s.ok("edit", a, "--title", "Groceries (Sat)")
        let stdout = try s.ok("export").stdoutBytes
        #expect(stdout.split(separator: UInt8(ascii: "\n")).count == 4)
        let file = s.path("out.jsonl")
        #expect(try s.ok("export", "--output", file).line == "exported 4 events to \(file)")
        #expect(read(file: file) == stdout)
        #expect(
            try s.ok("export", "--since", "3").stdoutBytes
                == Array(stdout.split(separator: 10).dropFirst(3).map { $0 + [10] }.joined()))

        let other = s.path("other")
        #expect(try s.ok("import", file, "--store", other).line == "imported 4 events")
        #expect(try s.ok("export", "--store", other).stdoutBytes == stdout)
        #expect(try s.ok("import", file, "--store", other).line == "imported 0 events (4 already in the store)")
        let third = s.path("third")
        let piped = s.run(["import", "-", "--store", third, "--json"], stdin: stdout)
        #expect(piped.code == 0)
        #expect(try piped.object()["appended"] as? Int == 4)
    }

    @Test("export --output to a pipe writes into it and leaves it a pipe (no file renamed over it, as over a device)")
    func exportIntoAPipe() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        try s.add("Two", "--body", "b")
        let expected = try s.ok("export").stdoutBytes
        let fifo = s.path("pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        // Opened for reading first (without waiting for a writer), so the export's open does
        // not block; the export fits in the pipe's buffer.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        #expect(try s.ok("export", "--output", fifo).line.hasPrefix("exported 2 events"))
        var st = stat()
        #expect(stat(fifo, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO, "before 2026-12-06 a file replaced it")
        var got = [UInt8](repeating: 0, count: 1 << 16)
        let n = got.withUnsafeMutableBytes { Foundation.read(reader, $0.baseAddress, $0.count) }
        #expect(Array(got.prefix(max(0, n))) == expected)
    }

    @Test("export --output /dev/stdout into a pipe writes into it, as `notes export --output /dev/stdout | gzip` wants")
    func exportToStandardOutputAPipe() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let expected = try s.ok("export").stdoutBytes
        // /dev/stdout is a link to /proc/self/fd/1, itself a link to `pipe:[N]`, which no path
        // names: before 2026-12-07 the export was refused, exit 1, "it is a symbolic link that
        // leads nowhere".
        let out = s.path("piped.jsonl")
        let piped = s.run(
            ["-c", #"set -o pipefail; "$0" export --output /dev/stdout | cat > "$1""#, notesBinary, out],
            executable: "/bin/bash")
        #expect(piped.code == 0 && piped.stderr.isEmpty, "\(piped)")
        // The export alone, as without --output: no summary line after it.
        #expect(read(file: out) == expected)
        // Standard output redirected to a file: the same.
        #expect(try s.ok("export", "--output", "/dev/stdout").stdoutBytes == expected)
        // Another descriptor that is a pipe (`--output >(gzip > f)`), its summary on stdout.
        let other = s.path("fd3.jsonl")
        let script = #"set -o pipefail; "$0" export --output /dev/fd/3 3>&1 >/dev/null | cat > "$1""#
        let fd3 = s.run(["-c", script, notesBinary, other], executable: "/bin/bash")
        #expect(fd3.code == 0 && fd3.stderr.isEmpty, "\(fd3)")
        #expect(read(file: other) == expected)
    }

    @Test(
        "export --output to a symbolic link writes the file it leads to and keeps the link; one into the store is refused"
    )
    func exportThroughALink() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let expected = try s.ok("export").stdoutBytes
        // A link to a backup disk or a synced folder: before 2026-12-06 the export was renamed
        // over the link, which became a plain file, and the file it led to was left as it was.
        let target = s.path("backup/notes.jsonl")
        try FileManager.default.createDirectory(atPath: s.path("backup"), withIntermediateDirectories: true)
        write(file: target, "old export\n")
        let link = s.path("notes.jsonl")
        try #require(symlink(target, link) == 0)
        #expect(try s.ok("export", "--output", link).line.hasPrefix("exported 1 event"))
        var st = stat()
        #expect(lstat(link, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK, "the link is kept")
        #expect(read(file: target) == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("backup")) == ["notes.jsonl"])
        // A link that leads nowhere is refused, and left as it is.
        let dangling = s.path("dangling.jsonl")
        try #require(symlink(s.path("gone/notes.jsonl"), dangling) == 0)
        CLIErrorTests.expectFailure(s.run("export", "--output", dangling), 1, mentioning: "leads nowhere")
        #expect(lstat(dangling, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK)
        // A link to the store's own file is the store's file.
        let intoStore = s.path("store-link.jsonl")
        try #require(symlink(s.store + "/data.mdb", intoStore) == 0)
        CLIErrorTests.expectFailure(s.run("export", "--output", intoStore), 2, mentioning: "would replace the store")
        #expect(try s.ok("verify").line.hasPrefix("ok:"))
    }

    @Test("export --output naming the store's own file is refused even when standard output is that file")
    func exportToStandardOutputThatIsTheStore() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let data = s.store + "/data.mdb"
        let before = read(file: data)
        // Standard output opened on the store's file without truncating it (`1<>`, as a script
        // or a service manager may hand it): before the fix the path was taken for standard
        // output and the export written over the store's first pages, though the same
        // `--output` without that redirection is refused.
        // A hard link to it elsewhere is the store's file too.
        let linked = s.path("linked.jsonl")
        try #require(link(data, linked) == 0)
        for (output, opened) in [(data, data), ("/dev/stdout", data), (linked, linked)] {
            let run = s.run(
                ["-c", #""$0" export --output "$1" 1<>"$2""#, notesBinary, output, opened], executable: "/bin/bash")
            CLIErrorTests.expectFailure(run, 2, mentioning: "would replace the store")
            let unchanged = read(file: data) == before
            #expect(unchanged, "the store's file is as it was (\(output))")
        }
        #expect(try s.ok("verify").line.hasPrefix("ok:"))
        // Standard output a file elsewhere, or a pipe, is still written as without --output.
        #expect(try s.ok("export", "--output", "/dev/stdout").stdoutBytes == s.ok("export").stdoutBytes)
    }

    @Test("an export removes the temporaries of its file that a killed export left, and nothing else")
    func abandonedTemporariesRemoved() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        let expected = try s.ok("export").stdoutBytes
        let out = s.path("out.jsonl")
        // What `export --output` killed midway (SIGKILL) leaves: its temporary, half written and
        // held by no process. A new user's trial found such files piling up beside the target.
        func make(_ path: String, modified secondsAgo: Int = 3600) {
            write(file: path, "{\"position\":1,\"half a li")
            chmod(path, 0o600)
            var times = [timeval(), timeval()]
            times[0].tv_sec = time(nil) - secondsAgo
            times[1].tv_sec = time(nil) - secondsAgo
            utimes(path, &times)
        }
        let abandoned = [out + ".tmp-Ab12Cd", out + ".tmp-zz9999"]
        for path in abandoned { make(path) }
        // Left alone: another file's temporary, names not of ours, a link, one being written
        // (held by a writer: here this process), one written a moment ago.
        let kept = [
            s.path("other.jsonl.tmp-Ab12Cd"), out + ".tmp-Ab12C", out + ".tmp-Ab12Cde", out + ".tmp-Ab_2Cd",
            out + ".tmp-held01", out + ".tmp-fresh1", out + ".bak",
        ]
        for path in kept { make(path) }
        make(out + ".tmp-fresh1", modified: -3600)
        symlink(s.path("other.jsonl.tmp-Ab12Cd"), out + ".tmp-link01")
        let held = open(out + ".tmp-held01", O_RDONLY | O_CLOEXEC)
        try #require(held >= 0 && flock(held, LOCK_EX) == 0)
        defer { close(held) }
        #expect(try s.ok("export", "--output", out).line == "exported 1 event to \(out)")
        #expect(read(file: out) == expected)
        for path in abandoned { #expect(!fileExists(path), "\(path) was left") }
        for path in kept + [out + ".tmp-link01"] {
            var st = stat()
            #expect(lstat(path, &st) == 0, "\(path) was removed")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: s.root)
        #expect(names.filter { $0.hasPrefix("out.jsonl.tmp-") }.count == 6, "\(names.sorted())")
    }

    @Test("export-markdown removes the temporaries of its files that a killed export left, and nothing else")
    func abandonedMarkdownTemporariesRemoved() throws {
        let s = try Sandbox()
        try s.add("One", "--body", "a")
        try s.add("Two", "--body", "b", "--category", "Work")
        let vault = s.path("vault")
        try s.ok("export-markdown", vault)
        let top = try FileManager.default.contentsOfDirectory(atPath: vault).filter { $0.hasSuffix(".md") }
        let work = try FileManager.default.contentsOfDirectory(atPath: vault + "/Work").filter { $0.hasSuffix(".md") }
        try #require(top.count == 1 && work.count == 1, "\(top) \(work)")
        func make(_ path: String, modified secondsAgo: Int = 3600) {
            write(file: path, "---\nid: half writ")
            chmod(path, 0o600)
            var times = [timeval(), timeval()]
            times[0].tv_sec = time(nil) - secondsAgo
            times[1].tv_sec = time(nil) - secondsAgo
            utimes(path, &times)
        }
        // What an export-markdown killed midway (SIGKILL, Ctrl-C) leaves: a note file's temporary,
        // held by no process. A review's trial found them left in the folder for good: the
        // export opted out of the sweep each other writer does.
        let abandoned = [vault + "/" + top[0] + ".tmp-Ab12Cd", vault + "/Work/" + work[0] + ".tmp-zz9999"]
        for path in abandoned { make(path) }
        // Left alone: a file not of this export, one being written (held), one written a moment ago.
        let kept = [
            vault + "/mine.md.tmp-Ab12Cd", vault + "/" + top[0] + ".tmp-held01", vault + "/" + top[0] + ".tmp-fresh1",
        ]
        for path in kept { make(path) }
        make(kept[2], modified: -3600)
        let held = open(kept[1], O_RDONLY | O_CLOEXEC)
        try #require(held >= 0 && flock(held, LOCK_EX) == 0)
        defer { close(held) }
        #expect(try s.ok("export-markdown", vault).line == "exported 2 notes to \(vault)")
        for path in abandoned { #expect(!fileExists(path), "\(path) was left") }
        for path in kept { #expect(fileExists(path), "\(path) was removed") }
    }

    @Test(
        "a vault's file whose name is too long for a temporary beside it (250 bytes) is exported back, and a killed export's temporary of it removed"
    )
    func longFileNameExportedBack() throws {
        let s = try Sandbox()
        let vault = s.path("vault")
        mkdir(vault, 0o755)
        // 125 two-byte letters and `.md`: 253 bytes, a name Linux takes; its temporary
        // `NAME.tmp-XXXXXX` would be 264. Before 2026-12-06 the export stopped at it, "File name
        // too long", having written no note at all (a new user's trial).
        let name = String(repeating: "é", count: 125) + ".md"
        write(file: vault + "/" + name, "long name\n")
        write(file: vault + "/short.md", "short\n")
        try s.ok("import-markdown", vault)
        let out = s.path("out")
        #expect(try s.ok("export-markdown", out).line == "exported 2 notes to \(out)")
        #expect(String(decoding: read(file: out + "/" + name), as: UTF8.self).hasSuffix("---\nlong name\n"))
        #expect(try s.ok("import-markdown", out).line == "created 0, updated 0, unchanged 2")
        // A temporary of the name cut to fit, left by a killed export, is removed by the next.
        let stem = String(repeating: "é", count: 122)  // 244 bytes, and `.tmp-XXXXXX` is 255
        let abandoned = out + "/" + stem + ".tmp-Ab12Cd"
        write(file: abandoned, "---\nid: half writ")
        chmod(abandoned, 0o600)
        var times = [timeval(), timeval()]
        times[0].tv_sec = time(nil) - 3600
        times[1].tv_sec = time(nil) - 3600
        utimes(abandoned, &times)
        try s.ok("export-markdown", out)
        #expect(!fileExists(abandoned))
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(names.sorted() == [name, "short.md"].sorted(), "\(names)")
    }

    @Test("an alias of a Markdown file that no link can reach (it holds | or [[) is imported with a warning")
    func unreachableAliasWarned() throws {
        let s = try Sandbox()
        let dir = s.path("aliases")
        mkdir(dir, 0o755)
        write(file: dir + "/a.md", "---\naliases: [\"a|b\", \"[[c]]\", fine]\n---\ntext\n")
        let r = s.run("import-markdown", dir)
        #expect(r.code == 0, "\(r)")
        #expect(
            r.stderr
                == "notes: warning: a.md: alias \"a|b\" holds |, which a [[link]] reads as its syntax: no link leads to the note by it\n"
                + "notes: warning: a.md: alias \"[[c]]\" holds [[, which a [[link]] reads as its syntax: no link leads to the note by it\n"
        )
        let id = try #require(try s.ok("list", "--json").array().first?["id"] as? String)
        #expect(try s.ok("alias", id).stdout == "a|b\n[[c]]\nfine\n")
    }

    @Test("an export over the store's own files is refused (it would replace the store), however the path is spelled")
    func exportIntoStoreRefused() throws {
        let s = try Sandbox()
        try s.add("Kept", "--body", "x")
        let before = try s.ok("export").stdoutBytes
        symlink(s.store, s.path("link"))
        mkdir(s.path("elsewhere"), 0o700)
        for target in [
            s.store + "/data.mdb", s.store + "/lock.mdb", s.path("link/data.mdb"),
            s.path("elsewhere/../store/data.mdb"),
            s.store + "/./lock.mdb",
        ] {
            let r = s.run("export", "--output", target)
            CLIErrorTests.expectFailure(r, 2, mentioning: "is a file of the store")
        }
        #expect(try s.ok("export").stdoutBytes == before)
        try s.ok("verify")
        CLIErrorTests.expectFailure(
            s.run("export", "--output", s.path("elsewhere")), 2, mentioning: "is a directory; give a file")
        // Any other name is fine, in the store's directory too; a link is written where it
        // leads, so one to the store's file is that file (before 2026-12-06 the export was
        // renamed over the link).
        for target in [s.path("elsewhere/out.jsonl"), s.store + "/backup.jsonl"] {
            #expect(try s.ok("export", "--output", target).line.hasPrefix("exported 1 event"))
        }
        symlink(s.store + "/data.mdb", s.path("elsewhere/alias.mdb"))
        CLIErrorTests.expectFailure(
            s.run("export", "--output", s.path("elsewhere/alias.mdb")), 2, mentioning: "is a file of the store")
        #expect(try s.ok("export").stdoutBytes == before)
        try s.ok("verify")
    }

    @Test("an event dated more than a day after the clock is refused: it would date every later change")
    func eventFromTheFuture() throws {
        let s = try Sandbox()
        let nowID = try s.add("Now")
        let line = try s.ok("export").stdout
        let other = s.path("other")
        try s.ok("add", "Existing", "--store", other)
        let before = try events(s, store: other)
        let file = s.path("future.jsonl")
        let recorded = try #require(line.range(of: #""recordedAt":"[^"]*""#, options: .regularExpression))
        write(file: file, line.replacingCharacters(in: recorded, with: #""recordedAt":"9999-12-31T00:00:00Z""#))
        let r = s.run("import", file, "--store", other)
        #expect(
            r.code == 2 && r.stderr.contains("line 1: recordedAt 9999-12-31T00:00:00")
                && r.stderr.contains("more than a day after this machine's clock"), "\(r)")
        #expect(try events(s, store: other) == before)
        // Every line is checked, not only a stream's first: a later event of the note.
        try s.ok("edit", nowID, "--body", "edited")
        let two = try s.ok("export").stdout.split(separator: "\n").map(String.init)
        let second = try #require(two.last?.range(of: #""recordedAt":"[^"]*""#, options: .regularExpression))
        let third = s.path("other3")
        write(
            file: file,
            two.dropLast().joined(separator: "\n") + "\n"
                + two.last!.replacingCharacters(in: second, with: #""recordedAt":"2099-01-01T00:00:00Z""#) + "\n")
        let late = s.run("import", file, "--store", third)
        #expect(late.code == 2 && late.stderr.contains("line \(two.count): recordedAt 2099"), "\(late)")
        // A few hours ahead (another device's clock) is taken.
        #expect(fixedNow == "2026-11-29T12:00:00Z")
        write(file: file, line.replacingCharacters(in: recorded, with: #""recordedAt":"2026-11-29T15:00:00Z""#))
        try s.ok("import", file, "--store", other)
    }

    @Test("a note filed under a category or tag that neither the store nor an earlier line created is refused")
    func danglingReferences() throws {
        let s = try Sandbox()
        try s.add("Filed", "--category", "Work", "--tag", "x")
        let good = try s.ok("export").stdout
        let other = s.path("other")
        try s.ok("add", "Existing", "--store", other)
        let file = s.path("dangling.jsonl")
        let note = "note/33333333-3333-4333-8333-333333333333"
        let stray = "44444444-4444-4444-8444-444444444444"
        for (k, line) in [
            #"{"eventId":"00000000-0000-4000-8000-0000000000b1","stream":"\#(note)","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2026-11-01T00:00:00Z","metadata":{"actor":"a"},"data":{"title":"t","body":"","pinned":false,"category":"\#(stray)"}}"#,
            #"{"eventId":"00000000-0000-4000-8000-0000000000b2","stream":"\#(note)","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2026-11-01T00:00:00Z","metadata":{"actor":"a"},"data":{"title":"t","body":"","pinned":false,"category":null}}"#
                + "\n"
                + #"{"eventId":"00000000-0000-4000-8000-0000000000b3","stream":"\#(note)","version":2,"type":"NoteTagged","schemaVersion":1,"recordedAt":"2026-11-01T00:00:00Z","metadata":{"actor":"a"},"data":{"tag":"\#(stray)"}}"#,
        ].enumerated() {
            write(file: file, line + "\n")
            let r = s.run("import", file, "--store", other)
            #expect(
                r.code == 2
                    && r.stderr.contains("line \(k + 1): the \(k == 0 ? "category" : "tag") \(stray) is neither"),
                "\(r)")
        }
        // The whole export (creations first) goes in.
        write(file: file, good)
        try s.ok("import", file, "--store", other)
        #expect(try s.titles("--store", other, "--category", "Work") == ["Filed"])
    }

    @Test("a category or tag merged into itself, or into one nobody created, is refused; into an existing one, taken")
    func mergeReferences() throws {
        let s = try Sandbox()
        let file = s.path("merge.jsonl")
        let (c, d) = ("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222")
        func line(_ n: Int, _ stream: String, _ version: Int, _ type: String, _ data: String) -> String {
            #"{"eventId":"00000000-0000-4000-8000-00000000000\#(n)","stream":"\#(stream)","version":\#(version),"type":"\#(type)","schemaVersion":1,"recordedAt":"2026-11-01T00:00:0\#(n)Z","metadata":{"actor":"a"},"data":\#(data)}"#
        }
        for kind in ["Category", "Tag"] {
            let prefix = kind.lowercased()
            let created = line(1, "\(prefix)/\(c)", 1, "\(kind)Created", #"{"name":"one"}"#)
            for (into, reason) in [(c, "is merged into itself"), (d, "is merged into \(d), which neither")] {
                let merged = line(2, "\(prefix)/\(c)", 2, "\(kind)Merged", #"{"into":"\#(into)"}"#)
                write(file: file, created + "\n" + merged + "\n")
                let r = s.run("import", file)
                #expect(r.code == 2 && r.stderr.contains("line 2: the \(prefix) \(reason)"), "\(r)")
                #expect(s.run("export").stdout.isEmpty, "nothing was imported")
            }
            // Into one an earlier line created: taken.
            let other = line(3, "\(prefix)/\(d)", 1, "\(kind)Created", #"{"name":"two"}"#)
            let merged = line(4, "\(prefix)/\(c)", 2, "\(kind)Merged", #"{"into":"\#(d)"}"#)
            write(file: file, created + "\n" + other + "\n" + merged + "\n")
            try s.ok("import", file, "--store", s.path(prefix))
        }
    }

    @Test(
        "an import that leaves a note filed under a deleted category or tag is refused; one that moves it out first is taken"
    )
    func filingsUnderDeleted() throws {
        let s = try Sandbox()
        let (c, t) = ("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222")
        let note = "note/33333333-3333-4333-8333-333333333333"
        var n = 0
        func line(_ stream: String, _ version: Int, _ type: String, _ schema: Int, _ data: String) -> String {
            n += 1
            return
                #"{"eventId":"00000000-0000-4000-8000-0000000000\#(String(format: "%02d", n))","stream":"\#(stream)","version":\#(version),"type":"\#(type)","schemaVersion":\#(schema),"recordedAt":"2026-11-01T00:00:\#(String(format: "%02d", n))Z","metadata":{"actor":"a"},"data":\#(data)}"#
        }
        let createdC = line("category/\(c)", 1, "CategoryCreated", 1, #"{"name":"Temp"}"#)
        let deletedC = line("category/\(c)", 2, "CategoryDeleted", 1, "{}")
        let createdT = line("tag/\(t)", 1, "TagCreated", 1, #"{"name":"ttt"}"#)
        let deletedT = line("tag/\(t)", 2, "TagDeleted", 1, "{}")
        let noteIn = line(note, 1, "NoteCreated", 2, #"{"title":"ghost","body":"","pinned":false,"category":"\#(c)"}"#)
        let tagged = line(note, 2, "NoteTagged", 1, #"{"tag":"\#(t)"}"#)
        let out = line(note, 3, "NoteCategorized", 1, #"{"category":null}"#)
        let untagged = line(note, 4, "NoteUntagged", 1, #"{"tag":"\#(t)"}"#)
        let file = s.path("ghost.jsonl")
        // The trial's file: deleted first, then the note filed under both.
        for (lines, reason) in [
            (
                [createdC, deletedC, createdT, deletedT, noteIn, tagged],
                "line 5: note 33333333-3333-4333-8333-333333333333 stays filed under the category"
            ),
            (
                [createdC, createdT, noteIn, tagged, out, deletedC, deletedT],
                "line 7: note 33333333-3333-4333-8333-333333333333 stays filed under the tag"
            ),
        ] {
            write(file: file, lines.joined(separator: "\n") + "\n")
            let r = s.run("import", file)
            #expect(r.code == 2 && r.stderr.contains(reason), "\(r)")
            #expect(s.run("export").stdout.isEmpty, "nothing imported")
        }
        // Moved out of both before they are deleted (as `categories delete` does): taken, and
        // the note is uncategorized.
        write(
            file: file,
            [createdC, createdT, noteIn, tagged, out, untagged, deletedC, deletedT].joined(separator: "\n") + "\n")
        try s.ok("import", file)
        #expect(try s.titles("--uncategorized") == ["ghost"])
        // A note of the store filed under a category a file deletes, with nothing moving it out.
        let other = s.path("other")
        let kept = try s.add("Kept", "--category", "Home", "--store", other)
        let home = try #require(
            s.ok("export", "--store", other).stdout.split(separator: "\n").first { $0.contains("CategoryCreated") })
        let homeStream = try #require(
            home.firstRange(of: "category/").map { String(home[$0.lowerBound...].prefix(45)) })
        write(file: file, line(homeStream, 2, "CategoryDeleted", 1, "{}") + "\n")
        let r = s.run("import", file, "--store", other)
        #expect(r.code == 2 && r.stderr.contains("line 1: note ") && r.stderr.contains(kept.prefix(8)), "\(r)")
    }

    @Test("a bad line: exit code 2, the line and reason on stderr, nothing imported")
    func badLine() throws {
        let s = try Sandbox()
        try s.add("One")
        let good = try s.ok("export").stdout
        let other = s.path("other")
        try s.ok("add", "Existing", "--store", other)
        let before = try events(s, store: other)
        let file = s.path("bad.jsonl")
        let second =
            #"{"eventId":"00000000-0000-4000-8000-0000000000a1","stream":"note/22222222-2222-4222-8222-222222222222","version":2,"type":"NotePinned","schemaVersion":1,"recordedAt":"2021-01-01T00:00:00Z","metadata":{"actor":"a"},"data":{}}"#
        write(file: file, good + second + "\n")
        let r = s.run("import", file, "--store", other)
        #expect(r.code == 2)
        #expect(
            r.stderr
                == "notes: error: line 2: version 2 does not continue note/22222222-2222-4222-8222-222222222222, which is not in the store; nothing was imported\n"
        )
        #expect(r.stdout.isEmpty)
        #expect(try events(s, store: other) == before)
        write(file: file, good + "{not json\n")
        let malformed = s.run("import", file, "--store", other)
        #expect(malformed.code == 2)
        #expect(
            malformed.stderr
                == "notes: error: line 2: malformed JSON: expected a string key at byte 1 (found 'n'); nothing was imported\n"
        )
        let missing = s.run("import", s.path("nope.jsonl"))
        // A file that cannot be read is an I/O failure (exit 1), not a usage error.
        #expect(missing.code == 1 && missing.stderr.contains("cannot read"), "\(missing)")
        // A file whose reads fail (the kernel answers EIO for this one): exit 1 with the reason.
        let unreadable = s.run("import", "/proc/self/mem")
        #expect(unreadable.code == 1 && unreadable.stderr.contains("Input/output error"), "\(unreadable)")
        #expect(s.run("import").code == 2)
        #expect(s.run("export", "--since", "-1").code == 2)
    }

    @Test("import-history imports the sample once; running it again changes nothing")
    func importHistory() throws {
        let s = try Sandbox()
        let first = try s.ok("import-history", Self.sample)
        #expect(first.line.hasPrefix("imported 43 notes from 515 lines: "))
        #expect(first.line.contains(" created") && !first.line.contains("already in the store"), "\(first.line)")
        let count = try events(s)
        // The same history compressed (when gzip is there) is the same events: nothing new.
        var input = Self.sample
        if hasProgram("gzip") {
            input = s.path("sample.jsonl.gz")
            let gz = s.run(["-c", "gzip -c '\(Self.sample)' > '\(input)'"], executable: "/bin/sh")
            try #require(gz.code == 0, "\(gz)")
        }
        let again = try s.ok("import-history", input, "--json").object()
        #expect(again["appended"] as? Int == 0 && again["notes"] as? Int == 43)
        #expect(again["skipped"] as? Int == again["events"] as? Int && again["categoriesCreated"] as? Int == 0)
        #expect(try events(s) == count)
        let all = try s.run("list", "--all", "--json").array()
        #expect(all.count == 43)
        #expect(try s.titles("--all", "--category", "implemented").contains("API Design Guidelines"))
        let bad = s.path("bad.jsonl.gz")
        write(file: bad, "not gzip")
        // gzip's warning (trailing garbage ignored, status 2) is not damage: the data came out whole.
        if hasProgram("gzip") {
            let garbage = s.path("garbage.jsonl.gz")
            let made = s.run(
                ["-c", "gzip -c '\(Self.sample)' > '\(garbage)'; printf 'xx' >> '\(garbage)'"], executable: "/bin/sh")
            try #require(made.code == 0, "\(made)")
            #expect(try s.ok("import-history", garbage, "--json").object()["appended"] as? Int == 0)
        }
        let r = s.run("import-history", bad)
        // What gzip said is part of the one line of the error (it used to print a line of its own).
        #expect(
            r.code == 2 && r.stderr.hasPrefix("notes: error: ") && r.stderr.contains("gzip: not in gzip format")
                && r.stderr.split(separator: "\n").count == 1, "\(r)")
        let head = s.run("export")
        #expect(head.code == 0)
    }

    @Test("export-markdown and import-markdown through the CLI")
    func markdown() throws {
        let s = try Sandbox()
        try s.add("Plan", "--body", "one\n", "--category", "Work")
        let dir = s.path("md")
        #expect(try s.ok("export-markdown", dir).line == "exported 1 note to \(dir)")
        #expect(try s.ok("import-markdown", dir).line == "created 0, updated 0, unchanged 1")
        let other = s.path("other")
        #expect(try s.ok("import-markdown", dir, "--store", other).line == "created 1, updated 0, unchanged 0")
        #expect(try s.titles("--store", other) == ["Plan"])
        #expect(s.run("import-markdown", s.path("missing")).code == 1)
    }

    @Test(
        "titles as people expect them: empty front matter titles, headings as text, a byte-order mark, a cut with a warning"
    )
    func markdownTitles() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        let badges = "# rustfmt [![linux](https://ci/a.svg)](https://ci/a) [![mac](https://ci/b.svg)](https://ci/b)\n"
        let long = "# " + Array(repeating: "word", count: 130).joined(separator: " ") + "\n"
        let files: [(String, [UInt8])] = [
            ("badges.md", Array(badges.utf8)),
            ("links.md", Array("# The [Swift](https://swift.org) **book**, `code` and [[Target|a wiki link]]\n".utf8)),
            ("empty-title.md", Array("---\ntitle: ''\n---\n# Real heading\n".utf8)),
            ("bom.md", [0xEF, 0xBB, 0xBF] + Array("# After the mark\r\nbody\r\n".utf8)),
            ("bom-front.md", [0xEF, 0xBB, 0xBF] + Array("---\ntitle: Front\n---\ntext\n".utf8)),
            ("long.md", Array(long.utf8)),
            ("plain.md", Array("no heading here\n".utf8)),
        ]
        mkdir(dir, 0o755)
        for (name, bytes) in files { write(file: dir + "/" + name, bytes) }
        let r = s.run("import-markdown", dir)
        #expect(r.code == 0 && r.line == "created 7, updated 0, unchanged 0", "\(r)")
        #expect(r.stderr == "notes: warning: long.md: the title is over 500 characters; cut at a word boundary\n")
        let notes = try s.ok("list", "--json").array()
        let titles = Set(notes.compactMap { $0["title"] as? String })
        #expect(
            titles.isSuperset(of: [
                "rustfmt", "The Swift book, code and a wiki link", "Real heading", "After the mark", "Front", "plain",
            ]), "\(titles)")
        let cut = try #require(titles.first { $0.hasPrefix("word word") })
        #expect(cut.count <= 500 && cut.hasSuffix("word…"), "\(cut.count)")
        let bom = try #require(notes.first { $0["title"] as? String == "After the mark" })
        // The body keeps its bytes (read from `show`: Foundation's JSON reader drops a leading mark).
        let id = try #require(bom["id"] as? String)
        let shown = try s.ok("show", String(id.prefix(8))).stdoutBytes
        let expected: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("# After the mark\r\nbody\r\n".utf8)
        #expect(shown.suffix(expected.count).elementsEqual(expected), "\(shown)")
    }

    @Test("a front matter title over the limit is cut, and kept whole as the body's first heading through an export")
    func markdownLongFrontMatterTitle() throws {
        let s = try Sandbox()
        let dir = s.path("vault")
        let whole = (0..<200).map { "w\($0)" }.joined(separator: " ")
        mkdir(dir, 0o755)
        write(file: dir + "/long.md", Array("---\ntitle: \(whole)\n---\nbody\n".utf8))
        let r = s.run("import-markdown", dir)
        #expect(r.code == 0 && r.line == "created 1, updated 0, unchanged 0", "\(r)")
        #expect(
            r.stderr
                == "notes: warning: long.md: the title is over 500 characters; cut at a word boundary, the whole title "
                + "kept as the body's first heading\n")
        let note = try #require(try s.ok("list", "--json").array().first)
        let title = try #require(note["title"] as? String)
        #expect(title.count <= 500 && title.hasSuffix("…") && whole.hasPrefix(title.dropLast()), "\(title)")
        let id = try #require(note["id"] as? String)
        #expect(try s.ok("show", String(id.prefix(8)), "--json").object()["body"] as? String == "# \(whole)\n\nbody\n")
        // Exported and imported again: the whole title is still there, and nothing changes.
        try s.ok("export-markdown", dir)
        let again = s.run("import-markdown", dir)
        #expect(again.code == 0 && again.line == "created 0, updated 0, unchanged 1", "\(again)")
        #expect(String(decoding: read(file: dir + "/long.md"), as: UTF8.self).contains("# \(whole)\n"))
    }
}

extension InterchangeCLITests {
    @Test(
        "an import into a store with later events says how many it recorded at the store's last instant; into a new one, nothing"
    )
    func importDatedBeforeTheStore() throws {
        // A history of 2026-01-01, exported from one store...
        let old = try Sandbox(now: "2026-01-01T09:00:00Z")
        try old.add("Old one", "--body", "a")
        try old.add("Old two", "--tag", "t")
        let file = old.path("old.jsonl")
        try old.ok("export", "--output", file)
        let lines = String(decoding: read(file: file), as: UTF8.self).split(separator: "\n").count

        // ...into a notebook in use since: every event is recorded at its last instant.
        let s = try Sandbox()
        try s.add("Today's note")
        let r = try s.ok("import", file)
        let warning =
            "notes: warning: \(lines) events are dated before the store's last event (2026-11-29T12:00:00.000000Z) "
            + "and recorded at its instant"
        // Before 2026-12-07 the import said nothing of it: a history of years, all dated today.
        #expect(r.stderr.hasPrefix(warning) && r.stderr.contains("import into a new store"), "\(r)")
        #expect(r.stdout == "imported \(lines) events\n", "the summary stays on stdout: \(r.stdout)")
        #expect(try s.titles("--as-of", "2026-06-01") == [], "what the warning says")
        // Again: nothing appended, nothing to say.
        let again = try s.ok("import", file, "--json")
        #expect(try again.object()["recordedLater"] as? Int == 0 && again.stderr.isEmpty, "\(again)")

        // Into a new store the dates are kept, and nothing is said.
        let fresh = s.run("import", file, "--store", s.path("fresh"), "--json")
        #expect(fresh.code == 0 && fresh.stderr.isEmpty, "\(fresh)")
        #expect(try fresh.object()["recordedLater"] as? Int == 0)
        #expect(try s.titles("--as-of", "2026-06-01", "--store", s.path("fresh")).sorted() == ["Old one", "Old two"])

        // import-history: the sample's revisions of 2015-2016 into the notebook in use.
        let history = try s.ok("import-history", Self.sample, "--json")
        let summary = try history.object()
        let appended = try #require(summary["appended"] as? Int)
        let categories = try #require(summary["categoriesCreated"] as? Int)
        #expect(appended > 0 && summary["recordedLater"] as? Int == appended + categories, "\(summary)")
        #expect(history.stderr.contains("\(appended + categories) events are dated before the store's last event"))
        let into = s.path("history")
        let kept = s.run("import-history", Self.sample, "--store", into, "--json")
        #expect(kept.code == 0 && kept.stderr.isEmpty, "\(kept)")
        #expect(try kept.object()["recordedLater"] as? Int == 0)
    }
}
