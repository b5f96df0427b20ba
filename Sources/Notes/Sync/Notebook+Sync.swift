public import Basics
public import EventStore
import LMDB
import TextDiff

/// Where a store stands with the remote log it syncs with.
///
/// The log's first ``confirmed`` events are the remote's, position for position and byte for
/// byte; the events after them are the outbox: written by commands on this device, durable and
/// checksummed like every event, shown by every view, and not ordered by the remote yet. A sync
/// rewrites them on top of what it pulls (keeping their ids) and pushes them.
public struct SyncState: Sendable, Equatable {
    /// The remote notebook the store joined, or nil before its first sync.
    public var notebook: Identifier?
    /// The last position the remote confirmed (0: none).
    public var confirmed: UInt64
    /// When the last sync finished (microseconds since the Unix epoch), or nil.
    public var lastSync: Int64?
    /// The log's last position.
    public var head: UInt64

    /// Events written here that the remote has not confirmed yet.
    public var pending: UInt64 { head - min(head, confirmed) }

    /// Whether the event at `position` waits in the outbox.
    public func isPending(position: UInt64) -> Bool { position > confirmed }
}

/// What one sync did.
public struct SyncReport: Sendable, Equatable {
    /// Events this device sent that the remote took.
    public var pushed = 0
    /// Events of other devices appended here.
    public var pulled = 0
    /// Body edits merged cleanly with changes made elsewhere.
    public var merged = 0
    /// Notes whose body edits met changes of the same lines elsewhere (both kept, the note
    /// flagged), each once however many of its edits, rounds and chunks did.
    public var conflicts = 0
    /// Categories and tags created here under a name another device had created first, folded
    /// into that one (also those two devices created at once, each pushing before it pulled the
    /// other's: merged into the first created).
    public var namesMerged = 0
    /// Notes filed under a category or tag that another device deleted or merged while their
    /// pushes crossed, filed away from it (delete wins over assign; a merge takes its notes).
    public var refiled = 0
    /// Notes imported here from Markdown files another device had imported too (the same path in
    /// the folder, the same bytes) before the two synced: this device's copy dropped, the other's
    /// kept.
    public var importsJoined = 0
    /// This device's events the remote confirmed unchanged, rewritten in place with the remote's
    /// instants (no rebase, no rebuild of the projections).
    public var confirmedInPlace = 0
    /// This device's events the remote confirmed that came back with other devices' (or of
    /// categories and tags, which ``confirmedInPlace`` leaves out): taken off, appended at the
    /// remote's positions, and what came after them rebased.
    public var confirmedByRebase = 0
    /// This device's events the remote confirmed, in place or by a rebase: this sync's pushes,
    /// and those an earlier sync had sent whose answer never came back.
    public var confirmed: Int { confirmedInPlace + confirmedByRebase }
    /// Confirmed events given back, unchanged, to a remote restored from an older backup.
    public var restored = 0
    /// Confirmed events a remote restored from an older backup had lost, while another device
    /// pushed to it first: taken back into the outbox, rebased and pushed again.
    public var reopened = 0
    /// Rounds of pull, rebase and push.
    public var rounds = 0
    /// The remote's last position once done.
    public var remoteHead: UInt64 = 0
    /// Notes in conflict after the sync (these and earlier ones not yet resolved).
    public var unresolvedConflicts = 0
    /// Notes whose conflict another device recorded and this sync pulled (not in ``conflicts``,
    /// which counts this device's own), unresolved at its end.
    public var conflictsPulled = 0

    public init() {}
}

/// Why a sync stopped. Nothing acknowledged is lost by any of them: the outbox stays.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The local store failed (full disk, damage...): nothing was changed by the sync's write.
    case store(NotesError)
    /// The store syncs with another notebook.
    case otherNotebook(local: Identifier, remote: Identifier)
    /// The store has history of its own and never synced: it must ask to join.
    case ownHistory(events: UInt64)
    /// The remote's log is not the one this store confirmed (a tampered or restored remote, or
    /// a store copied from another notebook).
    case diverged(position: UInt64, detail: String)
    /// An event of the remote that the notes rules refuse (a title on several lines, a body over
    /// the limit, a stream the notes model does not have...): the sync stopped before writing
    /// anything of what it pulled.
    case invalidRemoteEvent(position: UInt64, detail: String)
    /// Other devices kept pushing; the sync stopped after this many rounds.
    case tooManyRounds(Int)
    /// An event of the outbox is larger than the remote log takes of one event: it and the
    /// events after it stay in the outbox (those before it were pushed).
    case oversizedEvent(position: UInt64, stream: String, bytes: Int)
    /// The remote log failed.
    case remote(RemoteLogError)

    public var description: String {
        switch self {
        case .otherNotebook(let local, let remote):
            return "this store syncs with notebook \(local), not \(remote); use another store for that notebook"
        case .ownHistory(let events):
            return
                "this store holds \(events) event\(events == 1 ? "" : "s") of its own and never synced; run `notes sync --join` to propose them to the remote"
        case .diverged(let position, let detail):
            return StoreError.diverged(position: position, detail: detail).description
        case .invalidRemoteEvent(let position, let detail):
            return
                "the remote's event at position \(position) breaks the notes rules (\(detail)); nothing was pulled (a newer program may read it)"
        case .tooManyRounds(let rounds):
            return "other devices kept pushing during \(rounds) rounds; run `notes sync` again (nothing was lost)"
        case .oversizedEvent(let position, let stream, let bytes):
            return
                "the event at position \(position) (\(stream)) holds \(bytes) bytes, more than the remote log takes of one event (\(RemoteBatch.maxPayloadBytes)): it, its command and the events after them stay here, unpushed (the events before them were pushed, and pulls go on); it was written under a body limit above the remote's (before a remote was set, or by `notes import`); see \"An event too large for the remote\" in the README"
        case .remote(let e): return e.description
        case .store(let e): return e.description
        }
    }

    public static func == (a: SyncError, b: SyncError) -> Bool {
        switch (a, b) {
        case (.store(let x), .store(let y)): return x.description == y.description
        case (.otherNotebook(let x1, let x2), .otherNotebook(let y1, let y2)): return x1 == y1 && x2 == y2
        case (.ownHistory(let x), .ownHistory(let y)): return x == y
        case (.diverged(let x1, let x2), .diverged(let y1, let y2)): return x1 == y1 && x2 == y2
        case (.tooManyRounds(let x), .tooManyRounds(let y)): return x == y
        case (.oversizedEvent(let x1, let x2, let x3), .oversizedEvent(let y1, let y2, let y3)):
            return x1 == y1 && x2 == y2 && x3 == y3
        case (.invalidRemoteEvent(let x1, let x2), .invalidRemoteEvent(let y1, let y2)): return x1 == y1 && x2 == y2
        case (.remote(let x), .remote(let y)): return x == y
        default: return false
        }
    }
}

extension Notebook {
    enum SyncKeys {
        static let notebook = "sync.notebook"
        /// The name the notebook had on the remote when a sync last looked it up (a sync of a
        /// store that joined one needs no name): what `notes remote show` prints.
        static let notebookName = "sync.notebook-name"
        static let confirmed = "sync.confirmed"
        static let lastSync = "sync.last"
        /// The first confirmed position whose events a rebase pulled in and no repair of crossed
        /// pushes has checked yet (see ``Notebook/repairCrossedPushes(mayWrite:)``); none when all were.
        static let repairFrom = "sync.repair-from"
        /// The ids of this device's repair events still in its outbox (16 bytes each).
        static let repairIDs = "sync.repair-ids"
    }

    /// The most events one write of a sync appends: a clone goes in steps of this size, each
    /// committed, so memory stays bounded and a killed clone resumes where it stopped.
    public static let syncChunk = 20_000

    /// The most events one pull of a sync asks for.
    public static let pullPage = 5000

    /// Events pulled after `after`, in order; `short` when the page ended before its limit, at
    /// the remote's end when it was read.
    struct PulledPage {
        var after: UInt64
        var events: [RecordedEvent]
        var short: Bool
    }

    /// Where the store stands with its remote.
    public func syncState() throws(NotesError) -> SyncState {
        do { return try store.read { txn in try syncState(in: txn) } } catch { throw NotesError.wrap(error) }
    }

    /// The name the store's notebook had on the remote when a sync last looked it up, or nil.
    public func syncedNotebookName() throws(NotesError) -> String? {
        do {
            return try store.read { txn in
                try store.metadata(SyncKeys.notebookName, in: txn).map { String(decoding: $0, as: UTF8.self) }
            }
        } catch { throw NotesError.wrap(error) }
    }

    /// Records `name` as the store's notebook's name on the remote (a sync found the notebook by it).
    public func recordSyncedNotebookName(_ name: String) throws(NotesError) {
        do {
            try write { session, _ in
                try store.setMetadata(SyncKeys.notebookName, Array(name.utf8), in: session.transaction)
            }
        } catch { throw NotesError.wrap(error) }
    }

    func syncState(in txn: borrowing Transaction) throws -> SyncState {
        let notebook = try store.metadata(SyncKeys.notebook, in: txn).flatMap { Identifier(bytes: $0) }
        let confirmed = try store.metadataUInt64(SyncKeys.confirmed, in: txn) ?? 0
        let last = try store.metadataUInt64(SyncKeys.lastSync, in: txn).map { Int64(bitPattern: $0) }
        return SyncState(
            notebook: notebook, confirmed: confirmed, lastSync: last, head: try store.headPosition(in: txn))
    }

