public import Basics
import EventStore
import Notes

/// A small, fast, seedable random number generator (SplitMix64) for benchmark workloads.
///
/// The same seed gives the same sequence on every run and platform, which is what makes a
/// workload reproducible; it is not meant for anything secret.
///
/// ```swift
/// var rng = WorkloadRandom(seed: 42)
/// let roll = rng.next(below: 6)
/// ```
public struct WorkloadRandom: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (0 when `bound` is 0), by multiply-shift: unbiased enough for
    /// workloads and free of the retry loop that would make the draw count vary.
    public mutating func next(below bound: Int) -> Int {
        guard bound > 0 else { return 0 }
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A value in `range`.
    public mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound &+ next(below: range.upperBound &- range.lowerBound &+ 1)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        unit() < p
    }

    /// A value in [0, 1) with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// A deterministic identifier derived from `seed` and `index` alone, so the id of the
    /// n-th note can be computed without replaying the workload.
    public static func identifier(seed: UInt64, salt: UInt64, index: Int) -> Identifier {
        var g = WorkloadRandom(seed: seed ^ (salt &* 0xD6E8_FEB8_6659_FD93) ^ UInt64(truncatingIfNeeded: index))
        _ = g.next()
        return Identifier.random(using: &g)
    }
}
