import Basics
import EventStore
import Foundation
import Notes
import PostgresFixture
import PostgresLog
import TestSupport
import Testing

/// Three devices doing random commands offline and syncing in random order, a third of the syncs
/// crossing another device's (which syncs between their pull and their push): after every sync,
/// `verify` finds the projections equal to a rebuild of the log (a rebase re-folds only the
/// records of the streams it touched), and at the end the devices converge.
@Suite(
    "Random offline commands on three devices",
    .enabled(if: PostgresCluster.binDirectory != nil, clusterSkipReason), .postgresCluster)
struct SyncRandomTests {
    var huntSeeds: [UInt64] {
        let base = UInt64(ProcessInfo.processInfo.environment["HUNT_BASE"] ?? "11") ?? 11
        let n = UInt64(ProcessInfo.processInfo.environment["HUNT_N"] ?? "6") ?? 6
        return Array(base..<(base + n))
    }
    var huntSync: Int { Int(ProcessInfo.processInfo.environment["HUNT_SYNC"] ?? "5") ?? 5 }
    var huntSteps: Int { Int(ProcessInfo.processInfo.environment["HUNT_STEPS"] ?? "150") ?? 150 }

    @Test("after every sync the projections equal a rebuild; at the end every device holds the same log")
    func randomCommands() throws {
        for seed: UInt64 in [1, 2, 3] {
            try run(seed: seed, notebook: 130 + Int(seed))
        }
    }

    @Test("a wider mix: tags renamed into taken names and subtrees, tags deleted, restores, unarchives")
    func widerMix() throws {
        for seed: UInt64 in huntSeeds {
            try run(seed: seed, notebook: 1000 + Int(seed), wide: true)
        }
    }

    @Test("pushes crossing on every sync, over commands that create, rename, delete and file under categories and tags")
    func crossings() throws {
        for seed: UInt64 in [1, 2, 3, 4] {
            try run(seed: seed, notebook: 1200 + Int(seed), wide: true, crossings: true)
        }
    }

    /// A past listing filtered by a category or tag (walked back through `filed_ever`) is the
    /// replay's, after merges, deletions and rebases moved notes between them.
    private func expectPastListingsByScope(_ book: Notebook, _ what: String) throws {
        let past = try book.past(asOf: .max)
        let replayed = try NotebookState.replayNewestFirst(store: book.store, upTo: past.position)
        let scopes =
            past.names.categories.keys.map { ListQuery.Scope.category($0) } + past.names.tags.keys.map { .tag($0) }
        for scope in scopes {
            var q = ListQuery()
            q.status = .all
            q.scope = scope
            q.limit = 3
            #expect(try book.list(q, in: past) == replayed.list(q), "\(what): \(scope)")
        }
    }