    /// Exchanges events with `remote`'s `notebook` until both hold the same log: pull what other
    /// devices pushed, acknowledge this device's events that came back, rebase the rest of the
    /// outbox on top (merging bodies, folding same-named categories and tags), push it; again
    /// until nothing moves.
    ///
    /// No write transaction is held across network I/O, so every command (and every reader) of
    /// the store goes on meanwhile; what they append joins the outbox. A failed sync keeps the
    /// outbox as it was: a store that never synced and holds events needs `join`.
    @discardableResult
    public func sync(with remote: any RemoteEventLog, notebook: Identifier, join: Bool = false, maxRounds: Int = 16)
        throws(SyncError) -> SyncReport
    {
        do {
            return try runSync(remote: remote, notebook: notebook, join: join, maxRounds: maxRounds)
        } catch let e as SyncError {
            throw e
        } catch let e as RemoteLogError {
            throw .remote(e)
        } catch {
            let e = NotesError.wrap(error)
            if case .store(.diverged(let position, let detail)) = e {
                // The event before agreed (the confirmed prefix is checked, and a pull appends in
                // order): the remote's digest is not that of its own event. Said before 2026-12-08
                // as "the store's log differs", of a clone into a new store too (a hostile trial).
                if detail == StoreError.chainDigestDiffers { throw .remote(.damaged(Self.digestDamage(at: position))) }
                throw .diverged(position: position, detail: detail)
            }
            throw .store(e)
        }
    }

    private func runSync(remote: any RemoteEventLog, notebook: Identifier, join: Bool, maxRounds: Int) throws
        -> SyncReport
    {
        var report = SyncReport()
        let start = try syncState()
        if let joined = start.notebook, joined != notebook {
            throw SyncError.otherNotebook(local: joined, remote: notebook)
        }
        if start.notebook == nil, start.head > 0, !join { throw SyncError.ownHistory(events: start.head) }
        // The events after the confirmed position that the check of the prefix read with it.
        var prefetched: PulledPage?
        if start.confirmed > 0 {
            (report.restored, report.reopened, prefetched) = try checkConfirmedPrefix(
                remote: remote, notebook: notebook, at: start.confirmed)
        }
        var wrote = false
        // The notes this sync's rebases flagged: a note is one conflict however many rounds or
        // chunks flag it.
        var conflicted: Set<Identifier> = []
        // The notes in conflict before: those the sync ends with beside them and this sync's own
        // came with the pull.
        let conflictedBefore = try conflictedNoteIDs()
        // The notes the last chunk pulled created (another device's, not this one's pulled back):
        // a note and the events that say which file it was imported from may come in two chunks,
        // and the second's rebase must still know the note as the other device's new one
        // (``Rebase/findDuplicateImports(txn:)``). A note of an import has a few events, so two
        // chunks hold them all, and each rebase looks at two chunks' new notes at most.
        var created: Set<Identifier> = []
        if start.head == 0 {
            let remoteHead = try remote.head(notebook: notebook).position
            if remoteHead > UInt64(Self.syncChunk) {
                let cloned = try clone(from: remote, notebook: notebook, upTo: remoteHead)
                report.pulled += cloned
                wrote = cloned > 0
            }
        }
        for round in 1...maxRounds {
            report.rounds = round
            var moved = false
            // Pull and rebase, a chunk at a time, until a page comes back short (the remote's end
            // when it was read: a page is short only there): what was pulled is integrated and its
            // rebase is pushed below, so a pull alone needs no other round.
            var atEnd = false
            while !atEnd {
                let confirmed = try syncState().confirmed
                var pulled: [RecordedEvent] = []
                while pulled.count < Self.syncChunk {
                    let after = confirmed + UInt64(pulled.count)
                    if let page = prefetched.take(), page.after == after {
                        pulled += page.events
                        if page.short {
                            atEnd = true
                            break
                        }
                        continue
                    }
                    let limit = min(Self.pullPage, Self.syncChunk - pulled.count)
                    let page = try remote.pull(notebook: notebook, after: after, limit: limit)
                    pulled += page
                    if page.count < limit {
                        atEnd = true
                        break
                    }
                }
                if pulled.isEmpty { break }
                let outcome: Integration
                do {
                    outcome = try integrate(pulled, notebook: notebook, confirmed: confirmed, created: created)
                } catch {
                    // The remote's fault only when none of this device's own events waiting to
                    // sync is of that stream (its own creation, rebased, may be what collides).
                    guard let culprit = Self.remoteCulprit(error, in: pulled),
                        case .invalidRemoteEvent(let position, _) = culprit,
                        let blamed = pulled.first(where: { $0.position == position }),
                        !((try? outboxStreams(after: confirmed))?.contains(blamed.stream) ?? true)
                    else { throw error }
                    throw culprit
                }
                wrote = wrote || outcome.wrote
                report.pulled += outcome.foreign
                report.confirmedInPlace += outcome.inPlace
                report.confirmedByRebase += outcome.ownRebased
                report.merged += outcome.merged
                conflicted.formUnion(outcome.conflicted)
                report.conflicts = conflicted.count
                report.namesMerged += outcome.namesMerged
                report.refiled += outcome.refiled
                report.importsJoined += outcome.importsJoined
                created = outcome.created
            }
            // What was pulled, checked for crossed pushes (also what a killed sync pulled): the
            // repair joins the outbox pushed below.
            let repair = try repairCrossedPushes { try remote.mayAppend(notebook: notebook) }
            report.namesMerged += repair.namesMerged
            report.refiled += repair.refiled
            // Push the outbox. When the remote took all of it as sent, right after the confirmed
            // position, its answer confirms it in place. Otherwise what it sent is pulled back
            // (and confirmed in place) by the next round, whether the remote took it now or had
            // it already (another sync of this store pushed it first), and a refused batch is
            // rebased there. When nothing moved since the short page, the sync ends without
            // another round of pulls.
            let (pushed, sent, refused, taken) = try push(to: remote, notebook: notebook)
            report.pushed += pushed
            if let taken, try confirmPushed(taken, notebook: notebook) {
                wrote = true
                report.confirmedInPlace += taken.count
            } else if sent || refused {
                moved = true
            }
            if !moved {
                let state = try syncState()
                // A sync that wrote has recorded its time in that write already.
                if !wrote || state.notebook == nil {
                    try write { session, _ in
                        try store.setMetadata(SyncKeys.notebook, notebook.bytes, in: session.transaction)
                        try markSynced(in: session.transaction)
                    }
                }
                report.remoteHead = state.confirmed
                let conflictedAfter = try conflictedNoteIDs()
                report.unresolvedConflicts = conflictedAfter.count
                report.conflictsPulled = conflictedAfter.subtracting(conflictedBefore).subtracting(conflicted).count
                return report
            }
        }
        throw SyncError.tooManyRounds(maxRounds)
    }

    /// Records the sync's time (what `stats` shows as the last sync) in a write of the sync.
    private func markSynced(in txn: borrowing Transaction) throws {
        try store.setMetadata(SyncKeys.lastSync, uint64: UInt64(bitPattern: options.clock()), in: txn)
    }

    /// A store that holds no event takes the remote's log up to `head` in one write: its
    /// projections are folded in memory as the pages arrive and written in bulk before the
    /// commit, as an import into a new store writes them (a clone in steps of ``syncChunk``
    /// projects each step's events note by note, at the rate of a batched append). The store's
    /// write lock is held while the pages arrive, which in an empty store holds up no one's
    /// work; a clone killed midway leaves the store empty, and the next sync starts it again.
    /// Returns how many events it appended (0 when the store is no longer empty).
    private func clone(from remote: any RemoteEventLog, notebook: Identifier, upTo head: UInt64) throws -> Int {
        // Errors of the remote and of its events pass through the store's write unchanged.
        var failure: (any Error)?
        do {
            return try write(reserving: Int(clamping: head) &* 1024) { session, _ in
                failure = nil
                guard try session.logHead().position == 0 else { return 0 }
                try session.deferProjections(expecting: Int(clamping: head))
                var after: UInt64 = 0
                while after < head {
                    let page: [RecordedEvent]
                    do {
                        page = try remote.pull(notebook: notebook, after: after, limit: 5000)
                        for e in page { try checkRemote(e) }
                    } catch {
                        failure = error
                        throw error
                    }
                    guard let last = page.last else { break }
                    do {
                        for e in page { try session.appendConfirmed(e) }
                        try session.applyDeferredProjections()
                    } catch {
                        if let culprit = Self.remoteCulprit(error, in: page) {
                            failure = culprit
                            throw culprit
                        }
                        throw error
                    }
                    after = last.position
                }
                try recordConfirmed(through: after, notebook: notebook, in: session.transaction)
                try markForRepair(from: 1, in: session.transaction)
                return Int(after)
            }
        } catch {
            if let failure { throw failure }
            throw error
        }
    }

    /// Refuses to go on when the remote's event at `position` is not the one this store
    /// confirmed there: same id, same chain digest. A remote holding fewer events whose last one
    /// is this store's at its position (a server restored from an older backup) is given back
    /// this store's confirmed events past it, unchanged. A restored remote that took other
    /// events first (another device pushed before any gave them back) shares a prefix with this
    /// store and holds none of this store's later ids: those events go back to the outbox, to be
    /// rebased on top of the remote's and pushed again. Returns how many were given back, and how
    /// many went back to the outbox.
    ///
    /// The event at `position` is read with a page of the events after it, which comes back
    /// with the answer when the prefix holds: the sync's first pull, in the same round trip.
    private func checkConfirmedPrefix(remote: any RemoteEventLog, notebook: Identifier, at position: UInt64) throws
        -> (restored: Int, reopened: Int, next: PulledPage?)
    {
        for _ in 0..<2 {
            let page = try remote.pull(notebook: notebook, after: position - 1, limit: Self.pullPage)
            if let theirs = page.first, theirs.position == position {
                let ours = try store.read { txn in try store.event(at: position, in: txn) }
                guard let ours, ours.id == theirs.id, ours.digest == theirs.digest else {
                    return (
                        0, try reopen(remote: remote, notebook: notebook, confirmed: position, limit: position), nil
                    )
                }
                return (
                    0, 0,
                    PulledPage(after: position, events: Array(page.dropFirst()), short: page.count < Self.pullPage)
                )
            }
            let head = try remote.head(notebook: notebook)
            // Another device gave the events back meanwhile: check them.
            if head.position >= position { continue }
            // The chain digest at the remote's head covers every event before it.
            if head.position > 0 {
                let ours = try store.read { txn in try store.event(at: head.position, in: txn) }
                guard let ours, ours.digest == head.digest else {
                    return (
                        0, try reopen(remote: remote, notebook: notebook, confirmed: position, limit: head.position),
                        nil
                    )
                }
            }
            do {
                try restore(remote: remote, notebook: notebook, from: head.position, through: position)
            } catch SyncError.diverged {
                // Another device pushed at the restored head first.
                return (0, try reopen(remote: remote, notebook: notebook, confirmed: position, limit: position), nil)
            }
            return (Int(position - head.position), 0, nil)
        }
        throw SyncError.diverged(position: position, detail: "the remote's head keeps moving back")
    }

