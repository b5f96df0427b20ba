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
        // Projections this program cannot read (an older version's store, read-only here): the
        // names are folded from the log up to the position, as `search --as-of` folds it (before
        // 2026-12-07 `list --as-of` was refused there, exit 5).
        if unbuiltProjections != nil {
            let position = try position(atOrBefore: instant)
            var names: NotebookState
            do { names = try NotebookState.replay(store: store, upTo: position) } catch {
                throw NotesError.wrap(error)
            }
            names.notes = NoteCollection()
            names.events = 0
            return PastNotebook(position: position, names: names)
        }
        return try read { txn, dbs in
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
    /// from the position and each note met is read as it was then, and the notes ever
    /// pinned are looked up when that is shorter (see ``NewestFirstPage``): a page costs what
    /// its notes cost, not what the log does. Other orders, and a walk that would read more
    /// than an eighth of the notebook's notes (a listing without a limit, a filter few notes
    /// pass), replay the log up to the position (``NotebookState/replayNewestFirst(store:upTo:)``),
    /// which reads every event once and costs less per note than reading each note's stream.
    public func list(_ query: ListQuery, in past: PastNotebook) throws(NotesError) -> [Note] {
        try listMeasured(query, in: past).notes
    }

    /// ``list(_:in:)`` with what its walk read (nothing when it did not walk): for tests and
    /// measurements. `budget` is the most notes the walk may read before it gives up for the
    /// replay (by default an eighth of the notes now, at least 1,000).
    package func listMeasured(_ query: ListQuery, in past: PastNotebook, budget: Int? = nil) throws(NotesError) -> (
        notes: [Note], work: PastListingWork
    ) {
        guard past.position > 0 else { return ([], PastListingWork()) }
        // The walk reads the projection; without one this program reads, the log is replayed.
        if NewestFirstPage.serves(query) && unbuiltProjections == nil {
            let walked = try read { txn, dbs in
                let notes = try budget ?? max(1_000, projection.noteCount(in: txn, databases: dbs) / 8)
                var page = NewestFirstPage(query, budget: notes)
                let found = try page.walk(
                    store: store, projection: projection, databases: dbs, from: past.position, in: txn)
                return (
                    found,
                    PastListingWork(
                        walked: true, gaveUp: found == nil, notesRead: page.notesRead, eventsWalked: page.eventsWalked,
                        pinnedLookedUp: page.pinnedLookedUp)
                )
            }
            if let notes = walked.0 { return (notes, walked.1) }
            return (try replayedList(query, at: past.position), walked.1)
        }
        return (try replayedList(query, at: past.position), PastListingWork())
    }

    private func replayedList(_ query: ListQuery, at position: UInt64) throws(NotesError) -> [Note] {
        do { return try NotebookState.replayNewestFirst(store: store, upTo: position).list(query) } catch {
            throw NotesError.wrap(error)
        }
    }

    /// What ``list(_:in:)`` read: for tests and measurements.
    package struct PastListingWork: Sendable {
        /// Whether the walk ran, and whether it gave up for the replay.
        package var walked = false
        package var gaveUp = false
        package var notesRead = 0
        package var eventsWalked = 0
        package var pinnedLookedUp = 0

        package init(
            walked: Bool = false, gaveUp: Bool = false, notesRead: Int = 0, eventsWalked: Int = 0,
            pinnedLookedUp: Int = 0
        ) {
            self.walked = walked
            self.gaveUp = gaveUp
            self.notesRead = notesRead
            self.eventsWalked = eventsWalked
            self.pinnedLookedUp = pinnedLookedUp
        }
    }
}

