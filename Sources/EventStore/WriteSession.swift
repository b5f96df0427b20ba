public import Basics
public import LMDB

/// What the body of ``EventStore/write(reserving:_:)`` is lent: the write transaction and the
/// appender that owns it, in one value.
///
/// ```swift
/// try store.write { session in
///     let head = try store.streamVersion("note/…", in: session.transaction)
///     try session.append([event], to: "note/…", expecting: .exact(head))
/// }
/// ```
///
/// The body may run more than once: when the map turns out too small the transaction is rolled
/// back, the map grows and the body starts again with a new session (``attempt`` counts the
/// runs). So a body takes its ids from ``newID()``, which gives the same ids again on a new
/// attempt, reads its inputs again from their beginning, and has no effect outside the
/// transaction; whatever it returns is what the committed attempt returned.
///
/// `~Copyable` and not `Sendable`: it belongs to one transaction on one thread and cannot
/// outlive the closure it is lent to.
public struct WriteSession: ~Copyable {
    /// The write transaction; everything done through it commits or rolls back together.
    public let transaction: Transaction
    /// 1 on the first run of the body, then 2, 3... after each growth of the map.
    public let attempt: Int
    let appender: Appender
    private let ids: IdentifierTape

    init(transaction: consuming Transaction, attempt: Int, appender: Appender, ids: IdentifierTape) {
        self.transaction = transaction
        self.attempt = attempt
        self.appender = appender
        self.ids = ids
    }

    /// Appends `events` to `stream`, checking `expected` against the stream's version; see
    /// ``Appender/append(_:to:expecting:in:)``.
    @discardableResult
    public func append(_ events: [NewEvent], to stream: String, expecting expected: ExpectedVersion = .any) throws
        -> AppendResult
    {
        try appender.append(events, to: stream, expecting: expected, in: transaction)
    }

    /// ``append(_:to:expecting:)`` of events whose ids the caller knows are not stored (a bulk
    /// import into an empty log, its ids checked unique): they are not looked up first, and one
    /// stored all the same fails the append (``StoreError/duplicateEventID(_:)``) rather than
    /// being skipped.
    @discardableResult
    public func appendUnstored(_ events: [NewEvent], to stream: String, expecting expected: ExpectedVersion) throws
        -> AppendResult
    {
        try appender.append(events, to: stream, expecting: expected, unstoredIDs: true, in: transaction)
    }

    /// Removes the log's unconfirmed tail, every event after `position`, before any append of this
    /// transaction, and returns it. With `rebuildingProjections`, the projections are rebuilt in
    /// bulk before the commit; without, this transaction's appends leave them alone, and the
    /// caller must bring up to date every record the removed and appended events touch before it
    /// commits. See ``EventStore/write(reserving:_:)``: a sync rewrites the events a shared log
    /// has not ordered yet on top of those it pulled, and nothing else may remove an event.
    public func removeTail(after position: UInt64, rebuildingProjections: Bool = true) throws -> [RecordedEvent] {
        try appender.removeTail(after: position, rebuild: rebuildingProjections, in: transaction)
    }

    /// Appends an event a shared log ordered, at its position, instant and version, checking that
    /// the local chain digest equals the shared log's (``StoreError/diverged(position:detail:)``).
    public func appendConfirmed(_ event: RecordedEvent) throws {
        try appender.appendConfirmed(event, in: transaction)
    }

    /// Rewrites an unconfirmed event that a shared log confirmed unchanged but for its instant,
    /// in place, after the event whose digest is `previousDigest`; returns its new digest. See
    /// ``Appender``'s `confirmInPlace`.
    public func confirmInPlace(_ event: RecordedEvent, previousDigest: [UInt8]) throws -> [UInt8] {
        try appender.confirmInPlace(event, previousDigest: previousDigest, in: transaction)
    }

    /// The chain digest of the event at `position` (the genesis digest for 0).
    public func digest(at position: UInt64) throws -> [UInt8] {
        guard position > 0 else { return RecordedEvent.genesisDigest }
        guard let e = try appender.store.event(at: position, in: transaction) else {
            throw StoreError.damaged(position: position, detail: "missing event")
        }
        return e.digest
    }

    /// The position and chain digest of the log's last event in this transaction.
    public func logHead() throws -> (position: UInt64, digest: [UInt8]) {
        try appender.head(in: transaction)
    }

    /// A fresh id from the store's generator; the nth call of every attempt returns the same id.
    public func newID() -> Identifier { ids.next() }

    /// The instant the next event will be recorded at (never before the log's last event).
    public func now() throws -> Int64 { try appender.now(in: transaction) }

    /// Events appended so far in this attempt.
    public var appendedCount: Int { appender.appendedCount }

    /// The projection databases in use in this transaction.
    public func projectionDatabases() throws -> ProjectionDatabases {
        try appender.projectionDatabases(in: transaction)
    }

    /// Projections run over many events at once from now on (a bulk import): before the commit,
    /// or at ``applyDeferredProjections()``. Reads of projections in the transaction lag behind:
    /// they see the events appended before this call, and those of each
    /// ``applyDeferredProjections()``.
    ///
    /// When the log holds no more events than `expected`, the events the caller means to append
    /// (an import into a new or small store; 0 when it cannot tell), the projections are
    /// rebuilt in bulk instead, in this transaction, before it commits: far less work than
    /// folding each note's records in place. Reads of projections then see only what was there
    /// before this call.
    public func deferProjections(expecting expected: Int) throws {
        try appender.deferProjections(expecting: expected, in: transaction)
    }

    /// Runs the deferred projections over the events appended since they last ran, so that a
    /// long import does not hold every event of the transaction in memory; the store file's
    /// pages read so far are given back too (``Environment/releaseMappedPages()``).
    public func applyDeferredProjections() throws {
        try appender.applyPending(in: transaction)
        appender.store.environment.releaseMappedPages()
    }

    /// Whether the projections are to be rebuilt in bulk before the commit (see
    /// ``deferProjections(expecting:)``).
    public var projectsInBulk: Bool { appender.projectsInBulk }

    /// How many events wait for their deferred projections.
    public var deferredCount: Int { appender.pendingCount }

    /// About how many bytes of memory the events waiting for their deferred projections hold.
    public var deferredBytes: Int { appender.pendingBytes }
}

/// Ids handed out across the attempts of one write: an attempt that starts again gets the ids
/// of the attempt before it, in the same order, then fresh ones.
final class IdentifierTape {
    private let generator: any IdentifierGenerator
    private var drawn: [Identifier] = []
    private var position = 0

    init(_ generator: any IdentifierGenerator) { self.generator = generator }

    /// Starts the tape over, for a new attempt.
    func rewind() { position = 0 }

    func next() -> Identifier {
        defer { position += 1 }
        if position < drawn.count { return drawn[position] }
        let id = generator.next()
        drawn.append(id)
        return id
    }
}
