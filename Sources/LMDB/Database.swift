internal import CLMDB

/// A named database inside an ``Environment``: a handle that stays valid while the
/// environment is open.
public struct Database: Sendable, Hashable {
    let dbi: MDB_dbi
    /// The database's name.
    public let name: String
    /// The flags it was opened with.
    public let flags: DatabaseFlags
}

/// Flags for ``Environment/openDatabase(_:flags:)``.
public struct DatabaseFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Create the database if it does not exist. The corresponding C flag is `MDB_CREATE`.
    public static let create = DatabaseFlags(rawValue: UInt32(MDB_CREATE))
    /// Several sorted values per key. The corresponding C flag is `MDB_DUPSORT`.
    public static let dupSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
    /// With `dupSort`: all values of a key have the same size. C flag `MDB_DUPFIXED`.
    public static let dupFixed = DatabaseFlags(rawValue: UInt32(MDB_DUPFIXED))
}

/// Flags for writes.
public struct PutFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Fail with ``LMDBError/Code/keyExists`` if the key is stored. C flag `MDB_NOOVERWRITE`.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// With `dupSort`: fail if this key/value pair is stored. C flag `MDB_NODUPDATA`.
    public static let noDupData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// The key sorts after every stored key (fast bulk load). C flag `MDB_APPEND`.
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    /// With `dupSort`: the value sorts after the key's stored values. C flag `MDB_APPENDDUP`.
    public static let appendDup = PutFlags(rawValue: UInt32(MDB_APPENDDUP))
    /// Through a cursor: replace the value of the entry under it, whose key must be the one
    /// given (no search of the tree). C flag `MDB_CURRENT`.
    public static let current = PutFlags(rawValue: UInt32(MDB_CURRENT))
}
