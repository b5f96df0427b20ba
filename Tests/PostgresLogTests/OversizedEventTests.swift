import Basics
import EventStore
import Notes
import PostgresFixture
import PostgresLog
import TestSupport
import Testing

extension NotebookSyncTests {
    @Test("an outbox event larger than the remote takes is named; the events before it are pushed, pulls go on")
    func oversizedOutboxEvent() throws {
        // A store whose body limit was raised above the remote's before it had a remote.
        let a = try Device(stem: 1, notebook: 187, maxBodyBytes: 20 << 20)
        let first = try a.book.add(title: "Small")
        let big = try a.book.add(title: "Large", body: String(repeating: "x", count: 17 << 20))
        try a.book.add(title: "After")
        // The refusal names the large event where it is (a rebase moves it on).
        func refusal(_ error: any Error) -> Bool {
            guard case .oversizedEvent(let at, let stream, let bytes) = error as? SyncError else { return false }
            return at == (try? a.book.position(of: big.id, version: 1)) && stream == Note.stream(big.id)
                && bytes > RemoteBatch.maxPayloadBytes
        }
        #expect(performing: { try a.sync(join: true) }, throws: refusal)
        let b = try Device(stem: 2, notebook: 187)
        try b.sync()
        #expect(try b.book.list(everything).map(\.title) == ["Small"], "what came before it was pushed")
        // The other device's edit still reaches this one: the pull comes before the push.
        try b.book.edit(first.id, body: "edited on b\n")
        try b.sync()
        // What was pushed joined the notebook: no --join again.
        #expect(performing: { try a.sync() }, throws: refusal)
        #expect(try a.book.note(first.id).body == "edited on b\n")
        #expect(try a.book.syncState().pending == 2, "the large note and the one after it wait")
        #expect(try a.book.note(big.id).body.utf8.count == 17 << 20, "kept whole")
        #expect(try a.book.verify().isEmpty)
    }
}
