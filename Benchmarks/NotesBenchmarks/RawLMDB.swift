import CLMDB
import EventStore
import Glibc

/// The peer: liblmdb through its C API with nothing on top, on the same bytes our store
/// writes. It shows what the storage engine itself costs on this machine.
final class RawLMDB {
    let path: String
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    /// A fresh environment in `path` with default (durable) flags, like the store's.
    init(path: String, mapSize: Int = 16 << 30) {
        self.path = path
        check(mdb_env_create(&env), "env_create")
        check(mdb_env_set_mapsize(env, mapSize), "set_mapsize")
        check(mdb_env_open(env, path, UInt32(MDB_NOTLS), 0o600), "env_open \(path)")
        var txn: OpaquePointer?
        check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        check(mdb_dbi_open(txn, nil, 0, &dbi), "dbi_open")
        check(mdb_txn_commit(txn), "commit")
    }

    deinit { mdb_env_close(env) }

    private func check(_ rc: Int32, _ what: String) {
        guard rc != 0 else { return }
        fatalError("raw LMDB \(what): \(String(cString: mdb_strerror(rc)))")
    }

    /// Puts `values` under big-endian keys `first, first+1, ...` with `MDB_APPEND`,
    /// `batch` per transaction; returns the seconds spent.
    func appendBatched(_ values: PackedValues, firstKey: UInt64 = 1, batch: Int) -> Double {
        let start = monotonicSeconds()
        var i = 0
        var key = firstKey
        while i < values.count {
            var txn: OpaquePointer?
            check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
            let end = min(i + batch, values.count)
            while i < end {
                var be = key.bigEndian
                withUnsafeMutableBytes(of: &be) { kb in
                    values.withValue(i) { vb in
                        var k = MDB_val(mv_size: 8, mv_data: kb.baseAddress)
                        var v = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                        check(mdb_put(txn, dbi, &k, &v, UInt32(MDB_APPEND)), "put")
                    }
                }
                i += 1
                key += 1
            }
            check(mdb_txn_commit(txn), "commit")
        }
        return monotonicSeconds() - start
    }

    /// Puts arbitrary sorted (key, value) pairs with `MDB_APPEND` in one transaction.
    func load(_ pairs: [([UInt8], [UInt8])]) {
        var txn: OpaquePointer?
        check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        for (key, value) in pairs {
            key.withUnsafeBytes { kb in
                value.withUnsafeBytes { vb in
                    var k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                    var v = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                    check(mdb_put(txn, dbi, &k, &v, UInt32(MDB_APPEND)), "put")
                }
            }
        }
        check(mdb_txn_commit(txn), "commit")
    }

    /// One put and one durable commit per value (each a fresh write transaction); returns the
    /// milliseconds of each.
    func appendSingly(_ values: [[UInt8]], firstKey: UInt64) -> [Double] {
        var out: [Double] = []
        var key = firstKey
        for value in values {
            let start = monotonicSeconds()
            var txn: OpaquePointer?
            check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
            var be = key.bigEndian
            withUnsafeMutableBytes(of: &be) { kb in
                value.withUnsafeBytes { vb in
                    var k = MDB_val(mv_size: 8, mv_data: kb.baseAddress)
                    var v = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                    check(mdb_put(txn, dbi, &k, &v, UInt32(MDB_APPEND)), "put")
                }
            }
            check(mdb_txn_commit(txn), "commit")
            out.append((monotonicSeconds() - start) * 1000)
            key += 1
        }
        return out
    }

    /// How much of each value a raw scan reads.
    enum ScanDepth {
        /// The value's length and first byte: the cost of walking LMDB's pages alone.
        case walk
        /// Every byte of the value (XOR of its 8-byte words): the least any reader that looks at
        /// the data pays, and what the reference figure (7.3 M/s for 250-byte values) does.
        case bytes
        /// Every byte through CRC-32C (the same C routine the store verifies events with).
        case checksum
    }

    /// A forward cursor scan of every entry in one read transaction; returns (entries, a value
    /// to keep).
    func scan(_ depth: ScanDepth = .bytes) -> (count: Int, keep: UInt64) {
        var txn: OpaquePointer?
        check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin")
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        check(mdb_cursor_open(txn, dbi, &cursor), "cursor_open")
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var n = 0
        var sum: UInt64 = 0
        var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == 0 {
            n += 1
            let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
            switch depth {
            case .walk: sum &+= UInt64(v.mv_size) &+ UInt64(value.first ?? 0)
            case .bytes: sum &+= xorWords(value)
            case .checksum: sum &+= UInt64(CRC32C.checksum(value))
            }
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        return (n, sum)
    }

    private func xorWords(_ value: UnsafeRawBufferPointer) -> UInt64 {
        var x: UInt64 = 0
        var i = 0
        while i + 8 <= value.count {
            x ^= value.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < value.count {
            x &+= UInt64(value[i])
            i += 1
        }
        return x
    }

    /// `mdb_get` of each key, each in its own read transaction (as a CLI query would be);
    /// returns a value to keep.
    func getEach(_ keys: [[UInt8]], perTransaction: Int = 1) -> UInt64 {
        var sum: UInt64 = 0
        var i = 0
        while i < keys.count {
            var txn: OpaquePointer?
            check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin")
            for key in keys[i..<min(i + perTransaction, keys.count)] {
                key.withUnsafeBytes { kb in
                    var k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                    var v = MDB_val()
                    if mdb_get(txn, dbi, &k, &v) == 0 {
                        sum &+= UInt64(v.mv_size) &+ UInt64(v.mv_data.load(as: UInt8.self))
                    }
                }
            }
            mdb_txn_abort(txn)
            i += perTransaction
        }
        return sum
    }
}

/// Many byte strings in one buffer, so a million envelopes cost two allocations.
struct PackedValues {
    var bytes: [UInt8] = []
    var ends: [Int] = []

    var count: Int { ends.count }

    mutating func append(_ value: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: value)
        ends.append(bytes.count)
    }

    func withValue<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let start = i == 0 ? 0 : ends[i - 1]
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<ends[i]])) }
    }

    var totalBytes: Int { bytes.count }
}
