import Basics
import Glibc
import Notes

/// Where output goes and how it may look: color and the pager only on a terminal, color never
/// with `NO_COLOR`.
final class Terminal {
    let environment: [String: String]
    let stdoutIsTTY: Bool
    let stderrIsTTY: Bool
    let stdinIsTTY: Bool
    var colorAllowed: Bool
    var pagerAllowed: Bool
    private var buffer: [UInt8] = []
    /// Why standard output could not be written (a full disk, `> /dev/full`, an I/O error),
    /// once it failed: nothing more is written to it, and the command ends with that error. A
    /// reader that went away (`notes list | head -1`, EPIPE) is not a failure: the output
    /// stops quietly.
    private(set) var outputFailure: IOFailure?
    private var outputClosed = false
    private var warned: Set<String> = []

    init(environment: [String: String], forceTTY: Bool? = nil) {
        self.environment = environment
        stdoutIsTTY = forceTTY ?? (isatty(1) == 1)
        stderrIsTTY = isatty(2) == 1
        stdinIsTTY = isatty(0) == 1
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        colorAllowed = stdoutIsTTY && !noColor && environment["TERM"] != "dumb"
        pagerAllowed = stdoutIsTTY
    }

    /// Text styles, empty when color is off.
    func style(_ code: String, _ text: String) -> String {
        colorAllowed && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
    /// Text of a note (its body, a property, a line of a diff or blame) as it may be shown: on a
    /// terminal, control characters (which could move the cursor, hide text or retitle the
    /// window) become visible symbols; through a pipe or into a file it is written byte for byte.
    func shown(_ text: String) -> String { stdoutIsTTY ? terminalSafe(text) : text }

    func bold(_ s: String) -> String { style("1", s) }
    func dim(_ s: String) -> String { style("2", s) }
    func yellow(_ s: String) -> String { style("33", s) }
    func cyan(_ s: String) -> String { style("36", s) }
    func green(_ s: String) -> String { style("32", s) }
    func red(_ s: String) -> String { style("31", s) }

    /// Buffers a line for stdout.
    func print(_ text: String = "", terminator: String = "\n") {
        buffer.append(contentsOf: text.utf8)
        buffer.append(contentsOf: terminator.utf8)
        if buffer.count > 1 << 16 && !pagerAllowed { flushDirect() }
    }

    /// Drops the output buffered so far: an answer that is no longer true (a new store that
    /// could not be kept, and the import in it with it).
    func discardBuffered() { buffer = [] }

    /// Writes buffered output, through the pager when it is long and allowed; throws the failure
    /// to write standard output, if it failed, now or before: the same error (exit code 1) as
    /// `export`'s to a full disk.
    func flush(pager: String?) throws(CLIError) {
        if !buffer.isEmpty {
            if pagerAllowed, let pager, !pager.isEmpty, lineCount() > terminalRows(), runPager(pager) {
                buffer = []
            } else {
                flushDirect()
            }
        }
        if let outputFailure { throw CLIError.from(NotesError.io(outputFailure)) }
    }

    private func lineCount() -> Int { buffer.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } }

    private func terminalRows() -> Int {
        var ws = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_row > 0 { return Int(ws.ws_row) - 1 }
        return 24
    }

    func flushDirect() {
        defer { buffer = [] }
        guard !outputClosed, !buffer.isEmpty else { return }
        guard let failure = buffer.withUnsafeBytes({ writeFully(fd: 1, $0) }) else { return }
        outputClosed = true
        // A closed standard output is held on /dev/null for reading only (see
        // `NotesCommandLine.holdStandardDescriptors`): EBADF says it was closed, and how to run.
        if failure == EBADF {
            outputFailure = IOFailure(
                .write, "standard output", code: nil,
                detail: "it is closed (Bad file descriptor); send it to a file or to /dev/null")
        } else if failure != EPIPE {
            outputFailure = IOFailure(.write, "standard output", code: failure)
        }
    }

    /// Pipes the buffer into `sh -c PAGER`; false if the pager could not start (the shell could
    /// not, or said the command is not found or not executable: 127 or 126), so that the output
    /// is written directly instead of lost.
    private func runPager(_ command: String) -> Bool {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return false }
        var env = environment
        if env["LESS"] == nil { env["LESS"] = "FIRX" }
        let pager = try? ChildProcess.spawn(
            ["/bin/sh", "-c", command], environment: env.map { "\($0.key)=\($0.value)" }, standardInput: fds[0],
            closing: [fds[1]])
        close(fds[0])
        guard let pager else {
            close(fds[1])
            return false
        }
        signal(SIGPIPE, SIG_IGN)
        writeAll(fd: fds[1], buffer)
        close(fds[1])
        let status = pager.wait()
        if status == 126 || status == 127 {
            warn(
                "the pager (\(command)) could not be started (exit status \(status)); writing directly "
                    + "(set NOTES_PAGER or PAGER to a pager, or give --no-pager)")
            return false
        }
        return true
    }

    /// One line on stderr, whatever the message quotes (a name given with a line break in it,
    /// an argument of 100 KB: see ``readable(_:)``).
    func error(_ message: String) {
        let prefix = stderrIsTTY && colorAllowed ? "\u{1B}[31mnotes: error:\u{1B}[0m " : "notes: error: "
        writeAll(fd: 2, Array((prefix + readable(message) + "\n").utf8))
    }

    /// One line on stderr, as ``error(_:)``.
    func warn(_ message: String) {
        writeAll(fd: 2, Array(("notes: warning: " + readable(message) + "\n").utf8))
    }

    /// ``warn(_:)``, unless this run said `message` already.
    func warnOnce(_ message: String) {
        if warned.insert(message).inserted { warn(message) }
    }

    /// Writes to stderr directly (progress, prompts).
    func stderr(_ text: String) { writeAll(fd: 2, Array(text.utf8)) }
}