/// One page of a listing in the default order at a past position, found by walking the log
/// back from it.
///
/// Walking back, the notes are met in the order of their last event at or before the position,
/// which is the order of their update times (recorded-at never decreases along the log). Each
/// note met is read as it was then: its projection record when it has not changed since, else
/// its own stream folded up to the version met, by the same fold as a replay; the query's
/// filters are applied to it.
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
/// The page is exact in each case. Its cost is the notes met (each read as above) until
/// the page is known, bounded by about twice the notes ever pinned once the part not pinned is
/// settled. The walk gives up (returns nil) rather than read more than `budget` notes: the
/// replay of the whole log reads each note's events more cheaply than their streams do. For the
/// same reason the notes ever pinned are looked up only when they are fewer than the budget.
struct NewestFirstPage {
    let query: ListQuery
    private var seen: Set<Identifier> = []
    private var pinned = Group()
    private var unpinned = Group()
    /// Notes met and read while walking.
    private(set) var notesRead = 0
    /// Events walked.
    private(set) var eventsWalked = 0
    /// Notes ever pinned read after the walk.
    private(set) var pinnedLookedUp = 0
    /// Candidates (notes ever filed under the filter) checked for ever having been pinned.
    private(set) var candidatesCheckedForPins = 0
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
        /// Every note ever filed under the query's category or tags was met.
        case candidatesMet
        /// The page would have cost more than the budget: the caller replays instead.
        case gaveUp
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
        @inline(__always)
        mutating func settle(before instant: Int64) {
            // Asked at every event walked, and mostly with nothing pending.
            guard !pending.isEmpty else { return }
            pending.removeAll { updated in
                guard updated > instant else { return false }
                settled += 1
                return true
            }
        }
    }

    /// The most notes read before the walk gives up.
    let budget: Int

    init(_ query: ListQuery, budget: Int = .max) {
        self.query = query
        self.budget = budget
    }

    /// Whether the walk serves `query`'s order: the default one, by update, newest first.
    static func serves(_ query: ListQuery) -> Bool { query.sort == .updated && !query.reverse }

    /// The page at `position` (at least 1 and at most the head), or nil when finding it would
    /// read more than `budget` notes.
    mutating func walk(
        store: EventStore, projection: NotesProjection, databases: ProjectionDatabases, from position: UInt64,
        in txn: borrowing Transaction
    ) throws -> [Note]? {
        // With a category or tag filter, only the notes ever filed there can pass it: the others
        // are skipped unread, and only those of them ever pinned are looked up.
        let candidates = try Self.candidates(
            of: query, limit: max(1_000, budget / 2), projection: projection, databases: databases, in: txn)
        let everPinnedAll = try projection.everPinnedCount(in: txn, databases: databases)
        // Which candidates were ever pinned costs a lookup each (tens of thousands for a large
        // category), and only matters once the walk could end by looking them up: until then
        // their number is estimated from the share of notes ever pinned, which decides no more
        // than when to learn it. A page whose pinned part fills first never pays for it.
        var pinnedCandidates: [Identifier]? = candidates == nil || everPinnedAll > 0 ? nil : []
        var everPinned = pinnedCandidates?.count ?? everPinnedAll
        // Exact without a filter (every note ever pinned) or once the candidates are checked.
        var everPinnedExact = candidates == nil || pinnedCandidates != nil
        if let candidates, !everPinnedExact {
            let notes = try max(1, projection.noteCount(in: txn, databases: databases))
            everPinned = Int(Double(candidates.count) * Double(min(everPinnedAll, notes)) / Double(notes))
        }
        // Asked of every event walked: a table probed by the id's own bits, not `Set`'s hashing.
        let candidateTable = candidates.map(IdentifierTable.init)
        var mayLookUp = everPinned <= budget
        let unpinnedWanted = query.pinnedOnly ? 0 : query.limit
        try store.forEachEventHeader(from: position, reverse: true, in: txn) { view in
            // Every note that may pass the filters is read: no note further back can join the page.
            if let candidates, seen.count == candidates.count {
                ending = .candidatesMet
                return false
            }
            pinned.settle(before: view.recordedAt)
            unpinned.settle(before: view.recordedAt)
            if pinned.settled >= query.limit {
                ending = .pinnedFull
                return false
            }
            if unpinned.settled >= unpinnedWanted, let candidates, !everPinnedExact, notesRead >= everPinned / 2 {
                // The walk could end here: learn which candidates were ever pinned.
                let known = try Self.everPinned(
                    among: candidates, projection: projection, databases: databases, in: txn)
                candidatesCheckedForPins = candidates.count
                pinnedCandidates = known
                everPinned = known.count
                everPinnedExact = true
                mayLookUp = everPinned <= budget
            }
            if mayLookUp && everPinnedExact && unpinned.settled >= unpinnedWanted
                && notesRead >= everPinned
            {
                ending = .lookedUpPinned
                return false
            }
            if notesRead >= budget {
                ending = .gaveUp
                return false
            }
            eventsWalked += 1
            let id: Identifier
            if let candidateTable {
                guard let candidate = candidateTable.note(streamed: view.streamBytes) else { return true }
                id = candidate
            } else {
                guard case .note(let note) = StreamRef(view.streamBytes) else { return true }
                id = note
            }
            guard seen.insert(id).inserted else { return true }
            let note = try Self.note(
                id, throughVersion: view.version, store: store, projection: projection, databases: databases, in: txn)
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
            func lookUp(_ id: Identifier) throws -> Bool {
                guard !seen.contains(id) else { return true }
                pinnedLookedUp += 1
                if let note = try Self.note(
                    id, atOrBefore: position, store: store, projection: projection, databases: databases, in: txn),
                    note.pinned,
                    query.accepts(note)
                {
                    pinned.add(note)
                }
                return true
            }
            if let pinnedCandidates {
                for id in pinnedCandidates { _ = try lookUp(id) }
            } else {
                try projection.forEachEverPinned(in: txn, databases: databases, lookUp)
            }
        }
        if ending == .gaveUp { return nil }
        return query.page(of: pinned.notes + unpinned.notes)
    }

    /// The notes that may pass the query's category and tag filters at any instant: those an
    /// event ever filed under its category or tag and under one tag of each of its tag
    /// conditions; nil when it has no such filter. A filter with more than `limit` filings is
    /// left out: its notes are many, so the walk meets enough of them soon, and reading them all
    /// first would cost more than it saves.
    static func candidates(
        of query: ListQuery, limit: Int, projection: NotesProjection, databases: ProjectionDatabases,
        in txn: borrowing Transaction
    ) throws -> Set<Identifier>? {
        var result = try projection.notesEverFiled(under: query.scope, limit: limit, in: txn, databases: databases)
        for condition in query.tags {
            guard
                let filed = try projection.notesEverFiled(.tag, condition, limit: limit, in: txn, databases: databases)
            else { continue }
            result = result.map { $0.intersection(filed) } ?? filed
        }
        return result
    }

    /// The notes of `candidates` an event ever left pinned, in id order: each looked up in
    /// `pinned_ever`, or that set walked, whichever is shorter.
    static func everPinned(
        among candidates: Set<Identifier>, projection: NotesProjection, databases: ProjectionDatabases,
        in txn: borrowing Transaction
    ) throws -> [Identifier] {
        var found: [Identifier] = []
        if candidates.count < (try projection.everPinnedCount(in: txn, databases: databases)) {
            for id in candidates where try projection.wasEverPinned(id, in: txn, databases: databases) {
                found.append(id)
            }
            found.sort()
        } else {
            try projection.forEachEverPinned(in: txn, databases: databases) { id in
                if candidates.contains(id) { found.append(id) }
                return true
            }
        }
        return found
    }

    /// The note as it was after `version`: its projection record when that is still its newest
    /// version (the projection is the fold of the log, in the same snapshot), else its stream's
    /// events through `version` folded newest first.
    static func note(
        _ id: Identifier, throughVersion version: UInt64, store: EventStore, projection: NotesProjection,
        databases: ProjectionDatabases, in txn: borrowing Transaction
    ) throws -> Note {
        if try store.streamVersion(Note.stream(id), in: txn) == version,
            let current = try projection.note(id, in: txn, databases: databases)
        {
            return current
        }
        var views: [EventView] = []
        try store.forEachEvent(inStream: Note.stream(id), versions: 1...version, in: txn) { view in
            views.append(view)
            return true
        }
        guard let note = try newestFirst(id, views, store: store) else {
            throw StoreError.damaged(position: nil, detail: FoldError.notCreated(.note(id), type: "").description)
        }
        return note
    }

    /// The note that `views` (its stream's events, oldest first) leave, folded newest first as
    /// a past replay folds it (``NewestFirstReplayer``): each field from the newest event that
    /// sets it, so that the superseded bodies of a long history are never checked or decoded
    /// (they were 72% of `list --as-of`'s instructions on the Swift Evolution corpus). Nil when
    /// there are none.
    private static func newestFirst(_ id: Identifier, _ views: [EventView], store: EventStore) throws -> Note? {
        guard !views.isEmpty else { return nil }
        var replayer = NewestFirstReplayer()
        for view in views.reversed() { try replayer.apply(view, store: store) }
        return try replayer.finish().notes[id]
    }

    /// The note as its events at or before `position` leave it (its projection record when its
    /// newest event is); nil before its creation.
    static func note(
        _ id: Identifier, atOrBefore position: UInt64, store: EventStore, projection: NotesProjection,
        databases: ProjectionDatabases, in txn: borrowing Transaction
    ) throws -> Note? {
        let stream = Note.stream(id)
        let head = try store.streamVersion(stream, in: txn)
        var newest: UInt64?
        try store.forEachEvent(inStream: stream, versions: head...head, in: txn) { view in
            newest = view.position
            return false
        }
        if let newest, newest <= position, let current = try projection.note(id, in: txn, databases: databases) {
            return current
        }
        var views: [EventView] = []
        try store.forEachEvent(inStream: stream, in: txn) { view in
            guard view.position <= position else { return false }
            views.append(view)
            return true
        }
        return try newestFirst(id, views, store: store)
    }
}

