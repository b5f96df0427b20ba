import Basics
import LMDB
import TestSupport
import Testing

@testable import EventStore

@Suite("Appending: versions, conflicts, idempotency, positions, time")
struct AppendTests {
    @Test("an appended event reads back equal, with its metadata")
    func roundTripThroughStore() throws {
        let tmp = TemporaryDirectory()
        let clock = ManualClock(1_700_000_000_000_000)
        let store = try EventStore(path: tmp.path, configuration: configuration(clock: clock))
        var f = EventFactory()
        let cause = Identifier.random(using: &f.rng)
        let correlation = Identifier.random(using: &f.rng)
        let first = f.event("NoteCreated", payload: [1, 2, 3], metadata: EventMetadata(actor: "ana@laptop"))
        let second = f.event(
            "NoteEdited", payload: Array("é✓".utf8), schemaVersion: 7,
            metadata: EventMetadata(
                actor: "bo", command: "notes edit 12 --title x", causationID: cause, correlationID: correlation))
        let result = try store.append([first, second], to: "note/1", expecting: .noStream)
        #expect(result == AppendResult(positions: [1, 2], streamVersion: 2, appended: 2))
        let events = try allEvents(store)
        try #require(events.count == 2)
        for (stored, (given, position)) in zip(events, [(first, 1), (second, 2)] as [(NewEvent, UInt64)]) {
            #expect(stored.position == position)
            #expect(stored.version == position)
            #expect(stored.id == given.id)
            #expect(stored.stream == "note/1")
            #expect(stored.type == given.type)
            #expect(stored.schemaVersion == given.schemaVersion)
            #expect(stored.metadata == given.metadata)
            #expect(stored.payload == given.payload)
            #expect(stored.recordedAt == 1_700_000_000_000_000)
            #expect(stored.digest.count == 32)
        }
        #expect(try store.read { txn throws in try store.event(at: 2, in: txn) } == events[1])
        #expect(try store.read { txn throws in try store.event(at: 3, in: txn) } == nil)
        #expect(try store.read { txn throws in try store.position(ofEvent: second.id, in: txn) } == 2)
        try verifyLog(store)
    }

