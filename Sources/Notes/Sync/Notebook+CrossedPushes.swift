import Basics
import EventStore
import LMDB

/// What a repair of crossed pushes wrote.
struct CrossedPushRepair: Equatable {
    /// Categories and tags merged into the one of the same name created first.
    var namesMerged = 0
    /// Notes taken out of (or moved on from) a category or tag that was deleted or merged.
    var refiled = 0
    /// Whether anything needed repair (also when nothing was written: a check).
    var needed = false
}

extension Notebook {
    /// The command the events of a repair of crossed pushes carry.
    static let repairCommand = "notes sync"

    /// Restores the rules a rebase keeps where two devices' pushes crossed.
    ///
    /// A device that pulled, then pushed what it had rebased on that pull, may have crossed
    /// another device's push made in between: each push holds to the expected versions of its
    /// own streams, so the remote takes both. What a rebase would have prevented can then be in
    /// the shared log: two live categories (or tags) of one name, a note filed under one another
    /// device deleted (delete wins over assign) or merged into another (the note follows the
    /// merge). Whichever device pulls both repairs it, here, after the pull and before its push:
    /// the later-created of the same-named ones is merged into the first (as a rename into a
    /// taken name is), and each such note is filed away. Every event of a repair has an id
    /// derived from the events that crossed (and metadata taken from them), so devices that
    /// repair the same crossing write the same events, which the remote stores once.
    ///
    /// A sync checks the events it pulls in that could have crossed a push (those that
    /// ``mayCross(_:)``) in the write that appends them (``crossings(in:writing:session:dbs:)``),
    /// and marks them there (``markForRepair(from:in:)``) when something needs repair or when
    /// that write cannot check them (its projections written in bulk at the commit), so a sync
    /// killed before its repair leaves the mark for the next. A check of many events (a clone, a
    /// join) reads every category and tag of the store instead of each stream they touched.
    ///
    /// A first pass writes no event: most marks find nothing to repair, and that pass forgets
    /// them. Only when there is something to repair is `mayWrite` asked whether this device may
    /// push: a reader leaves the repair to the writers (their own pulls meet the crossing) and
    /// forgets the mark, so that it never holds events it cannot push.
    func repairCrossedPushes(mayWrite: () throws -> Bool) throws -> CrossedPushRepair {
        let marked = try read { txn, _ in try store.metadataUInt64(SyncKeys.repairFrom, in: txn) }
        guard marked != nil else { return CrossedPushRepair() }
        guard try repairPass(.check).needed else { return CrossedPushRepair() }
        return try repairPass(try mayWrite() ? .repair : .forget)
    }

    /// What a pass of ``repairCrossedPushes(mayWrite:)`` does with the marked events.
    private enum RepairPass {
        /// Finds whether anything needs repair, writing no event; forgets the mark when nothing does.
        case check
        /// Repairs, and forgets the mark.
        case repair
        /// Forgets the mark.
        case forget
    }

    private func repairPass(_ pass: RepairPass) throws -> CrossedPushRepair {
        try write { session, dbs in
            guard let from = try store.metadataUInt64(SyncKeys.repairFrom, in: session.transaction) else {
                return CrossedPushRepair()
            }
            var done = CrossedPushRepair()
            if pass != .forget {
                let confirmed = try syncState(in: session.transaction).confirmed
                let everyEntity = from <= 1 || confirmed &- from >= Self.repairEveryEntityPast
                var marked: [RecordedEvent] = []
                if !everyEntity {
                    try store.forEachEvent(from: from, in: session.transaction) { view in
                        guard view.position <= confirmed else { return false }
                        marked.append(view.recorded)
                        return true
                    }
                }
                done = try crossings(
                    in: everyEntity ? nil : marked, writing: pass == .repair, session: session, dbs: dbs)
                if pass == .check, done.needed { return done }
            }
            try store.removeMetadata(SyncKeys.repairFrom, in: session.transaction)
            return done
        }
    }

    /// Past this many events, a check of crossed pushes reads every category and tag of the
    /// store rather than each stream the events touched.
    static let repairEveryEntityPast: UInt64 = 4096

