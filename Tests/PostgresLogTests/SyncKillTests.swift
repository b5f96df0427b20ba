import Basics
import EventStore
import FoundationEssentials
import Glibc
import Notes
import PostgresFixture
import PostgresLog
import TestSupport
import Testing

/// `notes-sync`, the program `notes sync` runs, beside the test runner.
let notesSyncBinary: String? = {
    var buf = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buf, buf.count - 1)
    guard n > 0 else { return nil }
    var dir = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    while let slash = dir.lastIndex(of: "/") {
        dir = String(dir[..<slash])
        if access(dir + "/notes-sync", X_OK) == 0 { return dir + "/notes-sync" }
        if dir.isEmpty { break }
    }
    return nil
}()

private func seconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Runs `notes-sync --store STORE sync --notebook NAME [--join]` and kills it with SIGKILL after `killAfter` seconds
/// unless it has exited; returns its exit status, or nil when the kill landed.
func runSync(store: String, address: String, notebook: String, join: Bool, killAfter: Double?) throws
    -> Int32?
{
    let binary = try #require(notesSyncBinary, "notes-sync is not built beside the tests")
    var args = [binary, "--store", store, "sync", "--notebook", notebook]
    if join { args.append("--join") }
    let env = [
        "NOTES_REMOTE=" + address, "HOME=/tmp", "NOTES_ACTOR=killer@test", "PATH=/usr/bin:/bin", "NO_COLOR=1",
    ]
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var pid: pid_t = 0
    let cArgs = args.map { strdup($0) } + [nil]
    let cEnv = env.map { strdup($0) } + [nil]
    defer {
        for p in cArgs { free(p) }
        for p in cEnv { free(p) }
    }
    let rc = posix_spawn(&pid, binary, &actions, nil, cArgs, cEnv)
    try #require(rc == 0, "posix_spawn failed: \(rc)")
    let deadline = seconds() + (killAfter ?? 120)
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid { return (status >> 8) & 0xFF }
        if seconds() >= deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            if killAfter == nil { Issue.record("notes-sync ran longer than 120 s") }
            return nil
        }
        usleep(200)
    }
}

@Suite(
    "Sync killed with SIGKILL",
    .enabled(if: PostgresCluster.binDirectory != nil, clusterSkipReason), .postgresCluster)
struct SyncKillTests {
    @Test("a refused sync into a store folder that did not exist leaves no folder; a clone makes the store there")
    func refusedSyncLeavesNoFolder() throws {
        let c = try cluster()
        _ = try makeNotebook(c, 302)
        let tmp = TemporaryDirectory("notes-sync-new-store")
        let store = tmp.path + "/not/yet/store"
        // A notebook the remote does not have, without --join: refused. Before 2026-12-06 (a new
        // user's trial) the folders stayed behind, holding an empty store.
        let refused = try runSync(store: store, address: c.address(), notebook: "missing", join: false, killAfter: nil)
        #expect(refused != 0 && refused != nil)
        #expect(try directoryEntries(tmp.path).isEmpty)
        // An unreachable remote is refused before any store is opened.
        let offline = try runSync(
            store: store, address: "host=/nonexistent-socket-dir dbname=notes", notebook: "book-302", join: false,
            killAfter: nil)
        #expect(offline == 6)
        #expect(try directoryEntries(tmp.path).isEmpty)
        // Accepted: the empty notebook is cloned into a store made at the path asked for.
        #expect(try runSync(store: store, address: c.address(), notebook: "book-302", join: false, killAfter: nil) == 0)
        #expect(try directoryEntries(tmp.path + "/not/yet").map(\.name) == ["store"])
        #expect(access(store + "/data.mdb", F_OK) == 0)
    }

