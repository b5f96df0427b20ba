public import Basics
import EventStore
import Glibc

/// A note as the fold of its stream: what `show` prints and the projections store.
public struct Note: Sendable, Equatable, Hashable {
    public var id: Identifier
    public var title: String
    /// Kept byte for byte as given: no trimming, no newline added or removed.
    public var body: String
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
    /// Named texts the note carries besides its fields (see ``NoteProperty``); a key is absent
    /// rather than empty.
    public var properties: [String: String]

    public init(
        id: Identifier, title: String, body: String, pinned: Bool = false, category: Identifier? = nil,
        archived: Bool = false, trashed: Bool = false, createdAt: Int64, updatedAt: Int64, version: UInt64,
        tags: [Identifier] = [], properties: [String: String] = [:]
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.pinned = pinned
        self.category = category
        self.archived = archived
        self.trashed = trashed
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.tags = tags
        self.properties = properties
    }

    /// Other names links resolve to the note by (its `aliases` property, one per line).
    public var aliases: [String] { properties[NoteProperty.aliases.rawValue].map(NoteProperty.lines) ?? [] }

    /// The path, relative to the folder, of the Markdown file the note was imported from.
    public var sourcePath: String? { properties[NoteProperty.source.rawValue] }

    /// The folder (an absolute path) ``sourcePath`` is relative to.
    public var sourceFolder: String? { properties[NoteProperty.vault.rawValue] }

    /// Where the note is shown: the three places a listing can look.
    public enum Status: UInt8, Sendable, CaseIterable {
        case active = 0
        case archived = 1
        case trashed = 2
    }

    /// Trash wins over archive: a trashed note is in the trash whether archived or not.
    public var status: Status { trashed ? .trashed : (archived ? .archived : .active) }

    /// The stream that holds the note's events.
    public var stream: String { Note.stream(id) }

    public static func stream(_ id: Identifier) -> String { "note/" + id.uuidString }

    /// Whether its body holds a sync conflict not resolved yet (``NoteProperty/conflict``).
    public var isConflicted: Bool { properties[NoteProperty.conflict.rawValue] != nil }
}

/// The properties the store gives a meaning to. A ``NoteEvent/propertySet(key:value:)`` event
/// sets one; other keys are kept as given.
public enum NoteProperty: String, Sendable, CaseIterable {
    /// Other names of the note, one per line: a link to any of them leads to the note.
    case aliases
    /// The path of the Markdown file the note came from, relative to the imported folder (`/`
    /// between folders): what a second import of the folder matches the file by, and where an
    /// export writes it back.
    case source
    /// The folder (an absolute path) that ``source`` is relative to.
    case vault
    /// The SHA-256 (hex) of the file's bytes when it was last imported: a file unchanged since
    /// leaves its note as the store has it.
    case sourceDigest = "source-digest"
    /// For a note imported from a folder (its ``vault``) and read back from another (an export
    /// of it, edited): the SHA-256 (hex) of the file last read there, a line, then that folder.
    /// A file there unchanged since leaves the note alone, and ``sourceDigest`` stays its own
    /// file's, so neither folder's next import takes the other's edits back.
    case copyDigest = "copy-digest"
    /// The front matter entries of that file the store does not read, as YAML text byte for
    /// byte: what an export writes back.
    case frontMatter = "front-matter"
    /// Set by a sync whose three-way merge of the body met lines both devices changed: which
    /// versions conflict. The body holds both between conflict markers; the next edit of the
    /// body (or a restore) removes the property, and so resolves the conflict.
    case conflict
    /// Set (to `true`) by `import-markdown --prune` as it moves the note to the trash because
    /// its file is gone from its folder; removed by the import that finds the file back, which
    /// takes the note out of the trash (a note trashed otherwise stays there).
    case sourceGone = "source-gone"
    /// The tags that file named when it was last imported, one per line: the id of the tag the
    /// name led to when the file first named it, a space, and the name as the file wrote it
    /// (`none` when it named none, as an empty value would remove the key; a line of an id alone
    /// was recorded before names were). What the next import of the file, edited since, compares
    /// its tags with, by name, so that it changes only the tags the file changed and a tag
    /// added, removed, renamed or deleted in the store since stands. Recorded only when the
    /// note's tags after an import are not the file's, or were recorded before (else the tags at
    /// the import that set ``sourceDigest`` say it).
    case sourceTags = "source-tags"

    /// What the store knows of the files the note was imported from (path, folder and digests):
    /// a fact about that file, not part of any version of the note, so a restore or an
    /// undo leaves it as it is (else the next import of the folder would take the note for a
    /// stranger to its file, or undo the restore).
    public static let fileRecord: Set<String> = [
        source.rawValue, vault.rawValue, sourceDigest.rawValue, copyDigest.rawValue, sourceGone.rawValue,
        sourceTags.rawValue,
    ]

    /// The lines of a list property, without empty ones.
    public static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}

