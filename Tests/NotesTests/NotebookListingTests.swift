import Basics
import EventStore
import SearchEngine
import TestSupport
import Testing

@testable import Notes

/// The listing index against an independent in-test ordering, for every filter, sort,
/// direction and limit, after a seeded random history with timestamp ties, case differences
/// and titles that share their first 64 bytes.
@Suite("Notebook listing order")
struct NotebookListingTests {
    static let titles: [String] = [
        "Apple", "apple", "APPLE pie", "b", "Banana", "banana split", "Zebra", "zebra", "éclair", "Éclair", "ab", "abc",
        String(repeating: "x", count: 70) + " one", String(repeating: "x", count: 70) + " two",
        String(repeating: "X", count: 64), "Straße", "0 first", "~ last",
    ]

    /// What the issue specifies, written without the index: filter, then pinned first, then the
    /// sort (newest first for dates, A-Z ignoring case for titles, ties by id), each group
    /// reversed by --reverse, then the limit.
    static func expected(_ notes: [Note], _ q: ListQuery) -> [Identifier] {
        let matching = notes.filter { n in
            let statusOK: Bool
            switch q.status {
            case .active: statusOK = !n.trashed && !n.archived
            case .archived: statusOK = !n.trashed && n.archived
            case .trashed: statusOK = n.trashed
            case .all: statusOK = true
            }
            let scopeOK: Bool
            switch q.scope {
            case .any: scopeOK = true
            case .uncategorized: scopeOK = n.category == nil
            case .category(let c): scopeOK = n.category == c
            case .tag(let t): scopeOK = n.tags.contains(t)
            }
            let tagsOK = q.tags.allSatisfy { group in n.tags.contains { group.contains($0) } }
            return statusOK && scopeOK && tagsOK && (!q.pinnedOnly || n.pinned)
        }
        func before(_ a: Note, _ b: Note) -> Bool {
            switch q.sort {
            case .updated where a.updatedAt != b.updatedAt: return a.updatedAt > b.updatedAt
            case .created where a.createdAt != b.createdAt: return a.createdAt > b.createdAt
            case .title:
                // Case ignored; accents too, where the first 64 bytes hold other than ASCII
                // (folded as the search index folds words: `éclair` among the e's).
                func key(_ t: String) -> [UInt8] {
                    t.utf8.prefix(64).allSatisfy { $0 < 0x80 }
                        ? Array(t.lowercased().utf8.prefix(64)) : Array(TextFolding.fold(t).utf8.prefix(64))
                }
                let ka = key(a.title)
                let kb = key(b.title)
                if ka != kb { return ka.lexicographicallyPrecedes(kb) }
                return a.id < b.id
            default: return a.id < b.id
            }
        }
        var out: [Identifier] = []
        for pinned in [true, false] {
            var group = matching.filter { $0.pinned == pinned }.sorted(by: before)
            if q.reverse { group.reverse() }
            out += group.map(\.id)
        }
        return Array(out.prefix(q.limit))
    }

