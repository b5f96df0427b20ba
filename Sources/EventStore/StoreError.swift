public import Basics
public import LMDB

/// Errors of the event store, each with what went wrong as data. Descriptions name the problem
/// in words of the store; the command line adds what to type next.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The stream's version is not the expected one.
    case conflict(stream: String, expected: ExpectedVersion, actual: UInt64)
    /// Stored bytes are damaged (checksum or structure).
    case damaged(position: UInt64?, detail: String)
    /// A projection record is damaged (the log is not: a rebuild repairs it).
    case damagedProjection(String)
    /// The store was written by a newer program.
    case newerFormat(found: UInt32, supported: UInt32)
    /// Stored events of these (type, version) pairs cannot be read by this program.
    case unreadableEvents([(SchemaKey, UInt64)])
    /// A stream name that is empty, too long or holds a NUL.
    case invalidStreamName(String)
    /// An event type that is empty or too long.
    case invalidEventType(String)
    /// One append holds the same event id twice.
    case duplicateEventID(Identifier)
    /// The operation needs projections and the store has none.
    case noProjections
    /// The path is not a store (e.g. a file, or a directory of something else).
    case notAStore(path: String, detail: String)
    /// The store's data file (`file`, the directory's `data.mdb`) is no file LMDB can hold a
    /// store in: a dangling symbolic link, a FIFO, a directory, a device or a socket (`detail`
    /// says which, and what to do).
    case unusableDataFile(file: String, detail: String)
    /// A rebuild of the projections was taken over by another process.
    case rebuildSuperseded
    /// The projections were rebuilt by another version of the program (`stored`) since this one
    /// (`expected`) opened the store; nothing was written.
    case projectionsChanged(stored: String, expected: String)
    /// The store is opened read-only and lacks projection databases this program reads
    /// (`missing`, such as `p0.rows`): another version built its projections (`stored`, nil when
    /// none is recorded), and they can be neither read nor rebuilt here.
    case projectionsNotBuilt(stored: String?, missing: [String])
    /// The local log and a shared log it synchronizes with disagree at this position.
    case diverged(position: UInt64, detail: String)
    /// An error no layer of the store knows (a bug, if it ever shows).
    case unexpected(String)
    /// An error of the storage engine.
    case storage(LMDBError)

    /// The detail of ``diverged(position:detail:)`` when an event a shared log ordered does not
    /// have the chain digest the shared log holds for it, though the event before it agrees: the
    /// shared log's digest is not that of its own event (its tables were changed by hand).
    public static let chainDigestDiffers = "its chain digest differs from the one the shared log holds"

    public var description: String {
        switch self {
        case .conflict(let stream, let expected, let actual):
            return "\(stream) is at version \(actual), expected \(expected); reload it and try again"
        case .damaged(let position, let detail):
            let at = position.map { " at position \($0)" } ?? ""
            return "the store is damaged\(at) (\(detail))"
        case .damagedProjection(let detail):
            return "the store's projections are damaged (\(detail))"
        case .newerFormat(let found, let supported):
            return
                "the store has format \(found) but this program reads formats up to \(supported); upgrade the program (the store was left untouched)"
        case .unreadableEvents(let pairs):
            let list = pairs.map { "\($0.0) (\($0.1) events)" }.joined(separator: ", ")
            return
                "the store holds events this program cannot read: \(list); upgrade the program (the store was left untouched)"
        case .invalidStreamName(let name): return "invalid stream name \"\(name)\""
        case .invalidEventType(let type): return "invalid event type \"\(type)\""
        case .duplicateEventID(let id): return "event id \(id) appears twice in one append"
        case .noProjections: return "the store has no projections"
        case .notAStore(let path, let detail):
            return "\(path) is not a notes store (\(detail))"
        case .unusableDataFile(let file, let detail):
            return "the store file \(file) is \(detail)"
        case .rebuildSuperseded:
            return "another process took over the rebuild of the projections; run the command again"
        case .projectionsChanged(let stored, let expected):
            return
                "another version of the program rebuilt the store's projections (\(stored), this one writes \(expected)) while this process had it open; nothing was written: run the command again with the program that rebuilt them"
        case .projectionsNotBuilt(let stored, let missing):
            let names =
                missing.count > 3 ? missing.prefix(3).joined(separator: ", ") + "..." : missing.joined(separator: ", ")
            return
                "the store is read-only here and its projections, built by another version of the program (\(stored ?? "none recorded")), lack databases this one reads (\(names)), so they can be neither read nor rebuilt"
        case .diverged(let position, let detail):
            return
                "the store's log differs from the remote log at position \(position) (\(detail)); nothing was merged"
        case .unexpected(let message):
            return "unexpected error: \(message)"
        case .storage(let e):
            if e.isOutOfSpace { return "the disk is full (\(e.message)); free some space and try again" }
            switch e.code {
            case .permissionDenied:
                return
                    "permission denied on the store (\(e.operation)); check the owner and mode of the store directory"
            case .readOnlyFileSystem:
                return "the store is on a read-only file system"
            case .outOfMemory:
                // Before 2026-12-06: "storage error: mdb_env_set_mapsize: Cannot allocate memory", exit 5.
                return
                    "not enough memory to map the store (\(e.operation)): it is mapped whole, and grows; raise the "
                    + "limit on virtual memory (`ulimit -v`) or close other programs, and try again (nothing was written)"
            case .mapFull:
                return "the store reached its size cap (\(e.operation)); raise the cap or free space"
            case .corrupted, .invalid, .panic, .versionMismatch, .pageNotFound:
                // The log's pages may be whole when a projection's are not: export reads the log alone.
                return
                    "the store's database file is damaged or not an LMDB file (\(e.operation): \(e.message)); "
                    + "restore it from a backup; if `notes export --output FILE` can still read its log, "
                    + "import that file into a new store"
            default:
                return "storage error: \(e)"
            }
        }
    }
}
