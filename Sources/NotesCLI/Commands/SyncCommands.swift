import Basics
public import EventStore
import Glibc
import Notes

/// Opens a connection to a remote log from its address (a libpq connection string or URI).
///
/// `notes` itself does not link libpq, so that no command pays for loading it: its `sync` runs
/// `notes-sync`, the same tool with this set, from the directory `notes` is in.
public enum RemoteConnector {
    public typealias Connect = @Sendable (String) throws(RemoteLogError) -> any RemoteEventLog
    nonisolated(unsafe) public static var connect: Connect?
}

/// The address of the remote log: `$NOTES_REMOTE`, else the `remote` setting.
func remoteAddress(_ ctx: Context) -> String? {
    if let r = ctx.environment["NOTES_REMOTE"], !r.isEmpty { return r }
    return ctx.config["remote"]
}

/// The remote notebook's name: `--notebook`, else the `remote-notebook` setting, else `notes`.
func remoteNotebookName(_ ctx: Context) -> String {
    ctx.value("notebook") ?? ctx.config["remote-notebook"] ?? "notes"
}

/// Why `name` cannot name a remote notebook (the remote takes 1 to 200 characters on one
/// line), or nil.
func notebookNameProblem(_ name: String) -> String? {
    if name.trimmingSpaces.isEmpty { return "must be a name" }
    // Counted as the remote counts them: in code points.
    if name.unicodeScalars.count > 200 { return "must be at most 200 characters" }
    if name.unicodeScalars.contains(where: { breaksLine($0) || $0 == "\t" }) {
        return "must be one line without control characters"
    }
    return nil
}

/// Why an address may not be written to the config: one holding a password.
///
/// libpq allows spaces around `=`, percent-encodes URI query keys, and expands a `dbname` that is
/// itself a connection string: the address is read with all three undone, and every URI in it
/// (a nested one too) is checked for a `user:password@`.
func passwordProblem(_ address: String) -> String? {
    var bytes: [UInt8] = []
    let raw = Array(address.lowercased().utf8)
    var i = 0
    while i < raw.count {
        if raw[i] == UInt8(ascii: "%"), i + 2 < raw.count,
            let v = UInt8(String(decoding: raw[(i + 1)...(i + 2)], as: UTF8.self), radix: 16)
        {
            bytes.append(v)
            i += 3
        } else {
            if raw[i] != UInt8(ascii: " ") && raw[i] != UInt8(ascii: "\t") { bytes.append(raw[i]) }
            i += 1
        }
    }
    if String(decoding: bytes, as: UTF8.self).contains("password=") { return "holds a password" }
    // Whatever the scrubber would hide may be a password (`postgresql://ana:pa/ss@db`, which libpq
    // reads as host `ana`, port `pa`): never written to the config.
    if PasswordScrubbing.scrubbed(address) != address { return "holds a password" }
    let colon = UInt8(ascii: ":")
    let slash = UInt8(ascii: "/")
    var j = 0
    while j + 2 < bytes.count {
        defer { j += 1 }
        guard bytes[j] == colon, bytes[j + 1] == slash, bytes[j + 2] == slash else { continue }
        // libpq looks for the `@` up to the first '/' ("ana:p?x@db" has the password "p?x").
        let authority = bytes[(j + 3)...].prefix { $0 != slash }
        if let at = authority.lastIndex(of: UInt8(ascii: "@")), authority[..<at].contains(colon) {
            return "holds a password"
        }
    }
    return nil
}

