import Basics
import EventStore
import LMDB

/// The notebook as it was at one position of the log, read as a query needs it: its categories
/// and tags are folded (their streams are short), its notes are read by the query.
public struct PastNotebook: Sendable {
    /// The last position at or before the instant asked for (0 before the first event).
    public let position: UInt64
    /// The categories and tags as they were, and no notes: what names a past listing's
    /// `--category` and `--tag` and labels its rows.
    public let names: NotebookState
}

extension Notebook {
    /// The notebook as it was at `instant`: its position and its categories and tags.
    ///
    /// Every category and tag that existed then still has its record in the projection (a
    /// deleted one keeps it), so each is folded from its own stream up to the position, by the
    /// same fold as a replay's; one created later has no event by then and is left out.
    public func past(asOf instant: Int64) throws(NotesError) -> PastNotebook {
        try read { txn, dbs in
            let position = try store.position(atOrBefore: instant, in: txn)
            var names = NotebookState()
            if position > 0 {
                let streams =
                    try projection.categoryTable(dbs).all(in: txn).map { Category.stream($0.id) }
                    + projection.tagTable(dbs).all(in: txn).map { Tag.stream($0.id) }
                for stream in streams {
                    try store.forEachEvent(inStream: stream, in: txn) { view in
                        guard view.position <= position else { return false }
                        try names.apply(view, store: store)
                        return true
                    }
                }
            }
            names.events = 0
            return PastNotebook(position: position, names: names)
        }
    }

    /// The listing `query` as it was at `past`'s position.
    ///
    /// In the default order (pinned first, then by update, newest first) the log is walked back
    /// from the position and each note met is read from its own stream, and the notes ever
    /// pinned are looked up when that is shorter (see ``NewestFirstPage``): a page costs what
    /// its notes cost, not what the log does. Other orders replay the log up to the position
    /// (``NotebookState/replayNewestFirst(store:upTo:)``).
    public func list(_ query: ListQuery, in past: PastNotebook) throws(NotesError) -> [Note] {
        guard past.position > 0 else { return [] }
        guard NewestFirstPage.serves(query) else {
            do {
                return try NotebookState.replayNewestFirst(store: store, upTo: past.position).list(query)
            } catch { throw NotesError.wrap(error) }
        }
        return try read { txn, dbs in
            var page = NewestFirstPage(query)
            return try page.walk(store: store, projection: projection, databases: dbs, from: past.position, in: txn)
        }
    }
}

/// One page of a listing in the default order at a past position, found by walking the log
/// back from it.
///
/// Walking back, the notes are met in the order of their last event at or before the position,
/// which is the order of their update times (recorded-at never decreases along the log). Each
/// note met is folded from its own stream up to the version met, by the same fold as a replay;
/// the query's filters are applied to it.
///
/// When to stop: a note not met yet has no event after the current one, so it was updated at
/// the current event's instant or before. A note met whose update is later than that instant
/// ("settled") therefore precedes every note not met. The page is the pinned notes first, then
/// the others. So the walk stops:
/// - once `limit` matching pinned notes are settled: the page is theirs;
/// - once `limit` matching notes not pinned are settled (none are needed with `pinnedOnly`):
///   the rest of the page is theirs, and only pinned notes not met yet could come before them.
///   Every note pinned at the position is one an event ever left pinned (the `pinned_ever`
///   projection), so those not met are read from their streams instead of walking on; the walk
///   goes on first while it has read fewer notes than that set holds, since it may settle
///   `limit` pinned notes sooner;
/// - at the start of the log.
///
/// The page is exact in each case. Its cost is the notes met (each read from its stream) until
/// the page is known, bounded by about twice the notes ever pinned once the part not pinned is
/// settled.
struct NewestFirstPage {
    let query: ListQuery
    private var seen: Set<Identifier> = []
    private var pinned = Group()
    private var unpinned = Group()
    /// Notes read from their streams while walking.
    private(set) var notesRead = 0
    /// Events walked.
    private(set) var eventsWalked = 0
    /// Notes ever pinned read from their streams after the walk.
    private(set) var pinnedLookedUp = 0
    /// How the page became known.
    private(set) var ending = Ending.logStart

    /// How a page became known (for tests and measurements).
    enum Ending: Hashable {
        /// `limit` pinned notes were settled.
        case pinnedFull
        /// The part not pinned was settled; the pinned notes not met were looked up.
        case lookedUpPinned
        /// The walk reached the log's start.
        case logStart
    }

    /// The notes of one part of the page (pinned or not) met so far.
    private struct Group {
        var notes: [Note] = []
        /// How many precede every note not met.
        var settled = 0
        /// The update times of those not known to precede them yet (ties of instant).
        var pending: [Int64] = []

        mutating func add(_ note: Note) {
            notes.append(note)
            pending.append(note.updatedAt)
        }

        /// Settles the notes updated after `instant`, the latest a note not met can have.
        mutating func settle(before instant: Int64) {
            pending.removeAll { updated in
                guard updated > instant else { return false }
                settled += 1
                return true
            }
        }
    }

