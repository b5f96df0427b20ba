import Basics
import EventStore
@_spi(FaultInjection) import LMDB
import Notes
import PostgresFixture
import PostgresLog
import TestSupport
import Testing

/// Pushes that cross: a device pulls, another device pushes, then the first pushes what it had
/// rebased on the older log. Each push is valid for its own streams, so the remote takes both,
/// and the rules a rebase keeps (one live category or tag per name, delete wins over assign, a
/// merged one's notes follow it) must be restored by whichever device pulls both.
extension NotebookSyncTests {
    @Test("categories and tags of one name created on two devices whose pushes crossed become one")
    func crossedSameNames() throws {
        let (a, b) = try pair(180)
        let fromA = try a.book.add(title: "From a", category: "Work", tags: ["plan"])
        let fromB = try b.book.add(title: "From b", category: "work", tags: ["Plan"])
        // b pulls (nothing new), a pushes its "Work" and "plan", then b pushes its own.
        let (report, _) = try b.countedSync { remote in remote.beforeFirstAppend = { try a.sync() } }
        #expect(report.namesMerged == 2, "b found its category and tag named as a's, created first")
        try converge([a, b])
        for d in [a, b] {
            let categories = try d.book.categories()
            #expect(categories.map(\.name) == ["Work"])
            #expect(categories.first?.count == 2)
            let tags = try d.book.allTags()
            #expect(tags.map(\.name) == ["plan"])
            #expect(tags.first?.count == 2)
            #expect(try d.book.note(fromB.id).category == categories.first?.id)
            #expect(try d.book.note(fromB.id).tags == [try #require(tags.first).id])
            #expect(try d.book.note(fromA.id).tags == [try #require(tags.first).id])
        }
        #expect(try a.sync().namesMerged == 0, "nothing left to repair")
    }