    /// Finds (and with `writing`, repairs) what crossed pushes broke among the streams `events`
    /// touched, or among every category and tag of the store when `events` is nil; the
    /// projections must be current in this write.
    func crossings(
        in events: [RecordedEvent]?, writing: Bool, session: borrowing WriteSession, dbs: ProjectionDatabases
    ) throws -> CrossedPushRepair {
        var entities: [Identifier: EntityKind] = [:]
        var notes: Set<Identifier> = []
        for e in events ?? [] where Self.mayCross(e) {
            switch StreamRef(e.stream) {
            case .note(let id): notes.insert(id)
            case .category(let id): entities[id] = .category
            case .tag(let id): entities[id] = .tag
            case .other: break
            }
        }
        var repairer = CrossedPushRepairer(
            book: self, entities: entities, notes: notes, everyEntity: events == nil, writes: writing)
        try repairer.run(session: session, dbs: dbs)
        if !repairer.written.isEmpty {
            try keepRepairIDs(try repairIDs(in: session.transaction).union(repairer.written), in: session.transaction)
        }
        return repairer.done
    }

    /// The ids of this device's repair events still in its outbox (a rebase treats them as
    /// repairs, to be done again or dropped, never as a user's intent). Kept in the store, not
    /// read from the events: an imported history may carry any metadata.
    func repairIDs(in txn: borrowing Transaction) throws -> Set<Identifier> {
        guard let bytes = try store.metadata(SyncKeys.repairIDs, in: txn) else { return [] }
        var ids: Set<Identifier> = []
        var i = 0
        while i + 16 <= bytes.count {
            if let id = Identifier(bytes: bytes[i..<(i + 16)]) { ids.insert(id) }
            i += 16
        }
        return ids
    }

    /// Records `ids` as repair events, keeping only those still in the outbox (after the
    /// confirmed position).
    func keepRepairIDs(_ ids: Set<Identifier>, in txn: borrowing Transaction) throws {
        let confirmed = try syncState(in: txn).confirmed
        var bytes: [UInt8] = []
        for id in ids.sorted() {
            guard let at = try store.position(ofEvent: id, in: txn), at > confirmed else { continue }
            bytes += id.bytes
        }
        if bytes.isEmpty {
            try store.removeMetadata(SyncKeys.repairIDs, in: txn)
        } else {
            try store.setMetadata(SyncKeys.repairIDs, bytes, in: txn)
        }
    }

    /// Forgets the repair ids no longer in the outbox (confirmed, or dropped by a rebase).
    func pruneRepairIDs(in txn: borrowing Transaction) throws {
        let ids = try repairIDs(in: txn)
        if !ids.isEmpty { try keepRepairIDs(ids, in: txn) }
    }

    /// Marks the confirmed events from `position` on for ``repairCrossedPushes(mayWrite:)`` (an earlier
    /// mark stays).
    func markForRepair(from position: UInt64, in txn: borrowing Transaction) throws {
        if let marked = try store.metadataUInt64(SyncKeys.repairFrom, in: txn), marked <= position { return }
        try store.setMetadata(SyncKeys.repairFrom, uint64: position, in: txn)
    }

    /// Whether `e` could break a rule when it crossed another device's push: an event of a
    /// category or tag, or one filing a note under one (an event that cannot be read as one of
    /// today's counts as one).
    static func mayCross(_ e: RecordedEvent) -> Bool {
        switch StreamRef(e.stream) {
        case .category, .tag: return true
        case .other: return false
        case .note:
            // Only a creation, a filing or a restore can file a note under one; the events of
            // other kinds (edits, which carry bodies) are not decoded.
            switch NoteEventKind.matcher.kind(e.type, version: e.schemaVersion) {
            case nil, .created?, .categorized?, .restored?: break
            case .tagged?: return true
            default: return false
            }
            guard let event = try? NoteEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
            else { return true }
            switch event {
            case .created(_, _, _, let category), .categorized(let category),
                .restored(_, _, _, _, let category):
                return category != nil
            default: return false
            }
        }
    }
}