    /// Moves the confirmed position back to the last one whose chain digest the remote shares
    /// (at most `limit`), so that this store's later confirmed events become outbox again: a
    /// remote restored from an older backup to which another device pushed first. The remote may
    /// hold some of those events again, at other positions: a device that had confirmed them
    /// too reopened them first and pushed them again. Such a copy must be the same event (stream,
    /// type, schema, actor and payload); the integration that follows takes it as the
    /// confirmation of this store's event, as it takes any outbox event the remote returns.
    /// Anything else (no shared event, or an id of this store with other content: a rewritten
    /// log, or a copy another device's rebase changed) is refused, naming the position where the
    /// logs part. Returns how many events went back to the outbox.
    private func reopen(remote: any RemoteEventLog, notebook: Identifier, confirmed: UInt64, limit: UInt64) throws
        -> Int
    {
        func agrees(_ p: UInt64) throws -> Bool {
            guard let theirs = try remote.pull(notebook: notebook, after: p - 1, limit: 1).first,
                theirs.position == p
            else { return false }
            let ours = try store.read { txn in try store.event(at: p, in: txn) }
            return ours?.id == theirs.id && ours?.digest == theirs.digest
        }
        // The chain makes agreement hold up to a position and fail after it: search for it.
        var low: UInt64 = 0
        var high = min(limit, confirmed)
        while low < high {
            let mid = low + (high - low + 1) / 2
            if try agrees(mid) { low = mid } else { high = mid - 1 }
        }
        let shared = low
        // With no event shared, the remote holds another history: refused below, after the check
        // of its chain (no copy of this store's events to look for).
        let ours: [Identifier: RecordedEvent] = try store.read { txn in
            var events: [Identifier: RecordedEvent] = [:]
            guard shared > 0 else { return events }
            try store.forEachEvent(from: shared + 1, in: txn) { view in
                guard view.recorded.position <= confirmed else { return false }
                events[view.recorded.id] = view.recorded
                return true
            }
            return events
        }
        // A copy of one of them must be the same event pushed again (``isCopy(_:of:)``): anything
        // else under one of its ids (a rebase that changed it, or a rewritten log) would replace
        // what this store holds. The remote's events after the shared one are checked against
        // their chain digests first: a digest changed by hand (a damaged remote, not another
        // history) is refused before the confirmed position moves (before 2026-12-08 the last
        // confirmed event went back to the outbox, then the pull refused it; a hostile trial).
        var after = shared
        var previous =
            shared == 0
            ? RecordedEvent.genesisDigest : try store.read { txn in try store.event(at: shared, in: txn) }?.digest ?? []
        while true {
            let page = try remote.pull(notebook: notebook, after: after, limit: 5000)
            guard let last = page.last else { break }
            for e in page {
                guard e.chainDigest(after: previous) == e.digest else {
                    throw RemoteLogError.damaged(Self.digestDamage(at: e.position))
                }
                previous = e.digest
            }
            if let clash = page.first(where: { e in ours[e.id].map { !Self.isCopy(e, of: $0) } ?? false }) {
                throw SyncError.diverged(position: clash.position, detail: "the events there differ")
            }
            after = last.position
        }
        guard shared > 0 else {
            throw SyncError.diverged(position: 1, detail: "the events there differ")
        }
        try write { session, _ in
            // Another sync of this store moved on meanwhile: leave it to the next one.
            guard try syncState(in: session.transaction).confirmed == confirmed else {
                throw SyncError.diverged(position: confirmed, detail: "the confirmed position moved during the sync")
            }
            try store.setMetadata(SyncKeys.confirmed, uint64: shared, in: session.transaction)
        }
        return Int(confirmed - shared)
    }

    /// What a remote whose chain digest at `position` is not that of its event there is told.
    static func digestDamage(at position: UInt64) -> String {
        "the chain digest it holds at position \(position) is not that of its event there (its tables were changed by hand)"
    }

    /// Whether `theirs` is `mine` pushed again: the same stream, type, schema, actor and payload
    /// (its position, version, instants and digest may differ).
    private static func isCopy(_ theirs: RecordedEvent, of mine: RecordedEvent) -> Bool {
        mine.stream == theirs.stream && mine.type == theirs.type && mine.schemaVersion == theirs.schemaVersion
            && mine.metadata.actor == theirs.metadata.actor && mine.payload == theirs.payload
    }

    /// Gives a remote restored from an older backup this store's confirmed events after `start`
    /// through `end`, unchanged, in batches (each checked by the remote to continue its log).
    private func restore(remote: any RemoteEventLog, notebook: Identifier, from start: UInt64, through end: UInt64)
        throws
    {
        var at = start
        while at < end {
            let events: [RecordedEvent] = try store.read { txn in
                var events: [RecordedEvent] = []
                var bytes = 0
                try store.forEachEvent(from: at + 1, in: txn) { view in
                    let e = view.recorded
                    guard e.position <= end, events.count < RemoteBatch.maxEvents,
                        events.isEmpty || bytes + e.payload.count <= RemoteBatch.maxPayloadBytes
                    else { return false }
                    events.append(e)
                    bytes += e.payload.count
                    return true
                }
                return events
            }
            guard let last = events.last, last.position > at else {
                throw SyncError.diverged(position: at + 1, detail: "this store lacks the confirmed event there")
            }
            do {
                at = try remote.restore(notebook: notebook, after: at, events: events).position
            } catch .invalidBatch(let message) {
                throw SyncError.diverged(
                    position: at + 1,
                    detail: "the remote, restored from an older backup, holds \(at) of the \(end) events this store "
                        + "confirmed and refused them back: \(message)")
            }
        }
    }

    /// What ``integrate(_:notebook:confirmed:)`` did.
    struct Integration {
        /// Whether it wrote (and so recorded the sync's time).
        var wrote = false
        var inPlace = 0
        /// This device's events pulled back with others' (confirmed by the rebase).
        var ownRebased = 0
        var foreign = 0
        var merged = 0
        /// The notes whose edits met changes of the same lines (one sync counts each once,
        /// however many of its rebases flagged it).
        var conflicted: Set<Identifier> = []
        var namesMerged = 0
        /// The notes whose outbox filing or tagging met a deletion of its category or tag.
        var refiled = 0
        var importsJoined = 0
        /// The notes the pulled events created, those of this device's outbox pulled back aside.
        var created: Set<Identifier> = []
    }

    /// Appends the remote's events after the confirmed position in one write: the outbox (the
    /// events after it) is taken off first, the pulled events go in at their positions with their
    /// digests checked, and what of the outbox the remote did not return is rebased on top.
    /// `created`: the notes the chunk before, in this sync, created (another device's).
    private func integrate(
        _ pulled: [RecordedEvent], notebook: Identifier, confirmed: UInt64, created: Set<Identifier> = []
    ) throws -> Integration {
        for e in pulled { try checkRemote(e) }
        return try write(reserving: Self.envelopeBytes(pulled) * 4) { session, dbs in
            // Another sync may have gone first: take only what is still new.
            let now = try syncState(in: session.transaction).confirmed
            guard now >= confirmed else { throw StoreError.diverged(position: now, detail: "confirmed position fell") }
            let fresh = pulled.drop { $0.position <= now }
            guard let first = fresh.first else { return Integration() }
            guard first.position == now + 1 else {
                throw StoreError.diverged(position: now + 1, detail: "the remote skipped positions")
            }
            let (head, _) = try session.logHead()
            if head > now, try confirmInPlace(Array(fresh), after: now, session: session, dbs: dbs) {
                try recordConfirmed(through: fresh.last!.position, notebook: notebook, in: session.transaction)
                try pruneRepairIDs(in: session.transaction)
                var done = Integration()
                done.wrote = true
                done.inPlace = fresh.count
                return done
            }
            var outbox: [RecordedEvent] = []
            // A rebase re-folds the records of the streams it touches, unless it touches so much
            // of the store that a rebuild in bulk costs less.
            let reprojecting =
                !options.rebaseRebuildsProjections && Self.reprojects(moved: Int(head - now) + fresh.count, of: head)
            if head > now {
                outbox = try session.removeTail(after: now, rebuildingProjections: !reprojecting)
            } else {
                try session.deferProjections(expecting: fresh.count)
            }
            let ours = Set(outbox.map(\.id))
            var result = Integration()
            result.wrote = true
            var confirmedVersions: [Identifier: UInt64] = [:]
            for e in fresh {
                try session.appendConfirmed(e)
                if ours.contains(e.id) {
                    confirmedVersions[e.id] = e.version
                    result.ownRebased += 1
                } else {
                    result.foreign += 1
                }
                if e.version == 1, !ours.contains(e.id), case .note(let id) = StreamRef(e.stream) {
                    result.created.insert(id)
                }
            }
            try recordConfirmed(through: fresh.last!.position, notebook: notebook, in: session.transaction)
            if !outbox.isEmpty {
                let repairs = try repairIDs(in: session.transaction)
                var rebase = try Rebase(
                    book: self, outbox: outbox, pulled: Array(fresh), confirmedVersions: confirmedVersions,
                    repairs: repairs, createdBefore: created)
                try rebase.run(session: session, dbs: dbs)
                try pruneRepairIDs(in: session.transaction)
                result.merged = rebase.merged
                result.conflicted = rebase.conflicted
                result.namesMerged = rebase.namesMerged
                result.refiled = rebase.refiled.count
                result.importsJoined = rebase.importsJoined
                if reprojecting {
                    try reproject(
                        streams: outbox.map(\.stream) + fresh.map(\.stream) + rebase.appendedStreams, session, dbs)
                }
            }
            // Events met in the remote's order here may have crossed a push of this device: checked
            // in this write when the projections are current in it (the common case: nothing to
            // repair, no mark, no other commit), else marked for the check after it.
            if fresh.contains(where: { !ours.contains($0.id) && Self.mayCross($0) }) {
                let current = outbox.isEmpty ? !session.projectsInBulk : reprojecting
                if current, UInt64(fresh.count) < Self.repairEveryEntityPast, first.position > 1 {
                    if outbox.isEmpty { try session.applyDeferredProjections() }
                    if try crossings(in: Array(fresh), writing: false, session: session, dbs: dbs).needed {
                        try markForRepair(from: first.position, in: session.transaction)
                    }
                } else {
                    try markForRepair(from: first.position, in: session.transaction)
                }
            }
            return result
        }
    }

