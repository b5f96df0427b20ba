import Basics
import Glibc
import LMDB
import StressFixture
import TestSupport
import Testing

@testable import EventStore

/// Several `notes-stress` processes append to one store at once while this process reads.
@Suite("Several processes appending to one store")
struct MultiProcessTests {
    enum Layout: String, CustomStringConvertible, Sendable {
        /// Every process appends to the same stream with `.any`.
        case sameStream
        /// Each process has its own stream.
        case ownStreams
        /// Every commit spreads over three shared streams (many streams per transaction).
        case sharedStreamsPerCommit
        /// Same stream, optimistic `.exact` appends retried on conflict.
        case sameStreamExact
        var description: String { rawValue }
    }

    func arguments(_ layout: Layout, process: Int, store: String, count: Int) -> [String] {
        var args = ["append", store, "--count", "\(count)", "--batch", "\(1 + process % 4)", "--projections"]
        // A tiny map: the processes grow it under each other's feet.
        args += ["--map-size", "\(128 << 10)"]
        switch layout {
        case .sameStream: args += ["--stream", "shared"]
        case .ownStreams: args += ["--stream", "own-\(process)"]
        case .sharedStreamsPerCommit: args += ["--stream", "multi", "--streams", "3"]
        case .sameStreamExact: args += ["--stream", "shared", "--expect", "exact"]
        }
        return args
    }

    @Test(
        "no event is lost or duplicated, positions are gap-free, versions contiguous",
        arguments: [
            (2, Layout.sameStream), (4, .sameStream), (4, .ownStreams), (4, .sharedStreamsPerCommit),
            (4, .sameStreamExact),
        ])
    func concurrentAppends(processes: Int, layout: Layout) throws {
        let tmp = TemporaryDirectory()
        let path = tmp.child("store")  // not created yet: the processes race to create it
        let count = 150
        let children = try (0..<processes).map { i in
            try StressChild(arguments(layout, process: i, store: path, count: count), stderrPath: tmp.child("stderr"))
        }
        // Read while they write: every snapshot must show events and projections together.
        var snapshots = 0
        var store: EventStore?
        while children.contains(where: { !$0.hasExited }) {
            if store == nil { store = try? EventStore(path: path, configuration: stressConfiguration()) }
            if let store {
                try store.read { txn throws in
                    let head = try store.headPosition(in: txn)
                    let slot = try store.activeProjections(in: txn)
                    var counted: UInt64 = 0
                    for type in stressTypes {
                        counted += try txn.get(slot["by_type"], key: Array(type.utf8)).map(bigEndian) ?? 0
                    }
                    #expect(counted == head, "a reader saw \(head) events but projections of \(counted)")
                    if head > 0 { #expect(try store.event(at: head, in: txn) != nil) }
                }
                snapshots += 1
            }
            for child in children { child.drain() }
            usleep(2000)
        }
        var acknowledged: [(id: String, position: UInt64, stream: String, version: UInt64)] = []
        for child in children {
            #expect(
                child.finish() == 0,
                "a child failed: \(String(decoding: fileBytes(tmp.child("stderr")) ?? [], as: UTF8.self))")
            #expect(child.lines.last == "done")
            acknowledged += child.acknowledged
        }
        let reopened = try EventStore(path: path, configuration: stressConfiguration())
        let log = try verifyLog(reopened)
        #expect(acknowledged.count == processes * count)
        #expect(log.head == UInt64(processes * count))
        for ack in acknowledged {
            let stored = Identifier(ack.id).flatMap { log.events[$0] }
            #expect(stored?.position == ack.position && stored?.stream == ack.stream && stored?.version == ack.version)
        }
        #expect(Set(acknowledged.map(\.position)) == Set(1...UInt64(processes * count)))
        #expect(try projectionContents(reopened) == expectedProjections(log))
        #expect(snapshots > 0)
        if layout == .sameStreamExact { #expect(log.streamVersions == ["shared": UInt64(processes * count)]) }
    }

    @Test("a reader slot left by a killed process is cleared at the next open")
    func staleReader() throws {
        let tmp = TemporaryDirectory()
        do {
            let store = try EventStore(path: tmp.path, configuration: stressConfiguration())
            var f = EventFactory()
            try store.append([f.event("Tick", payload: [])], to: "s")
        }
        // LMDB resets the reader table when the first process opens the environment, so a
        // second reader keeps it open while the first is killed.
        let keeper = try StressChild(["hold-reader", tmp.path], stderrPath: tmp.child("stderr"))
        #expect(keeper.waitFor("holding"))
        let victim = try StressChild(["hold-reader", tmp.path], stderrPath: tmp.child("stderr"))
        #expect(victim.waitFor("holding"))
        #expect(victim.killNow())
        do {
            let env = try Environment(path: tmp.path)
            #expect(env.staleReadersCleared == 1)
            #expect(try env.clearStaleReaders() == 0)
            // Killed while this process has the environment open: cleared on demand.
            let another = try StressChild(["hold-reader", tmp.path], stderrPath: tmp.child("stderr"))
            #expect(another.waitFor("holding"))
            #expect(another.killNow())
            #expect(try env.clearStaleReaders() == 1)
        }
        #expect(keeper.killNow())
    }
}

/// The configuration notes-stress uses (projections on), with this process's registry.
func stressConfiguration() -> EventStore.Configuration {
    EventStore.Configuration(registry: stressRegistry(), projections: CountingProjections())
}
