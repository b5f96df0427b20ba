import LMDB
import TestSupport
import Testing

@testable import EventStore

@Suite("Reading: forward, backward, by stream, by instant, head")
struct ReadTests {
    /// 120 events over 4 streams, recorded at strictly growing instants with some repeats.
    func filledStore(_ tmp: TemporaryDirectory) throws -> (EventStore, [RecordedEvent]) {
        let clock = ManualClock(1_000)
        let store = try EventStore(path: tmp.path, configuration: configuration(clock: clock))
        var f = EventFactory(seed: 9)
        var rng = SeededGenerator(seed: 10)
        for i in 0..<120 {
            // Steps of 0 (same instant), small or large.
            clock.advance([0, 1, 7, 1000][Int.random(in: 0..<4, using: &rng)])
            try store.append([f.event()], to: "s\(i % 4)")
        }
        return (store, try allEvents(store))
    }

    func positions(
        _ store: EventStore, from: UInt64, reverse: Bool = false, limit: Int = .max
    ) throws -> [UInt64] {
        try store.read { txn throws in
            var out: [UInt64] = []
            try store.forEachEvent(from: from, reverse: reverse, in: txn) { view throws in
                out.append(view.position)
                return out.count < limit
            }
            return out
        }
    }

    @Test("forward and backward from any position, stopping when asked")
    func forwardAndBackward() throws {
        let tmp = TemporaryDirectory()
        let (store, _) = try filledStore(tmp)
        #expect(try positions(store, from: 0) == Array(1...120))
        #expect(try positions(store, from: 1) == Array(1...120))
        #expect(try positions(store, from: 117) == [117, 118, 119, 120])
        #expect(try positions(store, from: 121) == [])
        #expect(try positions(store, from: 50, limit: 3) == [50, 51, 52])
        #expect(try positions(store, from: 4, reverse: true) == [4, 3, 2, 1])
        #expect(try positions(store, from: .max, reverse: true, limit: 2) == [120, 119])
        #expect(try positions(store, from: 0, reverse: true) == [])
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == 120)
    }

    @Test("head of an empty store is 0 and every read is empty")
    func emptyStore() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == 0)
        #expect(try positions(store, from: 1) == [])
        #expect(try positions(store, from: 10, reverse: true) == [])
        #expect(try store.read { txn throws in try store.position(atOrBefore: .max, in: txn) } == 0)
        #expect(try store.read { txn throws in try store.streamVersion("s", in: txn) } == 0)
        #expect(try store.catalogue().isEmpty)
    }

    @Test("one stream, by version range")
    func byStream() throws {
        let tmp = TemporaryDirectory()
        let (store, events) = try filledStore(tmp)
        func versions(_ stream: String, _ range: ClosedRange<UInt64> = 1...UInt64.max) throws -> [UInt64] {
            try store.read { txn throws in
                var out: [UInt64] = []
                try store.forEachEvent(inStream: stream, versions: range, in: txn) { view throws in
                    #expect(view.stream == stream)
                    out.append(view.version)
                    return true
                }
                return out
            }
        }
        #expect(try versions("s1") == Array(1...30))
        #expect(try versions("s1", 5...7) == [5, 6, 7])
        #expect(try versions("s1", 29...100) == [29, 30])
        #expect(try versions("s1", 31...40) == [])
        #expect(try versions("nope") == [])
        // "s" is a prefix of every stream name but owns no events itself.
        #expect(try versions("s") == [])
        let s2 = events.filter { $0.stream == "s2" }
        let read = try store.read { txn throws in
            var out: [RecordedEvent] = []
            try store.forEachEvent(inStream: "s2", in: txn) { view throws in
                out.append(view.recorded)
                return true
            }
            return out
        }
        #expect(read == s2)
        #expect(try store.read { txn throws in try store.streamVersion("s3", in: txn) } == 30)
    }

    @Test("position(atOrBefore:) agrees with a linear scan for random instants")
    func atOrBefore() throws {
        let tmp = TemporaryDirectory()
        let (store, events) = try filledStore(tmp)
        func linear(_ instant: Int64) -> UInt64 { events.last { $0.recordedAt <= instant }?.position ?? 0 }
        var rng = SeededGenerator(seed: 21)
        let lo = events.first!.recordedAt - 10
        let hi = events.last!.recordedAt + 10
        var probes = (0..<500).map { _ in Int64.random(in: lo...hi, using: &rng) }
        probes += events.map(\.recordedAt) + events.map { $0.recordedAt - 1 } + [.min, .max, 0]
        try store.read { txn throws in
            for instant in probes {
                #expect(try store.position(atOrBefore: instant, in: txn) == linear(instant), "instant \(instant)")
            }
        }
    }

    @Test("views decode strings on demand and compare types without allocating")
    func views() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        try store.append([f.event("NoteCreated", metadata: EventMetadata(actor: "ana"))], to: "n/1")
        try store.read { txn throws in
            try store.forEachEvent(from: 1, in: txn) { view throws in
                #expect(view.isType("NoteCreated"))
                #expect(!view.isType("NoteCreate"))
                #expect(view.type == "NoteCreated")
                #expect(view.stream == "n/1")
                #expect(view.actor == "ana")
                return true
            }
        }
    }
}
