import EventStore
import Foundation
import Glibc
import Notes
import NotesWorkload
import Testing

/// A quick driver for the rebuild's speed, run by hand on a release build:
///
/// ```sh
/// NOTES_REBUILD_PROFILE=100000 swift test -c release --filter RebuildSpeedTests
/// ```
///
/// The value is the number of events (a tenth as many notes, a share of legacy events). It
/// prints the raw scan, the replay (decode + upcast + fold) and the full rebuild in events/s,
/// and the peak memory (of this whole process, which also wrote the store; time `notes
/// rebuild` on a kept store for the rebuild alone). The benchmark executable reports the
/// official figures.
@Suite("Rebuild speed (by hand)")
struct RebuildSpeedTests {
    static let events = Int(ProcessInfo.processInfo.environment["NOTES_REBUILD_PROFILE"] ?? "") ?? 0

    static func peakMemoryMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? -1
            return kb / 1024
        }
        return -1
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = EventStore.monotonicMicros()
        try body()
        return Double(EventStore.monotonicMicros() - start) / 1e6
    }

    @Test(.enabled(if: events > 0))
    func profile() throws {
        let scratch = try SchemaScratch()
        // NOTES_REBUILD_STORE=dir keeps the store, e.g. to time `notes rebuild` on it.
        let path = ProcessInfo.processInfo.environment["NOTES_REBUILD_STORE"] ?? scratch.sub("store")
        let spec = EventWorkload.Spec(notes: max(Self.events / 10, 1), events: Self.events, legacyShare: 0.1)
        let fill = try Self.time {
            var workload = EventWorkload(spec)
            var config = EventStore.Configuration(registry: NotesSchema.registry)
            config.clock = { spec.start }
            config.environment.noSync = true
            let store = try EventStore(path: path, configuration: config)
            while true {
                let batch = workload.next(batch: 50_000)
                if batch.isEmpty { break }
                try store.write { session in
                    for e in batch { try session.append([e.event], to: e.stream, expecting: .any) }
                }
            }
        }
        print("fill: \(Self.events) events in \(fill) s; peak \(Self.peakMemoryMB()) MB")

        var options = Notebook.Options(actor: "bench@test")
        options.clock = { spec.start }
        var book: Notebook?
        let firstOpen = try Self.time { book = try Notebook(path: path, options: options) }
        let notebook = try #require(book)
        print("first open (rebuild at open): \(firstOpen) s; peak \(Self.peakMemoryMB()) MB")

        var rawCount = 0
        var payloadBytes = 0
        let raw = try Self.time {
            try notebook.store.read { txn in
                try notebook.store.forEachEvent(from: 1, in: txn) { view in
                    rawCount += 1
                    payloadBytes &+= view.payload.count
                    return true
                }
            }
        }
        let rate = { (seconds: Double) in Int(Double(Self.events) / seconds) }
        print("raw scan: \(raw) s, \(rate(raw)) events/s (\(rawCount) events, \(payloadBytes) payload bytes)")

        var notes = 0
        let replay = try Self.time { notes = try NotebookState.replay(store: notebook.store).notes.count }
        print("replay (decode + upcast + fold): \(replay) s, \(rate(replay)) events/s, \(notes) notes")
        print("replay / raw scan: \(Int(raw / replay * 100))%")

        // NOTES_REBUILD_REPEAT=n repeats the rebuild, so a profiler sees mostly it.
        let repeats = Int(ProcessInfo.processInfo.environment["NOTES_REBUILD_REPEAT"] ?? "") ?? 1
        for _ in 0..<max(repeats, 1) {
            let rebuild = try Self.time { try notebook.rebuild() }
            print("full rebuild: \(rebuild) s, \(rate(rebuild)) events/s; peak \(Self.peakMemoryMB()) MB")
        }
        #expect(rawCount == Self.events)
    }
}
