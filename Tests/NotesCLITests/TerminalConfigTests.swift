import Foundation
import Testing

/// Issue 10's configuration: `notes config`, errors naming the key and the line, and the
/// documented precedence flag > environment > config file > default.
@Suite("Terminal: configuration")
struct TerminalConfigTests {
    @Test("config set, get, list and unset edit the file under XDG_CONFIG_HOME, keeping other lines")
    func configCommands() throws {
        let s = try Sandbox()
        let empty = try s.ok("config", "list")
        #expect(empty.lines.first == "# \(s.configFile)")
        #expect(empty.lines.contains { $0.hasPrefix("# sort:") })
        CLIErrorTests.expectFailure(s.run("config", "get", "sort"), 3, mentioning: "not set")

        try s.ok("config", "set", "sort", "title")
        #expect(try s.ok("config", "get", "sort").line == "title")
        write(file: s.configFile, "# my settings\n" + String(decoding: read(file: s.configFile), as: UTF8.self))
        try s.ok("config", "set", "body-limit", "2048")
        try s.ok("config", "set", "sort", "created")
        let text = String(decoding: read(file: s.configFile), as: UTF8.self)
        #expect(text == "# my settings\nbody-limit = 2048\nsort = created\n", "\(text)")
        #expect(try s.ok("config", "list").lines.contains("sort = created"))

        let json = try s.ok("config", "list", "--json").object()
        #expect(json["sort"] as? String == "created" && json["body-limit"] as? String == "2048")
        #expect(json["store"] is NSNull && json["pager"] is NSNull)
        #expect(Set(json.keys).isSuperset(of: ["store", "editor", "pager", "sort", "color", "body-limit"]))

        try s.ok("config", "unset", "sort")
        CLIErrorTests.expectFailure(s.run("config", "get", "sort"), 3, mentioning: "not set")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "# my settings\nbody-limit = 2048\n")