    /// About how many bytes `events` take as envelopes: what a write of them reserves room for
    /// (a multiple of it).
    private static func envelopeBytes(_ events: [RecordedEvent]) -> Int {
        events.reduce(0) { $0 + $1.payload.count + 256 }
    }

    /// Records, in a write of the sync, that the remote confirmed the log through `position`.
    private func recordConfirmed(through position: UInt64, notebook: Identifier, in txn: borrowing Transaction)
        throws
    {
        try store.setMetadata(SyncKeys.notebook, notebook.bytes, in: txn)
        try store.setMetadata(SyncKeys.confirmed, uint64: position, in: txn)
        try markSynced(in: txn)
    }

    /// Confirms in place the outbox the remote took as ``push(to:notebook:)`` sent it (`taken`:
    /// the remote's copy, positions from the confirmed one on, its instants and chain digests),
    /// in one write. Returns false, having written nothing, when the store moved meanwhile
    /// (another sync confirmed something, a command appended to the outbox) or the events are
    /// not the common case ``confirmInPlace`` handles: the next round's pull then brings them back.
    private func confirmPushed(_ taken: [RecordedEvent], notebook: Identifier) throws -> Bool {
        guard let first = taken.first else { return false }
        return try write(reserving: Self.envelopeBytes(taken) * 2) { session, dbs in
            guard try syncState(in: session.transaction).confirmed + 1 == first.position,
                try confirmInPlace(taken, after: first.position - 1, session: session, dbs: dbs)
            else { return false }
            try recordConfirmed(through: taken.last!.position, notebook: notebook, in: session.transaction)
            try pruneRepairIDs(in: session.transaction)
            return true
        }
    }

    /// Whether a rebase that takes off and appends `moved` events in a log of `head` re-folds the
    /// records of the streams it touches (else the projections are rebuilt in bulk): a stream's
    /// records are read, folded and written again at about the cost of folding a few dozen events
    /// in bulk.
    package static func reprojects(moved: Int, of head: UInt64) -> Bool {
        moved <= 4096 || UInt64(moved) * 16 <= head
    }

    /// Re-folds the records of `streams` from the log (see ``NotesProjection/reproject``).
    private func reproject(streams: [String], _ session: borrowing WriteSession, _ dbs: ProjectionDatabases) throws {
        var notes: Set<Identifier> = []
        var categories: Set<Identifier> = []
        var tags: Set<Identifier> = []
        for s in Set(streams) {
            switch StreamRef(s) {
            case .note(let id): notes.insert(id)
            case .category(let id): categories.insert(id)
            case .tag(let id): tags.insert(id)
            case .other: break
            }
        }
        try projection.reproject(
            notes: notes.sorted(), categories: categories.sorted(), tags: tags.sorted(), store: store,
            in: session.transaction, databases: dbs)
    }

    /// The streams of the events after the confirmed position: this device's outbox.
    private func outboxStreams(after confirmed: UInt64) throws -> Set<String> {
        var streams: Set<String> = []
        try store.read { txn in
            try store.forEachEvent(from: confirmed + 1, in: txn) { v in
                streams.insert(v.stream)
                return true
            }
        }
        return streams
    }

    /// The sync error of an event of `pulled` that the fold refused (a note created twice, a
    /// category merged before its creation): the remote's event, by its position, as
    /// ``checkRemote(_:)`` names the events it refuses. Nil for any other error, or a fold error
    /// of a stream none of `pulled` is of (this device's own events).
    static func remoteCulprit(_ error: any Error, in pulled: some Collection<RecordedEvent>) -> SyncError? {
        let fold: FoldError
        if let f = error as? FoldError {
            fold = f
        } else if case .refused(let f)? = error as? NotesError {
            fold = f
        } else {
            return nil
        }
        let subject: FoldSubject
        switch fold {
        case .notCreated(let s, _), .createdTwice(let s), .foreignType(_, _, let s): subject = s
        }
        let stream: String
        switch subject {
        case .note(let id): stream = Note.stream(id)
        case .category(let id): stream = Category.stream(id)
        case .tag(let id): stream = Tag.stream(id)
        }
        let ofStream = pulled.filter { $0.stream == stream }
        // The creation a second one repeats, else the event of the type the fold names.
        let culprit: RecordedEvent?
        switch fold {
        case .createdTwice: culprit = ofStream.last { $0.type.hasSuffix("Created") } ?? ofStream.first
        case .notCreated(_, let type), .foreignType(let type, _, _):
            culprit = ofStream.first { $0.type == type } ?? ofStream.first
        }
        guard let culprit else { return nil }
        return .invalidRemoteEvent(position: culprit.position, detail: fold.description)
    }

