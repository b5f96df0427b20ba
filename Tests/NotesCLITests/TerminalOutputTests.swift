import Foundation
import Testing

/// Issue 10: nothing decorative (color, pager) reaches output that is not a terminal, and on a
/// terminal (a pty from util-linux `script`) the pager and color follow their settings.
@Suite("Terminal: pager, color and plain output")
struct TerminalOutputTests {
    static let hasScript = hasProgram("script")

    /// Runs `notes ARGS` on a pseudo-terminal through `script -qec`; the pty's output (with
    /// CR LF line ends) comes back as stdout. The window size is unset, so notes assumes 24 rows.
    static func onTerminal(_ s: Sandbox, _ args: [String], env: [String: String?] = [:]) -> CLIRun {
        let command = (["notes"] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ")
        var e = env
        if e["TERM"] == nil { e["TERM"] = "xterm-256color" }
        return s.run(["-qec", command, "/dev/null"], stdin: nil, env: e, executable: "/usr/bin/script")
    }

    /// A note whose `show` is longer than a 24-row terminal.
    static func longNote(_ s: Sandbox) throws -> String {
        let body = (1...60).map { "line \($0)" }.joined(separator: "\n") + "\n"
        return try s.add("Long", "--body", body)
    }

    /// A fake pager that records that it ran and what it was given.
    static func pager(_ s: Sandbox, _ name: String) -> (command: String, log: String) {
        let log = s.path(name + ".log")
        return (s.script(name, "echo ran > '\(log)'\ncat >> '\(log)'\n"), log)
    }

    @Test(
        "on a terminal, long output goes through $NOTES_PAGER, else $PAGER, else the config's pager; --no-pager and --json skip it",
        .enabled(if: hasScript, "util-linux `script` (for a pseudo-terminal) is not installed"))
    func pagerChoice() throws {
        let s = try Sandbox()
        let id = try Self.longNote(s)
        let notesPager = Self.pager(s, "notes-pager")
        let envPager = Self.pager(s, "env-pager")
        let configPager = Self.pager(s, "config-pager")
        try s.ok("config", "set", "pager", configPager.command)

        var r = Self.onTerminal(
            s, ["show", id], env: ["NOTES_PAGER": notesPager.command, "PAGER": envPager.command, "NO_COLOR": nil])
        #expect(r.code == 0, "\(r)")
        let paged = String(decoding: read(file: notesPager.log), as: UTF8.self)
        #expect(paged.hasPrefix("ran\n") && paged.contains("line 60\n"), "NOTES_PAGER got the note: \(paged)")
        #expect(!r.stdout.contains("line 60"), "the output went to the pager only")
        #expect(!fileExists(envPager.log) && !fileExists(configPager.log))

        r = Self.onTerminal(s, ["show", id], env: ["PAGER": envPager.command])
        #expect(String(decoding: read(file: envPager.log), as: UTF8.self).contains("line 60"), "then PAGER: \(r)")
        #expect(!fileExists(configPager.log))

        r = Self.onTerminal(s, ["show", id])
        #expect(String(decoding: read(file: configPager.log), as: UTF8.self).contains("line 60"), "then config: \(r)")

        unlink(notesPager.log)
        for args in [["show", id, "--no-pager"], ["--no-pager", "show", id], ["show", id, "--json"]] {
            r = Self.onTerminal(s, args, env: ["NOTES_PAGER": notesPager.command])
            #expect(r.code == 0 && r.stdout.contains("line 60"), "\(args): printed directly: \(r)")
            #expect(!fileExists(notesPager.log), "\(args) does not page")
        }
        // Short output is not paged either.
        let short = try s.add("Short")
        r = Self.onTerminal(s, ["show", short], env: ["NOTES_PAGER": notesPager.command])
        #expect(r.stdout.contains("Short") && !fileExists(notesPager.log))
    }

    @Test("when stdout is not a terminal the pager never runs and nothing is colored")
    func pipeNeverPages() throws {
        let s = try Sandbox()
        let id = try Self.longNote(s)
        let fake = Self.pager(s, "pager")
        let env: [String: String?] = [
            "NOTES_PAGER": fake.command, "PAGER": fake.command, "NO_COLOR": nil, "TERM": "xterm-256color",
        ]
        let r = s.run(["show", id], env: env)
        #expect(r.code == 0 && r.stdout.contains("line 60"))
        #expect(!fileExists(fake.log), "no pager when stdout is a file")
        #expect(!r.stdout.contains("\u{1B}"))
    }

    @Test(
        "on a terminal color appears, unless NO_COLOR, --no-color or `color = never`",
        .enabled(if: hasScript, "util-linux `script` (for a pseudo-terminal) is not installed"))
    func colorOnTerminal() throws {
        let s = try Sandbox()
        let id = try s.add("Colorful", "--pin")
        let colored = Self.onTerminal(s, ["show", id], env: ["NO_COLOR": nil])
        #expect(colored.code == 0 && colored.stdout.contains("\u{1B}["), "a terminal gets color: \(colored)")
        #expect(!Self.onTerminal(s, ["show", id], env: ["NO_COLOR": "1"]).stdout.contains("\u{1B}"))
        #expect(!Self.onTerminal(s, ["show", id, "--no-color"], env: ["NO_COLOR": nil]).stdout.contains("\u{1B}"))
        #expect(!Self.onTerminal(s, ["show", id], env: ["NO_COLOR": nil, "TERM": "dumb"]).stdout.contains("\u{1B}"))
        try s.ok("config", "set", "color", "never")
        #expect(!Self.onTerminal(s, ["show", id], env: ["NO_COLOR": nil]).stdout.contains("\u{1B}"))
    }

    @Test("no escape sequence in any output or error when stdout is not a terminal, even without NO_COLOR")
    func noEscapesWhenPiped() throws {
        let s = try Sandbox()
        let env: [String: String?] = ["NO_COLOR": nil, "TERM": "xterm-256color"]
        let a = s.run(["add", "Pinned", "--pin", "--category", "Work", "--body", "body\n"], env: env)
        #expect(a.code == 0)
        let id = a.line
        try s.ok("add", "Trashed")
        let runs: [[String]] = [
            ["list"], ["list", "--all"], ["show", id], ["categories"], ["stats"], ["pin", id], ["trash", id],
            ["untrash", id], ["--help"], ["help"], ["help", "list"], ["help", "exit-codes"], ["config", "list"],
            ["completion", "bash"], ["man"], ["list", "--json"], ["show", "ffff"], ["lsit"], ["list", "--sortt"],
            ["add", ""], ["edit", id, "--expect-version", "99", "--body", "x"], ["__complete", "ids"],
        ]
        for args in runs {
            let r = s.run(args, env: env)
            #expect(!r.stdout.contains("\u{1B}") && !r.stderr.contains("\u{1B}"), "notes \(args): \(r)")
            #expect(!r.stdout.contains("\r") && !r.stderr.contains("\r"), "notes \(args): no progress redraws")
        }
    }

    @Test(
        "on a terminal a body's control characters are shown as symbols, never acted on; a pipe gets the bytes as stored",
        .enabled(if: hasScript, "util-linux `script` (for a pseudo-terminal) is not installed"))
    func controlCharactersShown() throws {
        let s = try Sandbox()
        // Retitles the terminal's window, moves the cursor home, rings the bell; a CR LF stays.
        let hostile = "safe\u{1B}]0;owned\u{07}\u{1B}[H\u{1B}[8mhidden\u{9B}31m\u{7F}\rend\r\nok\n"
        let id = try s.add("Hostile", "--body", hostile)
        try s.ok("edit", id, "--body", "safe\nnow\u{1B}[2J\n")
        for args in [["show", id, "--at", "1"], ["diff", id, "1", "2"], ["blame", id, "--at", "1"]] {
            let r = Self.onTerminal(s, args, env: ["NO_COLOR": "1"])
            #expect(r.code == 0, "\(args): \(r)")
            #expect(
                !r.stdout.contains("\u{1B}") && !r.stdout.contains("\u{9B}") && !r.stdout.contains("\u{07}"),
                "\(args): \(r.stdout)")
            #expect(r.stdout.contains("\u{241B}"), "\(args): the escape shown as a symbol: \(r.stdout)")
        }
        let shown = Self.onTerminal(s, ["show", id, "--at", "1"], env: ["NO_COLOR": "1"]).stdout
        #expect(shown.contains("safe\u{241B}]0;owned\u{2407}\u{241B}[H\u{241B}[8mhidden\u{FFFD}31m\u{2421}\u{240D}end"))
        let piped = s.run(["show", id, "--at", "1"])
        #expect(piped.code == 0 && piped.stdout.contains(hostile), "a pipe gets the body byte for byte")
    }

