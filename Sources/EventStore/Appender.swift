public import LMDB

/// Appends events inside one write transaction of ``EventStore/write(_:)``.
///
/// Assigns gap-free positions and consecutive stream versions, checks expected versions,
/// skips events whose id is already stored (idempotent retries and imports), extends the
/// hash chain, keeps the schema catalogue, and runs the projections on each appended event
/// before returning, so later reads in the same transaction see them.
///
/// Not `Sendable`: it belongs to one transaction on one thread.
public final class Appender {
    let store: EventStore
    private var loaded = false
    private var nextPosition: UInt64 = 1
    private var lastRecordedAt: Int64 = .min
    private var lastDigest = [UInt8](repeating: 0, count: Envelope.digestSize)
    private var catalogueDelta: [SchemaKey: UInt64] = [:]
    private var projectionSlot: ProjectionDatabases?
    /// Events appended so far in this transaction.
    public private(set) var appendedCount = 0
    /// When true, projections run once over every event of the transaction just before it
    /// commits, instead of after each append: far less work for bulk imports, where many events
    /// touch the same record. Reads of projections inside the transaction then lag behind.
    public var deferProjections = false
    private var pending: [LiftedEvent] = []

    init(store: EventStore) { self.store = store }

    private func load(_ txn: borrowing Transaction) throws {
        guard !loaded else { return }
        loaded = true
        try txn.withCursor(store.events) { c in
            if let last = try c.last() {
                let pos = try decodeKey(last.key)
                let view: EventView
                do { view = try Envelope.view(last.value, position: pos) } catch {
                    throw StoreError.damaged(position: pos, detail: "last event: \(error)")
                }
                nextPosition = pos + 1
                lastRecordedAt = view.recordedAt
                lastDigest = Array(view.digest)
            }
        }
        if store.configuration.projections != nil {
            projectionSlot = try store.activeProjections(in: txn)
        }
    }

    /// The instant the next event will be recorded at (never before the log's last event).
    public func now(in txn: borrowing Transaction) throws -> Int64 {
        try load(txn)
        return max(store.configuration.clock(), lastRecordedAt)
    }

    /// Appends `events` to `stream`, checking `expected` against the stream's version.
    ///
    /// Events whose id is already stored are skipped and their stored positions returned; if
    /// every event is already stored, nothing is checked or written.
    @discardableResult
    public func append(
        _ events: [NewEvent], to stream: String, expecting expected: ExpectedVersion = .any,
        in txn: borrowing Transaction
    ) throws -> AppendResult {
        try load(txn)
        guard !stream.isEmpty, stream.utf8.count <= Envelope.maxStreamLength, !stream.utf8.contains(0) else {
            throw StoreError.invalidArgument("invalid stream name \"\(stream)\"")
        }
        let streamKey = Array(stream.utf8)
        var version: UInt64 = 0
        if let v = try txn.get(store.streamHeads, key: streamKey) { version = try decodeUInt64(v) }

        var positions = [UInt64](repeating: 0, count: events.count)
        var fresh: [Int] = []
        fresh.reserveCapacity(events.count)
        var seen: Set<Identifier> = []
        for (i, e) in events.enumerated() {
            guard !e.type.isEmpty, e.type.utf8.count <= Envelope.maxTypeLength else {
                throw StoreError.invalidArgument("invalid event type \"\(e.type)\"")
            }
            if let p = try txn.get(store.eventIDs, key: e.id.bytes) {
                positions[i] = try decodeUInt64(p)
            } else if seen.insert(e.id).inserted {
                fresh.append(i)
            } else {
                throw StoreError.invalidArgument("event id \(e.id) appears twice in one append")
            }
        }
        if fresh.isEmpty { return AppendResult(positions: positions, streamVersion: version, appended: 0) }

        switch expected {
        case .any: break
        case .noStream where version != 0, .streamExists where version == 0:
            throw StoreError.conflict(stream: stream, expected: expected, actual: version)
        case .exact(let v) where v != version:
            throw StoreError.conflict(stream: stream, expected: expected, actual: version)
        default: break
        }

        var lifted: [LiftedEvent] = []
        for i in fresh {
            let e = events[i]
            version += 1
            let position = nextPosition
            nextPosition += 1
            let at = max(e.recordedAt ?? store.configuration.clock(), lastRecordedAt)
            lastRecordedAt = at
            let (bytes, digest) = Envelope.encode(
                e, stream: stream, version: version, recordedAt: at, previousDigest: lastDigest)
            lastDigest = digest
            let posKey = keyBytes(position)
            try txn.put(store.events, key: posKey, value: bytes, flags: .append)
            var sKey = streamKey
            sKey.append(0)
            sKey.append(contentsOf: keyBytes(version))
            try txn.put(store.streams, key: sKey, value: posKey, flags: .noOverwrite)
            try txn.put(store.eventIDs, key: e.id.bytes, value: posKey, flags: .noOverwrite)
            catalogueDelta[SchemaKey(e.type, e.schemaVersion), default: 0] += 1
            positions[i] = position
            appendedCount += 1
            if store.configuration.projections != nil {
                let base = LiftedEvent(
                    position: position, id: e.id, stream: stream, version: version, recordedAt: at,
                    metadata: e.metadata, type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                if store.registry.isCurrent(e.type, e.schemaVersion) {
                    lifted.append(base)
                } else {
                    let key = SchemaKey(e.type, e.schemaVersion)
                    guard store.registry.canRead(key) else {
                        throw StoreError.unreadableEvents([(key, 1)])
                    }
                    let out = try e.payload.withUnsafeBytes { p in try store.registry.upcast(key, payload: p) }
                    for (k, payload) in out {
                        var l = base
                        l.type = k.type
                        l.schemaVersion = k.version
                        l.payload = payload
                        lifted.append(l)
                    }
                }
            } else if !store.registry.schemas.isEmpty, !store.registry.canRead(SchemaKey(e.type, e.schemaVersion)) {
                throw StoreError.unreadableEvents([(SchemaKey(e.type, e.schemaVersion), 1)])
            }
        }
        try txn.put(store.streamHeads, key: streamKey, value: keyBytes(version))
        if let projections = store.configuration.projections, let slot = projectionSlot, !lifted.isEmpty {
            if deferProjections {
                pending.append(contentsOf: lifted)
            } else {
                try projections.apply(lifted, in: txn, databases: slot)
            }
        }
        return AppendResult(positions: positions, streamVersion: version, appended: fresh.count)
    }

    func finish(in txn: borrowing Transaction) throws {
        if !pending.isEmpty, let projections = store.configuration.projections, let slot = projectionSlot {
            try projections.apply(pending, in: txn, databases: slot)
            pending = []
        }
        for (key, delta) in catalogueDelta {
            let k = EventStore.catalogueKey(key)
            var count: UInt64 = 0
            if let v = try txn.get(store.meta, key: k) { count = try decodeUInt64(v) }
            try txn.put(store.meta, key: k, value: keyBytes(count + delta))
        }
        catalogueDelta = [:]
    }

    /// The projection databases in use in this transaction.
    public func projectionDatabases(in txn: borrowing Transaction) throws -> ProjectionDatabases {
        try load(txn)
        guard let slot = projectionSlot else { throw StoreError.invalidArgument("the store has no projections") }
        return slot
    }
}
