public import LMDB

/// Errors of the event store. Each message names the problem and what to do.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The stream's version is not the expected one.
    case conflict(stream: String, expected: ExpectedVersion, actual: UInt64)
    /// Stored bytes are damaged (checksum or structure).
    case damaged(position: UInt64?, detail: String)
    /// The store was written by a newer program.
    case newerFormat(found: UInt32, supported: UInt32)
    /// Stored events of these (type, version) pairs cannot be read by this program.
    case unreadableEvents([(SchemaKey, UInt64)])
    /// An argument is invalid (e.g. an empty stream name).
    case invalidArgument(String)
    /// The path is not a store (e.g. a file, or a directory of something else).
    case notAStore(path: String, detail: String)
    /// A rebuild of the projections was taken over by another process.
    case rebuildSuperseded
    /// An error of the storage engine.
    case storage(LMDBError)

    public var description: String {
        switch self {
        case .conflict(let stream, let expected, let actual):
            return "\(stream) is at version \(actual), expected \(expected); reload it and try again"
        case .damaged(let position, let detail):
            let at = position.map { " at position \($0)" } ?? ""
            return "the store is damaged\(at) (\(detail)); run `notes verify` to see what is affected"
        case .newerFormat(let found, let supported):
            return
                "the store has format \(found) but this program reads formats up to \(supported); upgrade the program (the store was left untouched)"
        case .unreadableEvents(let pairs):
            let list = pairs.map { "\($0.0) (\($0.1) events)" }.joined(separator: ", ")
            return
                "the store holds events this program cannot read: \(list); upgrade the program (the store was left untouched)"
        case .invalidArgument(let message):
            return message
        case .notAStore(let path, let detail):
            return "\(path) is not a notes store (\(detail)); choose another path with --store"
        case .rebuildSuperseded:
            return "another process took over the rebuild of the projections; run the command again"
        case .storage(let e):
            if e.isOutOfSpace { return "the disk is full (\(e.message)); free some space and try again" }
            switch e.code {
            case .permissionDenied:
                return
                    "permission denied on the store (\(e.operation)); check the owner and mode of the store directory"
            case .readOnlyFileSystem:
                return "the store is on a read-only file system; choose a writable store with --store"
            case .mapFull:
                return "the store reached its size cap (\(e.operation)); raise the cap or free space"
            case .corrupted, .invalid, .panic, .versionMismatch:
                return
                    "the store's database file is damaged or not an LMDB file (\(e.message)); restore it from a backup"
            default:
                return "storage error: \(e)"
            }
        }
    }
}
