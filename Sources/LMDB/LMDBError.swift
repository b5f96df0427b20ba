internal import CLMDB
import Glibc

/// An error reported by liblmdb or by the wrapper around it.
///
/// The raw C code is kept so callers can match the cases they handle:
///
/// ```swift
/// do { try env.write { txn in try txn.put(db, key: k, value: v, flags: .noOverwrite) } }
/// catch let error where error.code == .keyExists { ... }
/// ```
public struct LMDBError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A liblmdb return code (an `MDB_*` error or an `errno` value).
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The key is already stored. The corresponding C error is `MDB_KEYEXIST`.
        public static let keyExists = Code(rawValue: MDB_KEYEXIST)
        /// The key is not stored. The corresponding C error is `MDB_NOTFOUND`.
        public static let notFound = Code(rawValue: MDB_NOTFOUND)
        /// The file is damaged. The corresponding C error is `MDB_CORRUPTED`.
        public static let corrupted = Code(rawValue: MDB_CORRUPTED)
        /// A page a tree points to is not there: the file is damaged. The C error is
        /// `MDB_PAGE_NOTFOUND`.
        public static let pageNotFound = Code(rawValue: MDB_PAGE_NOTFOUND)
        /// A fatal error; the environment must be closed. The C error is `MDB_PANIC`.
        public static let panic = Code(rawValue: MDB_PANIC)
        /// The library version does not match the file. The C error is `MDB_VERSION_MISMATCH`.
        public static let versionMismatch = Code(rawValue: MDB_VERSION_MISMATCH)
        /// The file is not an LMDB file. The corresponding C error is `MDB_INVALID`.
        public static let invalid = Code(rawValue: MDB_INVALID)
        /// The map is full. The wrapper grows the map and retries before this reaches a caller.
        public static let mapFull = Code(rawValue: MDB_MAP_FULL)
        /// Too many named databases. The corresponding C error is `MDB_DBS_FULL`.
        public static let databasesFull = Code(rawValue: MDB_DBS_FULL)
        /// Every reader slot is taken. The corresponding C error is `MDB_READERS_FULL`.
        public static let readersFull = Code(rawValue: MDB_READERS_FULL)
        /// Another process grew the map. The wrapper adopts the new size and retries.
        public static let mapResized = Code(rawValue: MDB_MAP_RESIZED)
        /// The database was opened with incompatible flags. The C error is `MDB_INCOMPATIBLE`.
        public static let incompatible = Code(rawValue: MDB_INCOMPATIBLE)
        /// A key or value has an invalid size. The corresponding C error is `MDB_BAD_VALSIZE`.
        public static let badValueSize = Code(rawValue: MDB_BAD_VALSIZE)
        /// The transaction is too big. The corresponding C error is `MDB_TXN_FULL`.
        public static let transactionFull = Code(rawValue: MDB_TXN_FULL)
        /// No space left on the device. The corresponding C error is `ENOSPC`.
        public static let noSpace = Code(rawValue: ENOSPC)
        /// Permission denied. The corresponding C error is `EACCES`.
        public static let permissionDenied = Code(rawValue: EACCES)
        /// No such file or directory. The corresponding C error is `ENOENT`.
        public static let noSuchFile = Code(rawValue: ENOENT)
        /// Read-only file system or store. The corresponding C error is `EROFS`.
        public static let readOnlyFileSystem = Code(rawValue: EROFS)
        /// The file size limit was exceeded. The corresponding C error is `EFBIG`.
        public static let fileTooLarge = Code(rawValue: EFBIG)
        /// The disk quota was exceeded. The corresponding C error is `EDQUOT`.
        public static let quotaExceeded = Code(rawValue: EDQUOT)
        /// No memory, or no address space, for the map. The corresponding C error is `ENOMEM`.
        public static let outOfMemory = Code(rawValue: ENOMEM)
    }

    /// The liblmdb or errno code.
    public let code: Code
    /// What the wrapper was doing when the error happened, e.g. `"mdb_env_open"`.
    public let operation: String
    /// The library's own message (`mdb_strerror`).
    public var message: String { String(cString: mdb_strerror(code.rawValue)) }

    public init(code: Code, operation: String) {
        self.code = code
        self.operation = operation
    }

    init(_ rc: Int32, _ operation: String) {
        self.init(code: Code(rawValue: rc), operation: operation)
    }

    /// True when the failure comes from a full disk or a size limit, not from the data.
    public var isOutOfSpace: Bool {
        code == .noSpace || code == .fileTooLarge || code == .quotaExceeded
    }

    public var description: String { "\(operation): \(message)" }
}

/// Lets callers write `catch LMDBError.Code.mapFull` style patterns.
public func ~= (code: LMDBError.Code, error: any Error) -> Bool {
    (error as? LMDBError)?.code == code
}

@inline(__always)
func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
    if rc != MDB_SUCCESS { throw LMDBError(rc, operation()) }
}

/// Checks the result of a write; a full map is also noted in `flag`, so the environment knows
/// the cause of the transaction's failure however the caller reports it.
@inline(__always)
func check(_ rc: Int32, notingMapFullIn flag: UnsafeMutablePointer<Bool>?, _ operation: @autoclosure () -> String)
    throws(LMDBError)
{
    guard rc != MDB_SUCCESS else { return }
    if rc == MDB_MAP_FULL { flag?.pointee = true }
    throw LMDBError(rc, operation())
}

/// `Array.withUnsafeBytes` only rethrows untyped errors; this keeps `LMDBError` typed.
@inline(__always)
func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(LMDBError) -> R) throws(LMDBError) -> R {
    let result: Result<R, LMDBError> = bytes.withUnsafeBytes { p in Result { () throws(LMDBError) in try body(p) } }
    return try result.get()
}
