import Glibc
@_spi(FaultInjection) import LMDB
import TestSupport
import Testing

/// The one rule of write transactions: `write` runs its body once; only `restartableWrite`
/// runs it again, after the map grew, and says which attempt it is. And the test-only faults
/// the other suites drive every write path through.
@Suite("Write transactions: run once or restart explicitly; injected faults")
struct WriteRuleTests {
    func environment(_ tmp: TemporaryDirectory, map: Int = 256 << 10, cap: Int = 1 << 40) throws -> Environment {
        var options = Environment.Options()
        options.mapSize = map
        options.maxMapSize = cap
        return try Environment(path: tmp.path, options: options)
    }

    func fill(_ txn: borrowing Transaction, _ db: Database, count: UInt64, size: Int) throws {
        for n in 0..<count { try txn.put(db, key: key(n), value: [UInt8](repeating: UInt8(n & 0xFF), count: size)) }
    }

    @Test("write runs its body once: a full map aborts it, throws mapFull and leaves the map as it was")
    func writeRunsOnce() throws {
        let tmp = TemporaryDirectory()
        let env = try environment(tmp)
        let db = try env.openDatabase("blobs", flags: [.create])
        let before = env.mapSize
        var runs = 0
        let error = #expect(throws: LMDBError.self) {
            try env.write { txn throws in
                runs += 1
                try fill(txn, db, count: 400, size: 3000)
            }
        }
        #expect(runs == 1)
        #expect(error?.code == .mapFull)
        #expect(env.mapSize == before)
        #expect(try env.read { txn throws in try txn.count(db) } == 0)
    }

    @Test("a full map is the error even when the body wraps it or goes on and fails otherwise")
    func mapFullWinsOverTheBodysError() throws {
        struct Wrapped: Error {}
        let tmp = TemporaryDirectory()
        let env = try environment(tmp)
        let db = try env.openDatabase("blobs", flags: [.create])
        var runs = 0
        try env.restartableWrite { txn, attempt throws in
            runs += 1
            do { try fill(txn, db, count: 400, size: 3000) } catch { throw Wrapped() }
            #expect(attempt == runs)
        }
        #expect(runs > 1)
        #expect(try env.read { txn throws in try txn.count(db) } == 400)
    }

    @Test("reserve grows the map ahead, so a large restartable write runs once")
    func reserveAhead() throws {
        let tmp = TemporaryDirectory()
        let env = try environment(tmp)
        let db = try env.openDatabase("blobs", flags: [.create])
        try env.reserve(8 << 20)
        #expect(env.mapSize >= 8 << 20)
        var runs = 0
        try env.restartableWrite { txn, _ throws in
            runs += 1
            try fill(txn, db, count: 1000, size: 3000)
        }
        #expect(runs == 1)
        // A reservation never shrinks the map and stops at the cap.
        let grown = env.mapSize
        try env.reserve(1)
        #expect(env.mapSize == grown)
        let capped = TemporaryDirectory()
        let small = try environment(capped, cap: 1 << 20)
        try small.reserve(64 << 20)
        #expect(small.mapSize == 1 << 20)
    }

    @Test("pages written past the committed ones (a writer that failed or was killed) are given back to the disk")
    func uncommittedPagesGivenBack() throws {
        let tmp = TemporaryDirectory()
        let env = try environment(tmp, map: 64 << 20)
        let db = try env.openDatabase("blobs", flags: [.create])
        try env.write { txn throws in try fill(txn, db, count: 10, size: 3000) }
        let committed = env.fileSize
        #expect(committed == env.usedBytes)
        // (A write that fails at its commit on a full disk: ReliabilityDiskTests.) Pages a killed writer left (the file longer than its committed pages): the next write
        // gives them back. Before 2026-12-07 they stayed for good.
        let fd = open(tmp.path + "/data.mdb", O_WRONLY | O_CLOEXEC)
        #expect(fd >= 0 && ftruncate(fd, off_t(committed + (8 << 20))) == 0)
        close(fd)
        try env.write { txn throws in try txn.put(db, key: key(99_999), value: [1]) }
        #expect(env.fileSize == env.usedBytes && env.fileSize < committed + (1 << 20), "\(env.fileSize)")
        #expect(try env.read { txn throws in try txn.count(db) } == 11)
    }

    @Test("the Nth put, commit or growth fails with the planned error, once; nothing of the transaction stays")
    func injectedFaults() throws {
        for failure in FaultInjection.Failure.allCases {
            for operation in FaultInjection.Operation.allCases {
                let tmp = TemporaryDirectory()
                let env = try environment(tmp)
                let db = try env.openDatabase("kv", flags: [.create])
                try env.write { txn throws in try txn.put(db, key: key(0), value: [0]) }
                let at = operation == .put ? 3 : 1
                env.injectFault(.init(operation, at: at, failing: failure))
                defer { env.removeFault() }
                // A growth happens only in a restartable write that outgrows the map.
                let (count, size): (UInt64, Int) = operation == .growth ? (400, 3000) : (5, 10)
                var runs = 0
                let outcome = Result {
                    try env.restartableWrite { txn, _ throws in
                        runs += 1
                        for n in 1...count { try txn.put(db, key: key(n), value: [UInt8](repeating: 1, count: size)) }
                    }
                }
                let stored = try env.read { txn throws in try txn.count(db) }
                #expect(FaultInjection.fired(at: tmp.path), "\(operation) \(failure)")
                switch (operation, failure) {
                case (.put, .mapFull), (.commit, .mapFull):
                    // A full map is what a restart is for: it succeeds, once the map grew.
                    #expect(throws: Never.self) { try outcome.get() }
                    #expect(runs == 2, "\(operation) \(failure)")
                    #expect(stored == Int(count) + 1)
                default:
                    let error = try #require(outcome.failure as? LMDBError, "\(operation) \(failure)")
                    let expected: LMDBError.Code =
                        failure == .noSpace ? .noSpace : failure == .io ? LMDBError.Code(rawValue: EIO) : .mapFull
                    #expect(error.code == expected, "\(operation) \(failure): \(error)")
                    #expect(stored == 1, "\(operation) \(failure): the failed transaction left nothing")
                }
                // The fault fired once: the environment works normally afterwards.
                try env.write { txn throws in try txn.put(db, key: key(9999), value: [9]) }
            }
        }
    }

    @Test("a fault armed for a path applies to environments opened there later, and to no other")
    func armedByPath() throws {
        let tmp = TemporaryDirectory()
        let other = TemporaryDirectory()
        FaultInjection.arm(.init(.commit, at: 1, failing: .noSpace), at: tmp.path)
        defer { FaultInjection.disarm(at: tmp.path) }
        let env = try environment(tmp)
        let db = try env.openDatabase("kv", flags: [.create])
        let bystander = try environment(other)
        let otherDB = try bystander.openDatabase("kv", flags: [.create])
        try bystander.write { txn throws in try txn.put(otherDB, key: key(1), value: [1]) }
        #expect(!FaultInjection.fired(at: tmp.path))
        let error = #expect(throws: LMDBError.self) {
            try env.write { txn throws in try txn.put(db, key: key(1), value: [1]) }
        }
        #expect(error?.isOutOfSpace == true)
        #expect(FaultInjection.fired(at: tmp.path))
        #expect(try env.read { txn throws in try txn.count(db) } == 0)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