    @Test("a store pointed at another notebook is refused naming the notebook asked for and what to do")
    func otherNotebookNamed() throws {
        let c = try cluster()
        _ = try makeNotebook(c, 303)
        _ = try makeNotebook(c, 304)
        let a = try NotebookFixture(stem: 1)
        try a.book.add(title: "One")
        #expect(try runSync(store: a.path, address: c.address(), notebook: "book-303", join: true, killAfter: nil) == 0)
        let before = try a.book.syncState()
        let (status, message) = try runSyncForErrors(store: a.path, address: c.address(), notebook: "book-304")
        // Before 2026-12-06: "this store syncs with notebook UUID, not UUID; use another store ...".
        #expect(status == 5, "\(message)")
        #expect(
            message.hasPrefix("notes: error: this store syncs with another notebook (")
                && message.contains(#"than "book-304" ("#) && message.contains("--notebook"), "\(message)")
        #expect(message.split(separator: "\n").count == 1)
        #expect(try a.book.syncState().confirmed == before.confirmed, "nothing changed")
        // A name the remote does not have says what to do (before 2026-12-06 the refusal alone).
        let (missing, why) = try runSyncForErrors(store: a.path, address: c.address(), notebook: "book-303-typo")
        #expect(missing == 5, "\(why)")
        #expect(
            why.contains("there is no notebook named 'book-303-typo'") && why.contains("check the name")
                && why.contains("notes sync --join"), "\(why)")
        #expect(why.split(separator: "\n").count == 1)
    }

    /// A new user's trial (2026-12-08): a store cloned with --notebook was refused by every later
    /// plain `notes sync` (the default name looked up instead of the store's own notebook).
    @Test("a store that joined a notebook by name syncs with it when no name is given")
    func plainSyncAfterNamedJoin() throws {
        let c = try cluster()
        _ = try makeNotebook(c, 308)
        _ = try makeNotebook(c, 309)
        let a = try NotebookFixture(stem: 1)
        try a.book.add(title: "One")
        #expect(try runSync(store: a.path, address: c.address(), notebook: "book-308", join: true, killAfter: nil) == 0)
        try a.book.add(title: "Two")
        // No --notebook, and a HOME without a config file: no name at all.
        let (status, message) = try runSyncForErrors(store: a.path, address: c.address(), notebook: nil)
        #expect(status == 0, "\(message)")
        let state = try a.book.syncState()
        #expect(state.pending == 0 && state.confirmed == state.head, "the second note was pushed")
        // A name given that is not the store's own is still refused.
        let (other, why) = try runSyncForErrors(store: a.path, address: c.address(), notebook: "book-309")
        #expect(other == 5 && why.contains("another notebook"), "\(why)")
    }