/// Why an address is not a connection string libpq could read, or nil: a URI
/// (`postgresql://`, `postgres://`) is left to libpq; keyword/value pairs are read as libpq reads
/// them (`keyword = value`, spaces around `=` allowed, a value single-quoted or up to the next
/// space, `\` escaping the byte after it). The keywords themselves are libpq's to check, at
/// `notes sync`; this catches what is not a connection string at all, when it is set.
func connectionStringProblem(_ address: String) -> String? {
    let b = Array(address.utf8)
    if b.starts(with: "postgresql://".utf8) || b.starts(with: "postgres://".utf8) { return nil }
    // C's isspace, as libpq's parser uses.
    func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (0x09...0x0D).contains(c) }
    // libpq takes text without "=" for a database's name: spaces alone named a database "   ".
    if !b.isEmpty, b.allSatisfy(isSpace) { return "is blank" }
    var i = 0
    while true {
        while i < b.count, isSpace(b[i]) { i += 1 }
        if i >= b.count { return nil }
        let start = i
        while i < b.count, !isSpace(b[i]), b[i] != UInt8(ascii: "=") { i += 1 }
        let keyword = String(decoding: b[start..<i], as: UTF8.self)
        while i < b.count, isSpace(b[i]) { i += 1 }
        guard i < b.count, b[i] == UInt8(ascii: "=") else {
            return keyword.isEmpty ? "has \"=\" without a keyword before it" : "has no \"=\" after \"\(keyword)\""
        }
        guard !keyword.isEmpty else { return "has \"=\" without a keyword before it" }
        i += 1
        while i < b.count, isSpace(b[i]) { i += 1 }
        if i < b.count, b[i] == UInt8(ascii: "'") {
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "'") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            guard i < b.count else { return "has a quoted value of \"\(keyword)\" that is not closed" }
            i += 1
        } else {
            while i < b.count, !isSpace(b[i]) { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
        }
    }
}

let remoteCommand = Command(
    "remote", abstract: "Set, show or forget the remote log this store syncs with (PostgreSQL).",
    usage: ["remote set ADDRESS [--notebook NAME]", "remote show", "remote unset"],
    discussion: """
        ADDRESS is a libpq connection string or URI (`host=db.example dbname=notes`,
        `postgresql://ana@db.example/notes?sslmode=verify-full`, `service=notes`). It never holds a
        password: libpq reads it from ~/.pgpass or the service file, as psql does. $NOTES_REMOTE
        overrides the setting. NAME is the remote notebook (default "notes"); a store that joined
        one syncs with its own, which `remote show` names (and the config's, when it names another).
        """,
    options: [OptionSpec("notebook", value: "NAME", "the remote notebook to sync with")], readsOnly: true
) { ctx in
    try ctx.expectPositionals(1...2)
    switch try ctx.positional(0, "set, show or unset") {
    case "set":
        let address = try ctx.positional(1, "ADDRESS")
        // An empty address (an unset shell variable) names no remote: said with the forms and how
        // to forget the remote (before 2026-12-07, "remote must be a connection string, not """).
        if address.isEmpty {
            throw CLIError(
                "the address is empty: give a libpq connection string (`notes remote set \"host=db.example "
                    + "dbname=notes\"`) or URI (`notes remote set postgresql://ana@db.example/notes`); "
                    + "to forget the remote, `notes remote unset`")
        }
        if let problem = passwordProblem(address) {
            throw CLIError(
                "the address \(problem); keep passwords in ~/.pgpass or a service file, never in the config")
        }
        if let problem = connectionStringProblem(address) {
            throw CLIError(
                "the address \(problem): give a libpq connection string (host=db.example dbname=notes) or URI "
                    + "(postgresql://ana@db.example/notes)")
        }
        if let name = ctx.value("notebook"), let problem = notebookNameProblem(name) {
            throw CLIError("the notebook \(problem), not \"\(name)\"")
        }
        // Both lines in one rewrite, each replacing a bad line of its key (before 2026-12-07 the
        // remote was written first, and a bad `remote-notebook` line failed the whole command).
        var changes: [(key: String, value: String?)] = [("remote", address)]
        if let name = ctx.value("notebook") { changes.append(("remote-notebook", name)) }
        let path = try Config.set(changes, environment: ctx.environment)
        if !ctx.json { ctx.terminal.print("remote set in \(path)") }
    case "unset":
        try ctx.expectPositionals(1...1)
        let wasSet = ctx.config["remote"] != nil || ctx.config["remote-notebook"] != nil
        let path = try Config.set([("remote", nil), ("remote-notebook", nil)], environment: ctx.environment)
        if !ctx.json { ctx.terminal.print(wasSet ? "remote removed from \(path)" : "no remote was set in \(path)") }
    case "show":
        try ctx.expectPositionals(1...1)
        // A password in $NOTES_REMOTE is not printed (the config never holds one).
        let address = remoteAddress(ctx).map(PasswordScrubbing.scrubbed)
        let from = ctx.environment["NOTES_REMOTE"].map { $0.isEmpty ? "config" : "$NOTES_REMOTE" } ?? "config"
        // The notebook the store joined, which a plain sync uses: before 2026-12-08 the config's
        // name (else "notes") was shown, which a store cloned with --notebook does not sync with
        // (a hostile trial). No store is made to show it, and a store that cannot be read (locked
        // out, damaged) leaves the config's name shown, as before.
        var joined: (id: Identifier, name: String?)?
        if let path = try? ctx.storePath(), access(path + "/data.mdb", F_OK) == 0, let book = try? ctx.notebook(),
            let id = (try? book.syncState())?.notebook
        {
            joined = (id, (try? book.syncedNotebookName()) ?? nil)
        }
        let configured = ctx.config["remote-notebook"]
        let notebook: String
        if let joined {
            var text =
                (joined.name ?? "(its name is recorded at the next sync)") + " (this store's, \(joined.id.uuidString))"
            if let configured, configured != joined.name {
                text += "; the config names \"\(configured)\", which a plain sync does not use"
            }
            notebook = text
        } else {
            notebook = remoteNotebookName(ctx)
        }
        if ctx.json {
            ctx.printJSON(
                .object([
                    ("remote", address.map { .string($0) } ?? .null), ("from", .string(from)),
                    (
                        "notebook",
                        joined.map { j in j.name.map { .string($0) } ?? .null } ?? .string(remoteNotebookName(ctx))
                    ),
                    ("notebookId", joined.map { .string($0.id.uuidString) } ?? .null),
                    ("configNotebook", configured.map { .string($0) } ?? .null),
                ]))
        } else if let address {
            ctx.printTable(
                [["remote", address + "  (\(from))"], ["notebook", notebook]],
                styles: [ctx.terminal.dim])
        } else {
            throw CLIError("no remote is set; set one with `notes remote set ADDRESS`", code: .notFound)
        }
    case let other:
        throw CLIError("unknown action \"\(other)\" of `notes remote`; use set, show or unset")
    }
}

