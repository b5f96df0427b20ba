import Basics
import LMDB

/// Appends events inside one write transaction of ``EventStore/write(reserving:_:)``; its
/// ``WriteSession`` owns it.
///
/// Assigns gap-free positions and consecutive stream versions, checks expected versions,
/// skips events whose id is already stored (idempotent retries and imports), extends the
/// hash chain, keeps the schema catalogue, and runs the projections on each appended event
/// before returning, so later reads in the same transaction see them.
///
/// Not `Sendable`: it belongs to one transaction on one thread.
final class Appender {
    let store: EventStore
    private var loaded = false
    private var nextPosition: UInt64 = 1
    private var lastRecordedAt: Int64 = .min
    private var lastDigest = [UInt8](repeating: 0, count: Envelope.digestSize)
    /// Events appended per (type, schema version) in this transaction, and whether it is current.
    private var catalogueDelta: [(key: SchemaKey, count: UInt64, current: Bool)] = []
    /// The index in `catalogueDelta` of the key counted last.
    private var lastCounted = 0
    private var streamKey: [UInt8] = []
    private var projectionSlot: ProjectionDatabases?
    /// Events appended so far in this transaction.
    private(set) var appendedCount = 0
    /// When true, projections run once over every event of the transaction just before it
    /// commits, instead of after each append: far less work for bulk imports, where many events
    /// touch the same record. Reads of projections inside the transaction then lag behind.
    private(set) var deferProjections = false
    /// Set when deferred projections are rebuilt in bulk at the end (the transaction appends at
    /// least as many events as the log held): every event goes to this fold instead.
    private var bulk: (any BulkProjectionFold)?
    /// Events appended since the bulk fold began.
    private var bulkFolded = 0
    private var pending: [LiftedEvent] = []
    /// About the bytes `pending` holds.
    private(set) var pendingBytes = 0
    /// Set when the log's tail was removed in this transaction: the projections are rebuilt in
    /// bulk before the commit even if no event is appended after it.
    private var tailRemoved = false
    /// Set when the caller brings the projections up to date itself (a sync that re-folds the
    /// records its events touched): appends of this transaction leave them alone.
    private var projectionsWithheld = false

    init(store: EventStore) { self.store = store }

