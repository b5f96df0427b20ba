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

    @Test("without writtenAt an envelope keeps format 1's bytes; with it, format 2, which decodes to it")
    func writtenAtFormat() throws {
        let id = Identifier(high: 0x0102_0304_0506_4708, low: 0x8900_0000_0000_0001)
        let at: Int64 = 0x0011_2233_4455_6677
        let event = NewEvent(
            id: id, type: "T", schemaVersion: 1, payload: [1, 2, 3], metadata: EventMetadata(actor: "a"))
        let previous = [UInt8](repeating: 9, count: 32)
        let head: [UInt8] =
            [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x47, 0x08, 0x89, 0, 0, 0, 0, 0, 0, 0x01]
            + [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77] + [1, 1, 1, 0x54, 1, 0x73, 1, 0x61, 0, 0, 0]
        let payload: [UInt8] = [3, 1, 2, 3]
        func check(_ e: NewEvent, body: [UInt8]) throws {
            let (bytes, digest) = Envelope.encode(e, stream: "s", version: 1, recordedAt: at, previousDigest: previous)
            var h = SHA256()
            h.update(previous)
            h.update(body)
            #expect(digest == h.finalize())
            #expect(Array(bytes.prefix(body.count)) == body)
            #expect(Array(bytes[body.count..<body.count + 32]) == digest)
            #expect(bytes.count == body.count + 32 + 4)
            let decoded = try bytes.withUnsafeBytes { try Envelope.view($0, position: 1).recorded }
            #expect(decoded.metadata == e.metadata && decoded.payload == e.payload && decoded.recordedAt == at)
            let recorded = RecordedEvent(
                position: 1, id: id, stream: "s", version: 1, type: "T", schemaVersion: 1, recordedAt: at,
                metadata: e.metadata, payload: e.payload, digest: digest)
            #expect(recorded.envelope(after: previous).bytes == bytes)
        }
        // Format 1, as every store holds it: unchanged byte for byte.
        try check(event, body: [1] + head + payload)
        // Format 2: the device's instant, 8 bytes big-endian, after the correlation id.
        var written = event
        written.metadata.writtenAt = -2
        try check(written, body: [2] + head + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE] + payload)
        #expect(RecordedEvent.envelopeFormat == 1 && RecordedEvent.writtenAtEnvelopeFormat == 2)
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
            RemoteBatch([
                RemoteAppend(
                    stream: "s", events: [f.event(metadata: EventMetadata(actor: "a", writtenAt: Int64.max))])
            ]),
        ]
        for batch in refused {
            #expect(throws: RemoteLogError.self) { try batch.validate() }
        }
    }
}
