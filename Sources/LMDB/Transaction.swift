internal import CLMDB

/// A transaction, lent to the body of ``Environment/read(_:)`` or ``Environment/write(_:)``.
///
/// It is `~Copyable` and not `Sendable`: it cannot escape the closure or cross threads.
/// Buffers returned by reads point into the memory map; they stay valid until the closure
/// returns, or in a write transaction until the next write to the same database.
public struct Transaction: ~Copyable {
    let handle: OpaquePointer
    /// True for read-only snapshot transactions.
    public let readOnly: Bool
    /// The test fault plan of the environment (``FaultInjection``), or nil.
    let faults: FaultCounter?
    /// Set when a write of this transaction finds the map full (nil in read transactions), so
    /// the environment knows the cause however the body reports the failure.
    let mapFull: UnsafeMutablePointer<Bool>?

    init(handle: OpaquePointer, readOnly: Bool, faults: FaultCounter?, mapFull: UnsafeMutablePointer<Bool>?) {
        self.handle = handle
        self.readOnly = readOnly
        self.faults = faults
        self.mapFull = mapFull
    }

    /// Another value of the same transaction, for a type of this package that must hold the
    /// transaction it is lent (the event store's write session); it must not outlive the
    /// closure the transaction was lent to.
    package func lend() -> Transaction {
        Transaction(handle: handle, readOnly: readOnly, faults: faults, mapFull: mapFull)
    }

    /// The transaction's id (the number of the snapshot it reads).
    public var id: Int { mdb_txn_id(handle) }

    // MARK: Reads
    //
    // The zero-copy reads below return buffers into the map, valid until the transaction ends:
    // they are the package's own (the event store, the projections and the search index read
    // in place). Outside this package, reads copy (``get(_:key:)``) or lend the bytes to a
    // closure (``withValue(_:key:_:)``).

    /// Calls `body` with the value stored under `key`, in place (no copy), and returns its
    /// result; nil when the key is absent. The buffer is valid only inside `body`.
    public func withValue<R>(_ db: Database, key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let found = try withBytes(key) { (k) throws(LMDBError) in try get(db, k) }
        guard let found else { return nil }
        return try body(found)
    }

    /// The value stored under `key`, as a buffer into the map (zero copy), or nil.
    package func get(_ db: Database, _ key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(handle, db.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "get from \(db.name)")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// A copy of the value stored under `key`, or nil.
    public func get(_ db: Database, key: [UInt8]) throws(LMDBError) -> [UInt8]? {
        let found: UnsafeRawBufferPointer?
        do {
            found = try withBytes(key) { (k) throws(LMDBError) in try get(db, k) }
        }
        return found.map { Array($0) }
    }

    /// Whether `key` is stored.
    public func contains(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        try withBytes(key) { (k) throws(LMDBError) in try get(db, k) != nil }
    }

    /// Number of entries in the database.
    public func count(_ db: Database) throws(LMDBError) -> Int {
        var st = MDB_stat()
        try check(mdb_stat(handle, db.dbi, &st), "stat \(db.name)")
        return st.ms_entries
    }

    // MARK: Writes

    /// Stores `value` under `key`.
    package func put(
        _ db: Database, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: PutFlags = []
    ) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = faults.failure(.put) ?? mdb_put(handle, db.dbi, &k, &v, flags.rawValue)
        try check(rc, notingMapFullIn: mapFull, "put into \(db.name)")
    }

    /// Stores `value` under `key`.
    public func put(_ db: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws(LMDBError) {
        try withBytes(key) { (k) throws(LMDBError) in
            try withBytes(value) { (v) throws(LMDBError) in try put(db, k, v, flags: flags) }
        }
    }

    /// Reserves `size` bytes for `key` and lets `fill` write the value in place (no copy).
    package func reserve(
        _ db: Database, _ key: UnsafeRawBufferPointer, size: Int, flags: PutFlags = [],
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: size, mv_data: nil)
        let rc = faults.failure(.put) ?? mdb_put(handle, db.dbi, &k, &v, flags.rawValue | UInt32(MDB_RESERVE))
        try check(rc, notingMapFullIn: mapFull, "reserve in \(db.name)")
        fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: size))
    }

    /// Deletes `key` (every value of it in a `dupSort` database). Returns false if absent.
    @discardableResult
    package func delete(_ db: Database, _ key: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(handle, db.dbi, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try check(rc, notingMapFullIn: mapFull, "delete from \(db.name)")
        return true
    }

    /// Deletes `key`. Returns false if it was absent.
    @discardableResult
    public func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        try withBytes(key) { (k) throws(LMDBError) in try delete(db, k) }
    }

    /// Deletes one key/value pair of a `dupSort` database. Returns false if it was absent.
    @discardableResult
    package func delete(_ db: Database, _ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError)
        -> Bool
    {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_del(handle, db.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return false }
        try check(rc, notingMapFullIn: mapFull, "delete from \(db.name)")
        return true
    }

    /// Deletes one key/value pair of a `dupSort` database. Returns false if it was absent.
    @discardableResult
    public func delete(_ db: Database, key: [UInt8], value: [UInt8]) throws(LMDBError) -> Bool {
        try withBytes(key) { (k) throws(LMDBError) in
            try withBytes(value) { (v) throws(LMDBError) in try delete(db, k, value: v) }
        }
    }

    /// Removes every entry of the database (it stays open and usable).
    public func clear(_ db: Database) throws(LMDBError) {
        try check(mdb_drop(handle, db.dbi, 0), notingMapFullIn: mapFull, "clear \(db.name)")
    }

    // MARK: Cursors

    /// A cursor over `db` for a type of this package that holds cursors across calls (the
    /// search index's searcher, which asks many queries of one snapshot); the cursor closes
    /// when it is dropped, which must happen before the closure the transaction was lent to
    /// returns.
    package func openCursor(_ db: Database) throws(LMDBError) -> Cursor {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, db.dbi, &cursor), "open cursor on \(db.name)")
        guard let cursor else { throw LMDBError(code: .invalid, operation: "mdb_cursor_open") }
        return Cursor(handle: cursor, database: db, faults: faults, mapFull: mapFull)
    }

    /// Runs `body` with a cursor over `db`; the cursor is closed when `body` returns.
    public func withCursor<R>(_ db: Database, _ body: (borrowing Cursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, db.dbi, &cursor), "open cursor on \(db.name)")
        guard let cursor else { throw LMDBError(code: .invalid, operation: "mdb_cursor_open") }
        let c = Cursor(handle: cursor, database: db, faults: faults, mapFull: mapFull)
        return try body(c)
    }
}
