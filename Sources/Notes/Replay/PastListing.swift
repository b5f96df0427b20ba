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
    /// from the position and each note met is read from its own stream (see
    /// ``NewestFirstPage``), so a page costs what its notes cost, not what the log does, as soon
    /// as the pinned notes that match fill it. Other orders replay the log up to the position
    /// (``NotebookState/replayNewestFirst(store:upTo:)``).
    public func list(_ query: ListQuery, in past: PastNotebook) throws(NotesError) -> [Note] {
        guard past.position > 0 else { return [] }
        do {
            guard NewestFirstPage.serves(query) else {
                return try NotebookState.replayNewestFirst(store: store, upTo: past.position).list(query)
            }
            return try store.read { txn in
                var page = NewestFirstPage(query)
                return try page.walk(store: store, from: past.position, in: txn)
            }
        } catch { throw NotesError.wrap(error) }
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
/// therefore precedes every note not met. The page is the pinned notes first: once the query's
/// `limit` pinned notes that match precede every note not met, the page is theirs. Otherwise a
/// pinned note could still be met anywhere further back, so the walk goes on to the start of
/// the log; the page is exact either way.
struct NewestFirstPage {
    let query: ListQuery
    private var seen: Set<Identifier> = []
    private var pinned: [Note] = []
    private var unpinned: [Note] = []
    /// Pinned notes met whose update is later than the current event's instant.
    private var pinnedSettled = 0
    /// Pinned notes met whose update is not yet known to be later (ties of instant).
    private var pinnedPending: [Int64] = []
    /// Notes read from their streams, for tests and measurements.
    private(set) var notesRead = 0
    /// Events walked.
    private(set) var eventsWalked = 0

    init(_ query: ListQuery) { self.query = query }

    /// Whether the walk serves `query`'s order: the default one, by update, newest first.
    static func serves(_ query: ListQuery) -> Bool { query.sort == .updated && !query.reverse }

    /// The page at `position` (at least 1 and at most the head).
    mutating func walk(store: EventStore, from position: UInt64, in txn: borrowing Transaction) throws -> [Note] {
        try store.forEachEvent(from: position, reverse: true, in: txn) { view in
            if settle(before: view.recordedAt) { return false }
            eventsWalked += 1
            guard case .note(let id) = StreamRef(view.streamBytes), seen.insert(id).inserted else { return true }
            let note = try Self.note(id, throughVersion: view.version, store: store, in: txn)
            notesRead += 1
            guard query.accepts(note) else { return true }
            if note.pinned {
                pinned.append(note)
                pinnedPending.append(note.updatedAt)
            } else if !query.pinnedOnly {
                unpinned.append(note)
            }
            return true
        }
        return query.page(of: pinned + unpinned)
    }

    /// Whether the page is known, the next event (walking back) being recorded at `instant`.
    private mutating func settle(before instant: Int64) -> Bool {
        pinnedPending.removeAll { updated in
            guard updated > instant else { return false }
            pinnedSettled += 1
            return true
        }
        return pinnedSettled >= query.limit
    }

    /// The note folded from its stream's start through `version`, as a forward replay folds it.
    static func note(
        _ id: Identifier, throughVersion version: UInt64, store: EventStore, in txn: borrowing Transaction
    ) throws -> Note {
        var note: Note?
        try store.forEachEvent(inStream: Note.stream(id), versions: 1...version, in: txn) { view in
            do {
                if store.registry.isCurrent(view.type, view.schemaVersion) {
                    _ = try NotebookState.foldNote(
                        type: view.type, schemaVersion: view.schemaVersion, payload: view.payload, id: id,
                        into: &note, at: view.recordedAt, version: view.version)
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
            return true
        }
        guard let note else {
            throw StoreError.damaged(position: nil, detail: FoldError.notCreated(.note(id), type: "").description)
        }
        return note
    }
}
