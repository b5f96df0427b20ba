import Basics
import EventStore
import Glibc
import LMDB
import Notes
import SearchEngine

/// Everything a command needs: its arguments, the environment, the terminal and the store.
final class Context: @unchecked Sendable {
    let arguments: ParsedArguments
    let environment: [String: String]
    let terminal: Terminal
    let command: Command
    let clock: @Sendable () -> Int64
    let config: Config
    private var openedNotebook: Notebook?
    /// Category names already read: a listing names the same few categories on every row.
    private var categoryNames: [Identifier: String?] = [:]
    private var tagNames: [Identifier: String] = [:]
    /// The bar of a rebuild in progress, cleared when the open that ran it ends.
    private var rebuildProgress: RebuildProgress?
    /// The store this run is making for a command that takes input (``makesStoreOnceAccepted``)
    /// where there was none: made in a private folder (`staging`) beside where it goes, and
    /// moved to `target` by ``keepNewStore()`` once the command has accepted its input; a
    /// refused command removes it (``discardNewStore()``), so that it leaves no trace. Before
    /// 2026-12-06 a refused import or sync into a folder that did not exist left the folder,
    /// and an empty store in it.
    private var newStore: (staging: String, target: String, lock: Int32)?
    /// Set when the store this run made was not kept because another process made the store
    /// folder meanwhile (``keepNewStore()``): the command may then run again, into that store.
    private(set) var newStoreTaken = false

    init(arguments: ParsedArguments, environment: [String: String], terminal: Terminal, command: Command)
        throws(CLIError)
    {
        self.arguments = arguments
        self.environment = environment
        self.terminal = terminal
        self.command = command
        // `config set KEY` and `config unset KEY` repair a file that sets KEY twice (or to a bad
        // value), and so do `remote set` and `remote unset` the remote, which the refusal of a bad
        // one names (before 2026-12-07 they failed on the line they would have replaced), and
        // the remote notebook where they replace it: `remote unset`, and `remote set` with
        // `--notebook` (before 2026-12-07 that failed on a bad `remote-notebook` line).
        let args = arguments.positionals
        let sets = args.count >= 1 && ["set", "unset"].contains(args[0])
        var repairing: Set<String> = []
        if command.name == "config" && sets && args.count >= 2 { repairing = [args[1]] }
        if command.name == "remote" && sets {
            repairing = ["remote"]
            if args[0] == "unset" || arguments.value("notebook") != nil { repairing.insert("remote-notebook") }
        }
        config = try Config.load(environment: environment, repairing: repairing)
        // Lines of keys this version does not know are ignored, each said once on stderr (a
        // command run again into a store another process made reads the file again).
        for warning in config.warnings { terminal.warnOnce(warning) }
        if let fixed = environment["NOTES_NOW"] {
            guard let micros = RFC3339.parse(fixed) else {
                throw CLIError("NOTES_NOW=\"\(fixed)\" is not an RFC 3339 instant (e.g. 2026-11-29T12:00:00Z)")
            }
            clock = { micros }
        } else {
            clock = EventStore.systemClock
        }
        if arguments.has("no-color") || config["color"] == "never" { terminal.colorAllowed = false }
        if arguments.has("no-pager") || json { terminal.pagerAllowed = false }
    }

    var json: Bool { arguments.has("json") }
    var now: Int64 { clock() }

    var instantParser: InstantParser { InstantParser(now: now, timeZone: .system) }

    // MARK: Arguments

    func value(_ name: String) -> String? { arguments.value(name) }
    /// Every value of a repeatable option, in the order given.
    func values(_ name: String) -> [String] { arguments.allValues(name) }
    func flag(_ name: String) -> Bool { arguments.flags.contains(name) }

    /// A tag named on the command line, as the listing shows it (`#work`) or bare (`work`): one
    /// leading `#` is dropped, so that a tag's shown name names it (a tag whose own name starts
    /// with `#` is named with two).
    static func tagName(_ given: String) -> String {
        let trimmed = Notebook.trim(given)
        return trimmed.hasPrefix("#") ? String(trimmed.dropFirst()) : given
    }

    /// Every `--tag` value, as ``tagName(_:)`` reads it.
    var tagValues: [String] { values("tag").map(Self.tagName) }
    var positionals: [String] { arguments.positionals }

