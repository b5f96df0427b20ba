import Basics
import EventStore
import FoundationEssentials
import Glibc
import Notes
import TestSupport
import Testing

/// The one fold, run by every reader: the inline projections (one event per append, and many
/// per transaction as imports do), the forward replay on 1 to 3 scans, the newest-first replay
/// and the per-event general path must agree on every sequence of events the store can hold.
///
/// The sequences are random and include what the fold refuses (an event of a note or category
/// never created, a second creation, a category event in a note stream): the inline projection
/// refuses the append, so the store never holds it, and every replay then agrees on what it does
/// hold. A store written without projections can hold such a sequence; every replay then reports
/// it as damage at its position.
@Suite("One fold: inline projections equal every replay, for every sequence the store can hold")
struct FoldAgreementTests {
    static let meta = EventMetadata(actor: "fold@test")

    /// A random event: mostly valid, sometimes one the fold must refuse.
    struct Generator {
        var rng: SeededGenerator
        var notes: [Identifier] = []
        var categories: [Identifier] = []
        var tags: [Identifier] = []
        var next: UInt64 = 1

        mutating func id(_ high: UInt64) -> Identifier {
            next += 1
            return Identifier(high: high << 48 | 0x4000, low: 0x8000_0000_0000_0000 | next)
        }

        mutating func pick(_ ids: [Identifier], orNew high: UInt64) -> Identifier {
            ids.isEmpty || rng.below(10) == 0 ? id(high) : ids[rng.below(ids.count)]
        }

        mutating func text() -> String { ["a", "b\n", "ünï", "", "line 1\nline 2\n", "🎉"][rng.below(6)] }

        mutating func legacy(_ type: NotesSchema.LegacyType, _ fields: [(String, FieldValue)]) -> NewEvent {
            let schema = NotesSchema.registry.schemas[SchemaKey(type.rawValue, 1)]!
            return NewEvent(
                id: id(0xE), type: type.rawValue, schemaVersion: 1, payload: try! schema.encode(EventFields(fields)),
                metadata: FoldAgreementTests.meta)
        }

