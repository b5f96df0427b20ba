import Basics
import EventStore
import Glibc
import LMDB
import Notes
import SearchEngine
import Synchronization
import Testing

/// Schema evolution at the notes level: upcaster chains, 1 -> N, retired types, refusal of
/// unknown events, and the rebuild a changed projection version triggers at open.
@Suite("Schema evolution of the notes store")
struct SchemaEvolutionTests {
    static let meta = EventMetadata(actor: "ana@old-laptop", command: "notes-classic")

    /// Today's registry plus what a test adds (as a program embedding the library would).
    static func registry(_ extend: (inout SchemaRegistry) -> Void) -> SchemaRegistry {
        var r = NotesSchema.registry
        extend(&r)
        return r
    }

    /// An older note type than schema 1 itself: `NoteJotted` v1 {text} -> v2 {title, text} ->
    /// v3 {title, text, starred} -> `NoteCreated` v1, after which the shipped upcaster lifts it
    /// to `NoteCreated` v2.
    static let jotted = registry { r in
        r.registerLegacy(PayloadSchema(type: "NoteJotted", version: 1, fields: [.init("text", .string)]))
        r.registerLegacy(
            PayloadSchema(type: "NoteJotted", version: 2, fields: [.init("title", .string), .init("text", .string)]))
        r.registerLegacy(
            PayloadSchema(
                type: "NoteJotted", version: 3,
                fields: [.init("title", .string), .init("text", .string), .init("starred", .bool)]))
        r.register(
            Upcaster(type: "NoteJotted", from: 1, name: "NoteJotted.1->2", produces: [SchemaKey("NoteJotted", 2)]) {
                old in
                guard case .string(let text) = old.fields["text"] else { return [] }
                let title = text.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? "Untitled"
                return [
                    RawEvent(
                        type: "NoteJotted", version: 2,
                        fields: EventFields([("title", .string(title)), ("text", .string(text))]))
                ]
            })
        r.register(
            Upcaster(type: "NoteJotted", from: 2, name: "NoteJotted.2->3", produces: [SchemaKey("NoteJotted", 3)]) {
                old in
                var f = old.fields
                f["starred"] = .bool(false)
                return [RawEvent(type: "NoteJotted", version: 3, fields: f)]
            })
        r.register(
            Upcaster(
                type: "NoteJotted", from: 3, name: "NoteJotted.3->NoteCreated.1",
                produces: [SchemaKey("NoteCreated", 1)]
            ) { old in
                [
                    RawEvent(
                        type: "NoteCreated", version: 1,
                        fields: EventFields([
                            ("title", old.fields["title"] ?? .string("")),
                            ("content", old.fields["text"] ?? .string("")),
                            ("isPinned", old.fields["starred"] ?? .bool(false)),
                        ]))
                ]
            })
    }

    static func openStore(_ path: String, registry: SchemaRegistry) throws -> (EventStore, NotesProjection) {
        let projection = NotesProjection()
        var config = EventStore.Configuration(registry: registry, projections: projection)
        config.clock = { 1_700_000_000_000_000 }
        let store = try EventStore(path: path, configuration: config)
        _ = try store.rebuildIfNeeded()
        return (store, projection)
    }

    static func legacyEvent(
        _ n: UInt64, _ type: String, _ version: UInt32, _ fields: [(String, FieldValue)], registry: SchemaRegistry
    ) throws -> NewEvent {
        let schema = try #require(registry.schemas[SchemaKey(type, version)])
        return NewEvent(
            id: Identifier(high: 0xE000_0000_0000_4000, low: 0x8000_0000_0000_0000 | n), type: type,
            schemaVersion: version, payload: try schema.encode(EventFields(fields)), metadata: meta)
    }

    /// Every note in the active projections, by id.
    static func projectedNotes(_ store: EventStore, _ projection: NotesProjection) throws -> [Note] {
        try store.read { txn in
            try projection.list(allNotes, in: txn, databases: try store.activeProjections(in: txn))
        }.sorted { $0.id < $1.id }
    }

