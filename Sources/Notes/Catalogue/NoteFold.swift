public import Basics
import EventStore

/// Where the fold writes a note's fields. A note built oldest event first takes every value it
/// is given; one built newest first keeps the first value of each field (the newest) and ignores
/// the older ones. `Text` is how titles and bodies are held (see ``NotePayload``).
protocol NoteFoldTarget {
    associatedtype Text: NoteText
    /// The note begins here (its creation).
    mutating func begin(at instant: Int64)
    mutating func set(title: Text)
    mutating func set(body: Text)
    mutating func set(pinned: Bool)
    mutating func set(category: Identifier?)
    mutating func set(archived: Bool)
    mutating func set(trashed: Bool)
    /// The note is tagged (or no longer) with `tag`.
    mutating func set(tag: Identifier, tagged: Bool)
    /// The note's property `key` is `value` (removed when empty).
    mutating func set(property key: Text, value: Text)
}

/// What a fold folds: a note or a category, by id.
public enum FoldSubject: Sendable, Equatable, CustomStringConvertible {
    case note(Identifier)
    case category(Identifier)
    case tag(Identifier)

    public var description: String {
        switch self {
        case .note(let id): return "note \(id)"
        case .category(let id): return "category \(id)"
        case .tag(let id): return "tag \(id)"
        }
    }
}

/// Why a stream's events cannot be folded: the store cannot hold such a stream (the inline
/// projections refuse the append that would make it), so a replay that meets one reports damage.
public enum FoldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An event (of this type) of something that was never created.
    case notCreated(FoldSubject, type: String)
    /// A second creation of something that exists.
    case createdTwice(FoldSubject)
    /// An event of a type this stream's family does not have (a category event in a note stream).
    case foreignType(String, version: UInt32, in: FoldSubject)

    public var description: String {
        switch self {
        case .notCreated(.note(let id), _): return "note \(id) does not begin with NoteCreated"
        case .notCreated(let subject, let type): return "\(subject): \(type) before its creation"
        case .createdTwice(let subject): return "\(subject) is created twice"
        case .foreignType(let type, let version, .note): return "\(type) v\(version) is not a note event"
        case .foreignType(let type, let version, .category): return "\(type) v\(version) is not a category event"
        case .foreignType(let type, let version, .tag): return "\(type) v\(version) is not a tag event"
        }
    }
}

/// The note fold: the one rule of what each note event does to a note. The inline projection,
/// the replays (forward, split between cores, newest first), time travel, history, diff and
/// blame all fold through it.
enum NoteFold {
    /// What the `kind` event with payload `p` does to the note `t`. Every event also sets the
    /// note's update time and version; the callers do that, as they read them from the envelope.
    @inline(__always)
    static func apply<T: NoteFoldTarget>(
        _ kind: NoteEventKind, _ p: NotePayload<T.Text>, to t: inout T, at instant: Int64
    ) {
        switch kind {
        case .created:
            t.begin(at: instant)
            t.set(title: p.title)
            t.set(body: p.body)
            t.set(pinned: p.pinned)
            t.set(category: p.category)
            t.set(archived: false)
            t.set(trashed: false)
        case .retitled: t.set(title: p.title)
        case .bodyEdited: t.set(body: p.body)
        case .pinned: t.set(pinned: true)
        case .unpinned: t.set(pinned: false)
        case .categorized: t.set(category: p.category)
        case .archived: t.set(archived: true)
        case .unarchived: t.set(archived: false)
        case .trashed: t.set(trashed: true)
        case .untrashed: t.set(trashed: false)
        case .restored:
            t.set(title: p.title)
            t.set(body: p.body)
            t.set(pinned: p.pinned)
            t.set(category: p.category)
            t.set(trashed: false)
        case .tagged: t.set(tag: p.tag, tagged: true)
        case .untagged: t.set(tag: p.tag, tagged: false)
        case .propertySet: t.set(property: p.key, value: p.value)
        case .bodyMerged, .bodyConflicted: t.set(body: p.body)
        }
    }

    /// Folds one event into `note`, oldest first: a creation makes the note (a second creation
    /// is refused), any other event needs the note to exist.
    static func apply(
        _ kind: NoteEventKind, _ p: NotePayload<String>, to note: inout Note?, id: Identifier, at instant: Int64,
        version: UInt64
    ) throws(FoldError) {
        if kind == .created {
            guard note == nil else { throw .createdTwice(.note(id)) }
            var made = Note(id: id, title: "", body: "", createdAt: instant, updatedAt: instant, version: version)
            stamp(kind, p, into: &made, at: instant, version: version)
            note = made
        } else if note == nil {
            throw .notCreated(.note(id), type: kind.layout.name)
        } else {
            stamp(kind, p, into: &note!, at: instant, version: version)
        }
    }

