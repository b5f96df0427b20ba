import Foundation
import Testing

/// `--help`, `help COMMAND`, `help TOPIC`, typo suggestions, and the man page kept in the repo.
@Suite("Terminal: help, topics, suggestions and the manual")
struct TerminalHelpTests {
    /// The overview, parsed for the command names and topics it lists.
    static func overview(_ s: Sandbox) throws -> (text: String, commands: [String], topics: [String]) {
        let r = try s.ok("--help")
        var commands: [String] = []
        var inCommands = false
        for line in r.lines {
            if line == "COMMANDS:" {
                inCommands = true
                continue
            }
            if inCommands {
                guard line.hasPrefix("  ") else { break }
                if let name = line.split(separator: " ").first { commands.append(String(name)) }
            }
        }
        let marker = "`notes help TOPIC` for "
        let range = try #require(r.stdout.range(of: marker), "the overview names the topics")
        let list = r.stdout[range.upperBound...].prefix { $0 != "." }
        let topics = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return (r.stdout, commands, topics)
    }

    @Test("--help shows usage, every command, the global options and the exit codes")
    func overview() throws {
        let s = try Sandbox()
        let (text, commands, _) = try Self.overview(s)
        for c in [
            "add", "show", "edit", "list", "pin", "unpin", "categorize", "archive", "unarchive", "trash", "untrash",
            "categories", "stats", "config", "completion", "man", "help",
        ] {
            #expect(commands.contains(c), "--help lists \(c)")
        }
        for option in ["--store DIR", "--json", "--no-pager", "--no-color", "--help"] { #expect(text.contains(option)) }
        for (code, word) in [(0, "success"), (1, "other"), (2, "usage"), (3, "no note"), (4, "conflict"), (5, "store")]
        {
            #expect(text.contains("  \(code)  ") && text.contains(word), "exit code \(code) is documented")
        }
        #expect(try s.ok("help").stdout == text)
        #expect(try s.ok("-h").stdout == text)
    }

    @Test(
        "help COMMAND and COMMAND --help print the same page, with usage and options, for every command, help included")
    func commandHelp() throws {
        let s = try Sandbox()
        let (_, commands, _) = try Self.overview(s)
        #expect(commands.count >= 15)
        // `help help` was refused, exit 2 ("no help for \"help\""), though the overview lists it.
        #expect(commands.contains("help"))
        for c in commands {
            let page = try s.ok("help", c).stdout
            #expect(page.hasPrefix("OVERVIEW: "), "help \(c)")
            #expect(page.contains("USAGE:\n  notes \(c)"), "help \(c) shows its usage")
            #expect(page.contains("OPTIONS:") && page.contains("--json"), "help \(c) lists options")
            // `help search` adds the search-syntax topic after the command's page.
            let viaFlag = try s.ok(c, "--help").stdout
            #expect(page.hasPrefix(viaFlag), "\(c) --help")
        }
        let add = try s.ok("help", "add").stdout
        for option in ["--body TEXT", "--body-file PATH", "--category NAME", "--pin"] { #expect(add.contains(option)) }
        let list = try s.ok("list", "-h").stdout
        for option in [
            "--uncategorized", "--pinned", "--archived", "--trashed", "--all", "--sort", "--reverse", "--limit",
        ] {
            #expect(list.contains(option), "list --help names \(option)")
        }
        #expect(try s.ok("help", "edit").stdout.contains("--expect-version N"))
    }

    @Test("help TOPIC explains each concept; the issue's topics are all there")
    func topics() throws {
        let s = try Sandbox()
        let (_, _, topics) = try Self.overview(s)
        for required in ["events", "time-travel", "search", "import", "exit-codes"] {
            #expect(topics.contains(required), "topic \(required) in \(topics)")
        }
        for topic in topics {
            let r = try s.ok("help", topic)
            #expect(r.lines.count >= 3, "help \(topic) has text")
            // A topic page has its title in capitals; a topic named like a command follows the command's page.
            let titled = r.lines.contains { $0.count > 3 && $0 == $0.uppercased() && $0.first?.isLetter == true }
            #expect(titled, "help \(topic) shows the topic's title: \(r.stdout)")
        }
        let codes = try s.ok("help", "exit-codes").stdout
        for code in 0...5 { #expect(codes.contains("\(code)  "), "exit code \(code)") }
        // Every command but those that make notes exits 3 where there is no store yet.
        let noStore = s.run(["list", "--store", s.path("nowhere")])
        #expect(noStore.code == 3, "\(noStore)")
        #expect(codes.contains("3  no note, version, category or tag matches") && codes.contains("no store yet"))
        #expect(try s.ok("help", "time-travel").stdout.contains("--at"))
        // Topics that share a command's name show both the command and the concept.
        let search = try s.ok("help", "search").stdout
        #expect(search.contains("SEARCH SYNTAX") || !topics.contains("search"), "\(search)")
        let imports = try s.ok("help", "import").stdout
        #expect(imports.contains("IMPORT AND EXPORT FORMATS") || !topics.contains("import"), "\(imports)")
    }

    @Test("typos of commands, options, topics, sort keys and setting names get a suggestion")
    func suggestions() throws {
        let s = try Sandbox()
        try s.add("Note")
        let cases: [([String], String)] = [
            (["lsit"], "did you mean \"list\"?"),
            (["shwo", "x"], "did you mean \"show\"?"),
            (["categroies"], "did you mean \"categories\"?"),
            (["complet", "bash"], "did you mean \"completion\"?"),
            (["list", "--revers"], "did you mean \"--reverse\"?"),
            (["add", "x", "--bdy", "y"], "did you mean \"--body\"?"),
            (["list", "--jsno"], "did you mean \"--json\"?"),
            (["help", "exit-code"], "did you mean \"exit-codes\"?"),
            (["help", "tiem-travel"], "did you mean \"time-travel\"?"),
            (["help", "lsit"], "did you mean \"list\"?"),
            (["list", "--sort", "craeted"], "did you mean \"created\"?"),
            (["config", "get", "sotr"], "did you mean \"sort\"?"),
            (["config", "set", "edtior", "vi"], "did you mean \"editor\"?"),
        ]
        for (args, hint) in cases {
            CLIErrorTests.expectFailure(s.run(args), 2, mentioning: hint)
        }
    }

    /// The repository's root, from this file's path (Tests/NotesCLITests/...).
    static let repositoryRoot: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
        return path
    }()

    @Test("`notes man` equals the committed docs/notes.1 (regenerate with `notes man > docs/notes.1`)")
    func manPageDrift() throws {
        let s = try Sandbox()
        let r = try s.ok("man")
        #expect(r.stdout.hasPrefix(".TH NOTES 1"))
        for section in [
            ".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SS add", ".SS list", ".SH EXIT CODES",
        ] {
            #expect(r.stdout.contains(section + "\n"), "the man page has \(section)")
        }
        let committed = Self.repositoryRoot + "/docs/notes.1"
        try #require(fileExists(committed), "docs/notes.1 is missing; run `notes man > docs/notes.1`")
        let text = String(decoding: read(file: committed), as: UTF8.self)
        #expect(
            text == r.stdout,
            "docs/notes.1 differs from `notes man`: the help changed; run `notes man > docs/notes.1` and commit it")
        // The man page holds every command's help page, so it cannot silently lag behind --help.
        let (_, commands, _) = try Self.overview(s)
        for c in commands where c != "help" { #expect(r.stdout.contains(".SS \(c)\n"), "man page covers \(c)") }
    }
}
