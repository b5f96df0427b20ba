import Basics
import EventStore
import Glibc
import NotesWorkload
import PostgresFixture
import PostgresLog

// `notes-bench remote`: the remote log of sync against a throwaway PostgreSQL cluster on a Unix
// socket (initdb in a temporary directory, fsync on), each figure beside psql's COPY of the same
// rows (the wire's and the server's own limit) in the same run. Pushes and pulls go through
// PostgresEventLog as a device role, a member of its notebook, so row-level security applies.
//
//   notes-bench remote [--events N] [--push N] [--page N] [--runs N] [--samples N] [--json FILE]

/// The columns a pull reads, in its order: the COPY peers move the same ones.
private let pulledColumns =
    "position, event_id, stream, version, type, schema_version, actor, command, causation_id, correlation_id, "
    + "payload, recorded_at, digest"

func runRemoteBenchmark(arguments: [String]) throws {
    let options = try ClusterBenchOptions(
        "remote", arguments, usage: "remote: use --events, --push, --page, --runs, --samples, --json")
    let total = try options.number("events", 1_000_000)
    let pushCount = min(try options.number("push", 10_000), total)
    let page = try options.number("page", 5_000)
    let runs = try options.number("runs", 5)
    let samples = try options.number("samples", 300)

    let machine = Machine.current()
    print("notes-bench remote: \(formatCount(total)) events, pushes of \(formatCount(pushCount)), pages of \(page)")
    print("machine: \(machine.summary)\n")
    let started = monotonicSeconds()

    let events = generatedEvents(total)
    let payloadBytes = events.reduce(0) { $0 + $1.event.payload.count }

    log("starting a PostgreSQL cluster")
    let cluster = try PostgresCluster(durable: true)
    defer { cluster.stop() }
    try cluster.execute("CREATE ROLE device LOGIN IN ROLE notes_log_creator", database: "postgres")
    let device = cluster.address("notes", user: "device")
    let psql = cluster.bin + "/psql"
    let bench = RemoteBench(address: device, psql: psql, scratch: cluster.root)
    var figures: [Figure] = []
    func record(_ f: Figure) {
        figures.append(f)
        print(row(f) + "\n")
    }

    // Push: the first events, in batches of the most a batch holds, into a new notebook each run.
    log("push: \(formatCount(pushCount)) events, \(runs) runs")
    let pushBatches = remoteBatches(events[0..<pushCount])
    // Where a push's time goes: the server backend's CPU time and this process's, per run.
    var serverCPU: [Double] = []
    var clientCPU: [Double] = []
    let push = try measureRate(warmup: 1, runs: runs) { run in
        let log = try PostgresEventLog(connecting: device)
        let book = try log.notebook(named: "push-\(run)", create: true)
        let backend = log.connection.backendPID
        let serverBefore = processCPUSeconds(backend)
        let clientBefore = processCPUSeconds(getpid())
        let start = monotonicSeconds()
        var appended = 0
        for batch in pushBatches { appended += try log.append(notebook: book, batch: batch).appended }
        let seconds = monotonicSeconds() - start
        if run >= 0 {
            serverCPU.append(processCPUSeconds(backend) - serverBefore)
            clientCPU.append(processCPUSeconds(getpid()) - clientBefore)
        }
        guard appended == pushCount else { throw BenchmarkFailure("push appended \(appended) of \(pushCount)") }
        return (seconds, Double(appended), UInt64(appended))
    }

    // The notebook to clone: every event, pushed the same way (timed once: a long push).
    log("loading \(formatCount(total)) events for the clone")
    let loader = try PostgresEventLog(connecting: device)
    let book = try loader.notebook(named: "clone", create: true)
    let loadStart = monotonicSeconds()
    for batch in remoteBatches(events[...]) { _ = try loader.append(notebook: book, batch: batch) }
    let loadSeconds = monotonicSeconds() - loadStart
    guard try loader.head(notebook: book).position == UInt64(total) else {
        throw BenchmarkFailure("the clone notebook does not hold \(total) events")
    }

    // COPY in of the same rows as the push, into a table with the log's columns, keys and indexes.
    try cluster.execute(
        """
        CREATE TABLE public.copy_peer (LIKE notes_log.events INCLUDING ALL);
        GRANT INSERT, SELECT, TRUNCATE ON public.copy_peer TO device;
        """)
    let rowsFile = cluster.root + "/push-rows.copy"
    try bench.psql(
        "\\copy (SELECT * FROM notes_log.events WHERE notebook = '\(book)' AND position <= \(pushCount) "
            + "ORDER BY position) TO '\(rowsFile)' (FORMAT binary)")
    let psqlStart = Stat((0..<runs).map { _ in bench.timedPsql("SELECT 1").seconds })
    let copyIn = try measureRate(warmup: 1, runs: runs) { _ in
        try bench.psql("TRUNCATE public.copy_peer")
        let (seconds, ok) = bench.timedPsql("\\copy public.copy_peer FROM '\(rowsFile)' (FORMAT binary)")
        guard ok else { throw BenchmarkFailure("psql \\copy in failed") }
        return (max(seconds - psqlStart.median, 1e-6), Double(pushCount), 0)
    }
    record(
        Figure(
            name: "remote-push",
            title: "push of \(formatCount(pushCount)) events to PostgreSQL, batches of \(RemoteBatch.maxEvents), "
                + "one server call each",
            unit: "events/s", value: push,
            extra: [
                (
                    "push of all \(formatCount(total)) events",
                    "\(format(Double(total) / loadSeconds)) events/s (\(fixed(loadSeconds, 1)) s)"
                ),
                ("mean payload", "\(payloadBytes / max(total, 1)) B"),
                (
                    "CPU per 1000 events, median",
                    "server \(fixed(Stat(serverCPU).median * 1e6 / Double(pushCount), 1)) ms, "
                        + "client \(fixed(Stat(clientCPU).median * 1e6 / Double(pushCount), 1)) ms"
                ),
            ],
            peerTitle: "psql \\copy FROM of the same rows (binary) into a table with the same keys, "
                + "less psql's start (\(fixed(psqlStart.median * 1000, 1)) ms)",
            peer: copyIn, ratio: push.median / copyIn.median, goal: ">= 50,000 events/s",
            goalMet: push.median >= 50_000))

    // Clone: every event, pulled in pages after position 0.
    log("clone: \(formatCount(total)) events, \(runs) runs")
    let puller = try PostgresEventLog(connecting: device)
    let clone = try measureRate(warmup: 1, runs: runs) { _ in
        let start = monotonicSeconds()
        var position: UInt64 = 0
        var keep: UInt64 = 0
        while true {
            let events = try puller.pull(notebook: book, after: position, limit: page)
            guard let last = events.last else { break }
            keep &+= UInt64(last.payload.count) &+ UInt64(last.digest[0])
            position = last.position
        }
        let seconds = monotonicSeconds() - start
        guard position == UInt64(total) else { throw BenchmarkFailure("clone pulled \(position) of \(total)") }
        return (seconds, Double(total), keep)
    }
    // The device's check of each pulled event's chain digest (EventStore's envelope, SHA-256).
    var check: [Double] = []
    var previous = RecordedEvent.genesisDigest
    var position: UInt64 = 0
    var broken = 0
    while true {
        let events = try puller.pull(notebook: book, after: position, limit: page)
        guard let last = events.last else { break }
        let start = monotonicSeconds()
        for e in events {
            let digest = e.chainDigest(after: previous)
            if digest != e.digest { broken += 1 }
            previous = digest
        }
        check.append(monotonicSeconds() - start)
        position = last.position
    }
    guard broken == 0 else { throw BenchmarkFailure("\(broken) pulled digests differ from the envelope's") }
    let checkRate = Double(total) / check.reduce(0, +)
    let copyOut = try measureRate(warmup: 1, runs: runs) { _ in
        let (seconds, ok) = bench.timedPsql(
            "COPY (SELECT \(pulledColumns) FROM notes_log.events WHERE notebook = '\(book)' ORDER BY position) "
                + "TO STDOUT (FORMAT binary)")
        guard ok else { throw BenchmarkFailure("psql COPY out failed") }
        return (seconds, Double(total), 0)
    }
    record(
        Figure(
            name: "remote-clone",
            title: "clone (pull) of \(formatCount(total)) events from PostgreSQL, pages of \(formatCount(page))",
            unit: "events/s", value: clone,
            extra: [("the device's chain-digest check of each pulled event", "\(format(checkRate)) events/s")],
            peerTitle: "psql COPY (SELECT the same columns) TO STDOUT (binary), to /dev/null", peer: copyOut,
            ratio: clone.median / copyOut.median, goal: ">= 100,000 events/s", goalMet: clone.median >= 100_000))

    // Round trip: one device appends one small event, another pulls it.
    log("round trip: \(samples) samples")
    let writer = try PostgresEventLog(connecting: device)
    let reader = try PostgresEventLog(connecting: device)
    let shared = try writer.notebook(named: "round-trip", create: true)
    var seen: UInt64 = 0
    var rng = WorkloadRandom(seed: 7)
    var times: [Double] = []
    for s in 0..<(samples + 20) {
        let event = NewEvent(
            id: Identifier.random(using: &rng), type: "NoteEdited", schemaVersion: 1,
            payload: Array("{\"body\":\"edit \(s)\"}".utf8), metadata: EventMetadata(actor: "bench@device"))
        let start = monotonicSeconds()
        _ = try writer.append(
            notebook: shared, batch: RemoteBatch([RemoteAppend(stream: "note/rt", events: [event])]))
        let pulled = try reader.pull(notebook: shared, after: seen, limit: 100)
        let seconds = monotonicSeconds() - start
        guard pulled.last?.id == event.id, let last = pulled.last else {
            throw BenchmarkFailure("the second device did not pull the event just pushed")
        }
        seen = last.position
        if s >= 20 { times.append(seconds * 1000) }
    }
    let latency = Latency(milliseconds: times)
    var floor: [Double] = []
    let bare = try PostgresConnection(device)
    for _ in 0..<samples {
        let start = monotonicSeconds()
        try bare.execute("SELECT 1")
        try bare.execute("SELECT 1")
        floor.append((monotonicSeconds() - start) * 1000)
    }
    let floorLatency = Latency(milliseconds: floor)
    record(
        Figure(
            name: "remote-round-trip",
            title: "one small event pushed by a device and pulled by another, p50", unit: "ms",
            value: Stat([latency.p50]), extra: [("p99", "\(format(latency.p99)) ms"), ("samples", "\(latency.count)")],
            peerTitle: "two bare round trips (SELECT 1) on one connection, p50", peer: Stat([floorLatency.p50]),
            ratio: latency.p50 / floorLatency.p50, goal: "< 20 ms", goalMet: latency.p50 < 20))

    let elapsed = monotonicSeconds() - started
    print("done in \(fixed(elapsed, 0)) s (checksum \(blackHole & 0xFFFF))")
    if let path = options.values["json"] {
        let json = resultsJSON(
            figures: figures, machine: machine, scale: "remote", source: "generated", events: total,
            notes: max(total / 10, 1), seconds: elapsed, failures: [])
        guard writeFile(path, json) else { throw BenchmarkFailure("cannot write \(path)") }
        log("wrote \(path)")
    }
}

