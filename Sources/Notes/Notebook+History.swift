public import Basics
public import EventStore
package import LMDB
public import TextDiff

/// Names a past state of a note: after a version, or as it was at an instant.
public enum RevisionSelector: Sendable, Equatable {
    case version(UInt64)
    /// Microseconds since the Unix epoch: the last version recorded at or before it.
    case instant(Int64)
}

/// Two states of a note compared: the fields that differ, then the body's unified diff hunks.
public struct NoteDiff: Sendable, Equatable {
    public var from: NoteRevision
    public var to: NoteRevision
    /// Title, category, pinned, archived and trashed changes (never the body).
    public var fields: [NoteChange]
    public var hunks: [DiffHunk]

    /// Whether both states are the same (identical versions, or versions that differ in nothing).
    public var isEmpty: Bool { fields.isEmpty && hunks.isEmpty }
}

/// A body line with the version that last changed it.
public struct BlamedLine: Sendable, Equatable {
    public var text: String
    public var hasNewline: Bool
    public var version: UInt64
    public var recordedAt: Int64
    public var actor: String
}

/// A body's blame: its lines, and what made the body as a whole (all there is to say of an
/// empty body).
public struct BodyBlame: Sendable, Equatable {
    /// Each line with the version that last changed it; none for an empty body.
    public var lines: [BlamedLine]
    /// The version blamed: the note's at the selector, else its last.
    public var version: UInt64
    /// The version that last changed the body (its `text` is empty): for an empty body, the one
    /// since which it has been empty.
    public var bodySince: BlamedLine
}

/// What a restore or undo did.
public struct RestoreOutcome: Sendable, Equatable {
    /// The note afterwards (unchanged when nothing was appended).
    public var note: Note
    /// The version brought back.
    public var fromVersion: UInt64
    /// False when the note already was as that version: nothing was appended.
    public var appended: Bool
    /// The restored version's category when it has been deleted since; the note is then restored
    /// without a category (a deleted category cannot hold notes).
    public var deletedCategory: CategoryRef?
    /// The restored version's tags that have been deleted since; the note is restored without
    /// them.
    public var deletedTags: [TagRef] = []
}

/// Which events `notes log` shows.
public struct LogQuery: Sendable, Equatable {
    /// Only events recorded at or after this instant.
    public var since: Int64?
    /// Only events recorded at or before this instant.
    public var until: Int64?
    /// Only this note's events.
    public var note: Identifier?
    /// Only events of this type (stored or lifted, any case), e.g. `NoteRetitled`.
    public var type: String?
    /// Only events by this actor (the whole name, any case).
    public var actor: String?
    public var limit = Int.max
    /// Oldest first instead of newest first.
    public var oldestFirst = false

    public init() {}
}

/// One line of the audit log.
public struct LogEntry: Sendable, Equatable {
    public enum Subject: Sendable, Equatable {
        case note(HistoryEntry)
        /// An event of a category or a tag, with its name after the event.
        case entity(EntityKind, id: Identifier, name: String, change: EntityLogChange)
        /// An event of a stream this program does not model.
        case other
    }

    public var position: UInt64
    public var recordedAt: Int64
    public var metadata: EventMetadata
    /// The stored type (legacy events keep theirs).
    public var storedType: String
    public var stream: String
    public var version: UInt64
    public var subject: Subject

    public var summary: String {
        switch subject {
        case .note(let entry): return entry.summary
        case .entity(let kind, _, _, let change): return change.summary(kind)
        case .other: return storedType
        }
    }
}

extension Notebook {
    // MARK: Reading the past

    /// The stored event named by `selector` with the note after it. A version beyond the head
    /// (or 0), or an instant before the note's creation, is a not-found error.
    public func revision(of id: Identifier, at selector: RevisionSelector) throws(NotesError) -> NoteRevision {
        return try readLog { txn, _ in try revision(of: id, at: selector, in: txn) }
    }

