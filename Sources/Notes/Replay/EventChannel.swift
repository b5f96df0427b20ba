import Dispatch
import EventStore

/// Stored events handed by the scan that walks the log to a scan on another core that folds
/// them: one producer, one consumer, in batches through a fixed ring of slots.
///
/// The events' bytes are the producer's read transaction's: it stays open until the consumer
/// has signalled ``finished``. The semaphores order the slots' writes before their reads.
final class EventChannel: @unchecked Sendable {
    /// Events in a batch; the ring holds ``batchCount`` of them.
    static let batchSize = 512
    static let batchCount = 8

    private let items: UnsafeMutablePointer<StoredEvent>
    /// Each slot's count of events; a negative count, `-1 - n`, marks the last batch.
    private let counts: UnsafeMutablePointer<Int>
    private let filled = DispatchSemaphore(value: 0)
    private let free = DispatchSemaphore(value: EventChannel.batchCount)
    /// Signalled by the consumer once it has finished (folded and turned its texts into
    /// strings) or failed: then the producer may end its read transaction.
    let finished = DispatchSemaphore(value: 0)

    // The producer's side, touched by its thread only.
    private var writing = 0
    private var written = 0
    private var holding = false
    private var closed = false
    // The consumer's side, touched by its thread only.
    private var reading = 0

    init() {
        items = .allocate(capacity: Self.batchSize * Self.batchCount)
        counts = .allocate(capacity: Self.batchCount)
    }

    deinit {
        items.deallocate()
        counts.deallocate()
    }

    /// Queues `event` (producer), waiting for a free slot when the consumer is a whole ring
    /// behind.
    @inline(__always)
    func send(_ event: StoredEvent) {
        if !holding {
            free.wait()
            holding = true
        }
        (items + writing * Self.batchSize + written).initialize(to: event)
        written += 1
        if written == Self.batchSize { publish(last: false) }
    }

    private func publish(last: Bool) {
        counts[writing] = last ? -1 - written : written
        writing = (writing + 1) % Self.batchCount
        written = 0
        holding = false
        filled.signal()
    }

    /// Sends the events queued and the end (producer); later calls do nothing.
    func close() {
        guard !closed else { return }
        closed = true
        if !holding {
            free.wait()
            holding = true
        }
        publish(last: true)
    }

    /// Calls `body` with each batch of events in order until the end (consumer); the batch is
    /// valid only during the call.
    func receive(_ body: (UnsafeBufferPointer<StoredEvent>) -> Void) {
        while true {
            filled.wait()
            let count = counts[reading]
            let n = count < 0 ? -1 - count : count
            body(UnsafeBufferPointer(start: items + reading * Self.batchSize, count: n))
            reading = (reading + 1) % Self.batchCount
            free.signal()
            if count < 0 { return }
        }
    }
}
