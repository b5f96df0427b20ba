import Basics
import EventStore
import Glibc
import TestSupport
import Testing

@testable import Notes

/// `list --as-of` in the default order walks the log back from the instant and reads each note
/// it meets from its own stream. Its pages must be those of the whole replay, for every filter,
/// instant and sequence of events the store can hold.
@Suite("A past listing walked back from its instant equals the listing of the whole replay")
struct PastListingTests {
    /// A store of random events (``FoldAgreementTests/Generator``: every note, category and tag
    /// event, legacy ones included) recorded at instants that repeat and advance unevenly.
    static func randomStore(seed: UInt64, at path: String) throws -> (Notebook, instants: [Int64]) {
        let book = try Notebook(path: path, options: FoldAgreementTests.options)
        var g = FoldAgreementTests.Generator(rng: SeededGenerator(seed: seed))
        var clock: Int64 = 1_800_000_000_000_000
        var instants: [Int64] = []
        for _ in 0..<400 {
            let known = (g.notes, g.categories, g.tags)
            var (stream, e) = g.event()
            // Ties are common (one import, one transaction); the walk must order them by id.
            clock += Int64([0, 0, 1, 5, 1_000][g.rng.below(5)])
            e.recordedAt = clock
            do {
                _ = try book.store.write { session in try session.append([e], to: stream) }
                instants.append(clock)
            } catch is FoldError {
                (g.notes, g.categories, g.tags) = known
            }
        }
        return (book, instants)
    }

    /// The queries asked at each instant: every status, pinned or not, each scope, tag
    /// conditions, limits from one to all, sometimes a note left out.
    static func queries(_ state: NotebookState, rng: inout SeededGenerator) -> [ListQuery] {
        let categories = state.categories.keys.sorted()
        let tags = state.tags.keys.sorted()
        let noteIDs = state.notes.values.map(\.id).sorted()
        var scopes: [ListQuery.Scope] = [.any, .uncategorized]
        if !categories.isEmpty { scopes.append(.category(categories[rng.below(categories.count)])) }
        if !tags.isEmpty { scopes.append(.tag(tags[rng.below(tags.count)])) }
        var out: [ListQuery] = []
        for status in [ListQuery.StatusFilter.active, .archived, .trashed, .all] {
            for pinnedOnly in [false, true] {
                for scope in scopes {
                    var q = ListQuery()
                    q.status = status
                    q.pinnedOnly = pinnedOnly
                    q.scope = scope
                    q.limit = [1, 2, 3, 7, Int.max][rng.below(5)]
                    if !tags.isEmpty && rng.below(3) == 0 {
                        q.tags = [(0..<(1 + rng.below(2))).map { _ in tags[rng.below(tags.count)] }]
                    }
                    if !noteIDs.isEmpty && rng.below(4) == 0 { q.excluding = [noteIDs[rng.below(noteIDs.count)]] }
                    out.append(q)
                }
            }
        }
        return out
    }