    /// Refuses an event of another device that this program would not write: text from other
    /// devices is untrusted input. The rules are those of local input (a command's or an
    /// import's), never stricter: an event this program wrote and the remote took must be one
    /// every device running it can pull, or the notebook would stop syncing for good (events are
    /// never removed from the remote). So control characters that local input lets through (DEL
    /// and the C1 controls in titles, names and aliases; any character in an actor, as imports
    /// bring them) are taken, and shown escaped on a terminal; and a body is limited by what the
    /// remote holds (``RemoteBatch/maxPayloadBytes``), not by this device's `body-limit`, which is
    /// the most it takes from its own user.
    private func checkRemote(_ e: RecordedEvent) throws {
        func refuse(_ detail: String) -> SyncError { .invalidRemoteEvent(position: e.position, detail: detail) }
        func title(_ t: String) throws {
            guard (try? Self.validTitle(t)) == t else {
                throw refuse("a title that is empty, too long or not one line")
            }
        }
        func body(_ b: String) throws {
            let size = b.utf8.count
            if size > RemoteBatch.maxPayloadBytes {
                throw refuse("the body is \(size) bytes; the remote log holds at most \(RemoteBatch.maxPayloadBytes)")
            }
            if b.unicodeScalars.contains("\u{0}") { throw refuse(NotesError.validation(.bodyHasNUL).description) }
        }
        // A type or schema version this program does not know: a newer program may read it.
        guard store.registry.canRead(SchemaKey(e.type, e.schemaVersion)) else {
            throw refuse("\(e.type) v\(e.schemaVersion) is a type or version this program does not know")
        }
        // The device's own instant is only shown, as RFC 3339: within its years.
        if let at = e.metadata.writtenAt, !EventMetadata.writtenAtRange.contains(at) {
            throw refuse("a written-at instant out of range")
        }
        do {
            switch StreamRef(e.stream) {
            case .note:
                guard let event = try NoteEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                else { return }  // a legacy type: the store's upcasters read it, or refuse it
                switch event {
                case .created(let t, let b, _, _), .restored(_, let t, let b, _, _):
                    try title(t)
                    try body(b)
                case .retitled(let t): try title(t)
                case .bodyEdited(let b), .bodyMerged(_, let b), .bodyConflicted(_, let b): try body(b)
                case .propertySet(let key, _) where key.isEmpty: throw refuse("a property without a name")
                case .propertySet(let key, let value):
                    // Aliases are printed by `notes alias` and held as titles are.
                    guard (try? Self.validProperty(key: key, value: value, limit: RemoteBatch.maxPayloadBytes)) == value
                    else { throw refuse("a property that is not valid here") }
                default: break
                }
            case .category:
                if let c = try CategoryEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload),
                    c.change == .created || c.change == .renamed,
                    (try? Self.validCategoryName(c.name)) != c.name
                {
                    throw refuse("a category name that is empty, too long or holds a control character")
                }
            case .tag:
                if let t = try TagEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload),
                    t.change == .created || t.change == .renamed,
                    (try? Self.validTagName(t.name)) != t.name
                {
                    throw refuse("a tag name that is not valid here")
                }
            case .other:
                throw refuse("the stream \"\(e.stream)\" is not one of notes, categories or tags")
            }
        } catch let error as DecodingError {
            throw refuse("its payload does not decode: \(error.description)")
        }
    }

    /// The common case of a sync, done without rebuilding the projections: the remote returned
    /// exactly the outbox (this device's events, nothing of others', in the same order at the
    /// same positions), all of note streams, each changed by nothing but its instant. The events
    /// are rewritten in place with the remote's instants and digests, and each note touched gets
    /// its new instants in the projections. Returns false, having written nothing, when the case
    /// does not hold (the caller then takes the outbox off and rebuilds).
    private func confirmInPlace(
        _ fresh: [RecordedEvent], after confirmed: UInt64, session: borrowing WriteSession, dbs: ProjectionDatabases
    ) throws -> Bool {
        var outbox: [RecordedEvent] = []
        try store.forEachEvent(from: confirmed + 1, in: session.transaction) { view in
            outbox.append(view.recorded)
            return outbox.count <= fresh.count
        }
        guard outbox.count == fresh.count else { return false }
        var notes: [Identifier: [Int]] = [:]
        for (i, (mine, theirs)) in zip(outbox, fresh).enumerated() {
            guard mine.id == theirs.id, mine.position == theirs.position, mine.stream == theirs.stream,
                mine.version == theirs.version, mine.type == theirs.type, mine.schemaVersion == theirs.schemaVersion,
                mine.payload == theirs.payload, mine.proposedMetadata == theirs.metadata,
                case .note(let id) = StreamRef(mine.stream)
            else { return false }
            notes[id, default: []].append(i)
        }
        // Each note as the confirmed events make it, checked to differ from the projection's
        // only in its instants, before anything is written.
        var changes: [(old: Note, new: Note)] = []
        for (id, indices) in notes {
            guard let old = try projection.note(id, in: session.transaction, databases: dbs) else { return false }
            let first = fresh[indices[0]].version
            var note: Note?
            if first > 1 {
                try foldRevisions(of: id, upToVersion: first - 1, in: session.transaction) { rev in
                    note = rev.note
                    return true
                }
            }
            for i in indices {
                let e = fresh[i]
                guard let event = try NoteEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                else { return false }
                try NoteFold.apply(event, to: &note, id: id, at: e.recordedAt, version: e.version)
            }
            guard var new = note, new.version == old.version else { return false }
            let (createdAt, updatedAt) = (new.createdAt, new.updatedAt)
            new.createdAt = old.createdAt
            new.updatedAt = old.updatedAt
            guard new == old else { return false }
            new.createdAt = createdAt
            new.updatedAt = updatedAt
            changes.append((old, new))
        }
        var digest = try session.digest(at: confirmed)
        for e in fresh { digest = try session.confirmInPlace(e, previousDigest: digest) }
        try projection.refreshInstants(
            changes.sorted { $0.new.id < $1.new.id }, in: session.transaction, databases: dbs)
        return true
    }

    /// Sends the outbox in batches (one command's events never split), oldest first. Returns how
    /// many events the remote took, whether there was anything to send, whether it refused a
    /// batch because another device moved a stream first (the next round rebases and tries
    /// again), and `taken`: the remote's copy of the whole outbox when it appended every event
    /// as sent, at the positions right after the confirmed one, with nothing of another device
    /// between them (its instant is each batch's head's; the chain digests are computed here and
    /// must end at each batch's head digest), else nil (also for an outbox of more than
    /// ``syncChunk`` events).
    private func push(to remote: any RemoteEventLog, notebook: Identifier) throws -> (
        pushed: Int, sent: Bool, refused: Bool, taken: [RecordedEvent]?
    ) {
        let read: (events: [RecordedEvent], digest: [UInt8]) = try store.read { txn in
            let confirmed = try syncState(in: txn).confirmed
            var events: [RecordedEvent] = []
            try store.forEachEvent(from: confirmed + 1, in: txn) { view in
                events.append(view.recorded)
                return true
            }
            let digest =
                confirmed == 0 ? RecordedEvent.genesisDigest : try store.event(at: confirmed, in: txn)?.digest ?? []
            return (events, digest)
        }
        // An event larger than the remote takes (written before a remote was set, with a body
        // limit above the remote's) can never be pushed: what comes before it is, then the sync
        // says which it is.
        var outbox = read.events
        var oversized: RecordedEvent?
        if let i = outbox.firstIndex(where: { $0.payload.count > RemoteBatch.maxPayloadBytes }) {
            oversized = outbox[i]
            // Nor is any event of its command (one command's events are never split).
            var cut = i
            if let command = outbox[i].metadata.correlationID {
                while cut > 0, outbox[cut - 1].metadata.correlationID == command { cut -= 1 }
            }
            outbox.removeSubrange(cut...)
        }
        var pushed = 0
        // Whether the remote took (or already held) a batch.
        var accepted = false
        var taken: [RecordedEvent] = []
        // A larger outbox is confirmed by the pulls, a chunk a write, as a pull of as many events
        // is; so is one with events of categories or tags, which ``confirmInPlace`` leaves to a
        // rebase.
        var confirmable =
            !outbox.isEmpty && outbox.count <= Self.syncChunk
            && outbox.allSatisfy { if case .note = StreamRef($0.stream) { true } else { false } }
        if confirmable { taken.reserveCapacity(outbox.count) }
        var digest = read.digest
        for batch in Self.batches(outbox) {
            let result: RemoteAppendResult
            do {
                result = try remote.append(notebook: notebook, batch: batch)
            } catch {
                guard case .conflict = error else { throw error }
                return (pushed, true, true, nil)
            }
            pushed += result.appended
            accepted = true
            guard confirmable, let at = result.head.recordedAt else {
                confirmable = false
                continue
            }
            for outcome in result.outcomes {
                guard case .appended(let position) = outcome, taken.count < outbox.count,
                    position == outbox[taken.count].position
                else {
                    confirmable = false
                    break
                }
                var e = outbox[taken.count]
                e.metadata = e.proposedMetadata
                e.recordedAt = at
                e.digest = e.chainDigest(after: digest)
                digest = e.digest
                taken.append(e)
            }
            if taken.last?.position != result.head.position || digest != result.head.digest { confirmable = false }
        }
        if let oversized {
            // What was pushed belongs to this notebook now: the next sync needs no `--join`.
            if accepted, try syncState().notebook == nil {
                try write { session, _ in
                    try store.setMetadata(SyncKeys.notebook, notebook.bytes, in: session.transaction)
                }
            }
            throw SyncError.oversizedEvent(
                position: oversized.position, stream: oversized.stream, bytes: oversized.payload.count)
        }
        let all = confirmable && taken.count == outbox.count && options.pushAnswerConfirms
        return (pushed, !outbox.isEmpty, false, all ? taken : nil)
    }

    /// The outbox as batches: runs of one stream as one append each, a batch closed between
    /// commands (events sharing a correlation id stay together) past half the remote's caps, and
    /// inside a command only at the caps themselves.
    package static func batches(_ events: [RecordedEvent]) -> [RemoteBatch] {
        var batches: [RemoteBatch] = []
        var current: [RemoteAppend] = []
        var count = 0
        var bytes = 0
        for (i, e) in events.enumerated() {
            let sameCommand =
                i > 0 && e.metadata.correlationID != nil
                && e.metadata.correlationID == events[i - 1].metadata.correlationID
            let full = count + 1 > RemoteBatch.maxEvents || bytes + e.payload.count > RemoteBatch.maxPayloadBytes
            let half =
                count + 1 > RemoteBatch.maxEvents / 2 || bytes + e.payload.count > RemoteBatch.maxPayloadBytes / 2
            // A command larger than a batch (a category of thousands of notes deleted) is split
            // at the cap: each batch is still whole on the remote.
            if count > 0, full || (!sameCommand && half) {
                batches.append(RemoteBatch(current))
                current = []
                count = 0
                bytes = 0
            }
            let event = NewEvent(
                id: e.id, type: e.type, schemaVersion: e.schemaVersion, payload: e.payload,
                metadata: e.proposedMetadata)
            if let last = current.last, last.stream == e.stream {
                current[current.count - 1].events.append(event)
            } else {
                current.append(
                    RemoteAppend(
                        stream: e.stream, expecting: e.version > 1 ? .exact(e.version - 1) : .noStream, events: [event])
                )
            }
            count += 1
            bytes += e.payload.count
        }
        if !current.isEmpty { batches.append(RemoteBatch(current)) }
        return batches
    }

    /// The log position of version `version` of note `id`, or nil.
    public func position(of id: Identifier, version: UInt64) throws(NotesError) -> UInt64? {
        guard version > 0 else { return nil }
        do {
            return try store.read { txn in
                var position: UInt64?
                try store.forEachEvent(inStream: Note.stream(id), versions: version...version, in: txn) { view in
                    position = view.position
                    return false
                }
                return position
            }
        } catch { throw NotesError.wrap(error) }
    }

    /// The ids of the notes whose body holds a sync conflict not resolved yet.
    func conflictedNoteIDs() throws(NotesError) -> Set<Identifier> {
        try read { txn, dbs in Set(try projection.conflictedIDs(in: txn, databases: dbs)) }
    }

    /// Notes whose body holds a sync conflict not resolved yet, by title.
    public func conflictedNotes() throws(NotesError) -> [Note] {
        try read { txn, dbs in
            try projection.conflictedIDs(in: txn, databases: dbs).map { id in
                guard let note = try projection.note(id, in: txn, databases: dbs) else {
                    throw StoreError.damagedProjection("the conflicts projection names a note it does not hold")
                }
                return note
            }
        }
        .sorted { ($0.title.lowercased(), $0.id) < ($1.title.lowercased(), $1.id) }
    }
}

/// Rewrites the outbox on top of the remote's events, inside the write of
/// ``Notebook/integrate(_:notebook:confirmed:)``; see the README's "Sync" for the rules.
struct Rebase {
    let book: Notebook
    let outbox: [RecordedEvent]
    /// The remote's versions of outbox events it returned, by id.
    let confirmedVersions: [Identifier: UInt64]
    var merged = 0
    /// The outbox's repairs of crossed pushes (``Notebook/repairIDs(in:)``).
    let repairs: Set<Identifier>
    /// The notes this rebase flagged as conflicting.
    var conflicted: Set<Identifier> = []
    var namesMerged = 0
    /// The notes an outbox event filed under (or tagged with) a category or tag another device
    /// deleted meanwhile: left uncategorized (the tagging dropped), and counted, so the sync says
    /// so (before 2026-12-08 it said nothing).
    var refiled: Set<Identifier> = []
    /// Categories and tags created here that the remote already had by name: ours -> theirs.
    private var entityMap: [Identifier: Identifier] = [:]
    /// Per stream, the outbox's versions to the versions they have now.
    private var versions: [String: [UInt64: UInt64]] = [:]
    /// Per stream, the version the outbox's first event of it followed.
    private var baseOf: [String: UInt64] = [:]
    /// Per stream, the remote's version of the last of the outbox's events of it that the remote
    /// returned (one an earlier sync sent and never heard back of, or the same event another
    /// device pushed: one history imported on both) before the first it did not: where this
    /// device's changes that are rebased start from in the shared log, as merges and conflicts
    /// name it. Absent when the remote returned none before it (``baseOf`` is that place).
    private var sharedBaseOf: [String: UInt64] = [:]
    /// The streams of the outbox.
    private var outboxStreams: Set<String> = []
    /// The names the pulled events give categories and tags, by stream, and whether each is live.
    private var pulledNames: [String: (name: String, live: Bool)] = [:]
    /// What became of the categories and tags read so far.
    private var fates = EntityFates()
    /// The notes the pulled events touched.
    private var pulledNotes: Set<Identifier> = []
    /// The last version of each note stream that another device's pulled event made: where a
    /// conflict's other side ends (this device's own events, rebased or confirmed after it, are
    /// no part of it).
    private var lastForeignVersion: [String: UInt64] = [:]
    /// The streams this rebase appended to, in order (with repeats).
    private(set) var appendedStreams: [String] = []
    /// The categories and tags this rebase deleted (as they are now), with the deleting event.
    private var deletions: [(kind: EntityKind, id: Identifier, event: RecordedEvent)] = []
    /// Notes whose edit this rebase turned into a conflict, with that command's correlation id.
    private var flagged: [Identifier: Identifier?] = [:]
    /// The streams of notes this outbox imported from Markdown files that a pulled note was
    /// imported from too (``findDuplicateImports(txn:)``): dropped, theirs stands.
    private var duplicateImports: Set<String> = []
    /// The streams of categories and tags this outbox created for those notes alone: dropped too.
    private var droppedEntities: Set<String> = []
    /// The notes the pulled events created, and those the chunk before did in the same sync.
    private var pulledCreations: Set<Identifier> = []
    /// How many notes of this outbox were dropped as imports of the files a pulled note came from.
    var importsJoined: Int { duplicateImports.count }

