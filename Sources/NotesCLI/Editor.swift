import Basics
import CIntrinsics
import EventStore
import Glibc
import Notes

extension Context {
    /// Where temporary files go: `TMPDIR`, else `/tmp` (an editor's file, `search --as-of`'s
    /// scratch index).
    var temporaryFolder: String { environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp" }

    /// Opens the note in the user's editor and saves the result, unless the note changed
    /// meanwhile: then the edited text goes to a recovery file and the error is a conflict. Any
    /// other refused write keeps the text in a recovery file too.
    func editInEditor(_ id: Identifier, expectedVersion: UInt64?) throws -> Note {
        let book = try notebook()
        let note = try book.note(id)
        if let expectedVersion, expectedVersion != note.version {
            throw NotesError.conflict(id: id, expected: expectedVersion, actual: note.version)
        }
        let chosen =
            environment["VISUAL"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["EDITOR"].flatMap {
                $0.isEmpty ? nil : $0
            } ?? config["editor"]
        // vi, the fallback, needs a terminal on both sides: through a pipe or from a script it
        // hung ("Output is not to a terminal"). An editor the user chose is started as it is (a
        // GUI editor, `code --wait`, needs no terminal).
        guard chosen != nil || (terminal.stdinIsTTY && terminal.stdoutIsTTY) else {
            throw CLIError(
                "no editor to open the note in: give the text with --title, --body, --body-file or - (standard input), "
                    + "or run this in a terminal, or set $VISUAL or $EDITOR", code: .usage)
        }
        let editor = chosen ?? "vi"
        let dir = temporaryFolder
        var template = Array("\(dir)/notes-\(shortID(id))-XXXXXX.md".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 3) }
        guard fd >= 0 else {
            throw CLIError("cannot create a temporary file in \(dir): \(errorText())", code: .failure)
        }
        let path = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // The note's text is outside the store until the file is removed: the terminal closed
        // (SIGHUP) or a SIGTERM removes it too, before the process ends (128 + the signal).
        // Unlinked before the handler is forgotten, so that no moment leaves the file behind.
        _ = notes_remove_on_termination(path)
        // Kept when the text the editor saved in it cannot be saved anywhere else.
        var keep = false
        defer {
            if !keep { unlink(path) }
            notes_forget_on_termination()
        }
        let original = note.title + "\n\n" + note.body
        // A file cut short (a full disk) would open a part of the note, which saving would make
        // the note's text.
        let unwritten = Array(original.utf8).withUnsafeBytes { writeFully(fd: fd, $0) }
        close(fd)
        if let unwritten {
            throw CLIError(
                "cannot write the note to \(path): \(systemErrorText(unwritten)); the note was not changed",
                code: .failure)
        }
        /// Saves what the user typed in a recovery file; when that cannot be written (a full
        /// disk, an unwritable state directory), the temporary file the editor saved it in is
        /// kept, and named instead (before 2026-12-06 the text was dropped with it).
        func keepTyped(_ bytes: [UInt8]) -> String {
            do { return try saveRecovery(id: id, bytes: bytes) } catch {
                keep = true
                return "\(path) (\(error.message))"
            }
        }
        // `exec`: the editor takes the shell's place, so a signal sent to the child reaches the
        // editor itself and its own exit status is the one read (dash, as /bin/sh, otherwise
        // keeps the editor as a grandchild, which a SIGTERM left running, and answers 130 to an
        // interrupt the editor handled).
        let status = runShell("exec \(editor) \"$1\"", arguments: [path])
        guard status == 0 else {
            throw CLIError(
                "the editor (\(editor)) exited with status \(status); the note was not changed", code: .failure)
        }
        // Read whole, whatever its size or bytes: text the note cannot take is kept in a
        // recovery file, never dropped with the temporary file.
        let bytes: [UInt8]
        do { bytes = try readFile(path, upTo: Int.max - 1) } catch {
            throw CLIError("\(error); the note was not changed", code: .failure)
        }
        guard let edited = String(validating: bytes, as: UTF8.self) else {
            let saved = keepTyped(bytes)
            throw CLIError(
                "the edited text is not valid UTF-8; the note was not changed; your text is saved in \(saved)"
                    + " (convert it to UTF-8 and edit again)", code: .usage)
        }
        guard !edited.isSameBytes(as: original) else { return note }
        var (title, body) = splitEdited(edited)
        // vim and nano end the file they save with a line break: a body that had none keeps
        // none, so a note added with `--body TEXT`, opened and saved unchanged, is unchanged
        // (before 2026-12-06 that line break was a body edit).
        if let last = note.body.utf8.last, last != 0x0A, last != 0x0D, body.utf8.last == 0x0A {
            let ending = body.utf8.dropLast().last == 0x0D ? 2 : 1
            body = String(decoding: body.utf8.dropLast(ending), as: UTF8.self)
        }
        var failure: NotesError?
        // Only what changed is given: a body this device's limit would refuse (another device's,
        // or stored with a higher limit) stays as it is when the title alone is edited (before
        // 2026-12-06 the save was refused for the body's size).
        let newTitle = title.isSameBytes(as: note.title) ? nil : title
        let newBody = body.isSameBytes(as: note.body) ? nil : body
        do {
            // A title typed refuses DEL and the C1 controls too (before 2026-12-07 they were taken).
            if let newTitle { _ = try Notebook.validCommandTitle(newTitle) }
            return try book.edit(id, title: newTitle, body: newBody, expectedVersion: note.version)
        } catch {
            failure = error
        }
        guard let failure else { throw CLIError("the edit failed", code: .failure) }
        // Whatever refused the write (the note changed meanwhile, an invalid title, projections
        // another version of the program rebuilt while the editor was open, a full disk), the
        // text the user typed is kept.
        let saved = keepTyped(Array(edited.utf8))
        guard case .conflict(_, let expected, let actual) = failure else {
            let refused = CLIError.from(failure)
            throw CLIError(refused.message + "; your text is saved in \(saved)", code: refused.code)
        }
        throw CLIError(
            "note \(shortID(id)) changed while you edited it (v\(expected) -> v\(actual)); nothing was overwritten; your text is saved in \(saved)",
            code: .conflict)
    }

    /// First line: title; then one blank line; the rest is the body, byte for byte. Read by
    /// scalars, as Swift's characters take CR LF for one that is not "\n": an editor saving
    /// Windows line endings ends the title and the blank line with CR LF, and one may start the
    /// file with a byte-order mark; neither is part of the title (before 2026-12-06 such a file
    /// was one title with line breaks, refused, and the mark began the title).
    func splitEdited(_ text: String) -> (String, String) {
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        let nl = scalars.firstIndex(of: "\n") ?? scalars.endIndex
        var title = scalars[..<nl]
        if title.last == "\r" { title = title.dropLast() }
        guard nl < scalars.endIndex else { return (String(title), "") }
        var rest = scalars[scalars.index(after: nl)...]
        if rest.first == "\n" {
            rest = rest.dropFirst()
        } else if rest.starts(with: ["\r", "\n"]) {
            rest = rest.dropFirst(2)
        }
        return (String(title), String(rest))
    }

    /// Writes `bytes` (what the user typed) to a new file under `$XDG_STATE_HOME/notes/recovery`
    /// and gives its path.
    func saveRecovery(id: Identifier, bytes: [UInt8]) throws(CLIError) -> String {
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"].map { $0 + "/.local/state" } ?? "/tmp")
        let dir = base + "/notes/recovery"
        try? makeDirectories(dir)
        let path = "\(dir)/\(shortID(id))-\(RFC3339.format(micros: now).filter { $0 != ":" }).md"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIError("cannot save the recovery file \(path): \(errorText())", code: .failure)
        }
        // A file cut short is no recovery: a failed write (a full disk) is said, not taken for
        // saved text.
        let unwritten =
            bytes.withUnsafeBytes { writeFully(fd: fd, $0) } ?? (fsync(fd) == 0 || errno == EINVAL ? nil : errno)
        close(fd)
        if let unwritten {
            unlink(path)
            throw CLIError("cannot save the recovery file \(path): \(systemErrorText(unwritten))", code: .failure)
        }
        return path
    }