    /// `crossings`: every sync crosses another device's, and the commands are those of categories
    /// and tags (creating, renaming, deleting, filing under).
    private func run(seed: UInt64, notebook: Int, wide: Bool = false, crossings: Bool = false) throws {
        var rng = SplitMix(state: seed)
        let devices = try (1...3).map { try Device(stem: UInt64($0) + seed * 10, notebook: notebook) }
        try devices[0].book.add(title: "Start", body: "one\ntwo\nthree\n", category: "Home", tags: ["a"])
        try devices[0].sync(join: true)
        for d in devices.dropFirst() { try d.sync() }
        let titles = ["Start", "Plans", "Ideas", "Log", "Later"]
        let names = ["Home", "Work", "home", "Trips"]
        let tags = wide ? ["a", "b", "c/d", "c", "a/x", "B"] : ["a", "b", "c/d"]
        let lines = ["one", "two", "three", "four", "five", "see [[Plans]]", "and [[Ideas]]"]
        var syncs = 0
        for _ in 0..<(wide ? huntSteps : 120) {
            let d = devices[Int.random(in: 0..<devices.count, using: &rng)]
            if Int.random(in: 0..<(wide ? huntSync : 5), using: &rng) == 0 {
                if crossings || Int.random(in: 0..<3, using: &rng) == 0 {
                    // Pushes that cross: another device syncs between d's pull and d's push.
                    let others = devices.filter { $0 !== d }
                    let other = others[Int.random(in: 0..<others.count, using: &rng)]
                    _ = try d.countedSync { remote in remote.beforeFirstAppend = { try other.sync() } }
                    #expect(try other.book.verify().isEmpty, "seed \(seed), crossing sync \(syncs)")
                } else {
                    try d.sync()
                }
                syncs += 1
                #expect(try d.book.verify().isEmpty, "seed \(seed), after sync \(syncs)")
                try expectPastListingsByScope(d.book, "seed \(seed), after sync \(syncs)")
                continue
            }
            let notes = try d.book.list(everything)
            let note = notes.isEmpty ? nil : notes[Int.random(in: 0..<notes.count, using: &rng)]
            func pick<T>(_ a: [T]) -> T { a[Int.random(in: 0..<a.count, using: &rng)] }
            func body() -> String {
                (0..<Int.random(in: 1...4, using: &rng)).map { _ in pick(lines) }.joined(separator: "\n") + "\n"
            }
            do {
                let command =
                    crossings
                    ? pick([0, 8, 8, 9, 9, 10, 12, 13, 14, 15, 16, 23, 23])
                    : Int.random(in: 0..<(wide ? 24 : 14), using: &rng)
                switch (command, note) {
                case (0, _), (_, nil):
                    try d.book.add(
                        title: pick(titles), body: body(), category: Bool.random(using: &rng) ? pick(names) : nil,
                        tags: Bool.random(using: &rng) ? [pick(tags)] : [])
                case (1, let n?), (2, let n?), (3, let n?): try d.book.edit(n.id, body: body())
                case (4, let n?): try d.book.edit(n.id, title: pick(titles))
                case (5, let n?): _ = try n.pinned ? d.book.unpin(n.id) : d.book.pin(n.id)
                case (6, let n?): _ = try n.trashed ? d.book.untrash(n.id) : d.book.trash(n.id)
                case (7, let n?): try d.book.archive(n.id)
                case (8, let n?): try d.book.categorize(n.id, as: Bool.random(using: &rng) ? pick(names) : nil)
                case (9, let n?): try d.book.tag(n.id, with: [pick(tags)])
                case (10, let n?): try d.book.untag(n.id, from: [pick(tags)])
                case (11, let n?): try d.book.restore(n.id, to: .version(1))
                case (12, _): try d.book.renameCategory(pick(names), to: pick(names) + "s")
                case (13, _): _ = try d.book.deleteCategory(pick(names))
                case (14, _): try d.book.renameTag(pick(tags), to: pick(tags))
                case (15, _): try d.book.renameCategory(pick(names), to: pick(names))
                case (16, _): _ = try d.book.deleteTag(pick(tags))
                case (17, let n?): try d.book.restore(n.id, to: .version(UInt64(Int.random(in: 1...3, using: &rng))))
                case (18, let n?): try d.book.unarchive(n.id)
                case (19, let n?): try d.book.setAliases(n.id, Bool.random(using: &rng) ? [pick(titles)] : [])
                case (20, let n?): _ = try d.book.undo(n.id)
                case (21, let n?): try d.book.setProperty(n.id, key: "k", value: pick(["", "x", "y"]))
                case (22, let n?): try d.book.edit(n.id, title: pick(titles), body: body())
                default: _ = try d.book.addCategory(pick(names))
                }
            } catch {
                // A command refused here (a name taken, nothing to change) is a user's error,
                // not the sync's: the next command goes on.
            }
        }
        try converge(devices)
        #expect(syncs > 10)
        // Delete (and merge) wins over assign: no note is left filed under an entity that ended.
        let book = devices[0].book
        let live = Set(try book.categories().map(\.id) + book.allTags().map(\.id))
        for n in try book.list(everything) {
            #expect(n.category.map { live.contains($0) } ?? true, "seed \(seed): \(n.title) in an ended category")
            #expect(n.tags.allSatisfy(live.contains), "seed \(seed): \(n.title) tagged with an ended tag")
        }
        // One live category (and tag) per name, pushes crossed or not.
        let categoryNames = try book.categories().map { $0.name.lowercased() }
        let tagNames = try book.allTags().map { $0.name.lowercased() }
        #expect(Set(categoryNames).count == categoryNames.count, "seed \(seed): \(categoryNames)")
        #expect(Set(tagNames).count == tagNames.count, "seed \(seed): \(tagNames)")
    }
}
