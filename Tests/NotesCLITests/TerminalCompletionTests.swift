import Foundation
import Testing

/// Issue 10's shell completion: the scripts' content, and the bash and zsh scripts run in
/// their shells against a real store (zsh only where it is installed; CI installs it).
@Suite("Terminal: shell completion")
struct TerminalCompletionTests {
    /// A store with two notes (one title with a space and a colon) in two categories.
    static func store() throws -> (Sandbox, [String]) {
        let s = try Sandbox()
        let a = try s.add("Hello: world", "--category", "Work")
        let b = try s.add("Second", "--category", "Home Stuff")
        return (s, [a, b])
    }

    @Test("each shell's script names the commands and asks `notes __complete` for ids and categories")
    func scripts() throws {
        let s = try Sandbox()
        for shell in ["bash", "zsh", "fish"] {
            let r = try s.ok("completion", shell)
            for command in ["add", "show", "edit", "list", "categorize", "categories", "completion"] {
                #expect(r.stdout.contains(command), "\(shell) script names \(command)")
            }
            #expect(r.stdout.contains("__complete"), "\(shell) asks notes for values")
            #expect(
                ["_values ids", "__complete ids", "_complete ids (commandline -ct))"].contains(
                    where: r.stdout.contains),
                "\(shell) completes ids")
            #expect(
                ["_values categories", "__complete categories", "_complete categories)"].contains(
                    where: r.stdout.contains),
                "\(shell) completes categories")
            #expect(r.stdout.contains("--category") || r.stdout.contains("-l category"), "\(shell) completes options")
            #expect(!r.stdout.contains("\u{1B}"))
        }
        #expect(try s.ok("completion", "bash").stdout.contains("complete -F _notes notes"))
        #expect(try s.ok("completion", "zsh").stdout.hasPrefix("#compdef notes"))
        #expect(try s.ok("completion", "fish").stdout.contains("complete -c notes"))
        CLIErrorTests.expectFailure(s.run("completion", "tcsh"), 2, mentioning: "bash, zsh or fish")
        CLIErrorTests.expectFailure(s.run("completion"), 2, mentioning: "usage")
    }

    @Test("`notes __complete` prints ids with titles and category names, and is quiet without a store")
    func completeValues() throws {
        let (s, ids) = try Self.store()
        let lines = try s.ok("__complete", "ids").lines
        #expect(Set(lines) == ["\(ids[0])\tHello: world", "\(ids[1])\tSecond"])
        #expect(try s.ok("__complete", "categories").lines == ["Home Stuff", "Work"])
        let fresh = try Sandbox()
        let quiet = fresh.run("__complete", "ids")
        #expect(quiet.code == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet)")
        #expect(!fileExists(fresh.store))
    }

    @Test(
        "`notes __complete ids DIGITS` offers every note whose id starts with them: past the 500 of a page, in the trash too"
    )
    func completeIDsByDigits() throws {
        let s = try Sandbox()
        // 520 notes; the oldest, the only one whose id starts with "b", is past the latest 500.
        var lines: [String] = []
        for i in 0..<520 {
            let id =
                i == 0 ? "b0000000-0000-4000-8000-000000000000" : String(format: "a%07x-0000-4000-8000-000000000000", i)
            let time = String(format: "2026-01-01T00:%02d:%02d.000000Z", i / 60, i % 60)
            let event = UUID().uuidString.lowercased()
            lines.append(
                #"{"position":\#(i + 1),"eventId":"\#(event)","stream":"note/\#(id)","version":1,"type":"NoteCreated","#
                    + #""schemaVersion":2,"recordedAt":"\#(time)","metadata":{"actor":"t"},"#
                    + #""data":{"title":"Note \#(i)","body":"","pinned":false,"category":null}}"#)
        }
        write(file: s.path("many.jsonl"), lines.joined(separator: "\n") + "\n")
        try s.ok("import", s.path("many.jsonl"))
        // Before 2026-12-07 the latest page was all a Tab offered, whatever digits were typed.
        #expect(!(try s.ok("__complete", "ids").stdout.contains("b0000000")), "the latest page leaves it out")
        #expect(try s.ok("__complete", "ids", "b").lines == ["b0000000\tNote 0"])
        #expect(try s.ok("__complete", "ids", "a000000").lines.count == 15)
        try s.ok("trash", "b0000000")
        #expect(try s.ok("__complete", "ids", "B0").lines == ["b0000000\tNote 0"], "untrash completes it")
        #expect(try s.ok("__complete", "ids", "xyz").lines.count == 500, "not digits: the latest page")
    }

    @Test("the bash script, run in bash, offers commands, options, note ids and category names")
    func bash() throws {
        let (s, ids) = try Self.store()
        let other = try Sandbox()
        let otherID = try other.add("Other", "--category", "Elsewhere")
        write(file: s.path("complete.bash"), try s.ok("completion", "bash").stdout)
        // Each probe sets COMP_WORDS/COMP_CWORD as bash would for the line, calls _notes, prints COMPREPLY.
        let probes: [(words: [String], expected: Set<String>)] = [
            (["notes", "show", ""], Set(ids)),
            (["notes", "pin", String(ids[0].prefix(2))], Set(ids.filter { $0.hasPrefix(ids[0].prefix(2)) })),
            (["notes", "li"], ["list", "links"]),
            (["notes", "--json", "sh"], ["show"]),
            // Quoted for the shell: one argument (before 2026-12-06, `Home Stuff` made two).
            (["notes", "list", "--category", ""], ["Home\\ Stuff", "Work"]),
            (["notes", "list", "--category", "Home\\ S"], ["Home\\ Stuff"]),
            (["notes", "list", "--so"], ["--sort"]),
            (["notes", "categorize", ids[1], "W"], ["Work"]),
            // The store a --store on the line names, before or after the command.
            (["notes", "--store", other.store, "show", ""], [otherID]),
            (["notes", "show", "--store", other.store, ""], [otherID]),
            (["notes", "--store", other.store, "list", "--category", ""], ["Elsewhere"]),
        ]
        var script = "source \(s.path("complete.bash"))\n"
        for p in probes {
            let words = p.words.map { "'\($0)'" }.joined(separator: " ")
            script += "COMP_WORDS=(\(words)); COMP_CWORD=\(p.words.count - 1); COMPREPLY=(); _notes\n"
            script += "printf '%s\\n' \"${COMPREPLY[@]}\"; echo '--'\n"
        }
        write(file: s.path("probe.bash"), script)
        let r = s.run([s.path("probe.bash")], stdin: nil, env: [:], executable: "/bin/bash")
        #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
        let answers = r.stdout.components(separatedBy: "--\n").dropLast()
        #expect(answers.count == probes.count, "\(r.stdout)")
        for (p, answer) in zip(probes, answers) {
            let got = Set(answer.split(separator: "\n").map(String.init))
            #expect(got == p.expected, "completing \(p.words): \(got)")
        }
    }

    @Test(
        "the zsh script, run in zsh, describes note ids with their titles",
        .enabled(if: hasProgram("zsh"), "zsh is not installed here (CI installs it)"))
    func zsh() throws {
        let (s, ids) = try Self.store()
        let other = try Sandbox()
        let otherID = try other.add("Other", "--category", "Time: later")
        write(file: s.path("complete.zsh"), try s.ok("completion", "zsh").stdout)
        // Without compinit, stand-ins for the completion builtins print what they are given.
        let script = """
            compdef() { : }
            _describe() { local name=$2; print -rl -- "${(@P)name}" }
            compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@" }
            source \(s.path("complete.zsh"))
            words=(notes show ''); CURRENT=3; _notes; print -- '--'
            words=(notes ''); CURRENT=2; _notes; print -- '--'
            words=(notes list --category ''); CURRENT=4; _notes; print -- '--'
            words=(notes list --so); CURRENT=3; _notes; print -- '--'
            words=(notes --store \(other.store) list --category ''); CURRENT=6; _notes; print -- '--'
            words=(notes --store \(other.store) show ''); CURRENT=5; _notes; print -- '--'
            """
        write(file: s.path("probe.zsh"), script)
        let zsh = ["/usr/bin/zsh", "/bin/zsh", "/usr/local/bin/zsh"].first { fileExists($0) } ?? "zsh"
        let r = s.run(["-f", s.path("probe.zsh")], stdin: nil, env: [:], executable: zsh)
        #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
        let answers = r.stdout.components(separatedBy: "--\n").map { Set($0.split(separator: "\n").map(String.init)) }
        try #require(answers.count >= 4, "\(r.stdout)")
        // zsh's _describe takes `value:description`; a colon in the description is kept as is.
        #expect(answers[0] == ["\(ids[0]):Hello: world", "\(ids[1]):Second"])
        #expect(answers[1].contains("list:List notes: pinned first, then by last update."))
        #expect(answers[1].contains { $0.hasPrefix("add:") } && answers[1].contains { $0.hasPrefix("show:") })
        #expect(answers[2] == ["Home Stuff", "Work"])
        #expect(answers[3].contains("--sort") && answers[3].contains("--limit"))
        // The store --store names; a colon in a name escaped for _describe.
        try #require(answers.count >= 6, "\(r.stdout)")
        #expect(answers[4] == ["Time\\: later"])
        #expect(answers[5] == ["\(otherID):Other"])
    }

    @Test(
        "the fish script, run in fish, offers ids, then a category or tags after the id, from the store --store names",
        .enabled(if: hasProgram("fish"), "fish is not installed here (CI installs it)"))
    func fish() throws {
        let (s, ids) = try Self.store()
        let other = try Sandbox()
        let otherID = try other.add("Other", "--category", "Elsewhere")
        write(file: s.path("complete.fish"), try s.ok("completion", "fish").stdout)
        let probes: [(line: String, expected: Set<String>)] = [
            ("notes show ", []),  // checked below: ids with their titles
            (
                "notes list --category ",
                ["Home Stuff\tonly notes in this category", "Work\tonly notes in this category"]
            ),
            ("notes categorize \(ids[0]) ", ["Home Stuff", "Work"]),
            ("notes --store \(other.store) show ", ["\(otherID)\tOther"]),
            ("notes --store \(other.store) categorize \(otherID) ", ["Elsewhere"]),
            // A --store's directory is no command: the commands are still offered after it.
            (
                "notes --store \(other.store) li",
                [
                    "links\tThe wiki links of a note and where they lead, or every link that leads nowhere.",
                    "list\tList notes: pinned first, then by last update.",
                ]
            ),
        ]
        var script = "source \(s.path("complete.fish"))\n"
        // (fish's echo takes `--` for the end of its options: printf prints it.)
        for p in probes { script += "complete -C '\(p.line)'; printf '%s\\n' --\n" }
        write(file: s.path("probe.fish"), script)
        let fish = ["/usr/bin/fish", "/bin/fish", "/usr/local/bin/fish"].first { fileExists($0) } ?? "fish"
        let r = s.run(["--no-config", s.path("probe.fish")], stdin: nil, env: [:], executable: fish)
        #expect(r.code == 0, "\(r)")
        let answers = r.stdout.components(separatedBy: "--\n").dropLast()
        try #require(answers.count == probes.count, "\(r.stdout)")
        // The ids come with their titles as descriptions.
        let shown = Set(answers[0].split(separator: "\n").map { String($0.prefix(8)) })
        #expect(shown == Set(ids), "\(answers[0])")
        for (p, answer) in zip(probes, answers).dropFirst() {
            #expect(
                Set(answer.split(separator: "\n").map(String.init)) == p.expected, "completing \(p.line): \(answer)")
        }
    }

    @Test(
        "a file or folder a command or option takes is completed from the disk in bash, zsh and fish",
        .enabled(if: hasProgram("zsh") && hasProgram("fish"), "zsh and fish are not installed here (CI installs them)"))
    func pathsFromTheDisk() throws {
        let (s, _) = try Self.store()
        // Before 2026-12-06 a Tab after `notes import`, `import-markdown`, `--body-file`,
        // `--output` or `--store` offered nothing (bash and zsh), and fish was told no file
        // follows any word of `notes`.
        write(file: s.path("complete.bash"), try s.ok("completion", "bash").stdout)
        // Outside a completion, compopt is a stand-in that prints the option asked for.
        var script = "compopt() { printf 'compopt %s\\n' \"$*\"; }\nsource \(s.path("complete.bash"))\n"
        let bashProbes: [([String], String)] = [
            (["notes", "import", ""], "compopt -o default"),
            (["notes", "import-history", "sam"], "compopt -o default"),
            (["notes", "import-markdown", ""], "compopt -o dirnames"),
            (["notes", "export-markdown", "va"], "compopt -o dirnames"),
            (["notes", "add", "T", "--body-file", ""], "compopt -o default"),
            (["notes", "export", "--output", "ev"], "compopt -o default"),
            (["notes", "export", "-o", ""], "compopt -o default"),
            (["notes", "--store", ""], "compopt -o dirnames"),
            (["notes", "list", "--store", "/tm"], "compopt -o dirnames"),
            (["notes", "show", ""], ""),
        ]
        for (words, _) in bashProbes {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            script +=
                "COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMPREPLY=(); _notes | grep compopt; echo '--'\n"
        }
        write(file: s.path("probe.bash"), script)
        let b = s.run([s.path("probe.bash")], stdin: nil, env: [:], executable: "/bin/bash")
        let bashAnswers = b.stdout.components(separatedBy: "--\n").dropLast()
        try #require(bashAnswers.count == bashProbes.count, "\(b)")
        for ((words, expected), answer) in zip(bashProbes, bashAnswers) {
            #expect(answer.trimmingCharacters(in: .newlines) == expected, "completing \(words): \(answer)")
        }

        write(file: s.path("complete.zsh"), try s.ok("completion", "zsh").stdout)
        let zshScript = """
            compdef() { : }
            _describe() { print -- describe }
            compadd() { print -- compadd }
            _files() { print -- "_files $*" }
            source \(s.path("complete.zsh"))
            words=(notes import ''); CURRENT=3; _notes; print -- '--'
            words=(notes import-markdown ''); CURRENT=3; _notes; print -- '--'
            words=(notes add T --body-file ''); CURRENT=5; _notes; print -- '--'
            words=(notes --store ''); CURRENT=3; _notes; print -- '--'
            """
        write(file: s.path("probe.zsh"), zshScript)
        let zsh = ["/usr/bin/zsh", "/bin/zsh", "/usr/local/bin/zsh"].first { fileExists($0) } ?? "zsh"
        let z = s.run(["-f", s.path("probe.zsh")], stdin: nil, env: [:], executable: zsh)
        #expect(z.code == 0 && z.stderr.isEmpty, "\(z)")
        let zshAnswers = z.stdout.components(separatedBy: "--\n").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(Array(zshAnswers.prefix(4)) == ["_files", "_files -/", "_files", "_files -/"], "\(z.stdout)")

        // fish, for real: the files of a folder are offered.
        let folder = s.path("disk")
        try FileManager.default.createDirectory(atPath: folder + "/vault", withIntermediateDirectories: true)
        write(file: folder + "/events.jsonl", Array("".utf8))
        write(file: s.path("complete.fish"), try s.ok("completion", "fish").stdout)
        let lines = [
            "notes import \(folder)/ev", "notes import-markdown \(folder)/va", "notes add T --body-file \(folder)/ev",
            "notes export --output \(folder)/ev", "notes --store \(folder)/va",
        ]
        var fishScript = "source \(s.path("complete.fish"))\n"
        for line in lines { fishScript += "complete -C '\(line)'; printf '%s\\n' --\n" }
        write(file: s.path("probe.fish"), fishScript)
        let fish = ["/usr/bin/fish", "/bin/fish", "/usr/local/bin/fish"].first { fileExists($0) } ?? "fish"
        let f = s.run(["--no-config", s.path("probe.fish")], stdin: nil, env: [:], executable: fish)
        #expect(f.code == 0, "\(f)")
        let fishAnswers = f.stdout.components(separatedBy: "--\n").dropLast()
        try #require(fishAnswers.count == lines.count, "\(f.stdout)")
        for (line, answer) in zip(lines, fishAnswers) {
            let offered = Set(answer.split(separator: "\n").map { String($0.split(separator: "\t")[0]) })
            let expected = line.hasSuffix("/ev") ? folder + "/events.jsonl" : folder + "/vault/"
            #expect(offered == [expected], "completing \(line): \(answer)")
        }
    }
}