    /// The projections agree with a replay of the log.
    static func expectProjectionsMatchReplay(
        _ store: EventStore, _ projection: NotesProjection, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let replayed = try NotebookState.replay(store: store)
        let projected = try projectedNotes(store, projection)
        #expect(projected.count == replayed.notes.count, sourceLocation: sourceLocation)
        for n in projected {
            #expect(replayed.notes[n.id] == n, "note \(n.id) differs from a replay", sourceLocation: sourceLocation)
        }
    }

    static func id(_ n: UInt64) -> Identifier {
        Identifier(high: 0x1234_0000_0000_4000, low: 0x8000_0000_0000_0000 | n)
    }

    @Test("a chain of three versions, a rename and the shipped upcaster lift to today's NoteCreated")
    func threeVersionChain() throws {
        let scratch = try SchemaScratch()
        let r = Self.jotted
        for v in 1...3 as ClosedRange<UInt32> { #expect(r.canRead(SchemaKey("NoteJotted", v))) }
        #expect(!NotesSchema.registry.canRead(SchemaKey("NoteJotted", 1)), "today's registry alone cannot")

        let (store, projection) = try Self.openStore(scratch.sub("store"), registry: r)
        try store.append(
            [try Self.legacyEvent(1, "NoteJotted", 1, [("text", .string("Milk\nand eggs\n"))], registry: r)],
            to: Note.stream(Self.id(1)))
        try store.append(
            [
                try Self.legacyEvent(
                    2, "NoteJotted", 2, [("title", .string("Ideas")), ("text", .string("one\n"))], registry: r)
            ], to: Note.stream(Self.id(2)))
        try store.append(
            [
                try Self.legacyEvent(
                    3, "NoteJotted", 3,
                    [("title", .string("Starred")), ("text", .string("two\n")), ("starred", .bool(true))],
                    registry: r)
            ], to: Note.stream(Self.id(3)))
        try store.append(
            [try Self.legacyEvent(4, "NotePinToggled", 1, [("isPinned", .bool(true))], registry: r)],
            to: Note.stream(Self.id(1)))

        let lifted = try store.read { txn in
            var out: [LiftedEvent] = []
            try store.forEachEvent(from: 1, in: txn) { view in
                out += try store.lift(view)
                return true
            }
            return out
        }
        #expect(lifted.map(\.type) == ["NoteCreated", "NoteCreated", "NoteCreated", "NotePinned"])
        #expect(lifted.map(\.schemaVersion) == [2, 2, 2, 1])
        let created = try #require(r.schemas[SchemaKey("NoteCreated", 2)]).decode(lifted[0].payload)
        #expect(
            created
                == EventFields([
                    ("title", .string("Milk")), ("body", .string("Milk\nand eggs\n")), ("pinned", .bool(false)),
                    ("category", .null),
                ]))

        let notes = try Self.projectedNotes(store, projection)
        #expect(notes.map(\.title) == ["Milk", "Ideas", "Starred"])
        #expect(notes.map(\.pinned) == [true, false, true])
        #expect(notes.map(\.version) == [2, 1, 1])
        try Self.expectProjectionsMatchReplay(store, projection)
        try store.rebuildProjections()
        #expect(try Self.projectedNotes(store, projection) == notes)
    }

    @Test("NoteUpdated v1 lifts to two events that share the stored event's position, id and version")
    func oneToMany() throws {
        let scratch = try SchemaScratch()
        let r = NotesSchema.registry
        let (store, projection) = try Self.openStore(scratch.sub("store"), registry: r)
        let stream = Note.stream(Self.id(1))
        try store.append(
            [
                try Self.legacyEvent(
                    1, "NoteCreated", 1,
                    [("title", .string("Draft")), ("content", .string("a\n")), ("isPinned", .bool(false))], registry: r),
                try Self.legacyEvent(
                    2, "NoteUpdated", 1, [("title", .string("Final")), ("content", .string("a\nb\n"))], registry: r),
            ], to: stream)
        let lifted = try store.read { txn in
            var out: [LiftedEvent] = []
            try store.forEachEvent(inStream: stream, versions: 2...2, in: txn) { view in
                out += try store.lift(view)
                return true
            }
            return out
        }
        #expect(lifted.map(\.type) == ["NoteRetitled", "NoteBodyEdited"])
        #expect(Set(lifted.map(\.position)) == [2])
        #expect(Set(lifted.map(\.version)) == [2])
        #expect(Set(lifted.map(\.id)) == [Identifier(high: 0xE000_0000_0000_4000, low: 0x8000_0000_0000_0002)])
        #expect(try r.schemas[SchemaKey("NoteRetitled", 1)]?.decode(lifted[0].payload)["title"] == .string("Final"))
        #expect(try r.schemas[SchemaKey("NoteBodyEdited", 1)]?.decode(lifted[1].payload)["body"] == .string("a\nb\n"))

        let note = try #require(try Self.projectedNotes(store, projection).first)
        #expect(note.title == "Final" && note.body == "a\nb\n" && note.version == 2)
        try Self.expectProjectionsMatchReplay(store, projection)
    }

