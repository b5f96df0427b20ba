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

    @Test("the open's check of the header pages' transaction ids takes every pair LMDB writes: new, reopened, copied")
    func headerPairsLMDBWrites() throws {
        let tmp = TemporaryDirectory()
        // A file no transaction committed to (both ids 0), then each number of commits.
        _ = try Environment(path: tmp.child("new"))
        _ = try Environment(path: tmp.child("new"))
        let path = tmp.child("store")
        for n in 0..<5 {
            let env = try Environment(path: path)
            let db = try env.openDatabase("things", flags: [.create])
            try env.write { txn throws in try txn.put(db, key: [UInt8(n)], value: [1]) }
        }
        // Copies: compacted (ids 0 and 1), and as they are (the pair the store had).
        do {
            let env = try Environment(path: path)
            for (name, compact) in [("compact", true), ("plain", false)] {
                #expect(mkdir(tmp.child(name), 0o700) == 0)
                try env.copy(to: tmp.child(name), compact: compact)
            }
        }
        for name in ["store", "compact", "plain"] {
            let env = try Environment(path: tmp.child(name))
            let db = try env.openDatabase("things")
            #expect(try env.read { txn throws in try txn.get(db, key: [4]) } == [1], "\(name)")
        }
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

@Suite("Environment: resident memory")
struct ResidentMemoryTests {
    /// Resident kilobytes of this process's mapping of `file`, from `/proc/self/smaps`.
    static func residentKilobytes(of file: String) -> Int? {
        guard let f = fopen("/proc/self/smaps", "r") else { return nil }
        defer { fclose(f) }
        var inMapping = false
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), f) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let first = text.split(separator: " ").first, first.contains("-"), !first.hasSuffix(":") {
                inMapping = text.hasSuffix(file + "\n")
            } else if inMapping, text.hasPrefix("Rss:") {
                return Int(text.split(separator: " ", omittingEmptySubsequences: true)[1])
            }
        }
        return nil
    }

    @Test("releasing mapped pages drops them from resident memory and keeps every byte")
    func releaseMappedPages() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("values", flags: [.create])
        let count = 2_048
        func value(_ i: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: i &* 7), count: 4_000) }
        try env.write { txn throws in
            for i in 0..<count {
                try txn.put(db, key: withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) }, value: value(i))
            }
        }
        func readAll() throws -> Int {
            try env.read { txn throws in
                var same = 0
                try txn.withCursor(db) { c throws in
                    var i = 0
                    var e = try c.first()
                    while let entry = e {
                        if entry.value.elementsEqual(value(i)) { same += 1 }
                        i += 1
                        e = try c.next()
                    }
                }
                return same
            }
        }
        #expect(try readAll() == count)
        let file = tmp.path + "/data.mdb"
        let before = try #require(Self.residentKilobytes(of: file))
        #expect(before >= 7_000, "reading 8 MB through the map made it resident")
        #expect(env.releaseMappedPages() > 0)
        let after = try #require(Self.residentKilobytes(of: file))
        #expect(after < before - 6_000)
        #expect(try readAll() == count, "the pages come back unchanged")
    }
}