let syncCommand = Command(
    "sync", abstract: "Exchange events with the remote log: pull, merge, push.",
    usage: ["sync [--join] [--notebook NAME]", "sync --init [--notebook NAME]"],
    discussion: """
        Pulls what other devices pushed, rebases this device's events on top (a body edited on
        both sides is merged three ways; where both changed the same lines, both are kept between
        conflict markers and the note is listed by `notes conflicts`; a category or tag renamed
        here to a name another device gave its own is merged into it), and pushes them. Where two
        devices' syncs crossed (each pushed before it pulled the other's), it repairs what they
        left: same-named categories or tags are joined, and a note under one another device
        deleted or merged is moved out of it. Commands never wait for the network: events wait
        in the outbox until a sync sends them.
        A store that never synced and holds notes must say --join; an empty one clones the
        notebook. A note imported here from a Markdown file that another device imported too (the
        same path in the folder, the same bytes), unchanged since, is dropped for the other
        device's: one folder imported on two devices makes each note once. A remote restored from an older backup is given back the events this store
        confirmed and it lost. --init creates (or upgrades) the remote's schema and the notebook:
        an administrator's step.
        Exit codes: 0 done, 2 no remote, an address that is not valid, --join needed (or given
        with --init), 4 conflicts remain to resolve, 5 the logs diverged, the notebook
        differs, the remote refused this role or an event is larger than the remote takes, its
        server takes no writes (a standby) or its log is damaged (changed by hand), 6 the
        remote is unreachable (nothing is lost: the outbox stays for the next sync).
        """,
    options: [
        OptionSpec("join", "propose this store's own history to the remote (its first sync)"),
        OptionSpec("init", "create or upgrade the remote schema and the notebook"),
        OptionSpec(
            "notebook", value: "NAME",
            "the remote notebook (default: the store's own, else the remote-notebook setting, else notes)"),
    ]
) { ctx in
    try ctx.expectPositionals(0...0)
    // Two steps, often of two people: --init alone made the schema and said nothing of the join.
    if ctx.flag("init") && ctx.flag("join") {
        throw CLIError(
            "--init and --join are two steps: run `notes sync --init` (an administrator, once), "
                + "then `notes sync --join`")
    }
    guard let connect = RemoteConnector.connect else { try execSyncTool() }
    guard let address = remoteAddress(ctx) else {
        throw CLIError("no remote is set; set one with `notes remote set ADDRESS` (or $NOTES_REMOTE)")
    }
    // What `remote set` refuses is refused from $NOTES_REMOTE and the config file too: libpq
    // would take `garbage` for a database's name, and the sync would fail as unreachable (exit 6).
    if let problem = connectionStringProblem(address) {
        let from = ctx.environment["NOTES_REMOTE"].map { $0.isEmpty ? "the config" : "$NOTES_REMOTE" } ?? "the config"
        throw CLIError(
            "the address in \(from) \(problem): give a libpq connection string (host=db.example dbname=notes) or URI "
                + "(postgresql://ana@db.example/notes); see `notes remote show`")
    }
    let name = remoteNotebookName(ctx)
    if let problem = notebookNameProblem(name) { throw CLIError("the notebook \(problem), not \"\(name)\"") }
    let remote: any RemoteEventLog
    do {
        remote = try connect(address)
    } catch let error as RemoteLogError {
        switch error {
        case .unreachable, .connectionLost, .timedOut:
            // Without a store (a first sync that would clone) or for --init, nothing waits to be
            // pushed: "the outbox is kept" was untrue there (before 2026-12-06; a new user's trial).
            let store = try ctx.storePath()
            if ctx.flag("init") || access(store + "/data.mdb", F_OK) != 0 {
                throw CLIError(error.description + "; nothing was changed", code: .remoteUnreachable)
            }
        default: break
        }
        throw error
    }
    if ctx.flag("init") {
        let change = try remote.initialize()
        let id = try remote.notebook(named: name, create: true)
        let what: String
        switch change {
        case .created(let v): what = "created the remote schema (version \(v))"
        case .upgraded(let from, let to): what = "upgraded the remote schema from version \(from) to \(to)"
        case .current(let v): what = "the remote schema is current (version \(v))"
        }
        if ctx.json {
            ctx.printJSON(
                .object([("schema", .string(what)), ("notebook", .string(name)), ("id", .string(id.uuidString))]))
        } else {
            // --init joins no store: before 2026-12-07 it said nothing of the next step, and a
            // note added before the first sync then needed --join, to a user's surprise.
            ctx.terminal.print(
                "\(what); notebook \"\(name)\" is \(id.uuidString); to join it, run `notes sync` from a store "
                    + "without notes (it clones the notebook) or `notes sync --join` from one with notes")
        }
        return
    }
    let book = try ctx.notebook()
    let state = try book.syncState()
    // Only --join (the first device) creates the notebook: a mistyped name is refused, not made.
    let id: Identifier
    // The name the sync found the notebook by, recorded for `notes remote show`.
    var foundBy: String?
    let knownName = try book.syncedNotebookName()
    do {
        if let joined = state.notebook, ctx.value("notebook") == nil {
            // A store holds one notebook: with no name given on the command line, it syncs with
            // its own. Before 2026-12-08 the default name ("notes") was looked up, so a store that
            // joined or cloned another with --notebook was refused by every later plain `notes
            // sync` (exit 5; a new user's trial); and so was a store whose config names another
            // notebook (a hostile trial): it now syncs with its own, warned that the config's
            // name is not used. A name given with --notebook that is not its own is still refused.
            id = joined
            if let configured = ctx.config["remote-notebook"], configured != knownName {
                // The config may name the store's own notebook under a name not recorded yet
                // (a store that synced before names were recorded, or a notebook renamed).
                if (try? remote.notebook(named: configured, create: false)) == joined {
                    foundBy = configured
                } else {
                    ctx.terminal.warn(
                        "the config names notebook \"\(configured)\", not this store's, "
                            + (knownName.map { "\"\($0)\"" } ?? joined.uuidString)
                            + ": a store holds one notebook, and a plain sync uses its own; `notes config unset "
                            + "remote-notebook` removes the line, or use another store (--store DIR) for \"\(configured)\""
                    )
                }
            }
        } else {
            id = try remote.notebook(named: name, create: state.notebook == nil && ctx.flag("join"))
            foundBy = name
        }
    } catch RemoteLogError.permissionDenied(let detail) where detail.contains("no notebook named") {
        // What to do, beside what the server said (before 2026-12-06 the refusal alone).
        throw CLIError(
            RemoteLogError.permissionDenied(detail).description
                + "; check the name (`notes remote show`, --notebook NAME), ask a writer of the notebook to share "
                + "it with this role, or create it with `notes sync --join` from a store that never synced",
            code: .storeUnusable)
    }
    let report: SyncReport
    do {
        report = try book.sync(with: remote, notebook: id, join: ctx.flag("join"))
    } catch SyncError.otherNotebook(let local, let asked) {
        // The name given, and what to do: the two ids alone left a user who typed a name to
        // guess which was which (before 2026-12-06; a new user's trial).
        throw CLIError(
            "this store syncs with another notebook (\(local.uuidString)) than \"\(name)\" (\(asked.uuidString)): "
                + "a store holds one notebook; give its own name with --notebook or `notes remote set ADDRESS "
                + "--notebook NAME`, or use another store (--store DIR) for \"\(name)\"",
            code: .storeUnusable)
    } catch SyncError.remote(.permissionDenied(let detail)) where detail.contains(" may read notebook ") {
        // A reader with events to push. Before 2026-12-08 the server's refusal as it came, the
        // notebook named twice ("notebook UUID: role bob may read notebook 'team' ...") and
        // what to do left vague (a hostile trial).
        throw CLIError(readerRefusal(detail, waiting: (try? book.syncState().pending) ?? 0), code: .storeUnusable)
    }
    if let foundBy, foundBy != knownName { try book.recordSyncedNotebookName(foundBy) }
    // A clone is kept though notes in it hold conflicts (exit 4 below): they are the remote's.
    try ctx.keepNewStore()
    if ctx.json {
        ctx.printJSON(
            .object([
                ("pushed", .int(report.pushed)), ("pulled", .int(report.pulled)), ("merged", .int(report.merged)),
                ("conflicts", .int(report.conflicts)), ("namesMerged", .int(report.namesMerged)),
                ("refiled", .int(report.refiled)), ("importsJoined", .int(report.importsJoined)),
                ("conflictsPulled", .int(report.conflictsPulled)),
                ("unresolvedConflicts", .int(report.unresolvedConflicts)),
                ("rounds", .int(report.rounds)),
                ("remotePosition", .uint(report.remoteHead)), ("restored", .int(report.restored)),
                ("reopened", .int(report.reopened)), ("confirmed", .int(report.confirmed)),
            ]))
    } else {
        ctx.terminal.print(syncSummary(report))
    }
    if report.unresolvedConflicts > 0 {
        throw CLIError(
            counted(report.unresolvedConflicts, "note")
                + (report.unresolvedConflicts == 1 ? " holds" : " hold")
                + " a conflict; see `notes conflicts`, edit each to resolve it",
            code: .conflict)
    }
}