    @Test("a store written with the default configuration reopens")
    func reopenDefault() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        do {
            let store = try EventStore(path: tmp.path)
            try store.append(f.events(3), to: "s")
        }
        let store = try EventStore(path: tmp.path)
        #expect(try allEvents(store).count == 3)
    }

    @Test("expected versions: noStream, exact, streamExists, any; conflicts carry the actual version")
    func expectedVersions() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()

        func conflict(_ expected: ExpectedVersion, _ stream: String = "s") -> (ExpectedVersion, UInt64)? {
            do {
                try store.append([f.event()], to: stream, expecting: expected)
                return nil
            } catch StoreError.conflict(let s, let e, let actual) {
                #expect(s == stream)
                return (e, actual)
            } catch {
                Issue.record("unexpected \(error)")
                return nil
            }
        }

        #expect(conflict(.streamExists)! == (.streamExists, 0))
        #expect(conflict(.exact(1))! == (.exact(1), 0))
        #expect(try store.append([f.event()], to: "s", expecting: .exact(0)).streamVersion == 1)
        #expect(conflict(.noStream)! == (.noStream, 1))
        #expect(conflict(.exact(0))! == (.exact(0), 1))
        #expect(conflict(.exact(5))! == (.exact(5), 1))
        #expect(try store.append([f.event(), f.event()], to: "s", expecting: .exact(1)).streamVersion == 3)
        #expect(try store.append([f.event()], to: "s", expecting: .streamExists).streamVersion == 4)
        #expect(try store.append([f.event()], to: "s", expecting: .any).streamVersion == 5)
        #expect(try store.append([f.event()], to: "t", expecting: .noStream).streamVersion == 1)
        // Failed appends wrote nothing.
        let log = try verifyLog(store)
        #expect(log.head == 6)
        #expect(log.streamVersions == ["s": 5, "t": 1])
        let message = StoreError.conflict(stream: "s", expected: .exact(2), actual: 5).description
        #expect(message == "s is at version 5, expected version 2; reload it and try again")
    }

    @Test("appending an id that is stored returns its position and writes nothing")
    func idempotent() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        let a = f.event()
        let b = f.event()
        #expect(try store.append([a, b], to: "s").positions == [1, 2])
        let before = try store.read { txn throws in try store.headPosition(in: txn) }
        // A retry of the same events, even with an expectation that no longer holds.
        let retry = try store.append([a, b], to: "s", expecting: .noStream)
        #expect(retry == AppendResult(positions: [1, 2], streamVersion: 2, appended: 0))
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == before)
        // A mix: the stored one keeps its position, the new one is appended.
        let c = f.event()
        let mixed = try store.append([a, c], to: "s", expecting: .exact(2))
        #expect(mixed == AppendResult(positions: [1, 3], streamVersion: 3, appended: 1))
        // The same id twice in one append is refused.
        let d = f.event()
        #expect(throws: StoreError.self) { try store.append([d, d], to: "s") }
        let log = try verifyLog(store)
        #expect(log.head == 3)
        #expect(try store.catalogue() == [SchemaKey("Tick", 1): 3])
    }

    @Test("invalid stream names and types are refused")
    func invalidArguments() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        for stream in ["", "a\u{0}b", String(repeating: "s", count: 1025)] {
            #expect(throws: StoreError.self) { try store.append([f.event()], to: stream) }
        }
        #expect(throws: StoreError.self) { try store.append([f.event("")], to: "s") }
        #expect(throws: StoreError.self) { try store.append([f.event(String(repeating: "T", count: 257))], to: "s") }
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == 0)
    }

    @Test("many streams in one write transaction, all or nothing")
    func manyStreamsInOneTransaction() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        let results = try store.write { session in
            try (0..<50).map { i in try session.append(f.events(1 + i % 3), to: "stream-\(i % 10)") }
        }
        #expect(results.count == 50)
        var log = try verifyLog(store)
        #expect(log.head == UInt64((0..<50).reduce(0) { $0 + 1 + $1 % 3 }))
        #expect(log.streamVersions.count == 10)
        // A failure in the middle of a transaction rolls back every stream it touched, and the
        // body's own error comes back unchanged.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write { session in
                try session.append(f.events(2), to: "stream-0")
                try session.append(f.events(2), to: "brand-new")
                throw Stop()
            }
        }
        #expect(throws: StoreError.self) {
            try store.write { session in
                try session.append(f.events(2), to: "stream-1")
                try session.append(f.events(1), to: "stream-2", expecting: .noStream)
            }
        }
        let after = try verifyLog(store)
        #expect(after.head == log.head)
        log.events = [:]
        #expect(after.streamVersions == log.streamVersions)
    }

    @Test("positions are gap-free and versions count 1, 2, 3 per stream")
    func gapFree() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory(seed: 5)
        var rng = SeededGenerator(seed: 6)
        var expectedVersions: [StreamName: UInt64] = [:]
        for _ in 0..<200 {
            let stream = "s\(Int.random(in: 0..<7, using: &rng))"
            let n = Int.random(in: 1...5, using: &rng)
            let r = try store.append(f.events(n), to: stream)
            expectedVersions[StreamName(stream), default: 0] += UInt64(n)
            #expect(r.streamVersion == expectedVersions[StreamName(stream)])
            #expect(zip(r.positions, r.positions.dropFirst()).allSatisfy { $0 + 1 == $1 })
        }
        let log = try verifyLog(store)
        #expect(log.streamVersions == expectedVersions)
        #expect(log.head == expectedVersions.values.reduce(0, +))
    }

    @Test("recordedAt never decreases, whatever the clock or an import says")
    func monotonicTime() throws {
        let tmp = TemporaryDirectory()
        let clock = ManualClock(1_000_000)
        let store = try EventStore(path: tmp.path, configuration: configuration(clock: clock))
        var f = EventFactory()
        try store.append([f.event()], to: "s")  // at 1_000_000
        clock.set(500_000)  // the clock goes back
        try store.append([f.event()], to: "s")
        clock.set(2_000_000)
        try store.append([f.event(recordedAt: 1_500_000)], to: "s")  // an import, older than now
        try store.append([f.event(recordedAt: 100)], to: "s")  // an import older than the log
        clock.set(3_000_000)
        try store.append([f.event()], to: "s")
        let times = try allEvents(store).map(\.recordedAt)
        #expect(times == [1_000_000, 1_000_000, 1_500_000, 1_500_000, 3_000_000])
        // Across reopening, the last instant is read back from the log.
        clock.set(10)
        let reopened = try EventStore(path: tmp.path, configuration: configuration(clock: clock))
        try reopened.append([f.event()], to: "s")
        #expect(try allEvents(reopened).last?.recordedAt == 3_000_000)
        #expect(try reopened.write { session in try session.now() } == 3_000_000)
    }

    @Test("the catalogue counts stored events by type and schema version")
    func catalogueCounts() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        try store.append([f.event("A"), f.event("A"), f.event("B", schemaVersion: 2)], to: "x")
        try store.write { session in
            try session.append([f.event("A")], to: "y")
            try session.append([f.event("B", schemaVersion: 3), f.event("B", schemaVersion: 2)], to: "z")
        }
        let a = f.event("A")
        try store.append([a], to: "x")
        try store.append([a], to: "x")  // idempotent: not counted twice
        #expect(
            try store.catalogue() == [SchemaKey("A", 1): 4, SchemaKey("B", 2): 2, SchemaKey("B", 3): 1])
    }
}
