import CIntrinsics
import Glibc

/// The `notes` command-line tool: parses, calls the `Notes` library, renders.
public enum NotesCommandLine {
    public static let version = "0.1.0"

    /// Runs the tool with the process's own arguments and environment; returns the exit code.
    /// For the `notes` programs (never a test host): a fault inside LMDB, which trusts the pages
    /// of its file, ends the process with a line saying the store may be damaged and exit code 5,
    /// not a bare crash.
    public static func reportFaultsAsDamage() {
        notes_install_fault_handlers(
            "notes: error: stopped by a fault reading the store: its data.mdb may be damaged; run `notes verify`, "
                + "and if that stops too, restore the store from a backup or save its events with "
                + "`notes export --output FILE` and import them into a new store", ExitCode.storeUnusable.rawValue)
        // Before 2026-12-06 an allocation that failed past `ulimit -v` (a large import) was said
        // to be a damaged data.mdb, exit 5.
        notes_set_memory_fault_message(
            "notes: error: stopped for want of memory under the limit on virtual memory (`ulimit -v`): raise the "
                + "limit and run the command again (what the command was writing was not kept; if it stops so "
                + "with no limit, run `notes verify`)", ExitCode.failure.rawValue)
    }

    public static func main() -> Int32 {
        guard holdStandardDescriptors() else { return ExitCode.failure.rawValue }
        if let problem = makeRoomForOpenFiles() {
            Terminal(environment: [:]).error(problem)
            return ExitCode.failure.rawValue
        }
        var args: [String] = []
        for i in 1..<Int(CommandLine.argc) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
            guard let s = String(validating: bytes, as: UTF8.self) else {
                let t = Terminal(environment: [:])
                t.error("argument \(i) is not valid UTF-8 text; pass text in UTF-8")
                return ExitCode.usage.rawValue
            }
            args.append(s)
        }
        // Sized once: growing it rehashed the variables six times over.
        var count = 0
        while environ[count] != nil { count += 1 }
        var env: [String: String] = Dictionary(minimumCapacity: count)
        // Split at the first `=` byte: searching the `String` for a `Character` walks grapheme
        // clusters, which cost more than the rest of `notes --version` together.
        var e = environ
        while let p = e.pointee {
            let entry = UnsafeBufferPointer(
                start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
            if let eq = entry.firstIndex(of: UInt8(ascii: "=")) {
                env[String(decoding: entry[..<eq], as: UTF8.self)] = String(
                    decoding: entry[(eq + 1)...], as: UTF8.self)
            }
            e += 1
        }
        return run(arguments: args, environment: env)
    }

