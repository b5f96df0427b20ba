import Basics
import EventStore
import LMDB

extension EntityKind {
    /// The stream of the entity `id` of this kind.
    func stream(_ id: Identifier) -> String { self == .category ? Category.stream(id) : Tag.stream(id) }
}

/// What became of a category or tag.
enum EntityFate: Equatable {
    case live
    case deleted
    case merged(into: Identifier)
}

/// An event of a category or a tag, whichever kind: what it does, the name it gives (empty for a
/// deletion or a merge), and the entity a merge files its notes under.
struct EntityEvent {
    var change: EntityChange
    var name: String
    var into: Identifier?

    init<K>(_ event: NamedEntityEvent<K>) {
        change = event.change
        name = event.name
        if case .merged(let target) = event { into = target }
    }

    /// `e` decoded as an event of a `kind` stream, or nil for a type it does not hold.
    static func decode(_ e: RecordedEvent, _ kind: EntityKind) throws -> EntityEvent? {
        switch kind {
        case .category:
            return try CategoryEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                .map(EntityEvent.init)
        case .tag:
            return try TagEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                .map(EntityEvent.init)
        }
    }
}

/// What became of categories and tags, each read from its stream once.
struct EntityFates {
    typealias Ending = (id: Identifier, actor: String)
    /// By stream: an import may give a category and a tag one id.
    private var known: [String: (fate: EntityFate, ended: Ending?)] = [:]

    /// What became of `id`, and the event that ended it when it no longer lives.
    mutating func fate(of id: Identifier, kind: EntityKind, in book: Notebook, txn: borrowing Transaction) throws
        -> (fate: EntityFate, ended: Ending?)
    {
        if let found = known[kind.stream(id)] { return found }
        let found = try book.fate(of: id, kind: kind, in: txn)
        known[kind.stream(id)] = found
        return found
    }

    /// Where an assignment of `id` goes now: to itself while it lives, to the one it was merged
    /// into (followed while that one was merged on), nowhere (nil) once one on the way was deleted.
    mutating func heir(of id: Identifier, kind: EntityKind, in book: Notebook, txn: borrowing Transaction) throws
        -> Identifier?
    {
        var id = id
        for _ in 0..<16 {
            switch try fate(of: id, kind: kind, in: book, txn: txn).fate {
            case .live: return id
            case .deleted: return nil
            case .merged(let into): id = into
            }
        }
        return nil
    }

    /// Records what a write of this sync did to the entity of `stream` (nil: read it again).
    mutating func record(_ stream: String, _ fate: (fate: EntityFate, ended: Ending?)?) { known[stream] = fate }
}

extension Notebook {
    /// What became of the category or tag `id`, read from its stream, with the event that ended
    /// it (its id and actor) when it no longer lives.
    func fate(of id: Identifier, kind: EntityKind, in txn: borrowing Transaction) throws -> (
        fate: EntityFate, ended: EntityFates.Ending?
    ) {
        var found = EntityFate.live
        var ended: EntityFates.Ending?
        try store.forEachEvent(inStream: kind.stream(id), in: txn) { view in
            if view.isType("CategoryDeleted") || view.isType("TagDeleted") {
                found = .deleted
            } else if view.isType("CategoryMerged") || view.isType("TagMerged") {
                if let into = try EntityEvent.decode(view.recorded, kind)?.into { found = .merged(into: into) }
            }
            if found != .live { ended = (view.id, view.actor) }
            return found == .live
        }
        return (found, ended)
    }

    /// The event that gave the category or tag `id` its name (its creation or last rename), with
    /// that name, or nil.
    func naming(of id: Identifier, kind: EntityKind, in txn: borrowing Transaction) throws -> (
        id: Identifier, actor: String, name: String
    )? {
        var found: (id: Identifier, actor: String, name: String)?
        try store.forEachEvent(inStream: kind.stream(id), in: txn) { view in
            if let event = try EntityEvent.decode(view.recorded, kind),
                event.change == .created || event.change == .renamed
            {
                found = (view.id, view.actor, event.name)
            }
            return true
        }
        return found
    }

    /// The notes the projections list under the category or tag `id`, whatever their status.
    func notesListed(
        under id: Identifier, kind: EntityKind, in txn: borrowing Transaction, databases dbs: ProjectionDatabases
    ) throws -> Set<Identifier> {
        var found: Set<Identifier> = []
        let scope: ListQuery.Scope = kind == .category ? .category(id) : .tag(id)
        for status in [ListQuery.StatusFilter.active, .archived, .trashed] {
            for group: UInt8 in [0, 1] {
                let prefix = ListIndex.prefix(status: status, scope: scope, sort: .created, pinnedGroup: group)
                try projection.scan(prefix, reverse: false, in: txn, databases: dbs) { n in
                    found.insert(n)
                    return true
                }
            }
        }
        return found
    }
}