    @Test(
        "on a terminal a title, category or tag holding a C1 control (U+009B is a CSI) or DEL is shown as a symbol",
        .enabled(if: hasScript, "util-linux `script` (for a pseudo-terminal) is not installed"))
    func c1ControlsInTitlesAndNamesShown() throws {
        let s = try Sandbox()
        // The store's rules let U+0080-U+009F through in titles and names (an import of someone's
        // files, another device or an older program can carry them; a command refuses them typed
        // since 2026-12-07); list, show and search printed them raw.
        let id = try addThroughLibrary(
            s, "Bad\u{9B}2J title", body: "findme\n", category: "Cat\u{9B}31m\u{7F}", tags: ["t\u{9B}8m"])
        let linking = try s.add("Linking", "--body", "see [[x\u{9B}1m]] and [[Bad\u{9B}2J title]]\n")
        for args in [["categories"], ["tags"], ["links", linking], ["links", "--missing"], ["backlinks", id]] {
            let r = Self.onTerminal(s, args, env: ["NO_COLOR": "1"])
            #expect(r.code == 0, "\(args): \(r)")
            #expect(!r.stdout.contains("\u{9B}") && !r.stdout.contains("\u{7F}"), "\(args): \(r.stdout)")
        }
        for args in [["show", id], ["list"], ["search", "findme"]] {
            let r = Self.onTerminal(s, args, env: ["NO_COLOR": "1"])
            #expect(r.code == 0, "\(args): \(r)")
            #expect(!r.stdout.contains("\u{9B}") && !r.stdout.contains("\u{7F}"), "\(args): \(r.stdout)")
            #expect(r.stdout.contains("Bad\u{FFFD}2J"), "\(args): \(r.stdout)")
        }
    }

