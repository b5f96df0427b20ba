import Basics
public import EventStore
import LMDB

extension Notebook {
    /// Everything `notes verify` checks: the log (checksums, hash chain, gap-free positions,
    /// stream versions, indexes, catalogue), that every stored schema is readable, and that
    /// every projection equals a fresh replay of the log.
    public func verify(progress: ((UInt64, UInt64) -> Void)? = nil) throws(NotesError) -> [VerificationProblem] {
        var problems: [VerificationProblem]
        do { problems = try store.verifyLog(progress: progress) } catch { throw NotesError.wrap(error) }
        do {
            for (key, count) in try store.catalogue() where !store.registry.canRead(key) {
                problems.append(
                    .init(
                        .catalogue, position: nil,
                        "\(count) event\(count == 1 ? "" : "s") of \(key) cannot be read by this program"))
            }
        } catch { throw NotesError.wrap(error) }
        // The replay and the projections it is compared with must be of one log: another process
        // appending meanwhile moved the projections past the replay, and its new notes were
        // reported as damage (before 2026-12-06). The projections are read in a snapshot held
        // open while the log is replayed up to that snapshot's head (the log only grows, so
        // the replay's own reads see the same events).
        problems += try readLog { txn, dbs in
            let head = try store.headPosition(in: txn)
            let state: NotebookState
            do { state = try NotebookState.replay(store: store, upTo: head, releasingPages: true) } catch {
                return [
                    .init(.undecodable, position: nil, "the log cannot be replayed: \(NotesError.wrap(error))")
                ]
            }
            return try compareProjections(with: state, in: txn, databases: dbs)
        }
        return problems
    }

    /// The projections of `txn` against a replay of the same log (see ``verify(progress:)``).
    private func compareProjections(
        with state: NotebookState, in txn: borrowing Transaction, databases dbs: ProjectionDatabases
    ) throws -> [VerificationProblem] {
        // Projections another version of the program built (a store this one may only read,
        // so it could not rebuild them at open) follow other rules: comparing them with this
        // program's replay would report differences that are not damage. Projections this one
        // cannot read at all (databases missing, read-only) are never compared, even in a store
        // without events or a recorded version: before 2026-12-07 they were, and the missing
        // databases trapped ("projection database notes was not declared").
        let stored = try store.storedProjectionVersion(in: txn)
        let current = store.currentProjectionVersion
        let unreadable = unbuiltProjections != nil
        if unreadable || stored != current, try unreadable || stored != nil || store.headPosition(in: txn) > 0 {
            return [
                VerificationProblem(
                    .projection, position: nil,
                    "the projections were built by another version of notes (\(stored ?? "none recorded"), this one builds \(current)), so they were not compared; open the store with write access to rebuild them"
                )
            ]
        }
        do { return try projection.compare(with: state, in: txn, databases: dbs) } catch {
            // A projection whose pages are damaged cannot be compared, but it is a
            // projection: named as one, which `rebuild` repairs, not as the store failing.
            guard let damage = Self.pageDamage(error) else { throw error }
            return [
                VerificationProblem(
                    .projection, position: nil, "a projection cannot be read (\(damage.operation): \(damage.message))")
            ]
        }
    }

    /// The LMDB error of damaged pages inside `error`, if it is one.
    private static func pageDamage(_ error: any Error) -> LMDBError? {
        var found: LMDBError?
        if let e = error as? LMDBError { found = e }
        if case .storage(let e) = error as? StoreError { found = e }
        if case .store(.storage(let e)) = error as? NotesError { found = e }
        guard let found, found.code == .corrupted || found.code == .pageNotFound else { return nil }
        return found
    }

    /// Rebuilds every projection from the log (repairs damaged projection records).
    @discardableResult
    public func rebuild(reason: String = "requested by notes rebuild") throws(NotesError) -> RebuildReport {
        do { return try store.rebuildProjections(reason: reason) } catch { throw NotesError.wrap(error) }
    }

    /// The rebuilds recorded in the store, oldest first.
    public func upgradeLog() throws(NotesError) -> [RebuildReport] {
        do { return try store.upgradeLog() } catch { throw NotesError.wrap(error) }
    }

