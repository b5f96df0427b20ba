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
// The schema and projections come from the StressFixture module, shared with the tests.

import Basics
import EventStore
import Glibc
import LMDB
import StressFixture

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
            let placed: [(NewEvent, UInt64, String, UInt64)] = try store.write { session in
                var out: [(NewEvent, UInt64, String, UInt64)] = []
                for (i, e) in events.enumerated() {
                    let stream = "\(a.stream)-\((done + i) % a.streams)"
                    let r = try session.append([e], to: stream, expecting: .any)
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
