public import Basics
public import EventStore
import Notes

/// A deterministic event log for benchmarks: N notes and their edits, categories, nested tags,
/// every event type of the catalogue, and a share of legacy schema-1 events, all from one seed.
///
/// The generator streams (one event at a time, memory proportional to the notes, not the
/// events), so a million-event log costs no more to produce than to consume.
///
/// ```swift
/// var log = EventWorkload(.small)
/// while let e = log.next() { try store.append([e.event], to: e.stream) }
/// ```
public struct EventWorkload: IteratorProtocol, Sendable {
    /// What to generate.
    public struct Spec: Sendable, Equatable, Hashable {
        /// Notes created over the whole log.
        public var notes: Int
        /// Events in total (the generator stops at exactly this many).
        public var events: Int
        /// Categories created at the start; a few are renamed and one is deleted near the end.
        public var categories: Int
        /// Tags created at the start, a third of them nested below another (`area 3/topic 7`);
        /// one is renamed half-way and one deleted near the end. About half the notes get one to
        /// three tags when created, and edits tag and untag.
        public var tags: Int
        /// The share of notes written by the legacy schema-1 program (their events are
        /// `NoteCreated` v1, `NoteUpdated` v1, `NotePinToggled` v1 and `NoteDeleted` v1).
        public var legacyShare: Double
        /// The first note is edited until it has this many versions, spread over the log.
        public var hotNoteVersions: Int
        public var seed: UInt64
        /// Recorded-at of the first event, microseconds since the Unix epoch.
        public var start: Int64
        /// The span of recorded-at from the first event to the last.
        public var spanMicros: Int64

        public init(
            notes: Int, events: Int, categories: Int = 20, tags: Int = 60, legacyShare: Double = 0.05,
            hotNoteVersions: Int = 1000,
            seed: UInt64 = 0x5EED_2026, start: Int64 = 1_704_067_200_000_000,
            spanMicros: Int64 = 2 * 365 * 86_400_000_000
        ) {
            self.notes = max(notes, 1)
            self.events = max(events, 0)
            self.categories = max(categories, 1)
            self.tags = max(tags, 2)
            self.legacyShare = legacyShare
            self.hotNoteVersions = max(hotNoteVersions, 1)
            self.seed = seed
            self.start = start
            self.spanMicros = max(spanMicros, 1)
        }

        /// 100,000 notes, 1,000,000 events: the scale of the README's figures.
        public static let full = Spec(notes: 100_000, events: 1_000_000)
        /// 10,000 notes, 100,000 events: a quick run.
        public static let small = Spec(notes: 10_000, events: 100_000)
    }

    /// One generated event and the stream it goes to.
    public struct Event: Sendable, Equatable {
        public var stream: String
        public var event: NewEvent

        public init(stream: String, event: NewEvent) {
            self.stream = stream
            self.event = event
        }
    }

    struct NoteState: Sendable {
        var title: String
        var body: String
        var version: Int
        var pinned = false
        var archived = false
        var trashed = false
        /// Index into `categoryIDs`, or -1.
        var category = -1
        /// Indices of the note's tags.
        var tags: [Int] = []
        var legacy = false
    }

    public let spec: Spec
    public private(set) var emitted = 0
    private var rng: WorkloadRandom
    private let text: ZipfText
    private var notes: [NoteState] = []
    private var categoryNames: [String] = []
    private var categoryLive: [Bool] = []
    private var tagNames: [String] = []
    private var tagLive: [Bool] = []
    /// Events planned but not yet returned (a category deletion plans many at once).
    private var pending: [Event] = []
    private var pendingHead = 0
    private var clock: Int64
    private let gap: Int64
    private let hotEvery: Int
    private let renameSteps: Set<Int>
    private let deleteStep: Int
    private let tagRenameStep: Int
    private let tagDeleteStep: Int
    /// Whether the category and the tag merged after the deletions have been.
    private var categoryMerged = false
    private var tagMerged = false