    func revision(of id: Identifier, at selector: RevisionSelector, in txn: borrowing Transaction) throws
        -> NoteRevision
    {
        var found: NoteRevision?
        var seen = false
        switch selector {
        case .version(let version):
            var latest: UInt64 = 0
            try foldRevisions(of: id, upToVersion: max(version, 1), in: txn) { rev in
                latest = rev.version
                if rev.version == version { found = rev }
                return true
            }
            seen = latest > 0
            if found == nil && seen {
                latest = try store.streamVersion(Note.stream(id), in: txn)
                // A version up to the stream's head that the fold did not meet: a damaged index
                // (before 2026-12-07, "has no version 2 (versions run from 1 to 9)", exit 3).
                if version >= 1 && version <= latest { throw Self.versionsMissing(id, version...version) }
                throw NotesError.notFound(.version(version, of: id, latest: latest))
            }
        case .instant(let instant):
            try foldRevisions(of: id, in: txn) { rev in
                seen = true
                guard rev.recordedAt <= instant else { return false }
                found = rev
                return true
            }
            if found == nil && seen {
                throw NotesError.notFound(.noteBefore(instant, id))
            }
        }
        guard let found else { throw missingFromLog(id, in: txn) }
        return found
    }

    /// One entry per stored event of the note, oldest first, with what each changed.
    ///
    /// A legacy `NoteUpdated` (lifted to a retitle and a body edit) is one entry whose changes
    /// are those of both parts; a part that changed nothing adds nothing.
    public func history(of id: Identifier) throws(NotesError) -> [HistoryEntry] {
        var out: [HistoryEntry] = []
        try history(of: id) { out.append($0) }
        return out
    }

    /// ``history(of:)`` an entry at a time, oldest first: only the entry given and the version
    /// before it are held, so the history of a large note with many versions takes the memory
    /// of two of them (`notes history` of a 5.8 MB note with 85 versions held every version's
    /// body, about 1 GB, before 2026-12-07). `body` runs inside the read transaction.
    public func history(of id: Identifier, _ body: (HistoryEntry) throws -> Void) throws(NotesError) {
        try readLog { txn, _ in
            let names = NameBook(store: store)
            var previous: Note?
            var any = false
            try foldRevisions(of: id, in: txn) { rev in
                let changes = try names.changes(previous, rev.note, at: rev.position, in: txn)
                try body(HistoryEntry(revision: rev, changes: changes))
                previous = rev.note
                any = true
                return true
            }
            if !any { throw missingFromLog(id, in: txn) }
        }
    }

    /// The changes from one state of the note to another (`to` defaults to the head).
    public func diff(_ id: Identifier, from: RevisionSelector, to: RevisionSelector? = nil, context: Int = 3)
        throws(NotesError) -> NoteDiff
    {
        return try readLog { txn, _ in
            let a = try revision(of: id, at: from, in: txn)
            let b: NoteRevision
            if let to {
                b = try revision(of: id, at: to, in: txn)
            } else {
                b = try revision(
                    of: id, at: .version(try store.streamVersion(Note.stream(id), in: txn)), in: txn)
            }
            let names = NameBook(store: store)
            var fields = try names.changes(a.note, b.note, includeBody: false, at: max(a.position, b.position), in: txn)
            // Name each side's category and tags as they were called at that side's version.
            fields = try fields.map { change in
                switch change {
                case .category(let old, let new):
                    return .category(
                        from: try old.map { try names.categories.ref($0.id, at: a.position, in: txn) },
                        to: try new.map { try names.categories.ref($0.id, at: b.position, in: txn) })
                case .tags(let added, let removed):
                    return .tags(
                        added: try added.map { try names.tags.ref($0.id, at: b.position, in: txn) },
                        removed: try removed.map { try names.tags.ref($0.id, at: a.position, in: txn) })
                default:
                    return change
                }
            }
            let hunks = LineDiff.hunks(from: a.note.body, to: b.note.body, context: context)
            return NoteDiff(from: a, to: b, fields: fields, hunks: hunks)
        }
    }

