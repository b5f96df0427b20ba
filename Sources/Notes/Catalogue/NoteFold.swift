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
}

/// What a fold folds: a note or a category, by id.
public enum FoldSubject: Sendable, Equatable, CustomStringConvertible {
    case note(Identifier)
    case category(Identifier)

    public var description: String {
        switch self {
        case .note(let id): return "note \(id)"
        case .category(let id): return "category \(id)"
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
            note = Note(id: id, title: "", body: "", createdAt: instant, updatedAt: instant, version: version)
        } else if note == nil {
            throw .notCreated(.note(id), type: kind.layout.name)
        }
        apply(kind, p, to: &note!, at: instant)
        note!.updatedAt = instant
        note!.version = version
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
}

/// The category fold: what each category event does to a category.
enum CategoryFold {
    /// Folds one event into `category`: a creation makes it (a second is refused); a rename or
    /// a deletion needs it to exist (a deleted category keeps its record and may be renamed).
    static func apply(
        _ event: CategoryEvent, to category: inout Category?, id: Identifier, at instant: Int64
    ) throws(FoldError) {
        switch event {
        case .created(let name):
            guard category == nil else { throw .createdTwice(.category(id)) }
            category = Category(id: id, name: name, createdAt: instant)
        case .renamed(let name):
            guard category != nil else { throw .notCreated(.category(id), type: event.type) }
            category!.name = name
        case .deleted:
            guard category != nil else { throw .notCreated(.category(id), type: event.type) }
            category!.deleted = true
        }
    }
}
