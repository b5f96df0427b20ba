import Basics
import EventStore
import Glibc
import Notes
import SearchEngine

/// Settings from `$XDG_CONFIG_HOME/notes/config` (else `~/.config/notes/config`): simple
/// `key = value` lines, `#` comments. Precedence: flag > environment > config file > default.
struct Config: Sendable {
    /// Every key the file may set, with what it means and which values it takes.
    static let keys: [(key: String, help: String, validate: @Sendable (String) -> String?)] = [
        (
            "store", "the default store directory: an absolute path, or one starting with ~/ (your home directory)",
            {
                // The file is read in whatever directory a command runs: a relative path would
                // be a different store (created on first write) in each of them.
                $0.isEmpty
                    ? "must be a directory path"
                    : $0.hasPrefix("/") || $0 == "~" || $0.hasPrefix("~/")
                        ? nil
                        : "must be an absolute path (starting with / or ~/), as the file is read from any directory "
                            + "(`notes config set store PATH` or `notes config unset store` fixes it)"
            }
        ),
        (
            "editor", "the editor for `notes edit` (after $VISUAL and $EDITOR)",
            { $0.isEmpty ? "must be a command" : nil }
        ),
        ("pager", "the pager for long output (after $NOTES_PAGER and $PAGER)", { _ in nil }),
        (
            "sort", "the default sort of `notes list`: updated, created or title",
            { ["updated", "created", "title"].contains($0) ? nil : "must be updated, created or title" }
        ),
        (
            "color", "auto (color on a terminal, never with NO_COLOR) or never",
            { ["auto", "never"].contains($0) ? nil : "must be auto or never" }
        ),
        (
            "body-limit", "the largest body accepted, in bytes (default 1048576, at most 1073741824)",
            { value in
                guard let n = Int(value), n > 0 else { return "must be a positive number of bytes" }
                return n > Config.maxBodyLimit
                    ? "must be at most \(Config.maxBodyLimit) bytes (1 GiB) (\(Config.bodyLimitCost))" : nil
            }
        ),
        (
            "remote",
            "the remote log `notes sync` uses: a libpq connection string or URI, never with a password (after $NOTES_REMOTE)",
            {
                // Said with the forms it takes and how to have none (before 2026-12-07, "must be
                // a connection string" alone, to `notes remote set ""`).
                $0.isEmpty
                    ? "must be a libpq connection string (host=db.example dbname=notes) or URI "
                        + "(postgresql://ana@db.example/notes)"
                    : passwordProblem($0)
            }
        ),
        (
            "remote-notebook", "the remote notebook `notes sync` uses (default notes)",
            { notebookNameProblem($0) }
        ),
        (
            "search-language",
            "the language whose word stems search matches (default english; none matches words as written); a change rebuilds the index",
            {
                SearchLanguage($0) == nil
                    ? "must be none or a Snowball language: " + SearchLanguage.names.joined(separator: ", ") : nil
            }
        ),
    ]

    /// The largest body limit that may be set: an import holds about six times a body in memory
    /// while it reads, stores and indexes it (a 100 MB body took 614 MB), so a limit past 1 GiB
    /// asks for more memory than most machines have, and a file that size was killed by the
    /// kernel midway rather than refused: before 2026-12-07 `NOTES_BODY_LIMIT=20000000000` let an
    /// import of a 10 GB file grow to 23.8 GB.
    static let maxBodyLimit = 1 << 30

    /// Why a body limit has a ceiling, for the refusals that name it.
    static let bodyLimitCost = "an import holds several times a body in memory"

    var values: [String: String] = [:]
    let path: String?
    /// One line each for the lines of keys this version does not know, which are ignored: what
    /// every command prints on stderr before it runs.
    var warnings: [String] = []

    /// The config file's path for this environment, or nil without HOME or XDG_CONFIG_HOME.
    static func path(environment: [String: String]) -> String? {
        if let x = environment["XDG_CONFIG_HOME"], x.hasPrefix("/") { return x + "/notes/config" }
        if let h = environment["HOME"], !h.isEmpty { return h + "/.config/notes/config" }
        return nil
    }

    static func unknownSetting(_ key: String) -> CLIError {
        CLIError(
            "unknown setting \"\(key)\"\(didYouMean(key, among: keys.map(\.key))); "
                + "see `notes config list`")
    }

