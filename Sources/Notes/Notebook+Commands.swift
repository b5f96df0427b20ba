public import Basics
package import EventStore
import LMDB

extension Notebook {
    /// Creates a note; `category` and each of `tags` are created when none has that name.
    @discardableResult
    public func add(
        title: String, body: String = "", category: String? = nil, tags: [String] = [], pinned: Bool = false
    ) throws(NotesError) -> Note {
        let title = try Self.validTypedTitle(title)
        let body = try validBody(body)
        let categoryName = try category.map { (c) throws(NotesError) in try Self.validCategoryName(c) }
        let tagNames = try Self.validTagNames(tags)
        let id = newID()
        return try write { session, dbs in
            var command: Identifier?
            let categoryID = try categoryName.map {
                try ensureCategory($0, session: session, dbs: dbs, command: &command)
            }
            var events = [NoteEvent.created(title: title, body: body, pinned: pinned, category: categoryID)]
            var tagIDs: Set<Identifier> = []
            for name in tagNames {
                let t = try ensureTag(name, session: session, dbs: dbs, command: &command)
                if tagIDs.insert(t).inserted { events.append(.tagged(tag: t)) }
            }
            return try append(events, to: id, expecting: .noStream, session: session, dbs: dbs, command: command)
        }
    }

    /// Changes the title and/or body. Unchanged fields append nothing; if nothing changes the
    /// note is returned as it is. `expectedVersion` makes a concurrent change a conflict.
    @discardableResult
    public func edit(_ id: Identifier, title: String? = nil, body: String? = nil, expectedVersion: UInt64? = nil)
        throws(NotesError) -> Note
    {
        let title = try title.map { (t) throws(NotesError) in try Self.validTypedTitle(t) }
        let body = try body.map { (b) throws(NotesError) in try validBody(b) }
        return try change(id, expectedVersion: expectedVersion) { note in
            var events: [NoteEvent] = []
            if let title, !title.isSameBytes(as: note.title) { events.append(.retitled(title: title)) }
            if let body, !body.isSameBytes(as: note.body) {
                events.append(.bodyEdited(body: body))
                events += Self.resolvingConflict(of: note)
            }
            return events
        }
    }

    @discardableResult
    public func pin(_ id: Identifier) throws(NotesError) -> Note {
        try change(id) { $0.pinned ? [] : [.pinned] }
    }

    @discardableResult
    public func unpin(_ id: Identifier) throws(NotesError) -> Note {
        try change(id) { $0.pinned ? [.unpinned] : [] }
    }

    @discardableResult
    public func archive(_ id: Identifier) throws(NotesError) -> Note {
        try change(id) { $0.archived ? [] : [.archived] }
    }

    @discardableResult
    public func unarchive(_ id: Identifier) throws(NotesError) -> Note {
        try change(id) { $0.archived ? [.unarchived] : [] }
    }

    @discardableResult
    public func trash(_ id: Identifier) throws(NotesError) -> Note {
        // Trashed by hand, the note is no longer in the trash for its file being gone: the mark
        // `import-markdown --prune` left (``NoteProperty/sourceGone``) goes, so that the file's
        // return leaves it there (before 2026-12-07 a mark kept past an untrash took it out).
        let gone = NoteProperty.sourceGone.rawValue
        return try change(id) { note in
            note.trashed ? [] : [.trashed] + (note.properties[gone] == nil ? [] : [.propertySet(key: gone, value: "")])
        }
    }

    @discardableResult
    public func untrash(_ id: Identifier) throws(NotesError) -> Note {
        try change(id) { $0.trashed ? [.untrashed] : [] }
    }

    /// Puts the note in the category called `name` (created if needed), or in none.
    @discardableResult
    public func categorize(_ id: Identifier, as name: String?) throws(NotesError) -> Note {
        let name = try name.map { (n) throws(NotesError) in try Self.validCategoryName(n) }
        return try write { session, dbs in
            guard let note = try projection.note(id, in: session.transaction, databases: dbs) else {
                throw Self.missing(id)
            }
            var command: Identifier?
            let categoryID = try name.map { try ensureCategory($0, session: session, dbs: dbs, command: &command) }
            guard categoryID != note.category else { return note }
            return try append(
                [.categorized(category: categoryID)], to: id, expecting: .exact(note.version), session: session,
                dbs: dbs, command: command)
        }
    }

    // MARK: Categories

    @discardableResult
    public func addCategory(_ name: String) throws(NotesError) -> Category {
        let name = try Self.validCategoryName(name)
        return try write { session, dbs in
            if try projection.category(named: name, in: session.transaction, databases: dbs) != nil {
                throw NotesError.validation(.categoryExists(name: name))
            }
            var command: Identifier?
            let id = try ensureCategory(name, session: session, dbs: dbs, command: &command)
            return try projection.category(id, in: session.transaction, databases: dbs)!
        }
    }

    @discardableResult
    public func renameCategory(_ old: String, to new: String) throws(NotesError) -> Category {
        let new = try Self.validCategoryName(new)
        return try write { session, dbs in
            guard let c = try projection.category(named: Self.trim(old), in: session.transaction, databases: dbs) else {
                throw NotesError.notFound(.category(name: old))
            }
            if let other = try projection.category(named: new, in: session.transaction, databases: dbs),
                other.id != c.id
            {
                throw NotesError.validation(.categoryExists(name: other.name))
            }
            if c.name == new { return c }
            try session.append(
                [CategoryEvent.renamed(name: new).newEvent(id: session.newID(), metadata: metadata)], to: c.stream,
                expecting: .streamExists)
            return try projection.category(c.id, in: session.transaction, databases: dbs)!
        }
    }

