import FoundationEssentials
import Glibc
import Testing

/// A store that runs out of room: a 2 MiB tmpfs that fills up, and `ulimit -f`. The failing
/// command says the disk is full (exit 1), nothing half-written remains, and once there is
/// room again the same store takes writes.
@Suite("Reliability: full disk and file size limits")
struct ReliabilityDiskTests {
    @Test(
        "a full filesystem: exit 1 'the disk is full', the store verifies, and works once space is freed",
        .enabled(if: ReliabilityInputTests.canMount, "needs root with mount rights (CAP_SYS_ADMIN) for a small tmpfs"))
    func fullFilesystem() throws {
        let s = try Sandbox()
        let small = s.path("small")
        mkdir(small, 0o700)
        try #require(system("mount -t tmpfs -o size=2m,mode=0700 tmpfs '\(small)'") == 0, "mount tmpfs failed")
        defer { _ = system("umount '\(small)'") }
        let env: [String: String?] = ["NOTES_STORE": small + "/store"]
        #expect(s.run(["add", "first", "--body", "small"], env: env).code == 0)
        // Room to free later.
        write(file: small + "/filler", [UInt8](repeating: 0x2A, count: 700_000))
        write(file: s.path("body.txt"), String(repeating: "abcdefghij", count: 10_000))  // 100 kB
        var acknowledged: [String] = []
        var failure: CLIRun?
        for i in 0..<40 {
            let r = s.run(["add", "note \(i)", "--body-file", s.path("body.txt")], env: env)
            if r.code != 0 {
                failure = r
                break
            }
            acknowledged.append(r.line)
        }
        let full = try #require(failure, "40 notes of 100 kB fit on a 2 MiB tmpfs")
        #expect(full.code == 1, "\(full)")
        #expect(full.stderr.contains("the disk is full"), "\(full.stderr)")
        #expect(full.stdout.isEmpty)
        #expect(!full.stderr.contains("abcdefghij"), "the error echoes the body")
        // A second try fails the same way, and reads still work on the full disk.
        #expect(s.run(["add", "again", "--body-file", s.path("body.txt")], env: env).code == 1)
        #expect(s.run(["verify"], env: env).code == 0)
        for id in acknowledged { #expect(s.run(["show", id], env: env).code == 0) }
        let listed = s.run(["list", "--json"], env: env)
        #expect(try listed.array().count == acknowledged.count + 1)

        unlink(small + "/filler")
        let after = s.run(["add", "after", "--body-file", s.path("body.txt")], env: env)
        #expect(after.code == 0, "\(after)")
        #expect(s.run(["verify"], env: env).code == 0)
        #expect(try s.run(["list", "--json"], env: env).array().count == acknowledged.count + 2)
    }

    @Test(
        "a first add on a full filesystem: exit 1 'the disk is full' (not a SIGBUS in lock.mdb), and works once freed",
        .enabled(if: ReliabilityInputTests.canMount, "needs root with mount rights (CAP_SYS_ADMIN) for a small tmpfs"))
    func newStoreOnFullFilesystem() throws {
        let s = try Sandbox()
        let small = s.path("small")
        mkdir(small, 0o700)
        try #require(system("mount -t tmpfs -o size=512k,mode=0700 tmpfs '\(small)'") == 0, "mount tmpfs failed")
        defer { _ = system("umount '\(small)'") }
        // Fill every block.
        _ = system("dd if=/dev/zero of='\(small)/filler' bs=4k 2>/dev/null")
        let env: [String: String?] = ["NOTES_STORE": small + "/store"]
        let full = s.run(["add", "first", "--body", "small"], env: env)
        #expect(full.code == 1, "\(full)")
        #expect(full.stderr.contains("the disk is full"), "\(full.stderr)")
        #expect(!full.stderr.contains("SIGBUS"), "\(full.stderr)")
        #expect(full.stdout.isEmpty)
        unlink(small + "/filler")
        let after = s.run(["add", "first", "--body", "small"], env: env)
        #expect(after.code == 0, "\(after)")
        #expect(s.run(["verify"], env: env).code == 0)
        #expect(try s.run(["list", "--json"], env: env).array().count == 1)
    }

    @Test(
        "a large import stopped by a full disk gives the disk back: data.mdb as before, room for other files",
        .enabled(if: ReliabilityInputTests.canMount, "needs root with mount rights (CAP_SYS_ADMIN) for a small tmpfs"))
    func failedImportGivesTheDiskBack() throws {
        let s = try Sandbox()
        let small = s.path("small")
        mkdir(small, 0o700)
        try #require(system("mount -t tmpfs -o size=3m,mode=0700 tmpfs '\(small)'") == 0, "mount tmpfs failed")
        defer { _ = system("umount '\(small)'") }
        let env: [String: String?] = ["NOTES_STORE": small + "/store"]
        #expect(s.run(["add", "first", "--body", "small"], env: env).code == 0)
        var st = stat()
        try #require(stat(small + "/store/data.mdb", &st) == 0)
        let before = Int(st.st_size)
        // 4 MB of notes for a 3 MiB disk: the import's pages fill it before its commit.
        let vault = s.path("vault")
        mkdir(vault, 0o700)
        for i in 0..<70 { write(file: vault + "/n\(i).md", String(repeating: "word\(i) ", count: 9000)) }
        let full = s.run(["import-markdown", vault], env: env)
        #expect(full.code == 1, "\(full)")
        #expect(full.stderr.contains("the disk is full"), "\(full.stderr)")
        // Before 2026-12-07 data.mdb kept the pages of the failed write: it took the whole disk.
        try #require(stat(small + "/store/data.mdb", &st) == 0)
        #expect(Int(st.st_size) == before, "data.mdb grew from \(before) to \(st.st_size) bytes")
        let other = small + "/other"
        write(file: other, [UInt8](repeating: 0x2A, count: 1 << 20))
        try #require(stat(other, &st) == 0)
        #expect(st.st_size == 1 << 20, "the disk is still full after the failed import")
        #expect(s.run(["verify"], env: env).code == 0)
        #expect(s.run(["add", "second", "--body", "small"], env: env).code == 0)
        #expect(try s.run(["list", "--json"], env: env).array().count == 2)
    }

    /// Runs `notes args` under `ulimit -f blocks` (sh's units: 512 or 1024 bytes).
    static func underLimit(_ s: Sandbox, blocks: Int, _ args: [String]) -> CLIRun {
        s.run(["-c", "ulimit -f \(blocks) && exec \"$0\" \"$@\"", notesBinary] + args, executable: "/bin/sh")
    }

    @Test("past ulimit -f: exit 1 'the disk is full' (not a silent SIGXFSZ), the store verifies and stays usable")
    func fileSizeLimit() throws {
        let s = try Sandbox()
        for i in 0..<30 { try s.add("note \(i)", "--body", String(repeating: "\(i % 10)", count: 3000)) }
        var st = stat()
        try #require(stat(s.store + "/data.mdb", &st) == 0)
        let size = Int(st.st_size)
        write(file: s.path("body.txt"), String(repeating: "0123456789", count: 40_000))  // 400 kB
        // At most the current size whether sh counts 512- or 1024-byte blocks: every write that
        // grows the file goes past the limit (a short write, or one starting beyond it).
        for (n, blocks) in [size / 1024, size / 1024 + 100].enumerated() {
            let r = Self.underLimit(s, blocks: blocks, ["add", "big \(n)", "--body-file", s.path("body.txt")])
            #expect(r.code == 1, "ulimit -f \(blocks): \(r)")
            #expect(r.stderr.contains("the disk is full"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        #expect(s.run("verify").code == 0)
        #expect(try s.titles("--all").count == 30)
        #expect(s.run("add", "big", "--body-file", s.path("body.txt")).code == 0)
        #expect(s.run("verify").code == 0)
    }

    @Test("under ulimit -n 8: one clear line, exit 1 (not SIGILL); with only the soft limit that low, commands run")
    func openFileLimit() throws {
        let s = try Sandbox()
        for i in 0..<5 { try s.add("note \(i)", "--body", "text \(i)") }
        let export = s.path("export.jsonl")
        #expect(s.run("export", "--output", export).code == 0)
        let other = s.path("other")
        func under(_ limit: String, _ args: [String], store: String) -> CLIRun {
            s.run(
                ["-c", "ulimit \(limit) && exec \"$0\" \"$@\"", notesBinary] + args, env: ["NOTES_STORE": store],
                executable: "/bin/sh")
        }
        // Both limits (sh's `ulimit -n`): before 2026-12-06 an import and a rebuild died of SIGILL
        // in the thread pool ("Illegal instruction", exit 132).
        for (args, store) in [(["import", export], other), (["rebuild"], s.store), (["list"], s.store)] {
            let r = under("-n 8", args, store: store)
            ReliabilityInputTests.expectRefused(
                r, 1, "\(args)", mentioning: "only 8 open files are allowed (ulimit -n), and notes needs 16")
        }
        #expect(!fileExists(other))
        // The soft limit alone is raised.
        let imported = under("-S -n 8", ["import", export], store: other)
        #expect(imported.code == 0 && imported.line == "imported 5 events", "\(imported)")
        #expect(under("-S -n 8", ["rebuild"], store: s.store).code == 0)
        #expect(s.run("verify").code == 0)
        #expect(s.run(["verify"], env: ["NOTES_STORE": other]).code == 0)
    }

    @Test("an abort under ulimit -v is said to be want of memory (exit 1), not a damaged data.mdb (exit 5)")
    func abortUnderMemoryLimit() throws {
        let s = try Sandbox()
        let id = try s.add("Kept", "--body", "text\n")
        let started = s.path("started")
        // An editor that waits: `notes edit` is then a live process to signal, as an import is
        // when its allocation fails (the Swift runtime aborts with "failed to allocate").
        let editor = s.script("waiting-editor", "touch '\(started)'\nexec sleep 20\n")
        for (limit, code, text) in [
            ("ulimit -v 16000000 && ", Int32(1), "stopped for want of memory under the limit on virtual memory"),
            ("", Int32(5), "stopped by a fault reading the store"),
        ] {
            unlink(started)
            let errors = s.path("io/abort-\(code).err")
            var vars = s.environment
            vars["EDITOR"] = editor
            vars["VISUAL"] = nil
            let pid = try spawnJob(
                ["/bin/sh", "-c", limit + "exec \"$0\" edit \"$1\"", notesBinary, id], environment: vars, errors: errors
            )
            waitForFile(started)
            #expect(fileExists(started), "the editor started")
            kill(pid, SIGABRT)
            #expect(waitForExit(pid, seconds: 30) == code, "\(limit)")
            let said = String(decoding: read(file: errors), as: UTF8.self)
            #expect(said.hasPrefix("notes: error: " + text) && said.hasSuffix(" (SIGABRT)\n"), "\(said)")
        }
        let note = try s.object("show", id)
        #expect(note["body"] as? String == "text\n" && note["version"] as? Int == 1)
        #expect(s.run("verify").code == 0)
    }

    @Test("export --output past ulimit -f: exit 1 'the disk is full', the old file intact, no temporary file")
    func exportPastLimit() throws {
        let s = try Sandbox()
        for i in 0..<40 { try s.add("note \(i)", "--body", String(repeating: "\(i % 10)", count: 4000)) }
        let out = s.path("out/export.jsonl")
        mkdir(s.path("out"), 0o700)
        write(file: out, "the previous export\n")
        let r = Self.underLimit(s, blocks: 64, ["export", "--output", out])
        #expect(r.code == 1, "\(r)")
        #expect(r.stderr.hasPrefix("notes: error: cannot write \(out): the disk is full"), "\(r.stderr)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "the previous export\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: s.path("out"))
        #expect(left == ["export.jsonl"], "\(left)")
        #expect(s.run("export", "--output", out).code == 0)
    }

    @Test("export-markdown into a new folder past ulimit -f: exit 1, one line, nothing of the folder left")
    func markdownExportPastLimit() throws {
        let s = try Sandbox()
        for i in 0..<3 { try s.add("small \(i)", "--body", "text \(i)") }
        write(file: s.path("body.txt"), String(repeating: "0123456789", count: 30_000))  // 300 kB
        try s.add("big", "--body-file", s.path("body.txt"))
        try s.add("after", "--body", "text")
        mkdir(s.path("out"), 0o700)
        let target = s.path("out/new/vault")
        let r = Self.underLimit(s, blocks: 64, ["export-markdown", target])
        #expect(r.code == 1, "\(r)")
        #expect(r.stdout.isEmpty)
        #expect(
            r.stderr.hasPrefix("notes: error: cannot write \(target)/big-")
                && r.stderr.hasSuffix(
                    ": the disk is full (File too large); nothing was exported: \(target) was not made, and what was "
                        + "written of it was removed\n"),
            "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        // Neither the folder, nor the one made above it, nor the staging folder is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("out")).isEmpty)
        let whole = try s.ok("export-markdown", target)
        #expect(whole.line == "exported 5 notes to \(target)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).count == 5)
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("out/new")) == ["vault"])
    }

