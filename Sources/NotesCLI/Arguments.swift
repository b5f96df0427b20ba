/// One option a command accepts.
struct OptionSpec: Sendable {
    /// Long name without dashes, e.g. `body`.
    let name: String
    /// One-letter alias without the dash, if any.
    let short: Character?
    /// Name of the value (`TEXT`), or nil for a flag.
    let value: String?
    let help: String
    /// Whether the option may be given several times (`--tag a --tag b`).
    let repeatable: Bool

    init(_ name: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false, _ help: String) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
        self.repeatable = repeatable
    }
}

/// Options every command accepts, before or after the command name.
let globalOptions: [OptionSpec] = [
    OptionSpec("store", value: "DIR", "use the store in DIR (default: $NOTES_STORE, else $XDG_DATA_HOME/notes)"),
    OptionSpec("json", "print JSON instead of text"),
    OptionSpec("no-pager", "do not send long output through a pager"),
    OptionSpec("no-color", "never use color"),
    OptionSpec("help", short: "h", "show help"),
    OptionSpec("version", "print the version of notes"),
]

/// The arguments of one invocation, split into options and positionals.
struct ParsedArguments: Sendable {
    var command: String?
    var positionals: [String] = []
    var values: [String: String] = [:]
    /// Every value of each repeatable option, in the order given.
    var repeated: [String: [String]] = [:]
    var flags: Set<String> = []
    /// How many positional arguments came before `--`, when it was given: those after it are
    /// text, whatever they look like.
    var optionsEndedAt: Int?

    func value(_ name: String) -> String? { values[name] }
    func allValues(_ name: String) -> [String] { repeated[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) || values[name] != nil }
}

/// Splits argv by the rules of the CLI: global options anywhere, an option's value taken as
/// given even when it begins with `-`, `--` ends the options, `--name=value` accepted,
/// repeating an option (a flag too, or a flag and its short alias) is an error unless it is
/// repeatable.
struct ArgumentParser {
    let commandOptions: (String) -> [OptionSpec]?

