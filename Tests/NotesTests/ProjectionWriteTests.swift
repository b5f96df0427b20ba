import Basics
import NotesWorkload
import Testing

@testable import Notes

/// What an inline apply writes of a note's listing keys and counts: only what changed, and the
/// same result as writing everything.
@Suite("Projection writes")
struct ProjectionWriteTests {
    static func id(_ n: Int) -> Identifier { Identifier(high: 0xB000 + UInt64(n), low: UInt64(n)) }

    @Test("net counts: ids kept on both sides move nothing; ids listed twice count twice")
    func netCounts() {
        let (a, b, c) = (Self.id(1), Self.id(2), Self.id(3))
        #expect(NotesProjection.netCounts([a, b], [b, a]).isEmpty)
        #expect(NotesProjection.netCounts([c, a], [b, c]).map(\.0) == [a, b])
        #expect(NotesProjection.netCounts([c, a], [b, c]).map(\.1) == [-1, 1])
        #expect(NotesProjection.netCounts([], [a, a]).map(\.1) == [2])
        #expect(NotesProjection.netCounts([b], []).map(\.1) == [-1])
    }

    @Test("the listing keys an edit writes are those that differ among all of them, under random changes")
    func listingKeysMoved() {
        var rng = WorkloadRandom(seed: 11)
        let categories = [nil, Self.id(100), Self.id(101)]
        let tags = [Self.id(200), Self.id(201), Self.id(202)]
        var moved = 0
        for n in 0..<2_000 {
            let old = Note(
                id: Self.id(n), title: ["a", "B", "c"][rng.next(below: 3)], body: "x", pinned: rng.chance(0.3),
                category: categories[rng.next(below: 3)], archived: rng.chance(0.2), trashed: rng.chance(0.1),
                createdAt: Int64(rng.next(below: 5)), updatedAt: Int64(rng.next(below: 5)), version: 1,
                tags: Array(tags.prefix(rng.next(below: 3))))
            var new = old
            switch rng.next(below: 9) {
            case 0: new.title = ["a", "B", "c"][rng.next(below: 3)]
            case 1: new.pinned.toggle()
            case 2: new.category = categories[rng.next(below: 3)]
            case 3: new.archived.toggle()
            case 4: new.trashed.toggle()
            case 5: new.tags = Array(tags.suffix(rng.next(below: 3)))
            case 6: new.createdAt += 1
            case 7: new.body = "y"
            default: break
            }
            if rng.chance(0.7) { new.updatedAt += Int64(rng.next(below: 3)) }
            let all = (ListIndex.keys(for: old), ListIndex.keys(for: new))
            let sorts = ListIndex.sortsMoved(from: old, to: new)
            let some = (ListIndex.keys(for: old, sorts: sorts), ListIndex.keys(for: new, sorts: sorts))
            // What a write deletes and puts, from all the keys and from the sorts that moved.
            func changes(_ k: ([[UInt8]], [[UInt8]])) -> (Set<[UInt8]>, Set<[UInt8]>) {
                (Set(k.0.filter { !k.1.contains($0) }), Set(k.1.filter { !k.0.contains($0) }))
            }
            #expect(changes(all) == changes(some), "note \(n)")
            if sorts.count < ListQuery.Sort.allCases.count { moved += 1 }
        }
        #expect(moved > 300, "the shortcut was taken")
    }
}
