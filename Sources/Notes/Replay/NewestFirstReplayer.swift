import Basics
public import EventStore
import LMDB

extension NotebookState {
    /// The same state as ``replay(store:upTo:releasingPages:progress:)``, read newest first: each field of a
    /// note is taken only from the last event that set it, and a note's events before its
    /// creation are not read at all, so the superseded titles and bodies that dominate a long
    /// log are never checked or turned into strings. `--as-of` uses it; rebuild and verify use
    /// the forward replay, which checks every payload.
    public static func replayNewestFirst(store: EventStore, upTo position: UInt64 = .max) throws -> NotebookState {
        var replayer = NewestFirstReplayer()
        return try store.read { txn in
            let start = min(position, try store.headPosition(in: txn))
            if start > 0 {
                try store.forEachEvent(from: start, reverse: true, in: txn) { view in
                    try replayer.apply(view, store: store)
                    return true
                }
            }
            return try replayer.finish()
        }
    }
}

/// Folds events newest first with ``NoteFold``: a field is taken from the newest event that
/// sets it, and a note is complete once its (newest) creation is reached.
struct NewestFirstReplayer {
    /// A note being completed: the target of the fold, which ignores a field already taken.
    private struct Partial: NoteFoldTarget {
        var note: Note
        /// Fields already taken from a newer event.
        var set: Fields = []
        var complete = false
        /// A text taken that is not UTF-8 (the fold's setters cannot throw; the caller does).
        var failure: DecodingError?
        /// Tags whose membership a newer event decided (sorted).
        var decidedTags: [Identifier] = []
        /// Properties a newer event set.
        var decidedProperties: Set<String> = []

        mutating func begin(at instant: Int64) {
            note.createdAt = instant
            complete = true
        }
        mutating func set(title: UncheckedText) {
            guard take(.title) else { return }
            do { note.title = try title.checked() } catch { failure = error }
        }
        mutating func set(body: UncheckedText) {
            guard take(.body) else { return }
            do { note.body = try body.checked() } catch { failure = error }
        }
        mutating func set(pinned: Bool) { if take(.pinned) { note.pinned = pinned } }
        mutating func set(category: Identifier?) { if take(.category) { note.category = category } }
        mutating func set(archived: Bool) { if take(.archived) { note.archived = archived } }
        mutating func set(trashed: Bool) { if take(.trashed) { note.trashed = trashed } }
        mutating func set(tag: Identifier, tagged: Bool) {
            guard !decidedTags.contains(tag) else { return }
            decidedTags.set(tag, true)
            if tagged { note.tags.set(tag, true) }
        }
        mutating func set(property key: UncheckedText, value: UncheckedText) {
            do { set(property: try key.checked(), value: try value.checked()) } catch { failure = error }
        }
        mutating func set(property key: String, value: String) {
            guard decidedProperties.insert(key).inserted else { return }
            note.properties.set(key, value)
        }

        /// Whether `field` is still to be taken; from now on it is not.
        private mutating func take(_ field: Fields) -> Bool { set.insert(field).inserted }
    }

    /// Records which fields a fold sets, without values.
    private struct Probe: NoteFoldTarget {
        var set: Fields = []
        mutating func begin(at instant: Int64) {}
        mutating func set(title: UncheckedText) { set.insert(.title) }
        mutating func set(body: UncheckedText) { set.insert(.body) }
        mutating func set(pinned: Bool) { set.insert(.pinned) }
        mutating func set(category: Identifier?) { set.insert(.category) }
        mutating func set(archived: Bool) { set.insert(.archived) }
        mutating func set(trashed: Bool) { set.insert(.trashed) }
        mutating func set(tag: Identifier, tagged: Bool) { set.insert(.tags) }
        mutating func set(property key: UncheckedText, value: UncheckedText) { set.insert(.properties) }
    }

    /// The fields each kind's fold sets, by raw value, found by folding it into a ``Probe``: an
    /// event whose fields are all taken already is skipped without reading its payload.
    private static let fieldsSet: [Fields] = NoteEventKind.allCases.map { kind in
        var probe = Probe()
        NoteFold.apply(kind, NotePayload<UncheckedText>(), to: &probe, at: 0)
        return probe.set
    }

    /// The same note folded with texts already strings (lifted events).
    private struct Lifted: NoteFoldTarget {
        var partial: Partial
        var title: String?
        var body: String?