    /// A store with a seeded random history; returns the fixture and every note id.
    static func randomHistory(seed: UInt64, notes count: Int, operations: Int) throws -> (
        NotebookFixture, [Identifier]
    ) {
        let f = try NotebookFixture()
        var rng = SeededGenerator(seed: seed)
        let categoryNames = ["Work", "Home", "Ideas"]
        let tagNames = ["work", "work/acme", "work/acme/q3", "home", "Ideas"]
        var ids: [Identifier] = []
        for _ in 0..<count {
            // A pause of 0 makes ties in created and updated times.
            f.clock.advance(seconds: Int64.random(in: 0...2, using: &rng))
            let title = titles.randomElement(using: &rng)!
            let category = Bool.random(using: &rng) ? categoryNames.randomElement(using: &rng) : nil
            ids.append(
                try f.book.add(title: title, category: category, pinned: Int.random(in: 0..<5, using: &rng) == 0).id)
        }
        for _ in 0..<operations {
            f.clock.advance(seconds: Int64.random(in: 0...2, using: &rng))
            let id = ids.randomElement(using: &rng)!
            switch Int.random(in: 0..<12, using: &rng) {
            case 10: try f.book.tag(id, with: [tagNames.randomElement(using: &rng)!])
            case 11:
                let name = tagNames.randomElement(using: &rng)!
                if try f.book.allTags().contains(where: { $0.name == name }) { try f.book.untag(id, from: [name]) }
            case 0: try f.book.edit(id, title: titles.randomElement(using: &rng)!)
            case 1: try f.book.edit(id, body: String(Int.random(in: 0..<1000, using: &rng)))
            case 2: try f.book.pin(id)
            case 3: try f.book.unpin(id)
            case 4: try f.book.archive(id)
            case 5: try f.book.unarchive(id)
            case 6: try f.book.trash(id)
            case 7: try f.book.untrash(id)
            default:
                let name = Int.random(in: 0..<4, using: &rng) == 0 ? nil : categoryNames.randomElement(using: &rng)
                try f.book.categorize(id, as: name)
            }
        }
        return (f, ids)
    }