/// One repair of crossed pushes, inside its write; see ``Notebook/repairCrossedPushes(mayWrite:)``.
private struct CrossedPushRepairer {
    let book: Notebook
    /// The categories and tags the pulled events touched.
    let entities: [Identifier: EntityKind]
    /// The notes to check: those the pulled events touched, then those listed under an entity
    /// that no longer lives.
    var notes: Set<Identifier>
    let everyEntity: Bool
    /// False: finds what needs repair without writing it.
    let writes: Bool
    var done = CrossedPushRepair()
    /// The ids of the events written.
    var written: Set<Identifier> = []
    /// What became of the categories and tags read so far.
    private var fates = EntityFates()

    init(
        book: Notebook, entities: [Identifier: EntityKind], notes: Set<Identifier>, everyEntity: Bool, writes: Bool
    ) {
        self.book = book
        self.entities = entities
        self.notes = notes
        self.everyEntity = everyEntity
        self.writes = writes
    }

    mutating func run(session: borrowing WriteSession, dbs: ProjectionDatabases) throws {
        try mergeSameNames(book.projection.categoryTable(dbs), kind: .category, session: session, dbs: dbs)
        try mergeSameNames(book.projection.tagTable(dbs), kind: .tag, session: session, dbs: dbs)
        // The notes still listed under a touched category or tag that no longer lives.
        var dead: [(Identifier, EntityKind)] = []
        if everyEntity {
            dead += try book.projection.categoryTable(dbs).all(in: session.transaction).filter(\.deleted).map {
                ($0.id, .category)
            }
            dead += try book.projection.tagTable(dbs).all(in: session.transaction).filter(\.deleted).map {
                ($0.id, .tag)
            }
        } else {
            dead = entities.map { ($0.key, $0.value) }
        }
        for (id, kind) in dead
        where try fates.fate(of: id, kind: kind, in: book, txn: session.transaction).fate != .live {
            notes.formUnion(try book.notesListed(under: id, kind: kind, in: session.transaction, databases: dbs))
        }
        for n in notes.sorted() { try fileAway(n, session: session, dbs: dbs) }
    }

