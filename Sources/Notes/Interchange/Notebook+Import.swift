import Dispatch
import EventStore
import Glibc
import LMDB
import Synchronization

/// What an import did.
public struct ImportSummary: Sendable, Equatable {
    /// Events in the input.
    public var events: Int
    /// Events appended.
    public var appended: Int
    /// Events skipped because their id was already stored (an earlier import of the same file).
    public var skipped: Int

    public init(events: Int, appended: Int, skipped: Int) {
        self.events = events
        self.appended = appended
        self.skipped = skipped
    }
}

extension Notebook {
    /// Appends the events of `batch` in one write transaction: all of them or, when any line is
    /// refused, none.
    ///
    /// Events whose id is already stored are skipped (so importing a file twice, or a longer
    /// export of the same store after a shorter one, appends only what is new), provided they
    /// are stored at the same stream and version. Every other event must continue its stream:
    /// its version is the stream's version in the store, plus the events before it in the
    /// file, plus one. `recordedAt` and the metadata are kept; positions are the store's own.
    /// The log never goes back in time, so an event older than the store's last one is
    /// recorded at that last instant instead.
    ///
    /// Consecutive events of one stream go to the ``Appender`` in one call, and the
    /// projections are updated in the same transaction.
    ///
    /// - Throws: ``NotesError/validation(_:)`` with `line N: reason; nothing was imported`.
    @discardableResult
    public func importEvents(_ batch: EventBatch) throws(NotesError) -> ImportSummary {
        let events = batch.events
        return try write { txn, appender, _ in
            appender.deferProjections = true
            var importer = try ImportAppender(book: self, txn: txn)
            for e in events { try importer.add(e, txn: txn, appender: appender) }
            try importer.flush(txn: txn, appender: appender)
            return importer.summary
        }
    }

    /// Whether the event's id is stored; an error when it is stored somewhere else.
    fileprivate func isStored(_ e: ImportedEvent, in txn: borrowing Transaction) throws -> Bool {
        guard let position = try store.position(ofEvent: e.event.id, in: txn) else { return false }
        guard let stored = try store.event(at: position, in: txn) else {
            throw StoreError.damaged(position: position, detail: "the event id index points to a missing event")
        }
        if stored.stream != e.stream || stored.version != e.version {
            throw NotesError.validation(
                InterchangeError(
                    line: e.line,
                    "event id \(e.event.id) is already stored as version \(stored.version) of \(stored.stream)"
                ).description)
        }
        return true
    }

    /// Parses, validates and imports lines (each without its newline), all or nothing.
    @discardableResult
    public func importEvents(lines: some Sequence<[UInt8]>) throws(NotesError) -> ImportSummary {
        var batch = EventBatch(registry: store.registry, maxBodyBytes: options.maxBodyBytes)
        for line in lines {
            do { try batch.add(line: line) } catch { throw .validation(error.description) }
        }
        return try importEvents(batch)
    }

    /// Imports a file in the interchange format (`-` reads standard input), all or nothing.
    ///
    /// A regular file is parsed on another core while the events parsed so far are appended
    /// (the file is read at disk speed, so the write transaction is not held up by a slow
    /// writer of a pipe); a refused line anywhere still imports nothing and is what the error
    /// names, as when every line is parsed first. Pipes and `.gz` files are parsed first.
    @discardableResult
    public func importEvents(fromFile path: String) throws(NotesError) -> ImportSummary {
        let input = try InputFile(path: path)
        if input.isRegularFile { return try importParsingAlongside(input) }
        var batch = EventBatch(registry: store.registry, maxBodyBytes: options.maxBodyBytes)
        do {
            try input.forEachLine { line, _ in try batch.add(line: line) }
        } catch {
            throw Self.refusal(error)
        }
        return try importEvents(batch)
    }

    /// The error of a refused line or an unreadable file.
    private static func refusal(_ error: any Error) -> NotesError {
        switch error {
        case let e as InterchangeError: return .validation(e.description)
        case let e as NotesError: return e
        default: return .validation("\(error)")
        }
    }