    /// Opens `/dev/null` on each standard descriptor (0, 1, 2) the process was started without
    /// (`notes list >&-`, a daemon or cron job that closed them), in the mode no use of it takes:
    /// write-only for standard input, read-only for the others. Otherwise the next file opened
    /// took the closed number: `lock.mdb` or `data.mdb` became standard output or standard error,
    /// and a printed id or error message was written over the store's first page, so that
    /// `notes show 0000 >&- 2>&-` left a store no command could open (exit 5, "not a notes
    /// store"; before 2026-12-07). Reading a closed standard input still gives no text, and
    /// writing a closed standard output is the error it was, exit 1. False when `/dev/null`
    /// cannot be opened, as nothing may then be opened safely (exit 1, with nowhere to say why).
    static func holdStandardDescriptors() -> Bool {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY)
            guard opened == fd else {
                if opened >= 0 { close(opened) }
                return false
            }
        }
        return true
    }

    /// The fewest open files `notes` runs with: its store's files, a file it reads or writes,
    /// and the descriptors the thread pool of an import, a rebuild or a search opens.
    static let fewestOpenFiles: rlim_t = 16

    /// Raises the soft limit on open files (`ulimit -S -n`) to 1024, or to the hard limit when
    /// that is lower, and says what is wrong when fewer than ``fewestOpenFiles`` are allowed even
    /// then. Below about 10, the thread pool an import, a rebuild or a search starts could not
    /// open its epoll descriptor and killed the process with SIGILL ("Illegal instruction",
    /// exit 132: libdispatch's own crash), and other commands failed with "Too many open files"
    /// called a damaged store (exit 5) or refused files (exit 2); before 2026-12-06 `ulimit -n 8`
    /// did that to every import.
    static func makeRoomForOpenFiles() -> String? {
        var limit = rlimit()
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return nil }
        let wanted: rlim_t = 1024
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = min(wanted, limit.rlim_max)
            if raised.rlim_cur > limit.rlim_cur, setrlimit(resource, &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur < fewestOpenFiles else { return nil }
        return "only \(limit.rlim_cur) open files are allowed (ulimit -n), and notes needs \(fewestOpenFiles); "
            + "raise the limit with `ulimit -n 1024` and run the command again"
    }

    /// Runs the tool with the given arguments (without the program name) and environment.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let terminal = Terminal(environment: environment)
        signal(SIGPIPE, SIG_IGN)
        // Past `ulimit -f` a write must fail with EFBIG (reported as a full disk), not kill us silently.
        signal(SIGXFSZ, SIG_IGN)
        let parser = ArgumentParser(commandOptions: { findCommand($0)?.options })
        var context: Context?
        do {
            let parsed = try parser.parse(arguments)
            if parsed.flags.contains("version") {
                terminal.print("notes \(version)")
                try terminal.flush(pager: nil)
                return 0
            }
            guard let name = parsed.command else {
                if parsed.flags.contains("help") || arguments.isEmpty {
                    terminal.print(overviewHelp)
                    try terminal.flush(pager: nil)
                    return arguments.isEmpty ? ExitCode.usage.rawValue : 0
                }
                throw CLIError("no command given; see `notes --help`")
            }
            guard let command = findCommand(name) else {
                let hint = suggestion(for: name, among: allCommands.map(\.name) + ["help"]).map {
                    "did you mean \"\($0)\"? "
                }
                throw CLIError("unknown command \"\(name)\"; \(hint ?? "")see `notes --help`")
            }
            if parsed.flags.contains("help") {
                terminal.print(command.help)
                try terminal.flush(pager: nil)
                return 0
            }
            func run() throws -> Context {
                let ctx = try Context(arguments: parsed, environment: environment, terminal: terminal, command: command)
                context = ctx
                try command.run(ctx)
                // A store made for this command's input is moved into place before anything is printed.
                try ctx.keepNewStore()
                return ctx
            }
            let ctx: Context
            do { ctx = try run() } catch  where context?.newStoreTaken == true && context?.mayRunAgain == true {
                // Another process made the store meanwhile (a first add, another import): this
                // run's was removed, unprinted, and the command runs again into that one, as it
                // would have had it started a moment later. Before 2026-12-06 it was refused.
                ctx = try run()
            }
            try terminal.flush(pager: ctx.pagerCommand)
            return 0
        } catch {
            // A refused command leaves no store it made.
            context?.discardNewStore()
            let e = CLIError.from(error)
            terminal.flushDirect()
            for line in e.details { terminal.error(line) }
            terminal.error(e.message)
            return e.code.rawValue
        }
    }

    static var overviewHelp: String {
        var out = """
            OVERVIEW: Keep notes from the terminal. Every change is an event in an append-only log,
            so you can see the history of every note, travel back in time and restore any version.

            USAGE: notes [--store DIR] [--json] COMMAND [ARGS...]

            COMMANDS:

            """
        let width = (allCommands.map(\.name.count).max() ?? 8) + 2
        for c in allCommands {
            out += "  " + c.name + String(repeating: " ", count: width - c.name.count) + c.abstract + "\n"
        }
        out += "  help" + String(repeating: " ", count: width - 4) + "Show help for a command or a topic.\n"
        out += "\nGLOBAL OPTIONS (before or after the command):\n" + formatOptions(globalOptions)
        out += "\nIDS: notes are shown by the first 8 hex digits of their id; any unique prefix of 4 or more works.\n"
        out += "\nEXIT CODES:\n"
        for c in ExitCode.allCases { out += "  \(c.rawValue)  \(c.meaning)\n" }
        out += "\nSee `notes help COMMAND` for a command's options, and `notes help TOPIC` for "
        out += helpTopics.map(\.name).joined(separator: ", ") + "."
        return out
    }
}

let helpCommand = Command(
    "help", abstract: "Show help for a command or a topic.", usage: ["help [COMMAND | TOPIC]"], readsOnly: true
) { ctx in
    guard let topic = ctx.positionals.first else {
        ctx.terminal.print(NotesCommandLine.overviewHelp)
        return
    }
    // `help` is a command too, though not one of `allCommands` (the overview lists it last).
    let command = topic == "help" ? helpCommand : allCommands.first(where: { $0.name == topic })
    let concept = helpTopics.first(where: { $0.name == topic })
    // Some topics share a command's name (search, import, config): show the command, then the concept.
    if let command { ctx.terminal.print(command.help) }
    if let concept {
        if command != nil { ctx.terminal.print() }
        ctx.terminal.print(concept.title.uppercased() + "\n\n" + concept.text)
    }
    if command == nil && concept == nil {
        let names = allCommands.map(\.name) + helpTopics.map(\.name)
        let hint = suggestion(for: topic, among: names).map { "did you mean \"\($0)\"? " } ?? ""
        throw CLIError(
            "no help for \"\(topic)\"; \(hint)topics: \(helpTopics.map(\.name).joined(separator: ", "))", code: .usage)
    }
}

extension Context {
    /// The pager for long output: $NOTES_PAGER, else $PAGER, else `less -FIRX`.
    var pagerCommand: String? {
        if let p = environment["NOTES_PAGER"] { return p }
        if let p = environment["PAGER"] { return p }
        return config["pager"] ?? "less -FIRX"
    }
}
