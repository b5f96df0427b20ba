// notes-stress: a child process for the crash and concurrency tests of the event store.
//
// The tests start it, read what it reports on stdout, and often kill it with SIGKILL at a
// random moment. A line is printed (and flushed) only after the transaction it describes
// has committed, so every reported event must survive the kill.
//
//   notes-stress append STORE [--stream S] [--streams K] [--count N] [--batch B]
//                             [--expect any|exact] [--map-size BYTES] [--projections]
//       Appends N events in commits of B. With K > 1 each commit spreads its events over
//       the streams S-0 ... S-(K-1) (many streams in one transaction). With --expect exact
//       it reads the stream's version first and appends expecting exactly it, retrying on
//       a conflict (optimistic concurrency between processes).
//       Prints `ready`, then per committed event `ok <id> <position> <stream> <version>`,
//       and `conflict <stream> <actual>` for each rejected attempt.
//   notes-stress rebuild STORE [--loops N]
//       Rebuilds the counting projections N times; prints `rebuilt <events>` after each.
//   notes-stress hold-reader STORE
//       Opens a read transaction, prints `holding`, and sleeps until killed.
//
// The schema and projections below are mirrored by Tests/EventStoreTests/StressFixtures.swift;
// change both together.

import EventStore
import Glibc
import LMDB

// MARK: The fixture: two event types and a projection that counts them

/// Payload fields of the stress events: a counter and a short text.
let stressTypes = ["Tick", "Tock"]

func stressRegistry() -> SchemaRegistry {
    var registry = SchemaRegistry()
    for type in stressTypes {
        registry.registerCurrent(
            PayloadSchema(type: type, version: 1, fields: [.init("n", .integer), .init("text", .string)]))
    }
    return registry
}

/// Counts events per type (`by_type`) and records each stream's last version (`by_stream`).
final class CountingProjections: ProjectionSet {
    let version = "counting-1"
    var databaseSpecs: [(name: String, flags: DatabaseFlags)] { [("by_type", []), ("by_stream", [])] }

    func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
        for e in events {
            let typeKey = Array(e.type.utf8)
            let count = try txn.get(databases["by_type"], key: typeKey).map(bigEndian) ?? 0
            try txn.put(databases["by_type"], key: typeKey, value: bytes(count + 1))
            try txn.put(databases["by_stream"], key: Array(e.stream.utf8), value: bytes(e.version))
        }
    }

    func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws {
        var counts: [String: UInt64] = [:]
        var streams: [String: UInt64] = [:]
        let store = context.store
        try store.read { txn in
            try store.forEachEvent(from: 1, in: txn) { view in
                guard view.position <= head else { return false }
                for lifted in try store.lift(view) { counts[lifted.type, default: 0] += 1 }
                streams[view.stream] = view.version
                if view.position % 1000 == 0 { context.progress(view.position, of: head) }
                return true
            }
        }
        // Several small transactions, so a kill can land in the middle of a rebuild.
        let entries = counts.map { ("by_type", $0.key, $0.value) } + streams.map { ("by_stream", $0.key, $0.value) }
        var start = 0
        while start < entries.count {
            let chunk = entries[start..<min(start + 64, entries.count)]
            try context.write { txn in
                for (db, key, value) in chunk { try txn.put(databases[db], key: Array(key.utf8), value: bytes(value)) }
            }
            start += 64
        }
    }
}

