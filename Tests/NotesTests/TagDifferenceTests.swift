import Basics
import NotesWorkload
import Testing

@testable import Notes

@Suite("Tag differences between versions")
struct TagDifferenceTests {
    /// The sets' answer, in the arrays' order: what `difference` must give.
    func reference(_ old: [Identifier], _ new: [Identifier]) -> (added: [Identifier], removed: [Identifier]) {
        (new.filter { !old.contains($0) }, old.filter { !new.contains($0) })
    }

    @Test("the same ids added and removed as a search of the whole arrays finds, in their order")
    func matchesWholeSearch() {
        var rng = WorkloadRandom(seed: 11)
        let pool = (0..<600).map { Identifier(high: 0, low: UInt64($0)) }
        for round in 0..<400 {
            // Short and long lists (past the size where sets are used), mostly one change
            // apart as versions are, sometimes shuffled or replaced.
            let size = round % 4 == 0 ? Int(rng.next() % 300) : Int(rng.next() % 12)
            var old = Array(pool.shuffled(using: &rng).prefix(size))
            var new = old
            switch rng.next() % 5 {
            case 0: new.append(pool[Int(rng.next() % 600)])
            case 1: if !new.isEmpty { new.remove(at: Int(rng.next() % UInt64(new.count))) }
            case 2: new.shuffle(using: &rng)
            case 3: new = Array(pool.shuffled(using: &rng).prefix(Int(rng.next() % 300)))
            default: old.insert(pool[Int(rng.next() % 600)], at: 0)
            }
            // A tag is held once.
            old = unique(old)
            new = unique(new)
            let got = NoteChange.difference(from: old, to: new)
            let want = reference(old, new)
            #expect(got.added == want.added && got.removed == want.removed, "round \(round)")
        }
    }

    @Test("no change, everything new, everything gone")
    func edges() {
        let ids = (0..<40).map { Identifier(high: 1, low: UInt64($0)) }
        #expect(NoteChange.difference(from: ids, to: ids) == ([], []))
        #expect(NoteChange.difference(from: [], to: ids) == (ids, []))
        #expect(NoteChange.difference(from: ids, to: []) == ([], ids))
        let moved = Array(ids[1...]) + [ids[0]]
        #expect(NoteChange.difference(from: ids, to: moved) == ([], []))
    }

    private func unique(_ ids: [Identifier]) -> [Identifier] {
        var seen = Set<Identifier>()
        return ids.filter { seen.insert($0).inserted }
    }
}