    /// Folds one event into a note that exists (a creation is refused): what
    /// ``apply(_:_:to:id:at:version:)`` does once the note is there, for a caller that holds it
    /// in place.
    static func apply(
        _ kind: NoteEventKind, _ p: NotePayload<String>, toExisting note: inout Note, at instant: Int64,
        version: UInt64
    ) throws(FoldError) {
        guard kind != .created else { throw .createdTwice(.note(note.id)) }
        stamp(kind, p, into: &note, at: instant, version: version)
    }

    /// The event's change, and the update time and version every event sets.
    @inline(__always)
    private static func stamp(
        _ kind: NoteEventKind, _ p: NotePayload<String>, into note: inout Note, at instant: Int64, version: UInt64
    ) {
        apply(kind, p, to: &note, at: instant)
        note.updatedAt = instant
        note.version = version
    }

    /// Folds a typed event (see ``apply(_:_:to:id:at:version:)``).
    static func apply(_ event: NoteEvent, to note: inout Note?, id: Identifier, at instant: Int64, version: UInt64)
        throws(FoldError)
    {
        try apply(event.kind, event.fields, to: &note, id: id, at: instant, version: version)
    }
}

extension Note: NoteFoldTarget {
    mutating func begin(at instant: Int64) { createdAt = instant }
    mutating func set(title: String) { self.title = title }
    mutating func set(body: String) { self.body = body }
    mutating func set(pinned: Bool) { self.pinned = pinned }
    mutating func set(category: Identifier?) { self.category = category }
    mutating func set(archived: Bool) { self.archived = archived }
    mutating func set(trashed: Bool) { self.trashed = trashed }
    mutating func set(tag: Identifier, tagged: Bool) { tags.set(tag, tagged) }
    mutating func set(property key: String, value: String) { properties.set(key, value) }
}

extension Dictionary where Key == String, Value == String {
    /// Sets a property: an empty value removes the key.
    mutating func set(_ key: String, _ value: String) { self[key] = value.isEmpty ? nil : value }
}

extension Array where Element == Identifier {
    /// Adds or removes `id` in this sorted array of distinct ids, keeping it so.
    mutating func set(_ id: Identifier, _ present: Bool) {
        var lo = 0
        var hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if self[mid] < id { lo = mid + 1 } else { hi = mid }
        }
        let found = lo < count && self[lo] == id
        if present && !found { insert(id, at: lo) }
        if !present && found { remove(at: lo) }
    }
}

/// A category or a tag: an entity with a name, created, renamed and deleted by its own stream.
protocol NamedEntity {
    static func created(id: Identifier, name: String, at instant: Int64) -> Self
    var name: String { get set }
    var deleted: Bool { get set }
}

/// The fold of named entities (categories and tags): what each of their events does.
enum EntityFold {
    /// Folds one event into `entity`: a creation makes it (a second is refused); a rename or a
    /// deletion needs it to exist (a deleted entity keeps its record and may be renamed).
    static func apply<E: NamedEntity, Kind>(
        _ event: NamedEntityEvent<Kind>, to entity: inout E?, subject: FoldSubject, id: Identifier, at instant: Int64
    ) throws(FoldError) {
        switch event {
        case .created(let name):
            guard entity == nil else { throw .createdTwice(subject) }
            entity = E.created(id: id, name: name, at: instant)
        case .renamed(let name):
            guard entity != nil else { throw .notCreated(subject, type: event.type) }
            entity!.name = name
        case .deleted, .merged:
            guard entity != nil else { throw .notCreated(subject, type: event.type) }
            entity!.deleted = true
        }
    }
}

extension Category: NamedEntity {
    static func created(id: Identifier, name: String, at instant: Int64) -> Category {
        Category(id: id, name: name, createdAt: instant)
    }
}

extension Tag: NamedEntity {
    static func created(id: Identifier, name: String, at instant: Int64) -> Tag {
        Tag(id: id, name: name, createdAt: instant)
    }
}

/// The entity fold, for categories.
enum CategoryFold {
    static func apply(_ event: CategoryEvent, to category: inout Category?, id: Identifier, at instant: Int64)
        throws(FoldError)
    {
        try EntityFold.apply(event, to: &category, subject: .category(id), id: id, at: instant)
    }
}

/// The entity fold, for tags.
enum TagFold {
    static func apply(_ event: TagEvent, to tag: inout Tag?, id: Identifier, at instant: Int64) throws(FoldError) {
        try EntityFold.apply(event, to: &tag, subject: .tag(id), id: id, at: instant)
    }
}
