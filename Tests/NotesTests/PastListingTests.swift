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
        for _ in 0..<10 { asked.append(instants[rng.below(instants.count)] - Int64(rng.below(2))) }
        var walked = 0
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
                #expect(try book.list(q, in: past) == expected, "\(what): \(q)")
                walked += 1
            }
        }
        #expect(walked > 200, "seed \(seed): \(walked) listings compared")
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

    @Test(
        "a page of pinned notes is found near the instant: the walk reads only the notes it meets before the page is known"
    )
    func walkStopsEarly() throws {
        let fixture = try Self.sequentialNotebook(notes: 200, pinEvery: 2)
        let book = fixture.book
        let past = try book.past(asOf: .max)
        var q = ListQuery()
        q.limit = 5
        var page = NewestFirstPage(q)
        let notes = try book.store.read { txn in try page.walk(store: book.store, from: past.position, in: txn) }
        #expect(notes == (try book.list(q)), "the current listing, as of now")
        #expect(notes.count == 5 && notes.allSatisfy(\.pinned))
        // The last 10 notes edited hold the 5 newest pinned ones (a pin and an edit each, at one
        // instant); the walk stops at the first event recorded before the fifth one's update.
        #expect(page.notesRead == 10, "notes read: \(page.notesRead)")
        #expect(page.eventsWalked == 15, "events walked: \(page.eventsWalked)")
        // Without pinned notes enough, any note further back might be pinned: the walk reads all.
        q.limit = 150
        var whole = NewestFirstPage(q)
        let all = try book.store.read { txn in try whole.walk(store: book.store, from: past.position, in: txn) }
        #expect(all == (try book.list(q)))
        #expect(whole.notesRead == 200)
    }
}
