internal import CLMDB
import Glibc
import Synchronization

/// An open LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// Transactions are closures: ``write(_:)`` commits when the body returns and aborts when
/// it throws, rethrowing the body's error.
///
/// ```swift
/// let env = try Environment(path: "/tmp/store", options: .init())
/// let db = try env.openDatabase("events", flags: [.create])
/// try env.write { txn in try txn.put(db, key: [1], value: [2]) }
/// let v = try env.read { txn in try txn.get(db, key: [1]) }
/// ```
///
/// ## The map, and the one rule of write transactions
///
/// LMDB maps the data file into memory at a fixed size, and a write that needs more room
/// fails with `MDB_MAP_FULL`. The map can only grow while no write transaction is open, so a
/// transaction that filled it must be aborted and run again from its start in a larger map.
/// That is never done behind a caller's back:
///
/// - ``write(_:)`` runs its body exactly once. When the map is full it aborts and throws
///   ``LMDBError/Code/mapFull``; the map is left as it was.
/// - ``restartableWrite(_:)`` says in its name that the body may run again: when the map is
///   full it aborts, grows the map and calls the body again in a new transaction, telling it
///   which attempt this is. Its body must be able to start over: no effect outside the
///   transaction (no output, no files, no threads left behind), and everything it reads from
///   outside must be read again from its beginning (a pipe already consumed cannot be).
/// - ``reserve(_:)`` grows the map ahead of a large write whose size can be estimated, so
///   that it rarely needs to start again.
///
/// `Environment` is `Sendable`: the handle is opened with `MDB_NOTLS`, liblmdb serialises
/// writers itself, and the one operation that needs exclusive access (resizing the map) is
/// guarded by a read-write lock that every transaction holds in shared mode. Do not open a
/// transaction inside another one on the same thread; it would deadlock a resize.
public final class Environment: @unchecked Sendable {
    /// How to open an environment.
    public struct Options: Sendable {
        /// Initial map size in bytes; the map grows on demand.
        public var mapSize: Int = 64 << 20
        /// The map never grows past this many bytes; a write that needs more fails with
        /// ``LMDBError/Code/mapFull``.
        public var maxMapSize: Int = 1 << 40
        /// Maximum number of named databases.
        public var maxDatabases: UInt32 = 64
        /// Maximum number of concurrent reader slots across processes.
        public var maxReaders: UInt32 = 254
        /// Open read-only (no writes, no directory creation).
        public var readOnly = false
        /// Skip fsync at commit. Faster, but a crash can lose the last commits. Tests and
        /// benchmarks of the raw limit only.
        public var noSync = false
        /// Create the directory (mode 0700) when it does not exist.
        public var createDirectory = true
        /// How a write transaction that waits for another process's to end says so (see
        /// ``takeProcessLock(_:waitingFor:notice:)``); nil waits without a word.
        public var waitNotice: WaitNotice?

        public init() {}
    }

    let handle: OpaquePointer
    /// The directory of the environment.
    public let path: String
    public let options: Options
    private let resizeLock: UnsafeMutablePointer<pthread_rwlock_t>
    private let restarts = Atomic<Int>(0)
    /// The error of a map that could not be made (0 while the map is whole): a failed
    /// `mdb_env_set_mapsize` (`ENOMEM` under `ulimit -v`) leaves LMDB with no map, and a
    /// transaction begun then would read freed memory. Every transaction after it fails with it.
    private let lostMap = Atomic<Int32>(0)

