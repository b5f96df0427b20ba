import LMDB
import TestSupport
import Testing

@Suite("Map growth past a tiny initial map, up to a cap")
struct MapGrowthTests {
    static let tinyMap = 256 << 10

    func tinyEnvironment(_ tmp: TemporaryDirectory, cap: Int = 1 << 40) throws -> Environment {
        var options = Environment.Options()
        options.mapSize = Self.tinyMap
        options.maxMapSize = cap
        return try Environment(path: tmp.path, options: options)
    }

    func value(_ n: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: Int(n) &+ $0) }
    }

    @Test("a map that cannot be made (ENOMEM): every later transaction fails with it, none reads freed memory")
    func mapThatCannotBeMade() throws {
        let tmp = TemporaryDirectory()
        do {
            let env = try tinyEnvironment(tmp, cap: Int.max)
            let db = try env.openDatabase("blobs", flags: [.create])
            try env.write { txn throws in try txn.put(db, key: key(1), value: value(1, size: 100)) }
            // 256 TiB: more than a process's address space, as a map past `ulimit -v` is.
            let grown = #expect(throws: LMDBError.self) { try env.reserve(1 << 48) }
            #expect(grown?.code == .outOfMemory)
            // Before 2026-12-06 LMDB was left with no map, and these read freed memory (SIGSEGV).
            for attempt in 0..<2 {
                let read = #expect(throws: LMDBError.self) { try env.read { txn throws in try txn.count(db) } }
                #expect(read?.code == .outOfMemory, "\(attempt)")
                let write = #expect(throws: LMDBError.self) {
                    try env.write { txn throws in try txn.put(db, key: key(2), value: value(2, size: 100)) }
                }
                #expect(write?.code == .outOfMemory, "\(attempt)")
                #expect(throws: LMDBError.self) { try env.reserve(1 << 20) }
            }
        }
        // The file is whole: a new environment reads it.
        let env = try tinyEnvironment(tmp)
        let db = try env.openDatabase("blobs")
        try env.read { txn throws in
            #expect(try txn.count(db) == 1)
            #expect(try txn.get(db, key: key(1)) == value(1, size: 100))
        }
    }

    @Test("several MB in many small transactions")
    func manyTransactions() throws {
        let tmp = TemporaryDirectory()
        let env = try tinyEnvironment(tmp)
        let db = try env.openDatabase("blobs", flags: [.create])
        #expect(env.mapSize <= Self.tinyMap)
        for batch in 0..<64 as Range<UInt64> {
            try env.restartableWrite { txn, _ throws in
                for i in 0..<16 as Range<UInt64> {
                    let n = batch * 16 + i
                    try txn.put(db, key: key(n), value: value(n, size: 4000))
                }
            }
        }
        #expect(env.mapSize > Self.tinyMap)
        #expect(env.usedBytes > 4_000_000)
        try env.read { txn throws in
            #expect(try txn.count(db) == 1024)
            #expect(try txn.get(db, key: key(777)) == value(777, size: 4000))
        }
    }

    @Test("several MB in one restartable transaction (the body starts over after growth, told its attempt)")
    func oneTransaction() throws {
        let tmp = TemporaryDirectory()
        let env = try tinyEnvironment(tmp)
        let db = try env.openDatabase("blobs", flags: [.create])
        var runs = 0
        try env.restartableWrite { txn, attempt throws in
            runs += 1
            #expect(attempt == runs)
            for n in 0..<1500 as Range<UInt64> {
                try txn.put(db, key: key(n), value: value(n, size: 3000))
            }
        }
        #expect(runs > 1, "a 4.5 MB transaction cannot fit a 256 KiB map on its first run")
        #expect(env.mapSize >= 4_500_000)
        #expect(try env.read { txn throws in try txn.count(db) } == 1500)
        // Reopening adopts the grown size recorded in the file.
        let path = env.path
        let reopened = try Environment(path: path)
        #expect(reopened.mapSize >= 4_500_000)
    }

    @Test("past maxMapSize the write fails with mapFull and the store stays usable")
    func capReached() throws {
        let tmp = TemporaryDirectory()
        let cap = 1 << 20
        let env = try tinyEnvironment(tmp, cap: cap)
        let db = try env.openDatabase("blobs", flags: [.create])
        try env.write { txn throws in try txn.put(db, key: key(0), value: value(0, size: 100)) }
        let error = #expect(throws: LMDBError.self) {
            try env.restartableWrite { txn, _ throws in
                for n in 1..<1000 as Range<UInt64> {
                    try txn.put(db, key: key(n), value: value(n, size: 4000))
                }
            }
        }
        #expect(error?.code == .mapFull)
        #expect(env.mapSize == cap)
        // Nothing of the failed transaction is visible; earlier data is intact; small writes work.
        #expect(try env.read { txn throws in try txn.count(db) } == 1)
        try env.write { txn throws in try txn.put(db, key: key(1), value: value(1, size: 100)) }
        try env.read { txn throws in
            #expect(try txn.get(db, key: key(0)) == value(0, size: 100))
            #expect(try txn.get(db, key: key(1)) == value(1, size: 100))
        }
        // Many small transactions also stop at the cap with mapFull, never with a trap.
        var stoppedAt: UInt64?
        for n in 2..<2000 as Range<UInt64> {
            do {
                try env.restartableWrite { txn, _ throws in try txn.put(db, key: key(n), value: value(n, size: 2000)) }
            } catch let e as LMDBError {
                #expect(e.code == .mapFull)
                stoppedAt = n
                break
            }
        }
        let stop = try #require(stoppedAt)
        #expect(stop > 100)
        #expect(try env.read { txn throws in try txn.count(db) } == Int(stop))
    }
}
