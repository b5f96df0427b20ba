import Foundation
import Glibc
import Testing

/// The sync commands that need no server: the remote setting, its refusals and the exit codes
/// of a sync that cannot start. Syncs against a real PostgreSQL are in PostgresLogTests.
@Suite("CLI: remote, sync and conflicts without a server")
struct CLISyncTests {
    @Test("remote set, show and unset write the config; $NOTES_REMOTE overrides it")
    func remoteSetting() throws {
        let s = try Sandbox()
        #expect(s.run("remote", "show").code == 3, "no remote yet")
        try s.ok("remote", "set", "host=db.example dbname=notes sslmode=verify-full", "--notebook", "team")
        let shown = try s.ok("remote", "show").stdout
        #expect(shown.contains("host=db.example dbname=notes sslmode=verify-full  (config)"))
        #expect(shown.contains("notebook  team"))
        let json = try s.object("remote", "show")
        #expect(json["notebook"] as? String == "team" && json["from"] as? String == "config")
        let env = s.run("remote", "show", env: ["NOTES_REMOTE": "service=other"])
        #expect(env.code == 0 && env.stdout.contains("service=other  ($NOTES_REMOTE)"))
        #expect(try s.ok("remote", "unset").stdout.hasPrefix("remote removed from "))
        #expect(s.run("remote", "show").code == 3)
        // Nothing to remove is said so, not "removed".
        #expect(try s.ok("remote", "unset").stdout.hasPrefix("no remote was set in "))
    }