/// Runs psql against the benchmark's database as the device role.
private struct RemoteBench {
    let address: String
    let psql: String
    let scratch: String

    /// Runs `command` (SQL or a psql meta-command), its output to /dev/null: seconds and success.
    func timedPsql(_ command: String) -> (seconds: Double, ok: Bool) {
        let run = runProcess([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", address, "-c", command], quiet: true)
        return (run.seconds, run.status == 0)
    }

    func psql(_ command: String) throws {
        guard timedPsql(command).ok else { throw BenchmarkFailure("psql failed: \(command)") }
    }
}

/// The events as pushes: consecutive events of a stream in one group, at most a batch's worth each,
/// each group expecting the stream's version before it (no stream, or an exact version), as a
/// device's outbox is pushed (`Notebook.batches`).
func remoteBatches(_ events: ArraySlice<EventWorkload.Event>) -> [RemoteBatch] {
    var batches: [RemoteBatch] = []
    var groups: [RemoteAppend] = []
    var versions: [String: UInt64] = [:]
    var count = 0
    for e in events {
        if count == RemoteBatch.maxEvents {
            batches.append(RemoteBatch(groups))
            groups = []
            count = 0
        }
        let before = versions[e.stream, default: 0]
        versions[e.stream] = before + 1
        if groups.last?.stream == e.stream {
            groups[groups.count - 1].events.append(e.event)
        } else {
            groups.append(
                RemoteAppend(stream: e.stream, expecting: before > 0 ? .exact(before) : .noStream, events: [e.event]))
        }
        count += 1
    }
    if !groups.isEmpty { batches.append(RemoteBatch(groups)) }
    return batches
}

/// The user and system CPU time of process `pid` so far, in seconds (from /proc; 0 if unreadable).
func processCPUSeconds(_ pid: Int32) -> Double {
    guard let text = try? readFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return 0 }
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
