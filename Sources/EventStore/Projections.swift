public import Basics
import Glibc
public import LMDB

/// An event lifted to the current schema, as projections see it. A stored event lifted 1 -> N
/// gives N lifted events sharing its position, id and version.
public struct LiftedEvent: Sendable, Equatable {
    public var position: UInt64
    public var id: Identifier
    public var stream: String
    public var version: UInt64
    public var recordedAt: Int64
    public var metadata: EventMetadata
    public var type: String
    public var schemaVersion: UInt32
    public var payload: [UInt8]

    public init(
        position: UInt64, id: Identifier, stream: String, version: UInt64, recordedAt: Int64,
        metadata: EventMetadata, type: String, schemaVersion: UInt32, payload: [UInt8]
    ) {
        self.position = position
        self.id = id
        self.stream = stream
        self.version = version
        self.recordedAt = recordedAt
        self.metadata = metadata
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
    }

    init(view: EventView, type: String, schemaVersion: UInt32, payload: [UInt8]) {
        self.init(
            position: view.position, id: view.id, stream: view.stream, version: view.version,
            recordedAt: view.recordedAt, metadata: view.metadata, type: type, schemaVersion: schemaVersion,
            payload: payload)
    }
}

/// The databases of one projection slot, by the base names the projections declared.
public struct ProjectionDatabases: Sendable {
    /// 0 or 1: projections live in two slots so a rebuild can fill one while the other serves.
    public let slot: Int
    let byName: [String: Database]

    /// The database declared as `name`.
    public subscript(name: String) -> Database {
        guard let db = byName[name] else { preconditionFailure("projection database \(name) was not declared") }
        return db
    }

    /// Every database of the slot.
    public var all: [Database] { byName.keys.sorted().compactMap { byName[$0] } }
}

/// The projections of a store: folded inline with every append and rebuilt from the log.
public protocol ProjectionSet: AnyObject, Sendable {
    /// Changes whenever the projections' code changes; with the upcaster chain it forms the
    /// projection version stored in the store. A difference triggers a rebuild at open.
    var version: String { get }
    /// The databases the projections keep (base names; each exists once per slot).
    var databaseSpecs: [(name: String, flags: DatabaseFlags)] { get }
    /// Applies current-schema events inside the append's transaction.
    func apply(_ events: [LiftedEvent], in txn: borrowing Transaction, databases: ProjectionDatabases) throws
    /// Fills empty `databases` from the log up to `head`, writing through `context`.
    func rebuild(context: RebuildContext, head: UInt64, into databases: ProjectionDatabases) throws
    /// A fold in memory whose end writes empty databases in bulk, as a rebuild does: what a
    /// transaction that appends as many events as the log held takes instead of the inline
    /// projections (see ``WriteSession/deferProjections(expecting:)``). Nil: always inline.
    func makeBulkFold() -> (any BulkProjectionFold)?
}

extension ProjectionSet {
    public func makeBulkFold() -> (any BulkProjectionFold)? { nil }
}

/// The projections of a whole log folded in memory, then written into empty databases: a
/// rebuild inside one write transaction. It is given every event of the log in order: those
/// stored before (as ``EventView``s) and the ones being appended (lifted).
public protocol BulkProjectionFold: AnyObject {
    /// Folds one stored event (upcasting it when its schema is old).
    func fold(_ view: EventView, store: EventStore) throws
    /// Folds one current-schema event being appended.
    func fold(_ event: LiftedEvent) throws
    /// Writes what was folded into `databases`, which are empty, through `writer`.
    func write(into databases: ProjectionDatabases, writer: any ProjectionBulkWriter) throws
}

/// Where the bulk write of projections goes: write transactions of its own (a rebuild's
/// ``RebuildContext``), or the one transaction of an append.
public protocol ProjectionBulkWriter {
    /// Runs `body` in a write transaction. A writer of several transactions may start over
    /// (in a grown map) when the map turns out too small, so `body` must write from what it
    /// captured, not consume an input.
    func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R
}

/// The bulk writer of one write transaction: every batch goes into it, and the mapped pages
/// read so far are given back between batches, as a rebuild's are.
final class TransactionBulkWriter: ProjectionBulkWriter {
    private let transaction: Transaction
    private let store: EventStore

    /// `transaction` must outlive the writer (a lent value of the appender's transaction).
    init(_ transaction: consuming Transaction, store: EventStore) {
        self.transaction = transaction
        self.store = store
    }

    func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let result = try body(transaction)
        store.environment.releaseMappedPages()
        return result
    }
}

/// What a rebuild did.
public struct RebuildReport: Sendable, Equatable {
    public var fromVersion: String?
    public var toVersion: String
    public var events: UInt64
    public var microseconds: Int64
    public var startedAt: Int64
    public var reason: String
}

/// Lets a projection rebuild write its slot in several transactions while making sure no
/// other process took the rebuild over.
public final class RebuildContext: ProjectionBulkWriter, Sendable {
    public let store: EventStore
    let token: [UInt8]