/// What `notes sync` says when the remote refuses a push of a role that may only read the
/// notebook: the server's `role R may read notebook 'N' but not append to it: ...`, said once,
/// with what waits here and what a writer runs to let this role push.
func readerRefusal(_ detail: String, waiting: UInt64) -> String {
    guard let may = detail.firstRange(of: " may read notebook "),
        let role = detail[..<may.lowerBound].ranges(of: "role ").last,
        let but = detail[may.upperBound...].firstRange(of: " but not append")
    else { return RemoteLogError.permissionDenied(detail).description }
    var who = String(detail[role.upperBound..<may.lowerBound])
    // The server quotes an identifier that needs it ("Ana B"); the SQL below quotes it as a literal.
    if who.count >= 2, who.hasPrefix("\""), who.hasSuffix("\"") {
        who = String(who.dropFirst().dropLast()).replacing("\"\"", with: "\"")
    }
    // The notebook's name comes as an SQL literal ('team'), as the advice needs it.
    let literal = String(detail[may.upperBound..<but.lowerBound])
    let waits =
        waiting == 1
        ? "1 event waits here, unpushed" : "\(waiting) events wait here, unpushed"
    return "role \(who) may read notebook \(literal) but not push to it: \(waits) (nothing is lost; what others "
        + "pushed was pulled); a writer of the notebook lets it push with "
        + "SELECT notes_log.share(\(literal), '\(who.replacing("'", with: "''"))', true)"
}