    static let noteSalt: UInt64 = 1
    static let categorySalt: UInt64 = 2
    static let tagSalt: UInt64 = 3
    static let actors = ["ana@laptop", "ben@desktop", "chen@phone", "dee@tablet", "eve@server"]

    /// A generator of the workload `spec`; `text` is shared so its vocabulary is built once.
    public init(_ spec: Spec, text: ZipfText = ZipfText()) {
        self.spec = spec
        self.text = text
        rng = WorkloadRandom(seed: spec.seed)
        clock = spec.start
        gap = max(1, spec.spanMicros / Int64(max(spec.events, 1)))
        // A tenth more hot steps than needed: steps taken by a category deletion are lost.
        hotEvery = max(1, spec.events / (spec.hotNoteVersions + spec.hotNoteVersions / 10 + 2))
        renameSteps = Set((1...3).map { spec.events * $0 / 4 + 1 })
        deleteStep = spec.events * 9 / 10
        tagRenameStep = spec.events / 2 + 3
        tagDeleteStep = spec.events * 19 / 20
        notes.reserveCapacity(spec.notes)
    }

    /// The id of the `index`-th note created (0 is the hot note).
    public static func noteID(_ index: Int, spec: Spec) -> Identifier {
        WorkloadRandom.identifier(seed: spec.seed, salt: noteSalt, index: index)
    }

    /// The id of the `index`-th category.
    public static func categoryID(_ index: Int, spec: Spec) -> Identifier {
        WorkloadRandom.identifier(seed: spec.seed, salt: categorySalt, index: index)
    }

    /// The id of the `index`-th tag.
    public static func tagID(_ index: Int, spec: Spec) -> Identifier {
        WorkloadRandom.identifier(seed: spec.seed, salt: tagSalt, index: index)
    }

    /// The note edited until it has ``Spec/hotNoteVersions`` versions.
    public var hotNote: Identifier { Self.noteID(0, spec: spec) }

    /// Notes created so far.
    public var notesCreated: Int { notes.count }

    /// A word of the given Zipf rank (0 is the commonest), e.g. for search queries.
    public func word(rank: Int) -> String { text.vocabulary[min(max(rank, 0), text.vocabulary.count - 1)] }