    @Test(
        "a category and a tag deleted on one device while the other files a note in them, the pushes crossed",
        arguments: [false, true])
    func crossedDeleteAgainstAssign(deletionCrosses: Bool) throws {
        let (a, b) = try pair(deletionCrosses ? 182 : 181)
        let n = try a.book.add(title: "To file", tags: ["kept"])
        try a.book.addCategory("Old")
        try a.book.add(title: "Tagged old", tags: ["old"])
        try converge([a, b])
        try a.book.deleteCategory("Old")
        try a.book.deleteTag("old")
        try b.book.categorize(n.id, as: "Old")
        try b.book.tag(n.id, with: ["old"])
        if deletionCrosses {
            // b pushes its filing while a's sync is between its pull and its push.
            _ = try a.countedSync { remote in remote.beforeFirstAppend = { try b.sync() } }
        } else {
            _ = try b.countedSync { remote in remote.beforeFirstAppend = { try a.sync() } }
        }
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.note(n.id).category == nil, "delete wins over assign")
            #expect(try d.book.note(n.id).tags.map { try d.book.tagName($0) } == ["kept"])
            #expect(try d.book.categories().isEmpty)
            #expect(try d.book.allTags().map(\.name) == ["kept"])
        }
    }

    @Test("a note filed in a category while another device's push merged it into another: it follows the merge")
    func crossedFilingIntoMerged() throws {
        let (a, b, c) = try trio(183)
        let n = try a.book.add(title: "Unfiled")
        let inJob = try a.book.add(title: "In Job", category: "Job")
        try converge([a, b, c])
        try b.book.add(title: "In Work", category: "Work")
        try b.sync()
        // a renames Job to the name b gave its own category: its sync makes it a merge.
        try a.book.renameCategory("Job", to: "Work")
        try c.book.categorize(n.id, as: "Job")
        _ = try a.countedSync { remote in remote.beforeFirstAppend = { try c.sync() } }
        try converge([a, b, c])
        for d in [a, b, c] {
            let work = try d.book.category(named: "Work")
            #expect(try d.book.categories().map(\.name) == ["Work"])
            #expect(try d.book.note(n.id).category == work.id, "the filing follows the merge")
            #expect(try d.book.note(inJob.id).category == work.id)
            #expect(work.count == 3)
        }
    }

    @Test("the same crossing repaired by both devices is stored once: the repair's events have derived ids")
    func crossedRepairOnce() throws {
        let (a, b) = try pair(184)
        try a.book.add(title: "From a", category: "Work")
        try b.book.add(title: "From b", category: "Work")
        // a's push and b's push cross; b pulls both and repairs, and before its repair reaches
        // the remote, a pulls both and pushes its own repair first.
        _ = try b.countedSync { remote in
            remote.beforeFirstAppend = {
                try a.sync()
                remote.beforeFirstAppend = {
                    let merged = try a.sync().namesMerged
                    #expect(merged == 1, "a repaired it too")
                }
            }
        }
        try converge([a, b])
        let merges = try a.log().filter { $0.type == "CategoryMerged" }
        #expect(merges.count == 1)
        #expect(Set(try a.log().map(\.id)).count == (try a.log().count), "no event twice")
    }

    @Test("a sync that stopped after pulling a crossing, before repairing it, leaves it to the next sync")
    func crossedRepairAfterFailure() throws {
        let (a, b) = try pair(185)
        try a.book.add(title: "From a", category: "Work")
        try b.book.add(title: "From b", category: "Work")
        // After a's crossing push, b's sync writes twice more before its next push: the pull of
        // both pushes (committed), then its repair, which fails here as a failing disk would.
        #expect(throws: (any Error).self) {
            _ = try b.countedSync { remote in
                remote.beforeFirstAppend = {
                    try a.sync()
                    b.book.store.environment.injectFault(.init(.commit, at: 2, failing: .io))
                }
            }
        }
        b.book.store.environment.removeFault()
        #expect(try b.book.categories().map(\.name) == ["Work", "Work"], "pulled, not repaired")
        #expect(try b.book.syncState().pending == 0)
        let report = try b.sync()
        #expect(report.namesMerged == 1, "the pull's mark outlived the failed sync")
        try converge([a, b])
        for d in [a, b] { #expect(try d.book.category(named: "Work").count == 2) }
    }

    @Test("a remote log that already holds two live categories of one name and a note in a deleted one is repaired")
    func remoteWithBrokenRules() throws {
        let (a, b) = try pair(186)
        let broken = try BrokenRemoteState(on: a.remote, notebook: a.notebookID)
        let report = try b.sync()
        #expect(report.namesMerged == 1)
        #expect(report.refiled == 1)
        try converge([a, b])
        for d in [a, b] { try broken.expectRepaired(d.book) }
    }

    @Test(
        "a repair refused by another device's edit of the note is done again on top: the merged tag comes off, not its heir",
        arguments: [false, true])
    func repairRebased(alsoTaggedWithHeir: Bool) throws {
        let (a, b) = try pair(alsoTaggedWithHeir ? 189 : 188)
        let state = try MergedTagState(on: a, alsoTaggedWithHeir: alsoTaggedWithHeir, ids: 0xC2)
        // b repairs; before its repair reaches the remote, another device edits the note.
        let edit = BrokenRemoteState.event(0xC2_00, NoteEvent.bodyEdited(body: "edited elsewhere\n"))
        _ = try b.countedSync { remote in
            remote.beforeFirstAppend = {
                try a.appendDirectly([(Note.stream(state.note), .exact(state.version), [edit])])
            }
        }
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.note(state.note).tags == [state.plan], "the merged tag off, its heir on")
            #expect(try d.book.note(state.note).body == "edited elsewhere\n")
        }
    }

    @Test("a repair refused because another device moved the note meanwhile is dropped: the move stands")
    func repairDroppedAfterMove() throws {
        let (a, b) = try pair(190)
        let (gone, kept, n) = BrokenRemoteState.ids(0xC3)
        let event = BrokenRemoteState.events(from: 0xC300)
        try a.appendDirectly([
            (
                Category.stream(gone), .noStream,
                [event(1, CategoryEvent.created(name: "Gone")), event(2, CategoryEvent.deleted)]
            ),
            (Category.stream(kept), .noStream, [event(3, CategoryEvent.created(name: "Kept"))]),
            (
                Note.stream(n), .noStream,
                [event(4, NoteEvent.created(title: "Filed", body: "", pinned: false, category: gone))]
            ),
        ])
        let move = event(5, NoteEvent.categorized(category: kept))
        _ = try b.countedSync { remote in
            remote.beforeFirstAppend = { try a.appendDirectly([(Note.stream(n), .exact(1), [move])]) }
        }
        try converge([a, b])
        for d in [a, b] { #expect(try d.book.note(n).category == kept) }
    }

    @Test(
        "a same-name merge repair refused and rebased still moves its notes; dropped when the other one was renamed",
        arguments: [false, true])
    func mergeRepairRebased(renamedMeanwhile: Bool) throws {
        let (a, b) = try pair(renamedMeanwhile ? 193 : 192)
        let broken = try BrokenRemoteState(on: a.remote, notebook: a.notebookID, filedInSecond: true)
        // Before b's repair reaches the remote, another device edits the note (or renames the
        // later "work"): b's push is refused and its repair rebased.
        let change =
            renamedMeanwhile
            ? (Category.stream(broken.second), BrokenRemoteState.event(90, CategoryEvent.renamed(name: "Job")))
            : (Note.stream(broken.note), BrokenRemoteState.event(90, NoteEvent.bodyEdited(body: "edited elsewhere\n")))
        let (report, _) = try b.countedSync { remote in
            remote.beforeFirstAppend = { try a.appendDirectly([(change.0, .exact(1), [change.1])]) }
        }
        #expect(report.rounds >= 2)
        // b's own sync finished the repair (no other device's pull needed).
        #expect(try b.book.note(broken.note).category == (renamedMeanwhile ? broken.second : broken.first))
        #expect(try b.book.syncState().pending == 0)
        try converge([a, b])
        for d in [a, b] {
            if renamedMeanwhile {
                #expect(try d.book.categories().map(\.name) == ["Job", "Work"], "the rename stands")
                #expect(try d.book.note(broken.note).category == broken.second)
            } else {
                #expect(try d.book.categories().map(\.id) == [broken.first])
                #expect(try d.book.note(broken.note).category == broken.first, "the note followed the merge")
            }
        }
    }

    @Test("a same-name tag merge repair dropped on rebase (the tag renamed elsewhere) leaves the notes' tags alone")
    func tagMergeRepairDropped() throws {
        let (a, b) = try pair(195)
        let (first, second, n) = BrokenRemoteState.ids(0xC5)
        let event = BrokenRemoteState.events(from: 0xC500)
        try a.appendDirectly([
            (Tag.stream(first), .noStream, [event(1, TagEvent.created(name: "x"))]),
            (Tag.stream(second), .noStream, [event(2, TagEvent.created(name: "X"))]),
            (
                Note.stream(n), .noStream,
                [
                    event(3, NoteEvent.created(title: "Tagged", body: "", pinned: false, category: nil)),
                    event(4, NoteEvent.tagged(tag: second)),
                ]
            ),
        ])
        let rename = event(5, TagEvent.renamed(name: "y"))
        _ = try b.countedSync { remote in
            remote.beforeFirstAppend = { try a.appendDirectly([(Tag.stream(second), .exact(1), [rename])]) }
        }
        #expect(try b.book.note(n).tags == [second], "the rename stands: the note keeps its tag")
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.allTags().map(\.name) == ["x", "y"])
            #expect(try d.book.note(n).tags == [second])
        }
    }

    @Test("a tag repair refused and rebased after another device took the ended tag off adds no heir")
    func tagRepairAfterUntag() throws {
        let (a, b) = try pair(194)
        let state = try MergedTagState(on: a, alsoTaggedWithHeir: false, ids: 0xC4)
        let untag = BrokenRemoteState.event(0xC4_00, NoteEvent.untagged(tag: state.merged))
        _ = try b.countedSync { remote in
            remote.beforeFirstAppend = {
                try a.appendDirectly([(Note.stream(state.note), .exact(state.version), [untag])])
            }
        }
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.note(state.note).tags.isEmpty, "the tag was taken off: nothing replaces it")
        }
    }

    @Test("a reader that pulls a crossing leaves its repair to a writer: it writes nothing and syncs on")
    func readerLeavesRepair() throws {
        let c = try cluster()
        try makeRole(c, "ana_188", in: "notes_log_creator")
        try makeRole(c, "bob_188", in: "notes_log_user")
        let anaLog = try logAs(c, "ana_188")
        let book = try anaLog.notebook(named: "team-188", create: true)
        let broken = try BrokenRemoteState(on: anaLog, notebook: book)
        try anaLog.share(notebook: "team-188", role: "bob_188", canWrite: false)
        let bobLog = CountingRemote(try logAs(c, "bob_188"))
        let reader = try NotebookFixture(stem: 2)
        #expect(try reader.book.sync(with: bobLog, notebook: book).pushed == 0)
        #expect(bobLog.calls.contains("mayAppend"), "the reader found something to repair and asked")
        #expect(try reader.book.syncState().pending == 0, "and wrote nothing it cannot push")
        #expect(try reader.book.categories().count == 2)
        #expect(try reader.book.sync(with: bobLog, notebook: book).pushed == 0)
        #expect(bobLog.calls.filter { $0 == "mayAppend" }.count == 1, "the mark was forgotten")
        // A writer's device repairs it; the reader takes the repair.
        let writer = try NotebookFixture(stem: 1)
        #expect(try writer.book.sync(with: anaLog, notebook: book).namesMerged == 1)
        try reader.book.sync(with: bobLog, notebook: book)
        for d in [reader.book, writer.book] {
            try broken.expectRepaired(d)
            #expect(try d.verify().isEmpty)
        }
    }
}