/// The line `notes sync` prints: what moved, and what else the sync did.
func syncSummary(_ report: SyncReport) -> String {
    var line =
        "pushed \(report.pushed), pulled \(report.pulled), merged \(report.merged), conflicts \(report.conflicts)"
    // Events an earlier sync sent (one killed before the remote's answer came back) are
    // confirmed by this one: without a word, "pushed 0, pulled 0" read as nothing done.
    // They are confirmed in place, or by a rebase when other devices' events came with them.
    // Not always an earlier sync's: a store joining with a history another device pushed too (one
    // `import-history` of the same file on both: the ids derive from the input) never sent them.
    // A conflict another device recorded comes with the pull: "conflicts 0" alone, then exit 4
    // for the note it flags, read as a contradiction (before 2026-12-07).
    if report.conflictsPulled > 0 {
        line += ", " + counted(report.conflictsPulled, "conflict") + " pulled from another device"
    }
    let earlier = report.confirmed - min(report.confirmed, report.pushed)
    if earlier > 0 { line += ", " + counted(earlier, "event") + " the remote already held confirmed" }
    if report.namesMerged > 0 {
        line +=
            ", " + counted(report.namesMerged, "same-named category or tag", plural: "same-named categories or tags")
            + " joined"
    }
    if report.refiled > 0 {
        line += ", " + counted(report.refiled, "note") + " moved out of categories or tags deleted or merged elsewhere"
    }
    if report.importsJoined > 0 {
        line +=
            ", " + counted(report.importsJoined, "note")
            + " imported here from files another device had imported kept once"
    }
    if report.restored > 0 {
        line += ", " + counted(report.restored, "confirmed event") + " given back to the restored remote"
    }
    if report.reopened > 0 {
        line += ", " + counted(report.reopened, "confirmed event") + " the restored remote had lost pushed again"
    }
    return line + "; at position \(report.remoteHead)"
}