    func parse(_ args: [String]) throws(CLIError) -> ParsedArguments {
        var result = ParsedArguments()
        var i = 0
        var optionsEnded = false
        while i < args.count {
            let arg = args[i]
            i += 1
            if optionsEnded || arg == "-" || !arg.hasPrefix("-") {
                if result.command == nil && !optionsEnded {
                    result.command = arg
                } else {
                    result.positionals.append(arg)
                }
                continue
            }
            if arg == "--" {
                optionsEnded = true
                if result.command == nil, i < args.count {
                    result.command = args[i]
                    i += 1
                }
                result.optionsEndedAt = result.positionals.count
                continue
            }
            var name: String
            var inline: String?
            if arg.hasPrefix("--") {
                name = String(arg.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else {
                let letters = Array(arg.dropFirst())
                guard letters.count == 1 else {
                    throw unknown(arg, in: result, after: args[i...])
                }
                name = String(letters[0])
            }
            let available = globalOptions + (result.command.flatMap(commandOptions) ?? [])
            guard let spec = available.first(where: { $0.name == name || ($0.short.map(String.init) == name) }) else {
                throw unknown(arg, in: result, after: args[i...])
            }
            if spec.value != nil {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i < args.count else {
                        let help = result.command.map { "notes help \($0)" } ?? "notes --help"
                        throw CLIError("option --\(spec.name) needs a value (\(spec.value ?? "VALUE")); see `\(help)`")
                    }
                    value = args[i]
                    i += 1
                }
                if spec.repeatable {
                    result.repeated[spec.name, default: []].append(value)
                } else if result.values[spec.name] != nil {
                    throw CLIError("option --\(spec.name) is given more than once; give it once")
                }
                result.values[spec.name] = value
            } else {
                if inline != nil { throw CLIError("option --\(spec.name) takes no value") }
                // As an option with a value given twice is (before 2026-12-07 `--json --json`
                // was taken, `--limit 1 --limit 1` refused).
                guard result.flags.insert(spec.name).inserted else {
                    throw CLIError("option --\(spec.name) is given more than once; give it once")
                }
            }
        }
        return result
    }

    /// The error for `arg`, no option of the command parsed so far into `parsed`; `after` the
    /// arguments after it.
    private func unknown(_ arg: String, in parsed: ParsedArguments, after: ArraySlice<String>) -> CLIError {
        let command = parsed.command
        let available = globalOptions + (command.flatMap(commandOptions) ?? [])
        let names = available.map { "--" + $0.name }
        let stem = arg.split(separator: "=", maxSplits: 1).first.map(String.init) ?? arg
        // An instant's option as another command names it (`show --as-of`, `list --at`).
        let instantOptions = ["--as-of", "--at", "--to"]
        let synonym = instantOptions.contains(stem) ? instantOptions.first { $0 != stem && names.contains($0) } : nil
        let hint = (suggestion(for: stem, among: names) ?? synonym).map(didYouMean) ?? ""
        let help = command.map { "; see `notes help \($0)`" } ?? "; see `notes --help`"
        // The words after it up to the next option the command knows (or `--`), and every word
        // after a `--`; options given before or after them are left to the user ([OPTIONS]).
        func isOption(_ a: String) -> Bool {
            if a.hasPrefix("--") { return true }
            return a.count == 2 && a.hasPrefix("-")
                && available.contains { $0.short.map(String.init) == String(a.last!) }
        }
        let tail = after.prefix { !isOption($0) }
        let afterEnd = after.firstIndex(of: "--").map { Array(after[($0 + 1)...]) } ?? []
        let skipped = after.count - tail.count - afterEnd.count - (after.contains("--") ? 1 : 0)
        let options = !(parsed.values.isEmpty && parsed.flags.isEmpty && parsed.repeated.isEmpty) || skipped > 0
        if command == "search" && hint.isEmpty && !arg.hasPrefix("--") {
            // The query's words: those before it, it, those after it up to the next option, and
            // those after a `--`.
            let query = (parsed.positionals + [arg] + tail + afterEnd).joined(separator: " ")
            return CLIError(
                "unknown option \"\(stem)\"; a query that holds a word starting with - goes after --: "
                    + "notes search \(options ? "[OPTIONS] " : "")-- \(shellQuoted(query))")
        }
        if command == "add", arg.dropFirst().allSatisfy({ ("0"..."9").contains($0) }), arg.count > 1 {
            // `add` takes one title: the words given as one (before 2026-12-07 the advice was
            // `notes add 'Buy milk' -- -5`, two titles, which add refused in turn).
            let title = (parsed.positionals + [arg] + tail + afterEnd).joined(separator: " ")
            return CLIError(
                "unknown option \"\(arg)\"; a title that holds a word starting with - goes after --, in one "
                    + "argument: notes add \(options ? "[OPTIONS] " : "")-- \(shellQuoted(title))")
        }
        if let command, arg.dropFirst().allSatisfy({ ("0"..."9").contains($0) }), arg.count > 1 {
            let given = ([command] + parsed.positionals).map(shellQuoted).joined(separator: " ")
            let rest = ([arg] + tail + afterEnd).map(shellQuoted).joined(separator: " ")
            return CLIError(
                "unknown option \"\(arg)\"; a value that starts with - goes after --: notes \(given) "
                    + "\(options ? "[OPTIONS] " : "")-- \(rest)")
        }
        return CLIError("unknown option \"\(stem)\"" + (hint.isEmpty ? help : hint))
    }
}

/// `text` as one word of a POSIX shell: as it is when it holds only letters, digits and
/// `_ . / : = @ % + , -`, else in single quotes.
func shellQuoted(_ text: String) -> String {
    let plain =
        !text.isEmpty
        && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "_./:=@%+,-".unicodeScalars.contains($0)
        }
    if plain { return text }
    return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}

/// ` (did you mean "x"?)`, `x` the closest of `candidates` to `word` (``suggestion(for:among:)``),
/// or nothing: written right after the word it corrects, so that the message reads on after it
/// (before 2026-12-08 a `; did you mean "x"?` there was followed by `; see ...`).
func didYouMean(_ word: String, among candidates: [String]) -> String {
    suggestion(for: word, among: candidates).map(didYouMean) ?? ""
}

/// ` (did you mean "x"?)` for `x`.
func didYouMean(_ x: String) -> String { " (did you mean \"\(x)\"?)" }

/// The closest candidate within a small edit distance, for "did you mean" hints.
func suggestion(for word: String, among candidates: [String]) -> String? {
    let w = Array(word.lowercased())
    var best: (String, Int)?
    for c in candidates {
        let d = editDistance(w, Array(c.lowercased()))
        let limit = max(1, min(3, c.count / 3))
        if d <= limit, best == nil || d < best!.1 { best = (c, d) }
    }
    if best == nil, w.count >= 3 {
        best = candidates.first(where: { $0.lowercased().hasPrefix(String(w)) }).map { ($0, 0) }
    }
    return best?.0
}

/// Edit distance counting a swap of two neighbouring letters as one edit (optimal string
/// alignment), because transposed letters (`lsit`, `titel`) are the most common typo.
func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    if a.count > 64 || b.count > 64 { return max(a.count, b.count) }
    var before = Array(0...b.count)
    var prev = Array(0...b.count)
    var cur = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        cur[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                cur[j] = min(cur[j], before[j - 2] + 1)
            }
        }
        (before, prev, cur) = (prev, cur, before)
    }
    return prev[b.count]
}