/// A fixed set of ids for the membership test of a walk's inner loop: open addressing on a
/// multiplicative hash of the id's bits, a few instructions a probe where `Set`'s `Hasher` took
/// about 260 (callgrind, 63,656 events walked at 10 M events).
///
/// The walk asks it of each event's stream name (``note(streamed:)``): the last eight bytes of
/// the names of its notes' streams are kept in a second table, so that the events of other
/// streams are passed over without parsing their UUID (184 instructions an event).
struct IdentifierTable {
    private var slots: [Identifier]
    private var used: [Bool]
    /// The last eight bytes of `note/<uuid>` for each id (never 0: they are hex digits).
    private var tails: [UInt64]
    private let shift: UInt64

    init(_ ids: Set<Identifier>) {
        var bits: UInt64 = 4
        while (1 << bits) < ids.count * 2 { bits += 1 }
        shift = 64 - bits
        slots = Array(repeating: Identifier(high: 0, low: 0), count: 1 << bits)
        used = Array(repeating: false, count: 1 << bits)
        tails = Array(repeating: 0, count: 1 << bits)
        for id in ids {
            var i = slot(id)
            while used[i] { i = (i + 1) & (slots.count - 1) }
            slots[i] = id
            used[i] = true
            var name = Note.stream(id)
            guard let tail = name.withUTF8({ Self.tail(UnsafeRawBufferPointer($0)) }) else { continue }
            var t = tailSlot(tail)
            while tails[t] != 0 { t = (t + 1) & (tails.count - 1) }
            tails[t] = tail
        }
    }