    init(_ query: ListQuery) { self.query = query }

    /// Whether the walk serves `query`'s order: the default one, by update, newest first.
    static func serves(_ query: ListQuery) -> Bool { query.sort == .updated && !query.reverse }

    /// The page at `position` (at least 1 and at most the head).
    mutating func walk(
        store: EventStore, projection: NotesProjection, databases: ProjectionDatabases, from position: UInt64,
        in txn: borrowing Transaction
    ) throws -> [Note] {
        let everPinned = try projection.everPinnedCount(in: txn, databases: databases)
        let unpinnedWanted = query.pinnedOnly ? 0 : query.limit
        try store.forEachEvent(from: position, reverse: true, in: txn) { view in
            pinned.settle(before: view.recordedAt)
            unpinned.settle(before: view.recordedAt)
            if pinned.settled >= query.limit {
                ending = .pinnedFull
                return false
            }
            if unpinned.settled >= unpinnedWanted && notesRead >= everPinned {
                ending = .lookedUpPinned
                return false
            }
            eventsWalked += 1
            guard case .note(let id) = StreamRef(view.streamBytes), seen.insert(id).inserted else { return true }
            let note = try Self.note(id, throughVersion: view.version, store: store, in: txn)
            notesRead += 1
            guard query.accepts(note) else { return true }
            if note.pinned {
                pinned.add(note)
            } else if !query.pinnedOnly {
                unpinned.add(note)
            }
            return true
        }
        if ending == .lookedUpPinned {
            try projection.forEachEverPinned(in: txn, databases: databases) { id in
                guard !seen.contains(id) else { return true }
                pinnedLookedUp += 1
                if let note = try Self.note(id, atOrBefore: position, store: store, in: txn), note.pinned,
                    query.accepts(note)
                {
                    pinned.add(note)
                }
                return true
            }
        }
        return query.page(of: pinned.notes + unpinned.notes)
    }

    /// The note folded from its stream's start through `version`, as a forward replay folds it.
    static func note(
        _ id: Identifier, throughVersion version: UInt64, store: EventStore, in txn: borrowing Transaction
    ) throws -> Note {
        var note: Note?
        try store.forEachEvent(inStream: Note.stream(id), versions: 1...version, in: txn) { view in
            try fold(view, into: &note, id: id, store: store)
            return true
        }
        guard let note else {
            throw StoreError.damaged(position: nil, detail: FoldError.notCreated(.note(id), type: "").description)
        }
        return note
    }

    /// The note as its events at or before `position` leave it; nil before its creation.
    static func note(
        _ id: Identifier, atOrBefore position: UInt64, store: EventStore, in txn: borrowing Transaction
    ) throws -> Note? {
        var note: Note?
        try store.forEachEvent(inStream: Note.stream(id), in: txn) { view in
            guard view.position <= position else { return false }
            try fold(view, into: &note, id: id, store: store)
            return true
        }
        return note
    }

    /// Folds one stored event of note `id`'s stream, lifted first when its schema is old.
    private static func fold(_ view: EventView, into note: inout Note?, id: Identifier, store: EventStore) throws {
        do {
            if store.registry.isCurrent(view.type, view.schemaVersion) {
                _ = try NotebookState.foldNote(
                    type: view.type, schemaVersion: view.schemaVersion, payload: view.payload, id: id, into: &note,
                    at: view.recordedAt, version: view.version)
            } else {
                for e in try store.lift(view) {
                    try e.payload.withUnsafeBytes { p in
                        _ = try NotebookState.foldNote(
                            type: e.type, schemaVersion: e.schemaVersion, payload: p, id: id, into: &note,
                            at: e.recordedAt, version: e.version)
                    }
                }
            }
        } catch let error as FoldError {
            throw StoreError.damaged(position: view.position, detail: error.description)
        }
    }
}

extension Notebook {
    /// What ``list(_:in:)`` read for a page in the default order: for measurements.
    package struct PastListingWork: Sendable {
        package var notesRead = 0
        package var eventsWalked = 0
        package var pinnedLookedUp = 0

        package init(notesRead: Int = 0, eventsWalked: Int = 0, pinnedLookedUp: Int = 0) {
            self.notesRead = notesRead
            self.eventsWalked = eventsWalked
            self.pinnedLookedUp = pinnedLookedUp
        }
    }

    /// ``list(_:in:)`` with what its walk read (nothing when it replays instead).
    package func listMeasured(_ query: ListQuery, in past: PastNotebook) throws(NotesError) -> (
        notes: [Note], work: PastListingWork
    ) {
        guard past.position > 0, NewestFirstPage.serves(query) else { return (try list(query, in: past), .init()) }
        return try read { txn, dbs in
            var page = NewestFirstPage(query)
            let notes = try page.walk(
                store: store, projection: projection, databases: dbs, from: past.position, in: txn)
            return (
                notes,
                PastListingWork(
                    notesRead: page.notesRead, eventsWalked: page.eventsWalked, pinnedLookedUp: page.pinnedLookedUp)
            )
        }
    }
}