    /// Every line of the body (at `selector`, else now) with the version that last changed it.
    public func blame(_ id: Identifier, at selector: RevisionSelector? = nil) throws(NotesError) -> [BlamedLine] {
        try bodyBlame(id, at: selector).lines
    }

    /// The body's blame (at `selector`, else now), with the version blamed and the one that
    /// made the body what it is: what can be said of a body without lines (an empty body).
    public func bodyBlame(_ id: Identifier, at selector: RevisionSelector? = nil) throws(NotesError) -> BodyBlame {
        // Only versions whose body differs from the one before take part, so a note with many
        // flag changes costs no more than its body edits. Each is attributed as it comes: only
        // the last body is held (all of them were, 300 MB for 61 versions of a 4.4 MB note).
        var attributor: Blame.Attributor?
        var last: String?
        var owners: [(version: UInt64, recordedAt: Int64, actor: String)] = []
        var blamed: UInt64 = 0
        try readLog { txn, _ in
            var upTo = UInt64.max
            if let selector { upTo = try revision(of: id, at: selector, in: txn).version }
            try foldRevisions(of: id, upToVersion: upTo, in: txn) { rev in
                blamed = rev.version
                if last != rev.note.body {
                    if attributor == nil {
                        attributor = Blame.Attributor(rev.note.body)
                    } else {
                        attributor?.add(rev.note.body)
                    }
                    last = rev.note.body
                    owners.append((rev.version, rev.recordedAt, rev.metadata.actor))
                }
                return true
            }
            if owners.isEmpty { throw missingFromLog(id, in: txn) }
        }
        let lines = (attributor?.lines ?? []).map { line in
            let owner = owners[min(max(line.revision, 0), owners.count - 1)]
            return BlamedLine(
                text: line.text, hasNewline: line.hasNewline, version: owner.version, recordedAt: owner.recordedAt,
                actor: owner.actor)
        }
        let origin = owners[owners.count - 1]
        return BodyBlame(
            lines: lines, version: blamed,
            bodySince: BlamedLine(
                text: "", hasNewline: false, version: origin.version, recordedAt: origin.recordedAt, actor: origin.actor
            ))
    }

    // MARK: Restore and undo

    /// Appends one `NoteRestored` event that brings back the title, body, pinned flag and
    /// category of a past version, and takes the note out of the trash, then a `NoteTagged` or
    /// `NoteUntagged` event per tag that differs from that version's. History is kept: the
    /// note's version goes up. When the note already is as that version (and not in the
    /// trash), nothing is appended.
    ///
    /// If that version's category or some of its tags have been deleted since, the note is
    /// restored without them and ``RestoreOutcome/deletedCategory`` and
    /// ``RestoreOutcome/deletedTags`` say so. One a sync merged into another of its name is
    /// that one.
    @discardableResult
    public func restore(_ id: Identifier, to selector: RevisionSelector, expectedVersion: UInt64? = nil)
        throws(NotesError) -> RestoreOutcome
    {
        try restore(id, expectedVersion: expectedVersion, exact: false) { _, _ in selector }
    }

    /// Brings the note back to the version before its last command (the events of one command
    /// share a correlation id: an undo that wrote a restore and a trash, a retitle and a body edit
    /// given together): a restore of that version that also puts back its archived and trashed
    /// state, so any single change can be undone. Undoing twice undoes the undo. A note with only
    /// the command that created it has nothing to undo, however many events that command wrote
    /// (`add --tag`: before 2026-12-07 its tags were undone, leaving the note as no command had
    /// made it).
    @discardableResult
    public func undo(_ id: Identifier, expectedVersion: UInt64? = nil) throws(NotesError) -> RestoreOutcome {
        try restore(id, expectedVersion: expectedVersion, exact: true) { current, txn throws(NotesError) in
            guard current.version > 1 else {
                throw .validation(.nothingToUndo(id))
            }
            do {
                // A command that only recorded where the note's file is (an import that found
                // it moved) changed nothing a restore puts back: the undo goes past it.
                var start = try lastCommandStart(of: id, version: current.version, in: txn)
                var end = current.version
                while start > 2, try onlyFileRecord(of: id, versions: start...end, in: txn) {
                    end = start - 1
                    start = try lastCommandStart(of: id, version: end, in: txn)
                }
                // The last command is the one that created the note (`add --tag` wrote the
                // creation and its tags together): there is no version before it.
                if start == 1 { throw NotesError.validation(.nothingToUndo(id)) }
                // The import that created the note recorded only its file besides: nothing a
                // restore puts back, so nothing to undo, as after `add` (it said "nothing changed"
                // and exited 0).
                if start == 2, try onlyFileRecord(of: id, versions: 2...end, in: txn) {
                    throw NotesError.validation(.nothingToUndo(id))
                }
                return .version(start - 1)
            } catch {
                throw NotesError.wrap(error)
            }
        }
    }