    init(store: EventStore, token: [UInt8]) {
        self.store = store
        self.token = token
    }

    /// Runs `body` in a write transaction of the rebuild. Like every write of the store, it
    /// starts over (in a grown map) when the map turns out too small, so `body` must write from
    /// what it captured, not consume an input.
    public func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let result = try store.environment.restartableWrite { txn, _ in
            try store.checkRebuildToken(token, in: txn)
            return try body(txn)
        }
        // A rebuild writes the whole projection set in batches: without this, every page a
        // batch read back through the map would stay in the process's resident memory.
        store.environment.releaseMappedPages()
        return result
    }

    /// Reports progress (events done of total).
    public func progress(_ done: UInt64, of total: UInt64) {
        store.configuration.progress?(done, total)
    }
}

extension EventStore {
    /// The stored projection version this code would write.
    public var currentProjectionVersion: String { String(decoding: currentProjectionVersionBytes, as: UTF8.self) }

    /// ``currentProjectionVersion`` as stored.
    static func projectionVersion(of configuration: Configuration) -> [UInt8] {
        let digest = SHA256.hex(SHA256.hash(Array(configuration.registry.signature.utf8)).prefix(6))
        return Array(((configuration.projections?.version ?? "none") + "/schemas-" + digest).utf8)
    }

    /// The projection slot queries should read in `txn`.
    private static let activeSlotKeyBytes = Array(Names.activeSlotKey.utf8)

    public func activeProjections(in txn: borrowing Transaction) throws -> ProjectionDatabases {
        // Every command's read asks: the key is kept as bytes and the value read in place.
        let value = try Self.activeSlotKeyBytes.withUnsafeBytes { k in try txn.get(meta, k) }
        guard let value, value.count == 4 else { return slots[0] }
        return slots[Int(value[3] & 1)]
    }