    @Test("a retired type lifts to nothing and leaves the projections equal to a replay")
    func retiredType() throws {
        let scratch = try SchemaScratch()
        let r = Self.registry { r in
            r.registerLegacy(PayloadSchema(type: "NoteViewed", version: 1, fields: [.init("client", .string)]))
            r.register(Upcaster(type: "NoteViewed", from: 1, name: "NoteViewed.1->retired", produces: []) { _ in [] })
        }
        #expect(r.canRead(SchemaKey("NoteViewed", 1)))
        let (store, projection) = try Self.openStore(scratch.sub("store"), registry: r)
        try store.append(
            [
                try Self.legacyEvent(
                    1, "NoteCreated", 1,
                    [("title", .string("Kept")), ("content", .string("x\n")), ("isPinned", .bool(false))], registry: r),
                try Self.legacyEvent(2, "NoteViewed", 1, [("client", .string("web"))], registry: r),
            ], to: Note.stream(Self.id(1)))
        try store.append(
            [try Self.legacyEvent(3, "NoteViewed", 1, [("client", .string("cli"))], registry: r)], to: "telemetry/1")
        let lifted = try store.read { txn in
            var out: [[LiftedEvent]] = []
            try store.forEachEvent(from: 1, in: txn) { view in
                out.append(try store.lift(view))
                return true
            }
            return out
        }
        #expect(lifted.map(\.count) == [1, 0, 0])
        let notes = try Self.projectedNotes(store, projection)
        #expect(notes.map(\.title) == ["Kept"])
        try Self.expectProjectionsMatchReplay(store, projection)
        try store.rebuildProjections()
        #expect(try Self.projectedNotes(store, projection) == notes)
        #expect(try store.catalogue()[SchemaKey("NoteViewed", 1)] == 2)
    }

    @Test("a program that replaces a shipped upcaster gets its own lift in every replay, split or not")
    func replacedShippedUpcaster() throws {
        let scratch = try SchemaScratch()
        // This program reads the old model's delete as an archive, not as trash.
        let r = Self.registry { r in
            r.register(
                Upcaster(
                    type: "NoteDeleted", from: 1, name: "NoteDeleted.1->NoteArchived",
                    produces: [SchemaKey("NoteArchived", 1)]
                ) { _ in [RawEvent(type: "NoteArchived", version: 1)] })
        }
        let (store, _) = try Self.openStore(scratch.sub("store"), registry: r)
        for n: UInt64 in 1...6 {
            try store.append(
                [
                    try Self.legacyEvent(
                        n * 10, "NoteCreated", 1,
                        [("title", .string("t\(n)")), ("content", .string("c\(n)")), ("isPinned", .bool(true))],
                        registry: r),
                    try Self.legacyEvent(n * 10 + 1, "NoteDeleted", 1, [], registry: r),
                ], to: Note.stream(Self.id(n)))
        }
        for shards in [1, 2, 3] {
            let state = try NotebookState.replay(store: store, upTo: .max, shards: shards)
            #expect(state.notes.count == 6)
            #expect(state.notes.values.allSatisfy { $0.archived && !$0.trashed && $0.pinned }, "\(shards) scans")
        }
    }