    /// Whether every event of `versions` of the note sets a property of ``NoteProperty/fileRecord``.
    private func onlyFileRecord(of id: Identifier, versions: ClosedRange<UInt64>, in txn: borrowing Transaction)
        throws -> Bool
    {
        var only = true
        var seen = false
        try store.forEachEvent(inStream: Note.stream(id), versions: versions, in: txn) { view in
            seen = true
            for e in try store.lift(view) {
                guard case .propertySet(let key, _) = try NoteEvent.decode(e), NoteProperty.fileRecord.contains(key)
                else {
                    only = false
                    return false
                }
            }
            return true
        }
        // The versions are the stream's own (below its head): none found is a damaged index, not
        // a note with nothing to undo.
        if !seen { throw Self.versionsMissing(id, versions) }
        return only
    }

    /// Versions of a note below its stream's head that the log's index does not hold: damage.
    static func versionsMissing(_ id: Identifier, _ versions: ClosedRange<UInt64>) -> StoreError {
        let which =
            versions.count == 1
            ? "version \(versions.lowerBound) of note \(shortID(id)) is"
            : "versions \(versions.lowerBound) to \(versions.upperBound) of note \(shortID(id)) are"
        return .damaged(position: nil, detail: "\(which) missing from the log's index")
    }

    /// The first version of the events that end at `version` and share its correlation id: the
    /// last command's, or that one event's when it has none. It is 1 when that command created
    /// the note.
    private func lastCommandStart(of id: Identifier, version: UInt64, in txn: borrowing Transaction) throws -> UInt64 {
        let stream = Note.stream(id)
        func correlation(_ v: UInt64) throws -> Identifier? {
            var found: Identifier?
            try store.forEachEvent(inStream: stream, versions: v...v, in: txn) { view in
                found = view.metadata.correlationID
                return false
            }
            return found
        }
        guard let command = try correlation(version) else { return version }
        var start = version
        while start > 1, try correlation(start - 1) == command { start -= 1 }
        return start
    }