    /// Whether `-`, standard input, is among the arguments. One after `--` is text: `notes add
    /// -- -` adds a note titled "-" (before 2026-12-07 it said "missing TITLE").
    var standardInputGiven: Bool { positionals.prefix(arguments.optionsEndedAt ?? positionals.count).contains("-") }

    /// The positional arguments but the `-` that stands for standard input.
    var textArguments: [String] {
        let end = arguments.optionsEndedAt ?? positionals.count
        return positionals.enumerated().filter { $0.offset >= end || $0.element != "-" }.map(\.element)
    }

    /// The error for an argument one too many, `advice` after it; one that looks like an option
    /// but came after `--` is text, and the error says so (before 2026-12-07 `notes add -- -x
    /// --body B` said to quote a title with spaces and to give the body with --body).
    func unexpectedArgument(_ extra: String, _ advice: String) -> CLIError {
        if let end = arguments.optionsEndedAt, extra.hasPrefix("-"), positionals[end...].contains(extra) {
            return CLIError(
                "unexpected argument \"\(extra)\": after --, every argument is text, not an option; "
                    + "give the options before --")
        }
        return CLIError("unexpected argument \"\(extra)\"; \(advice)")
    }

    func positional(_ index: Int, _ label: String) throws(CLIError) -> String {
        guard index < positionals.count else {
            throw CLIError("missing \(label); usage: notes \(usageForm)")
        }
        return positionals[index]
    }

    /// The usage line of the form given: for a command with actions (`categories rename OLD
    /// NEW`), the form whose action is the first argument; with no argument, every form (`remote`
    /// alone named only `remote set` before 2026-12-06); else the command's first form.
    var usageForm: String {
        let forms = command.usage
        guard let action = positionals.first else { return forms.joined(separator: " | notes ") }
        return forms.first { $0.split(separator: " ").dropFirst().first.map(String.init) == action } ?? forms[0]
    }

    /// `usage`: the form of the command given, else ``usageForm``.
    func expectPositionals(_ range: ClosedRange<Int>, usage: String? = nil) throws(CLIError) {
        let form = usage ?? usageForm
        if positionals.count > range.upperBound {
            throw unexpectedArgument(positionals[range.upperBound], "usage: notes \(form) (quote text with spaces)")
        }
        if positionals.count < range.lowerBound {
            throw CLIError("missing argument; usage: notes \(form)")
        }
    }

