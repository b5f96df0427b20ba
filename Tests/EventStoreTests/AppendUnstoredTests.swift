import Basics
import LMDB
import TestSupport
import Testing

@testable import EventStore

/// `WriteSession.appendUnstored` skips the id lookup: an id stored all the same, or repeated,
/// must still be refused, and the transaction that meets it must leave the store unchanged.
@Suite("appendUnstored: an id stored or repeated is refused, nothing kept")
struct AppendUnstoredTests {
    /// Whether `body` throws ``StoreError/duplicateEventID(_:)`` of `id`.
    func refusesDuplicate(_ id: Identifier, _ body: () throws -> Void) -> Bool {
        do { try body() } catch StoreError.duplicateEventID(let found) { return found == id } catch { return false }
        return false
    }

    @Test("an id the store holds: duplicateEventID, and the write rolls back whole")
    func storedID() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        let first = f.event("A")
        try store.append([first], to: "s")
        let before = try verifyLog(store)
        #expect(
            refusesDuplicate(first.id) {
                try store.write { session in
                    try session.appendUnstored(f.events(2), to: "t", expecting: .noStream)
                    try session.appendUnstored([f.event("A"), first], to: "u", expecting: .noStream)
                }
            })
        let after = try verifyLog(store)
        #expect(after.head == before.head)
        #expect(after.streamVersions == before.streamVersions)
    }

    @Test("an id twice in one call (short and long) or across calls: duplicateEventID, nothing kept")
    func repeatedIDs() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        for count in [2, 16, 17, 40] {
            var events = f.events(count)
            events[count - 1].id = events[0].id
            #expect(
                refusesDuplicate(events[0].id) {
                    _ = try store.write { session in try session.appendUnstored(events, to: "s", expecting: .any) }
                }, "\(count)")
        }
        let one = f.event("A")
        #expect(
            refusesDuplicate(one.id) {
                try store.write { session in
                    try session.appendUnstored([one], to: "s", expecting: .noStream)
                    try session.appendUnstored([one], to: "s", expecting: .exact(1))
                }
            })
        #expect(try verifyLog(store).head == 0)
        // The same ids append once the repeat is gone.
        _ = try store.write { session in try session.appendUnstored([one], to: "s", expecting: .noStream) }
        #expect(try verifyLog(store).head == 1)
    }
}
