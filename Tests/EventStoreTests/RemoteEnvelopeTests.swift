import Basics
import LMDB
import TestSupport
import Testing

@testable import EventStore

@Suite("The envelope a remote log's events become")
struct RemoteEnvelopeTests {
    @Test("a recorded event's envelope(after:) is the stored envelope, bytes and chain digest")
    func envelopeMatchesStore() throws {
        let tmp = TemporaryDirectory()
        let clock = ManualClock(1_700_000_000_000_000)
        let store = try EventStore(path: tmp.path, configuration: configuration(clock: clock))
        var f = EventFactory(seed: 19)
        let cause = Identifier.random(using: &f.rng)
        try store.append([f.event("A"), f.event("B", schemaVersion: 300)], to: "note/1", expecting: .noStream)
        clock.advance(5)
        try store.append(
            [
                f.event(
                    "C", payload: Array(repeating: 7, count: 200),
                    metadata: EventMetadata(actor: "bo ✓", command: "notes edit", causationID: cause))
            ], to: "tag/naïve")
        let stored: [[UInt8]] = try store.read { txn in
            try txn.withCursor(store.events) { c in
                var all: [[UInt8]] = []
                var entry = try c.first()
                while let e = entry {
                    all.append(Array(e.value))
                    entry = try c.next()
                }
                return all
            }
        }
        let events = try allEvents(store)
        try #require(events.count == 3 && stored.count == 3)
        var previous = RecordedEvent.genesisDigest
        for (event, bytes) in zip(events, stored) {
            let envelope = event.envelope(after: previous)
            #expect(envelope.bytes == bytes, "envelope at position \(event.position)")
            #expect(event.chainDigest(after: previous) == event.digest)
            previous = event.digest
        }
        #expect(RemoteHead.empty.digest == RecordedEvent.genesisDigest)
    }

    @Test("a batch is checked before it is sent: sizes, names, types and repeated ids")
    func batchValidation() {
        var f = EventFactory(seed: 20)
        let e = f.event()
        #expect(throws: Never.self) { try RemoteBatch([RemoteAppend(stream: "s", events: [e])]).validate() }
        let refused: [RemoteBatch] = [
            RemoteBatch([]),
            RemoteBatch([RemoteAppend(stream: "s", events: [e, e])]),
            RemoteBatch([RemoteAppend(stream: "", events: [f.event()])]),
            RemoteBatch([RemoteAppend(stream: "s", events: [f.event("")])]),
            RemoteBatch([RemoteAppend(stream: "s", expecting: .exact(UInt64.max), events: [f.event()])]),
            RemoteBatch([RemoteAppend(stream: "s", events: [f.event(payload: Array(repeating: 0, count: 17 << 20))])]),
        ]
        for batch in refused {
            #expect(throws: RemoteLogError.self) { try batch.validate() }
        }
    }
}