    @Test(
        "a search snippet, a backlink's line and every table row show control characters as symbols, through a pipe too; --json keeps them"
    )
    func oneLineOutputsShowControlCharacters() throws {
        let s = try Sandbox()
        let body = "danger \u{1B}]0;pwned\u{07} \u{1B}[2J cleared [[Target]] \u{1B}[31mred\u{1B}[0m word\n"
        // An alias with a C1 control, as an import or another device may give (typed, refused).
        let source = try addThroughLibrary(s, "Esc", body: body, aliases: ["al\u{9B}2Jias"])
        let target = try s.add("Target")
        for args in [["search", "danger"], ["backlinks", target], ["links", source], ["log"], ["history", source]] {
            let r = s.run(args)
            #expect(r.code == 0, "\(args): \(r)")
            #expect(
                !r.stdout.contains("\u{1B}") && !r.stdout.contains("\u{07}") && !r.stdout.contains("\u{9B}"),
                "\(args): \(r.stdout)")
        }
        let search = s.run("search", "danger").stdout
        #expect(search.contains("danger \u{241B}]0;pwned\u{2407} \u{241B}[2J cleared"), "\(search)")
        let backlinks = s.run("backlinks", target).stdout
        #expect(backlinks.contains("1: danger \u{241B}]0;pwned\u{2407} \u{241B}[2J"), "\(backlinks)")
        #expect(s.run("alias", source).stdout == "al\u{FFFD}2Jias\n")
        // --json keeps the text as stored, and the offsets of the matched words are those of it.
        let found = try s.run("search", "danger", "--json").array()
        let snippet = try #require(found.first?["snippet"] as? String)
        #expect(snippet.contains("\u{1B}]0;pwned\u{07}"), "\(snippet)")
        let matches = try #require((found.first?["matches"] as? [String: Any])?["snippet"] as? [[Int]])
        #expect(
            matches.map { Array(snippet.unicodeScalars)[$0[0]..<$0[1]] }.map { String(String.UnicodeScalarView($0)) }
                == ["danger"])
        let lineText = try s.run("backlinks", target, "--json").array().first?["lineText"] as? String
        #expect(lineText?.contains("\u{1B}[2J") == true)
        // On a terminal with color, the matched word is still bold, and only it.
        if Self.hasScript {
            let r = Self.onTerminal(s, ["search", "cleared"], env: ["NO_COLOR": nil])
            #expect(r.code == 0, "\(r)")
            #expect(
                r.stdout.contains("\u{241B}[2J \u{1B}[1mcleared\u{1B}[22m [[Target]] \u{241B}[31mred"), "\(r.stdout)")
        }
    }

    @Test(
        "closed standard descriptors (`>&- 2>&-`, `<&-`): nothing printed lands in the store's files, which stay whole"
    )
    func closedStandardDescriptors() throws {
        let s = try Sandbox()
        let id = try s.add("Kept", "--body", "a body\n")
        let shell = "/bin/sh"
        // Before 2026-12-07 the store's files took the closed numbers: this error message was
        // written over data.mdb's first page, and every later command said "not a notes store".
        var r = s.run(["-c", "notes show 0000 >&- 2>&-"], executable: shell)
        #expect(r.code == 3, "\(r)")
        r = s.run(["-c", "notes show 0000 2>&-"], executable: shell)
        #expect(r.code == 3, "\(r)")
        // A write is stored before its id is printed; the closed output is the error it was.
        r = s.run(["-c", "notes add 'Added blind' >&-"], executable: shell)
        #expect(r.code == 1, "\(r)")
        #expect(
            r.stderr
                == "notes: error: cannot write standard output: it is closed (Bad file descriptor); send it to a file or to /dev/null\n",
            "\(r)")
        // A closed standard input gives no text: refused, nothing written (before 2026-12-07
        // it read as empty, and `edit ID - <&-` emptied the body).
        for command in ["notes add 'From nothing' - <&-", "notes edit \(id) - <&-"] {
            r = s.run(["-c", command], executable: shell)
            #expect(r.code == 1, "\(command): \(r)")
            #expect(r.stderr.contains("standard input: it is closed; pipe the text in"), "\(command): \(r)")
        }
        // Not asked for (no `-`), a closed standard input is no body, as a terminal is.
        r = s.run(["-c", "notes add 'No body' <&-"], executable: shell)
        #expect(r.code == 0, "\(r)")
        #expect(try s.ok("verify").stdout.hasPrefix("ok: "))
        let titles = try s.run("list", "--json").array().compactMap { $0["title"] as? String }
        #expect(Set(titles) == ["Kept", "Added blind", "No body"], "\(titles)")
        #expect(try s.object("show", id)["body"] as? String == "a body\n")
    }

    @Test(
        "a failing standard output (a full disk) is an error, exit 1; a reader that went away (EPIPE) is not; a pager that cannot start leaves the output written directly"
    )
    func outputFailures() throws {
        let s = try Sandbox()
        let id = try s.add("Full", "--body", "a body to show\n")
        let shell = "/bin/sh"
        let commands = [
            "list --all", "list --json", "show \(id)", "search body", "history \(id)", "blame \(id)", "log",
            "--version", "help",
        ]
        for command in commands {
            let r = s.run(["-c", "notes \(command) > /dev/full"], executable: shell)
            #expect(r.code == 1, "notes \(command): \(r)")
            #expect(
                r.stderr == "notes: error: cannot write standard output: the disk is full (No space left on device)\n",
                "notes \(command): \(r)")
        }
        // The reader is gone before notes writes: quiet, and not a failure.
        let code = s.path("code")
        for command in ["list --all", "show \(id)", "log"] {
            let r = s.run(["-c", "(sleep 0.2; notes \(command); echo $? > '\(code)') | true"], executable: shell)
            #expect(r.code == 0 && r.stderr.isEmpty, "notes \(command): \(r)")
            #expect(String(decoding: read(file: code), as: UTF8.self) == "0\n", "notes \(command) exits 0")
        }
        if Self.hasScript {
            let long = try Self.longNote(s)
            let r = Self.onTerminal(s, ["show", long], env: ["NOTES_PAGER": "/nonexistent/pager"])
            #expect(r.code == 0, "\(r)")
            #expect(r.stdout.contains("line 60"), "the output is written directly: \(r.stdout)")
            #expect(r.stdout.contains("notes: warning: the pager (/nonexistent/pager) could not be started"))
        }
    }
}
