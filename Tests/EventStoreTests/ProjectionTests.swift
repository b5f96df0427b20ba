import LMDB
import StressFixture
import TestSupport
import Testing

@testable import EventStore

@Suite("Projections: inline apply, rebuild, slot swap, upgrade log")
struct ProjectionTests {
    func fill(_ store: EventStore, _ f: inout EventFactory, count: Int) throws {
        for i in 0..<count {
            try store.append([f.event(stressTypes[i % 2], payload: [])], to: "s\(i % 5)")
        }
    }

    @Test("inline apply equals a rebuild, and a rebuild swaps slots and logs itself")
    func inlineEqualsRebuild() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(
            path: tmp.path, configuration: configuration(registry: stressRegistry(), projections: CountingProjections())
        )
        #expect(try store.rebuildIfNeeded() == nil)  // a new store has nothing to replay
        var f = EventFactory()
        try fill(store, &f, count: 37)
        let log = try verifyLog(store)
        let inline = try projectionContents(store)
        #expect(inline == expectedProjections(log))
        #expect(inline["by_type"] == ["Tick": 19, "Tock": 18])
        let slotBefore = try store.read { txn throws in try store.activeProjections(in: txn).slot }
        let report = try store.rebuildProjections()
        #expect(report.events == 37)
        #expect(report.reason == "requested")
        #expect(report.toVersion == store.currentProjectionVersion)
        #expect(try store.read { txn throws in try store.activeProjections(in: txn).slot } == 1 - slotBefore)
        #expect(try projectionContents(store) == inline)
        // Appends after the swap go to the new slot.
        try fill(store, &f, count: 3)
        #expect(try projectionContents(store) == expectedProjections(verifyLog(store)))
        let upgrades = try store.upgradeLog()
        #expect(upgrades == [report])
    }

    @Test("a process left open across an upgrade refuses to write into the projections the new version built")
    func writeAfterUpgradeRefused() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        let old = try EventStore(
            path: tmp.path, configuration: configuration(registry: stressRegistry(), projections: CountingProjections())
        )
        #expect(try old.rebuildIfNeeded() == nil)
        try fill(old, &f, count: 4)
        let head = try old.read { txn throws in try old.headPosition(in: txn) }
        let before = try projectionContents(old)
        // The newer program rebuilds and records its version (LMDB cannot open one store twice in
        // a process: the record is what its swap writes).
        try old.environment.write { txn throws in
            try old.setMetadata("projections.version", Array("counting-2/schemas-000000000000".utf8), in: txn)
        }
        let error = #expect(throws: StoreError.self) { try fill(old, &f, count: 1) }
        guard case .projectionsChanged(let stored, let expected) = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(stored == "counting-2/schemas-000000000000")
        #expect(expected == old.currentProjectionVersion)
        #expect(try old.read { txn throws in try old.headPosition(in: txn) } == head)
        #expect(try projectionContents(old) == before)
        // The version this program writes lets it write again.
        try old.environment.write { txn throws in
            try old.setMetadata("projections.version", Array(old.currentProjectionVersion.utf8), in: txn)
        }
        try fill(old, &f, count: 1)
        #expect(try old.read { txn throws in try old.headPosition(in: txn) } == head + 1)
    }

    @Test("a changed projection version triggers a rebuild at open, once")
    func versionChange() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        do {
            let store = try EventStore(
                path: tmp.path,
                configuration: configuration(registry: stressRegistry(), projections: CountingProjections()))
            #expect(try store.rebuildIfNeeded() == nil)
            try fill(store, &f, count: 10)
        }
        // Projections damaged behind the store's back must be repaired by the rebuild.
        let v2 = CountingProjections(version: "counting-2")
        let store = try EventStore(
            path: tmp.path, configuration: configuration(registry: stressRegistry(), projections: v2))
        try store.environment.write { txn throws in
            let slot = try store.activeProjections(in: txn)
            try txn.put(slot["by_type"], key: Array("Tick".utf8), value: bytes(999))
        }
        let report = try #require(try store.rebuildIfNeeded())
        #expect(report.fromVersion?.hasPrefix("counting-1") == true)
        #expect(report.toVersion.hasPrefix("counting-2"))
        #expect(report.reason == "projection version changed")
        #expect(report.events == 10)
        #expect(try store.rebuildIfNeeded() == nil)
        #expect(try projectionContents(store) == expectedProjections(verifyLog(store)))
        #expect(try store.upgradeLog().map(\.toVersion) == [report.toVersion])
        // A new upcaster changes the projection version too.
        var registry = stressRegistry()
        registry.registerLegacy(PayloadSchema(type: "Tick", version: 0, fields: []))
        registry.register(
            Upcaster(type: "Tick", from: 0, name: "Tick.0->1", produces: [SchemaKey("Tick", 1)]) { _ in
                [RawEvent(type: "Tick", version: 1, fields: EventFields([("n", .integer(0)), ("text", .string(""))]))]
            })
        let reopened = try EventStore(path: tmp.path, configuration: configuration(registry: registry, projections: v2))
        #expect(try reopened.rebuildIfNeeded() != nil)
        #expect(try reopened.upgradeLog().count == 2)
    }

    @Test("rebuildIfNeeded does nothing when turned off or without projections")
    func rebuildDisabled() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        do {
            let store = try EventStore(
                path: tmp.path,
                configuration: configuration(registry: stressRegistry(), projections: CountingProjections()))
            try fill(store, &f, count: 4)
        }
        var c = configuration(registry: stressRegistry(), projections: CountingProjections(version: "counting-9"))
        c.rebuildIfNeeded = false
        #expect(try EventStore(path: tmp.path, configuration: c).rebuildIfNeeded() == nil)
        let plain = try EventStore(path: tmp.path, configuration: configuration(registry: stressRegistry()))
        #expect(try plain.rebuildIfNeeded() == nil)
        #expect(throws: StoreError.self) { try plain.rebuildProjections() }
    }

    /// A projection whose rebuild is taken over by "another process" halfway.
    final class SupersededProjections: ProjectionSet {
        let inner = CountingProjections()
        var version: String { inner.version }
        var databaseSpecs: [(name: String, flags: DatabaseFlags)] { inner.databaseSpecs }
        func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
            try inner.apply(events, in: txn, databases: databases)
        }
        func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws {
            let store = context.store
            try store.environment.write { txn throws in
                try store.setMetadata("projections.rebuild-token", [1, 2, 3], in: txn)
            }
            try inner.rebuild(context: context, head: head, into: databases)
        }
    }

    @Test("a rebuild taken over by another process stops and leaves the active slot serving")
    func superseded() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(
            path: tmp.path,
            configuration: configuration(registry: stressRegistry(), projections: SupersededProjections()))
        var f = EventFactory()
        try fill(store, &f, count: 6)
        let before = try projectionContents(store)
        let slot = try store.read { txn throws in try store.activeProjections(in: txn).slot }
        let error = #expect(throws: StoreError.self) { try store.rebuildProjections() }
        guard case .rebuildSuperseded = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(try store.read { txn throws in try store.activeProjections(in: txn).slot } == slot)
        #expect(try projectionContents(store) == before)
        #expect(try store.upgradeLog().isEmpty)
    }

    @Test("projections see lifted events, and a rebuild lifts the same way")
    func liftedEvents() throws {
        let tmp = TemporaryDirectory()
        final class TypeCounter: ProjectionSet {
            let version = "types-1"
            var databaseSpecs: [(name: String, flags: DatabaseFlags)] { [("by_type", []), ("by_stream", [])] }
            let counting = CountingProjections()
            func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws {
                try counting.apply(events, in: txn, databases: databases)
            }
            func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws {
                try counting.rebuild(context: context, head: head, into: databases)
            }
        }
        let store = try EventStore(
            path: tmp.path, configuration: configuration(registry: evolvingRegistry(), projections: TypeCounter()))
        var f = EventFactory()
        try store.append(
            [
                f.event("Note", payload: payload("t"), schemaVersion: 1),
                f.event("Moved", payload: payload("a", "b"), schemaVersion: 1),
            ], to: "n")
        let inline = try projectionContents(store)
        #expect(inline["by_type"] == ["Note": 1, "Left": 1, "Arrived": 1])
        try store.rebuildProjections()
        #expect(try projectionContents(store) == inline)
    }
}