    @Test("sync --init says how a store joins the notebook it made")
    func initSaysHowToJoin() throws {
        let c = try cluster()
        let binary = try #require(notesSyncBinary, "notes-sync is not built beside the tests")
        let tmp = TemporaryDirectory("notes-sync-init")
        let output = open(tmp.path + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let child = try ChildProcess.spawn(
            [binary, "--store", tmp.path + "/store", "sync", "--init", "--notebook", "book-305"],
            environment: ["NOTES_REMOTE=" + c.address(), "HOME=/tmp", "PATH=/usr/bin:/bin", "NO_COLOR=1"],
            standardOutput: output)
        let status = child.wait()
        close(output)
        let bytes = try #require(FileManager.default.contents(atPath: tmp.path + "/stdout"))
        let text = String(decoding: bytes, as: UTF8.self)
        // Before 2026-12-07 it named the notebook and stopped there.
        #expect(status == 0, "\(text)")
        #expect(
            text.contains(#"notebook "book-305" is "#) && text.contains("run `notes sync` from a store without notes")
                && text.contains("`notes sync --join` from one with notes"), "\(text)")
        #expect(access(tmp.path + "/store", F_OK) != 0, "--init makes no store")
    }

    /// Runs `notes-sync --store STORE sync --notebook NAME` to its end: its exit status and standard error.
    /// `notes-sync sync` (with `--notebook` when `notebook` is given), in a HOME of its own with
    /// no config file: its exit status and standard error.
    private func runSyncForErrors(store: String, address: String, notebook: String?) throws -> (Int32, String) {
        let binary = try #require(notesSyncBinary, "notes-sync is not built beside the tests")
        let tmp = TemporaryDirectory("notes-sync-errors")
        let errors = open(tmp.path + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let child = try ChildProcess.spawn(
            [binary, "--store", store, "sync"] + (notebook.map { ["--notebook", $0] } ?? []),
            environment: ["NOTES_REMOTE=" + address, "HOME=" + tmp.path, "PATH=/usr/bin:/bin", "NO_COLOR=1"],
            standardError: errors)
        let status = child.wait()
        close(errors)
        let message = try #require(FileManager.default.contents(atPath: tmp.path + "/stderr"))
        return (status, String(decoding: message, as: UTF8.self))
    }

    /// `notes-sync ARGS` in a HOME of its own, whose config file holds `config` when given, with
    /// `$NOTES_REMOTE` set to `address`: its exit status, standard output and standard error.
    private func runNotesSync(_ args: [String], address: String, config: String? = nil) throws
        -> (status: Int32, output: String, errors: String)
    {
        let binary = try #require(notesSyncBinary, "notes-sync is not built beside the tests")
        let tmp = TemporaryDirectory("notes-sync-run")
        if let config {
            try FileManager.default.createDirectory(
                atPath: tmp.path + "/.config/notes", withIntermediateDirectories: true)
            #expect(
                FileManager.default.createFile(atPath: tmp.path + "/.config/notes/config", contents: Data(config.utf8)))
        }
        let output = open(tmp.path + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let errors = open(tmp.path + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let child = try ChildProcess.spawn(
            [binary] + args,
            environment: [
                "NOTES_REMOTE=" + address, "HOME=" + tmp.path, "PATH=/usr/bin:/bin", "NO_COLOR=1",
                "NOTES_ACTOR=tester@test",
            ],
            standardOutput: output, standardError: errors)
        let status = child.wait()
        close(output)
        close(errors)
        let out = try #require(FileManager.default.contents(atPath: tmp.path + "/stdout"))
        let err = try #require(FileManager.default.contents(atPath: tmp.path + "/stderr"))
        return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// A hostile trial (2026-12-08): a remote whose stored chain digest of the device's last
    /// confirmed event was changed by hand moved that event back into the outbox, then refused
    /// ("the store's log differs"); a clone of it said the same of a store it had just made.
    @Test("a remote whose chain digest was changed by hand is refused as damaged, before any change here")
    func damagedRemoteDigestChangesNothing() throws {
        let c = try cluster()
        let book = try makeNotebook(c, 310)
        let a = try NotebookFixture(stem: 1)
        try a.book.add(title: "One")
        try a.book.add(title: "Two")
        #expect(try runSync(store: a.path, address: c.address(), notebook: "book-310", join: true, killAfter: nil) == 0)
        let before = try a.book.syncState()
        let last = before.confirmed
        let log = try PostgresEventLog(connecting: c.address())
        let stored = try #require(try log.pull(notebook: book, after: last - 1, limit: 1).first).digest
        let hex = stored.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
        try c.execute(
            """
            SET session_replication_role = replica;
            UPDATE notes_log.events SET digest = sha256(digest) WHERE notebook = '\(book)' AND position = \(last)
            """)
        let (status, message) = try runSyncForErrors(store: a.path, address: c.address(), notebook: "book-310")
        #expect(status == 5, "\(message)")
        #expect(
            message.contains("the remote log is damaged") && message.contains("position \(last)")
                && message.contains("restores it from a backup") && !message.contains("store's log differs"),
            "\(message)")
        #expect(message.split(separator: "\n").count == 1)
        let after = try a.book.syncState()
        #expect(after.confirmed == before.confirmed && after.head == before.head, "nothing changed here")
        // A clone into a new store: the remote's fault, said so, and no store is left.
        let tmp = TemporaryDirectory("notes-sync-damaged-clone")
        let (cloned, why) = try runSyncForErrors(
            store: tmp.path + "/store", address: c.address(), notebook: "book-310")
        #expect(cloned == 5, "\(why)")
        #expect(
            why.contains("the remote log is damaged") && why.contains("position \(last)")
                && !why.contains("store's log differs"), "\(why)")
        #expect(try directoryEntries(tmp.path).isEmpty)
        // Mended: the next sync finds everything as it was.
        try c.execute(
            """
            SET session_replication_role = replica;
            UPDATE notes_log.events SET digest = '\\x\(hex)' WHERE notebook = '\(book)' AND position = \(last)
            """)
        let (mended, words) = try runSyncForErrors(store: a.path, address: c.address(), notebook: "book-310")
        #expect(mended == 0, "\(words)")
        let end = try a.book.syncState()
        #expect(end.confirmed == before.confirmed && end.head == before.head && end.pending == 0)
    }

    /// A hostile trial (2026-12-08): "the remote log refused the operation: notebook UUID: role bob
    /// may read notebook 'team' but not append to it: a writer shares it with can_write".
    @Test("a reader's refused push names the notebook once, the role, what waits here and what to do")
    func readerRefusalSaysWhatToDo() throws {
        let c = try cluster()
        try makeRole(c, "ana_311", in: "notes_log_creator")
        try makeRole(c, "bob_311", in: "notes_log_user")
        let ana = try logAs(c, "ana_311")
        let book = try ana.notebook(named: "team-311", create: true)
        try ana.share(notebook: "team-311", role: "bob_311", canWrite: false)
        let b = try NotebookFixture(stem: 2)
        let address = c.address(user: "bob_311")
        #expect(try runSync(store: b.path, address: address, notebook: "team-311", join: false, killAfter: nil) == 0)
        try b.book.add(title: "Bob's")
        let (status, message) = try runSyncForErrors(store: b.path, address: address, notebook: "team-311")
        #expect(status == 5, "\(message)")
        #expect(message.split(separator: "\n").count == 1, "\(message)")
        #expect(
            message.components(separatedBy: "team-311").count == 3, "the name in the message and its advice: \(message)"
        )
        #expect(!message.contains(book.uuidString), "\(message)")
        #expect(
            message.contains("role bob_311 may read notebook") && message.contains("waits here, unpushed")
                && message.contains("notes_log.share('team-311', 'bob_311', true)"), "\(message)")
        #expect(try b.book.syncState().pending > 0, "the note waits in the outbox")
    }