    @Test(
        "export-markdown into a folder that exists, stopped by a file size limit: every file as it was, nothing left"
    )
    func markdownExportIntoExistingPastLimit() throws {
        let s = try Sandbox()
        var small: [String] = []
        for i in 0..<3 { small.append(try s.add("small \(i)", "--body", "text \(i)", "--category", "Work")) }
        let big = try s.add("big", "--body", "short")
        let vault = s.path("vault")
        try s.ok("export-markdown", vault)
        /// Every entry under `folder` (hidden ones too) and its bytes.
        func contents(_ folder: String) -> [String: [UInt8]] {
            var out: [String: [UInt8]] = [:]
            for name in (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? [] {
                var st = stat()
                let path = folder + "/" + name
                guard lstat(path, &st) == 0 else { continue }
                out[name] = (st.st_mode & S_IFMT) == S_IFREG ? read(file: path) : []
            }
            return out
        }
        let before = contents(vault)
        try #require(before.count == 5, "\(before.keys.sorted())")
        // Every note edited (one retitled, so its file moves), the last one past the limit.
        for (i, id) in small.enumerated() { try s.ok("edit", id, "--body", "edited \(i)") }
        try s.ok("edit", small[0], "--title", "renamed")
        write(file: s.path("body.txt"), String(repeating: "0123456789", count: 30_000))  // 300 kB
        try s.ok("edit", big, "--body-file", s.path("body.txt"))
        let r = Self.underLimit(s, blocks: 64, ["export-markdown", vault])
        #expect(r.code == 1, "\(r)")
        #expect(
            r.stderr.hasPrefix("notes: error: cannot write \(vault)/big-")
                && r.stderr.hasSuffix("; nothing was exported: \(vault) is as it was\n"), "\(r.stderr)")
        // Before 2026-12-07 the files written before the failure were the new ones (the moved
        // note's earlier file removed), the others as they were.
        #expect(contents(vault) == before)
        #expect(try s.ok("export-markdown", vault).line == "exported 4 notes to \(vault)")
        let after = contents(vault)
        #expect(after.count == 5 && after.keys.contains { $0.hasPrefix("Work/renamed-") }, "\(after.keys.sorted())")
        let texts = after.values.map { String(decoding: $0, as: UTF8.self) }
        #expect(texts.filter { $0.contains("edited ") }.count == 3 && !texts.contains { $0.contains("text 0") })
    }