    @Test(
        "an empty remote address is refused with the forms it takes and how to have none; a bad one in the file is unset"
    )
    func emptyRemoteAddress() throws {
        let s = try Sandbox()
        // Before 2026-12-07: `remote must be a connection string, not ""`, nothing more.
        CLIErrorTests.expectFailure(
            s.run("remote", "set", ""), 2,
            mentioning: #"the address is empty: give a libpq connection string (`notes remote set "host=db.example "#
                + #"dbname=notes"`) or URI (`notes remote set postgresql://ana@db.example/notes`); "#
                + "to forget the remote, `notes remote unset`")
        #expect(!fileExists(s.configFile), "nothing was written")
        CLIErrorTests.expectFailure(
            s.run("config", "set", "remote", " "), 2,
            mentioning: "remote must be a libpq connection string (host=db.example dbname=notes) or URI "
                + #"(postgresql://ana@db.example/notes), not ""; to have no remote, `notes remote unset` removes it"#)
        // An empty remote in the file: each command names the line, and `remote unset`, which
        // the error names, removes it (before 2026-12-07 it failed on that line too).
        try s.ok("config", "set", "sort", "title")
        write(file: s.configFile, "sort = title\nremote =\n")
        CLIErrorTests.expectFailure(
            s.run("list"), 2, mentioning: "\(s.configFile):2: remote must be a libpq connection string")
        #expect(s.run("list").stderr.hasSuffix(#", not ""; to have no remote, `notes remote unset` removes it"# + "\n"))
        #expect(try s.ok("remote", "unset").stdout.hasPrefix("remote removed from "))
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "sort = title\n")
        write(file: s.configFile, "remote =\n")
        try s.ok("remote", "set", "service=notes")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "remote = service=notes\n")
    }

    @Test("a bad remote-notebook line is named with its repairs, and remote set --notebook and remote unset replace it")
    func badRemoteNotebookLine() throws {
        let s = try Sandbox()
        try s.ok("config", "set", "sort", "title")
        write(file: s.configFile, "sort = title\nremote = service=old\nremote-notebook =\n")
        // Every command names the line and both repairs.
        CLIErrorTests.expectFailure(
            s.run("list"), 2,
            mentioning: "\(s.configFile):3: remote-notebook must be a name, not \"\"; `notes remote set ADDRESS "
                + "--notebook NAME` replaces the line, `notes config unset remote-notebook` removes it")
        // Without --notebook the line stays, so the command refuses it and writes nothing.
        CLIErrorTests.expectFailure(s.run("remote", "set", "service=notes"), 2, mentioning: ":3: remote-notebook")
        #expect(
            String(decoding: read(file: s.configFile), as: UTF8.self)
                == "sort = title\nremote = service=old\nremote-notebook =\n")
        // Before 2026-12-07 this failed on line 3 as `list` does: only `config unset` repaired it.
        #expect(try s.ok("remote", "set", "service=notes", "--notebook", "team").stdout.hasPrefix("remote set in "))
        #expect(
            String(decoding: read(file: s.configFile), as: UTF8.self)
                == "sort = title\nremote = service=notes\nremote-notebook = team\n")
        #expect(try s.ok("remote", "show").stdout.contains("notebook  team"))
        // A bad remote and a bad notebook at once, both replaced by one command.
        write(file: s.configFile, "remote =\nremote-notebook = \t\nsort = title\n")
        try s.ok("remote", "set", "service=notes", "--notebook", "team")
        #expect(
            String(decoding: read(file: s.configFile), as: UTF8.self)
                == "sort = title\nremote = service=notes\nremote-notebook = team\n")
        // `remote unset` removes a bad notebook line too.
        write(file: s.configFile, "sort = title\nremote-notebook =\n")
        #expect(try s.ok("remote", "unset").stdout.hasPrefix("remote removed from "))
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "sort = title\n")
    }

    @Test("an address holding a password is refused, in `remote set` and in the config file")
    func noPasswordInConfig() throws {
        let s = try Sandbox()
        for address in [
            "host=db password=secret", "postgresql://ana:secret@db.example/notes", "host=db password = secret",
            "postgresql://db/notes?pass%77ord=secret", "dbname=postgresql://ana:secret@db/notes",
            "postgresql://ana:se?cret@db/notes", "postgresql://ana:sec/ret@db/notes",
        ] {
            let r = s.run("remote", "set", address)
            #expect(r.code == 2 && r.stderr.contains("never in the config"), "\(r.stderr)")
        }
        try s.ok("remote", "set", "postgresql://ana@db.example/notes")
        #expect(try s.ok("config", "get", "remote").stdout == "postgresql://ana@db.example/notes\n")
    }

    @Test(
        "settings are one line (a line break cannot add a key), notebook names are checked before any connection, a linked config file is written where it leads, and no password is shown"
    )
    func settingsRefusals() throws {
        let s = try Sandbox()
        for args in [
            ["remote", "set", "host=/x dbname=notes\nstore = /tmp/hijacked"],
            ["config", "set", "editor", "vi\nstore = /x"],
            ["remote", "set", "host=/x", "--notebook", "   "], ["remote", "set", "host=/x", "--notebook", "a\tb"],
            ["remote", "set", "host=/x", "--notebook", String(repeating: "n", count: 201)],
            // 150 characters, 300 code points: the remote counts code points.
            ["remote", "set", "host=/x", "--notebook", String(repeating: "e\u{0301}", count: 150)],
        ] {
            let r = s.run(args)
            #expect(r.code == 2 && r.stderr.split(separator: "\n").count == 1, "\(args): \(r)")
        }
        #expect(!fileExists(s.configFile), "nothing was written")
        // What is not a connection string at all is refused when set, not only at the next sync
        // (a new-user trial); what libpq reads is taken.
        for (address, why) in [
            ("not a conn string ===", #"no "=" after "not""#), ("host=/x =db", #""=" without a keyword"#),
            ("dbname='my db", "not closed"), ("host", #"no "=" after "host""#),
        ] {
            let r = s.run("remote", "set", address)
            #expect(r.code == 2 && r.stderr.contains(why) && r.stderr.contains("libpq"), "\(address): \(r)")
        }
        #expect(!fileExists(s.configFile), "nothing was written")
        let fresh = try Sandbox()
        for address in [
            "host = /x  port= 5432 dbname =notes", "dbname='my \\' db' host=/x", "service=notes", "host=a\\ b",
            "host=/x dbname=a\\",
            "postgres://db.example/notes?sslmode=require",
        ] {
            #expect(fresh.run("remote", "set", address).code == 0, "\(address)")
        }
        let empty = s.run("sync", "--notebook", " ", env: ["NOTES_REMOTE": "host=/nonexistent-socket-dir"])
        #expect(empty.code == 2 && empty.stderr.contains("notebook must be a name"), "\(empty)")
        // A config file that is a link to a dotfiles folder stays one.
        let dotfile = s.path("dotfiles-config")
        write(file: dotfile, "sort = title\n")
        mkdir(s.root + "/config/notes", 0o700)
        symlink(dotfile, s.configFile)
        try s.ok("remote", "set", "host=/x")
        var st = stat()
        #expect(lstat(s.configFile, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        #expect(String(decoding: read(file: dotfile), as: UTF8.self) == "sort = title\nremote = host=/x\n")
        // A link that leads nowhere is refused, and left as it is.
        let other = try Sandbox()
        mkdir(other.root + "/config/notes", 0o700)
        symlink(other.path("dotfiles/missing"), other.configFile)
        let dangling = other.run("remote", "set", "host=/x")
        #expect(dangling.code == 2 && dangling.stderr.contains("leads nowhere"), "\(dangling)")
        #expect(lstat(other.configFile, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        let shown = try s.ok("remote", "show", env: ["NOTES_REMOTE": "postgresql://ana:hunter2@db/notes"]).stdout
        #expect(!shown.contains("hunter2") && shown.contains("ana:***@db"), "\(shown)")
        // The whole value, whatever its form: libpq takes a double quote as part of it, and a
        // backslash-escaped space does not end it.
        for (address, secret) in [
            (#"host=x password="pw1""#, "pw1"), (#"host=x password=a\ bsecret"#, "bsecret"),
            (#"host=x password='a\'b c' dbname=n"#, "b c"),
        ] {
            let r = try s.ok("remote", "show", env: ["NOTES_REMOTE": address])
            #expect(!r.stdout.contains(secret) && r.stdout.contains("password=***"), "\(r.stdout)")
            let json = try s.ok("remote", "show", "--json", env: ["NOTES_REMOTE": address])
            #expect(!json.stdout.contains(secret), "\(json.stdout)")
        }
    }

    @Test("with a remote, a body is at most half of what the remote holds of one event, whatever body-limit says")
    func bodyLimitWithRemote() throws {
        let s = try Sandbox()
        let file = s.path("big.txt")
        // 9 MB: under the limit asked for, over what the remote could take as one side of a conflict.
        write(file: file, String(repeating: "a line of the big note\n", count: 9_000_000 / 23))
        let remote: [String: String?] = [
            "NOTES_REMOTE": "host=/nonexistent-socket-dir", "NOTES_BODY_LIMIT": "20000000",
        ]
        let refused = s.run(["add", "Big", "--body-file", file], env: remote)
        #expect(refused.code == 2 && refused.stderr.contains("8323072"), "\(refused)")
        // Without a remote, the limit is the one asked for (and the refused note was not added).
        try s.ok("add", "Big", "--body-file", file, env: ["NOTES_BODY_LIMIT": "20000000"])
        #expect(try s.titles() == ["Big"])
    }

    @Test("show --json and list --json say whether a note holds a conflict (null when it does not)")
    func conflictInJSON() throws {
        let s = try Sandbox()
        let id = try s.add("Plan", "--body", "x")
        #expect(try s.object("show", id)["conflict"] is NSNull)
        let full = try #require(try s.object("show", id)["id"] as? String)
        // The flag a sync's rebase sets, brought in as an event line.
        let line =
            #"{"eventId":"00000000-0000-4000-8000-0000000000a1","stream":"note/\#(full)","version":2,"type":"NotePropertySet","schemaVersion":1,"recordedAt":"2026-11-29T12:00:00Z","metadata":{"actor":"a"},"data":{"key":"conflict","value":"both changed line 1"}}"#
        write(file: s.path("flag.jsonl"), line + "\n")
        try s.ok("import", s.path("flag.jsonl"))
        #expect(try s.object("show", id)["conflict"] as? String == "both changed line 1")
        #expect(try s.ok("list", "--json").array().first?["conflict"] as? String == "both changed line 1")
    }

    @Test("sync without a remote is a usage error; an unreachable remote exits 6 and keeps the outbox")
    func syncExitCodes() throws {
        let s = try Sandbox()
        _ = try s.add("Offline note")
        let none = s.run("sync")
        #expect(none.code == 2 && none.stderr.contains("notes remote set"), "\(none.stderr)")
        let unreachable = s.run(
            "sync", "--join", env: ["NOTES_REMOTE": "host=/nonexistent-socket-dir dbname=notes connect_timeout=2"])
        #expect(unreachable.code == 6, "\(unreachable.stderr)")
        #expect(unreachable.stderr.contains("outbox is kept"))
        #expect(try s.titles() == ["Offline note"])
        // Where nothing waits to be pushed (no store yet, or --init), no outbox is said to be kept
        // (before 2026-12-06 it was).
        let fresh = try Sandbox()
        let offline: [String: String?] = ["NOTES_REMOTE": "host=/nonexistent-socket-dir dbname=notes"]
        for args in [["sync"], ["sync", "--join"], ["sync", "--init"]] {
            let r = fresh.run(args, env: offline)
            #expect(r.code == 6 && !r.stderr.contains("outbox") && r.stderr.contains("nothing was changed"), "\(r)")
        }
        #expect(!fileExists(fresh.store))
        // An address that is not one, from $NOTES_REMOTE or the config file, is refused as `remote
        // set` refuses it, and a value libpq refuses is the address's fault: exit 2, not 6 "check
        // the network" (before 2026-12-06; a new user's trial).
        for (address, words) in [
            ("garbage", #"the address in $NOTES_REMOTE has no "=" after "garbage""#),
            // Only spaces: libpq took them for a database's name, and the sync said it could not
            // reach "database   ", exit 6 (before trial-s31).
            ("   ", #"the address in $NOTES_REMOTE is blank"#),
            ("host=/nonexistent-socket-dir sslmode=bogus", #"not valid (invalid sslmode value: "bogus")"#),
            ("host=/nonexistent-socket-dir port=abc", "not valid (invalid integer value"),
        ] {
            let r = s.run("sync", "--join", env: ["NOTES_REMOTE": address])
            #expect(r.code == 2 && r.stderr.contains(words), "\(address): \(r)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        mkdir(s.root + "/config/notes", 0o700)
        write(file: s.configFile, "remote = garbage\n")
        let fromConfig = s.run("sync", "--join")
        #expect(fromConfig.code == 2 && fromConfig.stderr.contains("the address in the config has no"), "\(fromConfig)")
        unlink(s.configFile)
        // --init and --join at once: refused, not --init alone.
        let both = s.run("sync", "--init", "--join", env: ["NOTES_REMOTE": "host=/nonexistent-socket-dir"])
        #expect(both.code == 2 && both.stderr.contains("two steps"), "\(both)")
        #expect(try s.titles() == ["Offline note"])
        let stats = try s.ok("stats", "--json", env: ["NOTES_REMOTE": "host=/nonexistent-socket-dir"]).object()
        let sync = try #require(stats["sync"] as? [String: Any])
        #expect(sync["outbox"] as? Int == 1 && sync["remotePosition"] as? Int == 0)
    }

    @Test(
        "with a remote set, versions not pushed yet are marked: v1* in show and history, (not synced) in list, pending in JSON"
    )
    func pendingMarks() throws {
        let s = try Sandbox()
        let id = try s.add("Not pushed")
        #expect(!(try s.ok("show", id).stdout.contains("v1*")), "no remote: no mark")
        let remote: [String: String?] = ["NOTES_REMOTE": "host=/nonexistent-socket-dir"]
        #expect(try s.ok("show", id, env: remote).stdout.contains("v1*"))
        #expect(try s.ok("history", id, env: remote).stdout.hasPrefix("v1*"))
        #expect(try s.ok("show", id, "--json", env: remote).object()["pending"] as? Bool == true)
        #expect(try s.ok("show", id, "--json").object()["pending"] == nil)
        #expect(try s.ok("list", env: remote).stdout.contains("(not synced)"))
        #expect(!(try s.ok("list").stdout.contains("(not synced)")), "no remote: no mark")
        #expect(try s.ok("list", "--json", env: remote).array().first?["pending"] as? Bool == true)
        #expect(try s.ok("list", "--json").array().first?["pending"] == nil)
        // A past listing that holds the version marks it too, as `show --at` does (before
        // 2026-12-07 `list --as-of` showed versions of the outbox as if the remote held them).
        #expect(try s.ok("show", id, "--at", "now", "--json", env: remote).object()["pending"] as? Bool == true)
        for order in [["--as-of", "now"], ["--as-of", "now", "--sort", "title"]] {
            #expect(s.run(["list"] + order, env: remote).stdout.contains("(not synced)"), "\(order)")
            #expect(try s.run(["list", "--json"] + order, env: remote).array().first?["pending"] as? Bool == true)
            #expect(!s.run(["list"] + order).stdout.contains("(not synced)"), "no remote: no mark")
        }
    }

    @Test("conflicts lists none in a store that never synced")
    func noConflicts() throws {
        let s = try Sandbox()
        _ = try s.add("A note")
        #expect(try s.ok("conflicts").stdout == "no conflicts\n")
        #expect(try s.ok("conflicts", "--json").stdout.hasPrefix("["))
    }
}
