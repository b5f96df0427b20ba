import Glibc
import LMDB
import StressFixture
import TestSupport
import Testing

@testable import EventStore

@Suite("Store format, foreign stores, interrupted creation, damaged events")
struct StoreFormatTests {
    @Test("a page LMDB cannot find, or a damaged page, says how to get the events out, not a bare storage error")
    func damagedPagesSayWhatToDo() {
        for code in [LMDBError.Code.pageNotFound, .corrupted] {
            let text = StoreError.storage(LMDBError(code: code, operation: "clear p0.search_postings")).description
            #expect(text.contains("damaged") && text.contains("notes export --output FILE"), "\(text)")
            #expect(!text.hasPrefix("storage error"))
        }
    }

    @Test("no memory for the map (ulimit -v) says so and what to do, not a bare storage error")
    func mapOutOfMemory() {
        let text = StoreError.storage(LMDBError(code: .outOfMemory, operation: "mdb_env_set_mapsize (512 MiB)"))
            .description
        #expect(text.hasPrefix("not enough memory to map the store (mdb_env_set_mapsize (512 MiB))"), "\(text)")
        #expect(text.contains("ulimit -v"), "\(text)")
    }

    @Test("a store of a newer format is refused and its data file is left byte for byte")
    func newerFormat() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        do {
            let store = try EventStore(path: tmp.path, configuration: configuration())
            try store.append(f.events(5), to: "s")
        }
        do {
            let env = try Environment(path: tmp.path)
            let meta = try env.openDatabase("meta")
            #expect(try env.read { txn throws in try txn.get(meta, key: Array("format".utf8)) } == [0, 0, 0, 1])
            try env.write { txn throws in try txn.put(meta, key: Array("format".utf8), value: [0, 0, 0, 2]) }
        }
        let before = try #require(fileBytes(tmp.child("data.mdb")))
        for readOnly in [false, true] {
            var c = configuration(projections: CountingProjections())
            c.environment.readOnly = readOnly
            let error = #expect(throws: StoreError.self) { try EventStore(path: tmp.path, configuration: c) }
            guard case .newerFormat(let found, let supported) = error else {
                Issue.record("expected newerFormat, got \(String(describing: error))")
                continue
            }
            #expect(found == 2 && supported == EventStore.formatVersion)
            #expect(error?.description.contains("left untouched") == true)
        }
        #expect(fileBytes(tmp.child("data.mdb")) == before)
    }

    @Test("a file, or a directory of other LMDB data, is not a store")
    func notAStore() throws {
        let tmp = TemporaryDirectory()
        let file = tmp.child("file")
        close(open(file, O_CREAT | O_WRONLY, 0o600))
        let error = #expect(throws: StoreError.self) { try EventStore(path: file) }
        guard case .notAStore = error else { Issue.record("got \(String(describing: error))"); return }

        let other = tmp.child("other")
        do {
            let env = try Environment(path: other)
            let db = try env.openDatabase("mine", flags: [.create])
            try env.write { txn throws in try txn.put(db, key: [1], value: [1]) }
        }
        let before = try #require(fileBytes(other + "/data.mdb"))
        let foreign = #expect(throws: StoreError.self) { try EventStore(path: other) }
        guard case .notAStore = foreign else { Issue.record("got \(String(describing: foreign))"); return }
        #expect(fileBytes(other + "/data.mdb") == before)

        let garbage = tmp.child("garbage")
        #expect(mkdir(garbage, 0o700) == 0)
        let fd = open(garbage + "/data.mdb", O_CREAT | O_WRONLY, 0o600)
        _ = [UInt8](repeating: 0x5A, count: 8192).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(throws: StoreError.self) { try EventStore(path: garbage) }
    }

    @Test("another program's LMDB data under a store's names (meta, events) is not a store, and is left byte for byte")
    func foreignDataUnderStoreNames() throws {
        let tmp = TemporaryDirectory()
        // Before 2026-12-06 each of these was taken for a store whose creation had been killed,
        // and finished: even `notes verify` wrote the store's databases into the file.
        let cases: [(name: String, databases: [String])] = [
            ("meta-and-records", ["meta", "records"]), ("meta", ["meta"]), ("events", ["events"]),
        ]
        for (name, databases) in cases {
            let path = tmp.child(name)
            do {
                let env = try Environment(path: path)
                for database in databases {
                    let db = try env.openDatabase(database, flags: [.create])
                    try env.write { txn throws in try txn.put(db, key: Array("schema".utf8), value: [7]) }
                }
            }
            let before = try #require(fileBytes(path + "/data.mdb"))
            for readOnly in [false, true] {
                var c = configuration(projections: CountingProjections())
                c.environment.readOnly = readOnly
                let error = #expect(throws: StoreError.self, "\(name)") { try EventStore(path: path, configuration: c) }
                guard case .notAStore(_, let detail) = error else {
                    Issue.record("\(name): got \(String(describing: error))")
                    continue
                }
                #expect(detail == "it holds other LMDB data", "\(name)")
            }
            let unchanged = fileBytes(path + "/data.mdb") == before
            #expect(unchanged, "\(name): data.mdb was written to")
        }
    }

    @Test("an empty read-only store is refused instead of created")
    func readOnlyEmpty() throws {
        let tmp = TemporaryDirectory()
        _ = try Environment(path: tmp.path)  // an empty LMDB environment
        var c = configuration()
        c.environment.readOnly = true
        #expect(throws: StoreError.self) { try EventStore(path: tmp.path, configuration: c) }
    }

    @Test("a creation interrupted before the format was written is finished at the next open")
    func interruptedCreation() throws {
        let tmp = TemporaryDirectory()
        do {
            // What a process killed in the middle of creating a store leaves behind.
            let env = try Environment(path: tmp.path)
            _ = try env.openDatabase("meta", flags: [.create])
            _ = try env.openDatabase("events", flags: [.create])
        }
        var f = EventFactory()
        do {
            let store = try EventStore(path: tmp.path, configuration: configuration())
            try store.append(f.events(2), to: "s")
        }
        let store = try EventStore(path: tmp.path, configuration: configuration())
        #expect(try verifyLog(store).head == 2)
    }

    @Test("events without a format version are never taken over")
    func eventsWithoutFormat() throws {
        let tmp = TemporaryDirectory()
        var f = EventFactory()
        do {
            let store = try EventStore(path: tmp.path, configuration: configuration())
            try store.append(f.events(2), to: "s")
            try store.environment.write { txn throws in _ = try txn.delete(store.meta, key: Array("format".utf8)) }
        }
        let error = #expect(throws: StoreError.self) { try EventStore(path: tmp.path, configuration: configuration()) }
        // Damage, said to be (before 2026-12-06 "not a notes store (it has no format version);
        // choose another path", which a torn copy of a store's data.mdb most often showed).
        guard case .storage(let e) = error, e.code == .corrupted else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("damaged") == true && error?.description.contains("backup") == true)
    }

    @Test("a format version of the wrong size is said to be unreadable, not a log of events that lost it")
    func unreadableFormat() throws {
        for events in [0, 2] {
            let tmp = TemporaryDirectory()
            var f = EventFactory()
            do {
                let store = try EventStore(path: tmp.path, configuration: configuration())
                if events > 0 { try store.append(f.events(events), to: "s") }
                try store.environment.write { txn throws in
                    try txn.put(store.meta, key: Array("format".utf8), value: [0, 0, 1])
                }
            }
            let before = try #require(fileBytes(tmp.child("data.mdb")))
            let error = #expect(throws: StoreError.self) {
                try EventStore(path: tmp.path, configuration: configuration())
            }
            guard case .storage(let e) = error, e.code == .corrupted else {
                Issue.record("\(events) events: got \(String(describing: error))")
                continue
            }
            let text = error?.description ?? ""
            #expect(text.contains("format version") && text.contains("unreadable"), "\(events) events: \(text)")
            #expect(!text.contains("yet its log holds events"), "\(events) events: \(text)")
            #expect(fileBytes(tmp.child("data.mdb")) == before)
        }
    }

    @Test("a damaged event is reported with its position; other reads still work; appends stop")
    func damagedEvent() throws {
        let tmp = TemporaryDirectory()
        let store = try EventStore(path: tmp.path, configuration: configuration())
        var f = EventFactory()
        try store.append(f.events(3), to: "a")
        try store.append(f.events(2), to: "b")
        func damage(_ position: UInt64) throws {
            try store.environment.write { txn throws in
                let key = keyBytes(position)
                var bytes = try #require(try txn.get(store.events, key: key))
                bytes[bytes.count / 2] ^= 0x10
                try txn.put(store.events, key: key, value: bytes)
            }
        }
        try damage(2)
        let error = #expect(throws: StoreError.self) {
            try store.read { txn throws in try store.forEachEvent(from: 1, in: txn) { _ in true } }
        }
        guard case .damaged(let position, _) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(position == 2)
        #expect(throws: StoreError.self) { try store.read { txn throws in try store.event(at: 2, in: txn) } }
        #expect(try store.read { txn throws in try store.event(at: 1, in: txn) }?.position == 1)
        let b = try store.read { txn throws in
            var n = 0
            try store.forEachEvent(inStream: "b", in: txn) { _ in
                n += 1
                return true
            }
            return n
        }
        #expect(b == 2)
        // An append needs the last event's digest: with the last one damaged, it refuses.
        try damage(5)
        #expect(throws: StoreError.self) { try store.append(f.events(1), to: "c") }
        #expect(try store.read { txn throws in try store.headPosition(in: txn) } == 5)
    }
}