    @Test("random workloads, random instants, every filter: the walk's page is the replay's", arguments: [1, 2, 3, 4])
    func walkEqualsReplay(seed: UInt64) throws {
        let scratch = try FoldAgreementTests.Scratch()
        let (book, instants) = try Self.randomStore(seed: seed, at: scratch.path + "/store")
        var rng = SeededGenerator(seed: seed &+ 100)
        let first = try #require(instants.first)
        let last = try #require(instants.last)
        // Before the first event, at it, between and on events (ties included), after the last.
        var asked = [first - 1, first, last, last + 1]
        for _ in 0..<6 { asked.append(instants[rng.below(instants.count)] - Int64(rng.below(2))) }
        var endings: [NewestFirstPage.Ending: Int] = [:]
        for instant in asked {
            let past = try book.past(asOf: instant)
            let replayed = try NotebookState.replayNewestFirst(store: book.store, upTo: past.position)
            let forward = try NotebookState.replay(store: book.store, upTo: past.position)
            let what = "seed \(seed), instant \(instant), position \(past.position)"
            #expect(past.names.categories == forward.categories, "\(what): categories")
            #expect(past.names.tags == forward.tags, "\(what): tags")
            #expect(past.names.notes.values.isEmpty, "\(what): no notes read for the names")
            for q in Self.queries(forward, rng: &rng) {
                let expected = forward.list(q)
                #expect(replayed.list(q) == expected, "\(what): the two replays agree")
                if past.position > 0 {
                    // What `Notebook.list(_:in:)` runs, with how the walk went.
                    let (notes, page) = try Self.walk(book, q, at: past.position)
                    #expect(notes == expected, "\(what): \(q)")
                    endings[page.ending, default: 0] += 1
                } else {
                    #expect(try book.list(q, in: past) == expected, "\(what): \(q)")
                }
            }
        }
        // Every way a walk ends is met often.
        #expect(endings.count == 4 && endings.values.allSatisfy { $0 >= 10 }, "seed \(seed): \(endings)")
    }

    @Test(
        "the listing index's pages equal the replay's for every filter and order; every status merges three runs of keys",
        arguments: [5, 6])
    func indexEqualsReplay(seed: UInt64) throws {
        let scratch = try FoldAgreementTests.Scratch()
        let (book, _) = try Self.randomStore(seed: seed, at: scratch.path + "/store")
        var rng = SeededGenerator(seed: seed &+ 200)
        let state = try NotebookState.replay(store: book.store, upTo: .max)
        var everyStatus = 0
        var whole = ListQuery()
        whole.status = .all
        whole.limit = .max
        for base in Self.queries(state, rng: &rng) + [whole] {
            for sort in ListQuery.Sort.allCases {
                for reverse in [false, true] {
                    var q = base
                    q.sort = sort
                    q.reverse = reverse
                    let expected = state.list(q)
                    #expect(try book.list(q) == expected, "\(q)")
                    #expect(try book.listRows(q) == expected.map { NoteRow($0) }, "rows: \(q)")
                    if q.status == .all && expected.count > 1 { everyStatus += 1 }
                }
            }
        }
        // Pages of every status with more than one note, so an order is checked, are many.
        #expect(everyStatus >= 12, "\(everyStatus)")
    }

    @Test("other orders replay the log and give the replay's page")
    func otherOrders() throws {
        let scratch = try FoldAgreementTests.Scratch()
        let (book, instants) = try Self.randomStore(seed: 9, at: scratch.path + "/store")
        let past = try book.past(asOf: instants[instants.count / 2])
        let forward = try NotebookState.replay(store: book.store, upTo: past.position)
        for sort in ListQuery.Sort.allCases {
            for reverse in [false, true] {
                var q = ListQuery()
                q.status = .all
                q.sort = sort
                q.reverse = reverse
                q.limit = 5
                #expect(NewestFirstPage.serves(q) == (sort == .updated && !reverse))
                #expect(try book.list(q, in: past) == forward.list(q), "\(sort) \(reverse)")
            }
        }
    }

    /// A notebook of `notes` notes created one a second, every `pinEvery`-th pinned, then each
    /// edited once more in the same order.
    static func sequentialNotebook(notes: Int, pinEvery: Int) throws -> NotebookFixture {
        let fixture = try NotebookFixture()
        let book = fixture.book
        var ids: [Identifier] = []
        for i in 0..<notes {
            fixture.clock.advance()
            ids.append(try book.add(title: "note \(i)", body: "b").id)
        }
        for (i, id) in ids.enumerated() {
            fixture.clock.advance()
            if i % pinEvery == 0 { _ = try book.pin(id) }
            _ = try book.edit(id, body: "edited \(i)")
        }
        return fixture
    }

