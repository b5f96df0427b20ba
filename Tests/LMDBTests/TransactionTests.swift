import Dispatch
import LMDB
import TestSupport
import Testing

@Suite("Transactions: reads, writes, rollback")
struct TransactionTests {
    struct Boom: Error, Equatable { let id: Int }

    @Test("put, get, contains, count, delete, clear")
    func basicOperations() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        try env.write { txn throws in
            let readOnly = txn.readOnly
            #expect(!readOnly)
            try txn.put(db, key: Array("a".utf8), value: [1])
            try txn.put(db, key: Array("b".utf8), value: [2, 2])
            try txn.put(db, key: Array("a".utf8), value: [3])  // overwrite
        }
        try env.read { txn throws in
            let readOnly = txn.readOnly
            #expect(readOnly)
            #expect(try txn.get(db, key: Array("a".utf8)) == [3])
            #expect(try txn.get(db, key: Array("b".utf8)) == [2, 2])
            #expect(try txn.get(db, key: Array("c".utf8)) == nil)
            #expect(try txn.contains(db, key: Array("b".utf8)))
            #expect(try !txn.contains(db, key: Array("c".utf8)))
            #expect(try txn.count(db) == 2)
        }
        let deleted = try env.write { txn throws in
            (try txn.delete(db, key: Array("a".utf8)), try txn.delete(db, key: Array("zz".utf8)))
        }
        #expect(deleted == (true, false))
        #expect(try env.read { txn throws in try txn.count(db) } == 1)
        try env.write { txn throws in try txn.clear(db) }
        #expect(try env.read { txn throws in try txn.count(db) } == 0)
    }

    @Test("noOverwrite on a stored key is keyExists and leaves the value")
    func noOverwrite() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        try env.write { txn throws in try txn.put(db, key: [9], value: [1]) }
        let error = #expect(throws: LMDBError.self) {
            try env.write { txn throws in try txn.put(db, key: [9], value: [2], flags: .noOverwrite) }
        }
        #expect(error?.code == .keyExists)
        #expect(try env.read { txn throws in try txn.get(db, key: [9]) } == [1])
    }

    @Test("an empty key is badValueSize, not a crash")
    func emptyKey() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        let error = #expect(throws: LMDBError.self) {
            try env.write { txn throws in try txn.put(db, key: [], value: [1]) }
        }
        #expect(error?.code == .badValueSize)
        let long = [UInt8](repeating: 7, count: 4096)
        let tooLong = #expect(throws: LMDBError.self) {
            try env.write { txn throws in try txn.put(db, key: long, value: [1]) }
        }
        #expect(tooLong?.code == .badValueSize)
    }

    @Test("reads inside the closure are zero-copy views of the map")
    func zeroCopyGet() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        let value = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        try env.write { txn throws in try txn.put(db, key: [1], value: value) }
        try env.read { txn throws in
            let first = try [UInt8(1)].withUnsafeBytes { k throws in try txn.get(db, k) }
            let second = try [UInt8(1)].withUnsafeBytes { k throws in try txn.get(db, k) }
            let a = try #require(first)
            let b = try #require(second)
            // Both lookups return the same address: the bytes live in the map, not in a copy.
            #expect(a.baseAddress == b.baseAddress)
            #expect(a.elementsEqual(value))
            // The value is not inside any Swift array we own.
            let separate = value.withUnsafeBytes { own in own.baseAddress != a.baseAddress }
            #expect(separate)
        }
    }

    @Test("reserve lets the caller write the value in place")
    func reserve() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        try env.write { txn throws in
            try [UInt8(5)].withUnsafeBytes { k throws in
                try txn.reserve(db, k, size: 4) { out in
                    for i in 0..<4 { out[i] = UInt8(10 + i) }
                }
            }
        }
        #expect(try env.read { txn throws in try txn.get(db, key: [5]) } == [10, 11, 12, 13])
    }

    @Test("a write closure that throws rolls back and rethrows the same error")
    func rollback() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        let error = #expect(throws: Boom.self) {
            try env.write { txn throws in
                try txn.put(db, key: [1], value: [99])
                try txn.put(db, key: [2], value: [2])
                throw Boom(id: 42)
            }
        }
        #expect(error == Boom(id: 42))
        try env.read { txn throws in
            #expect(try txn.get(db, key: [1]) == [1])
            #expect(try txn.get(db, key: [2]) == nil)
        }
        // The writer lock was released: the next write goes through.
        try env.write { txn throws in try txn.put(db, key: [3], value: [3]) }
        #expect(try env.read { txn throws in try txn.count(db) } == 2)
    }

    @Test("an LMDB error inside the body aborts and keeps the first error")
    func lmdbErrorInBody() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        let error = #expect(throws: LMDBError.self) {
            try env.write { txn throws in
                try txn.put(db, key: [2], value: [2])
                try txn.put(db, key: [1], value: [9], flags: .noOverwrite)
            }
        }
        #expect(error?.code == .keyExists)
        #expect(try env.read { txn throws in try txn.count(db) } == 1)
    }

    @Test("a write inside a read transaction is refused")
    func writeInReadTransaction() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        #expect(throws: LMDBError.self) {
            try env.read { txn throws in try txn.put(db, key: [1], value: [1]) }
        }
        #expect(try env.read { txn throws in try txn.count(db) } == 0)
    }

    @Test("a read transaction keeps its snapshot while another thread commits")
    func snapshotIsolation() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        let opened = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        let writer = DispatchQueue(label: "writer")
        writer.async {
            opened.wait()
            try? env.write { txn throws in try txn.put(db, key: [1], value: [2]) }
            committed.signal()
        }
        let (before, after) = try env.read { txn throws in
            let before = try txn.get(db, key: [1])
            opened.signal()
            committed.wait()
            return (before, try txn.get(db, key: [1]))
        }
        #expect(before == [1])
        #expect(after == [1])
        #expect(try env.read { txn throws in try txn.get(db, key: [1]) } == [2])
    }

    @Test("transaction ids advance with each commit")
    func transactionIDs() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("kv", flags: [.create])
        let first = try env.read { txn throws in txn.id }
        try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        let second = try env.read { txn throws in txn.id }
        #expect(second == first + 1)
    }
}