    @Test("an unreadable legacy payload is reported at its position by the replay as by the general path")
    func unreadableLegacyPayload() throws {
        let scratch = try SchemaScratch()
        let r = NotesSchema.registry
        // No projections: they would refuse the damaged event at its append.
        let store = try EventStore(path: scratch.sub("store"), configuration: .init(registry: r))
        let created = try Self.legacyEvent(
            1, "NoteCreated", 1, [("title", .string("a")), ("content", .string("b")), ("isPinned", .bool(false))],
            registry: r)
        // A NoteUpdated v1 whose second string is cut short, with a valid checksum.
        let cut = NewEvent(
            id: Self.id(99), type: "NoteUpdated", schemaVersion: 1, payload: [1, 0x61, 5, 0x62], metadata: Self.meta)
        try store.append([created, cut], to: Note.stream(Self.id(1)))
        var general: String?
        do {
            _ = try NotebookState.replayNewestFirst(store: store)
        } catch StoreError.damaged(let at, let detail) {
            #expect(at == 2)
            general = detail
        }
        #expect(general?.contains("cannot upcast NoteUpdated v1") == true)
        for shards in [1, 2] {
            let error = #expect(throws: StoreError.self) {
                try NotebookState.replay(store: store, upTo: .max, shards: shards)
            }
            guard case .damaged(let at, let detail) = error else {
                Issue.record("\(shards) scans: \(String(describing: error))")
                continue
            }
            #expect(at == 2 && detail == general, "\(shards) scans")
        }
    }

    @Test("a store holding an event this program cannot read is refused, naming it, and left unchanged")
    func unknownPairRefused() throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        let newer = Self.registry { r in
            r.registerLegacy(PayloadSchema(type: "NoteFrobnicated", version: 1, fields: [.init("level", .integer)]))
            r.register(
                Upcaster(
                    type: "NoteFrobnicated", from: 1, name: "NoteFrobnicated.1->NotePinned",
                    produces: [SchemaKey("NotePinned", 1)]
                ) { _ in [RawEvent(type: "NotePinned", version: 1)] })
        }
        do {
            let book = try Notebook(path: path, options: schemaOptions(ids: SchemaIDs(prefix: 0xAAAA_0001)))
            let note = try book.add(title: "Plain", body: "text\n")
            try book.add(title: "Other")
            _ = note
        }
        let noteID = Identifier(high: 0xAAAA_0001_0000_4000, low: 0x8000_0000_0000_0001)
        do {
            let (store, projection) = try Self.openStore(path, registry: newer)
            try store.append(
                [try Self.legacyEvent(1, "NoteFrobnicated", 1, [("level", .integer(3))], registry: newer)],
                to: Note.stream(noteID), expecting: .exact(1))
            #expect(try Self.projectedNotes(store, projection).first { $0.id == noteID }?.pinned == true)
        }
        let before = try #require(schemaFileBytes(path + "/data.mdb"))

        var refusal: NotesError?
        do { _ = try Notebook(path: path, options: schemaOptions()) } catch { refusal = error }
        let error = try #require(refusal, "a store with an unreadable event must not open")
        guard case .store(.unreadableEvents(let pairs)) = error else {
            Issue.record("expected unreadableEvents, got \(error)")
            return
        }
        #expect(pairs.map(\.0) == [SchemaKey("NoteFrobnicated", 1)])
        #expect(pairs.map(\.1) == [1])
        #expect(error.description.contains("NoteFrobnicated v1 (1 events)"), "\(error)")
        #expect(schemaFileBytes(path + "/data.mdb") == before, "a refused open changes nothing")

        // Read-only opens are refused the same way, and the newer program still reads it.
        let readOnly = schemaOptions(readOnly: true)
        #expect(throws: NotesError.self) { try Notebook(path: path, options: readOnly) }
        #expect(schemaFileBytes(path + "/data.mdb") == before)
        let (store, projection) = try Self.openStore(path, registry: newer)
        try Self.expectProjectionsMatchReplay(store, projection)
    }

    @Test("a rebuild that must wait for another process's says so once, then runs when the other ends")
    func rebuildWaitIsSaid() throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        _ = try Notebook(path: path, options: schemaOptions()).add(title: "One")
        // Another process's rebuild, as this one sees it: the lock on data.mdb, through a
        // descriptor of its own. The waiting rebuild's notice lets it go.
        let other = open(path + "/data.mdb", O_RDONLY)
        try #require(other >= 0 && flock(other, LOCK_EX) == 0)
        defer { close(other) }
        let notices = Mutex(0)
        var options = schemaOptions()
        options.waitNotice = WaitNotice(after: 0) { what, holder in
            #expect(what == .rebuilding && holder == getpid(), "this process holds it, through `other`")
            notices.withLock { $0 += 1 }
            flock(other, LOCK_UN)
        }
        let book = try Notebook(path: path, options: options)
        let report = try book.rebuild()
        #expect(report.events == 1)
        #expect(notices.withLock { $0 } == 1)
        // Nothing held: no notice.
        _ = try book.rebuild()
        #expect(notices.withLock { $0 } == 1)
    }

    @Test("a store opened read-only, whose index was built in another search language, is searched in that language")
    func readOnlyKeepsTheIndexLanguage() throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        var english = schemaOptions()
        english.searchLanguage = .english
        let book = try Notebook(path: path, options: english)
        let note = try book.add(title: "Habits", body: "we run daily")
        // The index holds `run`: English stems `running` to it; German leaves `running` whole.
        var german = schemaOptions()
        german.searchLanguage = try #require(SearchLanguage("german"))
        german.readOnly = true
        let reader = try Notebook(path: path, options: german)
        #expect(reader.projection.searchLanguage == .english)
        let hits = try reader.search(try SearchQuery.parse("running"), limit: 10, exact: true)
        #expect(hits.results.map(\.result.note.id) == [note.id], "before, no note: the query was stemmed in German")
        // Opened for writing, the projections are rebuilt in the language asked for.
        german.readOnly = false
        #expect(try Notebook(path: path, options: german).projection.searchLanguage.name == "german")
    }

    @Test("a changed projection version rebuilds at open, once, logged, equal to a replay")
    func projectionVersionChange() throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        try SchemaFixtures.copyLegacyStore(to: path)
        let first = try Notebook(path: path, options: schemaOptions())
        let baseVersion = first.store.currentProjectionVersion
        let notesBefore = try first.list(Self.allNotes)
        let logBefore = try first.upgradeLog().count

        // A program with one more upcaster has another projection version: it rebuilds.
        let extended = Self.registry { r in
            r.registerLegacy(PayloadSchema(type: "NoteFrobnicated", version: 1, fields: []))
            r.register(
                Upcaster(
                    type: "NoteFrobnicated", from: 1, name: "NoteFrobnicated.1->NotePinned",
                    produces: [SchemaKey("NotePinned", 1)]
                ) { _ in [RawEvent(type: "NotePinned", version: 1)] })
        }
        let otherVersion: String
        do {
            var config = EventStore.Configuration(registry: extended, projections: NotesProjection())
            config.clock = { 1_700_000_000_000_000 }
            let store = try EventStore(path: path, configuration: config)
            otherVersion = store.currentProjectionVersion
            #expect(otherVersion != baseVersion)
            let report = try #require(try store.rebuildIfNeeded())
            #expect(report.fromVersion == baseVersion)
            #expect(report.toVersion == otherVersion)
            #expect(report.events == 20)
            #expect(report.reason == "projection version changed")
            #expect(try store.rebuildIfNeeded() == nil, "once rebuilt, the version matches")
        }

        // Back to today's program: rebuilt again at open, from the other version.
        var options = schemaOptions()
        let calls = SchemaCalls()
        options.progress = { done, total in calls.record(done, total) }
        let book = try Notebook(path: path, options: options)
        let report = try #require(book.rebuildAtOpen)
        #expect(report.fromVersion == otherVersion)
        #expect(report.toVersion == baseVersion)
        #expect(report.events == 20)
        #expect(calls.totals.allSatisfy { $0 == 20 }, "progress is reported against the head")
        let log = try book.upgradeLog()
        #expect(log.count == logBefore + 2)
        #expect(log.suffix(2).map(\.toVersion) == [otherVersion, baseVersion])
        #expect(try book.verify().isEmpty)
        #expect(try book.list(Self.allNotes) == notesBefore)

        // A stored version from some older program triggers a rebuild the same way.
        try book.store.environment.write { txn in
            try book.store.setMetadata("projections.version", Array("notes-0/old".utf8), in: txn)
        }
        let again = try Notebook(path: path, options: schemaOptions())
        #expect(again.rebuildAtOpen?.fromVersion == "notes-0/old")
        #expect(try Notebook(path: path, options: schemaOptions()).rebuildAtOpen == nil)
        #expect(try again.verify().isEmpty)
        #expect(try again.list(Self.allNotes) == notesBefore)
    }

    @Test("a store whose links were found by the code rule before notes-16 rebuilds at open, once")
    func linksCodeRuleRebuild() throws {
        // The links of a quote's fence, an item's, comments: notes-16.
        try expectLinksRebuiltOnce(stampedAs: "notes-15", body: "> ```\n> [[in code]]\n> ```\n")
    }

    @Test("a store stamped notes-16 (links under a heading right under a list item) rebuilds at open, once")
    func headingUnderItemRebuild() throws {
        // A heading ends a list: notes-17.
        try expectLinksRebuiltOnce(stampedAs: "notes-16", body: "- item\n# Heading\n    [[in code]]\n")
    }

    @Test("a store stamped notes-17 (links in indented code under a thematic break) rebuilds at open, once")
    func breakUnderItemRebuild() throws {
        // A thematic break ends a list: notes-18.
        try expectLinksRebuiltOnce(stampedAs: "notes-17", body: "- item\n---\n    [[in code]]\n")
    }

    @Test("a store stamped notes-18 (a code span over two lines opened a comment) rebuilds at open, once")
    func spanOverLinesRebuild() throws {
        // A code span over lines is code, its `<!--` no comment: notes-19.
        try expectLinksRebuiltOnce(stampedAs: "notes-18", body: "a `span\nx <!-- in it` [[Note]]\n")
    }

    @Test("a store stamped notes-19 (a span carried past a setext underline or into a quote) rebuilds at open, once")
    func spanPastUnderlineRebuild() throws {
        // A setext underline ends the paragraph, and the span (so do a quote and `<!--` first on
        // a line): notes-20.
        try expectLinksRebuiltOnce(stampedAs: "notes-19", body: "Use ` for [[Note]]\n===\nPress `\n")
    }

    @Test("a store stamped notes-20 (a span carried into an HTML block or a nested quote) rebuilds at open, once")
    func spanIntoHTMLBlockRebuild() throws {
        // An HTML block's first line ends the paragraph, and the span (so does a nested quote;
        // `2.` and a marker indented 4 columns do not): notes-21.
        try expectLinksRebuiltOnce(stampedAs: "notes-20", body: "Use ` for [[Note]]\n<div>\nPress `\n")
    }

    @Test("a store stamped notes-21 (a setext underline on a quote's lazy line ended the span) rebuilds at open, once")
    func lazyUnderlineRebuild() throws {
        // An underline on a lazy line is the paragraph's text, and the span goes on: notes-22.
        try expectLinksRebuiltOnce(stampedAs: "notes-21", body: "> Use ` for [[Note]]\n===\n> Press `\n")
    }

    @Test("a store stamped notes-22 (a Markdown link to a note's file was text) rebuilds at open, once")
    func markdownLinkRebuild() throws {
        // `[text](file.md)` is a link: notes-23.
        try expectLinksRebuiltOnce(stampedAs: "notes-22", body: "[the note](Note.md) [gone](Gone.md)\n", missing: 1)
    }

    @Test("a store stamped notes-23 (a wiki link by a relative path was a title) rebuilds at open, once")
    func relativeWikiLinkRebuild() throws {
        // `[[/Note]]` and `[[./Gone]]` name files: notes-24 (the first finds the note by its name).
        try expectLinksRebuiltOnce(stampedAs: "notes-23", body: "[[/Note]] [[./Gone]]\n", missing: 1)
    }

    @Test("a store stamped notes-24 (a Markdown reference link to a note's file was text) rebuilds at open, once")
    func referenceLinkRebuild() throws {
        // `[text][ref]` with `[ref]: file.md` is a link: notes-25.
        try expectLinksRebuiltOnce(
            stampedAs: "notes-24", body: "[the note][n] [gone][]\n\n[n]: Note.md\n[gone]: Gone.md\n", missing: 1)
    }

    @Test("a store stamped notes-25 (a Markdown link's file was keyed folded) rebuilds at open, once")
    func markdownLinkSpellingRebuild() throws {
        // A file link's key is its path as written: notes-26.
        try expectLinksRebuiltOnce(stampedAs: "notes-25", body: "[the note](NOTE.md) [gone](Gone.md)\n", missing: 1)
    }

    @Test(
        "a store stamped notes-26 (a reference definition under a paragraph's line defined a link) rebuilds at open, once"
    )
    func definitionInParagraphRebuild() throws {
        // `[g]: Gone.md` right under a paragraph's line is its text, and `[gone][g]` no link:
        // notes-27 (notes-26 found a link to a missing file).
        try expectLinksRebuiltOnce(
            stampedAs: "notes-26", body: "[gone][g] [the note][n]\n[g]: Gone.md\n\n[n]: Note.md\n")
    }

    @Test(
        "a store stamped notes-27 (a reference definition in a quote or a list item defined nothing) rebuilds at open, once"
    )
    func definitionInContainerRebuild() throws {
        // `> [g]: Gone.md` defines `[g]`, so `[gone][g]` is a link to a missing file: notes-28
        // (notes-27 read it as text, and found no link missing).
        try expectLinksRebuiltOnce(
            stampedAs: "notes-27", body: "[gone][g] [the note][n]\n\n> [g]: Gone.md\n- [n]: Note.md\n", missing: 1)
    }

    @Test(
        "a store stamped notes-28 (a definition in an HTML block's list item defined its label) rebuilds at open, once"
    )
    func definitionInHTMLBlockRebuild() throws {
        // `- [g]: Gone.md` under `<div>` is the HTML block's text: `[gone][g]` is no link
        // (notes-28 read a definition, and found a link missing), while `- - [n]: Note.md`
        // defines `[n]` (notes-28 did not look past the nested item), a link to the note itself.
        try expectLinksRebuiltOnce(
            stampedAs: "notes-28",
            body: "[gone][g] [the note][n]\n\n<div>\n- [g]: Gone.md\n</div>\n\n- - [n]: Note.md\n")
    }

    /// A store holding a note of `body` (whose `[[link]]` an older rule read otherwise), stamped with the older
    /// links projection `stamp`, rebuilds at open, once, and then finds `missing` links missing.
    private func expectLinksRebuiltOnce(stampedAs stamp: String, body: String, missing: Int = 0) throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        let older: String
        do {
            let book = try Notebook(path: path, options: schemaOptions())
            _ = try book.add(title: "Note", body: body)
            // The version such a store holds: the same but for the projections' own number.
            let current = book.store.currentProjectionVersion
            #expect(current.hasPrefix("notes-29+"))
            older = stamp + "+" + current.dropFirst("notes-29+".count)
            try book.store.environment.write { txn in
                try book.store.setMetadata("projections.version", Array(older.utf8), in: txn)
            }
        }
        let book = try Notebook(path: path, options: schemaOptions())
        #expect(book.rebuildAtOpen?.fromVersion == older)
        #expect(try book.missingLinks().count == missing)
        #expect(try book.verify().isEmpty)
        #expect(try Notebook(path: path, options: schemaOptions()).rebuildAtOpen == nil)
    }

    static var allNotes: ListQuery {
        var q = ListQuery()
        q.status = .all
        q.sort = .created
        return q
    }
}

/// Collects progress callbacks (they are `@Sendable`).
final class SchemaCalls: Sendable {
    private let calls = Mutex<[(UInt64, UInt64)]>([])
    func record(_ done: UInt64, _ total: UInt64) { calls.withLock { $0.append((done, total)) } }
    var totals: [UInt64] { calls.withLock { $0.map(\.1) } }
}