func bytes(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
func bigEndian(_ b: [UInt8]) -> UInt64 { b.reduce(0) { $0 << 8 | UInt64($1) } }

// MARK: Command line

struct Arguments {
    var command = ""
    var store = ""
    var stream = "stress"
    var streams = 1
    var count = 100
    var batch = 1
    var exact = false
    var mapSize: Int?
    var projections = false
    var loops = 1
}

/// Writes a whole line to a file descriptor with one unbuffered `write`: nothing waits in a
/// buffer when the process is killed, and lines under PIPE_BUF never interleave.
func emit(_ line: String, to fd: Int32) {
    var text = line + "\n"
    text.withUTF8 { u in
        var done = 0
        while done < u.count {
            let n = write(fd, u.baseAddress.map { $0 + done }, u.count - done)
            if n <= 0 { return }
            done += n
        }
    }
}

func usage(_ message: String) -> Never {
    emit("notes-stress: \(message)", to: 2)
    emit("usage: notes-stress append|rebuild|hold-reader STORE [options]", to: 2)
    exit(64)
}

func parse(_ argv: [String]) -> Arguments {
    var a = Arguments()
    guard argv.count >= 2 else { usage("missing command or store") }
    a.command = argv[0]
    a.store = argv[1]
    var i = 2
    func value() -> String {
        i += 1
        guard i < argv.count else { usage("\(argv[i - 1]) needs a value") }
        return argv[i]
    }
    func number() -> Int {
        let text = value()
        guard let n = Int(text), n > 0 else { usage("\(argv[i - 1]) needs a positive number, got \(text)") }
        return n
    }
    while i < argv.count {
        switch argv[i] {
        case "--stream": a.stream = value()
        case "--streams": a.streams = number()
        case "--count": a.count = number()
        case "--batch": a.batch = number()
        case "--map-size": a.mapSize = number()
        case "--loops": a.loops = number()
        case "--projections": a.projections = true
        case "--expect":
            switch value() {
            case "any": a.exact = false
            case "exact": a.exact = true
            case let other: usage("--expect takes any or exact, got \(other)")
            }
        case let other: usage("unknown option \(other)")
        }
        i += 1
    }
    return a
}

/// Reports progress to the parent on stdout.
func say(_ line: String) { emit(line, to: 1) }

func openStore(_ a: Arguments, projections: Bool) throws(StoreError) -> EventStore {
    var configuration = EventStore.Configuration(
        registry: stressRegistry(), projections: projections ? CountingProjections() : nil)
    if let size = a.mapSize { configuration.environment.mapSize = size }
    return try EventStore(path: a.store, configuration: configuration)
}

func makeEvents(_ count: Int, from counter: inout Int64, using rng: inout SystemRandomNumberGenerator) -> [NewEvent] {
    (0..<count).map { _ in
        counter += 1
        var w = ByteWriter()
        w.write(signed: counter)
        w.write(string: String(repeating: "x", count: Int.random(in: 0...120, using: &rng)))
        return NewEvent(
            id: Identifier.random(using: &rng), type: stressTypes[Int(counter) % 2], schemaVersion: 1, payload: w.bytes,
            metadata: EventMetadata(actor: "stress-\(getpid())", command: "notes-stress append"))
    }
}

/// Prints the committed events of one single-stream append (all fresh: their ids are new).
func report(_ events: [NewEvent], _ result: AppendResult, _ stream: String) {
    let first = result.streamVersion - UInt64(events.count) + 1
    for (i, (e, p)) in zip(events, result.positions).enumerated() {
        say("ok \(e.id.hex) \(p) \(stream) \(first + UInt64(i))")
    }
}

func append(_ a: Arguments) throws {
    let store = try openStore(a, projections: a.projections)
    say("ready")
    var rng = SystemRandomNumberGenerator()
    var counter: Int64 = 0
    var done = 0
    while done < a.count {
        let events = makeEvents(min(a.batch, a.count - done), from: &counter, using: &rng)
        if a.exact {
            while true {
                let expected = try store.read { txn in try store.streamVersion(a.stream, in: txn) }
                do {
                    report(events, try store.append(events, to: a.stream, expecting: .exact(expected)), a.stream)
                    break
                } catch StoreError.conflict(_, _, let actual) {
                    say("conflict \(a.stream) \(actual)")
                }
            }
        } else if a.streams == 1 {
            report(events, try store.append(events, to: a.stream, expecting: .any), a.stream)
        } else {
            // One transaction, many streams: event i of the batch goes to stream (done + i) % K.
            let placed: [(NewEvent, UInt64, String, UInt64)] = try store.write { txn, appender in
                var out: [(NewEvent, UInt64, String, UInt64)] = []
                for (i, e) in events.enumerated() {
                    let stream = "\(a.stream)-\((done + i) % a.streams)"
                    let r = try appender.append([e], to: stream, expecting: .any, in: txn)
                    out.append((e, r.positions[0], stream, r.streamVersion))
                }
                return out
            }
            for (e, p, s, v) in placed { say("ok \(e.id.hex) \(p) \(s) \(v)") }
        }
        done += events.count
    }
    say("done")
}

func rebuild(_ a: Arguments) throws {
    let store = try openStore(a, projections: true)
    say("ready")
    for _ in 0..<a.loops {
        let report = try store.rebuildProjections(reason: "notes-stress")
        say("rebuilt \(report.events)")
    }
    say("done")
}

func holdReader(_ a: Arguments) throws {
    let env = try Environment(path: a.store)
    try env.read { _ in
        say("holding")
        while true { sleep(60) }
    }
}

let arguments = parse(Array(CommandLine.arguments.dropFirst()))
do {
    switch arguments.command {
    case "append": try append(arguments)
    case "rebuild": try rebuild(arguments)
    case "hold-reader": try holdReader(arguments)
    default: usage("unknown command \(arguments.command)")
    }
} catch {
    emit("notes-stress: \(error)", to: 2)
    exit(1)
}