/// Runs `notes-sync` from the directory of this executable with the same arguments; returns only
/// on failure.
func execSyncTool() throws -> Never {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { throw CLIError("cannot find this program's directory to run notes-sync", code: .failure) }
    let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let dir = exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
    let tool = dir + "/notes-sync"
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup(tool)]
    for i in 1..<Int(CommandLine.argc) { argv.append(CommandLine.unsafeArgv[i].flatMap { strdup($0) }) }
    argv.append(nil)
    execv(tool, argv)
    let reason = String(cString: strerror(errno))
    throw CLIError(
        "cannot run \(tool) (\(reason)); `notes sync` needs notes-sync beside notes (swift build --product notes-sync)",
        code: .failure)
}

let conflictsCommand = Command(
    "conflicts", abstract: "List notes whose body holds a sync conflict not resolved yet.", usage: ["conflicts"],
    discussion: """
        A sync that finds the same lines of a body changed on two devices keeps both between
        conflict markers (<<<<<<< edit of v3 by ana@laptop ... ======= ... >>>>>>> v4, first in the shared log). Edit the note to
        resolve it: the next edit of its body removes it from this list.
        """,
    readsOnly: true
) { ctx in
    try ctx.expectPositionals(0...0)
    let book = try ctx.notebook()
    let notes = try book.conflictedNotes()
    if ctx.json {
        ctx.printJSON(
            .array(
                notes.map { n in
                    .object([
                        ("id", .string(n.id.uuidString)), ("title", .string(n.title)), ("version", .uint(n.version)),
                        ("conflict", .string(n.properties[NoteProperty.conflict.rawValue] ?? "")),
                    ])
                }))
        return
    }
    guard !notes.isEmpty else {
        ctx.terminal.print("no conflicts")
        return
    }
    ctx.printTable(
        notes.map { n in
            [shortID(n.id), truncate(n.title, 60), "v\(n.version)", n.properties[NoteProperty.conflict.rawValue] ?? ""]
        }, styles: [ctx.terminal.cyan, { $0 }, ctx.terminal.dim, ctx.terminal.dim])
}

extension Context {
    /// Where the store stands with its remote, when it syncs (it joined a notebook, or a remote
    /// is set): what marks versions still in the outbox (`v5*`, `"pending": true`). Nil otherwise.
    func syncMarks() throws -> SyncState? {
        let state = try notebook().syncState()
        return state.notebook != nil || remoteAddress(self) != nil ? state : nil
    }

    /// `*` after a version still in the outbox of a store that syncs, else nothing.
    func pendingMark(_ id: Identifier, version: UInt64, state: SyncState?) throws -> String {
        guard let state, state.pending > 0 else { return "" }
        // Nothing confirmed yet: every version is pending, and none needs looking up.
        if state.confirmed == 0 { return "*" }
        guard let position = try notebook().position(of: id, version: version) else { return "" }
        return state.isPending(position: position) ? "*" : ""
    }
}
