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
/// The remote is loaded with the generated notebook of `--events` events; devices A, A0, B, C
/// and D clone it (timed). Then, each sample: A edits a note and syncs, with nothing else new (its
/// edit is pushed and confirmed in place from the push's answer), and D, which writes nothing,
/// syncs to take that edit: the two syncs are issue 19's "one edit pushed and pulled by a second
/// device". A0 does the same confirming its push by pulling it back, as syncs did before (A and
/// A0 alternate which goes first; each takes the other's edit first, untimed). B edits another note
/// and syncs (it pulls A's edit and rebases its own over it, re-folding the records of the
/// streams touched); C does the same with the rebase rebuilding every projection, as every rebase
/// did before the re-fold. B and C alternate which goes first, and both pull what the other
/// pushed. Then A, A0 and D take B's and C's edits (not timed), so that the next sync of A and A0
/// has nothing else new and each pull of D holds only one edit.
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
    func device(_ name: String, rebuilds: Bool, pushAnswerConfirms: Bool = true) throws -> Device {
        var o = Notebook.Options(actor: "bench@\(name)")
        o.rebaseRebuildsProjections = rebuilds
        o.pushAnswerConfirms = pushAnswerConfirms
        let book = try Notebook(path: scratch + "/" + name, options: o)
        return Device(book: book, remote: try PostgresEventLog(connecting: address))
    }
    var figures: [Figure] = []
    func record(_ f: Figure) {
        figures.append(f)
        print(row(f) + "\n")
    }

    log("cloning on five devices")
    var cloneRates: [Double] = []
    var devices: [Device] = []
    for (name, rebuilds) in [("a", false), ("b", false), ("c", true), ("d", false), ("a0", false)] {
        let d = try device(name, rebuilds: rebuilds, pushAnswerConfirms: name != "a0")
        let start = monotonicSeconds()
        let report = try d.book.sync(with: d.remote, notebook: notebook)
        let seconds = monotonicSeconds() - start
        guard report.pulled == total else { throw BenchmarkFailure("device \(name) cloned \(report.pulled) events") }
        cloneRates.append(Double(total) / seconds)
        devices.append(d)
    }
    let (a, b, c, d, a0) = (devices[0], devices[1], devices[2], devices[3], devices[4])

    log("\(samples) rounds of edits")
    var inPlace: [Double] = []
    var taken: [Double] = []
    var pushedAndTaken: [Double] = []
    var pushedAndTakenBefore: [Double] = []
    var refold: [Double] = []
    var rebuild: [Double] = []
    enum Expected { case pushOnly, rebase, pullOne }
    func timedSync(_ device: Device, _ expected: Expected) throws -> Double {
        let start = monotonicSeconds()
        let report = try device.book.sync(with: device.remote, notebook: notebook)
        let ms = (monotonicSeconds() - start) * 1000
        let asExpected: Bool
        switch expected {
        case .pushOnly: asExpected = report.pushed == 1 && report.pulled == 0 && report.confirmedInPlace == 1
        case .rebase: asExpected = report.pushed == 1 && report.pulled >= 1
        case .pullOne: asExpected = report.pushed == 0 && report.pulled == 1
        }
        guard asExpected else { throw BenchmarkFailure("an unexpected sync: \(report)") }
        return ms
    }
    func catchUp(_ devices: [Device]) throws {
        for e in devices { _ = try e.book.sync(with: e.remote, notebook: notebook) }
    }
    /// `pusher` edits `note` and syncs; D takes the edit: the two syncs' times.
    func pushAndTake(_ pusher: Device, _ note: Identifier, round s: Int) throws -> (push: Double, pull: Double) {
        try pusher.book.edit(note, body: "edited, round \(s)\n")
        return (try timedSync(pusher, .pushOnly), try timedSync(d, .pullOne))
    }
    for s in 0..<(samples + 2) {
        let note = { (k: Int) in noteIDs[(s * 7 + k) % noteIDs.count] }
        var (t, td, before) = (0.0, 0.0, 0.0)
        for pusher in s % 2 == 0 ? [a, a0] : [a0, a] {
            try catchUp([pusher])
            let (push, pull) = try pushAndTake(pusher, note(pusher.book === a.book ? 0 : 3), round: s)
            if pusher.book === a.book { (t, td) = (push, pull) } else { before = push + pull }
        }
        try b.book.edit(note(1), body: "edited on b, round \(s)\n")
        try c.book.edit(note(2), body: "edited on c, round \(s)\n")
        var (tb, tc) = (0.0, 0.0)
        if s % 2 == 0 {
            tb = try timedSync(b, .rebase)
            tc = try timedSync(c, .rebase)
        } else {
            tc = try timedSync(c, .rebase)
            tb = try timedSync(b, .rebase)
        }
        try catchUp([a, a0, d])
        guard s >= 2 else { continue }  // warm-up
        inPlace.append(t)
        taken.append(td)
        pushedAndTaken.append(t + td)
        pushedAndTakenBefore.append(before)
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
            unit: "events/s", value: clone, extra: [("devices", "\(devices.count)")]))
    let pushOne = Latency(milliseconds: inPlace)
    let takeOne = Latency(milliseconds: taken)
    let both = Latency(milliseconds: pushedAndTaken)
    let bothBefore = Latency(milliseconds: pushedAndTakenBefore)
    record(
        Figure(
            name: "sync-edit",
            title:
                "one edit pushed and pulled by a second device: the sync that pushes it (nothing else new; confirmed in place) and the other device's sync that takes it, in process, p50 of their sums",
            unit: "ms", value: Stat([both.p50]),
            extra: [
                ("p99", "\(format(both.p99)) ms"), ("the push's sync alone", "\(format(pushOne.p50)) ms"),
                ("the pull's", "\(format(takeOne.p50)) ms"), ("samples", "\(both.count)"),
            ],
            peerTitle: "the same with the push confirmed by pulling it back (before)", peer: Stat([bothBefore.p50]),
            ratio: both.p50 / bothBefore.p50, goal: "< 20 ms", goalMet: both.p50 < 20))
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