        /// The stream and event; `notes` and `categories` learn the ids created.
        mutating func event() -> (String, NewEvent) {
            let roll = rng.below(100)
            if roll < 10 {
                // A category event; its id sometimes never created (renamed before creation).
                let c = roll < 4 ? id(0xC) : pick(categories, orNew: 0xC)
                let event: CategoryEvent =
                    roll < 4
                    ? .created(name: "cat \(c.low & 0xFF)") : roll < 8 ? .renamed(name: text() + "x") : .deleted
                if case .created = event { categories.append(c) }
                return (Category.stream(c), event.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
            }
            if roll < 12 {
                // A category event in a note stream: a type the family does not have.
                let n = pick(notes, orNew: 0xA)
                return (Note.stream(n), CategoryEvent.deleted.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
            }
            if roll < 26 {
                // A creation, sometimes of a note that exists; sometimes in the first model's schema.
                let n = roll < 23 ? id(0xA) : pick(notes, orNew: 0xA)
                notes.append(n)
                if roll % 3 == 0 {
                    return (
                        Note.stream(n),
                        legacy(
                            .created,
                            [
                                ("title", .string(text() + "t")), ("content", .string(text())),
                                ("isPinned", .bool(roll % 2 == 0)),
                            ])
                    )
                }
                let category = categories.isEmpty || rng.below(2) == 0 ? nil : categories[rng.below(categories.count)]
                let e = NoteEvent.created(
                    title: "t" + text(), body: text(), pinned: rng.below(4) == 0, category: category)
                return (Note.stream(n), e.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
            }
            if roll >= 92 {
                // A tag event, sometimes of a tag never created, sometimes in a note stream.
                let t = roll < 94 ? id(0xF) : pick(tags, orNew: 0xF)
                let event: TagEvent =
                    roll < 94
                    ? .created(name: "tag \(t.low & 0xFF)/x") : roll < 97 ? .renamed(name: "r" + text()) : .deleted
                if case .created = event { tags.append(t) }
                let stream = roll == 99 ? Note.stream(pick(notes, orNew: 0xA)) : Tag.stream(t)
                return (stream, event.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
            }
            let n = pick(notes, orNew: 0xA)
            let event: NoteEvent
            if roll == 85 || roll == 86 {
                // Properties set, changed and removed: aliases and file names that links resolve to.
                let keys = ["aliases", "source", "front-matter", "other"]
                let values = ["", "r" + text(), "a\nb", "notes/\(text()).md", "x"]
                event = .propertySet(key: keys[rng.below(keys.count)], value: values[rng.below(values.count)])
                return (Note.stream(n), event.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
            }
            if roll >= 85 {
                // Tagging and untagging, with tags that exist or not.
                let t = pick(tags, orNew: 0xF)
                event = roll < 89 ? .tagged(tag: t) : .untagged(tag: t)
                return (Note.stream(n), event.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
            }
            switch rng.below(16) {
            case 0:
                return (
                    Note.stream(n), legacy(.updated, [("title", .string("u" + text())), ("content", .string(text()))])
                )
            case 1: return (Note.stream(n), legacy(.pinToggled, [("isPinned", .bool(rng.below(2) == 0))]))
            case 2: return (Note.stream(n), legacy(.deleted, []))
            case 3, 4: event = .bodyEdited(body: text())
            case 5: event = .retitled(title: "r" + text())
            case 6: event = .pinned
            case 7: event = .unpinned
            case 8:
                event = .categorized(
                    category: categories.isEmpty || rng.below(3) == 0 ? nil : categories[rng.below(categories.count)])
            case 9: event = .archived
            case 10: event = .unarchived
            case 11: event = .trashed
            case 12: event = .untrashed
            default:
                event = .restored(
                    fromVersion: UInt64(rng.below(5) + 1), title: "v" + text(), body: text(), pinned: rng.below(2) == 0,
                    category: categories.first)
            }
            return (Note.stream(n), event.newEvent(id: id(0xE), metadata: FoldAgreementTests.meta))
        }
    }

    final class Scratch {
        let path: String
        init() throws {
            var template = Array("/tmp/notes-fold.XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
            path = String(cString: try #require(made))
        }
        deinit { _ = system("rm -rf '\(path)'") }
    }

    /// A notebook's options with a fixed clock.
    static var options: Notebook.Options {
        var options = Notebook.Options(actor: "fold@test")
        options.clock = { 1_800_000_000_000_000 }
        return options
    }

    /// The per-event general fold, the reference.
    static func reference(_ store: EventStore) throws -> NotebookState {
        var state = NotebookState()
        try store.read { txn in
            try store.forEachEvent(from: 1, in: txn) { view in
                try state.apply(view, store: store)
                return true
            }
        }
        return state
    }

    static func expectSame(_ a: NotebookState, _ b: NotebookState, _ what: String) {
        #expect(a.events == b.events, "\(what): events")
        #expect(a.categories == b.categories, "\(what): categories")
        #expect(a.tags == b.tags, "\(what): tags")
        #expect(a.notes == b.notes, "\(what): notes")
    }

    @Test(
        "random sequences, appended one by one and in batches: the store holds what the fold accepts, and every reader agrees",
        arguments: [1, 2, 3, 4])
    func randomSequences(seed: UInt64) throws {
        let scratch = try Scratch()
        let options = Self.options
        let book = try Notebook(path: scratch.path + "/store", options: options)
        var g = Generator(rng: SeededGenerator(seed: seed))
        var refused = 0
        var accepted = 0
        for round in 0..<300 {
            // One event per append, or a batch in one transaction with deferred projections.
            let known = (g.notes, g.categories, g.tags)
            let batch = (0..<(round % 3 == 0 ? 4 : 1)).map { _ in g.event() }
            do {
                try book.store.write { session in
                    if batch.count > 1 { try session.deferProjections(expecting: 0) }
                    for (stream, e) in batch { try session.append([e], to: stream) }
                }
                accepted += batch.count
            } catch is FoldError {
                refused += 1
                (g.notes, g.categories, g.tags) = known
            } catch let e as StoreError {
                // An event type the stream cannot hold is refused by the store's own checks too.
                Issue.record("seed \(seed): unexpected \(e)")
            }
        }
        #expect(refused > 0 && accepted > 100, "seed \(seed): \(accepted) accepted, \(refused) refused")
        let problems = try book.verify()
        #expect(problems.isEmpty, "seed \(seed): the projections equal a replay: \(problems.prefix(3))")
        let reference = try Self.reference(book.store)
        for shards in [1, 2, 3] {
            Self.expectSame(
                try NotebookState.replay(store: book.store, upTo: .max, shards: shards), reference,
                "seed \(seed), \(shards) scans")
        }
        Self.expectSame(try NotebookState.replayNewestFirst(store: book.store), reference, "seed \(seed), newest first")
        // And every note's projected record is its history's last revision.
        for note in reference.notes.values {
            #expect(try book.note(note.id) == note, "seed \(seed)")
            #expect(try book.revisions(of: note.id).last?.note == note, "seed \(seed): time travel")
        }
    }

    @Test(
        "a transaction that appends at least as many events as the log held projects them in bulk, as inline appends do",
        arguments: [5, 6, 7])
    func bulkProjections(seed: UInt64) throws {
        let scratch = try Scratch()
        let options = Self.options
        // The events of a random sequence the fold accepts, appended one by one.
        let inline = try Notebook(path: scratch.path + "/inline", options: options)
        var g = Generator(rng: SeededGenerator(seed: seed))
        var accepted: [(stream: String, event: NewEvent)] = []
        while accepted.count < 400 {
            let known = (g.notes, g.categories, g.tags)
            let (stream, e) = g.event()
            do {
                _ = try inline.store.write { session in try session.append([e], to: stream) }
                accepted.append((stream, e))
            } catch is FoldError {
                (g.notes, g.categories, g.tags) = known
            }
        }
        let reference = try Self.reference(inline.store)
        var all = ListQuery()
        all.status = .all
        let listing = try inline.list(all)
        // The same events: the first `split` one by one, the rest in one transaction of bulk
        // projections (its deferred batches folded on the way).
        for split in [0, 1, 150, 200] {
            let book = try Notebook(path: scratch.path + "/bulk-\(split)", options: options)
            for (stream, e) in accepted[..<split] { try book.store.append([e], to: stream) }
            let rest = accepted[split...]
            try book.store.write { session in
                try session.deferProjections(expecting: rest.count)
                let bulk = session.projectsInBulk
                #expect(bulk, "seed \(seed), split \(split)")
                for (i, (stream, e)) in rest.enumerated() {
                    try session.append([e], to: stream)
                    if i % 64 == 63 { try session.applyDeferredProjections() }
                }
            }
            let what = "seed \(seed), split \(split)"
            #expect(try book.verify().isEmpty, "\(what): the projections equal a replay")
            Self.expectSame(try Self.reference(book.store), reference, what)
            #expect(try book.list(all) == listing, "\(what): the listing")
            for note in reference.notes.values { #expect(try book.note(note.id) == note, "\(what)") }
        }
        // A bulk transaction whose events are all stored already (an import run twice) changes
        // nothing, projections included.
        let again = try Notebook(path: scratch.path + "/bulk-0", options: options)
        try again.store.write { session in
            try session.deferProjections(expecting: accepted.count)
            for (stream, e) in accepted { try session.append([e], to: stream) }
        }
        #expect(try again.verify().isEmpty)
        #expect(try again.list(all) == listing)
        // A log longer than the events announced: deferred, folded in place, not in bulk.
        let book = try Notebook(path: scratch.path + "/deferred", options: options)
        for (stream, e) in accepted[..<300] { try book.store.append([e], to: stream) }
        try book.store.write { session in
            try session.deferProjections(expecting: 100)
            let bulk = session.projectsInBulk
            #expect(!bulk)
            for (stream, e) in accepted[300...] { try session.append([e], to: stream) }
        }
        #expect(try book.verify().isEmpty)
        #expect(try book.list(all) == listing)
    }

    @Test(
        "an event the fold refuses fails a transaction of bulk projections as it fails an inline one: nothing is stored"
    )
    func bulkRefusal() throws {
        let scratch = try Scratch()
        let book = try Notebook(path: scratch.path + "/store", options: Notebook.Options(actor: "fold@test"))
        let n = Identifier(high: 0x4000, low: 1)
        let created = NoteEvent.created(title: "t", body: "b", pinned: false, category: nil)
        let events = [
            created.newEvent(id: Identifier(high: 0x9000, low: 1), metadata: Self.meta),
            created.newEvent(id: Identifier(high: 0x9000, low: 2), metadata: Self.meta),
        ]
        #expect(throws: FoldError.self) {
            try book.store.write { session in
                try session.deferProjections(expecting: 2)
                let bulk = session.projectsInBulk
                #expect(bulk)
                for e in events { try session.append([e], to: Note.stream(n)) }
            }
        }
        #expect(try book.store.read { txn in try book.store.headPosition(in: txn) } == 0)
        #expect(try book.verify().isEmpty)
    }

    @Test("a store written without projections that holds a refused sequence: every replay reports it at its position")
    func refusedSequencesAreDamage() throws {
        let cases: [(String, [(String, NewEvent)])] = {
            let n = Identifier(high: 0x4000, low: 1)
            let c = Identifier(high: 0x4000, low: 2)
            let created = NoteEvent.created(title: "t", body: "b", pinned: false, category: nil)
            func e(_ event: NoteEvent, _ k: UInt64) -> NewEvent {
                event.newEvent(id: Identifier(high: 0x9000, low: k), metadata: Self.meta)
            }
            func ce(_ event: CategoryEvent, _ k: UInt64) -> NewEvent {
                event.newEvent(id: Identifier(high: 0x9000, low: k), metadata: Self.meta)
            }
            return [
                ("note X does not begin with NoteCreated", [(Note.stream(n), e(.pinned, 1))]),
                ("note X is created twice", [(Note.stream(n), e(created, 1)), (Note.stream(n), e(created, 2))]),
                ("category X: CategoryRenamed before its creation", [(Category.stream(c), ce(.renamed(name: "x"), 1))]),
                (
                    "CategoryDeleted v1 is not a note event",
                    [(Note.stream(n), e(created, 1)), (Note.stream(n), ce(.deleted, 2))]
                ),
            ]
        }()
        for (message, events) in cases {
            let scratch = try Scratch()
            let store = try EventStore(path: scratch.path, configuration: .init(registry: NotesSchema.registry))
            for (stream, e) in events { try store.append([e], to: stream) }
            let expected = message.replacing(
                "X", with: "\(Identifier(high: 0x4000, low: message.hasPrefix("category") ? 2 : 1))")
            var readers: [(String, () throws -> NotebookState)] = [("reference", { try Self.reference(store) })]
            for shards in [1, 2] {
                readers.append(
                    ("\(shards) scans", { try NotebookState.replay(store: store, upTo: .max, shards: shards) }))
            }
            if !message.contains("created twice") {
                // Newest first stops at a note's newest creation: it never reads an older one.
                readers.append(("newest first", { try NotebookState.replayNewestFirst(store: store) }))
            }
            for (name, read) in readers {
                do {
                    _ = try read()
                    Issue.record("\(name): \(message) was not reported")
                } catch StoreError.damaged(let position, let detail) {
                    #expect(detail == expected, "\(name): \(detail)")
                    if name != "newest first" {
                        #expect(position == UInt64(events.count), "\(name): position \(String(describing: position))")
                    }
                } catch {
                    Issue.record("\(name): \(error)")
                }
            }
        }
    }
}
