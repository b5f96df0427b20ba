import Basics
import EventStore
import TestSupport
import Testing

@testable import Notes

/// The bulk rebuild writes exactly what the inline projections hold, whatever the notes look
/// like: ties on every sort value, titles equal but for case or past the 64 bytes a title key
/// keeps, a NUL inside a title, instants on both sides of 1970, every status, category and pin.
@Suite("Rebuild of the notes projections")
struct RebuildTests {
    @Test("a replay holds about twice the distinct filings, not one per event, when a note is filed again and again")
    func repeatedFilingsBounded() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(title: "A", category: "Home").id
        let b = try f.book.add(title: "B").id
        for round in 0..<150 {
            _ = try f.book.tag(a, with: ["t\(round % 3)"])
            _ = try f.book.untag(a, from: ["t\(round % 3)"])
            _ = try f.book.categorize(b, as: round % 2 == 0 ? "Home" : "Work")
        }
        // Distinct: a in Home, t0, t1, t2; b in Home, Work.
        var replayer = Replayer(filingLimit: 16)
        try replayer.scan(store: f.book.store, through: try f.head, progress: nil)
        #expect(replayer.filingsHeld <= 2 * 6 + 16, "\(replayer.filingsHeld) filings held")
        var unbounded = Replayer(filingLimit: .max)
        try unbounded.scan(store: f.book.store, through: try f.head, progress: nil)
        #expect(unbounded.filingsHeld == 1 + 150 + 150, "every filing event held without the limit")
        var kept = replayer.takeFilings()
        var all = unbounded.takeFilings()
        Filing.sortByScope(&kept)
        Filing.sortByScope(&all)
        #expect(kept == all && kept.count == 6)
        #expect(try f.book.verify().isEmpty)
        try f.book.rebuild()
        #expect(try f.book.verify().isEmpty)
    }

    @Test("the filings of one batch of a note's events are gathered each once, not by searching all before")
    func filingsOfABatchGatheredInLinearTime() throws {
        // A command that tags a note with thousands of tags folds one batch of as many events.
        // Before (trial-s31) each filing was looked for among all before it: 20,000 tags took
        // 20,000² / 2 comparisons, seconds here, and `notes tag` of 10,000 tags 6 s in all.
        let note = Note(id: Identifier(high: 1, low: 1), title: "T", body: "", createdAt: 0, updatedAt: 0, version: 1)
        var filings: [Filing] = []
        var seen: Set<Filing> = []
        for round in 0..<2 {
            for i in 0..<20_000 {
                var p = NotePayload<String>()
                p.tag = Identifier(high: 2, low: UInt64(i))
                Filing.after(.tagged, p, note, into: &filings, seen: &seen)
            }
            #expect(filings.count == 20_000, "round \(round): each once")
        }
        #expect(Set(filings.map(\.scope)).count == 20_000)
        // Each filing is found in `seen`, a set: no search of the filings before it (not timed
        // here: speed lives in benchmarks).
        #expect(seen.count == 20_000)
    }

    /// A notebook of a few hundred notes built by seeded random commands, with a clock that
    /// often stands still so many notes share their instants.
    static func randomNotebook(_ path: String, seed: UInt64) throws -> Notebook {
        let clock = SchemaClock("1969-12-31T23:50:00Z", step: 0)
        let book = try Notebook(path: path, options: schemaOptions(clock: clock, ids: SchemaIDs(prefix: 0x0B0B_0000)))
        var rng = SchemaRandom(seed: seed)
        let long = String(repeating: "é", count: 40)
        let titles = [
            "alpha", "Alpha", "ALPHA", "beta", "b", "", "Zeta", long + "x", long + "y", long, "日本語のノート", "a\tb",
        ]
        let categories = ["Home", "Work", "work stuff", "Ideas", "Zzz"]
        let tags = ["a", "a/b", "a/b/c", "B", "zz"]
        var ids: [Identifier] = []
        var now = RFC3339.parse("1969-12-31T23:50:00Z") ?? 0
        for step in 0..<900 {
            // Time moves in jumps, so runs of commands share an instant.
            if rng.below(4) == 0 { now += Int64(rng.below(3)) * 7_000_000 }
            clock.set(micros: now)
            let pick = titles[rng.below(titles.count)]
            let title = pick.isEmpty ? "n\(step)" : pick
            if ids.isEmpty || rng.below(3) == 0 {
                let category = rng.below(3) == 0 ? nil : categories[rng.below(categories.count)]
                let pinned = rng.below(4) == 0
                ids.append(try book.add(title: title, body: "body \(step)\n", category: category, pinned: pinned).id)
                continue
            }
            let id = ids[rng.below(ids.count)]
            switch rng.below(11) {
            case 9: try book.tag(id, with: [tags[rng.below(tags.count)]])
            case 10:
                let name = tags[rng.below(tags.count)]
                if try book.allTags().contains(where: { $0.name == name }) { try book.untag(id, from: [name]) }
            case 0: try book.edit(id, title: title)
            case 1: try book.edit(id, body: "edited \(step)\n")
            case 2: try book.pin(id)
            case 3: try book.unpin(id)
            case 4: try book.archive(id)
            case 5: try book.trash(id)
            case 6: try book.untrash(id)
            case 7: try book.categorize(id, as: rng.below(4) == 0 ? nil : categories[rng.below(categories.count)])
            default: try book.unarchive(id)
            }
        }
        // A title no command accepts (it holds a NUL) but a store may hold, next to its prefix.
        for (n, title) in ["a\u{0}b", "a", "a\u{0}"].enumerated() {
            let event = NoteEvent.created(title: title, body: "", pinned: false, category: nil)
            try book.store.append(
                [event.newEvent(id: Identifier(high: 0xEEEE, low: UInt64(n)), metadata: EventMetadata(actor: "raw"))],
                to: Note.stream(Identifier(high: 0xDDDD, low: UInt64(n))), expecting: .noStream)
        }
        if try book.categories().contains(where: { $0.name == "Zzz" }) { try book.deleteCategory("Zzz") }
        if try book.allTags().contains(where: { $0.name == "zz" }) { try book.deleteTag("zz") }
        if try book.allTags().contains(where: { $0.name == "a/b" }) { try book.renameTag("a/b", to: "d") }
        return book
    }

    /// Every listing the index serves.
    static func listings(_ book: Notebook) throws -> [[Identifier]] {
        var out: [[Identifier]] = []
        var scopes: [ListQuery.Scope] = [.any, .uncategorized]
        scopes += try book.categories().map { .category($0.id) }
        scopes += try book.allTags().map { .tag($0.id) }
        for status in [ListQuery.StatusFilter.active, .archived, .trashed, .all] {
            for scope in scopes {
                for sort in ListQuery.Sort.allCases {
                    for (pinnedOnly, reverse) in [(false, false), (true, false), (false, true)] {
                        var q = ListQuery()
                        q.status = status
                        q.scope = scope
                        q.sort = sort
                        q.pinnedOnly = pinnedOnly
                        q.reverse = reverse
                        out.append(try book.list(q).map(\.id))
                    }
                }
            }
        }
        return out
    }

    @Test(
        "a rebuild gives the projections the inline path built, in one or many transactions, its parts side by side or one after another",
        arguments: [1, 2])
    func rebuildEqualsInline(seed: UInt64) throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        let inline: [[Identifier]]
        do {
            let book = try Self.randomNotebook(path, seed: seed)
            #expect(try book.verify().isEmpty, "inline projections equal a replay")
            inline = try Self.listings(book)
            #expect(inline.contains { $0.count > 100 })
            try book.rebuild()
            #expect(try book.verify().isEmpty, "a rebuild equals a replay")
            #expect(try Self.listings(book) == inline)
        }
        // Batches of 7 keys: the listing index is written across many transactions, each
        // resuming inside a bucket.
        // Then the rebuild of a large notebook (its parts one after another, each let go of
        // before the next), in batches of 7: the filings and the links' tables resume too.
        for (bounded, reason) in [(Int.max, "small batches"), (0, "one part at a time")] {
            try Self.rebuild(path, batch: 7, boundedFrom: bounded, reason: reason)
            let book = try Notebook(path: path, options: schemaOptions())
            #expect(book.rebuildAtOpen == nil)
            #expect(try book.verify().isEmpty)
            #expect(try Self.listings(book) == inline)
            #expect(try book.upgradeLog().last?.reason == reason)
        }
    }

    /// Rebuilds the store at `path` with `batch` entries a transaction, its parts one after
    /// another from `boundedFrom` notes on.
    static func rebuild(_ path: String, batch: Int, boundedFrom notes: Int, reason: String) throws {
        var config = EventStore.Configuration(
            registry: NotesSchema.registry,
            projections: NotesProjection(rebuildBatch: batch, searchLanguage: .english, boundedRebuildNotes: notes))
        config.clock = { 0 }
        let store = try EventStore(path: path, configuration: config)
        try store.rebuildProjections(reason: reason)
    }

    @Test("aliases, wiki links and names past the 400 bytes a key holds, rebuilt one part at a time in batches of 2")
    func linksRebuiltInParts() throws {
        let scratch = try SchemaScratch()
        let path = scratch.sub("store")
        let long = String(repeating: "x", count: 420)
        var backlinks: [[Identifier]] = []
        do {
            let book = try Notebook(path: path, options: schemaOptions())
            var ids: [Identifier] = []
            for i in 0..<12 {
                let title = i % 3 == 0 ? long + "\(i % 2)" : "Note \(i)"
                let body = "see [[Note \((i + 1) % 12)]], [[\(long)0]] and [[Missing \(i % 5)]]"
                ids.append(try book.add(title: title, body: body).id)
            }
            for (i, id) in ids.enumerated() {
                _ = try book.setAliases(id, ["alias \(i)", "Shared", "Note \((i + 5) % 12)", long + "alias"])
                _ = try book.edit(id, title: i % 2 == 0 ? "Renamed \(i % 4)" : long + "\(i % 3)")
            }
            #expect(try book.verify().isEmpty, "the inline links equal the tables of the log")
            backlinks = try ids.map { try book.backlinks(of: $0).map(\.source.id) }
            #expect(backlinks.contains { $0.count > 1 })
        }
        try Self.rebuild(path, batch: 2, boundedFrom: 0, reason: "in parts")
        let book = try Notebook(path: path, options: schemaOptions())
        #expect(try book.verify().isEmpty)
        let ids = try book.list(ListQuery()).map(\.id)
        #expect(ids.count == 12)
        let after = try book.list(ListQuery()).map { try book.backlinks(of: $0.id).map(\.source.id) }
        #expect(after.flatMap { $0 }.sorted() == backlinks.flatMap { $0 }.sorted())
    }

    @Test("title changes in parts (a replay's scans) have the holdings of the same changes joined")
    func holdingsInParts() {
        let a = Identifier(high: 1, low: 1)
        let b = Identifier(high: 0, low: 2)
        let first = [
            TitleChange(note: a, position: 1, folded: "x"), TitleChange(note: a, position: 3, folded: "y"),
            TitleChange(note: a, position: 5, folded: "x"), TitleChange(note: a, position: 5, folded: "z"),
        ]
        let second = [TitleChange(note: b, position: 2, folded: "y"), TitleChange(note: b, position: 4, folded: "z")]
        #expect(LinkIndex.holdings(parts: [first, second]) == LinkIndex.holdings(first + second))
        #expect(
            LinkIndex.holdings(parts: [first, [], second], through: 3) == LinkIndex.holdings(first + second, through: 3)
        )
        #expect(LinkIndex.holdings(parts: [second, first]) == LinkIndex.holdings(second + first))
        #expect(LinkIndex.holdings(parts: [first, second]).count == 5)
        var state = NotebookState()
        state.titleChanges = first
        state.titleChanges.append(contentsOf: second)
        #expect(state.titleChanges == first + second)
    }

    @Test(
        "a note's names past the few a look through serves: holdings equal a plain model's, and verify passes at 10,000"
    )
    func manyNamesOfOneNote() throws {
        // The holdings of other names against a plain model (every name's latest holding, in the
        // order the note first took each), for sets of names that grow, shrink and come back.
        let a = Identifier(high: 0, low: 1)
        let b = Identifier(high: 0, low: 2)
        var changes: [NameChange] = []
        var position: UInt64 = 0
        for (note, names) in [
            (a, (0..<40).map { "n\($0)" }), (b, ["n1", "n2"]), (a, (20..<60).map { "n\($0)" }),
            (a, (0..<10).map { "n\($0)" } + ["n55"]), (a, (0..<70).map { "n\($0)" }), (b, []),
        ] {
            position += 1
            changes.append(NameChange(note: note, position: position, names: names))
        }
        func model() -> [LinkIndex.Holding] {
            var out: [LinkIndex.Holding] = []
            for note in [a, b] {
                var held: [(name: String, since: UInt64)] = []
                var notes: [LinkIndex.Holding] = []
                func record(_ h: LinkIndex.Holding) {
                    if let i = notes.firstIndex(where: { $0.folded == h.folded }) {
                        notes[i] = h
                    } else {
                        notes.append(h)
                    }
                }
                for c in changes where c.note == note {
                    for (name, since) in held where !c.names.contains(name) {
                        record(.init(folded: name, holder: TitleHolder(note: note, since: since, until: c.position)))
                    }
                    held = c.names.map { name in (name, held.first { $0.name == name }?.since ?? c.position) }
                }
                for (name, since) in held { record(.init(folded: name, holder: TitleHolder(note: note, since: since))) }
                out += notes
            }
            return out
        }
        let holdings = LinkIndex.holdings(changes)
        #expect(holdings.count == 70 + 2)
        #expect(holdings == model())

        // One note of 10,000 aliases: before 2026-12-07 each holding was looked for among all
        // the note's others, and `verify` took 9 s in a debug build.
        let scratch = try SchemaScratch()
        let book = try Notebook(path: scratch.sub("store"), options: schemaOptions())
        let id = try book.add(title: "Aliased").id
        try book.setAliases(id, (0..<10_000).map { "name \($0)" })
        try book.setAliases(id, (5_000..<15_000).map { "name \($0)" })
        #expect(try book.verify().isEmpty)
    }

    @Test("an empty store and a store of one note rebuild")
    func smallStores() throws {
        let scratch = try SchemaScratch()
        let book = try Notebook(path: scratch.sub("store"), options: schemaOptions())
        #expect(try book.rebuild().events == 0)
        #expect(try book.verify().isEmpty)
        try book.add(title: "Only")
        #expect(try book.rebuild().events == 1)
        #expect(try book.verify().isEmpty)
        #expect(try book.list(ListQuery()).map(\.title) == ["Only"])
    }

    @Test(
        "verify finds a search index that reads well but holds other postings or another record, and rebuild repairs it"
    )
    func searchIndexDiffering() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(title: "Groceries", body: "milk and bread")
        try f.book.add(title: "Work", body: "write the report")
        #expect(try f.book.verify().isEmpty)
        let language = f.book.projection.searchLanguage
        let dbs = try f.book.read { _, dbs in dbs }
        // The index as if the first note's body were another: well formed, wrong.
        var other = a
        other.body = "milk and butter"
        try f.book.store.environment.write { txn throws in
            try SearchBridge.update(changes: [(old: a, new: other)], in: txn, databases: dbs, language: language)
        }
        #expect(try f.book.verify().map(\.detail) == ["2 search terms have postings that differ from the log"])
        try f.book.rebuild()
        #expect(try f.book.verify().isEmpty)
        // Only the record: the same words, pinned (in the databases the rebuild swapped in).
        var pinned = a
        pinned.pinned = true
        let rebuilt = try f.book.read { _, dbs in dbs }
        try f.book.store.environment.write { txn throws in
            try SearchBridge.update(changes: [(old: a, new: pinned)], in: txn, databases: rebuilt, language: language)
        }
        let problems = try f.book.verify().map(\.detail)
        #expect(problems == ["search record of note \(shortID(a.id)) differs from the log"], "\(problems)")
    }
}

/// SplitMix64 for the random notebooks.
struct SchemaRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}