    /// The projection version recorded in the store (nil before the first rebuild).
    public func storedProjectionVersion(in txn: borrowing Transaction) throws -> String? {
        try txn.get(meta, key: Array(Names.projectionVersionKey.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Refuses a write into projections that another version of the program built: a process
    /// left running across an upgrade (or a downgrade) would fold its appends with rules the
    /// stored records do not follow, and the store would not know it must rebuild them. A store
    /// whose version is not recorded yet (new, or never built) is rebuilt by any opener anyway.
    func checkProjectionVersion(in txn: borrowing Transaction) throws {
        let stored = try Self.projectionVersionKeyBytes.withUnsafeBytes { k in try txn.get(meta, k) }
        guard let stored, !stored.elementsEqual(currentProjectionVersionBytes) else { return }
        throw StoreError.projectionsChanged(
            stored: String(decoding: stored, as: UTF8.self), expected: currentProjectionVersion)
    }

    private static let projectionVersionKeyBytes = Array(Names.projectionVersionKey.utf8)

    func projectionsNeedRebuild() throws(StoreError) -> Bool {
        let (stored, head): (String?, UInt64)
        do {
            (stored, head) = try read { txn in (try storedProjectionVersion(in: txn), try headPosition(in: txn)) }
        } catch { throw StoreError.wrap(error) }
        if stored == currentProjectionVersion { return false }
        // A brand-new store needs no replay: record the version and go.
        if stored == nil && head == 0 { return try initializeProjectionVersionIfEmpty() }
        return true
    }

    private func initializeProjectionVersionIfEmpty() throws(StoreError) -> Bool {
        do {
            try environment.restartableWrite { txn, _ in
                if try storedProjectionVersion(in: txn) == nil, try headPosition(in: txn) == 0 {
                    try txn.put(
                        meta, key: Array(Names.projectionVersionKey.utf8), value: Array(currentProjectionVersion.utf8))
                }
            }
        } catch { throw StoreError.wrap(error) }
        return false
    }

    func checkRebuildToken(_ token: [UInt8], in txn: borrowing Transaction) throws {
        guard try txn.get(meta, key: Array(Names.rebuildTokenKey.utf8)) == token else {
            throw StoreError.rebuildSuperseded
        }
    }

    /// Rebuilds every projection from the log into the spare slot, then swaps slots in one
    /// transaction. Readers keep using the old slot until the swap; a crash leaves it intact.
    ///
    /// Rebuilds of several processes take turns (see ``withRebuildLock(_:)``).
    @discardableResult
    public func rebuildProjections(reason: String = "requested") throws(StoreError) -> RebuildReport {
        try withRebuildLock { () throws(StoreError) -> RebuildReport in
            try rebuildProjectionsHoldingLock(reason: reason)
        }
    }

    /// Runs `body` holding an exclusive `flock` on the store's `data.mdb` (through a descriptor
    /// of its own, apart from LMDB's locks, which are on `lock.mdb`), waiting for another
    /// process's rebuild to end first, as a write waits for another's (``takeProcessLock``, told
    /// by the environment's ``Environment/Options/waitNotice``). The kernel lets go of it when a
    /// process ends, killed or not, so a rebuild that died holds no one up. Without a descriptor
    /// (the file cannot be opened) the rebuild goes on unlocked: the rebuild token still refuses
    /// a superseded one.
    func withRebuildLock<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        let fd = open(environment.path + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return try body() }
        defer { close(fd) }
        let locked = takeProcessLock(fd, waitingFor: .rebuilding, notice: configuration.environment.waitNotice)
        defer { if locked { flock(fd, LOCK_UN) } }
        return try body()
    }

    func rebuildProjectionsHoldingLock(reason: String) throws(StoreError) -> RebuildReport {
        guard let projections = configuration.projections else {
            throw .noProjections
        }
        let started = configuration.clock()
        let startClock = EventStore.monotonicMicros()
        let token = Identifier.random().bytes
        do {
            let (spare, head, previous) = try environment.restartableWrite { txn, _ in
                let active = try activeProjections(in: txn)
                let spare = slots[1 - active.slot]
                for db in spare.all { try txn.clear(db) }
                try txn.put(meta, key: Array(Names.rebuildTokenKey.utf8), value: token)
                return (spare, try headPosition(in: txn), try storedProjectionVersion(in: txn))
            }
            let context = RebuildContext(store: self, token: token)
            try projections.rebuild(context: context, head: head, into: spare)
            // The swap and its upgrade-log entry commit together: a kill cannot lose the entry.
            return try environment.restartableWrite { txn, _ in
                try checkRebuildToken(token, in: txn)
                // Events appended by other processes during the rebuild.
                var caughtUp: [LiftedEvent] = []
                try forEachEvent(from: head + 1, in: txn) { view in
                    caughtUp.append(contentsOf: try lift(view))
                    return true
                }
                if !caughtUp.isEmpty { try projections.apply(caughtUp, in: txn, databases: spare) }
                let old = slots[1 - spare.slot]
                try txn.put(meta, key: Array(Names.activeSlotKey.utf8), value: encodeUInt32(UInt32(spare.slot)))
                try txn.put(
                    meta, key: Array(Names.projectionVersionKey.utf8), value: Array(currentProjectionVersion.utf8))
                _ = try txn.delete(meta, key: Array(Names.rebuildTokenKey.utf8))
                // Emptying a database reads its pages; those of a large store's old slot are
                // given back as it goes, not held as resident memory until the process ends.
                for db in old.all {
                    try txn.clear(db)
                    _ = environment.releaseMappedPages()
                }
                let report = RebuildReport(
                    fromVersion: previous, toVersion: currentProjectionVersion, events: try headPosition(in: txn),
                    microseconds: EventStore.monotonicMicros() - startClock, startedAt: started, reason: reason)
                try appendUpgradeLog(report, in: txn)
                return report
            }
        } catch { throw StoreError.wrap(error) }
    }

    /// Microseconds of a monotonic clock, for durations.
    public static func monotonicMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    private func appendUpgradeLog(_ r: RebuildReport, in txn: borrowing Transaction) throws {
        let prefix = Array(Names.upgradeLogPrefix.utf8)
        var next: UInt64 = 1
        try txn.withCursor(meta) { c in
            var probe = prefix
            probe.append(0xFF)
            if let e = try c.seekAtOrBeforeKey(probe), e.key.starts(with: prefix), e.key.count == prefix.count + 8 {
                next = UInt64(bigEndian: e.key.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self)) + 1
            }
        }
        var w = ByteWriter()
        w.write(optionalString: r.fromVersion)
        w.write(string: r.toVersion)
        w.write(varint: r.events)
        w.write(signed: r.microseconds)
        w.write(signed: r.startedAt)
        w.write(string: r.reason)
        try txn.put(meta, key: prefix + keyBytes(next), value: w.bytes)
    }

    /// Every rebuild recorded in the store's upgrade log, oldest first.
    public func upgradeLog() throws(StoreError) -> [RebuildReport] {
        do {
            return try upgradeLogEntries()
        } catch { throw StoreError.wrap(error) }
    }

    private func upgradeLogEntries() throws -> [RebuildReport] {
        try read { txn in
            var out: [RebuildReport] = []
            let prefix = Array(Names.upgradeLogPrefix.utf8)
            try txn.withCursor(meta) { c in
                var entry = try c.seek(prefix)
                while let e = entry, e.key.starts(with: prefix) {
                    var r = ByteReader(e.value)
                    out.append(
                        RebuildReport(
                            fromVersion: try r.readOptionalString(), toVersion: try r.readString(),
                            events: try r.readVarint(), microseconds: try r.readSigned(), startedAt: try r.readSigned(),
                            reason: try r.readString()))
                    entry = try c.next()
                }
            }
            return out
        }
    }
}

extension Cursor {
    func seekAtOrBeforeKey(_ key: [UInt8]) throws(LMDBError) -> Entry? {
        let r: Result<Entry?, LMDBError> = key.withUnsafeBytes { k in
            Result { () throws(LMDBError) in try seekAtOrBefore(k) }
        }
        return try r.get()
    }
}