    private func restore(
        _ id: Identifier, expectedVersion: UInt64?, exact: Bool,
        target choose: (Note, borrowing Transaction) throws(NotesError) -> RevisionSelector
    ) throws(NotesError) -> RestoreOutcome {
        try write { session, dbs in
            guard let current = try projection.note(id, in: session.transaction, databases: dbs) else {
                throw Self.missing(id)
            }
            if let expectedVersion, expectedVersion != current.version {
                throw NotesError.conflict(id: id, expected: expectedVersion, actual: current.version)
            }
            let target = try revision(of: id, at: try choose(current, session.transaction), in: session.transaction)
                .note
            // A category or tag a sync merged into another of its name (made on two devices)
            // lives on as that one: the version is filed under it, as the sync filed the note.
            var fates = EntityFates()
            var category = target.category
            var deletedCategory: CategoryRef?
            if let c = category {
                let record = try projection.category(c, in: session.transaction, databases: dbs)
                if let record, record.deleted,
                    let heir = try fates.heir(of: c, kind: .category, in: self, txn: session.transaction)
                {
                    category = heir
                } else if record?.deleted ?? true {
                    deletedCategory = CategoryRef(id: c, name: record?.name ?? shortID(c))
                    category = nil
                }
            }
            // The version's tags, less those deleted since (one merged is its heir).
            var tags: [Identifier] = []
            var kept: Set<Identifier> = []
            var deletedTags: [TagRef] = []
            for t in target.tags {
                let record = try projection.tag(t, in: session.transaction, databases: dbs)
                if let record, !record.deleted {
                    if kept.insert(t).inserted { tags.append(t) }
                } else if record != nil,
                    let heir = try fates.heir(of: t, kind: .tag, in: self, txn: session.transaction)
                {
                    if kept.insert(heir).inserted { tags.append(heir) }
                } else {
                    deletedTags.append(TagRef(id: t, name: record?.name ?? shortID(t)))
                }
            }
            let contentDiffers =
                !current.title.isSameBytes(as: target.title) || !current.body.isSameBytes(as: target.body)
                || current.pinned != target.pinned
                || current.category != category
            var events: [NoteEvent] = []
            if contentDiffers || (current.trashed && !(exact && target.trashed)) {
                events.append(
                    .restored(
                        fromVersion: target.version, title: target.title, body: target.body, pinned: target.pinned,
                        category: category))
            }
            let (added, removed) = NoteChange.difference(from: current.tags, to: tags)
            events += added.map { .tagged(tag: $0) } + removed.map { .untagged(tag: $0) }
            for key in Set(current.properties.keys).union(target.properties.keys).sorted()
            where current.properties[key] != target.properties[key] && !NoteProperty.fileRecord.contains(key) {
                events.append(.propertySet(key: key, value: target.properties[key] ?? ""))
            }
            if exact {
                let trashedAfter = events.contains { $0.kind == .restored } ? false : current.trashed
                if target.trashed && !trashedAfter { events.append(.trashed) }
                if target.archived != current.archived { events.append(target.archived ? .archived : .unarchived) }
            }
            let outcome = RestoreOutcome(
                note: current, fromVersion: target.version, appended: false, deletedCategory: deletedCategory,
                deletedTags: deletedTags.sorted { $0.name.lowercased() < $1.name.lowercased() })
            guard !events.isEmpty else { return outcome }
            var done = outcome
            done.note = try append(events, to: id, expecting: .exact(current.version), session: session, dbs: dbs)
            done.appended = true
            return done
        }
    }

    // MARK: Audit log

    /// The event types `notes log --type` accepts: current and legacy, notes and categories.
    public static var eventTypes: [String] {
        Array(Set((NotesSchema.current + NotesSchema.legacy).map(\.type))).sorted()
    }

    /// The global audit log, newest first unless `query.oldestFirst`, with the same summaries as
    /// ``history(of:)``. Reading starts at `until` (found by binary search) and stops at `since`,
    /// so a window of a large log costs only what it shows.
    public func log(_ query: LogQuery) throws(NotesError) -> [LogEntry] {
        var typeFilter: String?
        if let type = query.type {
            let lowered = type.lowercased()
            guard let known = Self.eventTypes.first(where: { $0.lowercased() == lowered }) else {
                throw .validation(.unknownEventType(type, known: Self.eventTypes))
            }
            typeFilter = known
        }
        guard query.limit > 0 else { return [] }
        return try readLog { txn, _ in
            let headers = try logHeaders(query, typeFilter: typeFilter, in: txn)
            return try logEntries(headers, in: txn)
        }
    }

    /// A stored event picked for the log, before its summary is computed.
    private struct LogHeader {
        var position: UInt64
        var recordedAt: Int64
        var metadata: EventMetadata
        var storedType: String
        var stream: String
        var ref: StreamRef
        var version: UInt64
    }

