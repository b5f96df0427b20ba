import Basics
import Glibc
import LMDB
import TestSupport
import Testing

@testable import EventStore

/// Kills `notes-stress` with SIGKILL at random moments of appends, bulk imports and rebuilds,
/// then reopens the store and checks that nothing acknowledged was lost and nothing is
/// half-written. Set NOTES_LONG_TESTS=1 for a ten times longer run.
@Suite("Crash safety: SIGKILL at random moments")
struct CrashTests {
    static let long = getenv("NOTES_LONG_TESTS").map { String(cString: $0) == "1" } ?? false

    enum Work: CaseIterable {
        case singleAppends, smallBatches, bulkImport, manyStreams, optimistic, rebuild
    }

    func arguments(_ work: Work, store: String) -> [String] {
        let append = ["append", store, "--count", "1000000", "--projections", "--stream", "crash"]
        switch work {
        case .singleAppends: return append + ["--batch", "1"]
        case .smallBatches: return append + ["--batch", "25"]
        case .bulkImport: return append + ["--batch", "500"]
        case .manyStreams: return append + ["--batch", "20", "--streams", "7"]
        case .optimistic: return append + ["--batch", "3", "--expect", "exact"]
        case .rebuild: return ["rebuild", store, "--loops", "1000000"]
        }
    }

    /// Checks the whole store: the log's invariants, every acknowledged event in place, and
    /// projections equal to a replay of the log.
    func verifyStore(
        _ path: String, _ acknowledged: [String: (position: UInt64, stream: String, version: UInt64)]
    ) throws -> VerifiedLog {
        let store = try EventStore(path: path, configuration: stressConfiguration())
        let log = try verifyLog(store)
        var missing = 0
        for (id, ack) in acknowledged {
            guard let stored = Identifier(id).flatMap({ log.events[$0] }),
                stored.position == ack.position, stored.stream == ack.stream, stored.version == ack.version
            else {
                missing += 1
                continue
            }
        }
        #expect(missing == 0, "\(missing) acknowledged events are missing or moved")
        #expect(try projectionContents(store) == expectedProjections(log))
        return log
    }

    @Test("every acknowledged event survives; no partial event; projections equal a replay")
    func killAtRandomMoments() throws {
        let tmp = TemporaryDirectory()
        let path = tmp.child("store")
        let rounds = Self.long ? 600 : 60
        var rng = SeededGenerator(seed: 2024)
        var acknowledged: [String: (position: UInt64, stream: String, version: UInt64)] = [:]
        var kills = 0
        var killsBeforeReady = 0
        for round in 0..<rounds {
            let work = Work.allCases[round % Work.allCases.count]
            let child = try StressChild(arguments(work, store: path), stderrPath: tmp.child("stderr"))
            if Int.random(in: 0..<5, using: &rng) == 0 {
                // Early: while the store opens (or, in the first round, is created).
                usleep(UInt32.random(in: 0..<8000, using: &rng))
            } else {
                #expect(child.waitFor("ready"), "the child did not start: round \(round)")
                usleep(UInt32.random(in: 0..<50_000, using: &rng))
            }
            if child.killNow() { kills += 1 }
            if !child.lines.contains("ready") { killsBeforeReady += 1 }
            #expect(!child.lines.contains("done"))
            for ack in child.acknowledged { acknowledged[ack.id] = (ack.position, ack.stream, ack.version) }

            // The acknowledged events of this round are there right after the kill.
            let store = try EventStore(path: path, configuration: stressConfiguration())
            try store.read { txn throws in
                for ack in child.acknowledged {
                    let id = try #require(Identifier(ack.id))
                    #expect(try store.position(ofEvent: id, in: txn) == ack.position)
                }
            }
            if round % 15 == 14 { _ = try verifyStore(path, acknowledged) }
        }
        let log = try verifyStore(path, acknowledged)
        // A fresh rebuild gives the same projections as the ones maintained through the kills.
        let store = try EventStore(path: path, configuration: stressConfiguration())
        let before = try projectionContents(store)
        try store.rebuildProjections()
        #expect(try projectionContents(store) == before)
        #expect(kills >= rounds * 5 / 6, "only \(kills) of \(rounds) children were killed while running")
        #expect(log.head > 0)
        print(
            "crash test: \(kills) kills (\(killsBeforeReady) while opening), \(log.head) events, \(acknowledged.count) acknowledged"
        )
    }
}