    /// Write bodies this environment ran again because the map turned out too small, since it
    /// was opened: what a write that grows the map ahead (``reserve(_:)``) keeps at zero.
    public var restartedWrites: Int { restarts.load(ordering: .relaxed) }
    private let stateLock: UnsafeMutablePointer<pthread_mutex_t>
    /// The map's address range (start, byte count), found once per map and forgotten when it
    /// moves. Its own lock: `stateLock` is held while transactions begin.
    private let mapRangeCache = Mutex<(UInt, Int)?>(nil)
    private var databases: [String: Database] = [:]
    /// The fault plan of tests (``FaultInjection``), or nil.
    let faults: Mutex<FaultCounter?>
    /// How many stale reader slots `mdb_reader_check` cleared when the environment opened.
    public let staleReadersCleared: Int
    /// A descriptor of `lock.mdb` of its own, whose `flock` a write transaction holds (-1 when
    /// read-only, or when it cannot be opened): what another process waiting to write finds
    /// held, and by which pid, where LMDB's mutex says nothing while it waits. LMDB's own locks
    /// on that file are `fcntl` ones, which a `flock` does not touch; they go when the process
    /// closes any descriptor of the file, so this one is closed only after the environment.
    private let writerLock: Int32
    /// Held by the write transaction of this process that holds (or waits for) the `flock` of
    /// ``writerLock``: a `flock` belongs to the open file, not to a thread, so a second thread's
    /// write took it at once while the first held it, and the first let it go under the second
    /// (before 2026-12-06 another process then waited on LMDB's mutex without a word). LMDB's
    /// mutex keeps a process's writers one at a time anyway.
    private let writerGate: UnsafeMutablePointer<pthread_mutex_t>