    /// Every query shape: 4 statuses x (any, uncategorized, each live category, each live tag,
    /// tag subtrees alone, together and with a category) x pinned-only x 3 sorts x 2 directions
    /// x 3 limits.
    static func queries(_ book: Notebook) throws -> [ListQuery] {
        var scopes: [(ListQuery.Scope, [[Identifier]])] = [(.any, []), (.uncategorized, [])]
        let categories = try book.categories()
        scopes += categories.map { (.category($0.id), []) }
        let tags = try book.allTags()
        scopes += tags.map { (.tag($0.id), []) }
        let parents = Set(tags.map { String($0.name.split(separator: "/").first!) })
        let groups = try parents.sorted().map { try book.tags(within: $0).map(\.id) }
        scopes += groups.map { (.any, [$0]) }
        if groups.count >= 2 { scopes.append((.any, Array(groups.prefix(2)))) }
        if let c = categories.first, let g = groups.first { scopes.append((.category(c.id), [g])) }
        var out: [ListQuery] = []
        for status in [ListQuery.StatusFilter.active, .archived, .trashed, .all] {
            for (scope, tagGroups) in scopes {
                for pinnedOnly in [false, true] {
                    for sort in ListQuery.Sort.allCases {
                        for reverse in [false, true] {
                            for limit in [1, 7, Int.max] {
                                var q = ListQuery()
                                q.status = status
                                q.scope = scope
                                q.tags = tagGroups
                                q.pinnedOnly = pinnedOnly
                                q.sort = sort
                                q.reverse = reverse
                                q.limit = limit
                                out.append(q)
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    static func check(_ f: NotebookFixture, _ ids: [Identifier], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let notes = try ids.map { try f.book.note($0) }
        let state = try f.book.state(asOf: f.clock.micros)
        var mismatches = 0
        var stateMismatches = 0
        var rowMismatches = 0
        for q in try queries(f.book) {
            let want = expected(notes, q)
            let whole = try f.book.list(q)
            let got = whole.map(\.id)
            if try f.book.listRows(q) != whole.map(NoteRow.init) {
                rowMismatches += 1
                if rowMismatches <= 3 {
                    Issue.record("listing rows differ from the whole notes for \(q)", sourceLocation: sourceLocation)
                }
            }
            if got != want {
                mismatches += 1
                if mismatches <= 3 {
                    Issue.record(
                        "index order differs for \(q): got \(got.map(shortID)), want \(want.map(shortID))",
                        sourceLocation: sourceLocation)
                }
            }
            if state.list(q).map(\.id) != want {
                stateMismatches += 1
                if stateMismatches <= 3 {
                    Issue.record("in-memory listing differs for \(q)", sourceLocation: sourceLocation)
                }
            }
        }
        #expect(mismatches == 0, "\(mismatches) queries listed in the wrong order", sourceLocation: sourceLocation)
        #expect(stateMismatches == 0, "\(stateMismatches) in-memory listings differ", sourceLocation: sourceLocation)
        #expect(rowMismatches == 0, "\(rowMismatches) listings of rows differ", sourceLocation: sourceLocation)
    }

    @Test("the index lists exactly what the specification orders, for every query, after a random history")
    func randomHistoryMatchesSpecification() throws {
        let (f, ids) = try Self.randomHistory(seed: 0x5EED_0001, notes: 60, operations: 240)
        // The history exercises every place and state a note can be in.
        let notes = try ids.map { try f.book.note($0) }
        #expect(
            notes.contains { $0.pinned } && notes.contains { $0.archived && !$0.trashed }
                && notes.contains(where: \.trashed))
        #expect(Set(notes.map(\.updatedAt)).count < notes.count, "some updated times tie")
        #expect(notes.contains { $0.tags.count >= 2 }, "some notes carry several tags")
        try Self.check(f, ids)

        // Deleting a category or a tag (nullify) and renaming others keep every index right.
        f.clock.advance()
        try f.book.deleteCategory("Home")
        try f.book.renameCategory("Ideas", to: "Thoughts")
        try f.book.renameTag("work/acme", to: "clients/acme")
        try f.book.deleteTag("home")
        try Self.check(f, ids)

        // So do a rebuild of the projections and a reopen.
        _ = try f.book.rebuild()
        try Self.check(f, ids)
        try f.reopen()
        try Self.check(f, ids)
    }

    @Test("a listing row carries every field of its note but the body and properties; verify checks the rows")
    func rows() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(
            title: "Trip", body: String(repeating: "long body ", count: 1000), category: "Travel", tags: ["trips"],
            pinned: true)
        f.clock.advance()
        try f.book.archive(a.id)
        var q = ListQuery()
        q.status = .archived
        let note = try f.book.note(a.id)
        let rows = try f.book.listRows(q)
        #expect(rows == [NoteRow(note)])
        let row = try #require(rows.first)
        #expect(row.title == "Trip" && row.pinned && row.archived && !row.trashed && row.version == note.version)
        #expect(row.category == note.category && row.tags == note.tags && row.tags.count == 1)
        #expect(row.createdAt < row.updatedAt)
        #expect(try f.book.verify().isEmpty)

        // A damaged row and a row of no note are found; a rebuild repairs both.
        let db = try f.book.read { _, dbs in dbs["rows"] }
        let stray = Identifier(high: 7, low: 7)
        try f.book.store.environment.write { txn throws in
            let valid = try #require(try txn.get(db, key: a.id.bytes))
            try txn.put(db, key: a.id.bytes, value: Array(valid.dropLast()))
            try txn.put(db, key: stray.bytes, value: valid)
        }
        let problems = try f.book.verify().map(\.detail)
        #expect(
            problems.contains { $0.hasPrefix("the listing row of note \(shortID(a.id)) is damaged") }, "\(problems)")
        #expect(
            problems.contains("the listing row of note \(shortID(stray)) is in the projection but not in the log"),
            "\(problems)")
        #expect(problems.contains("the projection holds 2 listing rows, the log 1 notes"), "\(problems)")
        // Listings in another order read the rows projection; the default one reads the rows
        // its keys hold, checked by verify and refused when damaged too.
        var byCreation = q
        byCreation.sort = .created
        #expect(throws: NotesError.self) { try f.book.listRows(byCreation) }
        #expect(try f.book.listRows(q) == [NoteRow(note)])
        let list = try f.book.read { _, dbs in dbs["list"] }
        try f.book.store.environment.write { txn throws in
            let key = try txn.withCursor(list) { c in
                try #require(try c.seek([ListQuery.StatusFilter.archived.rawValue, 0, 0, 0]).map { Array($0.key) })
            }
            #expect(key.suffix(16) == a.id.bytes[...])
            let valid = try #require(try txn.get(list, key: key))
            try txn.put(list, key: key, value: Array(valid.dropLast()))
        }
        #expect(try f.book.verify().map(\.detail).contains("1 rows in the listing index differ from the log"))
        #expect(throws: NotesError.self) { try f.book.listRows(q) }
        try f.book.rebuild()
        #expect(try f.book.verify().isEmpty)
        #expect(try f.book.listRows(q) == [NoteRow(note)])
    }

    @Test("the default listing's rows follow events at one instant, which move only the version")
    func rowsAtOneInstant() throws {
        let f = try NotebookFixture()
        let a = try f.book.add(title: "Same", body: "one")
        let b = try f.book.add(title: "Other", body: "two", pinned: true)
        // The clock stands still: each edit changes the note's row (its version), not its keys.
        _ = try f.book.edit(a.id, body: "one, again")
        _ = try f.book.edit(a.id, body: "one, a third time")
        _ = try f.book.pin(a.id)
        _ = try f.book.edit(b.id, title: "Other, renamed")
        let expected = try [a.id, b.id].map { NoteRow(try f.book.note($0)) }.sorted { $0.id < $1.id }
        #expect(try f.book.listRows(ListQuery()).sorted { $0.id < $1.id } == expected)
        #expect(try f.book.listRows(ListQuery()).first { $0.id == a.id }?.version == 4)
        var all = ListQuery()
        all.status = .all
        #expect(try f.book.listRows(all).sorted { $0.id < $1.id } == expected)
        #expect(try f.book.verify().isEmpty)
    }

    @Test("a row's stored form round-trips every field, and every cut or flipped flag of it is refused")
    func rowFormat() throws {
        let id = Identifier(high: 1, low: 2)
        let rows = [
            NoteRow(id: id, title: "", createdAt: -1, updatedAt: 0, version: 1),
            NoteRow(
                id: id, title: "Ünïcödé 🗒", pinned: true, category: Identifier(high: 3, low: 4), archived: true,
                trashed: true, createdAt: .min, updatedAt: .max, version: .max,
                tags: (0..<20).map { Identifier(high: 9, low: UInt64($0)) }),
        ]
        for row in rows {
            let bytes = row.encoded()
            #expect(try bytes.withUnsafeBytes { try NoteRow(id: id, decoding: $0) } == row)
            for cut in 0..<bytes.count {
                #expect(throws: DecodingError.self) {
                    try bytes.prefix(cut).withUnsafeBytes { try NoteRow(id: id, decoding: $0) }
                }
            }
            var flagged = bytes
            flagged[1] |= 0x10
            #expect(throws: DecodingError.self) { try flagged.withUnsafeBytes { try NoteRow(id: id, decoding: $0) } }
        }
    }

    @Test("pinned notes come first in every sort and direction; --reverse flips only within each group")
    func pinnedFirst() throws {
        let f = try NotebookFixture()
        var made: [String: Identifier] = [:]
        for title in ["c", "a", "d", "b"] {
            f.clock.advance()
            made[title] = try f.book.add(title: title, pinned: title == "d" || title == "b").id
        }
        func titles(_ sort: ListQuery.Sort, reverse: Bool = false, limit: Int = .max) throws -> [String] {
            var q = ListQuery()
            q.sort = sort
            q.reverse = reverse
            q.limit = limit
            return try f.book.list(q).map(\.title)
        }
        #expect(try titles(.title) == ["b", "d", "a", "c"])
        #expect(try titles(.title, reverse: true) == ["d", "b", "c", "a"])
        #expect(try titles(.created) == ["b", "d", "a", "c"])
        #expect(try titles(.created, reverse: true) == ["d", "b", "c", "a"])
        f.clock.advance()
        try f.book.edit(made["c"]!, body: "touched")
        #expect(try titles(.updated) == ["b", "d", "c", "a"])
        #expect(try titles(.updated, limit: 3) == ["b", "d", "c"])
        #expect(try titles(.updated, reverse: true, limit: 3) == ["d", "b", "a"])
    }
}
