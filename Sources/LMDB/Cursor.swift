internal import CLMDB

/// One key/value pair read through a cursor; both buffers point into the map, valid until the
/// transaction ends (the package's own zero-copy reads; see ``Cursor/forEach(from:reverse:_:)``).
package struct Entry {
    package let key: UnsafeRawBufferPointer
    package let value: UnsafeRawBufferPointer
}

/// A position in a database, lent to the body of ``Transaction/withCursor(_:_:)``.
///
/// Each move returns the entry it lands on, or nil when it runs off the end.
public struct Cursor: ~Copyable {
    let handle: OpaquePointer
    let database: Database
    let faults: FaultCounter?
    let mapFull: UnsafeMutablePointer<Bool>?

    init(handle: OpaquePointer, database: Database, faults: FaultCounter?, mapFull: UnsafeMutablePointer<Bool>?) {
        self.handle = handle
        self.database = database
        self.faults = faults
        self.mapFull = mapFull
    }

    deinit { mdb_cursor_close(handle) }

    private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil, value: UnsafeRawBufferPointer? = nil)
        throws(LMDBError) -> Entry?
    {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val(mv_size: value?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: value?.baseAddress))
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "cursor on \(database.name)")
        return Entry(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// The first entry.
    package func first() throws(LMDBError) -> Entry? { try move(MDB_FIRST) }
    /// The last entry.
    package func last() throws(LMDBError) -> Entry? { try move(MDB_LAST) }
    /// The next entry (the first if the cursor is not positioned).
    package func next() throws(LMDBError) -> Entry? { try move(MDB_NEXT) }
    /// The previous entry (the last if the cursor is not positioned).
    package func previous() throws(LMDBError) -> Entry? { try move(MDB_PREV) }
    /// The entry under the cursor.
    package func current() throws(LMDBError) -> Entry? { try move(MDB_GET_CURRENT) }
    /// The first entry whose key is `>= key`.
    package func seek(_ key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? { try move(MDB_SET_RANGE, key: key) }
    /// The first entry whose key is `>= key`.
    package func seek(_ key: [UInt8]) throws(LMDBError) -> Entry? {
        try withBytes(key) { (k) throws(LMDBError) in try seek(k) }
    }
    /// The entry whose key is exactly `key`.
    package func seekExact(_ key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        try move(MDB_SET_KEY, key: key)
    }
    /// The last entry whose key is `<= key`.
    package func seekAtOrBefore(_ key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        if let e = try seek(key) {
            if e.key.elementsEqual(key) { return e }
            return try previous()
        }
        return try last()
    }

    /// Calls `body` with each entry, in key order, of the run whose keys are `keyLength` bytes
    /// long and begin with the first `prefix` bytes of `start`, from the first entry at or after
    /// `start`, until the first that is not in the run. Entries are read into a batch in C, a
    /// call for many: a search's walk over a term's posting blocks spent more in ``seek(_:)``
    /// and ``next()``'s wrapping of each step than in LMDB's steps.
    package func forEachInRun(
        from start: UnsafeRawBufferPointer, prefix: Int, keyLength: Int, _ body: (Entry) throws -> Void
    ) throws {
        precondition(prefix >= 0 && prefix <= start.count)
        let room = 32
        try withUnsafeTemporaryAllocation(of: MDB_val.self, capacity: 2 * room) { vals in
            guard let keys = vals.baseAddress else { return }
            let values = keys + room
            var seek: Int32 = 1
            while true {
                var rc: Int32 = 0
                let n = Int(
                    notes_cursor_run(
                        handle, start.baseAddress, start.count, prefix, keyLength, seek, keys, values, Int32(room), &rc)
                )
                try check(rc, "cursor on \(database.name)")
                for i in 0..<n {
                    try body(
                        Entry(
                            key: UnsafeRawBufferPointer(start: keys[i].mv_data, count: keys[i].mv_size),
                            value: UnsafeRawBufferPointer(start: values[i].mv_data, count: values[i].mv_size)))
                }
                if n < room { return }
                seek = 0
            }
        }
    }

    // Duplicate-sorted databases.

    /// The next value of the current key, or nil after its last value.
    package func nextDuplicate() throws(LMDBError) -> Entry? { try move(MDB_NEXT_DUP) }
    /// The first value of the next key.
    package func nextKey() throws(LMDBError) -> Entry? { try move(MDB_NEXT_NODUP) }
    /// The last value of the current key.
    package func lastDuplicate() throws(LMDBError) -> Entry? { try move(MDB_LAST_DUP) }
    /// The first value `>= value` under exactly `key`.
    package func seek(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        try move(MDB_GET_BOTH_RANGE, key: key, value: value)
    }
    /// The number of values of the current key.
    public func duplicateCount() throws(LMDBError) -> Int {
        var n: Int = 0
        try check(mdb_cursor_count(handle, &n), "count duplicates in \(database.name)")
        return n
    }

    /// Stores `value` under `key` through the cursor (fast for sorted bulk loads with `.append`).
    package func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: PutFlags = [])
        throws(LMDBError)
    {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = faults.failure(.put) ?? mdb_cursor_put(handle, &k, &v, flags.rawValue)
        try check(rc, notingMapFullIn: mapFull, "put into \(database.name)")
    }

    /// Calls `body` with each key and value in order from the first key at or after `start` (at
    /// or before it, going backwards, with `reverse`), until it returns false. The buffers are
    /// valid only inside `body`.
    public func forEach(
        from start: [UInt8]? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var entry: Entry?
        if let start {
            entry = try start.withUnsafeBytes { k in reverse ? try seekAtOrBefore(k) : try seek(k) }
        } else {
            entry = reverse ? try last() : try first()
        }
        while let e = entry, try body(e.key, e.value) { entry = reverse ? try previous() : try next() }
    }

    /// Deletes the entry under the cursor.
    public func deleteCurrent() throws(LMDBError) {
        try check(mdb_cursor_del(handle, 0), notingMapFullIn: mapFull, "delete from \(database.name)")
    }
}
