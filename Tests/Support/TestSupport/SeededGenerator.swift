public import NotesWorkload

/// SplitMix64, the benchmark workloads' generator: every run of a randomized test sees the same
/// cases.
public typealias SeededGenerator = WorkloadRandom

extension WorkloadRandom {
    /// A value in `0..<n` (`n > 0`), by remainder: the draws the randomized tests were written with.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