    /// The last eight bytes of a note stream's name (41 bytes), or nil for any other length.
    @inline(__always)
    private static func tail(_ stream: UnsafeRawBufferPointer) -> UInt64? {
        guard stream.count == 41, let base = stream.baseAddress else { return nil }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 33, as: UInt64.self))
    }

    @inline(__always)
    private func tailSlot(_ tail: UInt64) -> Int {
        Int(truncatingIfNeeded: (tail &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The id of the note whose stream is named `stream`, when it is one of the table's.
    @inline(__always)
    func note(streamed stream: UnsafeRawBufferPointer) -> Identifier? {
        guard let tail = Self.tail(stream) else { return nil }
        var t = tailSlot(tail)
        while tails[t] != tail {
            if tails[t] == 0 { return nil }
            t = (t + 1) & (tails.count - 1)
        }
        guard case .note(let id) = StreamRef(stream), contains(id) else { return nil }
        return id
    }

    private func slot(_ id: Identifier) -> Int {
        let mixed = ((id.high &* 0x9E37_79B9_7F4A_7C15) ^ id.low) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> shift)
    }

    func contains(_ id: Identifier) -> Bool {
        var i = slot(id)
        while used[i] {
            if slots[i] == id { return true }
            i = (i + 1) & (slots.count - 1)
        }
        return false
    }
}
