import EventStore
import LMDB

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
            return try append(events, txn: txn, appender: appender)
        }
    }

    private func append(_ events: [ImportedEvent], txn: borrowing Transaction, appender: Appender) throws
        -> ImportSummary
    {
        var versions: [String: UInt64] = [:]
        var summary = ImportSummary(events: events.count, appended: 0, skipped: 0)
        // Into a store without events nothing can be stored already (the batch has no id twice).
        let mayBeStored = try store.headPosition(in: txn) > 0
        // One buffer for every group: most groups are a single event.
        var group: [NewEvent] = []
        var i = 0
        while i < events.count {
            if try mayBeStored && isStored(events[i], in: txn) {
                summary.skipped += 1
                i += 1
                continue
            }
            let stream = events[i].stream
            let version = events[i].version
            let current: UInt64
            if let v = versions[stream] {
                current = v
            } else {
                current = try store.streamVersion(stream, in: txn)
            }
            guard version == current &+ 1 else {
                let state = current == 0 ? "is not in the store" : "is at version \(current)"
                throw NotesError.validation(
                    InterchangeError(
                        line: events[i].line, "version \(version) does not continue \(stream), which \(state)"
                    ).description)
            }
            group.removeAll(keepingCapacity: true)
            group.append(events[i].event)
            var j = i + 1
            while j < events.count, events[j].stream == stream, events[j].version == version &+ UInt64(group.count),
                try !(mayBeStored && isStored(events[j], in: txn))
            {
                group.append(events[j].event)
                j += 1
            }
            try appender.append(group, to: stream, expecting: .exact(current), in: txn)
            versions[stream] = current + UInt64(group.count)
            summary.appended += group.count
            i = j
        }
        return summary
    }

    /// Whether the event's id is stored; an error when it is stored somewhere else.
    private func isStored(_ e: ImportedEvent, in txn: borrowing Transaction) throws -> Bool {
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
    @discardableResult
    public func importEvents(fromFile path: String) throws(NotesError) -> ImportSummary {
        let input = try InputFile(path: path)
        var batch = EventBatch(registry: store.registry, maxBodyBytes: options.maxBodyBytes)
        do {
            try input.forEachLine { line, _ in try batch.add(line: line) }
        } catch let e as InterchangeError {
            throw .validation(e.description)
        } catch let e as NotesError {
            throw e
        } catch {
            throw .validation("\(error)")
        }
        return try importEvents(batch)
    }
}