    /// A non-negative integer option, or nil when absent.
    func integer(_ name: String, min: Int = 0) throws(CLIError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let v = Int(text), v >= min else {
            // Digits alone that do not fit are a number too large, not a wrong kind of value.
            if Int(text) == nil, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                throw CLIError("--\(name) \(text) is too large; the most is \(Int.max)")
            }
            throw CLIError("--\(name) must be a whole number of at least \(min), not \"\(text)\"")
        }
        return v
    }

    /// Parses an instant option (`2h ago`, `yesterday`, RFC 3339...). `now` is never before the
    /// log's last event: an import dated a few hours ahead holds every later event at its
    /// instant, which `--as-of now` must still show (before 2026-12-06 it showed none of them).
    ///
    /// `option` names where the text was given (`--since`, or `FROM` for an argument), and
    /// `versions` says that it takes a version too: a refusal names both, the text and the forms
    /// it takes (before 2026-12-06, `--at -1` said only "unrecognized date").
    ///
    /// `upperBound`: the text ends a range (`log --until`), where a date alone (`2026-12-07`,
    /// `today`) takes in the whole day: its last microsecond, not its midnight.
    func instant(_ text: String, option: String, versions: Bool = false, upperBound: Bool = false) throws -> Int64 {
        var parser = instantParser
        if InstantParser.namesNow(text) { parser.logEnd = try notebook().lastRecordedAt() }
        do {
            if upperBound { return try parser.parseUpperBound(text) }
            return try parser.parse(text)
        } catch {
            throw CLIError(error.message(option: option, versions: versions))
        }
    }

    // MARK: Store

    /// The store directory: --store, else $NOTES_STORE, else the config file's `store`, else
    /// $XDG_DATA_HOME/notes, else ~/.local/share/notes. A leading `~` or `~/` in any of the three
    /// settings is $HOME, as a shell would have read it unquoted (the config file is read by no
    /// shell, and a quoted `"~/notes"` made a directory named `~` in the current one).
    func storePath() throws(CLIError) -> String {
        if let s = value("store") {
            guard !s.isEmpty else { throw CLIError("--store needs a directory path, not an empty string") }
            return try expandingHome(s, from: "--store")
        }
        if let s = environment["NOTES_STORE"], !s.isEmpty { return try expandingHome(s, from: "NOTES_STORE") }
        if let s = config["store"] { return try expandingHome(s, from: "store in \(config.path ?? "the config file")") }
        if let x = environment["XDG_DATA_HOME"], x.hasPrefix("/") { return x + "/notes" }
        guard let home = environment["HOME"], !home.isEmpty else {
            throw CLIError(
                "cannot find the store: HOME is not set; give --store DIR or set NOTES_STORE", code: .storeUnusable)
        }
        return home + "/.local/share/notes"
    }

    /// `path` with a leading `~` or `~/` replaced by $HOME; `setting` names where it was given.
    func expandingHome(_ path: String, from setting: String) throws(CLIError) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw CLIError(
                "\(setting) starts with ~, but HOME is not set to a directory; give the store's absolute path",
                code: .storeUnusable)
        }
        return home + path.dropFirst()
    }

    var actor: String {
        if let a = environment["NOTES_ACTOR"], !a.isEmpty { return a }
        let user = environment["USER"] ?? environment["LOGNAME"] ?? Self.accountName() ?? String(getuid())
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        let hostName = String(decoding: host.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(user)@\(hostName.isEmpty ? "localhost" : hostName)"
    }

    /// The name of this process's user account in `/etc/passwd`, when it has one: cron, systemd
    /// units and containers run commands without `USER` or `LOGNAME`, whose events were recorded
    /// as `0@host` before 2026-12-07 rather than `root@host`. The file is read rather than asked
    /// through `getpwuid`, which a statically linked program cannot use (NSS loads libraries).
    static func accountName() -> String? {
        guard let bytes = try? readFile("/etc/passwd", upTo: 1 << 22) else { return nil }
        let uid = String(getuid())
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, !fields[0].isEmpty, fields[2].elementsEqual(uid.utf8) else { continue }
            return String(decoding: fields[0], as: UTF8.self)
        }
        return nil
    }

    /// Opens the notebook once. Creates the store (and its parent directories) on first use.
    func notebook() throws -> Notebook {
        if let n = openedNotebook { return n }
        let path = try storePath()
        let actor = self.actor
        if !readsOnly {
            // The actor is stored in every event for good and shown in history's one-line rows.
            guard !actor.unicodeScalars.contains(where: breaksLine), actor.count <= 200 else {
                throw CLIError(
                    "NOTES_ACTOR must be one line of at most 200 characters, without control characters; "
                        + "give a name such as ana@laptop")
            }
        }
        var st = stat()
        var exists = stat(path, &st) == 0
        // A path through a file (`--store notes.txt/sub`) can never hold a store: said as `add`
        // says it (exit 5), not "no store yet; add a note", which `add` then refused (before
        // 2026-12-07).
        if !exists && errno == ENOTDIR {
            throw CLIError(
                "\(path) is not a notes store (it is not a folder); choose another path with --store",
                code: .storeUnusable)
        }
        // A path not made yet in a folder of a file system the kernel makes up, where no folder
        // can be made either (before this a read said "no store yet; add a note", and `add`
        // "storage error: mkdir /proc/self/notes: No such file or directory").
        if !exists, let above = EventStore.kernelFolder(above: path) {
            throw CLIError(
                StoreError.notAStore(
                    path: path,
                    detail: "it would be in \(above), a folder of a file system the kernel makes up, "
                        + "where no folder can be made"
                ).description + "; choose another path with --store", code: .storeUnusable)
        }
        // A directory without a data file holds no store yet, and only a command that makes
        // notes from nothing (add, the imports, a clone, `categories add`) makes one there:
        // before 2026-12-06 `notes list` with the store set to a folder of other files
        // (~/Documents) left LMDB's data.mdb and lock.mdb in it, and `notes pin ID`,
        // `notes categories` or `notes rebuild` on a new machine left an empty store behind. A
        // data.mdb that is a link to nothing is there, and the open says what it is.
        func noStore() -> Bool {
            var dataFile = stat()
            return !exists
                || ((st.st_mode & S_IFMT) == S_IFDIR && lstat(path + "/data.mdb", &dataFile) != 0 && errno == ENOENT)
        }
        // A folder where no store can be made is said to be one by every command, as `add`
        // says it (before 2026-12-07 a read said "no store yet; add a note"). Such a folder
        // holds no data file, so a store's own folder is not asked about its file system.
        if exists, noStore(), EventStore.isKernelFolder(path) {
            throw CLIError(
                StoreError.notAStore(path: path, detail: EventStore.kernelFolderDetail).description
                    + "; choose another path with --store", code: .storeUnusable)
        }
        if !createsStore, noStore() {
            // A first import making the store aside is no store yet, but the answer says so:
            // before 2026-12-06 it was "no store yet" while the import ran.
            if let maker = Self.storeBeingMade(at: path) {
                throw CLIError(
                    "no store at \(path) yet: `notes \(maker.command)` (pid \(maker.pid)) is making it; "
                        + "run the command again once it has ended", code: .notFound)
            }
            // The import may have moved its store into place meanwhile.
            exists = stat(path, &st) == 0
            if noStore() {
                throw CLIError(
                    "no store at \(path) yet; add a note with `notes add TITLE` (or choose a store with --store)",
                    code: .notFound)
            }
        }
        var openPath = path
        if !readsOnly {
            if makesStoreOnceAccepted, let (staging, lock) = stagingDirectory(for: path) {
                newStore = (staging, path, lock)
                openPath = staging
            } else {
                try makeParents(of: path)
            }
        }
        var options = Notebook.Options(actor: actor, command: "notes \(command.name)")
        options.clock = clock
        // The log's time never goes back: an event at a pretended future would hold every later
        // one of the store at that instant (and out of `list --as-of now`). The same day of slack
        // as `import` gives the instants of a file; reads take any instant.
        if environment["NOTES_NOW"] != nil { options.maximumClockLead = 86_400_000_000 }
        options.maxBodyBytes = try bodyLimitSetting()
        options.searchLanguage = config["search-language"].flatMap { SearchLanguage($0) } ?? .english
        // A rebuild (at open when the projections' code changed, or `notes rebuild`) can take a
        // while on a big store: a bar on a terminal, nothing otherwise.
        if terminal.stderrIsTTY {
            let progress = RebuildProgress { [terminal] in
                ProgressBar(label: "rebuilding projections", terminal: terminal)
            }
            options.progress = { done, total in progress.update(done, of: total) }
            rebuildProgress = progress
        }
        defer { rebuildProgress?.finish() }
        // Another process's write (a long import, a writer stopped with Ctrl-Z) or rebuild holds
        // this one up: said once it has lasted a second, on stderr.
        options.waitNotice = WaitNotice { what, holder in
            let who = "another notes process" + (holder.map { " (pid \($0))" } ?? "")
            let line =
                switch what {
                case .writing: "notes: warning: waiting for \(who) to finish writing to this store"
                case .rebuilding: "notes: warning: waiting for \(who) to finish rebuilding this store's projections"
                }
            writeAll(fd: 2, Array((line + "\n").utf8))
        }
        var book: Notebook?
        var failure: NotesError?
        do { book = try Notebook(path: openPath, options: options) } catch { failure = error }
        if let failure {
            guard readsOnly && failure.isPermissionProblem else { throw failure }
            options.readOnly = true
            book = try Notebook(path: openPath, options: options)
        }
        guard let book else { throw CLIError("cannot open the store at \(path)", code: .storeUnusable) }
        if exists, (st.st_mode & 0o022) != 0 {
            terminal.warn("the store directory \(path) is writable by other users; run `chmod 700 \(path)`")
        }
        openedNotebook = book
        return book
    }

    /// Whether this run only reads: a command that does, or one that writes only when given
    /// something to write and otherwise lists (`categories`, `tags`, `tags --all`, `alias ID`).
    /// Such a listing reads a read-only store (before 2026-12-07 it was refused: "the store is
    /// on a read-only file system").
    private var readsOnly: Bool {
        if command.readsOnly { return true }
        switch command.name {
        case "categories", "tags": return positionals.isEmpty
        case "alias": return positionals.count == 1 && !flag("none")
        default: return false
        }
    }

    /// Whether this command may make the store where there is none: it writes notes that come
    /// from nothing before it (a new note, a file, a folder, a remote's log, a new category).
    /// Any other command on a missing store says there is none and makes nothing.
    private var createsStore: Bool {
        guard !readsOnly else { return false }
        if makesStoreOnceAccepted || command.name == "add" { return true }
        return command.name == "categories" && positionals.first == "add"
    }

    /// The commands that take input (a file, a folder, a remote's log) and make the store they
    /// write to only once it is accepted (see ``newStore``).
    private var makesStoreOnceAccepted: Bool {
        ["import", "import-markdown", "import-history", "sync"].contains(command.name)
    }

    /// A new private folder, `.notes-new-store-XXXXXX`, in the nearest folder above `path` that
    /// exists, when `path` does not exist, and a descriptor holding an `flock` on it while this
    /// run has it; nil otherwise, or when it cannot be made there (the store is then made in
    /// place, as before, and a failure said as before). Such folders that killed runs left
    /// there are removed first (``removeAbandonedStagings(in:)``).
    private func stagingDirectory(for path: String) -> (String, Int32)? {
        var st = stat()
        guard lstat(path, &st) != 0, errno == ENOENT, let place = Self.stagingPlace(for: path) else { return nil }
        Self.removeAbandonedStagings(in: place.parent)
        var template = Array((place.parent + "/" + Self.stagingPrefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { return nil }
        let staging = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let lock = open(staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            if lock >= 0 { close(lock) }
            rmdir(staging)
            return nil
        }
        // What a reader of the store meanwhile is told (``storeBeingMade(at:)``). Without it,
        // the store is still made; a reader only hears that there is none yet.
        let note = "\(getpid())\n\(command.name)\n\(place.key)\n"
        let fd = open(staging + "/" + Self.stagingNote, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            writeAll(fd: fd, Array(note.utf8))
            close(fd)
        }
        return (staging, lock)
    }

    private static let stagingPrefix = ".notes-new-store-"
    /// The file in a private folder of a new store that says which process makes it, for which
    /// path; removed before the folder is moved into place.
    private static let stagingNote = "making"

    /// Where the private folder of a new store at `path` (that does not exist) is made: the
    /// nearest folder above it that exists, and `path` spelled from that folder's real path
    /// (without `.` parts), which a reader that spells the path otherwise finds it by. Nil when
    /// `path` ends in `.` or `..`: it names no new folder a rename can make (rename(2) refuses
    /// them: EBUSY), and such a store is made in place, as before.
    private static func stagingPlace(for path: String) -> (parent: String, key: String)? {
        let absolute = path.hasPrefix("/")
        let parts = path.split(separator: "/").map(String.init)
        guard let last = parts.last, last != ".", last != ".." else { return nil }
        func folder(_ count: Int) -> String {
            count == 0 ? (absolute ? "/" : ".") : (absolute ? "/" : "") + parts[..<count].joined(separator: "/")
        }
        var count = parts.count - 1
        var st = stat()
        while stat(folder(count), &st) != 0 {
            guard errno == ENOENT, count > 0 else { return nil }
            count -= 1
        }
        let parent = folder(count)
        guard (st.st_mode & S_IFMT) == S_IFDIR, let real = realpath(parent, nil) else { return nil }
        defer { free(real) }
        let base = String(cString: real)
        let rest = parts[count...].filter { $0 != "." }
        return (parent, (base == "/" ? "" : base) + "/" + rest.joined(separator: "/"))
    }

    /// The process, and its command, making the store at `path` aside while it runs (a first
    /// import, see ``newStore``): the private folder beside it whose note names `path`, which the
    /// process still holds locked. Nil when there is none (a killed run's folder is held by no
    /// process).
    private static func storeBeingMade(at path: String) -> (pid: String, command: String)? {
        guard let place = stagingPlace(for: path) else { return nil }
        let prefix = Array(stagingPrefix.utf8)
        let names = directoryNames(place.parent) ?? []
        for name in names where name.count == prefix.count + 6 && name.starts(with: prefix) {
            let folder = place.parent + "/" + String(decoding: name, as: UTF8.self)
            let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var st = stat()
            let held =
                fstat(fd, &st) == 0 && st.st_uid == geteuid() && flock(fd, LOCK_SH | LOCK_NB) != 0
                && errno == EWOULDBLOCK
            defer { close(fd) }
            guard held, let note = Self.readStagingNote(in: fd) else { continue }
            let lines = String(decoding: note, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count >= 3, lines[2] == place.key else { continue }
            return (String(lines[0]), String(lines[1]))
        }
        return nil
    }

    /// The note of the private folder `folder` (a descriptor of it), as ``stagingDirectory(for:)``
    /// writes it: a regular file of this user's, not a link, read without waiting. Nil for
    /// anything else: before 2026-12-06 a FIFO of that name, in a folder another process held,
    /// kept every command on the missing store waiting for a writer for good.
    private static func readStagingNote(in folder: Int32) -> [UInt8]? {
        let fd = openat(folder, stagingNote, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid() else { return nil }
        var bytes = [UInt8](repeating: 0, count: 8192)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        return Array(bytes[..<count])
    }

    /// Removes the private folders of new stores in `parent` that runs killed midway left (an
    /// import stopped by Ctrl-C or SIGKILL): named as ``stagingDirectory(for:)`` names them,
    /// this user's, held by no process (a run holds its own locked until it moves or removes
    /// it), unchanged for 2 seconds (a run locks its folder the moment it made it) and holding
    /// nothing but LMDB's data.mdb and lock.mdb, and the note of what it was made for. Anything
    /// else is left alone.
    private static func removeAbandonedStagings(in parent: String) {
        removeAbandonedFolders(in: parent, prefix: stagingPrefix) { path in
            guard let entries = try? directoryEntries(path) else { return false }
            return entries.allSatisfy { $0.kind == .file && ["data.mdb", "lock.mdb", stagingNote].contains($0.name) }
        } remove: {
            removeStore($0)
        }
    }

    /// Moves the store this run made (see ``newStore``) into place, making its parent folders
    /// now: called once the command has accepted its input, before it prints. A store made
    /// there meanwhile by another process is never replaced: this run's is removed, and the
    /// command refused.
    func keepNewStore() throws(CLIError) {
        guard let (staging, given, lock) = newStore else { return }
        newStore = nil
        defer { close(lock) }
        var target = given
        while target.count > 1, target.hasSuffix("/") { target.removeLast() }
        do { try makeDirectories(AtomicFile.directory(of: target)) } catch {
            Self.removeStore(staging)
            // What the command printed (`imported 12 events`) is not true of a store not kept:
            // before 2026-12-06 the refusal came under that answer.
            terminal.discardBuffered()
            throw CLIError("\(error); nothing was kept: choose another store with --store", code: .storeUnusable)
        }
        // The store's files are flushed by its commits; their names in the private folder, and
        // the folder's new name in its parent, by these: a power loss after the answer is
        // printed must not undo the move (and the next first import would then remove the
        // store as abandoned). The note of what the folder was made for stays out of the store.
        unlink(staging + "/" + Self.stagingNote)
        Self.flushDirectory(staging)
        guard rename(staging, target) == 0 else {
            newStoreTaken = errno == ENOTEMPTY || errno == EEXIST
            let reason = systemErrorText()
            Self.removeStore(staging)
            terminal.discardBuffered()
            // Only a store made there meanwhile is a reason to run it again; any other failure
            // (a parent that is a dangling link or a file) would be the same the next time.
            guard newStoreTaken else {
                throw CLIError(
                    "cannot make the store at \(given) (\(reason)); nothing was kept: check the path, or choose "
                        + "another store with --store", code: .storeUnusable)
            }
            throw CLIError(
                "cannot move the new store into place at \(given) (\(reason)); nothing was kept: run the command again",
                code: .failure)
        }
        Self.flushDirectory(AtomicFile.directory(of: target))
    }

    /// Flushes a folder's entries to the disk (`fsync` of the folder); a file system that cannot
    /// is left to its own guarantees.
    private static func flushDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Whether the command may run again after ``newStoreTaken``: its input can be read again
    /// (a file or a folder, or a remote's log, not standard input).
    var mayRunAgain: Bool { !positionals.contains("-") }

    /// Removes the store this run made for a command that was refused or failed (see
    /// ``newStore``): it leaves no trace.
    func discardNewStore() {
        guard let (staging, _, lock) = newStore else { return }
        newStore = nil
        openedNotebook = nil
        Self.removeStore(staging)
        close(lock)
    }

    /// Removes a store folder this run made, and the files LMDB made in it; anything else there
    /// (none is expected) keeps the folder.
    private static func removeStore(_ directory: String) {
        for name in ["data.mdb", "lock.mdb", stagingNote] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    private func makeParents(of path: String) throws(CLIError) {
        do { try makeDirectories(AtomicFile.directory(of: path)) } catch {
            throw CLIError("\(error); choose another store with --store", code: .storeUnusable)
        }
    }

    /// The body limit: $NOTES_BODY_LIMIT, else the config's body-limit, else 1 MiB; never over
    /// ``Config/maxBodyLimit`` (the config file's value is checked as the file is read).
    func bodyLimitSetting() throws(CLIError) -> Int {
        var v = config["body-limit"].flatMap(Int.init) ?? (1 << 20)
        if let limit = environment["NOTES_BODY_LIMIT"] {
            guard let given = Int(limit), given > 0 else {
                throw CLIError("NOTES_BODY_LIMIT=\"\(limit)\" must be a positive number of bytes")
            }
            guard given <= Config.maxBodyLimit else {
                throw CLIError(
                    "NOTES_BODY_LIMIT=\(given) is over \(Config.maxBodyLimit) bytes (1 GiB), the most it may be "
                        + "(\(Config.bodyLimitCost)); set it to \(Config.maxBodyLimit) or less")
            }
            v = given
        }
        // With a remote, every body written here must fit in what the remote holds of one event,
        // and so must a conflict that keeps two of them: a larger one would wait in the outbox
        // for good. An import of events brings history back as it was (the remote takes up to
        // its own limit, which the sync checks).
        if remoteAddress(self) != nil, command.name != "import" { v = min(v, Self.remoteBodyLimit) }
        return v
    }

    /// The largest body while a remote is set: two of them, and conflict markers, fit in one
    /// event the remote takes (``RemoteBatch/maxPayloadBytes``).
    static let remoteBodyLimit = RemoteBatch.maxPayloadBytes / 2 - (64 << 10)

    /// The name of a category id (deleted ones too), read once per command.
    func categoryName(_ id: Identifier?) throws -> String? {
        guard let id else { return nil }
        if let known = categoryNames[id] { return known }
        let name = try notebook().categoryName(id)
        categoryNames[id] = name
        return name
    }

    /// Reads the current names of the categories and tags given that are not known yet, all in
    /// one read transaction (``labels(_:)`` then finds them known).
    func preloadLabels(categories: [Identifier?], tags: [[Identifier]]) throws {
        let c = Set(categories.compactMap { $0 }.filter { categoryNames[$0] == nil })
        let t = Set(tags.joined().filter { tagNames[$0] == nil })
        guard !c.isEmpty || !t.isEmpty else { return }
        let names = try notebook().names(categories: Array(c), tags: Array(t))
        for id in c { categoryNames.updateValue(names.categories[id], forKey: id) }
        for id in t { tagNames[id] = names.tags[id] ?? shortID(id) }
    }

    /// The note's category and tags by their current names (each read once per command).
    func labels(_ n: Note) throws -> NoteLabels {
        try labels(category: n.category, tags: n.tags)
    }

    /// The row's category and tags by their current names (each read once per command).
    func labels(_ r: NoteRow) throws -> NoteLabels {
        try labels(category: r.category, tags: r.tags)
    }

    private func labels(category: Identifier?, tags ids: [Identifier]) throws -> NoteLabels {
        // The names not read yet, in one read transaction rather than one each.
        if ids.contains(where: { tagNames[$0] == nil }) || category.map({ categoryNames[$0] == nil }) == true {
            try preloadLabels(categories: [category], tags: [ids])
        }
        var tags: [String] = []
        for t in ids {
            if let known = tagNames[t] {
                tags.append(known)
            } else {
                let name = try notebook().tagName(t) ?? shortID(t)
                tagNames[t] = name
                tags.append(name)
            }
        }
        return NoteLabels(category: try categoryName(category), tags: tags)
    }

    /// Resolves a note id argument.
    func noteID(_ text: String) throws -> Identifier {
        try notebook().resolve(text)
    }
}

extension NotesError {
    var isPermissionProblem: Bool {
        if case .store(.storage(let e)) = self {
            return e.code == .permissionDenied || e.code == .readOnlyFileSystem
        }
        return false
    }
}
