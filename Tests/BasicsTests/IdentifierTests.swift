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

    @Test("the byte-shuffle reader of canonical UUIDs and the word-at-a-time one agree on every byte at every place")
    func uuidReadersAgree() {
        let base = Array("0123abcd-ef45-6789-a0b1-c2d3e4f5a6b7".utf8)
        let expected = (high: UInt64(0x0123_abcd_ef45_6789), low: UInt64(0xa0b1_c2d3_e4f5_a6b7))
        base.withUnsafeBytes { b in
            #expect(UUIDText.parseLowercase(b).map { $0 == expected } == true)
            #expect(UUIDText.parseLowercaseWords(b).map { $0 == expected } == true)
        }
        var mismatches: [String] = []
        var accepted = 0
        for place in base.indices {
            for value in 0...255 {
                var bytes = base
                bytes[place] = UInt8(value)
                bytes.withUnsafeBytes { b in
                    let fast = UUIDText.parseLowercase(b)
                    let words = UUIDText.parseLowercaseWords(b)
                    if fast.map({ [$0.high, $0.low] }) != words.map({ [$0.high, $0.low] }) {
                        mismatches.append("byte \(value) at \(place)")
                    }
                    if fast != nil { accepted += 1 }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        // At each of the 32 digit places the 16 lowercase digits, at each of the 4 dashes a dash.
        #expect(accepted == 32 * 16 + 4)
        for short in [Array(base.dropLast()), base + [0x30]] {
            short.withUnsafeBytes { #expect(UUIDText.parseLowercase($0) == nil) }
        }
    }

    @Test("the two UUID readers agree on canonical texts with many bytes changed at once")
    func uuidReadersAgreeOnManyChanges() {
        var state: UInt64 = 0xC0FFEE
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let digits = Array("0123456789abcdefABCDEF-g/:`@G".utf8)
        var mismatches = 0
        var accepted = 0
        for _ in 0..<200_000 {
            var bytes = Array("00000000-0000-0000-0000-000000000000".utf8)
            for i in bytes.indices where bytes[i] != 0x2D { bytes[i] = digits[next(16)] }
            for _ in 0..<next(3) {
                bytes[next(36)] = next(2) == 0 ? digits[next(digits.count)] : UInt8(next(256))
            }
            bytes.withUnsafeBytes { b in
                let fast = UUIDText.parseLowercase(b).map { [$0.high, $0.low] }
                if fast != UUIDText.parseLowercaseWords(b).map({ [$0.high, $0.low] }) { mismatches += 1 }
                if fast != nil { accepted += 1 }
            }
        }
        #expect(mismatches == 0)
        #expect(accepted > 10_000)
    }
}