    /// Whether two names are equal but for case: ASCII letters compared byte by byte (no
    /// string made for each event of a scan), other text through `lowercased()`.
    static func sameIgnoringCase(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var x = a.utf8.makeIterator()
        var y = b.utf8.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return true
            case (let p?, let q?):
                if p >= 0x80 || q >= 0x80 { return a.lowercased() == b.lowercased() }
                let lp = p >= 0x41 && p <= 0x5A ? p | 0x20 : p
                let lq = q >= 0x41 && q <= 0x5A ? q | 0x20 : q
                if lp != lq { return false }
            default: return a.lowercased() == b.lowercased()
            }
        }
    }

    private func logHeaders(_ query: LogQuery, typeFilter: String?, in txn: borrowing Transaction) throws
        -> [LogHeader]
    {
        var out: [LogHeader] = []
        let since = query.since ?? .min
        let until = query.until ?? .max
        // Returns whether the scan goes on.
        func consider(_ view: EventView, forward: Bool) throws -> Bool {
            if forward ? view.recordedAt > until : view.recordedAt < since { return false }
            guard view.recordedAt >= since && view.recordedAt <= until else { return true }
            if let actor = query.actor, !Self.sameIgnoringCase(view.actor, actor) { return true }
            if let typeFilter {
                let type = view.type
                if type != typeFilter, try !store.lift(view).contains(where: { $0.type == typeFilter }) { return true }
            }
            out.append(
                LogHeader(
                    position: view.position, recordedAt: view.recordedAt, metadata: view.metadata,
                    storedType: view.type, stream: view.stream, ref: StreamRef(view.streamBytes), version: view.version)
            )
            return out.count < query.limit || query.note != nil
        }
        if let note = query.note {
            try store.forEachEvent(inStream: Note.stream(note), in: txn) { view in try consider(view, forward: true) }
            if !query.oldestFirst { out.reverse() }
            if out.count > query.limit { out.removeLast(out.count - query.limit) }
        } else if query.oldestFirst {
            var start: UInt64 = 1
            if let s = query.since, s > .min { start = try store.position(atOrBefore: s - 1, in: txn) + 1 }
            try store.forEachEvent(from: start, in: txn) { view in try consider(view, forward: true) }
        } else {
            let start: UInt64
            if let until = query.until {
                start = try store.position(atOrBefore: until, in: txn)
            } else {
                start = try store.headPosition(in: txn)
            }
            guard start > 0 else { return [] }
            try store.forEachEvent(from: start, reverse: true, in: txn) { view in try consider(view, forward: false) }
        }
        return out
    }

    private func logEntries(_ headers: [LogHeader], in txn: borrowing Transaction) throws -> [LogEntry] {
        // Fold each note once, up to the latest version the log shows of it.
        var wanted: [Identifier: Set<UInt64>] = [:]
        for h in headers {
            if case .note(let id) = h.ref { wanted[id, default: []].insert(h.version) }
        }
        let names = NameBook(store: store)
        var entries: [Identifier: [UInt64: HistoryEntry]] = [:]
        for (id, versions) in wanted {
            guard let last = versions.max() else { continue }
            var previous: Note?
            var found: [UInt64: HistoryEntry] = [:]
            try foldRevisions(of: id, upToVersion: last, in: txn) { rev in
                if versions.contains(rev.version) {
                    let changes = try names.changes(previous, rev.note, at: rev.position, in: txn)
                    found[rev.version] = HistoryEntry(revision: rev, changes: changes)
                }
                previous = rev.note
                return true
            }
            entries[id] = found
        }
        var result: [LogEntry] = []
        result.reserveCapacity(headers.count)
        for h in headers {
            let subject: LogEntry.Subject
            switch h.ref {
            case .note(let id):
                guard let entry = entries[id]?[h.version] else {
                    throw StoreError.damaged(position: h.position, detail: "note event missing from its stream")
                }
                subject = .note(entry)
            case .category(let id):
                let (name, change) = try names.categories.change(id, version: h.version, in: txn)
                subject = .entity(.category, id: id, name: name, change: change)
            case .tag(let id):
                let (name, change) = try names.tags.change(id, version: h.version, in: txn)
                subject = .entity(.tag, id: id, name: name, change: change)
            case .other:
                subject = .other
            }
            result.append(
                LogEntry(
                    position: h.position, recordedAt: h.recordedAt, metadata: h.metadata, storedType: h.storedType,
                    stream: h.stream, version: h.version, subject: subject))
        }
        return result
    }
}