    init(
        book: Notebook, outbox: [RecordedEvent], pulled: [RecordedEvent], confirmedVersions: [Identifier: UInt64],
        repairs: Set<Identifier> = [], createdBefore: Set<Identifier> = []
    ) throws {
        self.book = book
        self.repairs = repairs
        pulledCreations = createdBefore
        self.outbox = outbox
        self.confirmedVersions = confirmedVersions
        var rebased: Set<String> = []
        for e in outbox {
            outboxStreams.insert(e.stream)
            if baseOf[e.stream] == nil { baseOf[e.stream] = e.version - 1 }
            if let v = confirmedVersions[e.id] { versions[e.stream, default: [:]][e.version] = v }
            if !rebased.contains(e.stream) {
                if let v = confirmedVersions[e.id] { sharedBaseOf[e.stream] = v } else { rebased.insert(e.stream) }
            }
        }
        for e in pulled {
            if case .note(let id) = StreamRef(e.stream) {
                pulledNotes.insert(id)
                if e.version == 1 { pulledCreations.insert(id) }
                if confirmedVersions[e.id] == nil { lastForeignVersion[e.stream] = e.version }
            }
            let kind: EntityKind
            switch StreamRef(e.stream) {
            case .category: kind = .category
            case .tag: kind = .tag
            case .note, .other: continue
            }
            guard let name = try EntityEvent.decode(e, kind)?.name else { continue }
            // A deletion keeps the name it had, no longer live.
            pulledNames[e.stream] = name.isEmpty ? (pulledNames[e.stream]?.name ?? "", false) : (name, true)
        }
    }

    /// The version `old` of `stream` (as the outbox numbered it) has now.
    private func mapped(_ old: UInt64, in stream: String) -> UInt64? {
        if old <= baseOf[stream] ?? 0 { return old }
        return versions[stream]?[old]
    }

    mutating func run(session: borrowing WriteSession, dbs: ProjectionDatabases) throws {
        try findDuplicateImports(txn: session.transaction)
        for e in outbox
        where confirmedVersions[e.id] == nil && !duplicateImports.contains(e.stream)
            && !droppedEntities.contains(e.stream)
        {
            // Rebased here, the event keeps the instant it was written at as the device's own.
            var metadata = e.proposedMetadata
            var event = NewEvent(
                id: e.id, type: e.type, schemaVersion: e.schemaVersion, payload: e.payload, metadata: metadata)
            var stream = e.stream
            var extra: [NewEvent] = []
            switch StreamRef(e.stream) {
            case .note(let id):
                guard
                    let decoded = try NoteEvent.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
                else { break }
                let head = try book.store.streamVersion(stream, in: session.transaction)
                // Untouched: nothing but this outbox's own events follow its base. The stream's
                // head alone cannot tell: once an earlier outbox event of the note is rebased
                // after the other device's, the head is that event's new version.
                let untouched = mapped(e.version - 1, in: stream) == head && !pulledNotes.contains(id)
                let remapped = remapEntities(decoded)
                let resolved = try withoutDeletedEntities(remapped, txn: session.transaction)
                if !repairs.contains(e.id), Self.lostItsTarget(remapped, resolved) { refiled.insert(id) }
                guard var rewritten = resolved else { continue }
                if repairs.contains(e.id) {
                    // A repair of crossed pushes, refused and rebased: done again on the note as
                    // it is now, or dropped when nothing is left to repair.
                    guard let again = try repairAgain(rewritten, decoded, e, note: id, txn: session.transaction)
                    else { continue }
                    rewritten = again
                } else if case .untagged(let tag) = decoded, case .untagged(let now) = rewritten, now != tag,
                    try currentNote(id, txn: session.transaction)?.tags.contains(tag) ?? false
                {
                    // The note still carries the tag itself (ended, not yet taken off): that one.
                    rewritten = .untagged(tag: tag)
                }
                if case .restored(let from, let title, let body, let pinned, let category) = rewritten,
                    let now = mapped(from, in: stream), now != from
                {
                    rewritten = .restored(
                        fromVersion: now, title: title, body: body, pinned: pinned, category: category)
                }
                if !untouched, let ours = Self.body(of: rewritten) {
                    let base = try originalNote(id, atVersion: e.version - 1, txn: session.transaction)
                    let theirs = try currentNote(id, txn: session.transaction)
                    if let base, let theirs {
                        // The version of the shared log this device's changes of the note started
                        // from (its earlier outbox events, rebased, come after the other device's).
                        // Past the events the remote already held (before 2026-12-06 a store that
                        // joined with a history another device had pushed too named v0 here).
                        let baseVersion = sharedBaseOf[stream] ?? baseOf[stream] ?? (e.version - 1)
                        var body = ours
                        var clean = true
                        if theirs.body != base.body, theirs.body != ours, ours != base.body {
                            // The other device's versions: not this device's events rebased
                            // before this one (a pin behind the edit), which came after them
                            // (before 2026-12-07 "v2-v3" named its own pin v3 too).
                            let theirsEnd =
                                lastForeignVersion[stream].map { max(min($0, theirs.version), baseVersion + 1) }
                                ?? theirs.version
                            let theirRange =
                                theirsEnd > baseVersion + 1 ? "v\(baseVersion + 1)-v\(theirsEnd)" : "v\(theirsEnd)"
                            // The markers of many conflicting hunks could make an event larger
                            // than the remote takes, which would stop this device's pushes for
                            // good: past half of it, the conflict holds both sides whole under
                            // one set of markers (under the whole when each side is under half,
                            // as bodies written with a remote set are).
                            let labels = ThreeWayMerge.Labels(
                                ours: "edit of v\(baseVersion) by \(Self.oneLine(e.metadata.actor).prefix(200))",
                                theirs: "\(theirRange), first in the shared log")
                            let result = ThreeWayMerge.merge(
                                base: base.body, ours: ours, theirs: theirs.body, labels: labels,
                                limit: RemoteBatch.maxPayloadBytes / 2)
                            body = result.text
                            if !result.isClean && body.utf8.count > RemoteBatch.maxPayloadBytes - (64 << 10) {
                                // Still too large (a side imported, or written before a remote was
                                // set, or a restore of a conflict): this device's text whole, and
                                // where the other's is; it stays in the log, so nothing is lost.
                                body = ThreeWayMerge.conflict(
                                    ours: ours,
                                    theirs:
                                        "(the text of v\(theirs.version) is too large to keep beside this edit; "
                                        + "`notes show \(id.hex.prefix(8)) --at \(theirs.version)` shows it)\n",
                                    labels: labels, lineEndingOf: base.body)
                            }
                            clean = result.isClean
                            if clean {
                                merged += 1
                            } else {
                                // Notes, not edits: two edits of one note conflicting are one.
                                conflicted.insert(id)
                                // The edit and its flag are one command (an undo takes back both,
                                // markers and flag), whether or not the edit was part of one.
                                if metadata.correlationID == nil { metadata.correlationID = e.id }
                                flagged[id] = metadata.correlationID
                                var meta = metadata
                                meta.causationID = e.id
                                let flag = NoteEvent.propertySet(
                                    key: NoteProperty.conflict.rawValue,
                                    value:
                                        "an edit of v\(baseVersion) by \(Self.oneLine(e.metadata.actor)) and \(theirRange) changed the same lines"
                                )
                                extra.append(flag.newEvent(id: Self.derivedID(e.id, role: "conflict"), metadata: meta))
                            }
                        } else if ours == base.body {
                            body = theirs.body
                        }
                        if case .restored(let from, let title, _, let pinned, let category) = rewritten,
                            case .restored(_, _, _, _, let asWritten) = decoded
                        {
                            // A restore (or an undo) is a change from the note as this device had
                            // it, applied on top of the other device's changes field by field:
                            // what it did not change stays as the other device left it. The
                            // category is compared as this device wrote it (before categories
                            // deleted or merged elsewhere were resolved).
                            rewritten = .restored(
                                fromVersion: from, title: title == base.title ? theirs.title : title, body: body,
                                pinned: pinned == base.pinned ? theirs.pinned : pinned,
                                category: asWritten == base.category ? theirs.category : category)
                            // A restore takes a note out of the trash; one this device had not
                            // trashed and the other device trashed stays trashed.
                            if !base.trashed && theirs.trashed {
                                var meta = metadata
                                meta.causationID = e.id
                                extra.append(
                                    NoteEvent.trashed.newEvent(
                                        id: Self.derivedID(e.id, role: "trashed"), metadata: meta))
                            }
                        } else if body != ours {
                            rewritten =
                                clean
                                ? .bodyMerged(base: baseVersion, body: body)
                                : .bodyConflicted(base: baseVersion, body: body)
                        }
                    }
                }
                // The same command's resolution of an earlier conflict must not clear the flag
                // its own rebased edit has just set.
                if case .propertySet(NoteProperty.conflict.rawValue, "") = rewritten,
                    let command = flagged[id], command == metadata.correlationID
                {
                    continue
                }
                if rewritten != decoded { event = rewritten.newEvent(id: e.id, metadata: metadata) }
            case .category(let id), .tag(let id):
                let kind: EntityKind = StreamRef(e.stream) == .category(id) ? .category : .tag
                // A repair's merge of one of two same-named ones, refused and rebased: only while
                // both still live under one name (another device may have renamed or ended one).
                if repairs.contains(e.id), let into = try EntityEvent.decode(e, kind)?.into {
                    guard try stillSameNamed(id, into, kind: kind, txn: session.transaction) else { continue }
                }
                if let into = try mergeTarget(e, id: id, kind: kind, txn: session.transaction, dbs: dbs) {
                    try merge(id, into: into, kind: kind, intent: e, session: session, dbs: dbs)
                    continue
                }
                guard let target = try entityStream(e, id: id, kind: kind, txn: session.transaction, dbs: dbs)
                else { continue }
                stream = target
                if e.type == CategoryEvent.deleted.type || e.type == TagEvent.deleted.type {
                    deletions.append((kind, entityMap[id] ?? id, e))
                }
            case .other: break
            }
            let result = try session.append([event] + extra, to: stream, expecting: .any)
            appendedStreams.append(stream)
            fates.record(stream, nil)
            versions[e.stream, default: [:]][e.version] = result.streamVersion - UInt64(extra.count)
        }
        try fileAwayFromDeleted(session: session, dbs: dbs)
    }