    /// Whether /dev/shm is a folder on a file system other than /tmp's, where sandboxes are.
    static let shmIsElsewhere: Bool = {
        var (shm, tmp) = (stat(), stat())
        return stat("/dev/shm", &shm) == 0 && stat("/tmp", &tmp) == 0 && shm.st_dev != tmp.st_dev
    }()

    @Test(
        "export-markdown into a folder that exists, a subfolder a link to another file system: written there",
        .enabled(if: shmIsElsewhere, "needs /dev/shm on a file system of its own"))
    func markdownExportIntoExistingAcrossFileSystems() throws {
        let s = try Sandbox()
        let id = try s.add("work note", "--body", "first", "--category", "Work")
        let vault = s.path("vault")
        try s.ok("export-markdown", vault)
        // The Work folder moved to another file system, a link to it left in its place.
        var template = Array("/dev/shm/notes-exdev-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
        let elsewhere = try #require(made)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let names = try FileManager.default.contentsOfDirectory(atPath: vault + "/Work")
        try #require(names.count == 1, "\(names)")
        let text = String(decoding: read(file: vault + "/Work/" + names[0]), as: UTF8.self)
        write(file: elsewhere + "/" + names[0], text)
        try FileManager.default.removeItem(atPath: vault + "/Work")
        try #require(symlink(elsewhere, vault + "/Work") == 0)
        try s.ok("edit", id, "--body", "second")
        // Before 2026-12-07 the rename out of the export's private folder failed (EXDEV): exit 1,
        // nothing exported.
        #expect(try s.ok("export-markdown", vault).line == "exported 1 note to \(vault)")
        #expect(String(decoding: read(file: elsewhere + "/" + names[0]), as: UTF8.self).hasSuffix("---\nsecond"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == names)
        #expect(try FileManager.default.contentsOfDirectory(atPath: vault).sorted() == ["Work"])
    }

    @Test(
        "export --output onto a full filesystem: exit 1 'the disk is full', the store untouched",
        .enabled(if: ReliabilityInputTests.canMount, "needs root with mount rights (CAP_SYS_ADMIN) for a small tmpfs"))
    func exportOntoFullFilesystem() throws {
        let s = try Sandbox()
        for i in 0..<60 { try s.add("note \(i)", "--body", String(repeating: "\(i % 10)", count: 4000)) }
        let small = s.path("small")
        mkdir(small, 0o700)
        try #require(system("mount -t tmpfs -o size=128k,mode=0700 tmpfs '\(small)'") == 0, "mount tmpfs failed")
        defer { _ = system("umount '\(small)'") }
        let r = s.run("export", "--output", small + "/export.jsonl")
        #expect(r.code == 1, "\(r)")
        #expect(r.stderr.contains("the disk is full"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: small).isEmpty)
        #expect(s.run("verify").code == 0)
    }
}
