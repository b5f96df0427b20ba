import Basics
import FoundationEssentials
import Glibc
import LMDB
import Synchronization
import TestSupport
import Testing

@testable import EventStore

/// A clock the test moves by hand (microseconds).
final class ManualClock: Sendable {
    private let now: Mutex<Int64>
    init(_ start: Int64 = 1_700_000_000_000_000) { now = Mutex(start) }
    func set(_ value: Int64) { now.withLock { $0 = value } }
    func advance(_ micros: Int64) { now.withLock { $0 += micros } }
    var read: @Sendable () -> Int64 { { self.now.withLock { $0 } } }
}

/// Builds events with deterministic ids.
struct EventFactory {
    var rng: SeededGenerator

    init(seed: UInt64 = 1) { rng = SeededGenerator(seed: seed) }

    mutating func event(
        _ type: String = "Tick", payload: [UInt8]? = nil, schemaVersion: UInt32 = 1,
        metadata: EventMetadata = EventMetadata(actor: "tester"), recordedAt: Int64? = nil
    ) -> NewEvent {
        let bytes =
            payload ?? (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return NewEvent(
            id: Identifier.random(using: &rng), type: type, schemaVersion: schemaVersion, payload: bytes,
            metadata: metadata, recordedAt: recordedAt)
    }

    mutating func events(_ n: Int, _ type: String = "Tick") -> [NewEvent] { (0..<n).map { _ in event(type) } }
}

/// A store configuration with an injected clock and, by default, an empty (raw) registry.
func configuration(
    clock: ManualClock? = nil, registry: SchemaRegistry = SchemaRegistry(), projections: (any ProjectionSet)? = nil
) -> EventStore.Configuration {
    var c = EventStore.Configuration(registry: registry, projections: projections)
    if let clock { c.clock = clock.read }
    c.environment.noSync = true
    return c
}

/// Reads every stored event (owning copies), forward.
func allEvents(_ store: EventStore) throws -> [RecordedEvent] {
    try store.read { txn in
        var out: [RecordedEvent] = []
        try store.forEachEvent(from: 1, in: txn) { view in
            out.append(view.recorded)
            return true
        }
        return out
    }
}

/// The bytes of a file, or nil if it cannot be read.
func fileBytes(_ path: String) -> [UInt8]? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return Array(data)
}

// MARK: Whole-log verification

/// What a verified log holds.
/// A stream's name by its bytes: two names Swift's `String` takes for equal (`é` composed and
/// decomposed) are two streams to the store, and so to the checks.
struct StreamName: Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    let bytes: [UInt8]
    init(_ name: String) { bytes = Array(name.utf8) }
    init(bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }
    init(stringLiteral name: String) { self.init(name) }
    var string: String { String(decoding: bytes, as: UTF8.self) }
    var description: String { string }
}

struct VerifiedLog {
    var head: UInt64 = 0
    /// Event id -> (position, stream, version).
    var events: [Identifier: (position: UInt64, stream: String, version: UInt64)] = [:]
    var streamVersions: [StreamName: UInt64] = [:]
    var countsByType: [String: UInt64] = [:]
}

/// Checks every invariant of the log and records each problem as a test issue:
/// positions 1...head without gaps, every envelope decodes (CRC and structure), the hash chain
/// (each digest is SHA-256 of the previous digest and the event's body), recorded-at never
/// decreases, ids are unique, each stream's versions are 1, 2, 3..., and the id, stream and
/// catalogue indexes agree with the log.
@discardableResult
func verifyLog(_ store: EventStore, sourceLocation: SourceLocation = #_sourceLocation) throws -> VerifiedLog {
    try store.read { txn in
        var log = VerifiedLog()
        var expected: UInt64 = 1
        var previousDigest = [UInt8](repeating: 0, count: Envelope.digestSize)
        var lastInstant = Int64.min
        var catalogue: [SchemaKey: UInt64] = [:]
        var problems: [String] = []
        try store.forEachEvent(from: 1, in: txn) { view in
            if view.position != expected { problems.append("position \(view.position), expected \(expected)") }
            expected = view.position + 1
            let digest = Envelope.chainDigest(previous: previousDigest, body: view.body)
            if !digest.elementsEqual(view.digest) { problems.append("chain broken at \(view.position)") }
            previousDigest = Array(view.digest)
            if view.recordedAt < lastInstant { problems.append("time goes back at \(view.position)") }
            lastInstant = view.recordedAt
            let stream = view.stream
            let name = StreamName(bytes: view.streamBytes)
            let version = log.streamVersions[name, default: 0] + 1
            if view.version != version {
                problems.append("\(stream) has version \(view.version) at \(view.position), expected \(version)")
            }
            log.streamVersions[name] = view.version
            if log.events[view.id] != nil { problems.append("id \(view.id) stored twice") }
            log.events[view.id] = (view.position, stream, view.version)
            log.countsByType[view.type, default: 0] += 1
            catalogue[SchemaKey(view.type, view.schemaVersion), default: 0] += 1
            if problems.count > 20 { return false }
            return true
        }
        log.head = expected - 1
        if try store.headPosition(in: txn) != log.head { problems.append("head differs from the last position") }
        if try txn.count(store.eventIDs) != Int(log.head) { problems.append("event id index size differs") }
        if try txn.count(store.streams) != Int(log.head) { problems.append("stream index size differs") }
        for (stream, version) in log.streamVersions where try store.streamVersion(stream.string, in: txn) != version {
            problems.append("stream head of \(stream) differs")
        }
        if try store.catalogue(in: txn) != catalogue { problems.append("catalogue differs from the log") }
        for (id, entry) in log.events.prefix(2000) where try store.position(ofEvent: id, in: txn) != entry.position {
            problems.append("id index of \(id) differs")
        }
        for p in problems { Issue.record(Comment(rawValue: p), sourceLocation: sourceLocation) }
        return log
    }
}