    /// A hostile trial (2026-12-08): `remote show` printed the config's name ("notes"), not the
    /// notebook a store cloned with --notebook syncs with.
    @Test("remote show names the notebook the store joined, and the config's when it names another")
    func remoteShowNamesJoinedNotebook() throws {
        let c = try cluster()
        _ = try makeNotebook(c, 312)
        let a = try NotebookFixture(stem: 3)
        #expect(
            try runSync(store: a.path, address: c.address(), notebook: "book-312", join: false, killAfter: nil) == 0)
        let id = try #require(try a.book.syncState().notebook)
        let plain = try runNotesSync(["--store", a.path, "remote", "show"], address: c.address())
        #expect(plain.status == 0, "\(plain.errors)")
        #expect(plain.output.contains("notebook  book-312 (this store's, \(id.uuidString))"), "\(plain.output)")
        #expect(!plain.output.contains("notes\n"), "\(plain.output)")
        let other = try runNotesSync(
            ["--store", a.path, "remote", "show"], address: c.address(), config: "remote-notebook = book-999\n")
        #expect(other.status == 0, "\(other.errors)")
        #expect(other.output.contains("notebook  book-312 (this store's, \(id.uuidString))"), "\(other.output)")
        #expect(other.output.contains(#"the config names "book-999""#), "\(other.output)")
        let json = try runNotesSync(["--store", a.path, "remote", "show", "--json"], address: c.address())
        #expect(
            json.output.contains(#""notebook": "book-312""#) && json.output.contains(id.uuidString), "\(json.output)")
    }