/// What devices of a version without the repair of crossed pushes could leave in a remote log,
/// written to it directly: "Work" twice, and a note filed under a category deleted before.
struct BrokenRemoteState {
    let first = Identifier(high: 0xC1, low: 1)
    let second = Identifier(high: 0xC1, low: 2)
    let gone = Identifier(high: 0xC1, low: 3)
    let note = Identifier(high: 0xA0, low: 1)

    /// Three ids of one test.
    static func ids(_ high: UInt64) -> (Identifier, Identifier, Identifier) {
        (Identifier(high: high, low: 1), Identifier(high: high, low: 2), Identifier(high: high, low: 3))
    }

    /// ``event(_:_:)`` with ids counted from `base`.
    static func events(from base: UInt64) -> (UInt64, any CatalogueEvent) -> NewEvent {
        { low, e in event(base + low, e) }
    }

    /// An event of an older device, its id from `low`.
    static func event(_ low: UInt64, _ e: some CatalogueEvent) -> NewEvent {
        e.newEvent(id: Identifier(high: 0xE0, low: low), metadata: EventMetadata(actor: "old@device"))
    }

    /// `filedInSecond`: the note is filed under the later "work" only (no deleted category).
    init(on remote: any RemoteEventLog, notebook: Identifier, filedInSecond: Bool = false) throws {
        func event(_ low: UInt64, _ e: some CatalogueEvent) -> NewEvent { Self.event(low, e) }
        let streams: [(String, [NewEvent])] = [
            (Category.stream(first), [event(1, CategoryEvent.created(name: "Work"))]),
            (Category.stream(gone), [event(2, CategoryEvent.created(name: "Gone")), event(3, CategoryEvent.deleted)]),
            (Category.stream(second), [event(4, CategoryEvent.created(name: "work"))]),
            (
                Note.stream(note),
                [event(5, NoteEvent.created(title: "Filed twice", body: "", pinned: false, category: second))]
                    + (filedInSecond ? [] : [event(6, NoteEvent.categorized(category: gone))])
            ),
        ]
        let batch = RemoteBatch(streams.map { RemoteAppend(stream: $0.0, expecting: .noStream, events: $0.1) })
        _ = try remote.append(notebook: notebook, batch: batch)
    }