    /// Per stored (type, schema version): how many events, and what they are lifted to.
    public func upgradePlan() throws(NotesError) -> [(key: SchemaKey, count: UInt64, liftsTo: [SchemaKey]?)] {
        let catalogue: [SchemaKey: UInt64]
        do { catalogue = try store.catalogue() } catch { throw NotesError.wrap(error) }
        return catalogue.sorted { $0.key < $1.key }.map { key, count in
            let registry = store.registry
            if registry.isCurrent(key.type, key.version) { return (key, count, [key]) }
            guard registry.canRead(key) else { return (key, count, nil) }
            return (key, count, registry.finalTargets(of: key))
        }
    }
}

extension SchemaRegistry {
    /// What each stored event of an old pair is read as, in words: `A + B` when each event
    /// becomes all of them (a split), `A or B` when it becomes one or the other (outputs under
    /// opposite conditions, as `NotePinToggled` becomes `NotePinned` or `NoteUnpinned`), `nothing`
    /// when the type is retired; a chain of upcasters is followed to the current pairs. (Before
    /// 2026-12-06 `notes upgrade` joined every possible output with `+`, which read as a split.)
    public func liftWording(of key: SchemaKey) -> String { liftWording(of: key, depth: 0) }

    private func liftWording(of key: SchemaKey, depth: Int) -> String {
        guard !isCurrent(key.type, key.version), depth < 32, let up = upcasters[key] else {
            return key.description
        }
        func word(_ k: SchemaKey) -> String {
            let w = liftWording(of: k, depth: depth + 1)
            return w.contains(" ") && w != k.description ? "(\(w))" : w
        }
        guard let plan = up.plan else {
            // A lift written as code: which of its outputs an event gives is not declared.
            switch up.produces.count {
            case 0: return "nothing"
            case 1: return liftWording(of: up.produces[0], depth: depth + 1)
            default: return "one or more of " + up.produces.map(word).joined(separator: ", ")
            }
        }
        guard !plan.outputs.isEmpty else { return "nothing" }
        var parts: [String] = []
        var used = Set<Int>()
        for (i, output) in plan.outputs.enumerated() where !used.contains(i) {
            used.insert(i)
            switch output.condition {
            case .always:
                parts.append(word(output.key))
            case .when(let field, let value), .unless(let field, let value):
                // Its opposite (same field and value, the other test) makes the pair `A or B`.
                let opposite = plan.outputs.indices.first { j in
                    guard !used.contains(j) else { return false }
                    switch (output.condition, plan.outputs[j].condition) {
                    case (.when, .unless(let f, let v)), (.unless, .when(let f, let v)): return f == field && v == value
                    default: return false
                    }
                }
                if let j = opposite {
                    used.insert(j)
                    parts.append(word(output.key) + " or " + word(plan.outputs[j].key))
                } else {
                    parts.append("maybe " + word(output.key))
                }
            }
        }
        return parts.count == 1 ? parts[0] : parts.map { $0.contains(" or ") ? "(\($0))" : $0 }.joined(separator: " + ")
    }

    /// The current (type, version) pairs an old pair ends as, following declared outputs.
    func finalTargets(of key: SchemaKey) -> [SchemaKey] {
        if isCurrent(key.type, key.version) { return [key] }
        guard let up = upcasters[key] else { return [] }
        var out: [SchemaKey] = []
        for k in up.produces { for t in finalTargets(of: k) where !out.contains(t) { out.append(t) } }
        return out
    }
}

