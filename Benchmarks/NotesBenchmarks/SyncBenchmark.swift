import Basics
import EventStore
import Glibc
import Notes
import NotesWorkload
import PostgresFixture
import PostgresLog

/// `notes-bench sync [--events N] [--samples N] [--json FILE]`: whole devices (LMDB stores with
/// every projection) syncing through a throwaway PostgreSQL cluster, in process.
///
/// The remote is loaded with the generated notebook of `--events` events; device A clones it
/// (timed), as do B and C. Then, each sample: A edits a note and syncs (its edit comes back
/// unchanged: confirmed in place); B edits another note and syncs (it pulls A's edit and rebases
/// its own over it, re-folding the records of the streams touched); C does the same with the
/// rebase rebuilding every projection, as every rebase did before the re-fold. B and C alternate
/// which goes first, and both pull what the other pushed.
func runSyncBenchmark(arguments: [String]) throws {
    let options = try ClusterBenchOptions("sync", arguments, usage: "sync: use --events, --samples, --json")
    let total = try options.number("events", 200_000)
    let samples = try options.number("samples", 20)

    let machine = Machine.current()
    print("notes-bench sync: \(formatCount(total)) events, \(samples) samples")
    print("machine: \(machine.summary)\n")
    let started = monotonicSeconds()

    let events = generatedEvents(total)
    var noteIDs: [Identifier] = []
    var seenNotes: Set<Identifier> = []
    for e in events {
        guard e.stream.hasPrefix("note/"), let id = Identifier(e.stream.dropFirst(5)) else {
            continue
        }
        if seenNotes.insert(id).inserted { noteIDs.append(id) }
    }

    log("starting a PostgreSQL cluster and loading the notebook")
    let cluster = try PostgresCluster(durable: true)
    defer { cluster.stop() }
    try cluster.execute("CREATE ROLE device LOGIN IN ROLE notes_log_creator", database: "postgres")
    let address = cluster.address("notes", user: "device")
    let loader = try PostgresEventLog(connecting: address)
    let notebook = try loader.notebook(named: "sync", create: true)
    for batch in remoteBatches(events[...]) { _ = try loader.append(notebook: notebook, batch: batch) }

    let scratch = scratchDirectory("sync")
    defer { removeDirectory(scratch) }
    struct Device {
        let book: Notebook
        let remote: PostgresEventLog
    }
    func device(_ name: String, rebuilds: Bool) throws -> Device {
        var o = Notebook.Options(actor: "bench@\(name)")
        o.rebaseRebuildsProjections = rebuilds
        let book = try Notebook(path: scratch + "/" + name, options: o)
        return Device(book: book, remote: try PostgresEventLog(connecting: address))
    }
    var figures: [Figure] = []
    func record(_ f: Figure) {
        figures.append(f)
        print(row(f) + "\n")
    }

    log("cloning on three devices")
    var cloneRates: [Double] = []
    var devices: [Device] = []
    for (name, rebuilds) in [("a", false), ("b", false), ("c", true)] {
        let d = try device(name, rebuilds: rebuilds)
        let start = monotonicSeconds()
        let report = try d.book.sync(with: d.remote, notebook: notebook)
        let seconds = monotonicSeconds() - start
        guard report.pulled == total else { throw BenchmarkFailure("device \(name) cloned \(report.pulled) events") }
        cloneRates.append(Double(total) / seconds)
        devices.append(d)
    }
    let (a, b, c) = (devices[0], devices[1], devices[2])

    log("\(samples) rounds of edits")
    var inPlace: [Double] = []
    var refold: [Double] = []
    var rebuild: [Double] = []
    func timedSync(_ d: Device, expectRebase: Bool) throws -> Double {
        let start = monotonicSeconds()
        let report = try d.book.sync(with: d.remote, notebook: notebook)
        let ms = (monotonicSeconds() - start) * 1000
        guard report.pushed == 1, expectRebase ? report.pulled >= 1 : report.confirmedInPlace == 1 else {
            throw BenchmarkFailure("an unexpected sync: \(report)")
        }
        return ms
    }
    for s in 0..<(samples + 2) {
        let note = { (k: Int) in noteIDs[(s * 7 + k) % noteIDs.count] }
        try a.book.edit(note(0), body: "edited on a, round \(s)\n")
        let t = try timedSync(a, expectRebase: false)
        try b.book.edit(note(1), body: "edited on b, round \(s)\n")
        try c.book.edit(note(2), body: "edited on c, round \(s)\n")
        var (tb, tc) = (0.0, 0.0)
        if s % 2 == 0 {
            tb = try timedSync(b, expectRebase: true)
            tc = try timedSync(c, expectRebase: true)
        } else {
            tc = try timedSync(c, expectRebase: true)
            tb = try timedSync(b, expectRebase: true)
        }
        guard s >= 2 else { continue }  // warm-up
        inPlace.append(t)
        refold.append(tb)
        rebuild.append(tc)
    }
    for d in devices { _ = try d.book.sync(with: d.remote, notebook: notebook) }
    for d in devices {
        guard try d.book.verify().isEmpty else { throw BenchmarkFailure("a device's projections differ from its log") }
    }

    let clone = Stat(cloneRates)
    record(
        Figure(
            name: "sync-clone",
            title:
                "a new device's first sync: clone of \(formatCount(total)) events into a store with every projection",
            unit: "events/s", value: clone, extra: [("devices", "3")]))
    let pushOne = Latency(milliseconds: inPlace)
    record(
        Figure(
            name: "sync-edit",
            title: "sync of one edit, nothing else new (pushed, confirmed in place), in process, p50", unit: "ms",
            value: Stat([pushOne.p50]), extra: [("p99", "\(format(pushOne.p99)) ms"), ("samples", "\(pushOne.count)")],
            goal: "< 20 ms", goalMet: pushOne.p50 < 20))
    let byRefold = Latency(milliseconds: refold)
    let byRebuild = Latency(milliseconds: rebuild)
    record(
        Figure(
            name: "sync-rebase",
            title:
                "sync of one edit over another device's: pull, rebase (records of the streams touched re-folded), push, p50",
            unit: "ms", value: Stat([byRefold.p50]),
            extra: [("p99", "\(format(byRefold.p99)) ms"), ("samples", "\(byRefold.count)")],
            peerTitle: "the same with every projection rebuilt (before)", peer: Stat([byRebuild.p50]),
            ratio: byRefold.p50 / byRebuild.p50))

    let elapsed = monotonicSeconds() - started
    print("done in \(fixed(elapsed, 0)) s")
    if let path = options.values["json"] {
        let json = resultsJSON(
            figures: figures, machine: machine, scale: "sync", source: "generated", events: total,
            notes: max(total / 10, 1), seconds: elapsed, failures: [])
        guard writeFile(path, json) else { throw BenchmarkFailure("cannot write \(path)") }
        log("wrote \(path)")
    }
}

/// The options of a benchmark that starts its own PostgreSQL cluster (`remote`, `sync`): refused
/// at once when PostgreSQL is not installed.
struct ClusterBenchOptions {
    let command: String
    let values: [String: String]

    init(_ command: String, _ arguments: [String], usage: String) throws {
        self.command = command
        values = try optionValues(arguments, usage: usage)
        guard PostgresCluster.binDirectory != nil else {
            throw BenchmarkFailure("\(command): \(PostgresCluster.skipReason)")
        }
    }

    /// The positive number given as `--name`, or `fallback`.
    func number(_ name: String, _ fallback: Int) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let n = Int(text), n > 0 else { throw BenchmarkFailure("\(command): --\(name) takes a positive number") }
        return n
    }
}

/// The generated workload of `total` events (one note in ten events), as the suite generates it.
func generatedEvents(_ total: Int) -> [EventWorkload.Event] {
    log("generating the workload")
    var workload = EventWorkload(EventWorkload.Spec(notes: max(total / 10, 1), events: total))
    var events: [EventWorkload.Event] = []
    events.reserveCapacity(total)
    while let e = workload.next() { events.append(e) }
    return events
}
