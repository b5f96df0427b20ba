import Basics
import EventStore
import LMDB

extension NotesProjection {
    /// Brings the records of the given notes, categories and tags to what their whole streams
    /// fold to in the log as it is now, in `txn`, and everything that hangs on them: listing
    /// keys, rows, counts, names, links and title holdings, `pinned_ever`, `filed_ever` and the search index.
    /// A stream left empty takes its records away.
    ///
    /// This is how a sync that took its outbox off and rebased it over other devices' events
    /// updates the projections: in the cost of the streams it touched, not of the store. Every
    /// record it writes is the one a rebuild would write (`verify` compares them), so the other
    /// records must be current already: the caller passes every stream whose events changed
    /// since the projections were last written.
    func reproject(
        notes: some Collection<Identifier>, categories: some Collection<Identifier>,
        tags: some Collection<Identifier>, store: EventStore, in txn: borrowing Transaction,
        databases: ProjectionDatabases
    ) throws {
        // Entities first, so that every one a note names has its record when the note's counts
        // move; those their streams no longer hold go after the notes have let go of them.
        let categoryFix = try reprojectEntities(
            categories, table: categoryTable(databases), as: CategoryEvent.self, store: store, in: txn)
        let tagFix = try reprojectEntities(tags, table: tagTable(databases), as: TagEvent.self, store: store, in: txn)

        var changes: [(old: Note?, new: Note)] = []
        var removed: [Note] = []
        let links = linkDatabases(databases)
        var lifted: [LiftedEvent] = []
        for id in notes {
            let old = try note(id, in: txn, databases: databases)
            lifted.removeAll(keepingCapacity: true)
            try store.forEachEvent(inStream: Note.stream(id), in: txn) { view in
                lifted += try store.lift(view)
                return true
            }
            let folded = try fold(id, from: nil, lifted, lifted.indices)
            let new = folded.note
            // The title and alias holdings are written again from the note's whole history.
            try LinkIndex.forget(note: id, in: txn, databases: links)
            if let new {
                try LinkIndex.update(
                    note: id, old: nil, new: new, titles: folded.titles, names: folded.names, in: txn,
                    databases: links)
            }
            if let old, LinkIndex.linksMayDiffer(old, new) {
                let kept = new.map { LinkIndex.keys(of: $0) } ?? []
                for k in LinkIndex.keys(of: old) where !kept.contains(k) {
                    _ = try txn.delete(links.links, key: LinkIndex.linkKey(k, source: id))
                }
            }
            if folded.pinned {
                try txn.put(databases[DB.pinnedEver], key: id.bytes, value: [])
            } else {
                _ = try txn.delete(databases[DB.pinnedEver], key: id.bytes)
            }
            try forgetFilings(of: id, in: txn, databases: databases)
            try storeFilings(folded.filings, in: txn, databases: databases)
            try storeRecords(old: old, new: new, in: txn, databases: databases)
            if let new {
                changes.append((old, new))
            } else if let old {
                removed.append(old)
            }
        }
        try SearchBridge.remove(removed, in: txn, databases: databases, language: searchLanguage)
        try SearchBridge.update(changes: changes, in: txn, databases: databases, language: searchLanguage)

        try categoryFix.finish(
            table: categoryTable(databases), in: txn,
            notesNaming: { id in try notesNaming(scope: .category(id), in: txn, databases: databases) })
        try tagFix.finish(
            table: tagTable(databases), in: txn,
            notesNaming: { id in try notesNaming(scope: .tag(id), in: txn, databases: databases) })
    }

    /// What is left to do for the entities of one kind once the notes are written.
    struct EntityFix {
        /// Entities their streams make that had no record: counted from the notes at the end.
        var created: [Identifier] = []
        /// Entities whose streams are empty now: their records go.
        var gone: [Identifier] = []
        /// Name keys whose owner may have changed.
        var keys: Set<[UInt8]> = []

        func finish<E: CountedEntity>(
            table: EntityTable<E>, in txn: borrowing Transaction, notesNaming: (Identifier) throws -> Int
        ) throws {
            for id in created {
                guard var e = try table.get(id, in: txn) else { continue }
                e.count = try notesNaming(id)
                try txn.put(table.records, key: id.bytes, value: e.encoded())
            }
            for id in gone { _ = try txn.delete(table.records, key: id.bytes) }
            guard !keys.isEmpty else { return }
            let everyone = try table.all(in: txn)
            for key in keys where NameIndex.indexable(key) {
                if let owner = NameIndex.owner(of: key, among: everyone) {
                    try txn.put(table.names, key: key, value: owner.id.bytes)
                } else {
                    _ = try txn.delete(table.names, key: key)
                }
            }
        }
    }

    /// Writes each entity's record as its stream folds now, keeping its count (the notes move it).
    private func reprojectEntities<E: CountedEntity, K>(
        _ ids: some Collection<Identifier>, table: EntityTable<E>, as: NamedEntityEvent<K>.Type, store: EventStore,
        in txn: borrowing Transaction
    ) throws -> EntityFix {
        var fix = EntityFix()
        for id in ids {
            var folded: E?
            try store.forEachEvent(inStream: E.stream(id), in: txn) { view in
                for e in try store.lift(view) {
                    guard let event = try NamedEntityEvent<K>.decode(e) else {
                        throw FoldError.foreignType(e.type, version: e.schemaVersion, in: E.subject(id))
                    }
                    try EntityFold.apply(event, to: &folded, subject: E.subject(id), id: id, at: e.recordedAt)
                }
                return true
            }
            let existing = try table.get(id, in: txn)
            if let existing, !existing.deleted { fix.keys.insert(E.nameKey(existing.name)) }
            if var entity = folded {
                if !entity.deleted { fix.keys.insert(E.nameKey(entity.name)) }
                entity.count = existing?.count ?? 0
                try txn.put(table.records, key: id.bytes, value: entity.encoded())
                if existing == nil { fix.created.append(id) }
            } else if existing != nil {
                fix.gone.append(id)
            }
        }
        return fix
    }

    /// Notes not in the trash that name the category or tag of `scope`.
    func notesNaming(scope: ListQuery.Scope, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> Int
    {
        var count = 0
        for status in [ListQuery.StatusFilter.active, .archived] {
            for group: UInt8 in [0, 1] {
                let prefix = ListIndex.prefix(status: status, scope: scope, sort: .created, pinnedGroup: group)
                try scan(prefix, reverse: false, in: txn, databases: databases) { _ in
                    count += 1
                    return true
                }
            }
        }
        return count
    }
}

extension LinkIndex {
    /// Takes away every title and alias holding of the note, and its list of names held.
    static func forget(note id: Identifier, in txn: borrowing Transaction, databases: LinkDatabases) throws {
        var parts: [[UInt8]] = []
        try txn.withCursor(databases.noteTitles) { c in
            let prefix = id.bytes
            var entry = try c.seek(prefix)
            while let e = entry, e.key.count >= 16, e.key.prefix(16).elementsEqual(prefix) {
                parts.append(Array(e.key.dropFirst(16)))
                entry = try c.next()
            }
        }
        for part in parts {
            let key = part + [0] + id.bytes
            _ = try txn.delete(databases.titles, key: key)
            _ = try txn.delete(databases.aliases, key: key)
            _ = try txn.delete(databases.noteTitles, key: id.bytes + part)
        }
    }
}
