public import Basics
internal import CIntrinsics
import Glibc
public import LMDB

/// An append-only event log in one LMDB environment, with projections updated in the same
/// write transaction as every append.
///
/// ```swift
/// let store = try EventStore(path: dir, configuration: .init(registry: registry, projections: views))
/// try store.append([event], to: "note/\(id)", expecting: .noStream)
/// try store.read { txn in try store.forEachEvent(from: 1, in: txn) { e in print(e.type); return true } }
/// ```
///
/// `EventStore` is `Sendable`: its state is the immutable configuration, the environment
/// (itself `Sendable`) and the database handles, which LMDB shares across threads.
public final class EventStore: Sendable {
    /// The on-disk format this program writes and the newest it reads.
    public static let formatVersion: UInt32 = 1

    /// How to open a store.
    public struct Configuration: Sendable {
        public var environment = Environment.Options()
        /// Microseconds since the Unix epoch; injected so tests are deterministic.
        public var clock: @Sendable () -> Int64 = EventStore.systemClock
        /// Called with each instant ``clock`` gives an event as it is appended; a throw refuses
        /// the append (with that error). Events that bring their own instant are not checked.
        public var checkClock: (@Sendable (Int64) throws -> Void)?
        public var registry = SchemaRegistry()
        /// Where ``WriteSession/newID()`` takes ids from; injected so tests are deterministic.
        public var ids: any IdentifierGenerator = RandomIdentifiers()
        public var projections: (any ProjectionSet)?
        /// Let ``EventStore/rebuildIfNeeded()`` rebuild (off for read-only use).
        public var rebuildIfNeeded = true
        /// Called during a rebuild with (events done, events total).
        public var progress: (@Sendable (UInt64, UInt64) -> Void)?

        public init(registry: SchemaRegistry = SchemaRegistry(), projections: (any ProjectionSet)? = nil) {
            self.registry = registry
            self.projections = projections
        }
    }

    /// Refuses a `data.mdb` in `path` that no store can be in, before LMDB opens (or creates)
    /// anything there: a symbolic link to nothing (LMDB would create the file it names, or fail
    /// with a bare "No such file or directory", and a read took the folder for one without a
    /// store yet), a FIFO (its open would wait for a writer for good), a directory, a device or a
    /// socket. A link to a regular file is the store's file, as LMDB reads it. A `lock.mdb` of
    /// those kinds is refused too, saying to remove it (LMDB makes a new one): before 2026-12-06
    /// it was "storage error: mdb_env_open DIR: Illegal seek" (a FIFO), "Is a directory",
    /// "Invalid argument" (a device) or "No such file or directory" (a dangling link), naming
    /// neither the file nor what to do.
    static func checkDataFile(in path: String) throws(StoreError) {
        try checkStoreFile(path + "/data.mdb", isLock: false)
        try checkStoreFile(path + "/lock.mdb", isLock: true)
    }

    private static func checkStoreFile(_ file: String, isLock: Bool) throws(StoreError) {
        var entry = stat()
        guard lstat(file, &entry) == 0 else { return }
        var kind = entry.st_mode & S_IFMT
        // What to do about a lock file: no data is in it, and LMDB makes a new one.
        let removeLock = "remove it (it holds no data; a new one is made)"
        if kind == S_IFLNK {
            var target = stat()
            guard stat(file, &target) == 0 else {
                // ELOOP and the like are LMDB's to report.
                guard errno == ENOENT || errno == ENOTDIR else { return }
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlink(file, &buffer, buffer.count - 1)
                let to =
                    n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "nothing"
                throw .unusableDataFile(
                    file: file,
                    detail: "a dangling symbolic link to \(to), which does not exist (nothing was created); "
                        + (isLock ? removeLock : "restore the file it points to"))
            }
            kind = target.st_mode & S_IFMT
        }
        let what: String
        switch kind {
        case S_IFREG: return
        case S_IFIFO: what = "a FIFO (named pipe)"
        case S_IFDIR: what = "a directory"
        case S_IFCHR, S_IFBLK: what = "a device"
        case S_IFSOCK: what = "a socket"
        default: what = "not a regular file"
        }
        throw .unusableDataFile(
            file: file,
            detail: isLock
                ? "\(what), which cannot be the store's lock file; \(removeLock)"
                : "\(what), which cannot hold a store; move it out of the folder")
    }