    /// What to do, after the refusal of `value` for `key`, where the value's problem does not
    /// say it: an empty remote is had by none (before 2026-12-07 the refusal said only that it
    /// must be a connection string).
    static func remedy(_ key: String, _ value: String) -> String {
        if key == "remote" && value.isEmpty { return "; to have no remote, `notes remote unset` removes it" }
        // A value over the ceiling was valid before 2026-12-07: the file that holds it refuses
        // every command until it is changed, so say how (before, the refusal named no way out).
        if key == "body-limit", let n = Int(value), n > maxBodyLimit {
            return "; `notes config set body-limit \(maxBodyLimit)` sets the most it may be"
        }
        return ""
    }

    /// What repairs a bad line of `key` in the file, where `config set` alone is not the obvious
    /// way: a bad `remote-notebook` is replaced by `remote set` with `--notebook` (before
    /// 2026-12-07 that failed on the line, and the error named no way out).
    static func lineRemedy(_ key: String) -> String {
        key == "remote-notebook"
            ? "; `notes remote set ADDRESS --notebook NAME` replaces the line, `notes config unset remote-notebook` "
                + "removes it"
            : ""
    }

    /// The config file's text. One of more than 1 MiB is no config file (a log or a download
    /// written to its path): refused with what to do, which the generic "over 1048576 bytes, the
    /// limit" did not say before 2026-12-07.
    static func readFile(_ path: String) throws(CLIError) -> String {
        let limit = 1 << 20
        var st = stat()
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size > limit {
            throw tooLarge(path, size: Int(st.st_size))
        }
        return try readText(path: path, limit: limit, what: "config file")
    }

    static func tooLarge(_ path: String, size: Int) -> CLIError {
        CLIError(
            "the config file \(path) is \(size) bytes, over 1 MiB, the most it may be: it holds a few "
                + "`key = value` lines; move it aside (mv \(path) \(path).old) and set what you need again with "
                + "`notes config set KEY VALUE`")
    }

    /// The lines of a config file, with a byte-order mark and CRLF (or CR) line endings as
    /// editors on other systems write them understood.
    static func lines(of text: String) -> [Substring] {
        var text = Substring(text)
        if text.first == "\u{FEFF}" { text = text.dropFirst() }
        // "\r\n" is one Character: splitting on "\n" alone would not cut it.
        return text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
    }

