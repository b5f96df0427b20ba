import Glibc
import LMDB
import TestSupport
import Testing

@Suite("Environment: open, close, permissions")
struct EnvironmentTests {
    @Test("opening creates the directory 0700 and the files 0600")
    func createsPrivateFiles() throws {
        let tmp = TemporaryDirectory()
        let path = tmp.child("store")
        do {
            let env = try Environment(path: path)
            let db = try env.openDatabase("things", flags: [.create])
            try env.write { txn throws in try txn.put(db, key: [1], value: [2]) }
        }
        #expect(permissions(path) == 0o700)
        #expect(permissions(path + "/data.mdb") == 0o600)
        #expect(permissions(path + "/lock.mdb") == 0o600)
    }

    @Test("data written before close is read after reopening")
    func reopen() throws {
        let tmp = TemporaryDirectory()
        do {
            let env = try Environment(path: tmp.path)
            let db = try env.openDatabase("things", flags: [.create])
            try env.write { txn throws in
                try txn.put(db, key: Array("k".utf8), value: Array("value".utf8))
            }
        }
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("things")
        let value = try env.read { txn throws in try txn.get(db, key: Array("k".utf8)) }
        #expect(value == Array("value".utf8))
        #expect(env.staleReadersCleared == 0)
        #expect(try env.clearStaleReaders() == 0)
    }

    @Test("a store path that is a file is refused with notADirectory")
    func pathIsAFile() throws {
        let tmp = TemporaryDirectory()
        let file = tmp.child("plain")
        let fd = open(file, O_CREAT | O_WRONLY, 0o600)
        #expect(fd >= 0)
        close(fd)
        let error = #expect(throws: LMDBError.self) { try Environment(path: file) }
        #expect(error?.code == .notADirectory)
    }

    @Test("a missing parent directory is reported, not created")
    func missingParent() throws {
        let tmp = TemporaryDirectory()
        let error = #expect(throws: LMDBError.self) { try Environment(path: tmp.child("a/b/c")) }
        #expect(error?.code == .noSuchFile)
        #expect(permissions(tmp.child("a")) == nil)
    }

    @Test("read-only open of a missing store fails without creating it")
    func readOnlyMissing() throws {
        let tmp = TemporaryDirectory()
        var options = Environment.Options()
        options.readOnly = true
        #expect(throws: LMDBError.self) { try Environment(path: tmp.child("none"), options: options) }
        #expect(permissions(tmp.child("none")) == nil)
    }

    @Test("a read-only environment reads but refuses writes")
    func readOnlyStore() throws {
        let tmp = TemporaryDirectory()
        do {
            let env = try Environment(path: tmp.path)
            let db = try env.openDatabase("things", flags: [.create])
            try env.write { txn throws in try txn.put(db, key: [1], value: [7]) }
        }
        var options = Environment.Options()
        options.readOnly = true
        let env = try Environment(path: tmp.path, options: options)
        let db = try env.openDatabase("things")
        #expect(try env.read { txn throws in try txn.get(db, key: [1]) } == [7])
        #expect(throws: LMDBError.self) {
            try env.write { txn throws in try txn.put(db, key: [2], value: [8]) }
        }
        #expect(throws: LMDBError.self) { try env.openDatabase("other", flags: [.create]) }
    }

    @Test("opening a missing database without .create is notFound")
    func missingDatabase() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let error = #expect(throws: LMDBError.self) { try env.openDatabase("absent") }
        #expect(error?.code == .notFound)
        // The `~=` overload lets callers match codes in catch clauses.
        do {
            _ = try env.openDatabase("absent")
        } catch LMDBError.Code.notFound {
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("more named databases than maxDatabases is databasesFull")
    func tooManyDatabases() throws {
        let tmp = TemporaryDirectory()
        var options = Environment.Options()
        options.maxDatabases = 2
        let env = try Environment(path: tmp.path, options: options)
        let a = try env.openDatabase("a", flags: [.create])
        let again = try env.openDatabase("a", flags: [.create])
        #expect(a == again)
        _ = try env.openDatabase("b", flags: [.create])
        let error = #expect(throws: LMDBError.self) { try env.openDatabase("c", flags: [.create]) }
        #expect(error?.code == .databasesFull)
    }

    @Test("the main database lists the named databases")
    func mainDatabaseListsNames() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        _ = try env.openDatabase("one", flags: [.create])
        _ = try env.openDatabase("two", flags: [.create])
        let main = try env.mainDatabase()
        let names = try env.read { txn throws in
            try txn.withCursor(main) { c throws in
                var out: [String] = []
                var e = try c.first()
                while let entry = e {
                    out.append(String(decoding: entry.key, as: UTF8.self))
                    e = try c.next()
                }
                return out
            }
        }
        #expect(names == ["one", "two"])
    }

    @Test("errors carry LMDB's message and the operation")
    func errorDescription() {
        let error = LMDBError(code: .mapFull, operation: "put into events")
        #expect(error.message.contains("MDB_MAP_FULL"))
        #expect(error.description.hasPrefix("put into events: "))
        #expect(!error.isOutOfSpace)
        #expect(LMDBError(code: .noSpace, operation: "commit").isOutOfSpace)
    }

    @Test("copy writes a compact, openable copy")
    func copy() throws {
        let tmp = TemporaryDirectory()
        let source = try Environment(path: tmp.child("a"))
        let db = try source.openDatabase("things", flags: [.create])
        try source.write { txn throws in
            for i in 0..<100 as Range<UInt64> { try txn.put(db, key: key(i), value: key(i * 2)) }
        }
        #expect(mkdir(tmp.child("b"), 0o700) == 0)
        try source.copy(to: tmp.child("b"))
        let copy = try Environment(path: tmp.child("b"))
        let copied = try copy.openDatabase("things")
        #expect(try copy.read { txn throws in try txn.count(copied) } == 100)
        #expect(try copy.read { txn throws in try txn.get(copied, key: key(7)) } == key(14))
    }
}