    /// A hostile trial (2026-12-08): a store whose config names another notebook than the one it
    /// joined was refused by every plain `notes sync` (exit 5).
    @Test("a plain sync of a store whose config names another notebook syncs with its own, with a warning")
    func configNamingAnotherNotebook() throws {
        let c = try cluster()
        _ = try makeNotebook(c, 313)
        _ = try makeNotebook(c, 314)
        let a = try NotebookFixture(stem: 4)
        try a.book.add(title: "One")
        #expect(try runSync(store: a.path, address: c.address(), notebook: "book-313", join: true, killAfter: nil) == 0)
        try a.book.add(title: "Two")
        for config in ["remote-notebook = book-314\n", "remote-notebook = no-such-book\n"] {
            let run = try runNotesSync(["--store", a.path, "sync"], address: c.address(), config: config)
            #expect(run.status == 0, "\(run.errors)")
            let warnings = run.errors.split(separator: "\n")
            #expect(warnings.count == 1, "\(run.errors)")
            #expect(
                run.errors.hasPrefix("notes: warning: the config names notebook ")
                    && run.errors.contains("this store's, \"book-313\"")
                    && run.errors.contains("notes config unset remote-notebook"), "\(run.errors)")
        }
        let state = try a.book.syncState()
        #expect(state.pending == 0, "the second note was pushed")
        // The config naming the store's own notebook: no warning.
        let same = try runNotesSync(
            ["--store", a.path, "sync"], address: c.address(), config: "remote-notebook = book-313\n")
        #expect(same.status == 0 && same.errors.isEmpty, "\(same.errors)")
        // A name given on the command line that is not the store's own is still refused.
        let named = try runNotesSync(
            ["--store", a.path, "sync", "--notebook", "book-314"], address: c.address(),
            config: "remote-notebook = book-314\n")
        #expect(named.status == 5 && named.errors.contains("another notebook"), "\(named.errors)")
    }

    @Test("killing notes sync at random moments loses nothing, duplicates nothing; the next sync finishes")
    func killSyncAtRandomMoments() throws {
        let c = try cluster()
        _ = try makeNotebook(c, 301)
        let address = c.address()
        let name = "book-301"
        let a = try NotebookFixture(stem: 1)
        let b = try NotebookFixture(stem: 2)
        var rng = SeededGenerator(seed: 0x5EED_0301)
        // Every text a device acknowledged: (device, note, text).
        var typed: [(Int, Identifier, String)] = []
        let shared = try a.book.add(title: "Shared", body: (0..<12).map { "line \($0)\n" }.joined())
        typed.append((0, shared.id, "line 11"))
        #expect(try runSync(store: a.path, address: address, notebook: name, join: true, killAfter: nil) == 0)
        #expect(try runSync(store: b.path, address: address, notebook: name, join: false, killAfter: nil) == 0)
        var lifetime = 0.05
        var kills = 0
        let target = 36
        var round = 0
        while kills < target && round < target * 4 {
            let device = round % 2
            let f = device == 0 ? a : b
            try f.reopen()
            // Offline work on this device: a note of its own, and an edit of its own line of
            // the shared note.
            let own = "note \(round) of device \(device)"
            let n = try f.book.add(title: own, body: own + " body")
            typed.append((device, n.id, own + " body"))
            let line = "line \(device * 6 + Int(rng.next() % 6))"
            let edited = "edited in round \(round)"
            let body = try f.book.note(shared.id).body
            if body.contains(line + "\n") {
                try f.book.edit(shared.id, body: body.replacing(line + "\n", with: line + " " + edited + "\n"))
                typed.append((device, shared.id, edited))
            }
            // One sync in four runs to its end: how long they take (on a loaded machine too)
            // is the window the others are killed in.
            let delay = round % 4 == 3 ? nil : Double(rng.next() % 1000) / 1000 * lifetime
            let started = seconds()
            let status = try runSync(store: f.path, address: address, notebook: name, join: false, killAfter: delay)
            if let status {
                #expect(status == 0 || status == 4, "sync exited \(status)")
                if delay == nil { lifetime = (seconds() - started) * 1.1 }
            } else {
                kills += 1
            }
            // The store as the next command finds it: intact, and holding what was acknowledged.
            try f.reopen()
            #expect(try f.book.verify().isEmpty, "verify after round \(round)")
            for (d, id, text) in typed where d == device {
                let texts = try f.book.revisions(of: id).map(\.note.body).joined(separator: "\n")
                #expect(texts.contains(text), "\(text) lost on device \(d) after round \(round)")
            }
            round += 1
        }
        #expect(kills >= target, "only \(kills) kills landed on a running sync")
        #expect(round - kills >= 5, "some syncs ran to their end between the kills")
        print("sync kill test: \(kills) kills, \(round - kills) syncs finished, longest sync \(lifetime / 1.2) s")
        for _ in 0..<2 {
            for f in [a, b] {
                let status = try runSync(store: f.path, address: address, notebook: name, join: false, killAfter: nil)
                #expect(status == 0 || status == 4)
            }
        }
        try a.reopen()
        try b.reopen()
        let logs = try [a, b].map { f in
            try f.book.store.read { txn in
                var all: [RecordedEvent] = []
                try f.book.store.forEachEvent(from: 1, in: txn) { view in
                    all.append(view.recorded)
                    return true
                }
                return all
            }
        }
        #expect(logs[0] == logs[1], "both devices hold the same log")
        #expect(Set(logs[0].map(\.id)).count == logs[0].count, "no event twice")
        #expect(logs[0].map(\.position) == Array(1...UInt64(logs[0].count)), "gap-free")
        #expect(try a.book.syncState().pending == 0 && b.book.syncState().pending == 0)
        for (_, id, text) in typed {
            let texts = try a.book.revisions(of: id).map(\.note.body).joined(separator: "\n")
            #expect(texts.contains(text), "\(text) is in the shared log")
        }
    }

    @Test("a large clone killed at random moments leaves the store empty; the next sync clones it whole")
    func killLargeClone() throws {
        let total = Notebook.syncChunk + 2_000
        let source = try Device(stem: 3, notebook: 302)
        try source.pushWorkload(events: total)
        let address = try cluster().address()
        var rng = SeededGenerator(seed: 0x5EED_0302)
        // The first clone runs to its end: how long it takes is the window the kills land in.
        let whole = try NotebookFixture(stem: 4)
        let started = seconds()
        #expect(
            try runSync(store: whole.path, address: address, notebook: "book-302", join: false, killAfter: nil) == 0)
        let lifetime = seconds() - started
        try whole.reopen()
        #expect(try whole.book.syncState().confirmed == UInt64(total))
        var kills = 0
        var killed: NotebookFixture?
        // Up to twelve tries for three kills that land on a running clone: on a loaded machine a
        // clone may end sooner than the first took (found failing with five tries).
        for _ in 0..<12 where kills < 3 {
            let f = try NotebookFixture(stem: 5)
            let delay = Double(rng.next() % 800) / 1000 * lifetime
            let status = try runSync(
                store: f.path, address: address, notebook: "book-302", join: false, killAfter: delay)
            try f.reopen()
            let head = try f.book.syncState().head
            if status == nil {
                // All or nothing: a kill after the clone's one commit (while the process ends)
                // leaves the whole clone.
                #expect(head == 0 || head == UInt64(total), "a killed clone leaves nothing or all, not \(head) events")
                if head == 0 {
                    kills += 1
                    killed = f
                }
            } else {
                #expect(status == 0 && head == UInt64(total))
            }
            #expect(try f.book.verify().isEmpty)
        }
        #expect(kills >= 3, "only \(kills) kills landed on a running clone")
        let f = try #require(killed)
        #expect(try runSync(store: f.path, address: address, notebook: "book-302", join: false, killAfter: nil) == 0)
        try f.reopen()
        #expect(try f.book.syncState().confirmed == UInt64(total))
        #expect(try f.book.verify().isEmpty)
    }
}