    /// Merges each live entity that shares its name with another into the one the name finds
    /// (the first created), when the group holds one the pulled events touched.
    private mutating func mergeSameNames<E: CountedEntity>(
        _ table: EntityTable<E>, kind: EntityKind, session: borrowing WriteSession, dbs: ProjectionDatabases
    ) throws {
        guard everyEntity || entities.values.contains(kind) else { return }
        var groups: [[UInt8]: [E]] = [:]
        for e in try table.all(in: session.transaction) where !e.deleted {
            groups[E.nameKey(e.name), default: []].append(e)
        }
        for (key, group) in groups.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) where group.count > 1 {
            guard everyEntity || group.contains(where: { entities[$0.id] == kind }),
                let owner = NameIndex.owner(of: key, among: group)
            else { continue }
            for loser in group.sorted(by: { $0.id < $1.id }) where loser.id != owner.id {
                try merge(loser.id, into: owner.id, kind: kind, session: session, dbs: dbs)
            }
        }
    }

    /// Ends `id` with a merge into `into` and files its notes under `into`.
    private mutating func merge(
        _ id: Identifier, into: Identifier, kind: EntityKind, session: borrowing WriteSession,
        dbs: ProjectionDatabases
    ) throws {
        // The event that gave the merged one its name: the events of the repair derive from it.
        guard let cause = try book.naming(of: id, kind: kind, in: session.transaction) else { return }
        done.needed = true
        guard writes else { return }
        let mergeID = Rebase.derivedID(cause.id, role: "same name as \(into.uuidString)")
        let meta = EventMetadata(
            actor: cause.actor, command: Notebook.repairCommand, causationID: cause.id, correlationID: mergeID)
        // The end first: a rebase of these events (their push refused) meets the merge before
        // the notes it moves, and so moves them on to the one it was merged into.
        let end: NewEvent =
            kind == .category
            ? CategoryEvent.merged(into: into).newEvent(id: mergeID, metadata: meta)
            : TagEvent.merged(into: into).newEvent(id: mergeID, metadata: meta)
        try session.append([end], to: kind.stream(id), expecting: .any)
        written.insert(mergeID)
        fates.record(kind.stream(id), (.merged(into: into), (mergeID, cause.actor)))
        for n in try book.notesListed(under: id, kind: kind, in: session.transaction, databases: dbs).sorted() {
            try refile(n, from: id, to: into, kind: kind, metadata: meta, session: session, dbs: dbs) { role in
                Rebase.derivedID(mergeID, role: "merge \(n.uuidString) \(role)")
            }
        }
        done.namesMerged += 1
    }

    /// Files the note `n` away from each category and tag it is under that no longer lives.
    private mutating func fileAway(_ n: Identifier, session: borrowing WriteSession, dbs: ProjectionDatabases) throws {
        guard let note = try book.projection.note(n, in: session.transaction, databases: dbs) else { return }
        var dead: [(Identifier, EntityKind)] = []
        let filed = (note.category.map { [($0, EntityKind.category)] } ?? []) + note.tags.sorted().map { ($0, .tag) }
        for (id, kind) in filed
        where try fates.fate(of: id, kind: kind, in: book, txn: session.transaction).fate != .live {
            dead.append((id, kind))
        }
        guard !dead.isEmpty else { return }
        done.needed = true
        guard writes else { return }
        // The events that filed the note under each: the repair's ids derive from them.
        var filedBy: [Identifier: Identifier] = [:]
        var before: Note?
        try book.foldRevisions(of: n, in: session.transaction) { rev in
            for (id, kind) in dead {
                let had = kind == .category ? before?.category == id : before?.tags.contains(id) ?? false
                let has = kind == .category ? rev.note.category == id : rev.note.tags.contains(id)
                if has && !had { filedBy[id] = rev.id }
            }
            before = rev.note
            return true
        }
        for (id, kind) in dead {
            guard let filer = filedBy[id],
                let ended = try fates.fate(of: id, kind: kind, in: book, txn: session.transaction).ended
            else { continue }
            let target = try fates.heir(of: id, kind: kind, in: book, txn: session.transaction)
            let meta = EventMetadata(actor: ended.actor, command: Notebook.repairCommand, causationID: ended.id)
            try refile(n, from: id, to: target, kind: kind, metadata: meta, session: session, dbs: dbs) { role in
                Rebase.derivedID(filer, role: "after \(ended.id.uuidString) \(role)")
            }
        }
    }

    /// Moves the note `n` from `id` to `target` (none for a deleted one): a category replaced,
    /// a tag added and the old one taken off. `eventID` gives each event's id from what it does
    /// (not from its place: two devices seeing the note with and without `target` agree on the
    /// ids of the events they both write).
    private mutating func refile(
        _ n: Identifier, from id: Identifier, to target: Identifier?, kind: EntityKind, metadata: EventMetadata,
        session: borrowing WriteSession, dbs: ProjectionDatabases, eventID: (String) -> Identifier
    ) throws {
        guard let note = try book.projection.note(n, in: session.transaction, databases: dbs) else { return }
        var events: [(role: String, event: NoteEvent)] = []
        switch kind {
        case .category where note.category == id:
            events = [("categorize \(target?.uuidString ?? "none")", .categorized(category: target))]
        case .tag where note.tags.contains(id):
            if let target, !note.tags.contains(target) {
                events.append(("tag \(target.uuidString)", .tagged(tag: target)))
            }
            events.append(("untag \(id.uuidString)", .untagged(tag: id)))
        default:
            return
        }
        var meta = metadata
        if events.count > 1, meta.correlationID == nil { meta.correlationID = eventID(events[0].role) }
        let stored = events.map { $0.event.newEvent(id: eventID($0.role), metadata: meta) }
        let result = try session.append(stored, to: Note.stream(n), expecting: .any)
        written.formUnion(stored.map(\.id))
        if result.appended > 0 { done.refiled += 1 }
    }
}
