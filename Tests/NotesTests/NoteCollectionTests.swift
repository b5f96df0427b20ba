import Basics
import EventStore
import Notes
import Testing

/// The notes of a folded state: found by id, replaced in place, equal whatever their order.
@Suite("Note collection")
struct NoteCollectionTests {
    static func note(_ n: UInt64, _ title: String = "t") -> Note {
        Note(
            id: Identifier(high: n &* 0x9E37_79B9_7F4A_7C15, low: n), title: title, body: "b\(n)", createdAt: 1,
            updatedAt: 1, version: 1)
    }

    @Test("thousands of notes are found by id, absent ids are not, and updates replace in place")
    func findAndUpdate() {
        let notes = (1...5_000).map { Self.note($0) }
        var c = NoteCollection(notes)
        #expect(c.count == 5_000 && !c.isEmpty)
        #expect(notes.allSatisfy { c[$0.id] == $0 })
        #expect(c[Identifier(high: 1, low: 1)] == nil)
        c.update(Self.note(42, "changed"))
        #expect(c.count == 5_000 && c[Self.note(42).id]?.title == "changed")
        c.update(Self.note(9_999))
        #expect(c.count == 5_001 && c[Self.note(9_999).id] == Self.note(9_999))
        c.modify(Self.note(7).id) { $0.pinned = true }
        #expect(c[Self.note(7).id]?.pinned == true)
        var grown = NoteCollection()
        for n in 1...3_000 as ClosedRange<UInt64> { grown.update(Self.note(n)) }
        #expect(grown.count == 3_000 && (1...3_000).allSatisfy { grown[Self.note(UInt64($0)).id] != nil })
    }

    @Test("collections are equal when they hold the same notes in any order")
    func equality() {
        let notes = (1...200).map { Self.note($0) }
        #expect(NoteCollection(notes) == NoteCollection(notes.reversed()))
        #expect(NoteCollection(notes) != NoteCollection(Array(notes.dropLast())))
        var changed = NoteCollection(notes)
        changed.update(Self.note(3, "other"))
        #expect(NoteCollection(notes) != changed)
        #expect(NoteCollection() == NoteCollection([]))
    }
}