    /// The page `q` at `position` (at least 1) walked back, and how the walk went.
    static func walk(_ book: Notebook, _ q: ListQuery, at position: UInt64) throws -> ([Note], NewestFirstPage) {
        var page = NewestFirstPage(q)
        let notes = try book.read { txn, dbs in
            try page.walk(store: book.store, projection: book.projection, databases: dbs, from: position, in: txn)
        }
        return (try #require(notes, "a walk without a budget never gives up"), page)
    }

    @Test(
        "a page of pinned notes is found near the instant: the walk reads only the notes it meets before the page is known"
    )
    func walkStopsAtPinnedPage() throws {
        let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: 2)
        let book = fixture.book
        let past = try book.past(asOf: .max)
        var q = ListQuery()
        q.limit = 5
        let (notes, page) = try Self.walk(book, q, at: past.position)
        #expect(notes == (try book.list(q)), "the current listing, as of now")
        #expect(notes.count == 5 && notes.allSatisfy(\.pinned))
        #expect(page.ending == .pinnedFull)
        // The last 10 notes edited hold the 5 newest pinned ones (a pin and an edit each, at one
        // instant); the walk stops at the first event recorded before the fifth one's update.
        #expect(page.notesRead == 10, "notes read: \(page.notesRead)")
        #expect(page.eventsWalked == 15, "events walked: \(page.eventsWalked)")
        #expect(page.pinnedLookedUp == 0)
    }

    @Test(
        "few notes pinned: once the rest of the page is known, the notes ever pinned are looked up, not the whole log")
    func fewPinnedAreLookedUp() throws {
        let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: 50)
        let book = fixture.book
        var all = ListQuery()
        all.status = .all
        // Note 50 unpinned at the end: ever pinned, not pinned now.
        _ = try book.unpin(try #require(book.list(all).first { $0.title == "note 50" }).id)
        let past = try book.past(asOf: .max)
        var q = ListQuery()
        q.limit = 10
        let (notes, page) = try Self.walk(book, q, at: past.position)
        #expect(notes == (try book.list(q)))
        #expect(notes.prefix(4).map(\.title) == ["note 150", "note 100", "note 0", "note 50"])
        #expect(page.ending == .lookedUpPinned)
        #expect(page.notesRead == 10, "note 50 and notes 199 to 191, settled by note 190's edit")
        #expect(page.pinnedLookedUp == 3, "notes 0, 100 and 150; note 50 was met")
        // Before note 150 was pinned (second 351): notes 0, 50 and 100 were pinned.
        let before = try book.past(asOf: NotebookClock.start + 350 * 1_000_000)
        let (old, then) = try Self.walk(book, q, at: before.position)
        #expect(then.ending == .lookedUpPinned)
        #expect(old == (try book.list(q, in: before)))
        #expect(old == (try NotebookState.replayNewestFirst(store: book.store, upTo: before.position).list(q)))
        #expect(old.prefix(4).map(\.title) == ["note 100", "note 50", "note 0", "note 149"])
        #expect(!old[3].pinned)
    }

    @Test(
        "a category page whose pinned part fills first never checks which candidates were ever pinned; one that ends by looking them up does"
    )
    func candidatesCheckedForPinsOnlyWhenNeeded() throws {
        /// A notebook of 200 notes, one in `pinEvery` pinned, every note filed in Work (in
        /// listing order, or the reverse), and the walk of a Work page of `limit` at its end.
        func workPage(pinEvery: Int, reversed: Bool, limit: Int) throws -> NewestFirstPage {
            let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: pinEvery)
            let book = fixture.book
            var all = ListQuery()
            all.status = .all
            let listed = try book.list(all)
            for n in reversed ? listed.reversed() : listed {
                fixture.clock.advance()
                _ = try book.categorize(n.id, as: "Work")
            }
            let past = try book.past(asOf: .max)
            var q = ListQuery()
            q.scope = .category(try #require(past.names.categories.values.first { $0.name == "Work" }).id)
            q.limit = limit
            let (notes, page) = try Self.walk(book, q, at: past.position)
            #expect(notes == (try NotebookState.replayNewestFirst(store: book.store, upTo: past.position).list(q)))
            return page
        }
        // Half pinned, the pinned ones filed last: walking back, the page's 5 pinned notes are
        // met first.
        let full = try workPage(pinEvery: 2, reversed: true, limit: 5)
        #expect(full.ending == .pinnedFull && full.candidatesCheckedForPins == 0, "\(full.ending)")
        // Few pinned: the rest of the page settles first, and the pinned candidates are looked up.
        let few = try workPage(pinEvery: 50, reversed: false, limit: 10)
        #expect(few.ending == .lookedUpPinned && few.candidatesCheckedForPins == 200, "\(few.ending)")
        #expect(few.pinnedLookedUp > 0)
    }