    /// Whether `path` is a folder of a file system the kernel makes up (proc, sysfs, cgroup,
    /// debugfs, tracefs, securityfs), where no file can be made, so no store either: before
    /// 2026-12-07 `NOTES_STORE=/proc/self notes add X` said "storage error: mdb_env_open
    /// /proc/self: No such file or directory", and `notes list` "no store yet; add a note".
    /// A file there (`/proc/version`) is none: before this was checked, it was said to be a
    /// folder, where the open says it is a file.
    public static func isKernelFolder(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return false }
        return notes_is_kernel_file_system(path) != 0
    }

    /// The nearest folder above `path`, which does not exist, when it ``isKernelFolder(_:)``:
    /// no folder can be made there either (`/proc/self/notes`, `/dev/pts/notes`), which a read
    /// said was "no store yet; add a note", and `add` then "storage error: mkdir".
    public static func kernelFolder(above path: String) -> String? {
        var p = path
        while true {
            while p.count > 1, p.hasSuffix("/") { p.removeLast() }
            guard let slash = p.lastIndex(of: "/") else {
                return isKernelFolder(".") ? "." : nil
            }
            p = slash == p.startIndex ? "/" : String(p[..<slash])
            var st = stat()
            if stat(p, &st) == 0 { return isKernelFolder(p) ? p : nil }
            if p == "/" { return nil }
        }
    }

    /// Why a folder ``isKernelFolder(_:)`` says is one is not a store.
    public static let kernelFolderDetail =
        "it is a folder of a file system the kernel makes up, where no file can be made"

    /// What the entry at `path` (not a folder) is, in words: "a file", "a FIFO (named pipe)",
    /// "a device" or "a socket". Before 2026-12-06 each was "a file" (`--store /dev/null`).
    static func kind(of path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return "not a folder" }
        switch st.st_mode & S_IFMT {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "a file"
        }
    }

    /// The current time in microseconds since the Unix epoch.
    public static let systemClock: @Sendable () -> Int64 = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    public let environment: Environment
    public let configuration: Configuration
    public var registry: SchemaRegistry { configuration.registry }
    let events: Database
    let streams: Database
    let streamHeads: Database
    let eventIDs: Database
    let meta: Database
    /// Projection databases by slot (0 and 1); the active slot is recorded in `meta`.
    let slots: [ProjectionDatabases]
    /// The projection databases this program declares that a store opened read-only lacks
    /// (`p0.rows`...): an older program never made them, and they cannot be made here. Empty
    /// when the store was opened for writing, which creates them.
    public let missingProjectionDatabases: [String]
    /// The projection version this program writes, as stored (see ``currentProjectionVersion``).
    let currentProjectionVersionBytes: [UInt8]

    /// Opens the store in directory `path`, creating it when absent.
    ///
    /// Refuses, changing nothing, a store of a newer format or one holding events whose
    /// (type, version) has no upcaster chain to the current schema.
    public init(path: String, configuration: Configuration = Configuration()) throws(StoreError) {
        self.configuration = configuration
        currentProjectionVersionBytes = EventStore.projectionVersion(of: configuration)
        let env: Environment
        // No data file can be in such a folder: a store's own folder is not asked about its file system.
        if access(path + "/data.mdb", F_OK) != 0, Self.isKernelFolder(path) {
            throw .notAStore(path: path, detail: Self.kernelFolderDetail)
        }
        try Self.checkDataFile(in: path)
        do { env = try Environment(path: path, options: configuration.environment) } catch {
            if error.code == .notADirectory { throw .notAStore(path: path, detail: "it is \(Self.kind(of: path))") }
            if error.code == .invalid || error.code == .versionMismatch {
                // LMDB cannot tell a file of another kind from a store whose header pages are
                // damaged: both are said.
                throw .notAStore(
                    path: path,
                    detail: "its data.mdb is not an LMDB file, or its header is damaged: if it is your store, "
                        + "restore it from a backup")
            }
            throw .storage(error)
        }
        environment = env
        do {
            // Check the format before creating anything, so a newer store is left untouched.
            var existingMeta: Database? = try? env.openDatabase(Names.meta)
            // Creation opens the databases in one transaction and writes the format in the next
            // (stores made before 2026-12-04 opened each in its own), so a creation killed
            // midway, or running now in another process, leaves store databases without a format.
            // Such databases are empty: finish them. Anything else without a format is another
            // program's data (its own `meta` or `events`), never written to: before 2026-12-06 a
            // file holding only such names was taken for a store, and even `verify` wrote into it.
            let formatKey = Array(Names.formatKey.utf8)
            // A store's open reads its format alone; what else the file holds is read only when
            // it has none.
            var format = try existingMeta.flatMap { meta in try env.read { txn in try txn.get(meta, key: formatKey) } }
            var (logIsEmpty, metaIsEmpty, names) = (false, false, [String]())
            // A handle opened before another process created its database is no handle: when the
            // snapshot holds a `meta` or `events` this process found missing, a creation ran in
            // between, and the look is taken again with handles opened now (before 2026-12-07
            // such a store, all its own databases and events already appended, was said to hold
            // "other LMDB data": four processes opening one new store at once, on a loaded
            // machine).
            var looks = 0
            while format == nil {
                looks += 1
                if existingMeta == nil { existingMeta = try? env.openDatabase(Names.meta) }
                let existingEvents = try? env.openDatabase(Names.events)
                let main = try env.mainDatabase()
                let metaHandle = existingMeta
                // The format (again) and the databases in one snapshot: a creating process commits
                // the format before any event, so no format with empty databases is unfinished.
                var stale = false
                (format, logIsEmpty, metaIsEmpty, names, stale) = try env.read { txn in
                    let format = try metaHandle.flatMap { try txn.get($0, key: formatKey) }
                    if let format { return (format, false, false, [], false) }
                    let names = try txn.withCursor(main) { c in
                        var names: [String] = []
                        var entry = try c.first()
                        while let e = entry {
                            names.append(String(decoding: e.key, as: UTF8.self))
                            entry = try c.next()
                        }
                        return names
                    }
                    let stale =
                        (metaHandle == nil && names.contains(Names.meta))
                        || (existingEvents == nil && names.contains(Names.events))
                    return (
                        nil, try existingEvents.map { try txn.count($0) } ?? 0 == 0,
                        try metaHandle.map { try txn.count($0) } ?? 0 == 0, names, stale
                    )
                }
                if !stale || looks >= 100 { break }
            }
            var formatMissing = false
            if let format {
                // A format of the wrong size is damage to the store's header database (the log,
                // not read then, may hold events or none): said to be unreadable, not "lost".
                guard let stored = decodeUInt32(format) else {
                    throw StoreError.storage(
                        LMDBError(
                            code: .corrupted,
                            operation: "open \(path): its format version is unreadable (\(format.count) bytes, not 4)"))
                }
                if stored > EventStore.formatVersion {
                    throw StoreError.newerFormat(found: stored, supported: EventStore.formatVersion)
                }
            } else if !names.allSatisfy(EventStore.isStoreDatabaseName) {
                throw StoreError.notAStore(path: path, detail: "it holds other LMDB data")
            } else if logIsEmpty && metaIsEmpty {
                formatMissing = true
            } else if existingMeta != nil && !logIsEmpty {
                // A store writes its format before any event: a log without one is a damaged
                // store, most often a copy of data.mdb taken while a command wrote to it (whose
                // header database's pages had been reused since), not another program's data.
                throw StoreError.storage(
                    LMDBError(
                        code: .corrupted,
                        operation: "open \(path): its meta database has lost the store's format version, yet its log "
                            + "holds events (a copy of data.mdb taken while it was written?)"))
            } else {
                throw StoreError.notAStore(path: path, detail: "it holds other LMDB data")
            }
            if configuration.environment.readOnly && formatMissing {
                throw StoreError.notAStore(path: path, detail: "it is empty and opened read-only")
            }
            let create: DatabaseFlags = configuration.environment.readOnly ? [] : [.create]
            // Every database in one transaction (one each took an eighth of a command's start).
            let specs = configuration.projections?.databaseSpecs ?? []
            var wanted: [(name: String, flags: DatabaseFlags)] = [
                (Names.meta, create), (Names.events, create), (Names.streams, create), (Names.streamHeads, create),
                (Names.eventIDs, create),
            ]
            wanted.reserveCapacity(wanted.count + 2 * specs.count)
            for slot in 0..<2 {
                for spec in specs { wanted.append(("p\(slot).\(spec.name)", spec.flags.union(create))) }
            }
            let (opened, missing) = try Self.openDatabases(wanted, core: 5, in: env, readOnly: create.isEmpty)
            missingProjectionDatabases = missing
            let meta = opened[0]!
            self.meta = meta
            (events, streams, streamHeads, eventIDs) = (opened[1]!, opened[2]!, opened[3]!, opened[4]!)
            slots = (0..<2).map { slot in
                var byName: [String: Database] = Dictionary(minimumCapacity: specs.count)
                for (i, spec) in specs.enumerated() { byName[spec.name] = opened[5 + slot * specs.count + i] }
                return ProjectionDatabases(slot: slot, byName: byName)
            }
            if formatMissing {
                try env.restartableWrite { txn, _ in
                    try txn.put(meta, key: Array(Names.formatKey.utf8), value: encodeUInt32(EventStore.formatVersion))
                }
            }
        } catch let e as StoreError {
            throw e
        } catch let e as LMDBError {
            throw .storage(e)
        } catch {
            throw .unexpected("\(error)")
        }
        try checkCatalogue()
    }

    /// Opens `wanted`, the first `core` of them the log's. Read-only, a projection database the
    /// store lacks (one an older program never made) cannot be created: it is left out, named in
    /// `missing`, and the log is still read (the notebook refuses the projections then). Before
    /// 2026-12-07 every command on such a store, `export` too, failed with "open database
    /// p0.rows: MDB_NOTFOUND".
    private static func openDatabases(
        _ wanted: [(name: String, flags: DatabaseFlags)], core: Int, in env: Environment, readOnly: Bool
    ) throws(LMDBError) -> (opened: [Database?], missing: [String]) {
        guard readOnly else { return (try env.openDatabases(wanted).map(Optional.some), []) }
        var opened = try env.openDatabases(Array(wanted.prefix(core))).map(Optional.some)
        let projections = Array(wanted.dropFirst(core))
        do {
            return (opened + (try env.openDatabases(projections)).map(Optional.some), [])
        } catch {
            guard error.code == .notFound else { throw error }
        }
        var missing: [String] = []
        for spec in projections {
            do {
                opened.append(try env.openDatabases([spec])[0])
            } catch {
                guard error.code == .notFound else { throw error }
                opened.append(nil)
                missing.append(spec.name)
            }
        }
        return (opened, missing)
    }

    /// Whether `name` is one of the databases a store creates (see ``Names``).
    static func isStoreDatabaseName(_ name: String) -> Bool {
        [Names.meta, Names.events, Names.streams, Names.streamHeads, Names.eventIDs].contains(name)
            || name.hasPrefix("p0.") || name.hasPrefix("p1.")
    }

    /// Rebuilds the projections when the code's projection version differs from the one that
    /// built them (new projections or upcasters). Returns what was done, or nil.
    ///
    /// Processes that open the store at once take turns (see ``withRebuildLock(_:)``): the first
    /// rebuilds, the others wait for it and find the projections current. Before, each started a
    /// rebuild of its own, the last one took it over, and the others' commands failed.
    public func rebuildIfNeeded() throws(StoreError) -> RebuildReport? {
        guard configuration.rebuildIfNeeded, !configuration.environment.readOnly, configuration.projections != nil,
            try projectionsNeedRebuild()
        else { return nil }
        return try withRebuildLock { () throws(StoreError) -> RebuildReport? in
            // Another process may have rebuilt them while this one waited.
            guard try projectionsNeedRebuild() else { return nil }
            return try rebuildProjectionsHoldingLock(reason: "projection version changed")
        }
    }

    enum Names {
        static let meta = "meta"
        static let events = "events"
        static let streams = "streams"
        static let streamHeads = "stream_heads"
        static let eventIDs = "event_ids"
        static let formatKey = "format"
        static let activeSlotKey = "projections.slot"
        static let projectionVersionKey = "projections.version"
        static let rebuildTokenKey = "projections.rebuild-token"
        static let cataloguePrefix = "catalogue:"
        static let upgradeLogPrefix = "upgrade-log:"
    }

    // MARK: Transactions

    /// Runs `body` in a read snapshot. Errors of the storage engine are thrown as
    /// ``StoreError``; the body's own errors are rethrown unchanged.
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        do { return try environment.read(body) } catch let e as LMDBError { throw StoreError.storage(e) }
    }

    /// Runs `body` in one write transaction, lending it a ``WriteSession``: the events it
    /// appends and their projections commit together when it returns, or not at all.
    ///
    /// When the map turns out too small, the transaction is rolled back, the map grows and
    /// `body` runs again from its start with a new session (see ``WriteSession``): it must
    /// read its inputs again from their beginning, take ids from the session and have no effect
    /// outside the transaction. `reserving` grows the map ahead, when the write's size can be
    /// estimated, so that a large write rarely starts over. Errors of the storage engine are
    /// thrown as ``StoreError``; the body's own errors are rethrown unchanged.
    public func write<R>(reserving bytes: Int = 0, _ body: (borrowing WriteSession) throws -> R) throws -> R {
        let ids = IdentifierTape(configuration.ids)
        do {
            if bytes > 0 { try environment.reserve(bytes) }
            return try environment.restartableWrite { txn, attempt in
                ids.rewind()
                let session = WriteSession(
                    transaction: txn.lend(), attempt: attempt, appender: Appender(store: self), ids: ids)
                let result = try body(session)
                try session.appender.finish(in: session.transaction)
                return result
            }
        } catch let e as LMDBError { throw StoreError.storage(e) }
    }

    /// Appends `events` to `stream` in their own transaction.
    @discardableResult
    public func append(_ events: [NewEvent], to stream: String, expecting expected: ExpectedVersion = .any)
        throws(StoreError) -> AppendResult
    {
        do {
            return try write { session in try session.append(events, to: stream, expecting: expected) }
        } catch { throw StoreError.wrap(error) }
    }

    // MARK: Reads

    /// The position of the last event (0 when the log is empty).
    public func headPosition(in txn: borrowing Transaction) throws(StoreError) -> UInt64 {
        do {
            return try txn.withCursor(events) { c in
                guard let e = try c.last() else { return 0 }
                return try decodeKey(e.key)
            }
        } catch { throw StoreError.wrap(error) }
    }

    /// The current version of `stream` (0 when it does not exist).
    public func streamVersion(_ stream: String, in txn: borrowing Transaction) throws(StoreError) -> UInt64 {
        do {
            guard let v = try txn.get(streamHeads, key: Array(stream.utf8)) else { return 0 }
            return try decodeUInt64(v)
        } catch { throw StoreError.wrap(error) }
    }

    /// Calls `body` with each event from `position` onwards (backwards when `reverse`),
    /// until it returns false. Each event's checksum is verified.
    public func forEachEvent(
        from position: UInt64, reverse: Bool = false, in txn: borrowing Transaction,
        _ body: (EventView) throws -> Bool
    ) throws {
        try forEachEnvelope(from: position, reverse: reverse, in: txn) { pos, bytes in
            try body(try Envelope.storedView(bytes, position: pos))
        }
    }

    /// ``forEachEvent(from:reverse:in:_:)`` for a walk that needs only each event's instant,
    /// version and stream: each checksum is verified, the rest of the envelope is not parsed.
    package func forEachEventHeader(
        from position: UInt64, reverse: Bool = false, in txn: borrowing Transaction,
        _ body: (EventHeader) throws -> Bool
    ) throws {
        try forEachEnvelope(from: position, reverse: reverse, in: txn) { pos, bytes in
            try body(try Envelope.storedHeader(bytes, position: pos))
        }
    }

    /// Calls `body` with each stored envelope's position and bytes from `position` onwards
    /// (backwards when `reverse`), until it returns false.
    @inline(__always)
    private func forEachEnvelope(
        from position: UInt64, reverse: Bool, in txn: borrowing Transaction,
        _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let start = keyBytes(position)
        try txn.withCursor(events) { c in
            var entry: Entry?
            if reverse {
                entry = try start.withUnsafeBytes { k in try c.seekAtOrBefore(k) }
            } else {
                entry = try c.seek(start)
            }
            while let e = entry {
                guard try body(try decodeKey(e.key), e.value) else { return }
                entry = reverse ? try c.previous() : try c.next()
            }
        }
    }

    /// Calls `body` with each stored event from `position` through `last`, in log order, its
    /// checksum not yet verified, until it returns false.
    ///
    /// The bytes are valid while `txn` is open. A replay on several cores walks the log once
    /// and hands each event to the scan that folds its stream, which verifies it
    /// (``StoredEvent/view()``): every event must be verified by exactly one of them.
    package func forEachStoredEvent(
        from position: UInt64, through last: UInt64, in txn: borrowing Transaction,
        _ body: (StoredEvent) throws -> Bool
    ) throws {
        guard position <= last else { return }
        let start = keyBytes(position)
        try txn.withCursor(events) { c in
            var entry = try c.seek(start)
            while let e = entry {
                let pos = try decodeKey(e.key)
                if pos > last { return }
                guard try body(StoredEvent(position: pos, bytes: e.value)) else { return }
                entry = try c.next()
            }
        }
    }

    /// The event at `position`, or nil.
    public func event(at position: UInt64, in txn: borrowing Transaction) throws(StoreError) -> RecordedEvent? {
        do {
            let key = keyBytes(position)
            let raw = try key.withUnsafeBytes { k in try txn.get(events, k) }
            guard let raw else { return nil }
            return try Envelope.storedView(raw, position: position).recorded
        } catch { throw StoreError.wrap(error) }
    }

    /// Calls `body` with the events of `stream` whose versions are in `versions`, in order.
    public func forEachEvent(
        inStream stream: String, versions: ClosedRange<UInt64> = 1...UInt64.max, in txn: borrowing Transaction,
        _ body: (EventView) throws -> Bool
    ) throws {
        var prefix = Array(stream.utf8)
        prefix.append(0)
        let start = prefix + keyBytes(versions.lowerBound)
        try txn.withCursor(streams) { c in
            var entry = try c.seek(start)
            while let e = entry, e.key.count == prefix.count + 8, e.key.starts(with: prefix) {
                let version = UInt64(bigEndian: e.key.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self))
                if version > versions.upperBound { return }
                let pos = try decodeUInt64(e.value)
                let posKey = keyBytes(pos)
                let raw = try posKey.withUnsafeBytes { k in try txn.get(events, k) }
                guard let raw else {
                    throw StoreError.damaged(position: pos, detail: "stream index points to a missing event")
                }
                guard try body(try Envelope.storedView(raw, position: pos)) else { return }
                entry = try c.next()
            }
        }
    }

    /// The stored position of the event with `id`, or nil.
    public func position(ofEvent id: Identifier, in txn: borrowing Transaction) throws(StoreError) -> UInt64? {
        do {
            guard let v = try txn.get(eventIDs, key: id.bytes) else { return nil }
            return try decodeUInt64(v)
        } catch { throw StoreError.wrap(error) }
    }

    /// The position of the last event recorded at or before `instant` (0 if none).
    ///
    /// A binary search over the log, which is ordered by recorded-at.
    public func position(atOrBefore instant: Int64, in txn: borrowing Transaction) throws(StoreError) -> UInt64 {
        let head = try headPosition(in: txn)
        var lo: UInt64 = 0
        var hi = head
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2
            guard let at = try recordedAt(position: mid, in: txn) else {
                throw StoreError.damaged(position: mid, detail: "missing event")
            }
            if at <= instant { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The instant the log's last event was recorded at (nil when the log is empty): the next
    /// event is recorded then or later, never earlier, whatever the clock says.
    public func lastRecordedAt(in txn: borrowing Transaction) throws(StoreError) -> Int64? {
        let head = try headPosition(in: txn)
        guard head > 0 else { return nil }
        guard let at = try recordedAt(position: head, in: txn) else {
            throw StoreError.damaged(position: head, detail: "missing event")
        }
        return at
    }

    func recordedAt(position: UInt64, in txn: borrowing Transaction) throws(StoreError) -> Int64? {
        do {
            let key = keyBytes(position)
            let raw = try key.withUnsafeBytes { k in try txn.get(events, k) }
            let at = Envelope.recordedAtOffset
            guard let raw, raw.count >= at + 8 else { return nil }
            return Int64(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
        } catch { throw StoreError.wrap(error) }
    }

    /// Lifts a stored event to current-schema events (one, several, or none if retired).
    public func lift(_ view: EventView) throws(StoreError) -> [LiftedEvent] {
        let type = view.type
        if registry.isCurrent(type, view.schemaVersion) {
            return [
                LiftedEvent(view: view, type: type, schemaVersion: view.schemaVersion, payload: Array(view.payload))
            ]
        }
        do {
            let lifted = try registry.upcast(SchemaKey(type, view.schemaVersion), payload: view.payload)
            // One stream and metadata for all the events one stored event becomes.
            let stream = view.stream
            let metadata = view.metadata
            return lifted.map {
                LiftedEvent(
                    position: view.position, id: view.id, stream: stream, version: view.version,
                    recordedAt: view.recordedAt, metadata: metadata, type: $0.0.type, schemaVersion: $0.0.version,
                    payload: $0.1)
            }
        } catch {
            throw StoreError.damaged(
                position: view.position, detail: "cannot upcast \(type) v\(view.schemaVersion): \(error)")
        }
    }

    // MARK: Catalogue

    /// The (type, schema version) pairs stored, with their counts.
    public func catalogue() throws(StoreError) -> [SchemaKey: UInt64] {
        do { return try read { txn in try catalogue(in: txn) } } catch { throw StoreError.wrap(error) }
    }

    func catalogue(in txn: borrowing Transaction) throws -> [SchemaKey: UInt64] {
        var result: [SchemaKey: UInt64] = [:]
        try forEachCatalogueKey(in: txn) { key, value in
            result[key] = try decodeUInt64(value)
            return true
        }
        return result
    }

    /// Calls `body` with each catalogue entry's (type, version) and count bytes, in key order,
    /// while it returns true.
    private func forEachCatalogueKey(
        in txn: borrowing Transaction, _ body: (SchemaKey, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let prefix = Array(Names.cataloguePrefix.utf8)
        try txn.withCursor(meta) { c in
            var entry = try c.seek(prefix)
            while let e = entry, e.key.starts(with: prefix) {
                let rest = UnsafeRawBufferPointer(rebasing: e.key[prefix.count...])
                guard rest.count > 5, rest[rest.count - 5] == 0,
                    let type = String(validating: rest[0..<(rest.count - 5)], as: UTF8.self)
                else { throw StoreError.damaged(position: nil, detail: "bad catalogue entry") }
                var version: UInt32 = 0
                for b in rest[(rest.count - 4)...] { version = version << 8 | UInt32(b) }
                guard try body(SchemaKey(type, version), e.value) else { return }
                entry = try c.next()
            }
        }
    }

    static func catalogueKey(_ key: SchemaKey) -> [UInt8] {
        var k = Array(Names.cataloguePrefix.utf8)
        k.append(contentsOf: key.type.utf8)
        k.append(0)
        k.append(contentsOf: encodeUInt32(key.version))
        return k
    }

    private func checkCatalogue() throws(StoreError) {
        // An empty registry reads events as raw bytes, as the Appender lets it write them;
        // without this, a store written through the default configuration could not reopen.
        guard !registry.schemas.isEmpty else { return }
        // Every command opens the store: the entries are checked as they are read, and the
        // table of them built only to name those that cannot be read.
        var readable = true
        do {
            try read { txn in
                try forEachCatalogueKey(in: txn) { key, count in
                    _ = try decodeUInt64(count)  // a damaged count refuses the open, as it always did
                    readable = registry.canRead(key)
                    return readable
                }
            }
        } catch { throw StoreError.wrap(error) }
        if readable { return }
        let unreadable = try catalogue().filter { !registry.canRead($0.key) }.sorted { $0.key < $1.key }
        if !unreadable.isEmpty { throw .unreadableEvents(unreadable.map { ($0.key, $0.value) }) }
    }

    // MARK: Metadata

    /// Reads a metadata value.
    public func metadata(_ name: String, in txn: borrowing Transaction) throws(StoreError) -> [UInt8]? {
        do { return try txn.get(meta, key: Array(name.utf8)) } catch { throw StoreError.wrap(error) }
    }

    /// Reads a metadata value stored by ``setMetadata(_:uint64:in:)``, or nil.
    public func metadataUInt64(_ name: String, in txn: borrowing Transaction) throws(StoreError) -> UInt64? {
        try metadata(name, in: txn).map { (b) throws(StoreError) in try decodeUInt64(b) }
    }

    /// Writes a number as a metadata value, 8 big-endian bytes (inside a write transaction).
    public func setMetadata(_ name: String, uint64 value: UInt64, in txn: borrowing Transaction) throws(StoreError) {
        try setMetadata(name, keyBytes(value), in: txn)
    }

    /// Writes a metadata value (inside a write transaction).
    public func setMetadata(_ name: String, _ value: [UInt8], in txn: borrowing Transaction) throws(StoreError) {
        do { try txn.put(meta, key: Array(name.utf8), value: value) } catch { throw StoreError.wrap(error) }
    }

    /// Removes a metadata value (inside a write transaction); nothing when there is none.
    public func removeMetadata(_ name: String, in txn: borrowing Transaction) throws(StoreError) {
        do { _ = try txn.delete(meta, key: Array(name.utf8)) } catch { throw StoreError.wrap(error) }
    }
}

extension StoreError {
    /// Wraps any error of the storage layers as a `StoreError`.
    public static func wrap(_ error: any Error) -> StoreError {
        if let e = error as? StoreError { return e }
        if let e = error as? LMDBError { return .storage(e) }
        if let e = error as? DecodingError { return .damaged(position: nil, detail: e.description) }
        return .unexpected("\(error)")
    }
}

// MARK: Key encodings

@inline(__always)
func keyBytes(_ v: UInt64) -> [UInt8] {
    withUnsafeBytes(of: v.bigEndian) { Array($0) }
}

func encodeUInt32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }

func decodeUInt32(_ b: [UInt8]) -> UInt32? {
    guard b.count == 4 else { return nil }
    return b.reduce(0) { $0 << 8 | UInt32($1) }
}

func decodeUInt64(_ b: [UInt8]) throws(StoreError) -> UInt64 {
    guard b.count == 8 else { throw StoreError.damaged(position: nil, detail: "bad 8-byte value") }
    return b.reduce(0) { $0 << 8 | UInt64($1) }
}

func decodeUInt64(_ b: UnsafeRawBufferPointer) throws(StoreError) -> UInt64 {
    guard b.count == 8 else { throw StoreError.damaged(position: nil, detail: "bad 8-byte value") }
    return UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
}

func decodeKey(_ b: UnsafeRawBufferPointer) throws(StoreError) -> UInt64 {
    guard b.count == 8 else { throw StoreError.damaged(position: nil, detail: "bad event key") }
    return UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
}