extension NotesProjection {
    /// Differences between the stored projections and a replayed state.
    func compare(with state: NotebookState, in txn: borrowing Transaction, databases: ProjectionDatabases) throws
        -> [VerificationProblem]
    {
        var problems: [VerificationProblem] = []
        func report(_ s: String) { if problems.count < 1000 { problems.append(.init(.projection, position: nil, s)) } }
        var seen = 0
        try txn.withCursor(databases[DB.notes]) { c in
            var entry = try c.first()
            while let e = entry {
                seen += 1
                let id = Identifier(bytes: e.key)
                do {
                    let stored = try Note(decoding: e.value)
                    if let id, let expected = state.notes[id] {
                        if stored != expected {
                            report(
                                "note \(shortID(id)) differs from the log (stored v\(stored.version), log v\(expected.version))"
                            )
                        }
                    } else {
                        report("note \(id.map(shortID) ?? "?") is in the projection but not in the log")
                    }
                } catch {
                    report("note record \(id.map(shortID) ?? "?") is damaged: \(error)")
                }
                entry = try c.next()
            }
        }
        if seen != state.notes.count { report("the projection holds \(seen) notes, the log \(state.notes.count)") }
        var rows = 0
        try txn.withCursor(databases[DB.rows]) { c in
            var entry = try c.first()
            while let e = entry {
                rows += 1
                if let id = Identifier(bytes: e.key) {
                    do {
                        let stored = try NoteRow(id: id, decoding: e.value)
                        if let expected = state.notes[id] {
                            if stored != NoteRow(expected) {
                                report("the listing row of note \(shortID(id)) differs from the log")
                            }
                        } else {
                            report("the listing row of note \(shortID(id)) is in the projection but not in the log")
                        }
                    } catch {
                        report("the listing row of note \(shortID(id)) is damaged: \(error)")
                    }
                } else {
                    report("a listing row has a key of \(e.key.count) bytes, not a note id")
                }
                entry = try c.next()
            }
        }
        if rows != state.notes.count {
            report("the projection holds \(rows) listing rows, the log \(state.notes.count) notes")
        }
        var expectedKeys: [[UInt8]] = []
        for n in state.notes.values { expectedKeys += ListIndex.keys(for: n) }
        expectedKeys.sort { $0.lexicographicallyPrecedes($1) }
        var storedKeys: [[UInt8]] = []
        var rowsDiffer = 0
        try txn.withCursor(databases[DB.list]) { c in
            var entry = try c.first()
            while let e = entry {
                let key = Array(e.key)
                // The default listing's keys hold the note's row, every other key nothing.
                let expected =
                    ListIndex.covers(key) && key.count >= 16
                    ? Identifier(bytes: e.key[(e.key.count - 16)...]).flatMap { state.notes[$0] }.map {
                        NoteRow($0).encoded()
                    } : []
                if let expected, !e.value.elementsEqual(expected) { rowsDiffer += 1 }
                storedKeys.append(key)
                entry = try c.next()
            }
        }
        if storedKeys != expectedKeys {
            report(
                "the listing index differs from the log (\(storedKeys.count) entries stored, \(expectedKeys.count) expected)"
            )
        }
        if rowsDiffer > 0 { report("\(rowsDiffer) rows in the listing index differ from the log") }
        var everPinned: [Identifier] = []
        try forEachEverPinned(in: txn, databases: databases) { id in
            everPinned.append(id)
            return true
        }
        if everPinned != state.everPinned.sorted() {
            report(
                "the notes ever pinned differ from the log (\(everPinned.count) stored, \(state.everPinned.count) expected)"
            )
        }
        let filed = try filedEverMatches(state.everFiled, in: txn, databases: databases)
        if !filed.matches {
            report(
                "the notes ever filed under each category and tag differ from the log (\(filed.stored) keys stored, \(filed.expected) expected)"
            )
        }
        let conflicted = try conflictedIDs(in: txn, databases: databases)
        let expectedConflicted = state.notes.values.filter(\.isConflicted).map(\.id).sorted()
        if conflicted != expectedConflicted {
            report(
                "the notes with a sync conflict differ from the log (\(conflicted.count) stored, \(expectedConflicted.count) expected)"
            )
        }
        let (categories, tags) = state.entitiesWithCounts()
        for problem in try categoryTable(databases).differences(from: categories, in: txn) { report(problem) }
        for problem in try tagTable(databases).differences(from: tags, in: txn) { report(problem) }
        for problem in try SearchBridge.compare(
            with: state, in: txn, databases: databases, language: searchLanguage)
        {
            report(problem)
        }
        let links = LinkTables(state)
        for (table, what) in [
            (LinkTables.Table.titles, "title history"), (.aliases, "other names"), (.noteTitles, "titles by note"),
            (.links, "links"),
        ] {
            let found = try links.matches(table, in: txn, databases: databases)
            if !found.equal {
                report(
                    "the \(what) index of links differs from the log (\(found.stored) entries stored, \(links.count(table)) expected)"
                )
            }
        }
        return problems
    }
}