    @Test("pinned notes fewer than the page and the part not pinned not settled: the walk reads the whole log")
    func walkToStart() throws {
        let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: 2)
        let book = fixture.book
        let past = try book.past(asOf: .max)
        var q = ListQuery()
        q.limit = 150
        let (notes, page) = try Self.walk(book, q, at: past.position)
        #expect(notes == (try book.list(q)))
        #expect(page.ending == .logStart)
        #expect(page.notesRead == 200)
    }

    @Test("the notes ever pinned are a projection: kept by each append, equal to a rebuild's, checked by verify")
    func everPinnedProjection() throws {
        let fixture = try Self.sequentialNotebook(notes: 30, pinEvery: 10)
        let book = fixture.book
        var all = ListQuery()
        all.status = .all
        let note20 = try #require(book.list(all).first { $0.title == "note 20" })
        _ = try book.unpin(note20.id)
        // Created pinned and unpinned in one append: the projection folds both at once, and the
        // note was pinned in between.
        let meta = EventMetadata(actor: "t")
        let onceID = Identifier(high: 0x7777_0000_4000, low: 0x8000_0000_0000_0001)
        try book.store.append(
            [
                NoteEvent.created(title: "pinned once", body: "", pinned: true, category: nil).newEvent(
                    id: Identifier(high: 0x7777_0000_4000, low: 0x8000_0000_0000_0002), metadata: meta),
                NoteEvent.unpinned.newEvent(
                    id: Identifier(high: 0x7777_0000_4000, low: 0x8000_0000_0000_0003), metadata: meta),
            ], to: Note.stream(onceID))
        #expect(try book.note(onceID).pinned == false)
        let expected = Set(
            try book.list(all).filter { ["note 0", "note 10", "note 20", "pinned once"].contains($0.title) }.map(\.id))
        func stored() throws -> Set<Identifier> {
            try book.read { txn, dbs in
                var ids: Set<Identifier> = []
                try book.projection.forEachEverPinned(in: txn, databases: dbs) { id in
                    ids.insert(id)
                    return true
                }
                return ids
            }
        }
        #expect(try stored() == expected)
        for shards in 1...3 {
            #expect(try NotebookState.replay(store: book.store, upTo: .max, shards: shards).everPinned == expected)
        }
        var bulk = NotebookState()
        try book.store.read { txn in
            try book.store.forEachEvent(from: 1, in: txn) { view in
                try bulk.apply(view, store: book.store)
                return true
            }
        }
        #expect(bulk.everPinned == expected, "the per-event fold (bulk imports) agrees")
        #expect(try book.verify().isEmpty)
        // A lost entry is found by verify and brought back by a rebuild.
        try book.store.write { session in
            let dbs = try session.projectionDatabases()
            _ = try session.transaction.delete(dbs[NotesProjection.DB.pinnedEver], key: note20.id.bytes)
        }
        #expect(try book.verify().map(\.detail) == ["the notes ever pinned differ from the log (3 stored, 4 expected)"])
        try book.rebuild()
        #expect(try stored() == expected)
        #expect(try book.verify().isEmpty)
    }

    @Test(
        "a category or tag filter: the walk reads only the notes ever filed there, kept by each append, equal to a rebuild's, checked by verify"
    )
    func filedEverProjection() throws {
        let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: 2)
        let book = fixture.book
        var all = ListQuery()
        all.status = .all
        let notes = try book.list(all).sorted { $0.createdAt < $1.createdAt }
        // Every 20th note goes to Work and is tagged t; notes 20 and 40 leave them again.
        for i in stride(from: 0, to: 200, by: 20) {
            fixture.clock.advance()
            _ = try book.categorize(notes[i].id, as: "Work")
            _ = try book.tag(notes[i].id, with: ["t"])
        }
        let filed = try book.past(asOf: .max)
        for i in [20, 40] {
            fixture.clock.advance()
            _ = try book.categorize(notes[i].id, as: "Home")
            _ = try book.untag(notes[i].id, from: ["t"])
        }
        let past = try book.past(asOf: .max)
        let work = try #require(past.names.categories.values.first { $0.name == "Work" }).id
        let t = try #require(past.names.tags.values.first { $0.name == "t" }).id
        for (scope, tags) in [(ListQuery.Scope.category(work), [[Identifier]]()), (.any, [[t]]), (.tag(t), [])] {
            var q = ListQuery()
            q.scope = scope
            q.tags = tags
            q.limit = 10
            for at in [past, filed] {
                let (page, walk) = try Self.walk(book, q, at: at.position)
                #expect(page == (try NotebookState.replayNewestFirst(store: book.store, upTo: at.position).list(q)))
                #expect(walk.notesRead <= 10, "only the 10 notes ever filed there are read: \(walk.notesRead)")
                // Fewer than 10 pass now: the walk stops once it has met all 10, not at the log's start.
                if at.position == past.position {
                    #expect(walk.ending == .candidatesMet && walk.eventsWalked < 100, "\(walk.eventsWalked)")
                }
            }
            // Notes 20 and 40 were there before they left: the page then holds them, and not now.
            let (then, _) = try Self.walk(book, q, at: filed.position)
            let (now, _) = try Self.walk(book, q, at: past.position)
            #expect(then.count == 10 && now.count == 8)
            #expect(then.contains { $0.id == notes[20].id } && !now.contains { $0.id == notes[40].id })
        }
        func stored(_ filings: Set<Filing>) throws -> (matches: Bool, stored: Int) {
            let found = try book.read { txn, dbs in
                try book.projection.filedEverMatches(Array(filings), in: txn, databases: dbs)
            }
            return (found.matches && found.expected == found.stored, found.stored)
        }
        var expected: Set<Filing> = []
        for i in stride(from: 0, to: 200, by: 20) {
            expected.insert(Filing(kind: .category, scope: work, note: notes[i].id))
            expected.insert(Filing(kind: .tag, scope: t, note: notes[i].id))
        }
        let home = try #require(past.names.categories.values.first { $0.name == "Home" }).id
        for i in [20, 40] { expected.insert(Filing(kind: .category, scope: home, note: notes[i].id)) }
        #expect(try stored(expected) == (true, 44), "10 notes in Work and t each, 2 in Home, each under two keys")
        for shards in 1...3 {
            let state = try NotebookState.replay(store: book.store, upTo: .max, shards: shards)
            #expect(Set(state.everFiled) == expected)
        }
        var tagged = ListQuery()
        tagged.scope = .tag(Identifier(high: 1, low: 1))
        let (none, nothing) = try Self.walk(book, tagged, at: past.position)
        #expect(none.isEmpty && nothing.ending == .candidatesMet && nothing.eventsWalked == 0, "a tag never used")
        #expect(try book.verify().isEmpty)
        // A lost entry is found by verify and brought back by a rebuild.
        try book.store.write { session in
            let dbs = try session.projectionDatabases()
            let lost = Filing(kind: .tag, scope: t, note: notes[20].id)
            _ = try session.transaction.delete(dbs[NotesProjection.DB.filedEver], key: lost.scopeKey)
        }
        #expect(
            try book.verify().map(\.detail) == [
                "the notes ever filed under each category and tag differ from the log (43 keys stored, 44 expected)"
            ])
        try book.rebuild()
        #expect(try stored(expected) == (true, 44))
        #expect(try book.verify().isEmpty)
    }

    @Test("a walk that would read more notes than its budget gives up, and the listing is the replay's")
    func walkGivesUp() throws {
        let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: 2)
        let book = fixture.book
        let past = try book.past(asOf: NotebookClock.start + 350 * 1_000_000)
        var q = ListQuery()
        let expected = try NotebookState.replay(store: book.store, upTo: past.position).list(q)
        #expect(expected.count == 200)
        // No limit: every note is read, within the default budget of this small notebook.
        let whole = try book.listMeasured(q, in: past)
        #expect(whole.notes == expected)
        #expect(whole.work.walked && !whole.work.gaveUp && whole.work.notesRead == 200)
        // A budget of 50 notes: the walk stops there and the replay answers.
        let cut = try book.listMeasured(q, in: past, budget: 50)
        #expect(cut.notes == expected)
        #expect(cut.work.gaveUp && cut.work.notesRead == 50)
        // A page found within the budget is not given up.
        q.limit = 5
        let page = try book.listMeasured(q, in: past, budget: 50)
        #expect(page.notes == Array(expected.prefix(5)))
        #expect(!page.work.gaveUp && page.work.notesRead < 50)
        // With 100 notes ever pinned, more than a budget of 50, they are not looked up: a page
        // of 60 with the pinned part unsettled (fewer than 60 pinned at that instant) gives up.
        q.limit = 60
        let large = try book.listMeasured(q, in: past, budget: 50)
        #expect(large.notes == Array(expected.prefix(60)))
        #expect(large.work.gaveUp && large.work.pinnedLookedUp == 0)
    }
}

