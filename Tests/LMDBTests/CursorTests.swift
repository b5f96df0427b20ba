import LMDB
import TestSupport
import Testing

@Suite("Cursors: moves, seeks, duplicates")
struct CursorTests {
    /// Keys 10, 20, ..., 100 with the value key + 1.
    func tens() throws -> (TemporaryDirectory, Environment, Database) {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("tens", flags: [.create])
        try env.write { txn throws in
            for n in stride(from: 10 as UInt64, through: 100, by: 10) {
                try txn.put(db, key: key(n), value: key(n + 1))
            }
        }
        return (tmp, env, db)
    }

    @Test("first, last, next, previous walk the keys in order")
    func walk() throws {
        let (_, env, db) = try tens()
        try env.read { txn throws in
            try txn.withCursor(db) { c throws in
                #expect(try c.first().map { number($0.key) } == 10)
                #expect(try c.current().map { number($0.value) } == 11)
                var forward: [UInt64] = [10]
                while let e = try c.next() { forward.append(number(e.key)) }
                #expect(forward == Array(stride(from: 10, through: 100, by: 10)))
                #expect(try c.last().map { number($0.key) } == 100)
                var backward: [UInt64] = [100]
                while let e = try c.previous() { backward.append(number(e.key)) }
                #expect(backward == Array(stride(from: 100, through: 10, by: -10)))
            }
        }
    }

    @Test("an unpositioned cursor starts at the first (next) or last (previous) entry")
    func unpositioned() throws {
        let (_, env, db) = try tens()
        try env.read { txn throws in
            try txn.withCursor(db) { c throws in #expect(try c.next().map { number($0.key) } == 10) }
            try txn.withCursor(db) { c throws in #expect(try c.previous().map { number($0.key) } == 100) }
        }
    }

    @Test(
        "seek, seekExact and seekAtOrBefore",
        arguments: [
            (5, 10, nil, nil), (10, 10, 10, 10), (15, 20, nil, 10), (100, 100, 100, 100),
            (101, nil, nil, 100),
        ] as [(UInt64, UInt64?, UInt64?, UInt64?)])
    func seeks(probe: UInt64, atOrAfter: UInt64?, exact: UInt64?, atOrBefore: UInt64?) throws {
        let (_, env, db) = try tens()
        try env.read { txn throws in
            try txn.withCursor(db) { c throws in
                #expect(try c.seek(key(probe)).map { number($0.key) } == atOrAfter)
                try key(probe).withUnsafeBytes { k throws in
                    #expect(try c.seekExact(k).map { number($0.key) } == exact)
                    #expect(try c.seekAtOrBefore(k).map { number($0.key) } == atOrBefore)
                    #expect(try c.seek(k).map { number($0.key) } == atOrAfter)
                }
            }
        }
    }

    @Test("an empty database gives nil for every move")
    func empty() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("empty", flags: [.create])
        try env.read { txn throws in
            try txn.withCursor(db) { c throws in
                #expect(try c.first() == nil)
                #expect(try c.last() == nil)
                #expect(try c.next() == nil)
                #expect(try c.previous() == nil)
                #expect(try c.seek(key(1)) == nil)
                try key(1).withUnsafeBytes { k throws in #expect(try c.seekAtOrBefore(k) == nil) }
            }
        }
    }

    @Test("cursor puts with .append, out-of-order append is refused, deleteCurrent")
    func cursorWrites() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("log", flags: [.create])
        try env.write { txn throws in
            try txn.withCursor(db) { c throws in
                for n in 1...50 as ClosedRange<UInt64> {
                    try key(n).withUnsafeBytes { k throws in
                        try [UInt8(n)].withUnsafeBytes { v throws in try c.put(k, v, flags: .append) }
                    }
                }
            }
        }
        let error = #expect(throws: LMDBError.self) {
            try env.write { txn throws in
                try txn.withCursor(db) { c throws in
                    try key(3).withUnsafeBytes { k throws in
                        try [UInt8(0)].withUnsafeBytes { v throws in try c.put(k, v, flags: .append) }
                    }
                }
            }
        }
        #expect(error?.code == .keyExists)
        try env.write { txn throws in
            try txn.withCursor(db) { c throws in
                // Delete every even key while walking.
                var e = try c.first()
                while let entry = e {
                    if number(entry.key) % 2 == 0 { try c.deleteCurrent() }
                    e = try c.next()
                }
            }
        }
        let keys = try env.read { txn throws in
            try txn.withCursor(db) { c throws in
                var out: [UInt64] = []
                var e = try c.first()
                while let entry = e {
                    out.append(number(entry.key))
                    e = try c.next()
                }
                return out
            }
        }
        #expect(keys == Array(stride(from: 1, through: 49, by: 2)))
    }

    @Test("duplicate-sorted databases: values per key, counts, seeks, deletes")
    func duplicates() throws {
        let tmp = TemporaryDirectory()
        let env = try Environment(path: tmp.path)
        let db = try env.openDatabase("index", flags: [.create, .dupSort])
        try env.write { txn throws in
            for (k, values) in [(1, [30, 10, 20]), (2, [5]), (3, [7, 8])] as [(UInt64, [UInt64])] {
                for v in values { try txn.put(db, key: key(k), value: key(v)) }
            }
            // The same pair again is refused with noDupData.
            #expect(throws: LMDBError.self) {
                try txn.put(db, key: key(1), value: key(10), flags: .noDupData)
            }
            // appendDup: a value after the stored ones goes through, one before is refused.
            try txn.put(db, key: key(3), value: key(9), flags: .appendDup)
            #expect(throws: LMDBError.self) {
                try txn.put(db, key: key(3), value: key(1), flags: .appendDup)
            }
        }
        try env.read { txn throws in
            #expect(try txn.count(db) == 7)
            try txn.withCursor(db) { c throws in
                let first = try #require(try c.first())
                #expect(number(first.key) == 1 && number(first.value) == 10)
                #expect(try c.duplicateCount() == 3)
                #expect(try c.nextDuplicate().map { number($0.value) } == 20)
                #expect(try c.nextDuplicate().map { number($0.value) } == 30)
                #expect(try c.nextDuplicate() == nil)
                let second = try #require(try c.nextKey())
                #expect(number(second.key) == 2 && number(second.value) == 5)
                #expect(try c.duplicateCount() == 1)
                let third = try #require(try c.nextKey())
                #expect(number(third.key) == 3)
                #expect(try c.lastDuplicate().map { number($0.value) } == 9)
                #expect(try c.nextKey() == nil)
                try key(1).withUnsafeBytes { k throws in
                    try key(15).withUnsafeBytes { v throws in
                        let found = try c.seek(key: k, value: v)
                        #expect(found.map { number($0.value) } == 20)
                    }
                    try key(31).withUnsafeBytes { v throws in #expect(try c.seek(key: k, value: v) == nil) }
                }
            }
        }
        try env.write { txn throws in
            #expect(try txn.delete(db, key: key(1), value: key(20)))
            #expect(try !txn.delete(db, key: key(1), value: key(20)))
            #expect(try txn.delete(db, key: key(3)))  // both values of key 3
        }
        try env.read { txn throws in
            #expect(try txn.count(db) == 3)
            try txn.withCursor(db) { c throws in
                var pairs: [[UInt64]] = []
                var e = try c.first()
                while let entry = e {
                    pairs.append([number(entry.key), number(entry.value)])
                    e = try c.next()
                }
                #expect(pairs == [[1, 10], [1, 30], [2, 5]])
            }
        }
    }
}