/// A category: a name that notes can carry.
public struct Category: Sendable, Equatable, Hashable {
    public var id: Identifier
    public var name: String
    /// Notes (not trashed) in the category.
    public var count: Int
    public var createdAt: Int64
    public var deleted: Bool

    public init(id: Identifier, name: String, count: Int = 0, createdAt: Int64, deleted: Bool = false) {
        self.id = id
        self.name = name
        self.count = count
        self.createdAt = createdAt
        self.deleted = deleted
    }

    public var stream: String { Category.stream(id) }
    public static func stream(_ id: Identifier) -> String { "category/" + id.uuidString }
}

/// A tag: a name that notes can carry many of. Names nest with `/` (`work/acme` is below
/// `work`).
public struct Tag: Sendable, Equatable, Hashable {
    public var id: Identifier
    public var name: String
    /// Notes (not trashed) tagged with exactly this tag.
    public var count: Int
    public var createdAt: Int64
    public var deleted: Bool

    public init(id: Identifier, name: String, count: Int = 0, createdAt: Int64, deleted: Bool = false) {
        self.id = id
        self.name = name
        self.count = count
        self.createdAt = createdAt
        self.deleted = deleted
    }

    public var stream: String { Tag.stream(id) }
    public static func stream(_ id: Identifier) -> String { "tag/" + id.uuidString }

    /// Whether this tag is `ancestor` or below it (`work/acme` is below `work`), ignoring case.
    public func isWithin(_ ancestor: String) -> Bool { Tag.name(name, isWithin: ancestor) }

    static func name(_ name: String, isWithin ancestor: String) -> Bool {
        let n = name.lowercased()
        let a = ancestor.lowercased()
        return n == a || n.hasPrefix(a + "/")
    }
}

extension Note {
    /// The compact binary form kept in the `notes` projection (format 2: format 1 and the tags;
    /// format 3: then the properties, sorted by key).
    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 48 + title.utf8.count + body.utf8.count + 16 * tags.count)
        w.write(byte: properties.isEmpty ? 2 : 3)
        w.write(identifier: id)
        w.write(string: title)
        w.write(string: body)
        w.write(byte: (pinned ? 1 : 0) | (archived ? 2 : 0) | (trashed ? 4 : 0))
        w.write(optionalIdentifier: category)
        w.write(signed: createdAt)
        w.write(signed: updatedAt)
        w.write(varint: version)
        w.write(varint: UInt64(tags.count))
        for t in tags { w.write(identifier: t) }
        if !properties.isEmpty {
            w.write(varint: UInt64(properties.count))
            for (k, v) in properties.sorted(by: { $0.key < $1.key }) {
                w.write(string: k)
                w.write(string: v)
            }
        }
        return w.bytes
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws(DecodingError) {
        var r = ByteReader(bytes)
        let format = try r.readByte()
        guard (1...3).contains(format) else { throw DecodingError(.badTag(format), at: 0) }
        let id = try r.readIdentifier()
        let title = try r.readString()
        let body = try r.readString()
        let flags = try r.readByte()
        guard flags < 8 else { throw DecodingError(.badTag(flags), at: r.offset - 1) }
        let category = try r.readOptionalIdentifier()
        let createdAt = try r.readSigned()
        let updatedAt = try r.readSigned()
        let version = try r.readVarint()
        var tags: [Identifier] = []
        if format >= 2 {
            let count = try r.readVarint()
            guard count <= UInt64(r.remaining / 16) else { throw DecodingError(.badLength(count), at: r.offset) }
            tags.reserveCapacity(Int(count))
            for _ in 0..<count { tags.append(try r.readIdentifier()) }
        }
        var properties: [String: String] = [:]
        if format == 3 {
            let count = try r.readVarint()
            guard count <= UInt64(r.remaining / 2) else { throw DecodingError(.badLength(count), at: r.offset) }
            for _ in 0..<count {
                let key = try r.readString()
                properties[key] = try r.readString()
            }
        }
        try r.expectEnd()
        self.init(
            id: id, title: title, body: body, pinned: flags & 1 != 0, category: category, archived: flags & 2 != 0,
            trashed: flags & 4 != 0, createdAt: createdAt, updatedAt: updatedAt, version: version, tags: tags,
            properties: properties)
    }
}

extension String {
    /// Whether the two texts are the same bytes. Swift's `==` takes canonically equivalent texts
    /// (`é`, and `e` with U+0301) for one; a note keeps its title and body byte for byte, so a
    /// change from one form to the other is a change (before 2026-12-06 an edit, an import or a
    /// restore of it appended nothing).
    public func isSameBytes(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        // Compared in place where both are stored as UTF-8 (native strings always are): a byte
        // at a time through the generic `elementsEqual` was a quarter of the `history` of a
        // note of 50 KB.
        let compared = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in
                guard let x = a.baseAddress, let y = b.baseAddress else { return true }
                return memcmp(x, y, a.count) == 0
            }
        }
        if let compared, let same = compared { return same }
        return utf8.elementsEqual(other.utf8)
    }
}