@Suite("The walk's table of candidate ids")
struct IdentifierTableTests {
    @Test(
        "holds exactly the ids of its set, by id and by stream name: random, sequential and zero ids, members and others"
    )
    func sameAsSet() {
        var rng = SeededGenerator(seed: 0x1D_7AB1E)
        for size in [0, 1, 2, 7, 100, 5_000] {
            var ids = Set<Identifier>()
            while ids.count < size {
                switch rng.next() % 3 {
                case 0: ids.insert(Identifier(high: rng.next(), low: rng.next()))
                case 1: ids.insert(Identifier(high: 7, low: UInt64(ids.count)))
                default: ids.insert(Identifier(high: 0, low: rng.next() % 64))
                }
            }
            let table = IdentifierTable(ids)
            func streamed(_ name: String) -> Identifier? {
                var name = name
                return name.withUTF8 { table.note(streamed: UnsafeRawBufferPointer($0)) }
            }
            for id in ids {
                #expect(table.contains(id), "size \(size): \(id) is a member")
                #expect(streamed(Note.stream(id)) == id, "size \(size): its stream's name finds it")
                #expect(streamed(Category.stream(id)) == nil && streamed(Note.stream(id).uppercased()) == nil)
                // Another note whose name ends with the same eight bytes.
                let twin = Identifier(high: id.high &+ 1, low: id.low)
                if !ids.contains(twin) { #expect(streamed(Note.stream(twin)) == nil) }
            }
            var others = 0
            while others < 2_000 {
                let id =
                    others % 2 == 0
                    ? Identifier(high: rng.next(), low: rng.next())
                    : Identifier(high: 7, low: 100_000 + rng.next() % 64)
                guard !ids.contains(id) else { continue }
                #expect(!table.contains(id), "size \(size): \(id) is not a member")
                #expect(streamed(Note.stream(id)) == nil, "size \(size): \(id)'s stream is not a member's")
                others += 1
            }
            #expect(table.contains(Identifier(high: 0, low: 0)) == ids.contains(Identifier(high: 0, low: 0)))
        }
    }
}