    func expectRepaired(_ book: Notebook, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try book.categories().map(\.id) == [first], sourceLocation: sourceLocation)
        #expect(try book.note(note).category == nil, "delete wins", sourceLocation: sourceLocation)
    }
}

extension NotebookSyncTests {
    @Test("a note whose edit conflicts again in a second round of one sync counts one conflict")
    func conflictCountedOncePerSync() throws {
        let (a, b) = try pair(191)
        let n = try a.book.add(title: "Shared", body: "one\ntwo\nthree\n")
        try converge([a, b])
        try a.book.edit(n.id, body: "one\ntwo on a\nthree\n")
        try a.sync()
        try b.book.edit(n.id, body: "one\ntwo on b\nthree\n")
        // b's rebased edit conflicts; before its push, a changes the same line again, so the
        // push is refused and the next round rebases (and flags) the note once more.
        let (report, _) = try b.countedSync { remote in
            remote.beforeFirstAppend = {
                try a.book.edit(n.id, body: "one\ntwo on a, again\nthree\n")
                try a.sync()
            }
        }
        #expect(report.rounds >= 2, "the push was refused once")
        #expect(report.conflicts == 1)
        #expect(report.unresolvedConflicts == 1)
    }
}

/// Two tags, "Plan" merged into "plan", and a note tagged with "Plan" after the merge (as an
/// older version could leave it): the note is under a tag that ended.
struct MergedTagState {
    let plan: Identifier
    let merged: Identifier
    let note: Identifier
    /// The note's version.
    let version: UInt64

