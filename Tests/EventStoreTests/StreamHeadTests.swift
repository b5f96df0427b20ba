import Basics
@_spi(FaultInjection) import LMDB
import TestSupport
import Testing

@testable import EventStore

/// A write transaction's stream heads: every read of a stream's version in the transaction, and
/// every expected-version check, must see its own appends, an abort or a restarted write must
/// leave nothing, and names are told apart by their bytes, as LMDB does.
@Suite("Stream heads in a write transaction")
struct StreamHeadTests {
    @Test("a stream appended to many times in one transaction: versions 1, 2, 3..., as read and as stored")
    func manyAppendsToOneStream() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        try store.append(f.events(2), to: "b")
        let seen = try store.write { session in
            var seen: [UInt64] = []
            for i in 0..<12 {
                let stream = i % 3 == 2 ? "b" : "a"
                seen.append(try session.append([f.event()], to: stream).streamVersion)
                seen.append(try store.streamVersion(stream, in: session.transaction))
            }
            seen.append(try session.append(f.events(3), to: "a", expecting: .exact(8)).streamVersion)
            // A stream the transaction has not touched reads as stored.
            seen.append(try store.streamVersion("c", in: session.transaction))
            return seen
        }
        #expect(seen == [1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 6, 6, 5, 5, 7, 7, 8, 8, 6, 6, 11, 0])
        let log = try verifyLog(store)
        #expect(log.streamVersions == ["a": 11, "b": 6])
        #expect(try store.verifyLog().isEmpty)
        // A read after the commit, and the next transaction, start from the stored heads.
        #expect(try store.read { txn throws in try store.streamVersion("a", in: txn) } == 11)
        #expect(try store.append([f.event()], to: "a", expecting: .exact(11)).streamVersion == 12)
    }

    @Test("expected versions inside one transaction see its earlier appends; a conflict writes nothing")
    func conflictsInsideOneTransaction() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory(seed: 2)
        // (stream, events, expected version, whether it is taken); each refusal's actual version.
        let steps: [(String, Int, ExpectedVersion, Bool)] = [
            ("s", 1, .noStream, true), ("s", 1, .noStream, false), ("s", 1, .exact(0), false),
            ("s", 2, .exact(1), true), ("s", 1, .exact(1), false), ("s", 1, .exact(4), false),
            ("t", 1, .streamExists, false), ("t", 1, .noStream, true), ("t", 1, .noStream, false),
            ("s", 1, .exact(3), true),
        ]
        let actual = try store.write { session in
            var actual: [UInt64] = []
            for (stream, count, expected, taken) in steps {
                do {
                    try session.append(f.events(count), to: stream, expecting: expected)
                    #expect(taken, "\(expected) on \(stream) was taken")
                } catch StoreError.conflict(_, _, let now) {
                    #expect(!taken, "\(expected) on \(stream) was refused")
                    actual.append(now)
                }
            }
            return actual
        }
        #expect(actual == [1, 1, 3, 3, 0, 1])
        let log = try verifyLog(store)
        #expect(log.head == 5)
        #expect(log.streamVersions == ["s": 4, "t": 1])
    }

    @Test("an aborted transaction leaves no head, and the next one starts from the stored heads")
    func abortLeavesNothing() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory(seed: 3)
        try store.append([f.event()], to: "s")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write { session in
                try session.append(f.events(3), to: "s")
                try session.append([f.event()], to: "new")
                #expect(try store.streamVersion("s", in: session.transaction) == 4)
                throw Stop()
            }
        }
        // A conflict thrown out of the body aborts the transaction too.
        #expect(throws: StoreError.self) {
            try store.write { session in
                try session.append([f.event()], to: "s", expecting: .exact(1))
                try session.append([f.event()], to: "s", expecting: .exact(1))
            }
        }
        let heads = try store.write { session in
            [
                try store.streamVersion("s", in: session.transaction),
                try store.streamVersion("new", in: session.transaction),
            ]
        }
        #expect(heads == [1, 0])
        #expect(try store.read { txn throws in try store.streamVersion("s", in: txn) } == 1)
        #expect(try store.append([f.event()], to: "new", expecting: .noStream).streamVersion == 1)
        #expect(try store.append([f.event()], to: "s", expecting: .exact(1)).streamVersion == 2)
        let log = try verifyLog(store)
        #expect(log.head == 3)
        #expect(log.streamVersions == ["s": 2, "new": 1])
    }

    @Test("a write that starts over in a grown map (its appends' puts, or the heads' own) starts from the stored heads")
    func restartedWrite() throws {
        // Three puts an event (the log, the stream index, the id index): puts 1 to 12; then the
        // heads of s and t (13, 14) and the catalogue's count (15), before the commit.
        for failing in [5, 11, 13, 14, 15] {
            let tmp = TemporaryDirectory()
            let store = try EventStore(path: tmp.path, configuration: configuration())
            var f = EventFactory(seed: 4)
            try store.append([f.event()], to: "s")
            let events = f.events(3)
            let other = f.event()
            store.environment.injectFault(.init(.put, at: failing, failing: .mapFull))
            defer { store.environment.removeFault() }
            let (attempt, versions) = try store.write { session in
                var versions: [UInt64] = []
                for e in events { versions.append(try session.append([e], to: "s").streamVersion) }
                versions.append(try session.append([other], to: "t", expecting: .noStream).streamVersion)
                return (session.attempt, versions)
            }
            #expect(attempt == 2, "put \(failing)")
            #expect(versions == [2, 3, 4, 1], "put \(failing)")
            let log = try verifyLog(store)
            #expect(log.streamVersions == ["s": 4, "t": 1], "put \(failing)")
            #expect(try store.verifyLog().isEmpty)
        }
    }

    @Test(
        "stream names that Swift's strings take for equal (composed, decomposed; K and the Kelvin sign) are two streams"
    )
    func namesByBytes() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory(seed: 5)
        let pairs = [("caf\u{E9}", "cafe\u{301}"), ("K", "\u{212A}"), ("note/\u{212A}", "note/K")]
        for (a, b) in pairs { #expect(a == b) }
        let versions = try store.write { session in
            try pairs.flatMap { a, b in
                [
                    try session.append([f.event()], to: a).streamVersion,
                    try store.streamVersion(b, in: session.transaction),
                    try session.append([f.event()], to: b).streamVersion,
                    try session.append([f.event()], to: a).streamVersion,
                    try store.streamVersion(b, in: session.transaction),
                    try store.streamVersion(a, in: session.transaction),
                ]
            }
        }
        #expect(versions == [UInt64](repeating: 0, count: 3).flatMap { _ in [1, 0, 1, 2, 1, 2] })
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == 9)
        for (a, b) in pairs {
            #expect(try store.read { txn throws in try store.streamVersion(a, in: txn) } == 2)
            #expect(try store.read { txn throws in try store.streamVersion(b, in: txn) } == 1)
        }
        // The store's own verification tells them apart too (before 2026-12-07 it reported the
        // second name's first event as "café jumps from version 1 to 1"), and so do the tests'
        // (before 2026-12-08 they keyed streams by `String`, and recorded the same false jump).
        #expect(try store.verifyLog().isEmpty)
        let log = try verifyLog(store)
        #expect(log.streamVersions.count == 6)
        for (a, b) in pairs {
            #expect(log.streamVersions[StreamName(a)] == 2 && log.streamVersions[StreamName(b)] == 1)
        }
    }
}