    /// A Markdown folder imported on two devices before either synced: each made a note of every
    /// file, with ids of its own. A note of this outbox made by one import (all its events one
    /// command's, none pushed yet) from a file that a pulled note was imported from too (the same
    /// path in the folder and the same bytes, whatever the folder's place on each device) is the
    /// same note: ours is dropped, every event of it, and theirs stands (it holds that text as
    /// its import left it, and what the other device did since). Only a match that is the only
    /// one on both sides counts; an empty file, or a note trashed on either side, never matches.
    private mutating func findDuplicateImports(txn: borrowing Transaction) throws {
        // Per note created in this outbox: the one command of all its events (nil when several,
        // none, or when the remote confirmed one of them), and where its events are.
        var created: [String: (id: Identifier, command: Identifier?, events: [Int])] = [:]
        for (i, e) in outbox.enumerated() {
            guard case .note(let id) = StreamRef(e.stream), baseOf[e.stream] == 0, !pulledNotes.contains(id)
            else { continue }
            let command = confirmedVersions[e.id] == nil ? e.metadata.correlationID : nil
            created[e.stream, default: (id, command, [])].events.append(i)
            if created[e.stream]?.command != command { created[e.stream]?.command = nil }
        }
        var ours: [ImportedFile: [String]] = [:]
        let outbox = outbox
        for (stream, c) in created where c.command != nil {
            var note: Note?
            try fold(c.events.lazy.map { outbox[$0] }, into: &note, id: c.id)
            guard let note, let file = ImportedFile(note) else { continue }
            ours[file, default: []].append(stream)
        }
        guard !ours.isEmpty else { return }
        // Theirs: notes this pull created (a note the pull only changed was here before, and so
        // was not imported before the two devices synced).
        var theirs: [ImportedFile: Int] = [:]
        for id in pulledCreations where !outboxStreams.contains(Note.stream(id)) {
            guard let note = try currentNote(id, txn: txn), let file = ImportedFile(note), ours[file] != nil
            else { continue }
            theirs[file, default: 0] += 1
        }
        for (file, streams) in ours where streams.count == 1 && theirs[file] == 1 {
            duplicateImports.insert(streams[0])
        }
        guard !duplicateImports.isEmpty else { return }
        // The categories and tags the import created here for the notes dropped alone go too:
        // created in this outbox (their one event), named by no event of a note kept.
        var keptNames: Set<Identifier> = []
        var droppedNames: Set<Identifier> = []
        var entityEvents: [String: Int] = [:]
        for e in outbox {
            switch StreamRef(e.stream) {
            case .note:
                for event in try noteEvents(e) {
                    guard let named = Self.entityNamed(by: event) else { continue }
                    if duplicateImports.contains(e.stream) {
                        droppedNames.insert(named)
                    } else {
                        keptNames.insert(named)
                    }
                }
            case .category, .tag:
                entityEvents[e.stream, default: 0] += confirmedVersions[e.id] == nil && e.version == 1 ? 1 : 2
            case .other: break
            }
        }
        for (stream, count) in entityEvents where count == 1 {
            switch StreamRef(stream) {
            case .category(let id), .tag(let id):
                if droppedNames.contains(id) && !keptNames.contains(id) { droppedEntities.insert(stream) }
            case .note, .other: break
            }
        }
    }

    /// The category or tag a note event names, if any.
    private static func entityNamed(by event: NoteEvent) -> Identifier? {
        switch event {
        case .created(_, _, _, let category), .categorized(let category), .restored(_, _, _, _, let category):
            return category
        case .tagged(let tag), .untagged(let tag): return tag
        default: return nil
        }
    }

    /// Delete wins over assign, whichever device pushed first: a note another device filed under
    /// a category or tag this outbox deleted (so the deleting command did not see it) is taken
    /// out of it, by events whose ids derive from the deletion's.
    private mutating func fileAwayFromDeleted(session: borrowing WriteSession, dbs: ProjectionDatabases) throws {
        for (kind, id, e) in deletions {
            var meta = e.metadata
            meta.causationID = e.id
            for n in try notesFiled(under: id, kind: kind, session: session, dbs: dbs) {
                guard let note = try currentNote(n, txn: session.transaction) else { continue }
                let event: NoteEvent
                switch kind {
                case .category where note.category == id: event = .categorized(category: nil)
                case .tag where note.tags.contains(id): event = .untagged(tag: id)
                default: continue
                }
                let stored = event.newEvent(
                    id: Self.derivedID(e.id, role: "deleted \(n.uuidString)"), metadata: meta)
                try session.append([stored], to: Note.stream(n), expecting: .any)
                appendedStreams.append(Note.stream(n))
            }
        }
    }

    /// The notes that may be filed under the category or tag `id`: those the projections (as they
    /// were before this sync) list under it, and those this sync's events touched. Each is to be
    /// checked against the log.
    private func notesFiled(
        under id: Identifier, kind: EntityKind, session: borrowing WriteSession, dbs: ProjectionDatabases
    ) throws -> [Identifier] {
        var candidates = pulledNotes
        for o in outbox { if case .note(let n) = StreamRef(o.stream) { candidates.insert(n) } }
        candidates.formUnion(try book.notesListed(under: id, kind: kind, in: session.transaction, databases: dbs))
        return candidates.sorted()
    }

    /// The stream an outbox event of a category or tag goes to now, or nil for the creation of
    /// one the remote already has by that name: dropped, and its id mapped to the remote's.
    private mutating func entityStream(
        _ e: RecordedEvent, id: Identifier, kind: EntityKind, txn: borrowing Transaction, dbs: ProjectionDatabases
    ) throws -> String? {
        let event = try EntityEvent.decode(e, kind)
        let created = event?.change == .created ? event?.name : nil
        // An entity this device created and then deleted stays its own: folded, its deletion
        // would delete the other device's.
        let deletedHere = outbox.contains { o in
            o.stream == e.stream && (o.type == CategoryEvent.deleted.type || o.type == TagEvent.deleted.type)
        }
        if let created, !deletedHere,
            let existing = try existingEntity(named: created, kind: kind, other: id, txn: txn, dbs: dbs)
        {
            entityMap[id] = existing
            namesMerged += 1
            return nil
        }
        let target = entityMap[id] ?? id
        return kind == .category ? Category.stream(target) : Tag.stream(target)
    }

    /// An actor as a conflict's marker line and flag name it: any character that would break
    /// the line (an import or another device may bring an actor with any) as a space.
    static func oneLine(_ actor: String) -> String {
        String(String.UnicodeScalarView(actor.unicodeScalars.map { breaksLine($0) ? " " : $0 }))
    }

    /// The body an event sets (a restore or an undo too), or nil.
    private static func body(of event: NoteEvent) -> String? {
        switch event {
        case .bodyEdited(let body), .bodyMerged(_, let body), .bodyConflicted(_, let body),
            .restored(_, _, let body, _, _):
            return body
        default: return nil
        }
    }

    /// The event with categories and tags this device created under a name the remote had
    /// first replaced by the remote's.
    private func remapEntities(_ event: NoteEvent) -> NoteEvent {
        guard !entityMap.isEmpty else { return event }
        func m(_ id: Identifier?) -> Identifier? { id.map { entityMap[$0] ?? $0 } }
        switch event {
        case .created(let title, let body, let pinned, let category):
            return .created(title: title, body: body, pinned: pinned, category: m(category))
        case .categorized(let category): return .categorized(category: m(category))
        case .restored(let from, let title, let body, let pinned, let category):
            return .restored(fromVersion: from, title: title, body: body, pinned: pinned, category: m(category))
        case .tagged(let tag): return .tagged(tag: m(tag)!)
        case .untagged(let tag): return .untagged(tag: m(tag)!)
        default: return event
        }
    }

    /// Whether `resolved` (``withoutDeletedEntities(_:txn:)`` of `event`) lost the category or
    /// tag `event` named: deleted elsewhere.
    private static func lostItsTarget(_ event: NoteEvent, _ resolved: NoteEvent?) -> Bool {
        switch (event, resolved) {
        case (.tagged, nil), (.categorized(_?), .categorized(nil)?), (.created(_, _, _, _?), .created(_, _, _, nil)?):
            return true
        default: return false
        }
    }