    init(on device: Device, alsoTaggedWithHeir: Bool, ids: UInt64) throws {
        (plan, merged, note) = (
            Identifier(high: ids, low: 1), Identifier(high: ids, low: 2), Identifier(high: ids, low: 3)
        )
        var next = ids << 8
        func event(_ e: some CatalogueEvent) -> NewEvent {
            next += 1
            return BrokenRemoteState.event(next, e)
        }
        let noteEvents =
            [event(NoteEvent.created(title: "Tagged", body: "", pinned: false, category: nil))]
            + (alsoTaggedWithHeir ? [event(NoteEvent.tagged(tag: plan))] : []) + [event(NoteEvent.tagged(tag: merged))]
        version = UInt64(noteEvents.count)
        try device.appendDirectly([
            (Tag.stream(plan), .noStream, [event(TagEvent.created(name: "plan"))]),
            (
                Tag.stream(merged), .noStream,
                [event(TagEvent.created(name: "Plan")), event(TagEvent.merged(into: plan))]
            ),
            (Note.stream(note), .noStream, noteEvents),
        ])
    }
}

extension Device {
    /// Appends to the remote directly, as another device (of any version) would have pushed.
    func appendDirectly(_ groups: [(stream: String, expecting: ExpectedVersion, events: [NewEvent])]) throws {
        _ = try remote.append(
            notebook: notebookID,
            batch: RemoteBatch(
                groups.map { RemoteAppend(stream: $0.stream, expecting: $0.expecting, events: $0.events) }))
    }
}

extension NotebookSyncTests {
    @Test(
        "a pull of another device's filings with nothing to repair costs one commit: the check is in the pull's write")
    func checkInThePullsWrite() throws {
        let (a, b) = try pair(196)
        // A store larger than the pull (a pull of more events than the store holds projects them
        // in bulk at the commit, and is checked in a write of its own).
        for i in 0..<20 { try a.book.add(title: "Note \(i)") }
        try converge([a, b])
        try a.book.add(title: "Filed", category: "Work", tags: ["plan"])
        try a.sync()
        b.book.store.environment.injectFault(.init(.commit, at: .max, failing: .io))
        defer { b.book.store.environment.removeFault() }
        let report = try b.sync()
        #expect(report.pulled > 0)
        #expect(FaultInjection.counts(at: b.book.store.environment.path)[.commit] == 1)
    }
}