    private func load(_ txn: borrowing Transaction) throws {
        guard !loaded else { return }
        loaded = true
        nextPosition = 1
        lastRecordedAt = .min
        lastDigest = [UInt8](repeating: 0, count: Envelope.digestSize)
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
            try store.checkProjectionVersion(in: txn)
        }
    }

    /// The instant the next event will be recorded at (never before the log's last event).
    func now(in txn: borrowing Transaction) throws -> Int64 {
        try load(txn)
        return max(try checkedClock(), lastRecordedAt)
    }

    /// The clock's instant, passed by ``EventStore/Configuration/checkClock``.
    private func checkedClock() throws -> Int64 {
        let now = store.configuration.clock()
        try store.configuration.checkClock?(now)
        return now
    }

    /// Appends `events` to `stream`, checking `expected` against the stream's version.
    ///
    /// Events whose id is already stored are skipped and their stored positions returned; if
    /// every event is already stored, nothing is checked or written. With `unstoredIDs` the
    /// caller knows that none is (a bulk import into an empty log, its ids checked unique): the
    /// ids are not looked up first (a search of the id index each, 4% of such an import's
    /// instructions), and one that is stored all the same stops the append with
    /// ``StoreError/duplicateEventID(_:)`` when its id is written, rather than being skipped.
    @discardableResult
    func append(
        _ events: [NewEvent], to stream: String, expecting expected: ExpectedVersion = .any,
        unstoredIDs: Bool = false, in txn: borrowing Transaction
    ) throws -> AppendResult {
        try load(txn)
        guard !stream.isEmpty, stream.utf8.count <= Envelope.maxStreamLength, !containsNUL(stream) else {
            throw StoreError.invalidStreamName(stream)
        }
        // Keys are built in one reused buffer: `stream 0 version` for the stream index, the bare
        // stream for its head. A batch of single-event appends allocates nothing per key.
        streamKey.removeAll(keepingCapacity: true)
        streamKey.append(contentsOf: stream.utf8)
        let nameLength = streamKey.count
        var version: UInt64 = 0
        if let v = try streamKey.withUnsafeBytes({ k in try txn.get(store.streamHeads, k) }) {
            version = try decodeUInt64(v)
        }

        // The stored position of each event already stored; 0 for the fresh ones, appended
        // below (an event's position is never 0), so no list of them is allocated.
        var positions = [UInt64](repeating: 0, count: events.count)
        var freshCount = 0
        // Ids repeated inside one call: a linear check for the usual handful, a set beyond.
        var seen: Set<Identifier> = []
        for i in events.indices {
            let type = events[i].type
            guard !type.isEmpty, type.utf8.count <= Envelope.maxTypeLength else {
                throw StoreError.invalidEventType(type)
            }
            let id = events[i].id
            if !unstoredIDs, let p = try withKey(id, { k in try txn.get(store.eventIDs, k) }) {
                positions[i] = try decodeUInt64(p)
                continue
            }
            let repeated: Bool
            if events.count <= 16 {
                repeated = (0..<i).contains { positions[$0] == 0 && events[$0].id == id }
            } else {
                repeated = !seen.insert(id).inserted
            }
            if repeated { throw StoreError.duplicateEventID(id) }
            freshCount += 1
        }
        if freshCount == 0 { return AppendResult(positions: positions, streamVersion: version, appended: 0) }

        switch expected {
        case .any: break
        case .noStream where version != 0, .streamExists where version == 0:
            throw StoreError.conflict(stream: stream, expected: expected, actual: version)
        case .exact(let v) where v != version:
            throw StoreError.conflict(stream: stream, expected: expected, actual: version)
        default: break
        }

        let projecting = store.configuration.projections != nil && !projectionsWithheld
        // Deferred projections collect straight into `pending`; inline ones into this call's list.
        var lifted: [LiftedEvent] = []
        for i in events.indices where positions[i] == 0 {
            version += 1
            let position = nextPosition
            nextPosition += 1
            let at = max(try events[i].recordedAt ?? checkedClock(), lastRecordedAt)
            lastRecordedAt = at
            let (bytes, digest) = Envelope.encode(
                events[i], stream: stream, version: version, recordedAt: at, previousDigest: lastDigest)
            lastDigest = digest
            let id = events[i].id
            try withKey(position) { posKey in
                try bytes.withUnsafeBytes { v in try txn.put(store.events, posKey, v, flags: .append) }
                streamKey.removeSubrange(nameLength...)
                streamKey.append(0)
                withUnsafeBytes(of: version.bigEndian) { streamKey.append(contentsOf: $0) }
                try streamKey.withUnsafeBytes { k in try txn.put(store.streams, k, posKey, flags: .noOverwrite) }
                do {
                    try withKey(id) { k in try txn.put(store.eventIDs, k, posKey, flags: .noOverwrite) }
                } catch let error as LMDBError where error.code == .keyExists {
                    throw StoreError.duplicateEventID(id)
                }
            }
            let current = count(SchemaKey(events[i].type, events[i].schemaVersion))
            positions[i] = position
            appendedCount += 1
            if projecting {
                let e = events[i]
                let base = LiftedEvent(
                    position: position, id: e.id, stream: stream, version: version, recordedAt: at,
                    metadata: e.metadata, type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                if current {
                    if deferProjections {
                        pending.append(base)
                        pendingBytes &+= base.payload.count &+ 160
                    } else {
                        lifted.append(base)
                    }
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
                        if deferProjections {
                            pending.append(l)
                            pendingBytes &+= l.payload.count &+ 160
                        } else {
                            lifted.append(l)
                        }
                    }
                }
            } else if !current, !store.registry.schemas.isEmpty,
                !store.registry.canRead(SchemaKey(events[i].type, events[i].schemaVersion))
            {
                throw StoreError.unreadableEvents([(SchemaKey(events[i].type, events[i].schemaVersion), 1)])
            }
        }
        streamKey.removeSubrange(nameLength...)
        try streamKey.withUnsafeBytes { k in
            try withKey(version) { v in try txn.put(store.streamHeads, k, v) }
        }
        if let projections = store.configuration.projections, let slot = projectionSlot, !lifted.isEmpty {
            try projections.apply(lifted, in: txn, databases: slot)
        }
        return AppendResult(positions: positions, streamVersion: version, appended: freshCount)
    }

    /// Counts one appended event of `key` for the schema catalogue; returns whether `key` is a
    /// current schema. Appends see few distinct keys, so a short list beats hashing each one.
    private func count(_ key: SchemaKey) -> Bool {
        // The key of the event before first: a stream's events are often of one type.
        if lastCounted < catalogueDelta.count, catalogueDelta[lastCounted].key == key {
            catalogueDelta[lastCounted].count += 1
            return catalogueDelta[lastCounted].current
        }
        if let i = catalogueDelta.firstIndex(where: { $0.key == key }) {
            lastCounted = i
            catalogueDelta[i].count += 1
            return catalogueDelta[i].current
        }
        catalogueDelta.append((key, 1, store.registry.isCurrent(key.type, key.version)))
        lastCounted = catalogueDelta.count - 1
        return catalogueDelta[catalogueDelta.count - 1].current
    }

    /// From now on projections run over many events at once: before the commit, or at
    /// ``applyPending(in:)``. When the log holds no more events than `expected` (the events the
    /// caller means to append, 0 when it cannot tell), they are rebuilt in bulk instead: the log
    /// so far is folded in memory with every event appended after it, and the projection
    /// databases are cleared and written in key order before the commit, as a rebuild writes
    /// them (unless no event came after all: the projections are current then). Reads of
    /// projections in the transaction see neither until it commits.
    func deferProjections(expecting expected: Int, in txn: borrowing Transaction) throws {
        guard !deferProjections else { return }
        try load(txn)
        deferProjections = true
        guard let projections = store.configuration.projections, projectionSlot != nil,
            expected > 0, nextPosition - 1 <= UInt64(expected), let fold = projections.makeBulkFold()
        else { return }
        if nextPosition > 1 {
            try store.forEachEvent(from: 1, in: txn) { view in
                try fold.fold(view, store: store)
                return true
            }
        }
        bulk = fold
    }

    var projectsInBulk: Bool { bulk != nil }

    /// Runs the deferred projections over the events waiting for them (in bulk mode, folds
    /// them in memory).
    func applyPending(in txn: borrowing Transaction) throws {
        guard !pending.isEmpty, let projections = store.configuration.projections, let slot = projectionSlot else {
            return
        }
        if let bulk {
            for e in pending { try bulk.fold(e) }
            bulkFolded += pending.count
        } else {
            try projections.apply(pending, in: txn, databases: slot)
        }
        pending.removeAll()
        pendingBytes = 0
    }

    /// Events waiting for their deferred projections.
    var pendingCount: Int { pending.count }

    func finish(in txn: borrowing Transaction) throws {
        try applyPending(in: txn)
        if let bulk, let slot = projectionSlot, bulkFolded > 0 || tailRemoved {
            self.bulk = nil
            for db in slot.all { try txn.clear(db) }
            try bulk.write(into: slot, writer: TransactionBulkWriter(txn.lend(), store: store))
        }
        for (key, delta, _) in catalogueDelta {
            let k = EventStore.catalogueKey(key)
            var count: UInt64 = 0
            if let v = try txn.get(store.meta, key: k) { count = try decodeUInt64(v) }
            try txn.put(store.meta, key: k, value: keyBytes(count + delta))
        }
        catalogueDelta = []
    }

    /// Removes every event after `position` from the log, their stream entries, ids and catalogue
    /// counts, and has the projections rebuilt in bulk from the log that is left (and what is
    /// appended after it) before the commit, or, with `rebuild` false, leaves them alone for the
    /// rest of the transaction: the caller re-folds what the removed and appended events touched.
    /// Returns the removed events, oldest first.
    ///
    /// Only a log's unconfirmed tail may go this way (events a shared log has not ordered yet,
    /// which a sync rewrites on top of the events it pulled); it must come before any append of
    /// the transaction.
    func removeTail(after position: UInt64, rebuild: Bool, in txn: borrowing Transaction) throws -> [RecordedEvent] {
        guard appendedCount == 0, !deferProjections else {
            throw StoreError.unexpected("the log's tail can only be removed before any append of a transaction")
        }
        var removed: [RecordedEvent] = []
        var firstVersion: [String: UInt64] = [:]
        var catalogue: [SchemaKey: UInt64] = [:]
        try txn.withCursor(store.events) { c in
            var entry = try c.last()
            while let e = entry {
                let pos = try decodeKey(e.key)
                guard pos > position else { break }
                let event = try Envelope.storedView(e.value, position: pos).recorded
                removed.append(event)
                entry = try c.previous()
            }
        }
        guard !removed.isEmpty else { return [] }
        removed.reverse()
        for event in removed {
            try withKey(event.position) { k in _ = try txn.delete(store.events, k) }
            try withKey(event.id) { k in _ = try txn.delete(store.eventIDs, k) }
            var key = Array(event.stream.utf8)
            key.append(0)
            withUnsafeBytes(of: event.version.bigEndian) { key.append(contentsOf: $0) }
            _ = try txn.delete(store.streams, key: key)
            firstVersion[event.stream] = min(firstVersion[event.stream] ?? .max, event.version)
            catalogue[SchemaKey(event.type, event.schemaVersion), default: 0] += 1
        }
        for (stream, first) in firstVersion {
            if first > 1 {
                try txn.put(store.streamHeads, key: Array(stream.utf8), value: keyBytes(first - 1))
            } else {
                _ = try txn.delete(store.streamHeads, key: Array(stream.utf8))
            }
        }
        for (key, count) in catalogue {
            let k = EventStore.catalogueKey(key)
            let stored = try txn.get(store.meta, key: k).map { try decodeUInt64($0) } ?? 0
            if stored > count {
                try txn.put(store.meta, key: k, value: keyBytes(stored - count))
            } else {
                _ = try txn.delete(store.meta, key: k)
            }
        }
        // The appender reads the log's new last event again, and the projections are rebuilt (or
        // left to the caller).
        loaded = false
        try load(txn)
        if rebuild {
            tailRemoved = true
            try deferProjections(expecting: Int.max, in: txn)
        } else {
            projectionsWithheld = true
        }
        return removed
    }

    /// Appends an event a shared log ordered: at its position, instant and stream version, with
    /// the chain digest the shared log computed, or throws ``StoreError/diverged(position:detail:)``
    /// and appends nothing.
    func appendConfirmed(_ event: RecordedEvent, in txn: borrowing Transaction) throws {
        try load(txn)
        guard event.position == nextPosition else {
            throw StoreError.diverged(
                position: event.position, detail: "the local log's next position is \(nextPosition)")
        }
        guard event.recordedAt >= lastRecordedAt else {
            throw StoreError.diverged(position: event.position, detail: "its instant is before the event before it")
        }
        if let at = try withKey(event.id, { k in try txn.get(store.eventIDs, k) }) {
            throw StoreError.diverged(
                position: event.position, detail: "its id \(event.id) is already at position \(try decodeUInt64(at))")
        }
        let streamHead = try txn.get(store.streamHeads, key: Array(event.stream.utf8)).map { try decodeUInt64($0) } ?? 0
        guard event.version == streamHead + 1 else {
            throw StoreError.diverged(
                position: event.position,
                detail:
                    "\(event.stream) is at version \(streamHead) here, the remote's event is version \(event.version)")
        }
        let new = NewEvent(
            id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
            metadata: event.metadata, recordedAt: event.recordedAt)
        try append(
            [new], to: event.stream, expecting: event.version > 1 ? .exact(event.version - 1) : .noStream, in: txn)
        guard lastDigest == event.digest else {
            throw StoreError.diverged(
                position: event.position, detail: StoreError.chainDigestDiffers)
        }
    }

    /// Rewrites the stored envelope at `event.position`, an event of this log's unconfirmed tail
    /// that a shared log confirmed unchanged but for its instant: the same id, stream, version,
    /// type and payload, the shared log's instant and digest. The tail is rewritten in order from
    /// its first event, each digest checked against the shared log's, or nothing is.
    func confirmInPlace(_ event: RecordedEvent, previousDigest: [UInt8], in txn: borrowing Transaction) throws
        -> [UInt8]
    {
        let new = NewEvent(
            id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: event.payload,
            metadata: event.metadata, recordedAt: event.recordedAt)
        let (bytes, digest) = Envelope.encode(
            new, stream: event.stream, version: event.version, recordedAt: event.recordedAt,
            previousDigest: previousDigest)
        guard digest == event.digest else {
            throw StoreError.diverged(
                position: event.position, detail: StoreError.chainDigestDiffers)
        }
        try withKey(event.position) { k in try bytes.withUnsafeBytes { v in try txn.put(store.events, k, v) } }
        // The appender reads the log's last event again before its next append.
        loaded = false
        return digest
    }

    /// The position and chain digest of the log's last event (0 and the genesis digest when empty).
    func head(in txn: borrowing Transaction) throws -> (position: UInt64, digest: [UInt8]) {
        try load(txn)
        return (nextPosition - 1, lastDigest)
    }

    /// The projection databases in use in this transaction.
    func projectionDatabases(in txn: borrowing Transaction) throws -> ProjectionDatabases {
        try load(txn)
        guard let slot = projectionSlot else { throw StoreError.noProjections }
        return slot
    }
}

/// Calls `body` with the 16 big-endian bytes of `id`, without allocating them.
@inline(__always)
func withKey<R>(_ id: Identifier, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try id.withBytes(body)
}

/// Calls `body` with the 8 big-endian bytes of `value` (a position or version key), without
/// allocating them.
@inline(__always)
func withKey<R>(_ value: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: value.bigEndian) { try body($0) }
}
