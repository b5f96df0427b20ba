import EventStore

/// A progress bar on stderr with count, rate and time left; only on a terminal, only once an
/// operation has run for about a second.
final class ProgressBar: @unchecked Sendable {
    let label: String
    let terminal: Terminal
    let started = EventStore.monotonicMicros()
    private var lastDraw: Int64 = 0
    private var drawn = false

    init(label: String, terminal: Terminal) {
        self.label = label
        self.terminal = terminal
    }

    func update(_ done: UInt64, of total: UInt64) {
        let now = EventStore.monotonicMicros()
        guard now - started > 1_000_000, now - lastDraw > 100_000 else { return }
        lastDraw = now
        drawn = true
        let elapsed = Double(now - started) / 1e6
        let rate = Double(done) / max(elapsed, 0.001)
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
        let width = 24
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let left = rate > 0 && total > done ? Int(Double(total - done) / rate) : 0
        terminal.stderr("\r\(label) [\(bar)] \(done)/\(total) \(Int(rate))/s \(left)s left ")
    }

    func finish() {
        if drawn { terminal.stderr("\r\u{1B}[K") }
        drawn = false
    }
}

/// The progress of rebuilds reported through ``Notebook/Options/progress``: a fresh bar for each
/// rebuild (made on its first report, so its rate and time left are its own), cleared when the
/// rebuild reports its last event.
final class RebuildProgress: @unchecked Sendable {
    private let makeBar: () -> ProgressBar
    private var bar: ProgressBar?

    init(_ makeBar: @escaping () -> ProgressBar) { self.makeBar = makeBar }

    func update(_ done: UInt64, of total: UInt64) {
        let bar = self.bar ?? makeBar()
        self.bar = bar
        bar.update(done, of: total)
        if done >= total { finish() }
    }

    func finish() {
        bar?.finish()
        bar = nil
    }
}

extension Context {
    /// A progress bar when stderr is a terminal, else nil (nothing decorative in pipes).
    func progressBar(_ label: String) -> ProgressBar? {
        terminal.stderrIsTTY ? ProgressBar(label: label, terminal: terminal) : nil
    }
}