    /// `key` as one shell word that gives `notes config unset` the key byte for byte: `$'...'`
    /// with the UTF-8 bytes of each control, separator and format character as `\xHH` when it
    /// holds one (a warning shows those as pictures or escapes, which typed back name another
    /// key); else ``shellQuoted(_:)`` (`''` when empty). Before 2026-12-07 an empty key's warning
    /// said "`notes config unset ` removes the line", and `col<ESC>or`'s gave `'col␛or'`, which
    /// removed nothing.
    static func shellWord(_ key: String) -> String {
        func hidden(_ c: Unicode.Scalar) -> Bool {
            switch c.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                return true
            default: return false
            }
        }
        guard key.unicodeScalars.contains(where: hidden) else { return shellQuoted(key) }
        var word = "$'"
        for c in key.unicodeScalars {
            if c == "\\" || c == "'" {
                word += "\\" + String(c)
            } else if hidden(c) {
                for byte in String(c).utf8 {
                    word += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
                }
            } else {
                word.unicodeScalars.append(c)
            }
        }
        return word + "'"
    }

    /// Reads the file; a missing file is an empty config, a bad line an error naming it, a line
    /// of a key this version does not know a warning (``warnings``) and otherwise ignored.
    /// `repairing`: the keys whose lines ``set(_:environment:)`` replaces: set twice, or to a bad
    /// value, they are not an error, nor warned about when this version does not know them (a
    /// typo, which `config unset` removes).
    static func load(environment: [String: String], repairing: Set<String> = []) throws(CLIError) -> Config {
        var config = Config(path: path(environment: environment))
        guard let path = config.path else { return config }
        var st = stat()
        guard stat(path, &st) == 0 else { return config }
        let text = try readFile(path)
        var lineOf: [String: Int] = [:]
        // The keys this version does not know, in the order of their first lines.
        var unknown: [(key: String, lines: [Int])] = []
        var unknownIndex: [String: Int] = [:]
        for (number, rawLine) in lines(of: text).enumerated() {
            let line = rawLine.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw CLIError("\(path):\(number + 1): expected `key = value`; fix or remove the line")
            }
            let key = line[..<eq].trimmingSpaces
            let value = line[line.index(after: eq)...].trimmingSpaces
            guard let spec = keys.first(where: { $0.key == key }) else {
                // A key this version does not know is a typo, or one a newer version writes: it
                // is ignored with a warning naming it, so that a user who tried a newer version
                // and went back is not locked out (before 2026-12-07 every command refused the
                // file, exit 2). The key `config unset` removes is not warned about.
                if repairing.contains(key) { continue }
                if let k = unknownIndex[String(key)] {
                    unknown[k].lines.append(number + 1)
                } else {
                    unknownIndex[String(key)] = unknown.count
                    unknown.append((String(key), [number + 1]))
                }
                continue
            }
            if !repairing.contains(key), let problem = spec.validate(value) {
                throw CLIError(
                    "\(path):\(number + 1): \(key) \(problem), not \"\(value)\"\(remedy(key, value))\(lineRemedy(key))")
            }
            // Which of two would be meant is not ours to guess.
            if let first = lineOf[key], !repairing.contains(key) {
                throw CLIError(
                    "\(path):\(number + 1): \(key) is set on line \(first) too; keep one of the two lines "
                        + "(`notes config set \(key) VALUE` writes one)")
            }
            lineOf[key] = number + 1
            config.values[key] = value
        }
        config.warnings = unknownKeyWarnings(unknown, path: path)
        return config
    }

    /// The warnings for the lines of keys this version does not know: one per key, naming its
    /// first line and how many more it is on, for the first ``shownUnknownKeys`` keys, then one
    /// line for the rest. Before 2026-12-07 each line was a warning of its own, so a key written
    /// 1,000 times (or a file of other `a = b` lines written to its path) made every command print
    /// 1,000 lines.
    static func unknownKeyWarnings(_ unknown: [(key: String, lines: [Int])], path: String) -> [String] {
        var warnings: [String] = []
        for (key, lines) in unknown.prefix(shownUnknownKeys) {
            let hint = suggestion(for: key, among: keys.map(\.key)).map { "did you mean \"\($0)\"? " } ?? ""
            let also =
                switch lines.count {
                case 1: ""
                case 2: " (on line \(lines[1]) too)"
                default: " (on \(lines.count - 1) more lines too, the last \(lines[lines.count - 1]))"
                }
            let plural = lines.count > 1 ? "s" : ""
            // No argument holds a NUL (a shell's `$'\x00'` ends the word there): an editor does.
            let remedy =
                key.unicodeScalars.contains("\0")
                ? "it holds a NUL character, which no command line can give: remove the line\(plural) in an editor"
                : "`notes config unset \(shellWord(key))` removes the line\(plural)"
            warnings.append(
                "\(path):\(lines[0]): unknown key \"\(key)\"\(also) ignored (a newer version of notes may know it); "
                    + hint + remedy)
        }
        if unknown.count > shownUnknownKeys {
            let rest = unknown.dropFirst(shownUnknownKeys)
            let count = rest.reduce(0) { $0 + $1.lines.count }
            warnings.append(
                "\(path):\(rest[rest.startIndex].lines[0]): \(rest.count) more unknown key\(rest.count == 1 ? "" : "s") ignored, on \(count) "
                    + "line\(count == 1 ? "" : "s") from this one on; `notes config list` shows the keys this version "
                    + "knows")
        }
        return warnings
    }

    /// How many keys this version does not know are warned about one by one.
    static let shownUnknownKeys = 5

    subscript(key: String) -> String? { values[key] }

    /// Rewrites the file with `key` set (or removed when `value` is nil), keeping other lines.
    static func set(_ key: String, _ value: String?, environment: [String: String]) throws(CLIError) -> String {
        try set([(key, value)], environment: environment)
    }

    /// Rewrites the file once with each key of `changes` set (or removed when its value is nil),
    /// keeping other lines: the lines of every key changed are replaced, a bad one too (`remote
    /// set ADDRESS --notebook NAME` repairs a bad `remote-notebook` line as it does a bad
    /// `remote` one; before 2026-12-07 it failed on that line).
    static func set(_ changes: [(key: String, value: String?)], environment: [String: String]) throws(CLIError)
        -> String
    {
        var checked: [(key: String, value: String?, known: Bool)] = []
        for (key, value) in changes {
            let spec = keys.first(where: { $0.key == key })
            // An unknown key is only unset, and only when the file has it (before 2026-12-06 a
            // typo in the file, `colour = never`, made every command fail, `config unset colour`
            // too).
            guard spec != nil || value == nil else { throw unknownSetting(key) }
            // A line break would end the line and start another setting: a value is one line, as
            // the file reads it (spaces around it trimmed).
            if let value, value.unicodeScalars.contains(where: breaksLine) {
                throw CLIError("\(key) must be one line without control characters; nothing was written")
            }
            let value = value?.trimmingSpaces
            if let value, let problem = spec?.validate(value) {
                throw CLIError("\(key) \(problem), not \"\(value)\"\(remedy(key, value))")
            }
            checked.append((key, value, spec != nil))
        }
        guard var path = path(environment: environment) else {
            throw CLIError("cannot find the config file: set HOME or XDG_CONFIG_HOME")
        }
        // A config file that is a link (to a dotfiles folder) is written where it leads.
        var link = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            guard let target = realpath(path, nil) else {
                throw CLIError(
                    "the config file \(path) is a link that leads nowhere (\(String(cString: strerror(errno)))); "
                        + "create the file it names, or remove the link")
            }
            path = String(cString: target)
            free(target)
        }
        // Commands that change the file at once take turns (a lock on its folder): each rewrites
        // the whole file from what it read, so before 2026-12-06 of two `config set` at once the
        // later one dropped the other's setting, which had been reported as set.
        let folder = AtomicFile.directory(of: path)
        do { try makeDirectories(folder) } catch { throw CLIError.from(error) }
        let lock = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if lock >= 0 { close(lock) } }
        while lock >= 0 && flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        _ = try load(environment: environment, repairing: Set(checked.map(\.key)))
        var lines: [String] = []
        var st = stat()
        if stat(path, &st) == 0 {
            lines = Self.lines(of: try readFile(path)).map(String.init)
        }
        for (key, value, known) in checked {
            let before = lines.count
            lines.removeAll { line in
                guard let eq = line.firstIndex(of: "=") else { return false }
                return line[..<eq].trimmingSpaces == key
            }
            if !known && lines.count == before { throw unknownSetting(key) }
            // Blank lines left at the end (where a removed line was the last, or from a file
            // that ended with them) are dropped, so a line set is never written after them and a
            // file of no lines is empty: before 2026-12-07 `remote unset` of the only line left a
            // file of one empty line, and the next `remote set` wrote its line after that blank.
            while let last = lines.last, last.trimmingSpaces.isEmpty { lines.removeLast() }
            if let value { lines.append("\(key) = \(value)") }
        }
        do {
            let file = try AtomicFile(path: path)
            try file.write(Array((lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n").utf8))
            try file.commit()
        } catch {
            throw CLIError.from(error)
        }
        return path
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
        return String(s)
    }
}

let configCommand = Command(
    "config", abstract: "Show or change settings in the config file.",
    usage: ["config list", "config get KEY", "config set KEY VALUE", "config unset KEY"],
    discussion: """
        The file is $XDG_CONFIG_HOME/notes/config (else ~/.config/notes/config): `key = value` lines.
        Precedence: a flag beats the environment, which beats the file, which beats the default.
        Keys: \(Config.keys.map(\.key).joined(separator: ", ")).
        """,
    readsOnly: true
) { ctx in
    let args = ctx.positionals
    switch args.first {
    case nil, "list":
        try ctx.expectPositionals(0...1)
        let config = try Config.load(environment: ctx.environment)
        if ctx.json {
            ctx.printJSON(.object(Config.keys.map { ($0.key, config[$0.key].map(JSONValue.string) ?? .null) }))
        } else {
            ctx.terminal.print(ctx.terminal.dim("# \(config.path ?? "(no config file: HOME is not set)")"))
            for k in Config.keys {
                let v = config[k.key]
                ctx.terminal.print(v.map { "\(k.key) = \($0)" } ?? ctx.terminal.dim("# \(k.key): \(k.help)"))
            }
        }
    case "get":
        try ctx.expectPositionals(2...2)
        let config = try Config.load(environment: ctx.environment)
        guard Config.keys.contains(where: { $0.key == args[1] }) else {
            let hint =
                suggestion(for: args[1], among: Config.keys.map(\.key)).map { "did you mean \"\($0)\"? " } ?? ""
            throw CLIError("unknown setting \"\(args[1])\"; \(hint)see `notes config list`")
        }
        guard let v = config[args[1]] else { throw CLIError("\(args[1]) is not set", code: .notFound) }
        if ctx.json { ctx.printJSON(.string(v)) } else { ctx.terminal.print(v) }
    case "set":
        try ctx.expectPositionals(3...3)
        let path = try Config.set(args[1], args[2], environment: ctx.environment)
        if ctx.json {
            ctx.printJSON(.object([("key", .string(args[1])), ("value", .string(args[2])), ("file", .string(path))]))
        } else {
            ctx.terminal.print("\(args[1]) = \(args[2])  (\(path))")
        }
    case "unset":
        try ctx.expectPositionals(2...2)
        let path = try Config.set(args[1], nil, environment: ctx.environment)
        // Every command prints JSON with --json; unset reports the key now without a value.
        if ctx.json {
            ctx.printJSON(.object([("key", .string(args[1])), ("value", .null), ("file", .string(path))]))
        }
    case let other?:
        throw CLIError("unknown config action \"\(other)\"; use list, get, set or unset")
    }
}