        mutating func begin(at instant: Int64) { partial.begin(at: instant) }
        mutating func set(title: String) { if partial.set.insert(.title).inserted { self.title = title } }
        mutating func set(body: String) { if partial.set.insert(.body).inserted { self.body = body } }
        mutating func set(pinned: Bool) { partial.set(pinned: pinned) }
        mutating func set(category: Identifier?) { partial.set(category: category) }
        mutating func set(archived: Bool) { partial.set(archived: archived) }
        mutating func set(trashed: Bool) { partial.set(trashed: trashed) }
        mutating func set(tag: Identifier, tagged: Bool) { partial.set(tag: tag, tagged: tagged) }
        mutating func set(property key: String, value: String) { partial.set(property: key, value: value) }
    }

    private struct Fields: OptionSet {
        let rawValue: UInt8
        static let title = Fields(rawValue: 1)
        static let body = Fields(rawValue: 2)
        static let pinned = Fields(rawValue: 4)
        static let category = Fields(rawValue: 8)
        static let archived = Fields(rawValue: 16)
        static let trashed = Fields(rawValue: 32)
        /// A tag's membership: never all taken (each tag is decided on its own), so an event
        /// that (un)tags is always read.
        static let tags = Fields(rawValue: 64)
        /// A property: never all taken either (each key is decided on its own).
        static let properties = Fields(rawValue: 128)
    }

    /// A category or tag event kept for a forward fold at the end (they have few events).
    private struct EntityStep {
        var type: String
        var schemaVersion: UInt32
        var payload: [UInt8]
        var stream: StreamRef
        var version: UInt64
        var instant: Int64
        var position: UInt64
    }

    private var notes: [Partial] = []
    private var table = NoteTable()
    private var entitySteps: [EntityStep] = []
    private var events: UInt64 = 0

    init() { notes.reserveCapacity(1024) }

    mutating func apply(_ view: EventView, store: EventStore) throws {
        events += 1
        switch StreamRef(view.streamBytes) {
        case .note(let id):
            let index = table.find(id) { notes[$0].note.id }
            if let index, notes[index].complete { return }
            if let kind = NoteEventKind.matcher.kind(view.typeBytes, version: view.schemaVersion) {
                let i = index ?? open(id, at: view.recordedAt, version: view.version)
                if kind != .created && notes[i].set.isSuperset(of: Self.fieldsSet[Int(kind.rawValue)]) { return }
                NoteFold.apply(
                    kind, try NotePayload<UncheckedText>(kind, decoding: view.payload), to: &notes[i],
                    at: view.recordedAt)
                if let failure = notes[i].failure { throw failure }
            } else {
                for e in try store.lift(view).reversed() {
                    guard let kind = NoteEventKind.matcher.kind(e.type, version: e.schemaVersion) else {
                        throw StoreError.damaged(
                            position: e.position,
                            detail: FoldError.foreignType(e.type, version: e.schemaVersion, in: .note(id)).description)
                    }
                    let p = try e.payload.withUnsafeBytes { b in try NotePayload<String>(kind, decoding: b) }
                    let i = table.find(id) { notes[$0].note.id } ?? open(id, at: e.recordedAt, version: e.version)
                    if notes[i].complete { break }
                    var target = Lifted(partial: notes[i])
                    NoteFold.apply(kind, p, to: &target, at: e.recordedAt)
                    notes[i] = target.partial
                    if let t = target.title { notes[i].note.title = t }
                    if let b = target.body { notes[i].note.body = b }
                }
            }
        case .category, .tag:
            // Lifted now, applied in reverse at the end; the last lifted must come out last.
            let stream = StreamRef(view.streamBytes)
            for e in try store.lift(view).reversed() {
                entitySteps.append(
                    EntityStep(
                        type: e.type, schemaVersion: e.schemaVersion, payload: e.payload, stream: stream,
                        version: e.version, instant: e.recordedAt, position: e.position))
            }
        case .other:
            break
        }
    }

    /// Starts a note at its newest event, which gives its version and update time.
    private mutating func open(_ id: Identifier, at instant: Int64, version: UInt64) -> Int {
        let i = notes.count
        table.insert(id, index: i)
        notes.append(
            Partial(note: Note(id: id, title: "", body: "", createdAt: instant, updatedAt: instant, version: version)))
        return i
    }

    /// The state folded so far.
    consuming func finish() throws -> NotebookState {
        var result = NotebookState()
        var done: [Note] = []
        done.reserveCapacity(notes.count)
        for p in notes {
            guard p.complete else {
                throw StoreError.damaged(
                    position: nil, detail: FoldError.notCreated(.note(p.note.id), type: "").description)
            }
            done.append(p.note)
        }
        result.notes = NoteCollection(done)
        for step in entitySteps.reversed() {
            try result.apply(
                type: step.type, schemaVersion: step.schemaVersion, payload: step.payload, stream: step.stream,
                version: step.version, at: step.instant, position: step.position)
        }
        result.events = events
        return result
    }
}