    private func importParsingAlongside(_ input: InputFile) throws(NotesError) -> ImportSummary {
        let pipe = ParsedLines()
        let source = SendableInput(input)
        let registry = store.registry
        let maxBodyBytes = options.maxBodyBytes
        DispatchQueue.global(qos: .userInitiated).async {
            var batch = EventBatch(registry: registry, maxBodyBytes: maxBodyBytes)
            do {
                try source.file.forEachLine { line, _ in
                    try batch.add(line: line)
                    if batch.events.count >= ParsedLines.chunk { pipe.put(.events(batch.takeEvents())) }
                }
                pipe.put(.events(batch.takeEvents()))
                pipe.put(.end)
            } catch {
                pipe.put(.failed(error))
            }
        }
        // Whatever happens here, the parsing thread has finished when this returns.
        defer { pipe.drain() }
        do {
            return try store.write { txn, appender in
                appender.deferProjections = true
                var importer = try ImportAppender(book: self, txn: txn)
                while true {
                    switch pipe.take() {
                    case .events(let chunk):
                        for e in chunk { try importer.add(e, txn: txn, appender: appender) }
                    case .end:
                        try importer.flush(txn: txn, appender: appender)
                        return importer.summary
                    case .failed(let error):
                        throw error
                    }
                }
            }
        } catch {
            // A refused line anywhere in the file wins over what appending found, as when every
            // line is parsed before anything is appended.
            if let refused = pipe.drain() { throw Self.refusal(refused) }
            throw NotesError.wrap(error)
        }
    }
}

/// The input file, handed to the one thread that reads it.
private final class SendableInput: @unchecked Sendable {
    let file: InputFile
    init(_ file: InputFile) { self.file = file }
}

/// Parsed events passed from the parsing thread to the appending one, in chunks, in order.
private final class ParsedLines: Sendable {
    enum Item: Sendable {
        case events([ImportedEvent])
        case end
        case failed(any Error)
    }

    /// Events per chunk: large enough that the hand-over costs nothing, small enough that
    /// appending starts at once.
    static let chunk = 1024

    private let state = Mutex<(queue: [Item], next: Int, failure: (any Error)?)>(([], 0, nil))
    /// Signalled once per item put.
    private let ready = DispatchSemaphore(value: 0)
    /// Signalled when the parsing thread put its last item (kept signalled by ``drain()``).
    private let finished = DispatchSemaphore(value: 0)

    /// Called by the parsing thread only; `.end` or `.failed` is its last call.
    func put(_ item: Item) {
        state.withLock { s in
            s.queue.append(item)
            if case .failed(let e) = item { s.failure = e }
        }
        ready.signal()
        if case .events = item { return }
        finished.signal()
    }

    /// The next item, waiting for it. Called by the appending thread only, never after `.end`
    /// or `.failed`.
    func take() -> Item {
        ready.wait()
        return state.withLock { s in
            let item = s.queue[s.next]
            // Release the chunk's events as soon as they are taken.
            s.queue[s.next] = .end
            s.next += 1
            return item
        }
    }

    /// Waits until the parsing thread has finished; the refusal it ended with, if any.
    @discardableResult
    func drain() -> (any Error)? {
        finished.wait()
        finished.signal()
        return state.withLock { s in s.failure }
    }
}

/// Appends imported events in file order: consecutive events of one stream go to the
/// ``Appender`` in one call, each stream's versions must continue it, stored events are skipped.
private struct ImportAppender {
    let book: Notebook
    /// Into a store without events nothing can be stored already (a batch never holds an id twice).
    let mayBeStored: Bool
    var summary = ImportSummary(events: 0, appended: 0, skipped: 0)
    private var versions: [String: UInt64] = [:]
    /// The group being gathered: its stream, the stream's version before it, its events.
    private var group: [NewEvent] = []
    private var stream = ""
    private var before: UInt64 = 0
    private var firstVersion: UInt64 = 0

    init(book: Notebook, txn: borrowing Transaction) throws {
        self.book = book
        mayBeStored = try book.store.headPosition(in: txn) > 0
    }

    mutating func add(_ e: ImportedEvent, txn: borrowing Transaction, appender: Appender) throws {
        summary.events += 1
        if !group.isEmpty, e.stream == stream, e.version == firstVersion &+ UInt64(group.count),
            try !(mayBeStored && book.isStored(e, in: txn))
        {
            group.append(e.event)
            return
        }
        try flush(txn: txn, appender: appender)
        if try mayBeStored && book.isStored(e, in: txn) {
            summary.skipped += 1
            return
        }
        let current: UInt64
        if let v = versions[e.stream] {
            current = v
        } else {
            current = try book.store.streamVersion(e.stream, in: txn)
        }
        guard e.version == current &+ 1 else {
            let state = current == 0 ? "is not in the store" : "is at version \(current)"
            throw NotesError.validation(
                InterchangeError(line: e.line, "version \(e.version) does not continue \(e.stream), which \(state)")
                    .description)
        }
        group.append(e.event)
        stream = e.stream
        before = current
        firstVersion = e.version
    }

    /// Appends the group gathered so far.
    mutating func flush(txn: borrowing Transaction, appender: Appender) throws {
        guard !group.isEmpty else { return }
        try appender.append(group, to: stream, expecting: .exact(before), in: txn)
        versions[stream] = before + UInt64(group.count)
        summary.appended += group.count
        group.removeAll(keepingCapacity: true)
    }
}
