public import Basics
import EventStore

/// What a listing shows of a note: everything but its body and properties. The `rows`
/// projection keeps one per note, so a page of a listing reads a few dozen bytes a note and
/// never decodes a body it will not print.
public struct NoteRow: Sendable, Equatable, Hashable {
    public var id: Identifier
    public var title: String
    public var pinned: Bool
    /// The category's id, or nil when uncategorized.
    public var category: Identifier?
    public var archived: Bool
    public var trashed: Bool
    /// Microseconds since the Unix epoch (UTC).
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The number of stored events in the note's stream.
    public var version: UInt64
    /// The note's tags, by id (sorted, each once).
    public var tags: [Identifier]

    public init(
        id: Identifier, title: String, pinned: Bool = false, category: Identifier? = nil, archived: Bool = false,
        trashed: Bool = false, createdAt: Int64, updatedAt: Int64, version: UInt64, tags: [Identifier] = []
    ) {
        self.id = id
        self.title = title
        self.pinned = pinned
        self.category = category
        self.archived = archived
        self.trashed = trashed
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.tags = tags
    }

    /// The row of a note.
    public init(_ note: Note) {
        self.init(
            id: note.id, title: note.title, pinned: note.pinned, category: note.category, archived: note.archived,
            trashed: note.trashed, createdAt: note.createdAt, updatedAt: note.updatedAt, version: note.version,
            tags: note.tags)
    }
}

extension NoteRow {
    /// The compact binary form kept in the `rows` projection (format 2): a format byte, a flags
    /// byte (pinned 1, archived 2, trashed 4, categorized 8), the category id when there is one,
    /// the creation and update instants and the version as 8 bytes each (a listing decodes 50
    /// rows a page: fixed widths cost less to read than varints of 8 bytes), the tags, the title.
    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 32 + title.utf8.count + 16 * tags.count)
        w.write(byte: Self.format)
        w.write(byte: (pinned ? 1 : 0) | (archived ? 2 : 0) | (trashed ? 4 : 0) | (category == nil ? 0 : 8))
        if let category { w.write(identifier: category) }
        w.write(bigEndian: UInt64(bitPattern: createdAt))
        w.write(bigEndian: UInt64(bitPattern: updatedAt))
        w.write(bigEndian: version)
        w.write(varint: UInt64(tags.count))
        for t in tags { w.write(identifier: t) }
        w.write(string: title)
        return w.bytes
    }

    /// The format of the rows ``encoded()`` writes (the projection version changes with it).
    static let format: UInt8 = 2

    /// Decodes a row stored under `id` (the id is the key, not repeated in the value).
    init(id: Identifier, decoding bytes: UnsafeRawBufferPointer) throws(DecodingError) {
        var r = ByteReader(bytes)
        let format = try r.readByte()
        guard format == Self.format else { throw DecodingError(.badTag(format), at: 0) }
        let flags = try r.readByte()
        guard flags < 16 else { throw DecodingError(.badTag(flags), at: r.offset - 1) }
        let category = flags & 8 != 0 ? try r.readIdentifier() : nil
        let createdAt = Int64(bitPattern: try r.readUInt64())
        let updatedAt = Int64(bitPattern: try r.readUInt64())
        let version = try r.readUInt64()
        let count = try r.readVarint()
        guard count <= UInt64(r.remaining / 16) else { throw DecodingError(.badLength(count), at: r.offset) }
        var tags: [Identifier] = []
        if count > 0 {
            tags.reserveCapacity(Int(count))
            for _ in 0..<count { tags.append(try r.readIdentifier()) }
        }
        let title = try r.readString()
        try r.expectEnd()
        self.init(
            id: id, title: title, pinned: flags & 1 != 0, category: category, archived: flags & 2 != 0,
            trashed: flags & 4 != 0, createdAt: createdAt, updatedAt: updatedAt, version: version, tags: tags)
    }
}

/// What a listing filters on, in a whole note or in its row.
protocol ListedNote {
    var id: Identifier { get }
    var category: Identifier? { get }
    var tags: [Identifier] { get }
}

extension Note: ListedNote {}
extension NoteRow: ListedNote {}