    /// Runs `sh -c COMMAND sh ARGS...` attached to the terminal and returns its exit status.
    /// The program starts with the default action for the signals this process ignores or
    /// handles (a terminal's interrupt is the editor's to act on), and is sent a SIGHUP or
    /// SIGTERM this process gets meanwhile (see `notes_remove_on_termination`).
    func runShell(_ command: String, arguments: [String]) -> Int32 {
        let argv = ["/bin/sh", "-c", command, "sh"] + arguments
        var pid: pid_t = 0
        let env = environment.map { "\($0.key)=\($0.value)" }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE, SIGXFSZ] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // A SIGHUP or SIGTERM waits until the child is known, so that it reaches the child too.
        var termination = sigset_t()
        var previous = sigset_t()
        sigemptyset(&termination)
        sigaddset(&termination, SIGHUP)
        sigaddset(&termination, SIGTERM)
        sigprocmask(SIG_BLOCK, &termination, &previous)
        let rc = withCStrings(argv) { a in
            withCStrings(env) { e in posix_spawn(&pid, "/bin/sh", nil, &attributes, a, e) }
        }
        if rc == 0 { notes_terminate_child_too(pid) }
        sigprocmask(SIG_SETMASK, &previous, nil)
        guard rc == 0 else { return 127 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        if status & 0x7F != 0 { return 128 + (status & 0x7F) }
        return (status >> 8) & 0xFF
    }
}