    /// Deletes a category. Its notes are uncategorized by a `NoteCategorized(null)` event each,
    /// in the same transaction, so every note's stream tells its whole story.
    @discardableResult
    public func deleteCategory(_ name: String) throws(NotesError) -> Int {
        try write { session, dbs in
            guard let c = try projection.category(named: Self.trim(name), in: session.transaction, databases: dbs)
            else {
                throw NotesError.notFound(.category(name: name))
            }
            var members: [Note] = []
            for status in [ListQuery.StatusFilter.all] {
                var q = ListQuery()
                q.status = status
                q.scope = .category(c.id)
                q.sort = .created
                members = try projection.list(q, in: session.transaction, databases: dbs)
            }
            let correlation = session.newID()
            var meta = metadata
            meta.correlationID = correlation
            let deleted = CategoryEvent.deleted.newEvent(id: session.newID(), metadata: meta)
            for n in members {
                var m = meta
                m.causationID = deleted.id
                try session.append(
                    [NoteEvent.categorized(category: nil).newEvent(id: session.newID(), metadata: m)], to: n.stream,
                    expecting: .exact(n.version))
            }
            try session.append([deleted], to: c.stream, expecting: .streamExists)
            return members.count
        }
    }

    // MARK: Helpers

    /// The event that marks the note's sync conflict resolved, when it has one: what an edit of
    /// its body or a restore appends after its own events.
    package static func resolvingConflict(of note: Note) -> [NoteEvent] {
        note.properties[NoteProperty.conflict.rawValue] == nil
            ? [] : [.propertySet(key: NoteProperty.conflict.rawValue, value: "")]
    }

    package static func missing(_ id: Identifier) -> NotesError {
        .notFound(.note(id))
    }

    /// The error for a note whose stream in the log holds no event: not found, unless the
    /// projections hold the note, which only damage makes so (they are written in the
    /// transaction of each append). Before 2026-12-07 a damaged stream index or listing key
    /// made `history`, `show --at` and `restore` say "no note has id ...; try `notes list
    /// --all`", exit 3, of a note `list --all` showed.
    func missingFromLog(_ id: Identifier, in txn: borrowing Transaction) -> NotesError {
        do {
            let dbs = try store.activeProjections(in: txn)
            guard try projection.note(id, in: txn, databases: dbs) != nil else { return Self.missing(id) }
        } catch { return NotesError.wrap(error) }
        return .store(
            .damaged(
                position: nil,
                detail: "note \(shortID(id)) is in the projections, but the log's index holds no event of it"))
    }

    /// Applies the events `decide` returns for the current note, in one transaction.
    func change(_ id: Identifier, expectedVersion: UInt64? = nil, _ decide: (Note) throws -> [NoteEvent])
        throws(NotesError) -> Note
    {
        try write { session, dbs in
            guard let note = try projection.note(id, in: session.transaction, databases: dbs) else {
                throw Self.missing(id)
            }
            if let expectedVersion, expectedVersion != note.version {
                throw NotesError.conflict(id: id, expected: expectedVersion, actual: note.version)
            }
            let events = try decide(note)
            if events.isEmpty { return note }
            return try append(events, to: id, expecting: .exact(note.version), session: session, dbs: dbs)
        }
    }

    /// Appends the note's events and reads the note back. `command`, when set, is the correlation
    /// id of events the command appended before (a category or tag it created): these join them.
    package func append(
        _ events: [NoteEvent], to id: Identifier, expecting: ExpectedVersion, session: borrowing WriteSession,
        dbs: ProjectionDatabases, command: Identifier? = nil
    ) throws -> Note {
        do {
            try appendEvents(events, to: id, expecting: expecting, session: session, command: command)
        } catch StoreError.conflict(_, let expected, let actual) {
            // `expecting` is the projection's version, read in this transaction, which holds
            // the store's writer: no other process can have appended meanwhile. Before
            // 2026-12-07 such damage said "it changed meanwhile; try again", exit 4.
            let projected: String
            switch expected {
            case .exact(let v): projected = "is at version \(v) in the projections"
            default: projected = "is new"
            }
            throw StoreError.damaged(
                position: nil,
                detail: "note \(shortID(id)) \(projected), but its stream is at version \(actual) in the log")
        }
        guard let note = try projection.note(id, in: session.transaction, databases: dbs) else {
            throw Self.missing(id)
        }
        return note
    }

    /// Appends a note's events with the command's metadata (one correlation id for several),
    /// without reading the note back: its projection may be deferred.
    package func appendEvents(
        _ events: [NoteEvent], to id: Identifier, expecting: ExpectedVersion, session: borrowing WriteSession,
        command: Identifier? = nil
    ) throws {
        var meta = metadata
        if let command {
            meta.correlationID = command
        } else if events.count > 1 {
            meta.correlationID = session.newID()
        }
        let stored = events.map { $0.newEvent(id: session.newID(), metadata: meta) }
        try session.append(stored, to: Note.stream(id), expecting: expecting)
    }

    /// The category named `name`, created when none has the name. A creation carries the
    /// command's correlation id `command` (drawn here when it is still nil), so that the command's
    /// other events, given the same, stay with it when a sync cuts the outbox into batches. A new
    /// one gets the id `chosen`, when given (an id drawn earlier from `session`).
    package func ensureCategory(
        _ name: String, id chosen: Identifier? = nil, session: borrowing WriteSession, dbs: ProjectionDatabases,
        command: inout Identifier?
    ) throws -> Identifier {
        if let c = try projection.category(named: name, in: session.transaction, databases: dbs) { return c.id }
        let id = chosen ?? session.newID()
        var meta = metadata
        if command == nil { command = session.newID() }
        meta.correlationID = command
        try session.append(
            [CategoryEvent.created(name: name).newEvent(id: session.newID(), metadata: meta)],
            to: Category.stream(id), expecting: .noStream)
        return id
    }
}