    public mutating func next() -> Event? {
        guard emitted < spec.events else { return nil }
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
            plan(step: emitted)
        }
        guard pendingHead < pending.count else { return nil }
        var e = pending[pendingHead]
        pendingHead += 1
        clock += 1 + Int64(rng.next(below: Int(2 * gap)))
        e.event.recordedAt = clock
        emitted += 1
        return e
    }

    /// Up to `count` next events.
    public mutating func next(batch count: Int) -> [Event] {
        var out: [Event] = []
        out.reserveCapacity(count)
        while out.count < count, let e = next() { out.append(e) }
        return out
    }

    // MARK: Planning

    private mutating func plan(step: Int) {
        if categoryNames.count < spec.categories {
            createCategory()
        } else if tagNames.count < spec.tags {
            createTag()
        } else if step == tagRenameStep {
            renameTag()
        } else if step == tagDeleteStep {
            deleteTag()
        } else if renameSteps.contains(step) {
            renameCategory()
        } else if step == deleteStep, categoryLive.filter({ $0 }).count > 1 {
            deleteCategory()
        } else if step > deleteStep, !categoryMerged, categoryLive.filter({ $0 }).count > 1 {
            categoryMerged = true
            mergeCategory()
        } else if step > tagDeleteStep, !tagMerged {
            tagMerged = true
            mergeTag()
        } else if !notes.isEmpty, step % hotEvery == 0, notes[0].version < spec.hotNoteVersions {
            edit(0, hot: true)
        } else if notes.count < 2 || shouldCreate(step: step) {
            createNote()
        } else {
            // Half the edits go to recent notes, as people edit what they just wrote; the hot
            // note gets only its own edits so its version count is exact.
            let recent = rng.chance(0.5)
            let window = min(notes.count - 1, 256)
            let index = recent ? notes.count - 1 - rng.next(below: window) : 1 + rng.next(below: notes.count - 1)
            edit(index, hot: false)
        }
    }

    /// Creations are spread evenly: the chance is the notes left over the steps left (twice
    /// that while creations also tag, as a tagged creation takes about two events), which
    /// reaches certainty when as many steps are left as notes. Creations stop tagging when four
    /// steps per note are left, so every note is created.
    private mutating func shouldCreate(step: Int) -> Bool {
        let left = spec.notes - notes.count
        guard left > 0 else { return false }
        let stepsLeft = max(1, spec.events - step)
        return rng.next(below: stepsLeft) < (creationsTag ? 2 * left : left)
    }

    /// Whether a note created now may get tags (see ``shouldCreate(step:)``).
    private var creationsTag: Bool { spec.events - emitted > 4 * (spec.notes - notes.count) }

    private mutating func metadata(command: String?) -> EventMetadata {
        let actor = Self.actors[min(rng.next(below: Self.actors.count), rng.next(below: Self.actors.count))]
        return EventMetadata(actor: actor, command: command)
    }

    private mutating func newID() -> Identifier { Identifier.random(using: &rng) }

    private mutating func push(
        _ stream: String, _ type: String, _ schema: UInt32, _ payload: [UInt8], _ command: String?
    ) {
        let meta = metadata(command: command)
        pending.append(
            Event(
                stream: stream,
                event: NewEvent(id: newID(), type: type, schemaVersion: schema, payload: payload, metadata: meta)))
    }

    private mutating func push(note index: Int, _ event: NoteEvent, command: String) {
        push(Note.stream(Self.noteID(index, spec: spec)), event.type, event.schemaVersion, event.payload, command)
    }

    private mutating func createCategory() {
        let index = categoryNames.count
        let name = text.title(using: &rng).split(separator: " ").prefix(2).joined(separator: " ") + " \(index)"
        categoryNames.append(name)
        categoryLive.append(true)
        let e = CategoryEvent.created(name: name)
        push(Category.stream(Self.categoryID(index, spec: spec)), e.type, 1, e.payload, "notes categories add")
    }

    private mutating func renameCategory() {
        let live = categoryLive.indices.filter { categoryLive[$0] }
        guard !live.isEmpty else { return createNote() }
        let index = live[rng.next(below: live.count)]
        categoryNames[index] += " (renamed)"
        let e = CategoryEvent.renamed(name: categoryNames[index])
        push(Category.stream(Self.categoryID(index, spec: spec)), e.type, 1, e.payload, "notes categories rename")
    }

    /// Deletes the last live category the way the notebook does: every member note gets a
    /// `NoteCategorized(null)` caused by the deletion, in one correlated group.
    private mutating func deleteCategory() {
        guard let index = categoryLive.lastIndex(of: true) else { return }
        categoryLive[index] = false
        let correlation = newID()
        let deletion = newID()
        nullify(
            deletion: deletion, correlation: correlation, command: "notes categories delete",
            of: Category.stream(Self.categoryID(index, spec: spec)), deletedType: CategoryEvent.deleted.type,
            notesWhere: { $0.category == index }, clear: { $0.category = -1 }, with: .categorized(category: nil))
    }

    /// A deletion by the nullify rule, as the notebook writes it: one event per note naming the
    /// entity (`with`, caused by the deletion, after `clear` changes the note's state), then the
    /// entity's deletion, all with one correlation id.
    private mutating func nullify(
        deletion: Identifier, correlation: Identifier, command: String, of stream: String, deletedType: String,
        payload: [UInt8] = [], notesWhere names: (NoteState) -> Bool, clear: (inout NoteState) -> Void,
        with e: NoteEvent
    ) {
        var meta = metadata(command: command)
        meta.correlationID = correlation
        for n in notes.indices where names(notes[n]) {
            clear(&notes[n])
            notes[n].version += 1
            var m = meta
            m.causationID = deletion
            pending.append(
                Event(
                    stream: Note.stream(Self.noteID(n, spec: spec)),
                    event: NewEvent(id: newID(), type: e.type, schemaVersion: 1, payload: e.payload, metadata: m)))
        }
        pending.append(
            Event(
                stream: stream,
                event: NewEvent(id: deletion, type: deletedType, schemaVersion: 1, payload: payload, metadata: meta)))
    }

    /// Merges the last live category into the first, as a sync does when a rename meets a name
    /// another device gave its own: each member note is filed under the first, then the merge.
    private mutating func mergeCategory() {
        let live = categoryLive.indices.filter { categoryLive[$0] }
        guard live.count > 1, let into = live.first, let index = live.last else { return }
        categoryLive[index] = false
        let merge = newID()
        let target = Self.categoryID(into, spec: spec)
        nullify(
            deletion: merge, correlation: newID(), command: "notes sync",
            of: Category.stream(Self.categoryID(index, spec: spec)),
            deletedType: CategoryEvent.merged(into: target).type, payload: CategoryEvent.merged(into: target).payload,
            notesWhere: { $0.category == index }, clear: { $0.category = into }, with: .categorized(category: target))
    }

    /// Merges the last live top-level tag into the first: each note carrying it is untagged
    /// (a sync would also tag it with the first; one event a note keeps the generator simple),
    /// then the merge.
    private mutating func mergeTag() {
        let live = tagLive.indices.filter { tagLive[$0] && !tagNames[$0].contains("/") }
        guard live.count > 1, let into = live.first, let index = live.last else { return createNote() }
        tagLive[index] = false
        let merge = newID()
        let id = Self.tagID(index, spec: spec)
        let target = Self.tagID(into, spec: spec)
        nullify(
            deletion: merge, correlation: newID(), command: "notes sync", of: Tag.stream(id),
            deletedType: TagEvent.merged(into: target).type, payload: TagEvent.merged(into: target).payload,
            notesWhere: { $0.tags.contains(index) }, clear: { $0.tags.removeAll { $0 == index } },
            with: .untagged(tag: id))
    }

    private mutating func createTag() {
        let index = tagNames.count
        var name = text.title(using: &rng).split(separator: " ").prefix(1).joined() + " \(index)"
        // A third of the tags nest below an earlier top-level tag.
        let parents = tagNames.indices.filter { !tagNames[$0].contains("/") }
        if !parents.isEmpty && rng.chance(0.33) {
            name = tagNames[parents[rng.next(below: parents.count)]] + "/" + name
        }
        tagNames.append(name)
        tagLive.append(true)
        let e = TagEvent.created(name: name)
        push(Tag.stream(Self.tagID(index, spec: spec)), e.type, 1, e.payload, "notes add")
    }

    /// Renames a top-level tag and the tags below it, as `notes tags rename` does.
    private mutating func renameTag() {
        guard let index = tagNames.indices.first(where: { tagLive[$0] && !tagNames[$0].contains("/") }) else {
            return createNote()
        }
        let old = tagNames[index]
        let new = old + " renamed"
        let correlation = newID()
        for t in tagNames.indices where tagLive[t] && (tagNames[t] == old || tagNames[t].hasPrefix(old + "/")) {
            tagNames[t] = new + tagNames[t].dropFirst(old.count)
            var meta = metadata(command: "notes tags rename")
            meta.correlationID = correlation
            let e = TagEvent.renamed(name: tagNames[t])
            pending.append(
                Event(
                    stream: Tag.stream(Self.tagID(t, spec: spec)),
                    event: NewEvent(id: newID(), type: e.type, schemaVersion: 1, payload: e.payload, metadata: meta)))
        }
    }

    /// Deletes the last live nested tag the way the notebook does: each note carrying it gets a
    /// `NoteUntagged` caused by the deletion.
    private mutating func deleteTag() {
        guard let index = tagLive.indices.last(where: { tagLive[$0] && tagNames[$0].contains("/") }) else {
            return createNote()
        }
        tagLive[index] = false
        let deletion = newID()
        let correlation = newID()
        let id = Self.tagID(index, spec: spec)
        nullify(
            deletion: deletion, correlation: correlation, command: "notes tags delete", of: Tag.stream(id),
            deletedType: TagEvent.deleted.type, notesWhere: { $0.tags.contains(index) },
            clear: { $0.tags.removeAll { $0 == index } }, with: .untagged(tag: id))
    }

    /// A live tag, the first ones more often (a few tags hold most notes).
    private mutating func liveTag() -> Int? {
        let live = tagLive.indices.filter { tagLive[$0] }
        guard !live.isEmpty else { return nil }
        return live[min(rng.next(below: live.count), rng.next(below: live.count), rng.next(below: live.count))]
    }

    private mutating func liveCategory() -> Int {
        let live = categoryLive.indices.filter { categoryLive[$0] }
        return live.isEmpty ? -1 : live[min(rng.next(below: live.count), rng.next(below: live.count))]
    }

    /// A line with a wiki link to an earlier note: by its current title, a fifth of them by
    /// the first 8 digits of its id.
    private mutating func linkLine() -> String {
        let target = rng.next(below: notes.count)
        if rng.chance(0.2) { return "Linked: [[\(Self.noteID(target, spec: spec).hex.prefix(8))]].\n" }
        return "See [[\(notes[target].title)]].\n"
    }

    private mutating func createNote() {
        let index = notes.count
        let legacy = index > 0 && rng.chance(spec.legacyShare)
        var state = NoteState(title: text.title(using: &rng), body: text.body(using: &rng), version: 1, legacy: legacy)
        // A quarter of the notes link to an earlier one when created.
        if index > 0, rng.chance(0.25) { state.body += linkLine() }
        state.pinned = rng.chance(0.05)
        let stream = Note.stream(Self.noteID(index, spec: spec))
        if legacy {
            let fields: [(String, FieldValue)] = [
                ("title", .string(state.title)), ("content", .string(state.body)), ("isPinned", .bool(state.pinned)),
            ]
            push(stream, NotesSchema.LegacyType.created.rawValue, 1, Self.legacyPayload(.created, fields), nil)
        } else {
            // The hot note stays uncategorized, so a category deletion adds no version to it.
            state.category = index > 0 && rng.chance(0.6) ? liveCategory() : -1
            let category = state.category >= 0 ? Self.categoryID(state.category, spec: spec) : nil
            let e = NoteEvent.created(title: state.title, body: state.body, pinned: state.pinned, category: category)
            push(stream, e.type, e.schemaVersion, e.payload, "notes add")
            // About half the notes (never the hot one) get one to three tags with their creation.
            if index > 0 && creationsTag && rng.chance(0.5) {
                for _ in 0..<(1 + rng.next(below: 3)) {
                    guard let t = liveTag(), !state.tags.contains(t) else { continue }
                    state.tags.append(t)
                    state.version += 1
                    let tagged = NoteEvent.tagged(tag: Self.tagID(t, spec: spec))
                    push(stream, tagged.type, tagged.schemaVersion, tagged.payload, "notes add")
                }
            }
        }
        notes.append(state)
    }

    private mutating func edit(_ index: Int, hot: Bool) {
        notes[index].version += 1
        if notes[index].legacy && !notes[index].trashed {
            return legacyEdit(index)
        }
        var n = notes[index]
        let roll = hot ? rng.next(below: 60) : rng.next(below: 100)
        let event: NoteEvent
        let command: String
        switch roll {
        case 0..<45:
            n.body = text.edit(n.body, using: &rng)
            if rng.chance(0.05) { n.body += linkLine() }
            // Now and then the edit is one a sync merged with another device's (chosen by the
            // version, so the random sequence, and every other event, stays as it was).
            if n.version % 41 == 0 {
                (event, command) = (.bodyConflicted(base: UInt64(n.version - 2), body: n.body), "notes sync")
            } else if n.version % 13 == 0 {
                (event, command) = (.bodyMerged(base: UInt64(n.version - 2), body: n.body), "notes sync")
            } else {
                (event, command) = (.bodyEdited(body: n.body), "notes edit")
            }
        case 45..<57:
            n.title = text.title(using: &rng)
            (event, command) = (.retitled(title: n.title), "notes edit")
        case 57..<67:
            n.pinned.toggle()
            (event, command) = n.pinned ? (.pinned, "notes pin") : (.unpinned, "notes unpin")
        case 67..<77:
            let c = n.category >= 0 && rng.chance(0.3) ? -1 : liveCategory()
            n.category = c
            let id = c >= 0 ? Self.categoryID(c, spec: spec) : nil
            (event, command) = (.categorized(category: id), "notes categorize")
        case 77..<85:
            n.archived.toggle()
            (event, command) = n.archived ? (.archived, "notes archive") : (.unarchived, "notes unarchive")
        case 85..<89:
            n.trashed.toggle()
            (event, command) = n.trashed ? (.trashed, "notes trash") : (.untrashed, "notes untrash")
        case 89..<92 where !hot:
            // Untag one of its tags, or tag it with a tag it lacks.
            if let t = n.tags.first, rng.chance(0.4) {
                n.tags.removeFirst()
                (event, command) = (.untagged(tag: Self.tagID(t, spec: spec)), "notes untag")
            } else if let t = liveTag(), !n.tags.contains(t) {
                n.tags.append(t)
                (event, command) = (.tagged(tag: Self.tagID(t, spec: spec)), "notes tag")
            } else {
                // Another name for the note, as an import from a Markdown vault gives one.
                let alias = text.title(using: &rng)
                (event, command) = (
                    .propertySet(key: NoteProperty.aliases.rawValue, value: alias), "notes import-markdown"
                )
            }
        case 89..<92:
            n.trashed.toggle()
            (event, command) = n.trashed ? (.trashed, "notes trash") : (.untrashed, "notes untrash")
        default:
            // The restored text is new text standing in for the old version's; the fold does not
            // look back, so the benchmark's work is the same as with the real old text.
            let from = UInt64(1 + rng.next(below: max(1, n.version - 1)))
            n.title = text.title(using: &rng)
            n.body = text.body(using: &rng)
            n.trashed = false
            let c = n.category >= 0 ? Self.categoryID(n.category, spec: spec) : nil
            event = .restored(fromVersion: from, title: n.title, body: n.body, pinned: n.pinned, category: c)
            command = "notes restore"
        }
        notes[index] = n
        push(note: index, event, command: command)
    }

    private mutating func legacyEdit(_ index: Int) {
        let stream = Note.stream(Self.noteID(index, spec: spec))
        let roll = rng.next(below: 100)
        if roll < 70 {
            if rng.chance(0.2) { notes[index].title = text.title(using: &rng) }
            notes[index].body = text.edit(notes[index].body, using: &rng)
            let fields: [(String, FieldValue)] = [
                ("title", .string(notes[index].title)), ("content", .string(notes[index].body)),
            ]
            push(stream, NotesSchema.LegacyType.updated.rawValue, 1, Self.legacyPayload(.updated, fields), nil)
        } else if roll < 95 {
            notes[index].pinned.toggle()
            let fields: [(String, FieldValue)] = [("isPinned", .bool(notes[index].pinned))]
            push(stream, NotesSchema.LegacyType.pinToggled.rawValue, 1, Self.legacyPayload(.pinToggled, fields), nil)
        } else {
            notes[index].trashed = true
            push(stream, NotesSchema.LegacyType.deleted.rawValue, 1, Self.legacyPayload(.deleted, []), nil)
        }
    }

    /// A schema-1 payload, encoded by its schema in the registry (the workload writes the
    /// first notes model the way that model's program did).
    private static func legacyPayload(_ type: NotesSchema.LegacyType, _ fields: [(String, FieldValue)]) -> [UInt8] {
        guard let schema = NotesSchema.registry.schemas[SchemaKey(type.rawValue, 1)],
            let payload = try? schema.encode(EventFields(fields))
        else { preconditionFailure("the legacy schema of \(type) does not take \(fields.map(\.0))") }
        return payload
    }
}
