public import Basics
public import EventStore
package import LMDB

/// One stored event of a note with the note as it was after it.
public struct NoteRevision: Sendable, Equatable {
    public var position: UInt64
    /// The stored event's id.
    public var id: Identifier
    public var version: UInt64
    public var recordedAt: Int64
    public var metadata: EventMetadata
    /// The stored type and schema version (legacy events keep theirs).
    public var storedType: String
    public var storedSchemaVersion: UInt32
    /// The current-schema events it lifts to (one, several, or none).
    public var events: [NoteEvent]
    /// The note after this event.
    public var note: Note
}

extension Notebook {
    /// Every stored event of the note with the state after it, oldest first (the fold of the
    /// stream with the same reducer as the projections).
    public func revisions(of id: Identifier, upToVersion last: UInt64 = .max) throws(NotesError) -> [NoteRevision] {
        var out: [NoteRevision] = []
        do {
            try store.read { txn in
                try foldRevisions(of: id, upToVersion: last, in: txn) { rev in
                    out.append(rev)
                    return true
                }
                if out.isEmpty { throw missingFromLog(id, in: txn) }
            }
        } catch { throw NotesError.wrap(error) }
        return out
    }

    /// Folds the note's stream in `txn`, calling `body` with each stored event and the note after
    /// it until `body` returns false. Legacy events are lifted first; an event lifted to several
    /// (NoteUpdated) is one revision, an event lifted to none keeps the note and bumps its version.
    package func foldRevisions(
        of id: Identifier, upToVersion last: UInt64 = .max, in txn: borrowing Transaction,
        _ body: (NoteRevision) throws -> Bool
    ) throws {
        var note: Note?
        try store.forEachEvent(inStream: Note.stream(id), versions: 1...max(1, last), in: txn) { view in
            let lifted = try store.lift(view)
            var events: [NoteEvent] = []
            events.reserveCapacity(lifted.count)
            for e in lifted {
                guard let event = try NoteEvent.decode(e) else {
                    throw StoreError.damaged(
                        position: view.position,
                        detail: FoldError.foreignType(e.type, version: e.schemaVersion, in: .note(id)).description)
                }
                do {
                    try NoteFold.apply(event, to: &note, id: id, at: view.recordedAt, version: view.version)
                } catch let error as FoldError {
                    throw StoreError.damaged(position: view.position, detail: error.description)
                }
                events.append(event)
            }
            // A retired event (lifted to nothing) still bumps the version.
            if lifted.isEmpty, var n = note {
                n.version = view.version
                note = n
            }
            guard let note else { return true }
            return try body(
                NoteRevision(
                    position: view.position, id: view.id, version: view.version, recordedAt: view.recordedAt,
                    metadata: view.metadata, storedType: view.type, storedSchemaVersion: view.schemaVersion,
                    events: events, note: note))
        }
    }

    /// The note as it was after `version`; not found beyond the head (and for version 0).
    public func note(_ id: Identifier, atVersion version: UInt64) throws(NotesError) -> Note {
        try revision(of: id, at: .version(version)).note
    }

    /// The note as it was at `instant`; not found before its creation.
    public func note(_ id: Identifier, atInstant instant: Int64) throws(NotesError) -> Note {
        try revision(of: id, at: .instant(instant)).note
    }

    /// The whole notebook as it was at `instant`, replayed from the log into memory.
    public func state(asOf instant: Int64) throws(NotesError) -> NotebookState {
        let position = try position(atOrBefore: instant)
        do { return try NotebookState.replayNewestFirst(store: store, upTo: position) } catch {
            throw NotesError.wrap(error)
        }
    }

    /// The instant the log's last event was recorded at (nil for an empty log). An imported
    /// event dated ahead of the clock puts it after the clock, and every later event is recorded
    /// at it too (the log's time never goes back).
    public func lastRecordedAt() throws(NotesError) -> Int64? {
        do { return try store.read { txn in try store.lastRecordedAt(in: txn) } } catch {
            throw NotesError.wrap(error)
        }
    }

    /// The log's position at `instant`: that of the last event recorded then or before (0 if none).
    public func position(atOrBefore instant: Int64) throws(NotesError) -> UInt64 {
        do { return try store.read { txn in try store.position(atOrBefore: instant, in: txn) } } catch {
            throw NotesError.wrap(error)
        }
    }
}

extension NotebookState {
    /// A listing over the in-memory state, with the same order as the projection's index.
    public func list(_ query: ListQuery) -> [Note] {
        query.page(of: notes.values.filter(query.accepts))
    }

    /// The live category called `name` at this point (case-insensitive; the projection's rule
    /// when two share it).
    public func category(named name: String) -> Category? {
        NameIndex.owner(of: Category.nameKey(name), among: categories.values)
    }

    /// The live tag called `name` at this point (case-insensitive).
    public func tag(named name: String) -> Tag? {
        NameIndex.owner(of: Tag.nameKey(name), among: tags.values)
    }

    /// The live tags called `name` or below it (`work` finds `work` and `work/acme`).
    public func tags(within name: String) -> [Tag] {
        tags.values.filter { !$0.deleted && $0.isWithin(name) }.sorted { $0.id < $1.id }
    }
}

extension ListQuery {
    /// Whether `note` belongs in this listing (every filter but the limit): the one rule of the
    /// listings folded in memory, whole (``NotebookState/list(_:)``) or walked back from an
    /// instant (``Notebook/list(_:in:)``).
    func accepts(_ n: Note) -> Bool {
        if excluding.contains(n.id) { return false }
        switch status {
        case .active: if n.status != .active { return false }
        case .archived: if n.status != .archived { return false }
        case .trashed: if n.status != .trashed { return false }
        case .all: break
        }
        switch scope {
        case .any: break
        case .uncategorized: if n.category != nil { return false }
        case .category(let c): if n.category != c { return false }
        case .tag(let t): if !n.tags.contains(t) { return false }
        }
        guard tags.allSatisfy({ group in n.tags.contains { group.contains($0) } }) else { return false }
        return !pinnedOnly || n.pinned
    }

    /// The first `limit` of `matching` (notes it accepts) in the listing's order: the
    /// projection index's (pinned first, then the sort key, then the id).
    func page(of matching: [Note]) -> [Note] {
        let keyed = matching.map { n -> ([UInt8], Note) in
            var k: [UInt8] = [n.pinned ? 0 : 1]
            switch sort {
            case .updated: k += ListIndex.descending(n.updatedAt)
            case .created: k += ListIndex.descending(n.createdAt)
            case .title: k += ListIndex.titleKey(n.title)
            }
            k += n.id.bytes
            return (k, n)
        }
        var sorted = keyed.sorted { a, b in
            if a.0[0] != b.0[0] { return a.0[0] < b.0[0] }
            return reverse ? b.0.lexicographicallyPrecedes(a.0) : a.0.lexicographicallyPrecedes(b.0)
        }
        if sorted.count > limit { sorted = Array(sorted.prefix(limit)) }
        return sorted.map(\.1)
    }
}