        CLIErrorTests.expectFailure(s.run("config", "set", "sortt", "title"), 2, mentioning: "did you mean \"sort\"")
        CLIErrorTests.expectFailure(s.run("config", "set", "sort", "size"), 2, mentioning: "updated, created or title")
        CLIErrorTests.expectFailure(s.run("config", "set", "body-limit", "0"), 2, mentioning: "positive")
        CLIErrorTests.expectFailure(s.run("config", "set", "color", "always"), 2, mentioning: "auto or never")
        CLIErrorTests.expectFailure(s.run("config", "get", "colour"), 2, mentioning: "colour")
        CLIErrorTests.expectFailure(s.run("config", "set", "sort"), 2, mentioning: "usage")
        CLIErrorTests.expectFailure(s.run("config", "frob"), 2, mentioning: "list, get, set or unset")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "# my settings\nbody-limit = 2048\n")
    }

    @Test("config set of five keys at once keeps all five: each command that reported a setting set finds it")
    func concurrentSets() throws {
        let s = try Sandbox()
        let settings = [
            ("editor", "vim"), ("pager", "less"), ("sort", "title"), ("color", "never"), ("body-limit", "2000000"),
        ]
        // Before 2026-12-06 each rewrote the whole file from what it had read, and nearly every
        // round lost some of the five.
        for round in 1...5 {
            let processes = try settings.map { key, value in
                try KillableNotes(s, ["config", "set", key, value], tag: "set-\(round)-\(key)")
            }
            for p in processes { #expect(p.finish() == 0, "\(p.stderr)") }
            let config = String(decoding: read(file: s.configFile), as: UTF8.self)
            for (key, value) in settings {
                #expect(config.contains("\(key) = \(value)\n"), "round \(round): \(key) lost:\n\(config)")
            }
            unlink(s.configFile)
        }
    }

    @Test("a bad config file line is an error naming the file, the line number and the key")
    func fileErrors() throws {
        let s = try Sandbox()
        try s.ok("config", "set", "color", "auto")
        let cases: [(String, String)] = [
            ("# comment\n\nsortt = title\nsort = size\n", "\(s.configFile):4: sort must be updated, created or title"),
            ("color = auto\nsort = size\n", "\(s.configFile):2: sort must be updated, created or title, not \"size\""),
            ("  body-limit = lots  \n", "\(s.configFile):1: body-limit must be a positive number of bytes"),
            ("store\n", "\(s.configFile):1: expected `key = value`"),
            (
                "color = never\n# later\ncolor = auto\n",
                "\(s.configFile):3: color is set on line 1 too; keep one of the two lines"
            ),
        ]
        for (text, message) in cases {
            write(file: s.configFile, text)
            for args in [["list"], ["add", "X"], ["config", "list"]] {
                CLIErrorTests.expectFailure(s.run(args), 2, mentioning: message)
            }
        }
        // A key set twice: setting or unsetting it writes it once.
        write(file: s.configFile, "color = never\ncolor = auto\n")
        try s.ok("config", "set", "color", "never")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "color = never\n")
        write(file: s.configFile, "color = never\ncolor = bogus\n")
        try s.ok("config", "unset", "color")
        #expect(try s.ok("config", "list").stdout.contains("# color:"))
        write(file: s.configFile, "# only comments and blanks\n\n   \n\tsort = title\n")
        #expect(s.run("list").code == 3, "a valid file: the store simply does not exist yet")
        // Written on another system: a byte-order mark and CRLF line endings.
        write(file: s.configFile, "\u{FEFF}# from Windows\r\nsort = title\r\ncolor = never\r\n")
        #expect(s.run("list").code == 3, "a valid file: the store simply does not exist yet")
        #expect(try s.ok("config", "get", "sort").line == "title")
        write(file: s.configFile, "sort = size\r\n")
        CLIErrorTests.expectFailure(
            s.run("list"), 2, mentioning: "\(s.configFile):1: sort must be updated, created or title, not \"size\"")
    }

    @Test("an unknown key in the file (a typo) is removed by `config unset KEY`, which its warning names")
    func unknownKeyUnset() throws {
        let s = try Sandbox()
        // Before 2026-12-06 every command refused the file, `config unset colour` and
        // `config set color never` too: only an editor could repair it.
        try s.ok("config", "set", "sort", "title")
        write(file: s.configFile, "sort = title\ncolour = never\n")
        #expect(
            try s.ok("config", "get", "sort").stderr
                == "notes: warning: \(s.configFile):2: unknown key \"colour\" ignored (a newer version of notes may "
                + "know it); did you mean \"color\"? `notes config unset colour` removes the line\n")
        // The key being removed is not warned about.
        #expect(try s.ok("config", "unset", "colour").stderr == "")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "sort = title\n")
        // Two typos: each unset takes one, the other line kept (and still warned about).
        write(file: s.configFile, "pagr = less\nsort = title\ncolr = never\n")
        let unset = try s.ok("config", "unset", "colr")
        #expect(unset.stderr.contains("unknown key \"pagr\"") && !unset.stderr.contains("colr"), "\(unset.stderr)")
        #expect(try s.ok("config", "list").stderr.contains(":1: unknown key \"pagr\" ignored"))
        try s.ok("config", "unset", "pagr")
        #expect(try s.ok("config", "get", "sort").line == "title")
        // A key neither known nor in the file is still an unknown setting, and nothing is written.
        CLIErrorTests.expectFailure(s.run("config", "unset", "colour"), 2, mentioning: "unknown setting \"colour\"")
        CLIErrorTests.expectFailure(s.run("config", "set", "colour", "never"), 2, mentioning: "unknown setting")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "sort = title\n")
    }

    @Test("a key only a newer version knows is a one-line warning naming the file and line, and every command runs")
    func unknownKeyIsWarned() throws {
        let s = try Sandbox()
        try s.ok("config", "set", "sort", "title")
        // As a newer `notes` may write it: before 2026-12-07 every command, exit 2, `unknown key`,
        // so a user who tried a newer version and went back was locked out.
        write(file: s.configFile, "sort = title\nsearch-synonyms = on\n")
        let warning =
            "notes: warning: \(s.configFile):2: unknown key \"search-synonyms\" ignored (a newer version of notes "
            + "may know it); `notes config unset search-synonyms` removes the line\n"
        let added = s.run("add", "Beta", "--body", "b")
        #expect(added.code == 0 && added.stderr == warning, "\(added)")
        try s.ok("add", "Alpha", "--body", "a")
        let list = s.run("list")
        #expect(list.code == 0 && list.stderr == warning, "\(list)")
        #expect(list.lines.first { $0.contains("Alpha") } != nil)
        // The file's other settings hold: sorted by title, Alpha first.
        #expect(list.lines.firstIndex { $0.contains("Alpha") }! < list.lines.firstIndex { $0.contains("Beta") }!)
        // JSON on stdout stays JSON; the warning is on stderr alone, without color.
        let json = s.run("list", "--json", env: ["NO_COLOR": "1"])
        #expect(json.code == 0 && json.stderr == warning && json.stdout.hasPrefix("["), "\(json)")
        #expect(!json.stderr.contains("\u{1B}"))
        #expect(try s.ok("config", "get", "sort").line == "title")
        // A bad value of a known key is still refused, whatever unknown lines are beside it.
        write(file: s.configFile, "search-synonyms = on\nsort = size\n")
        CLIErrorTests.expectFailure(
            s.run("list"), 2, mentioning: "\(s.configFile):2: sort must be updated, created or title, not \"size\"")
        // Setting a known key keeps the unknown line as it is; unsetting it removes it.
        write(file: s.configFile, "search-synonyms = on\n")
        #expect(try s.ok("config", "set", "color", "never").stderr == warning.replacing(":2:", with: ":1:"))
        #expect(
            String(decoding: read(file: s.configFile), as: UTF8.self) == "search-synonyms = on\ncolor = never\n")
        try s.ok("config", "unset", "search-synonyms")
        #expect(try s.ok("list").stderr == "")
    }

    @Test("an unknown key's warning names a `config unset` that a shell gives back as the key: empty, controls, quotes")
    func unknownKeyRemedyIsTypable() throws {
        let s = try Sandbox()
        try s.add("Note")
        try s.ok("config", "set", "sort", "title")
        // Before 2026-12-07 the empty key's remedy was "`notes config unset ` removes the line" and
        // a control's was shown by its picture (`'col␛or'`), which, typed, named another key.
        write(file: s.configFile, " = never\ncol\u{1B}or = never\nit's\u{85} = 1\nsort = title\nit's = 2\n")
        let list = s.run("list")
        #expect(list.code == 0, "\(list)")
        for remedy in [
            "`notes config unset ''`", "`notes config unset $'col\\x1bor'`", "`notes config unset $'it\\'s\\xc2\\x85'`",
            "`notes config unset 'it'\\''s'`",
        ] {
            #expect(list.stderr.contains(remedy + " removes the line"), "\(remedy): \(list.stderr)")
        }
        // What the shell gives for each (bash, zsh: `$'...'` decodes `\x1b`) removes its line alone.
        for key in ["", "col\u{1B}or", "it's\u{85}", "it's"] { try s.ok("config", "unset", key) }
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "sort = title\n")
        #expect(try s.ok("list").stderr == "")
        // A NUL cannot be an argument: the warning says to use an editor (before 2026-12-07,
        // `$'col\x00or'`, which a shell cuts to `col`).
        write(file: s.configFile, "col\u{0}or = x\n")
        let nul = s.run("list")
        #expect(nul.code == 0 && nul.stderr.hasSuffix("which no command line can give: remove the line in an editor\n"))
    }

    @Test("unknown keys are warned about once per key, the first five by name, whatever the lines that hold them")
    func unknownKeysWarnedPerKey() throws {
        let s = try Sandbox()
        try s.add("Note")
        try s.ok("config", "set", "sort", "title")
        // Before 2026-12-07 each line was a warning: a key on 1,000 lines made every command
        // print 1,000 of them.
        let junk = (1...1000).map { "k\($0 % 8) = \($0)\n" }.joined()
        write(file: s.configFile, "colour = a\nsort = title\ncolour = b\n" + junk)
        let list = s.run("list")
        #expect(list.code == 0 && list.stdout.contains("Note"), "\(list)")
        let head = "notes: warning: " + s.configFile
        let tail = " ignored (a newer version of notes may know it); "
        var expected: [String] = [
            head + ":1: unknown key \"colour\" (on line 3 too)" + tail + "did you mean \"color\"? "
                + "`notes config unset colour` removes the lines"
        ]
        for (k, line, last) in [(1, 4, 996), (2, 5, 997), (3, 6, 998), (4, 7, 999)] {
            let key: String = "k\(k)"
            let first: String = head + ":\(line): unknown key \"\(key)\" (on 124 more lines too, the last \(last))"
            expected.append(first + tail + "`notes config unset \(key)` removes the lines")
        }
        expected.append(
            head + ":8: 4 more unknown keys ignored, on 500 lines from this one on; "
                + "`notes config list` shows the keys this version knows")
        #expect(list.stderr.split(separator: "\n").map(String.init) == expected, "\(list.stderr)")
        try s.ok("config", "unset", "colour")
        #expect(!String(decoding: read(file: s.configFile), as: UTF8.self).contains("colour"), "every line of it")
    }

    @Test("set and unset cycles leave no blank lines: the last line removed leaves an empty file")
    func setUnsetCycles() throws {
        let s = try Sandbox()
        for _ in 1...3 {
            try s.ok("remote", "set", "service=notes")
            #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "remote = service=notes\n")
            try s.ok("remote", "unset")
            // Before 2026-12-07 a file of one empty line ("\n"), and the next set wrote after it.
            #expect(read(file: s.configFile).isEmpty)
        }
        try s.ok("config", "set", "sort", "title")
        for _ in 1...3 {
            try s.ok("config", "set", "color", "never")
            try s.ok("config", "unset", "color")
            #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "sort = title\n")
        }
        // Blank lines a user left between settings stay; those at the end go.
        write(file: s.configFile, "# mine\n\nsort = title\n\n\n")
        try s.ok("config", "set", "color", "never")
        #expect(
            String(decoding: read(file: s.configFile), as: UTF8.self) == "# mine\n\nsort = title\ncolor = never\n")
        try s.ok("config", "unset", "color")
        try s.ok("config", "unset", "sort")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "# mine\n")
        // A file an older version left as one blank line is set without it.
        write(file: s.configFile, "\n")
        try s.ok("remote", "set", "service=notes")
        #expect(String(decoding: read(file: s.configFile), as: UTF8.self) == "remote = service=notes\n")
    }

    @Test("a config file over 1 MiB is refused with what to do, by every command, and left as it is")
    func configFileTooLarge() throws {
        let s = try Sandbox()
        try s.ok("config", "set", "sort", "title")
        let big = "sort = title\n" + String(repeating: "# a log written to the wrong path\n", count: 33_000)
        write(file: s.configFile, big)
        // Before 2026-12-07: "config file PATH is over 1048576 bytes, the limit", and no remedy.
        for args in [
            ["list"], ["config", "set", "color", "never"], ["config", "unset", "sort"], ["remote", "unset"],
        ] {
            CLIErrorTests.expectFailure(
                s.run(args), 2,
                mentioning: "the config file \(s.configFile) is \(big.utf8.count) bytes, over 1 MiB, the most it may "
                    + "be: it holds a few `key = value` lines; move it aside (mv \(s.configFile) \(s.configFile).old) "
                    + "and set what you need again with `notes config set KEY VALUE`")
        }
        #expect(read(file: s.configFile).count == big.utf8.count, "the file is left as it was")
        // As it says: moved aside, the settings are set again.
        #expect(rename(s.configFile, s.configFile + ".old") == 0)
        try s.ok("config", "set", "sort", "title")
        #expect(try s.ok("config", "get", "sort").line == "title")
    }

    @Test("the store: --store > NOTES_STORE > config store > XDG_DATA_HOME > HOME")
    func storePrecedence() throws {
        let s = try Sandbox()
        let flag = s.path("flag-store")
        let env = s.path("env-store")
        let config = s.path("config-store")
        try s.ok("config", "set", "store", config)
        func store(_ args: [String], _ e: [String: String?]) throws -> String {
            let r = s.run(args + ["stats", "--json"], env: e)
            try #require(r.code == 0, "\(r)")
            return try #require(try r.object()["store"] as? String)
        }
        try s.ok("add", "seed", "--store", flag)
        try s.ok("add", "seed", "--store", env)
        try s.ok("add", "seed", "--store", config)
        try s.ok("add", "seed", "--store", s.path("data/notes"))
        try s.ok("add", "seed", "--store", s.path("home/.local/share/notes"))
        #expect(try store(["--store", flag], ["NOTES_STORE": env]) == flag)
        #expect(try store([], ["NOTES_STORE": env]) == env)
        #expect(try store([], ["NOTES_STORE": nil]) == config)
        try s.ok("config", "unset", "store")
        #expect(try store([], ["NOTES_STORE": nil]) == s.path("data/notes"))
        #expect(try store([], ["NOTES_STORE": nil, "XDG_DATA_HOME": nil]) == s.path("home/.local/share/notes"))
    }

    @Test(
        "a store path starting with ~ is in HOME (config file, NOTES_STORE, --store); a relative one in the config file is refused, exit 2"
    )
    func storeHomeAndRelativePaths() throws {
        let s = try Sandbox()
        let home = s.path("home/mynotes")
        try s.ok("add", "seed", "--store", home)
        mkdir(s.path("config/notes"), 0o700)
        // Only commands that read: before the fix they looked for `./~/mynotes` (and a write
        // created it) in the directory the tests run in.
        func store(_ args: [String], _ e: [String: String?]) throws -> String {
            let r = s.run(args + ["stats", "--json"], env: e)
            try #require(r.code == 0, "\(r)")
            return try #require(try r.object()["store"] as? String)
        }
        write(file: s.configFile, "store = ~/mynotes\n")
        #expect(try store([], ["NOTES_STORE": nil]) == home)
        #expect(try store([], ["NOTES_STORE": "~/mynotes"]) == home)
        #expect(try store(["--store", "~/mynotes"], [:]) == home)
        for relative in ["relative/dir", "mynotes", "./mynotes", "~other/notes"] {
            write(file: s.configFile, "sort = title\nstore = \(relative)\n")
            CLIErrorTests.expectFailure(
                s.run(["list"], env: ["NOTES_STORE": nil]), 2,
                mentioning: "\(s.configFile):2: store must be an absolute path (starting with / or ~/)")
        }
        CLIErrorTests.expectFailure(
            s.run("config", "set", "store", "relative/dir"), 2, mentioning: "store must be an absolute path")
        // Without HOME, `~` names nothing: an error, not a directory named `~`.
        write(file: s.configFile, "store = ~/mynotes\n")
        CLIErrorTests.expectFailure(
            s.run(["list"], env: ["NOTES_STORE": nil, "HOME": nil]), 5, mentioning: "HOME is not set")
    }

    @Test("list sort, body limit and editor: flag or environment beat the file, which beats the default")
    func settingPrecedence() throws {
        let s = try Sandbox()
        try s.ok("add", "A-old", env: ["NOTES_NOW": "2026-11-29T09:00:00Z"])
        try s.ok("add", "b-new", env: ["NOTES_NOW": "2026-11-29T10:00:00Z"])
        #expect(try s.titles() == ["b-new", "A-old"], "default: by update")
        try s.ok("config", "set", "sort", "title")
        #expect(try s.titles() == ["A-old", "b-new"], "the file beats the default")
        #expect(try s.titles("--sort", "updated") == ["b-new", "A-old"], "a flag beats the file")

        try s.ok("config", "set", "body-limit", "8")
        CLIErrorTests.expectFailure(s.run("add", "Big", "--body", "123456789"), 2, mentioning: "8")
        #expect(s.run("add", "Big", "--body", "123456789", env: ["NOTES_BODY_LIMIT": "9"]).code == 0)
        #expect(s.run("add", "Fits", "--body", "12345678").code == 0)
        try s.ok("config", "unset", "body-limit")

        let marker = s.path("config-editor-ran")
        let configEditor = s.script("config-editor", "touch '\(marker)'\nprintf 'Edited\\n\\nby config\\n' > \"$1\"\n")
        let envEditor = s.script("env-editor", "printf 'Edited\\n\\nby env\\n' > \"$1\"\n")
        try s.ok("config", "set", "editor", configEditor)
        let id = try s.add("Note")
        try s.ok("edit", id, env: ["EDITOR": nil, "VISUAL": nil])
        #expect(try s.object("show", id)["body"] as? String == "by config\n", "the config's editor without $EDITOR")
        try s.ok("edit", id, env: ["EDITOR": envEditor, "VISUAL": nil])
        #expect(try s.object("show", id)["body"] as? String == "by env\n", "$EDITOR beats the config")
    }
}
