import EventStore

/// Seconds of the monotonic clock, for timeouts and kill delays in tests.
public func monotonicSeconds() -> Double { Double(EventStore.monotonicMicros()) / 1e6 }
