import Dispatch
import Synchronization
import Testing

@testable import Basics

@Suite("Identifier")
struct IdentifierTests {
    @Test("random ids are version-4 UUIDs, distinct across threads drawing from the shared pool at once")
    func randomIDs() {
        let drawn = Mutex<[Identifier]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var mine: [Identifier] = []
            for _ in 0..<5_000 { mine.append(.random()) }
            drawn.withLock { $0 += mine }
        }
        let ids = drawn.withLock { $0 }
        #expect(ids.count == 20_000)
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.high & 0xF000 == 0x4000)
            #expect(id.low >> 62 == 0b10)
        }
        // Every bit that is not fixed varies: the pool is not handing out zeros.
        let fixedHigh: UInt64 = 0xF000
        let fixedLow: UInt64 = 0xC000_0000_0000_0000
        #expect(ids.reduce(0) { $0 | $1.high } | fixedHigh == .max)
        #expect(ids.reduce(0) { $0 | $1.low } | fixedLow == .max)
        #expect(ids.reduce(UInt64.max) { $0 & $1.high } & ~(fixedHigh) == 0)
    }
}