    /// The event with the categories and tags other devices deleted or merged meanwhile
    /// resolved: a deleted category becomes none, a tagging with a deleted tag is dropped (nil)
    /// (delete wins over assign); a merged one is replaced by the one it was merged into.
    private mutating func withoutDeletedEntities(_ event: NoteEvent, txn: borrowing Transaction) throws -> NoteEvent? {
        func now(_ id: Identifier?, _ kind: EntityKind) throws -> Identifier? {
            guard let id else { return nil }
            return try fates.heir(of: id, kind: kind, in: book, txn: txn)
        }
        switch event {
        case .created(let title, let body, let pinned, let category):
            return .created(title: title, body: body, pinned: pinned, category: try now(category, .category))
        case .categorized(let category):
            return .categorized(category: try now(category, .category))
        case .restored(let from, let title, let body, let pinned, let category):
            return .restored(
                fromVersion: from, title: title, body: body, pinned: pinned, category: try now(category, .category))
        case .tagged(let tag):
            return try now(tag, .tag).map { .tagged(tag: $0) }
        case .untagged(let tag):
            // The tag the note carries now: the merged one's heir, or the deleted one itself.
            return .untagged(tag: try now(tag, .tag) ?? tag)
        default:
            return event
        }
    }

    /// A repair of crossed pushes (``Notebook/repairCrossedPushes(mayWrite:)``) from the outbox, on the
    /// note as it is after the other devices' events: a category moved on from the one the note is
    /// under now when that one ended (dropped when it lives: another device moved the note), a
    /// tag taken off only while the note carries it (never its heir), a tag added as resolved.
    private mutating func repairAgain(
        _ rewritten: NoteEvent, _ decoded: NoteEvent, _ e: RecordedEvent, note id: Identifier,
        txn: borrowing Transaction
    ) throws -> NoteEvent? {
        let note = try currentNote(id, txn: txn)
        switch decoded {
        case .tagged:
            // Added with the untag of the ended tag it replaces (one command): only while the
            // note still carries that one (another device may have taken it off).
            let replaced = outbox.lazy.filter {
                $0.stream == e.stream && $0.metadata.correlationID == e.metadata.correlationID && $0.id != e.id
            }
            .compactMap { o -> Identifier? in
                if case .untagged(let t)? = try? NoteEvent.decode(
                    type: o.type, schemaVersion: o.schemaVersion, payload: o.payload)
                {
                    return t
                }
                return nil
            }
            .first
            guard let replaced else { return rewritten }
            return try carriesEnded(note, replaced, txn: txn) ? rewritten : nil
        case .categorized:
            guard let now = note?.category, try fates.fate(of: now, kind: .category, in: book, txn: txn).fate != .live
            else { return nil }
            return .categorized(category: try fates.heir(of: now, kind: .category, in: book, txn: txn))
        case .untagged(let tag):
            return try carriesEnded(note, tag, txn: txn) ? decoded : nil
        default:
            return rewritten
        }
    }

    /// Whether `note` carries `tag` and the tag has ended (a repair never takes off a live tag:
    /// its merge may have been dropped, another device may have renamed it).
    private mutating func carriesEnded(_ note: Note?, _ tag: Identifier, txn: borrowing Transaction) throws -> Bool {
        guard let note, note.tags.contains(tag) else { return false }
        return try fates.fate(of: tag, kind: .tag, in: book, txn: txn).fate != .live
    }

    /// Whether `id` and `into` both live (in the log as it is now, in this write) under names
    /// that are one name.
    private mutating func stillSameNamed(
        _ id: Identifier, _ into: Identifier, kind: EntityKind, txn: borrowing Transaction
    ) throws -> Bool {
        guard try fates.fate(of: id, kind: kind, in: book, txn: txn).fate == .live,
            try fates.fate(of: into, kind: kind, in: book, txn: txn).fate == .live,
            let a = try book.naming(of: id, kind: kind, in: txn), let b = try book.naming(of: into, kind: kind, in: txn)
        else { return false }
        return Category.nameKey(a.name) == Category.nameKey(b.name)
    }

    /// The category or tag an outbox rename of `id` must merge into: a live one the remote has
    /// under the new name (given on another device), or nil.
    private func mergeTarget(
        _ e: RecordedEvent, id: Identifier, kind: EntityKind, txn: borrowing Transaction, dbs: ProjectionDatabases
    ) throws -> Identifier? {
        guard entityMap[id] == nil else { return nil }
        guard let event = try EntityEvent.decode(e, kind), event.change == .renamed else { return nil }
        return try existingEntity(named: event.name, kind: kind, other: id, txn: txn, dbs: dbs)
    }

    /// An outbox rename of `id` to the name the remote's `into` has: `id`'s notes are filed under
    /// `into` (each with an id derived from the rename's, so that two devices rebasing the same
    /// rename write the same events), and `id` ends with a merge event of the rename's id.
    private mutating func merge(
        _ id: Identifier, into: Identifier, kind: EntityKind, intent e: RecordedEvent,
        session: borrowing WriteSession, dbs: ProjectionDatabases
    ) throws {
        // The notes filed under it now, each checked against the log.
        var meta = e.metadata
        meta.causationID = e.id
        for n in try notesFiled(under: id, kind: kind, session: session, dbs: dbs) {
            guard let note = try currentNote(n, txn: session.transaction) else { continue }
            var events: [NoteEvent] = []
            switch kind {
            case .category where note.category == id:
                events = [.categorized(category: into)]
            case .tag where note.tags.contains(id):
                events = (note.tags.contains(into) ? [] : [.tagged(tag: into)]) + [.untagged(tag: id)]
            default:
                continue
            }
            let stored = events.enumerated().map { i, event in
                event.newEvent(id: Self.derivedID(e.id, role: "merge \(n.uuidString) \(i)"), metadata: meta)
            }
            try session.append(stored, to: Note.stream(n), expecting: .any)
            appendedStreams.append(Note.stream(n))
        }
        let end: NewEvent
        let stream: String
        switch kind {
        case .category:
            end = CategoryEvent.merged(into: into).newEvent(id: e.id, metadata: e.metadata)
            stream = Category.stream(id)
        case .tag:
            end = TagEvent.merged(into: into).newEvent(id: e.id, metadata: e.metadata)
            stream = Tag.stream(id)
        }
        let result = try session.append([end], to: stream, expecting: .any)
        appendedStreams.append(stream)
        fates.record(stream, (.merged(into: into), (e.id, e.metadata.actor)))
        versions[e.stream, default: [:]][e.version] = result.streamVersion
        entityMap[id] = into
        namesMerged += 1
    }

    /// The note as this device had it after its outbox version `version`: the confirmed log up to
    /// the outbox's base, then the outbox's own events as they were written.
    private func originalNote(_ id: Identifier, atVersion version: UInt64, txn: borrowing Transaction) throws -> Note? {
        let stream = Note.stream(id)
        let base = baseOf[stream] ?? version
        var note: Note?
        if base > 0 {
            try book.foldRevisions(of: id, upToVersion: min(base, version), in: txn) { rev in
                note = rev.note
                return true
            }
        }
        try fold(outbox.lazy.filter { $0.stream == stream && $0.version <= version }, into: &note, id: id)
        return note
    }

    /// Folds outbox events of note `id` into `note`.
    private func fold(_ events: some Sequence<RecordedEvent>, into note: inout Note?, id: Identifier) throws {
        for e in events {
            for event in try noteEvents(e) {
                try NoteFold.apply(event, to: &note, id: id, at: e.recordedAt, version: e.version)
            }
        }
    }

    /// The note events an outbox event of a note stream stands for today. An outbox may hold
    /// events of old schemas (a store that joins with the history it kept): lifted as every fold
    /// lifts them, or a note created by one was not created.
    private func noteEvents(_ e: RecordedEvent) throws -> [NoteEvent] {
        let lifted = try e.payload.withUnsafeBytes { bytes in
            try book.store.registry.upcast(SchemaKey(e.type, e.schemaVersion), payload: bytes)
        }
        return try lifted.compactMap { key, payload in
            try NoteEvent.decode(type: key.type, schemaVersion: key.version, payload: payload)
        }
    }

    /// The note as the log holds it now, in this write.
    private func currentNote(_ id: Identifier, txn: borrowing Transaction) throws -> Note? {
        var note: Note?
        try book.foldRevisions(of: id, in: txn) { rev in
            note = rev.note
            return true
        }
        return note
    }

    /// A live category or tag of the remote named `name` (case aside) other than `other`: one
    /// the pulled events name, or one the store held before this sync that is not in the outbox.
    private func existingEntity(
        named name: String, kind: EntityKind, other: Identifier, txn: borrowing Transaction, dbs: ProjectionDatabases
    ) throws -> Identifier? {
        let key = name.lowercased()
        for (s, (n, live)) in pulledNames where live && n.lowercased() == key {
            if case .category(let id) = StreamRef(s), kind == .category, id != other { return id }
            if case .tag(let id) = StreamRef(s), kind == .tag, id != other { return id }
        }
        var held: (id: Identifier, deleted: Bool)?
        if kind == .category {
            if let c = try book.projection.category(named: name, in: txn, databases: dbs) { held = (c.id, c.deleted) }
        } else if let t = try book.projection.tag(named: name, in: txn, databases: dbs) {
            held = (t.id, t.deleted)
        }
        if let held, held.id != other, !held.deleted, !outboxStreams.contains(kind.stream(held.id)),
            pulledNames[kind.stream(held.id)] == nil
        {
            return held.id
        }
        return nil
    }

    /// An id derived from an intent's id and a role: two devices rebasing the same intent derive
    /// the same id, so the remote stores the event once.
    static func derivedID(_ intent: Identifier, role: String) -> Identifier {
        var h = SHA256()
        h.update(intent.bytes)
        h.update(role)
        var bytes = h.finalize()
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: a name-based id of our own scheme
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return Identifier(bytes: bytes.prefix(16))!
    }
}

/// The file a note was imported from, as two devices' imports of one folder agree on it: its
/// path in the folder and the SHA-256 of its bytes (``NoteProperty/source``,
/// ``NoteProperty/sourceDigest``). Nil for a note not imported, trashed, or of an empty file.
struct ImportedFile: Hashable {
    let path: String
    let digest: String

    /// The SHA-256 of no bytes: an empty file tells nothing of where a note came from.
    static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    init?(_ note: Note) {
        guard !note.trashed, let path = note.properties[NoteProperty.source.rawValue],
            let digest = note.properties[NoteProperty.sourceDigest.rawValue], digest != Self.emptyDigest
        else { return nil }
        self.path = path
        self.digest = digest
    }
}