/// Names of categories or tags as they were at any position of the log, read from each one's
/// stream once (those streams are short: a creation, renames, a deletion).
final class EntityNames<E: CountedEntity, Kind: EntityEventKind> {
    struct Step {
        var version: UInt64
        var position: UInt64
        var event: NamedEntityEvent<Kind>
        /// The name after this event.
        var name: String
    }

    let store: EventStore
    private var histories: [Identifier: [Step]] = [:]

    init(store: EventStore) { self.store = store }

    func history(of id: Identifier, in txn: borrowing Transaction) throws -> [Step] {
        if let h = histories[id] { return h }
        var steps: [Step] = []
        var entity: E?
        try store.forEachEvent(inStream: E.stream(id), in: txn) { view in
            for e in try store.lift(view) {
                guard let event = try NamedEntityEvent<Kind>.decode(e) else { continue }
                do {
                    try EntityFold.apply(event, to: &entity, subject: E.subject(id), id: id, at: e.recordedAt)
                } catch let error as FoldError {
                    throw StoreError.damaged(position: view.position, detail: error.description)
                }
                steps.append(
                    Step(version: view.version, position: view.position, event: event, name: entity?.name ?? ""))
            }
            return true
        }
        histories[id] = steps
        return steps
    }

    /// The name at `position` (the first name for a position before the creation).
    func ref(_ id: Identifier, at position: UInt64, in txn: borrowing Transaction) throws -> EntityRef {
        let steps = try history(of: id, in: txn)
        let name = steps.last { $0.position <= position }?.name ?? steps.first?.name ?? shortID(id)
        return EntityRef(id: id, name: name)
    }

    /// What the stored event of version `version` did, with the name it left.
    func change(_ id: Identifier, version: UInt64, in txn: borrowing Transaction) throws -> (
        name: String, change: EntityLogChange
    ) {
        let history = try history(of: id, in: txn)
        let index = history.firstIndex { $0.version == version }
        let name = index.map { history[$0].name } ?? shortID(id)
        switch index.map({ history[$0].event }) {
        case .created(let n)?: return (name, .created(name: n))
        case .renamed(let n)?:
            let before = index.flatMap { $0 > 0 ? history[$0 - 1].name : nil } ?? n
            return (name, .renamed(from: before, to: n))
        case .deleted?, nil: return (name, .deleted(name: name))
        case .merged(let into)?:
            let position = index.map { history[$0].position } ?? 0
            return (name, .merged(name: name, into: try ref(into, at: position, in: txn).name))
        }
    }
}

/// The names of tags at any position of the log, for a caller outside this module (an import
/// comparing a file's tags with their names when it was last read): each tag's stream read once.
package final class TagNames {
    private let names: EntityNames<Tag, TagEventKind>

    package init(store: EventStore) { names = EntityNames(store: store) }

    /// The name of tag `id` at `position` (now when nil; its first name for a position before
    /// its creation), or nil for an id no tag has.
    package func name(_ id: Identifier, at position: UInt64?, in txn: borrowing Transaction) throws -> String? {
        guard try !names.history(of: id, in: txn).isEmpty else { return nil }
        return try names.ref(id, at: position ?? .max, in: txn).name
    }
}

/// The names of categories and tags at any position: what history lines show.
final class NameBook {
    let categories: EntityNames<Category, CategoryEventKind>
    let tags: EntityNames<Tag, TagEventKind>

    init(store: EventStore) {
        categories = EntityNames(store: store)
        tags = EntityNames(store: store)
    }

    /// The changes from `old` to `new`, names as they were at `position`.
    func changes(
        _ old: Note?, _ new: Note, includeBody: Bool = true, at position: UInt64, in txn: borrowing Transaction
    ) throws -> [NoteChange] {
        try NoteChange.between(
            old, new, includeBody: includeBody, category: { try categories.ref($0, at: position, in: txn) },
            tag: { try tags.ref($0, at: position, in: txn) })
    }
}