    /// Opens (and by default creates) the environment in the directory `path`.
    ///
    /// The directory is created with mode 0700 and the files with 0600. Stale reader slots
    /// left by killed processes are cleared. Every failure path closes the handle.
    public init(path: String, options: Options = Options()) throws(LMDBError) {
        self.path = path
        self.options = options
        var st = stat()
        if stat(path, &st) == 0 {
            if (st.st_mode & S_IFMT) != S_IFDIR { throw LMDBError(code: Code.notADirectory, operation: "open \(path)") }
        } else if errno == ENOENT && options.createDirectory && !options.readOnly {
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw LMDBError(errno, "mkdir \(path)") }
        } else {
            throw LMDBError(errno, "stat \(path)")
        }

        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: .invalid, operation: "mdb_env_create") }
        do {
            try check(mdb_env_set_maxdbs(env, options.maxDatabases), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
            // A cap below the initial size is the size: the store must never outgrow its cap.
            try check(mdb_env_set_mapsize(env, min(options.mapSize, options.maxMapSize)), "mdb_env_set_mapsize")
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if options.noSync { flags |= UInt32(MDB_NOSYNC) }
            try Self.checkFileHoldsItsPages(path: path)
            if !options.readOnly { try Self.allocateLockFile(path: path, maxReaders: options.maxReaders) }
            try check(mdb_env_open(env, path, flags, 0o600), "mdb_env_open \(path)")
            var dead: Int32 = 0
            try check(mdb_reader_check(env, &dead), "mdb_reader_check")
            staleReadersCleared = Int(dead)
        } catch {
            mdb_env_close(env)
            throw error
        }
        handle = env
        writerLock = options.readOnly ? -1 : open(path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        faults = Mutex(FaultInjection.counter(for: path))
        resizeLock = .allocate(capacity: 1)
        pthread_rwlock_init(resizeLock, nil)
        stateLock = .allocate(capacity: 1)
        pthread_mutex_init(stateLock, nil)
        writerGate = .allocate(capacity: 1)
        pthread_mutex_init(writerGate, nil)
    }

    /// Refuses a data file shorter than the pages its newest meta page counts (a copy stopped
    /// midway, a file cut by hand: a read of a page past its end would kill the process with
    /// SIGBUS), or counting more pages than any file holds (a damaged header: LMDB would size its
    /// map by it, and fail or trap). Read from the file itself before LMDB opens it, since LMDB
    /// maps the size the header claims; a file it cannot read or does not recognize is left to
    /// LMDB's own checks. A data.mdb that is no regular file (a FIFO, a directory, a device) is
    /// refused as not an LMDB file.
    private static func checkFileHoldsItsPages(path: String) throws(LMDBError) {
        // Opened without waiting: a FIFO of that name would hold the open until a writer came
        // (before 2026-12-06 every command hung there), and no data file is anything but a file.
        let fd = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var kind = stat()
        if fstat(fd, &kind) == 0, (kind.st_mode & S_IFMT) != S_IFREG {
            throw LMDBError(code: .invalid, operation: "open \(path): data.mdb is not a regular file")
        }
        guard var (first, second) = MetaPage.both(fd: fd) else { return }
        // LMDB writes transaction N's meta page at page N % 2: the first holds an even id, the
        // second the odd one next to it (both 0 before the first commit). Any other pair means
        // an id was damaged, and LMDB, which takes the higher, could open the older state and
        // overwrite the newer one at the next commit: a flipped bit would lose the last write
        // for good. (Read again a few times: another process's commit between the two reads
        // could show a pair it never left.)
        var attempts = 0
        while let other = second, !MetaPage.consistent(first.txn, other.txn), attempts < 3 {
            attempts += 1
            usleep(2_000)
            guard let again = MetaPage.both(fd: fd) else { return }
            (first, second) = again
        }
        if let other = second, first.pageSizeIsPlausible, other.pageSizeIsPlausible,
            !MetaPage.consistent(first.txn, other.txn)
        {
            throw LMDBError(
                code: .corrupted,
                operation:
                    "open \(path): data.mdb's two header pages name transactions \(first.txn) and \(other.txn), a pair "
                    + "LMDB never writes (one was damaged, and opening could hide or overwrite the last commit); "
                    + "nothing was opened: keep a copy of the store directory")
        }
        // LMDB takes the meta page of the higher transaction id.
        let newest = second.map { $0.txn > first.txn ? $0 : first } ?? first
        // A page size LMDB cannot have written: LMDB would divide by it (SIGFPE at 0) or loop
        // (512).
        for meta in [first, newest] where !meta.pageSizeIsPlausible {
            throw LMDBError(
                code: .corrupted, operation: "open \(path): data.mdb's header names a page size of \(meta.pageSize)")
        }
        guard newest.last > 1 else { return }
        let (needed, overflow) = (newest.last &+ 1).multipliedReportingOverflow(by: newest.pageSize)
        if overflow || newest.last == .max || needed > UInt64(Int64.max) {
            throw LMDBError(
                code: .corrupted,
                operation: "open \(path): data.mdb's header counts \(newest.last) pages, more than any file holds")
        }
        // The size read after the header: a commit of another process writes its pages before
        // the header that counts them, so a file read in this order always holds them (read
        // before the header, a growing store was refused as cut short).
        var st = stat()
        guard fstat(fd, &st) == 0 else { return }
        if UInt64(st.st_size) < needed {
            throw LMDBError(
                code: .corrupted,
                operation: "open \(path): data.mdb is \(st.st_size) bytes, cut short of the \(needed) its pages take")
        }
    }

    /// Gives `lock.mdb` its disk blocks before LMDB maps it. LMDB sizes a new lock file with
    /// `ftruncate`, which allocates nothing, then writes its header and reader slots through a
    /// shared map: on a full disk the kernel has no page for that write and kills the process
    /// with SIGBUS (before 2026-12-06 a first `add` on a full disk ended so, exit 5, "its data.mdb
    /// may be damaged"). Allocated here first, a full disk is `ENOSPC`, "the disk is full". The
    /// size is LMDB's own for `maxReaders` slots on 64-bit Linux (64 bytes a slot, 192 bytes of
    /// header holding the first slot), so LMDB keeps the file as it finds it; a file already as
    /// large has its holes (a lock file an older version left sparse) filled when there is room.
    private static func allocateLockFile(path: String, maxReaders: UInt32) throws(LMDBError) {
        let fd = open(path + "/lock.mdb", O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o600)
        // A lock file that cannot be opened so is left to LMDB, which names why.
        guard fd >= 0 else { return }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
        let size = max(Int(st.st_size), (Int(max(maxReaders, 1)) - 1) * 64 + 192)
        // fallocate(2), not posix_fallocate: where a file system cannot allocate ahead, glibc's
        // posix_fallocate writes a zero byte into each block it reads as zero, and could so
        // overwrite a reader slot another process just wrote. Such a file system is left to
        // LMDB as before (EOPNOTSUPP).
        let rc = notes_allocate(fd, off_t(size))
        // Only a lack of room for a file LMDB must grow is the error.
        if (rc == ENOSPC || rc == EDQUOT || rc == EFBIG) && Int(st.st_size) < size {
            throw LMDBError(rc, "allocate \(path)/lock.mdb")
        }
    }

    deinit {
        mdb_env_close(handle)
        if writerLock >= 0 { close(writerLock) }
        pthread_rwlock_destroy(resizeLock)
        resizeLock.deallocate()
        pthread_mutex_destroy(stateLock)
        stateLock.deallocate()
        pthread_mutex_destroy(writerGate)
        writerGate.deallocate()
    }

    typealias Code = LMDBError.Code

    // MARK: Databases

    /// Opens a named database once; later calls with the same name return the same handle.
    ///
    /// With `.create`, a missing database is created (in its own write transaction).
    public func openDatabase(_ name: String, flags: DatabaseFlags = []) throws(LMDBError) -> Database {
        try openDatabases([(name, flags)])[0]
    }

    /// Opens named databases once each, as ``openDatabase(_:flags:)`` does, those not yet open in
    /// one transaction: a store opens its few dozen databases at every start. They are first
    /// looked for in a read-only transaction, which never waits for a writer (a write transaction
    /// would wait for the whole of another process's import); only when one with `.create` is
    /// missing are they opened again in a write transaction that creates it. On failure none of
    /// them is opened.
    public func openDatabases(_ specs: [(name: String, flags: DatabaseFlags)]) throws(LMDBError) -> [Database] {
        pthread_mutex_lock(stateLock)
        defer { pthread_mutex_unlock(stateLock) }
        var opened = [Database?](repeating: nil, count: specs.count)
        var mayCreate = false
        for (i, spec) in specs.enumerated() {
            if let db = databases[spec.name] {
                opened[i] = db
            } else if spec.flags.contains(.create) {
                mayCreate = !options.readOnly
            }
        }
        guard opened.contains(where: { $0 == nil }) else { return opened.map { $0! } }
        pthread_rwlock_rdlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        if try !openInOneTransaction(specs, into: &opened, writing: false, missingIsFine: mayCreate) {
            _ = try openInOneTransaction(specs, into: &opened, writing: true, missingIsFine: false)
        }
        databases.reserveCapacity(databases.count + opened.count)
        for db in opened { databases[db!.name] = db }
        return opened.map { $0! }
    }

    /// Opens the databases of `specs` not in `opened` yet in one transaction (a write transaction
    /// when `writing`, which creates those with `.create`), and commits it. Returns false, having
    /// opened none, when one is missing and `missingIsFine`.
    private func openInOneTransaction(
        _ specs: [(name: String, flags: DatabaseFlags)], into opened: inout [Database?], writing: Bool,
        missingIsFine: Bool
    ) throws(LMDBError) -> Bool {
        var txn: OpaquePointer?
        try check(beginHoldingSharedLock(writing ? 0 : UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        var handles = opened
        for (i, spec) in specs.enumerated() where handles[i] == nil {
            var dbi: MDB_dbi = 0
            let flags = writing ? spec.flags : spec.flags.subtracting(.create)
            let rc = mdb_dbi_open(txn, spec.name, flags.rawValue, &dbi)
            if rc != MDB_SUCCESS {
                // Aborting closes the handles this transaction opened.
                mdb_txn_abort(txn)
                if rc == MDB_NOTFOUND && missingIsFine { return false }
                throw LMDBError(rc, "open database \(spec.name)")
            }
            handles[i] = Database(dbi: dbi, name: spec.name, flags: spec.flags)
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
        opened = handles
        return true
    }

    /// LMDB's unnamed main database, which lists the named databases.
    public func mainDatabase() throws(LMDBError) -> Database {
        pthread_rwlock_rdlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        var txn: OpaquePointer?
        try check(beginHoldingSharedLock(UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, nil, 0, &dbi)
        mdb_txn_abort(txn)
        try check(rc, "open main database")
        return Database(dbi: dbi, name: "(main)", flags: [])
    }

    // MARK: Transactions

    /// Runs `body` in a read-only snapshot transaction.
    ///
    /// Buffers returned by reads point into the map and stay valid until `body` returns.
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        pthread_rwlock_rdlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        var txn: OpaquePointer?
        try check(beginHoldingSharedLock(UInt32(MDB_RDONLY), &txn), "mdb_txn_begin (read)")
        guard let txn else { throw LMDBError(code: .invalid, operation: "mdb_txn_begin") }
        defer { mdb_txn_abort(txn) }
        return try body(Transaction(handle: txn, readOnly: true, faults: nil, mapFull: nil))
    }

    /// Runs `body` once in the single write transaction; commits when it returns.
    ///
    /// If the body throws, the transaction is aborted and the body's error rethrown. If the map
    /// is full (a put or the commit fails with `MDB_MAP_FULL`), the transaction is aborted and
    /// ``LMDBError/Code/mapFull`` thrown: the body never runs twice and the map keeps its size.
    /// Use ``restartableWrite(_:)`` for a body that can start over, or ``reserve(_:)`` first.
    public func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try attemptWrite(body)
    }

    /// Runs `body` in the single write transaction, and runs it again from its start, in a new
    /// transaction, each time the map turns out too small.
    ///
    /// `attempt` is 1 on the first run. When a put or the commit fails with `MDB_MAP_FULL`, the
    /// transaction is aborted (nothing of it stays), the map grows (at least doubling, up to
    /// ``Options/maxMapSize``) and `body` is called with the next attempt. At the cap the
    /// error is thrown. So the body must be able to start over: it has no effect outside the
    /// transaction, and whatever it reads from outside it reads again from its beginning.
    ///
    /// ```swift
    /// try env.restartableWrite { txn, attempt in
    ///     for (k, v) in pairs { try txn.put(db, key: k, value: v) }  // `pairs` is an array: re-readable
    /// }
    /// ```
    public func restartableWrite<R>(_ body: (borrowing Transaction, _ attempt: Int) throws -> R) throws -> R {
        var attempt = 1
        while true {
            do {
                return try attemptWrite { txn in try body(txn, attempt) }
            } catch let error as LMDBError where error.code == .mapFull {
                try growMap()
                restarts.add(1, ordering: .relaxed)
                attempt += 1
            }
        }
    }

    /// One write transaction: begins (adopting a map another process grew), runs `body`,
    /// commits. Every failure aborts it. When a put of the transaction found the map full, that
    /// is the error, whatever the body made of it (wrapped it, or went on and failed later).
    private func attemptWrite<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let faults = self.faults.withLock { $0 }
        // Another process's write (a long import, a writer stopped by Ctrl-Z) holds this up:
        // said once it lasts (before 2026-12-06 a writer waited on LMDB's mutex without a word).
        // One thread of this process at a time holds it (see ``writerGate``).
        pthread_mutex_lock(writerGate)
        let locked = writerLock >= 0 && takeProcessLock(writerLock, waitingFor: .writing, notice: options.waitNotice)
        defer {
            if locked { flock(writerLock, LOCK_UN) }
            pthread_mutex_unlock(writerGate)
        }
        while true {
            pthread_rwlock_rdlock(resizeLock)
            var txn: OpaquePointer?
            let lost = lostMap.load(ordering: .acquiring)
            let rc = lost != 0 ? lost : mdb_txn_begin(handle, nil, 0, &txn)
            if rc == MDB_MAP_RESIZED {
                pthread_rwlock_unlock(resizeLock)
                adoptGrownMap()
                continue
            }
            guard rc == MDB_SUCCESS, let txn else {
                pthread_rwlock_unlock(resizeLock)
                throw LMDBError(rc, "mdb_txn_begin (write)")
            }
            // Pages a writer killed midway (SIGKILL, a power loss) wrote past the committed ones.
            cutBackToCommittedPages()
            var mapFull = false
            let outcome: Result<R, any Error> = withUnsafeMutablePointer(to: &mapFull) { flag in
                Result { try body(Transaction(handle: txn, readOnly: false, faults: faults, mapFull: flag)) }
            }
            let result: R
            switch outcome {
            case .success(let r): result = r
            case .failure(var error):
                mdb_txn_abort(txn)
                // A page spilled by a put is written as the commit's are: name a short write's cause
                // before the pages are given back, which frees the disk that caused it.
                if let e = error as? LMDBError, e.code.rawValue == EIO {
                    error = LMDBError(reclassifiedIOError(), e.operation)
                }
                releaseUncommittedPages()
                pthread_rwlock_unlock(resizeLock)
                if mapFull { throw LMDBError(code: .mapFull, operation: "write transaction: \(error)") }
                throw error
            }
            let commit: Int32
            if let injected = faults.failure(.commit) {
                mdb_txn_abort(txn)
                commit = injected
            } else {
                commit = mdb_txn_commit(txn)
            }
            // Named before the pages are given back, which frees the disk that caused it.
            let failure = commit == EIO ? reclassifiedIOError() : commit
            if commit != MDB_SUCCESS { releaseUncommittedPages() }
            pthread_rwlock_unlock(resizeLock)
            try check(failure, "mdb_txn_commit")
            return result
        }
    }

    /// Gives back to the disk the pages a failed write transaction wrote past the committed ones,
    /// in a write transaction of its own (see ``cutBackToCommittedPages()``). The caller holds
    /// `resizeLock` shared and no transaction. Best effort: a failure leaves the file as it was.
    private func releaseUncommittedPages() {
        guard !options.readOnly else { return }
        var fd: Int32 = -1
        var st = stat()
        guard mdb_env_get_fd(handle, &fd) == 0, fstat(fd, &st) == 0, Int(st.st_size) > usedBytes else { return }
        var txn: OpaquePointer?
        guard lostMap.load(ordering: .acquiring) == 0, mdb_txn_begin(handle, nil, 0, &txn) == MDB_SUCCESS,
            let txn
        else { return }
        defer { mdb_txn_abort(txn) }
        cutBackToCommittedPages()
    }

    /// Cuts `data.mdb` back to the pages the committed state uses; the caller holds a write
    /// transaction that has written nothing yet, so no other writer runs meanwhile.
    ///
    /// A transaction writes its pages into the file before it commits (at the commit, and when it
    /// spills dirty pages during a large write), growing the file past the last page the committed
    /// state uses; aborted or killed, it leaves them there. After a large import stopped by a full
    /// disk the file had grown to take every block of it (a 110 KB store became 3 MB on a 3 MiB
    /// disk, in a new user's trial), so that nothing else could be written there and "free some
    /// space and try again" could not be followed. Those pages hold nothing: no meta page names
    /// them (the last page only grows from commit to commit), and no reader's snapshot reaches past
    /// the committed last page. A committed write leaves the file at exactly its pages, so this
    /// costs an `fstat` where there is nothing to cut. Best effort: a failure leaves the file.
    private func cutBackToCommittedPages() {
        var fd: Int32 = -1
        var st = stat()
        guard mdb_env_get_fd(handle, &fd) == 0, fstat(fd, &st) == 0 else { return }
        let used = usedBytes
        if Int(st.st_size) > used { _ = ftruncate(fd, off_t(used)) }
    }

    /// liblmdb reports a short write as `EIO` (mdb_page_flush), and a short write is what a full
    /// disk or the file size limit (`ulimit -f`) produce: name those causes so callers can say
    /// "the disk is full" instead of "Input/output error". A real I/O error keeps `EIO`.
    private func reclassifiedIOError() -> Int32 {
        var limit = rlimit()
        var st = stat()
        if getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
            stat(path + "/data.mdb", &st) == 0, UInt64(st.st_size) &+ 65_536 > UInt64(limit.rlim_cur)
        {
            return EFBIG
        }
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return EIO }
        // Below 1 MiB free (for root, counting the blocks reserved for it) the short write was ENOSPC.
        let free = UInt64(getuid() == 0 ? fs.f_bfree : fs.f_bavail) &* UInt64(fs.f_frsize)
        return free < 1 << 20 ? ENOSPC : EIO
    }

    /// Begins a transaction; the caller holds `resizeLock` shared, and holds it again on return.
    ///
    /// When another process grew the map, every transaction start fails with
    /// `MDB_MAP_RESIZED` until this process adopts the new size, so adopt it and retry.
    private func beginHoldingSharedLock(_ flags: UInt32, _ txn: inout OpaquePointer?) -> Int32 {
        let lost = lostMap.load(ordering: .acquiring)
        if lost != 0 { return lost }
        var rc = mdb_txn_begin(handle, nil, flags, &txn)
        while rc == MDB_MAP_RESIZED {
            pthread_rwlock_unlock(resizeLock)
            adoptGrownMap()
            pthread_rwlock_rdlock(resizeLock)
            let lost = lostMap.load(ordering: .acquiring)
            if lost != 0 { return lost }
            rc = mdb_txn_begin(handle, nil, flags, &txn)
        }
        return rc
    }

    // MARK: Map size

    /// The current map size in bytes.
    public var mapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_mapsize
    }

    /// Bytes of the map in use (last used page + 1, times the page size).
    public var usedBytes: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        var st = MDB_stat()
        mdb_env_stat(handle, &st)
        return (info.me_last_pgno + 1) * Int(st.ms_psize)
    }

    /// Doubles the map (at least 64 MiB more), up to the cap; at the cap, the map is full.
    private func growMap() throws(LMDBError) {
        pthread_rwlock_wrlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        try checkMapIsWhole()
        let current = mapSize
        guard current < options.maxMapSize else {
            throw LMDBError(code: .mapFull, operation: "grow map past its cap of \(options.maxMapSize) bytes")
        }
        try setMapSize(min(options.maxMapSize, max(current * 2, current + (64 << 20))))
    }

    /// Grows the map, when needed, so that `bytes` more than the file uses now fit in it (up
    /// to the cap): a large write whose size can be estimated then runs without starting
    /// over. Call it outside any transaction of this process.
    public func reserve(_ bytes: Int) throws(LMDBError) {
        guard bytes > 0, !options.readOnly else { return }
        pthread_rwlock_wrlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        try checkMapIsWhole()
        let (needed, overflow) = usedBytes.addingReportingOverflow(bytes)
        let wanted = overflow ? options.maxMapSize : min(options.maxMapSize, needed)
        guard wanted > mapSize else { return }
        // Whole MiB: LMDB rounds to pages anyway, and a round size reads better in `stats`.
        try setMapSize(min(options.maxMapSize, (wanted + (1 << 20) - 1) & ~((1 << 20) - 1)))
    }

    /// Throws the error that lost the map, if one did: LMDB's sizes then point into freed memory.
    private func checkMapIsWhole() throws(LMDBError) {
        let lost = lostMap.load(ordering: .acquiring)
        if lost != 0 { throw LMDBError(lost, "map the store") }
    }

    /// Sets the map size; the caller holds the exclusive lock.
    private func setMapSize(_ size: Int) throws(LMDBError) {
        forgetMapRange()
        if let injected = faults.withLock({ $0 }).failure(.growth) {
            throw LMDBError(injected, "mdb_env_set_mapsize")
        }
        let rc = mdb_env_set_mapsize(handle, size)
        if rc != MDB_SUCCESS { lostMap.store(rc, ordering: .releasing) }
        try check(rc, "mdb_env_set_mapsize (\(size >> 20) MiB)")
    }

    /// Another process grew the map: adopt its size (LMDB reads it from the file when 0 is set).
    private func adoptGrownMap() {
        pthread_rwlock_wrlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        forgetMapRange()
        let rc = mdb_env_set_mapsize(handle, 0)
        if rc != MDB_SUCCESS { lostMap.store(rc, ordering: .releasing) }
    }

    // MARK: Resident memory

    /// Drops this process's mapping of the store file's pages. They stay in the kernel's page
    /// cache and come back, unchanged, on the next touch; nothing is written or lost (the map
    /// is a shared file mapping). A scan or rebuild that reads the whole file would otherwise
    /// count every page it touched in its resident memory. Returns the bytes of map released
    /// (0 when the map could not be found).
    @discardableResult
    public func releaseMappedPages() -> Int {
        // Under the shared lock: a map that grows is moved, and the range must stay the map's.
        pthread_rwlock_rdlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        let range = mapRangeCache.withLock { cache in
            if cache == nil { cache = mapRange() }
            return cache
        }
        guard let (start, count) = range, let base = UnsafeMutableRawPointer(bitPattern: start) else { return 0 }
        return madvise(base, count, MADV_DONTNEED) == 0 ? count : 0
    }

    /// Forgets the map's address (the caller holds the exclusive lock and is about to move it).
    private func forgetMapRange() {
        mapRangeCache.withLock { $0 = nil }
    }

    /// The address range of the data file's map, found in `/proc/self/maps` by the file's inode.
    private func mapRange() -> (UInt, Int)? {
        var fd: Int32 = -1
        var st = stat()
        guard mdb_env_get_fd(handle, &fd) == 0, fstat(fd, &st) == 0 else { return nil }
        guard let text = procFile("/proc/self/maps") else { return nil }
        // "start-end perms offset dev inode path"
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, UInt64(String(decoding: fields[4], as: UTF8.self)) == UInt64(st.st_ino),
                fields[5].suffix(9).elementsEqual("/data.mdb".utf8),
                let dash = fields[0].firstIndex(of: UInt8(ascii: "-")),
                let start = UInt(String(decoding: fields[0][..<dash], as: UTF8.self), radix: 16),
                let end = UInt(String(decoding: fields[0][(dash + 1)...], as: UTF8.self), radix: 16), end > start
            else { continue }
            return (start, Int(end - start))
        }
        return nil
    }

    // MARK: Maintenance

    /// Clears reader slots of processes that no longer exist. Returns how many were cleared.
    @discardableResult
    public func clearStaleReaders() throws(LMDBError) -> Int {
        var dead: Int32 = 0
        try check(mdb_reader_check(handle, &dead), "mdb_reader_check")
        return Int(dead)
    }

    /// Flushes the data to disk (useful after `noSync` writes).
    public func sync(force: Bool = true) throws(LMDBError) {
        try check(mdb_env_sync(handle, force ? 1 : 0), "mdb_env_sync")
    }

    /// Copies the environment to the directory `path` (which must exist and be empty).
    public func copy(to path: String, compact: Bool = true) throws(LMDBError) {
        try check(mdb_env_copy2(handle, path, compact ? UInt32(MDB_CP_COMPACT) : 0), "mdb_env_copy2")
    }

    /// The size of the data file on disk, in bytes.
    public var fileSize: Int {
        var st = stat()
        return stat(path + "/data.mdb", &st) == 0 ? Int(st.st_size) : 0
    }
}

extension LMDBError.Code {
    /// The store path exists but is not a directory. The corresponding C error is `ENOTDIR`.
    public static let notADirectory = LMDBError.Code(rawValue: ENOTDIR)
}

/// Gives a long scan's mapped pages back as it goes: counts the bytes read through the map and
/// calls ``Environment/releaseMappedPages()`` every `every` bytes.
public struct MappedPageBudget {
    let environment: Environment
    let every: Int
    private var sinceRelease = 0

    public init(_ environment: Environment, every: Int = 4 << 20) {
        self.environment = environment
        self.every = every
    }

    /// Notes `bytes` more read through the map.
    public mutating func read(_ bytes: Int) {
        sinceRelease &+= bytes
        if sinceRelease >= every {
            environment.releaseMappedPages()
            sinceRelease = 0
        }
    }
}