/// Writes everything, ignoring a failure (a terminal or pipe that went away).
func writeAll(fd: Int32, _ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { writeFully(fd: fd, $0) }
}

func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return body(pointers)
}

/// The C library's message for the current `errno`.
func errorText() -> String { systemErrorText() }

/// A field shown on one line of a listing (an event's actor, which an import may bring with any
/// character): every character ``breaksLine(_:)`` names becomes its ``controlPicture(_:)``, and
/// every bidirectional control (``isBidiControl(_:)``) its escape (`<U+202E>`), through a pipe
/// too, so that no value can forge a row or turn the rest of a line around (before 2026-12-06 a
/// title, category, tag or actor holding U+202E reversed the columns after it).
func oneLine(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { breaksLine($0) || isBidiControl($0) }) else { return text }
    var out = String.UnicodeScalarView()
    for c in text.unicodeScalars {
        if let picture = controlPicture(c) {
            out.append(picture)
        } else if isBidiControl(c) {
            out.append(contentsOf: formatEscape(c).unicodeScalars)
        } else {
            out.append(c)
        }
    }
    return String(out)
}

/// The widest an actor is shown in a column, in characters.
let actorColumnWidth = 40

/// An event's actor as a column of `history`, `log` or `blame` shows it: on one line
/// (``oneLine(_:)``), every other invisible format character (Unicode category Cf: a zero-width
/// space, a byte-order mark) as its escape too, and cut to ``actorColumnWidth`` characters with
/// an ellipsis. An imported actor may be anything: one of 100,000 characters padded every line
/// of the table to its width. `--json` gives it exactly.
func actorCell(_ actor: String) -> String {
    // More than the width is never shown: escape only what can be.
    let head = actor.unicodeScalars.prefix(4 * actorColumnWidth)
    var out = String.UnicodeScalarView()
    for c in head {
        if controlPicture(c) == nil, !isBidiControl(c), c.properties.generalCategory == .format {
            out.append(contentsOf: formatEscape(c).unicodeScalars)
        } else {
            out.append(c)
        }
    }
    let shown = oneLine(String(out))
    let cut = head.count < actor.unicodeScalars.count
    guard cut || shown.count > actorColumnWidth else { return shown }
    return String(shown.prefix(actorColumnWidth - 1)) + "…"
}

/// A message as an error or warning line shows it: on one line (``oneLine(_:)``), each quoted
/// part (an argument, a name, between `"`) cut to `quoted` characters with an ellipsis, and the
/// whole to `whole` characters, cut in the middle so that the advice at its end stays. An
/// argument of 100 KB made an error line of 100 KB (`notes show`, `--category`, `config get`, an
/// unknown command).
func readable(_ message: String, quoted: Int = 80, whole: Int = 1000) -> String {
    let text = oneLine(message)
    let scalars = Array(text.unicodeScalars)
    guard scalars.count > quoted else { return text }
    var out = String.UnicodeScalarView()
    var i = 0
    while i < scalars.count {
        let c = scalars[i]
        out.append(c)
        i += 1
        guard c == "\"", let close = scalars[i...].firstIndex(of: "\"") else { continue }
        let inner = scalars[i..<close]
        out.append(contentsOf: inner.count > quoted ? inner.prefix(quoted - 1) + ["…"] : inner)
        out.append("\"")
        i = close + 1
    }
    guard out.count > whole else { return String(out) }
    let kept = Array(out)
    let head = kept.prefix(whole / 2)
    let tail = kept.suffix(whole / 2 - 1)
    return String(String.UnicodeScalarView(head + ["…"] + tail))
}

/// `text` with every control character a terminal would act on shown as its
/// ``controlPicture(_:)`` instead (a carriage return not before a line feed as `␍`). Line feeds,
/// tabs and the line and paragraph separators stay.
func terminalSafe(_ text: String) -> String {
    func unsafe(_ v: UInt32) -> Bool { v < 0x20 && v != 0x0A && v != 0x09 || (0x7F...0x9F).contains(v) }
    let scalars = text.unicodeScalars
    guard scalars.contains(where: { unsafe($0.value) }) else { return text }
    var out = String.UnicodeScalarView()
    var i = scalars.startIndex
    while i != scalars.endIndex {
        let next = scalars.index(after: i)
        let c = scalars[i]
        let keep = c == "\r" && next != scalars.endIndex && scalars[next] == "\n"
        out.append(keep || !unsafe(c.value) ? c : controlPicture(c) ?? c)
        i = next
    }
    return String(out)
}
