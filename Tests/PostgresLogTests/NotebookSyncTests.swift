import Basics
import EventStore
import Glibc
import Notes
import NotesWorkload
import PostgresFixture
import PostgresLog
import TestSupport
import Testing

/// A device: a store of its own (ids of its own stem) and its connection to the shared remote.
final class Device {
    let fixture: NotebookFixture
    private(set) var remote: PostgresEventLog
    let notebookID: Identifier
    var book: Notebook { fixture.book }

    /// A device of the notebook called `book-<n>` (created on the remote if needed).
    init(stem: UInt64, notebook n: Int, maxBodyBytes: Int? = nil) throws {
        fixture = try NotebookFixture(stem: stem, maxBodyBytes: maxBodyBytes)
        remote = try PostgresEventLog(connecting: try cluster().address())
        notebookID = try makeNotebook(try cluster(), n)
    }

    /// A new connection, as the next `notes sync` process opens (after the server restarted).
    func reconnect() throws { remote = try PostgresEventLog(connecting: try cluster().address()) }

    @discardableResult
    func sync(join: Bool = false) throws -> SyncReport {
        try book.sync(with: remote, notebook: notebookID, join: join)
    }

    /// Every event of the log: what two converged devices hold alike, byte for byte.
    func log() throws -> [RecordedEvent] {
        try book.store.read { txn in
            var all: [RecordedEvent] = []
            try book.store.forEachEvent(from: 1, in: txn) { view in
                all.append(view.recorded)
                return true
            }
            return all
        }
    }
}

extension Device {
    /// Appends the generated workload of `total` events to the remote as devices would have
    /// pushed it: runs of one stream as one append, batches of the most the remote takes.
    func pushWorkload(events total: Int) throws {
        var workload = EventWorkload(EventWorkload.Spec(notes: max(total / 10, 1), events: total))
        var batch: [RemoteAppend] = []
        var count = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            _ = try remote.append(notebook: notebookID, batch: RemoteBatch(batch))
            batch = []
            count = 0
        }
        while let e = workload.next() {
            if count == RemoteBatch.maxEvents { try flush() }
            if batch.last?.stream == e.stream {
                batch[batch.count - 1].events.append(e.event)
            } else {
                batch.append(RemoteAppend(stream: e.stream, events: [e.event]))
            }
            count += 1
        }
        try flush()
    }
}

/// Syncs every device until a quiet round, then checks that they converged: the same events, the
/// same notes, nothing pending, `verify` clean.
func converge(_ devices: [Device], sourceLocation: SourceLocation = #_sourceLocation) throws {
    for d in devices { try d.sync() }
    for d in devices { try d.sync() }
    let first = try devices[0].log()
    let notes = try devices[0].book.list(everything)
    for d in devices {
        #expect(try d.log() == first, "the same log on every device", sourceLocation: sourceLocation)
        #expect(try d.book.list(everything) == notes, "the same notes", sourceLocation: sourceLocation)
        #expect(try d.book.syncState().pending == 0, sourceLocation: sourceLocation)
        #expect(try d.book.verify().isEmpty, sourceLocation: sourceLocation)
    }
}

let everything: ListQuery = {
    var q = ListQuery()
    q.status = .all
    q.sort = .created
    q.limit = .max
    return q
}()

@Suite(
    "Notebooks syncing through PostgreSQL",
    .enabled(if: PostgresCluster.binDirectory != nil, clusterSkipReason), .postgresCluster)
struct NotebookSyncTests {
    @Test("a store with history joins; an empty store clones it; both hold the same bytes")
    func joinAndClone() throws {
        let a = try Device(stem: 1, notebook: 101)
        let book = a.notebookID
        let n = try a.book.add(title: "Groceries", body: "- milk\n", category: "Home", tags: ["errands"])
        try a.book.pin(n.id)
        #expect(throws: SyncError.ownHistory(events: 5)) { try a.sync() }
        #expect(try a.book.syncState().notebook == nil, "a refused sync changes nothing")
        let report = try a.sync(join: true)
        #expect(report.pushed == 5 && report.pulled == 0)
        let state = try a.book.syncState()
        #expect(state.notebook == book && state.confirmed == 5 && state.head == 5 && state.pending == 0)
        #expect(state.lastSync == a.fixture.clock.micros)
        let b = try Device(stem: 2, notebook: 101)
        let cloned = try b.sync()
        #expect(cloned.pulled == 5 && cloned.pushed == 0)
        #expect(try b.book.note(n.id).pinned)
        #expect(try b.book.category(named: "home").count == 1)
        try converge([a, b])
    }

    @Test("a subtree of thousands of tags renamed on one device is pulled by another in one pass over its tags")
    func largeRenamePulled() throws {
        let (a, b) = try pair(5013)
        let id = try a.book.add(title: "Tagged").id
        try a.book.tag(id, with: (0..<3_000).map { "p/t\($0)" })
        try converge([a, b])
        try a.book.renameTag("p", to: "q")
        try a.sync()
        try b.sync()
        #expect(try b.book.tag(named: "q/t2999").count == 1)
        #expect(try b.book.note(id).tags.count == 3_000)
        #expect(try b.book.verify().isEmpty)
        // Before (trial-s31) each pulled rename read every tag's record to find who held its
        // names: 3,000 took 20 s to pull (not timed here: speed lives in benchmarks).
    }

    @Test("offline edits of different notes on two devices both arrive")
    func differentNotes() throws {
        let (a, b) = try pair(102)
        let x = try a.book.add(title: "X", body: "x\n")
        let y = try a.book.add(title: "Y", body: "y\n")
        try converge([a, b])
        // Alone on the remote, an edit comes back unchanged but for its instant: confirmed in
        // place, without a rebase (verify, in converge, checks the projections after it).
        try a.book.edit(x.id, title: "X!", body: "x, first\n")
        try a.book.pin(x.id)
        let alone = try a.sync()
        #expect(alone.pushed == 3 && alone.confirmedInPlace == 3 && alone.merged == 0, "\(alone)")
        #expect(try a.book.verify().isEmpty)
        #expect(try a.book.note(x.id).updatedAt == (try a.log().last!.recordedAt), "the remote's instant")
        try a.book.edit(x.id, body: "x from a\n")
        try b.book.edit(y.id, body: "y from b\n")
        try b.book.add(title: "Z from b")
        try converge([a, b])
        #expect(try a.book.note(x.id).body == "x from a\n")
        #expect(try a.book.note(y.id).body == "y from b\n")
        let titles = try a.book.list(everything).map(\.title)
        #expect(Set(titles) == ["Welcome", "X!", "Y", "Z from b"] && titles.count == 4, "\(titles)")
    }

    @Test("edits of one note in different lines merge cleanly, and history says so")
    func cleanMerge() throws {
        let (a, b) = try pair(103)
        let body = (1...10).map { "line \($0)\n" }.joined()
        let n = try a.book.add(title: "Plan", body: body)
        try converge([a, b])
        try a.book.edit(n.id, body: body.replacing("line 2\n", with: "line two (a)\n"))
        try b.book.edit(n.id, body: body.replacing("line 9\n", with: "line nine (b)\n"))
        try b.sync()
        let report = try a.sync()
        #expect(report.merged == 1 && report.conflicts == 0)
        try converge([a, b])
        let merged = try b.book.note(n.id).body
        #expect(merged.contains("line two (a)\n") && merged.contains("line nine (b)\n"))
        #expect(!merged.contains("<<<<<<<"))
        let history = try b.book.history(of: n.id)
        #expect(history.last?.summary.hasPrefix("merged an edit of v1 with v2") == true, "\(history.map(\.summary))")
        #expect(try b.book.conflictedNotes().isEmpty)
    }

    @Test(
        "a body edit behind another unsynced event of its note still merges: after a pin, a retitle, a body edit",
        arguments: [(160, "pin"), (161, "retitle"), (162, "edit"), (163, "title and body")])
    func mergeBehindOwnEvent(notebook: Int, before: String) throws {
        let (a, b) = try pair(notebook)
        // Changes three lines apart: a line merge takes adjacent ones for one change.
        let lines = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
        func text(_ l: [String]) -> String { l.map { $0 + "\n" }.joined() }
        let n = try a.book.add(title: "Plan", body: text(lines))
        try converge([a, b])
        var onA = lines
        onA[0] = "ZEBRA"
        try a.book.edit(n.id, body: text(onA))
        try a.sync()
        var onB = lines
        switch before {
        case "pin": try b.book.pin(n.id)
        case "retitle": try b.book.edit(n.id, title: "Plan (b)")
        default:
            onB[3] = "DELTA"
            try b.book.edit(n.id, title: before == "edit" ? nil : "Plan (b)", body: text(onB))
        }
        onB[7] = "WOMBAT"
        try b.book.edit(n.id, body: text(onB))
        let report = try b.sync()
        #expect(report.conflicts == 0 && report.merged >= 1, "\(report)")
        try converge([a, b])
        let note = try a.book.note(n.id)
        var expected = onB
        expected[0] = "ZEBRA"
        #expect(note.body == text(expected), "\(note.body)")
        #expect(note.pinned == (before == "pin"))
        // The merge names the shared version b's changes started from, not b's own rebased event.
        let merge = try #require(try a.book.history(of: n.id).last { $0.summary.hasPrefix("merged") })
        #expect(merge.summary.hasPrefix("merged an edit of v1 with v2"), "\(merge.summary)")
        #expect(note.title == (before == "retitle" || before == "title and body" ? "Plan (b)" : "Plan"))
    }

    @Test("an undo or a restore waiting to sync undoes this device's change only, on top of the other device's")
    func restoreOnTopOfOthers() throws {
        let (a, b) = try pair(164)
        let body = (1...5).map { "line \($0)\n" }.joined()
        let n = try a.book.add(title: "Plan", body: body, category: "Home")
        try converge([a, b])
        // a: line 1, a pin and another category; b: line 5, then undone.
        try a.book.edit(n.id, body: body.replacing("line 1\n", with: "line one (a)\n"))
        try a.book.pin(n.id)
        try a.book.categorize(n.id, as: "Work")
        try a.sync()
        try b.book.edit(n.id, body: body.replacing("line 5\n", with: "line five (b)\n"))
        try b.book.undo(n.id)
        let report = try b.sync()
        #expect(report.conflicts == 0, "\(report)")
        try converge([a, b])
        let note = try b.book.note(n.id)
        #expect(note.body == body.replacing("line 1\n", with: "line one (a)\n"), "\(note.body)")
        #expect(note.pinned && note.title == "Plan")
        #expect(try b.book.categoryName(note.category) == "Work")
        // A restore to b's own unsynced version, while a retitles: b's text, a's title.
        try a.book.edit(n.id, title: "Plan (a)")
        try a.sync()
        let v = try b.book.edit(n.id, body: "only b\n").version
        try b.book.edit(n.id, body: "b again\n")
        try b.book.restore(n.id, to: .version(v))
        try b.sync()
        try converge([a, b])
        let restored = try a.book.note(n.id)
        #expect(restored.body == "only b\n" && restored.title == "Plan (a)" && restored.pinned, "\(restored)")
    }

    @Test("an undo waiting to sync leaves the other device's trash, and its category set after deleting the old one")
    func undoKeepsOthersTrashAndCategory() throws {
        let (a, b) = try pair(165)
        let body = (1...5).map { "line \($0)\n" }.joined()
        let n = try a.book.add(title: "Plan", body: body, category: "Work")
        let m = try a.book.add(title: "Other", body: body, category: "Work")
        try converge([a, b])
        // b: trashes n; deletes Work (m left uncategorized), then files m under Home.
        try b.book.trash(n.id)
        _ = try b.book.deleteCategory("Work")
        try b.book.categorize(m.id, as: "Home")
        try b.sync()
        // a, before pulling: edits line 5 of each and undoes it.
        for id in [n.id, m.id] {
            try a.book.edit(id, body: body.replacing("line 5\n", with: "line five (a)\n"))
            try a.book.undo(id)
        }
        let report = try a.sync()
        #expect(report.conflicts == 0, "\(report)")
        try converge([a, b])
        let trashed = try a.book.note(n.id)
        #expect(trashed.trashed && trashed.body == body, "\(trashed)")
        let filed = try a.book.note(m.id)
        #expect(try a.book.categoryName(filed.category) == "Home" && filed.body == body, "\(filed)")
    }

    @Test("edits of the same lines keep both texts, flag the note, and the next edit resolves it")
    func conflict() throws {
        let (a, b) = try pair(104)
        let n = try a.book.add(title: "Plan", body: "intro\nthe shared line\nend\n")
        try converge([a, b])
        try a.book.edit(n.id, body: "intro\nwritten on a\nend\n")
        try b.book.edit(n.id, body: "intro\nwritten on b\nend\n")
        try b.sync()
        let report = try a.sync()
        #expect(report.conflicts == 1 && report.unresolvedConflicts == 1 && report.conflictsPulled == 0)
        // The other device pulls the conflict a recorded: counted as pulled, not as its own
        // (before 2026-12-07 its summary said "conflicts 0" and the sync exited 4 for it).
        let pulled = try b.sync()
        #expect(pulled.conflicts == 0 && pulled.conflictsPulled == 1 && pulled.unresolvedConflicts == 1, "\(pulled)")
        #expect(try b.sync().conflictsPulled == 0, "pulled once, not again while unresolved")
        try converge([a, b])
        for d in [a, b] {
            let note = try d.book.note(n.id)
            #expect(note.body.contains("written on a\n") && note.body.contains("written on b\n"))
            #expect(
                note.body.contains("<<<<<<< edit of v1 by ana@laptop")
                    && note.body.contains(">>>>>>> v2, first in the shared log"))
            #expect(note.properties[NoteProperty.conflict.rawValue] != nil)
            #expect(try d.book.conflictedNotes().map(\.id) == [n.id])
        }
        #expect(try b.book.history(of: n.id).contains { $0.summary.hasPrefix("CONFLICT merging") })
        try b.book.edit(n.id, body: "intro\nwritten on a and b\nend\n")
        #expect(try b.book.conflictedNotes().isEmpty, "the edit resolved it")
        try converge([a, b])
        #expect(try a.book.conflictedNotes().isEmpty)
    }

    /// Found by a new-user trial: a conflict's markers repeat for each hunk, so two bodies under
    /// the limit that differ on every third line made an event of 21 MB, which the remote
    /// refused (16 MiB), and the device's pushes stopped for good. Past half of what the remote
    /// takes, the conflict holds both sides whole under one set of markers. Large bodies: with
    /// NOTES_LONG_TESTS=1 (about 20 s in a debug build); a small one otherwise.
    @Test("a conflict of many hunks still fits in one remote event: both sides whole under one set of markers")
    func conflictOfManyHunksFits() throws {
        let long = getenv("NOTES_LONG_TESTS").map { String(cString: $0) == "1" } ?? false
        let lines = long ? 250_000 : 2_000
        let (a, b) = try pair(173, maxBodyBytes: 2_000_000)
        let n = try a.book.add(title: "Big", body: String(repeating: "b\nb\nb\n", count: lines))
        try converge([a, b])
        let ours = String(repeating: "a\nb\nb\n", count: lines)
        let theirs = String(repeating: "c\nb\nb\n", count: lines)
        let body = try conflictingEdits(n.id, a, ours, b, theirs)
        if long {
            #expect(
                body == "<<<<<<< edit of v1 by ana@laptop\n" + theirs + "=======\n" + ours
                    + ">>>>>>> v2, first in the shared log\n")
        } else {
            // Small bodies keep a conflict per hunk.
            #expect(body.components(separatedBy: "<<<<<<< ").count == lines + 1)
        }
    }

    /// Found by a review: sides over half of what the remote takes (an imported body, one
    /// written before a remote was set) made even the whole-sides conflict too large. Then the
    /// conflict holds this device's text and says where the other's is (it stays in the log).
    @Test("a conflict of two sides too large to hold together keeps this device's text and names the other version")
    func conflictOfHugeSidesFits() throws {
        let (a, b) = try pair(174, maxBodyBytes: 20 << 20)
        let n = try a.book.add(title: "Huge", body: "b\n")
        try converge([a, b])
        let ours = String(repeating: "c", count: 9 << 20) + "\n"
        let body = try conflictingEdits(n.id, a, String(repeating: "a", count: 9 << 20) + "\n", b, ours)
        #expect(
            body == "<<<<<<< edit of v1 by ana@laptop\n" + ours + "=======\n"
                + "(the text of v2 is too large to keep beside this edit; `notes show \(n.id.hex.prefix(8)) --at 2` "
                + "shows it)\n>>>>>>> v2, first in the shared log\n")
        #expect(try a.book.note(n.id, atVersion: 2).body.hasPrefix("aaaa"))
    }

    @Test("an undo of the edit a rebase turned into a conflict takes back its markers and its flag together")
    func undoConflict() throws {
        let (a, b) = try pair(119)
        let n = try a.book.add(title: "Shopping", body: "milk\neggs\n")
        try converge([a, b])
        try a.book.edit(n.id, body: "oat milk\neggs\n")
        try b.book.edit(n.id, body: "soy milk\neggs\n")
        try a.sync()
        #expect(try b.sync().unresolvedConflicts == 1)
        #expect(try b.book.note(n.id).body.contains("<<<<<<<"))
        // Before, the undo took back the flag alone: the markers stayed, and nothing listed them.
        try b.book.undo(n.id)
        let undone = try b.book.note(n.id)
        #expect(undone.body == "oat milk\neggs\n" && undone.properties[NoteProperty.conflict.rawValue] == nil)
        #expect(try b.book.conflictedNotes().isEmpty)
        try converge([a, b])
        #expect(try a.book.note(n.id).body == "oat milk\neggs\n")
    }

    @Test("two edits of one note that both conflict count one conflict: a sync counts notes")
    func conflictsCountNotes() throws {
        let (a, b) = try pair(123)
        let n = try a.book.add(title: "Plan", body: "one\ntwo\nthree\n")
        try converge([a, b])
        try a.book.edit(n.id, body: "one on a\ntwo on a\nthree\n")
        try b.book.edit(n.id, body: "one on b\ntwo\nthree\n")
        try b.book.edit(n.id, body: "one on b\ntwo on b\nthree\n")
        try a.sync()
        let report = try b.sync()
        #expect(report.conflicts == 1 && report.unresolvedConflicts == 1, "\(report)")
    }

    @Test("concurrent retitles: the later push wins, both titles stay in history")
    func retitles() throws {
        let (a, b) = try pair(105)
        let n = try a.book.add(title: "Draft")
        try converge([a, b])
        try a.book.edit(n.id, title: "Title from a")
        try b.book.edit(n.id, title: "Title from b")
        try a.sync()
        try b.sync()
        try converge([a, b])
        #expect(try a.book.note(n.id).title == "Title from b")
        let titles = try a.book.revisions(of: n.id).map(\.note.title)
        #expect(titles == ["Draft", "Title from a", "Title from b"])
    }

    @Test("pin on one device, trash on the other: both apply")
    func pinAndTrash() throws {
        let (a, b) = try pair(106)
        let n = try a.book.add(title: "Both")
        try converge([a, b])
        try a.book.pin(n.id)
        try b.book.trash(n.id)
        try converge([a, b])
        let note = try b.book.note(n.id)
        #expect(note.pinned && note.trashed)
    }

    @Test("a category created under one name on two devices becomes one; a rename on one files the other's notes")
    func categories() throws {
        let (a, b) = try pair(107)
        try a.book.add(title: "From a", category: "Work")
        try b.book.add(title: "From b", category: "work")
        try a.sync()
        let report = try b.sync()
        #expect(report.namesMerged == 1)
        try converge([a, b])
        #expect(try a.book.categories().map(\.name) == ["Work"])
        #expect(try a.book.category(named: "work").count == 2)
        // A rename on one device while the other files a note in the category.
        try a.book.renameCategory("Work", to: "Job")
        try b.book.add(title: "Filed on b", category: "Work")
        try converge([a, b])
        #expect(try b.book.categories().map(\.name) == ["Job"])
        #expect(try b.book.category(named: "Job").count == 3)
    }

    @Test("three devices, offline edits everywhere: all converge, every typed text is in the log")
    func threeDevices() throws {
        let devices = try (1...3).map { try Device(stem: UInt64($0), notebook: 108) }
        let shared = try devices[0].book.add(title: "Shared", body: (1...9).map { "p\($0)\n" }.joined())
        try devices[0].sync(join: true)
        try converge(devices)
        var typed: [String] = []
        for (i, d) in devices.enumerated() {
            let line = "device \(i) was here"
            typed.append(line)
            let body = try d.book.note(shared.id).body.replacing("p\(i * 4 + 1)\n", with: line + "\n")
            try d.book.edit(shared.id, body: body)
            let own = "note of device \(i)"
            typed.append(own)
            try d.book.add(title: own, body: own)
        }
        try converge(devices)
        let texts = try devices[0].book.list(everything).map { $0.title + "\n" + $0.body }.joined(separator: "\n")
        for t in typed { #expect(texts.contains(t), "\(t) survived") }
    }

    @Test("a device whose confirmed log differs from the remote is refused, naming the position")
    func divergence() throws {
        let (a, _) = try pair(109)
        let c = try Device(stem: 3, notebook: 110)
        let other = c.notebookID
        try c.book.add(title: "Another notebook")
        try c.sync(join: true)
        // A store that confirmed one notebook's events, pointed at another's.
        #expect(throws: SyncError.otherNotebook(local: a.notebookID, remote: other)) {
            try a.book.sync(with: a.remote, notebook: other)
        }
        try a.book.add(title: "Unsynced")
        let before = try a.log()
        try a.book.store.write { session in
            try a.book.store.setMetadata("sync.notebook", other.bytes, in: session.transaction)
        }
        #expect(throws: SyncError.diverged(position: 1, detail: "the events there differ")) {
            try a.book.sync(with: a.remote, notebook: other)
        }
        #expect(try a.log() == before, "nothing was merged")
    }

    @Test("a conflict resolved differently on two devices stays flagged after the second sync")
    func conflictOfResolutions() throws {
        let (a, b) = try pair(111)
        let n = try a.book.add(title: "Plan", body: "intro\nshared\nend\n")
        try converge([a, b])
        try a.book.edit(n.id, body: "intro\nfrom a\nend\n")
        try b.book.edit(n.id, body: "intro\nfrom b\nend\n")
        try converge([a, b])
        #expect(try a.book.conflictedNotes().count == 1)
        // Both resolve it, each its own way: the second to sync conflicts again, and is flagged.
        try a.book.edit(n.id, body: "intro\nresolved by a\nend\n")
        try b.book.edit(n.id, body: "intro\nresolved by b\nend\n")
        try a.sync()
        let report = try b.sync()
        #expect(report.conflicts == 1)
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.conflictedNotes().map(\.id) == [n.id], "the new conflict is flagged")
            let body = try d.book.note(n.id).body
            #expect(body.contains("resolved by a") && body.contains("resolved by b"))
        }
    }

    @Test("a category created and deleted offline under a name the remote has is not folded into it")
    func deletedSameNamedCategory() throws {
        // Device c clones before "Work" exists, then works offline.
        let (a, b, c) = try trio(112)
        try a.book.add(title: "Filed on a", category: "Work")
        try a.sync()
        let onC = try c.book.add(title: "Filed on c", category: "Work")
        try c.book.deleteCategory("Work")
        try converge([a, b, c])
        for d in [a, b, c] {
            #expect(try d.book.category(named: "Work").count == 1, "a's category is live, with its note")
            #expect(try d.book.note(onC.id).category == nil)
        }
    }

    @Test("a category deleted on one device while another files a note in it: the note ends uncategorized")
    func deleteAgainstAssign() throws {
        let (a, b) = try pair(113)
        let n = try a.book.add(title: "To file")
        try a.book.addCategory("Old")
        try converge([a, b])
        try a.book.deleteCategory("Old")
        try b.book.categorize(n.id, as: "Old")
        try b.book.tag(n.id, with: ["gone"])
        try a.sync()
        // The sync says what its rebase did to the filing: one note (before 2026-12-08 nothing).
        #expect(try b.sync().refiled == 1)
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.note(n.id).category == nil, "delete wins over assign")
            #expect(try d.book.categories().isEmpty)
        }
    }

    @Test("an event of another device that breaks the notes rules stops the pull before anything is written")
    func untrustedRemoteEvents() throws {
        let (a, _) = try pair(114)
        let before = try a.log()
        let id = Identifier(high: 0xBAD0_0000_0000_4000, low: 0x8000_0000_0000_0001)
        let bad = NoteEvent.created(title: "two\nlines \u{1B}[31m", body: "", pinned: false, category: nil)
        _ = try a.remote.append(
            notebook: a.notebookID,
            batch: RemoteBatch([
                RemoteAppend(
                    stream: Note.stream(id), expecting: .noStream,
                    events: [bad.newEvent(id: id, metadata: EventMetadata(actor: "mallory"))])
            ]))
        #expect(
            throws: SyncError.invalidRemoteEvent(position: 2, detail: "a title that is empty, too long or not one line")
        ) {
            try a.sync()
        }
        #expect(try a.log() == before, "nothing was written")
        try a.book.add(title: "Still works offline")

        // Who wrote an event is any text an import brings; history and blame print it escaped.
        // Refusing it would stop the notebook for good: the remote keeps every event.
        let (c, _) = try pair(115)
        let other = Identifier(high: 0xBAD0_0000_0000_4000, low: 0x8000_0000_0000_0002)
        let fine = NoteEvent.created(title: "Fine", body: "", pinned: false, category: nil)
        let actor = "mallory\u{1B}]0;x\u{07}"
        _ = try c.remote.append(
            notebook: c.notebookID,
            batch: RemoteBatch([
                RemoteAppend(
                    stream: Note.stream(other), expecting: .noStream,
                    events: [fine.newEvent(id: other, metadata: EventMetadata(actor: actor))])
            ]))
        try c.sync()
        #expect(try c.book.history(of: other).first?.revision.metadata.actor == actor)
        #expect(try c.book.verify().isEmpty)

        // A note created twice (a writer of the notebook appending through the remote's own
        // function) and a type no program knows: the same refusal, naming the event (they were
        // "refused: note ... is created twice", exit 2, and "the store holds events this program
        // cannot read").
        let (d, _) = try pair(118)
        let twice = try d.book.add(title: "Once")
        try d.sync()
        let logBefore = try d.log()
        let again = NoteEvent.created(title: "Twice", body: "", pinned: false, category: nil)
        _ = try d.remote.append(
            notebook: d.notebookID,
            batch: RemoteBatch([
                RemoteAppend(
                    stream: Note.stream(twice.id), expecting: .any,
                    events: [again.newEvent(id: Identifier.random(), metadata: EventMetadata(actor: "mallory"))])
            ]))
        #expect(throws: SyncError.invalidRemoteEvent(position: 3, detail: "note \(twice.id) is created twice")) {
            try d.sync()
        }
        #expect(try d.log() == logBefore, "nothing was written")
        let (e, _) = try pair(122)
        var unknown = fine.newEvent(id: Identifier.random(), metadata: EventMetadata(actor: "mallory"))
        unknown.schemaVersion = 99
        _ = try e.remote.append(
            notebook: e.notebookID,
            batch: RemoteBatch([
                RemoteAppend(stream: Note.stream(Identifier.random()), expecting: .noStream, events: [unknown])
            ]))
        #expect(
            throws: SyncError.invalidRemoteEvent(
                position: 2, detail: "NoteCreated v99 is a type or version this program does not know")
        ) {
            try e.sync()
        }
    }

    @Test(
        "what this program writes, every device running it pulls: DEL and C1 controls in titles, names and aliases, a body past the puller's own limit",
        arguments: [0, 1, 2, 3, 4])
    func pulledAsLocalInputAllows(kind: Int) throws {
        // Before 2026-12-03 the pull refused DEL and the C1 controls that local commands accept,
        // and bodies past the puller's own body-limit: one such event stopped every other device
        // for good. They are shown escaped on a terminal (TerminalOutputTests).
        let a = try Device(stem: 1, notebook: 167 + kind)
        try a.sync(join: true)
        let b = try Device(stem: 2, notebook: 167 + kind, maxBodyBytes: 64)
        try b.sync()
        let note = try a.book.add(title: "Plain")
        switch kind {
        case 0: try a.book.edit(note.id, title: "Caf\u{85}e \u{9B}31m red")
        case 1: try a.book.categorize(note.id, as: "red \u{7F}")
        case 2: try a.book.tag(note.id, with: ["red \u{9B}31m"])
        case 3: try a.book.setAliases(note.id, ["al\u{85}ias", "del\u{7F}"])
        default: try a.book.edit(note.id, body: String(repeating: "long line\n", count: 100))
        }
        try a.sync()
        try b.sync()
        try converge([a, b])
        #expect(try b.log() == a.log())
        #expect(try b.book.note(note.id) == a.book.note(note.id))
        #expect(try b.book.verify().isEmpty)
        // The puller's own limit still holds for what its user writes.
        #expect(throws: NotesError.self) { try b.book.edit(note.id, body: String(repeating: "x", count: 65)) }
    }

    @Test("another device's aliases holding an escape are refused")
    func untrustedAliases() throws {
        let (a, _) = try pair(131)
        let before = try a.log()
        let n = try #require(try a.book.list(everything).first)
        let bad = NoteEvent.propertySet(key: NoteProperty.aliases.rawValue, value: "x\u{1B}[2J")
        _ = try a.remote.append(
            notebook: a.notebookID,
            batch: RemoteBatch([
                RemoteAppend(
                    stream: Note.stream(n.id), expecting: .any,
                    events: [
                        bad.newEvent(
                            id: Identifier(high: 0xBAD0, low: 0x8000_0000_0000_0004),
                            metadata: EventMetadata(actor: "mallory"))
                    ])
            ]))
        #expect(throws: SyncError.invalidRemoteEvent(position: 2, detail: "a property that is not valid here")) {
            try a.sync()
        }
        #expect(try a.log() == before, "nothing was written")
    }

    @Test(
        "a tag subtree renamed into names another device took is merged tag by tag; a third device's taggings follow")
    func tagSubtreeMergeWithThirdDevice() throws {
        let a = try Device(stem: 1, notebook: 126)
        let b = try Device(stem: 2, notebook: 126)
        let c = try Device(stem: 3, notebook: 126)
        let n1 = try a.book.add(title: "One", tags: ["c"])
        let n2 = try a.book.add(title: "Two", tags: ["c/d"])
        try a.sync(join: true)
        try b.sync()
        try c.sync()
        let n4 = try b.book.add(title: "Four", tags: ["b", "b/d"])
        try b.sync()
        try a.book.renameTag("c", to: "b")
        _ = try c.book.tag(n1.id, with: ["c/d"])
        let n3 = try c.book.add(title: "Three", tags: ["c"])
        _ = try c.book.untag(n2.id, from: ["c/d"])
        try a.sync()
        #expect(try a.book.verify().isEmpty)
        try c.sync()
        #expect(try c.book.verify().isEmpty)
        try converge([a, b, c])
        for d in [a, b, c] {
            func names(_ id: Identifier) throws -> [String] {
                try d.book.note(id).tags.map { try d.book.tagName($0) ?? "?" }.sorted()
            }
            #expect(try names(n1.id) == ["b", "b/d"])
            #expect(try names(n2.id) == [])
            #expect(try names(n3.id) == ["b"])
            #expect(try names(n4.id) == ["b", "b/d"])
            #expect(try d.book.allTags().filter { !$0.deleted }.map(\.name).sorted() == ["b", "b/d"])
            #expect(try d.book.tag(named: "b").count == 3)
            #expect(try d.book.tag(named: "b/d").count == 2)
        }
    }

    @Test("a category merged into one a third device deleted or renamed meanwhile; a rename of the merged one after")
    func categoryMergeAgainstDeletionAndRename() throws {
        for (n, deletes, mergerFirst) in [(127, true, false), (128, false, false), (130, true, true)] {
            let a = try Device(stem: 1, notebook: n)
            let b = try Device(stem: 2, notebook: n)
            let c = try Device(stem: 3, notebook: n)
            let n1 = try a.book.add(title: "One", category: "Work")
            try a.sync(join: true)
            try b.sync()
            try c.sync()
            let n2 = try b.book.add(title: "Two", category: "Job")
            try b.sync()
            try c.sync()
            // A renames Work to Job (B's): a merge. C, offline, deletes or renames B's Job and
            // renames Work and files a note under it.
            try a.book.renameCategory("Work", to: "Job")
            let n3 = try a.book.add(title: "Three", category: "Job")
            if deletes { _ = try c.book.deleteCategory("Job") } else { try c.book.renameCategory("Job", to: "Gig") }
            try c.book.renameCategory("Work", to: "Office")
            let n4 = try c.book.add(title: "Four", category: "Office")
            for d in mergerFirst ? [a, c] : [c, a] {
                try d.sync()
                #expect(try d.book.verify().isEmpty)
            }
            try converge([a, b, c])
            // C first: no Job is live when A's rename arrives, so Work is renamed to Job (the
            // later rename wins). A first: Work is merged into Job, which C's deletion ends,
            // taking every note out of it.
            let expected: [String?] =
                mergerFirst ? [nil, nil, nil, nil] : ["Job", deletes ? nil : "Gig", "Job", "Job"]
            for d in [a, b, c] {
                let names = try [n1, n2, n3, n4].map { try d.book.categoryName(try d.book.note($0.id).category) }
                #expect(names == expected, "notebook \(n)")
            }
        }
    }

    @Test(
        "a category deleted on one device after another filed a note in it and pushed first: the note ends uncategorized"
    )
    func deleteAfterAssignPushed() throws {
        let (a, b) = try pair(129)
        let n = try a.book.add(title: "To file")
        try a.book.addCategory("Old")
        try converge([a, b])
        try a.book.tag(n.id, with: ["kept"])
        let other = try a.book.add(title: "Other", tags: ["old"])
        try converge([a, b])
        try a.book.deleteCategory("Old")
        try a.book.deleteTag("old")
        try b.book.categorize(n.id, as: "Old")
        try b.book.tag(n.id, with: ["old"])
        try b.sync()
        try a.sync()
        try converge([a, b])
        for d in [a, b] {
            #expect(try d.book.note(n.id).category == nil, "delete wins over assign, whichever pushed first")
            #expect(try d.book.note(n.id).tags.map { try d.book.tagName($0) } == ["kept"])
            #expect(try d.book.note(other.id).tags.isEmpty)
            #expect(try d.book.categories().isEmpty)
        }
    }

    @Test("a command of more events than a batch takes is split at the remote's cap")
    func largeCommandsSplit() throws {
        var events: [RecordedEvent] = []
        let correlation = Identifier(high: 1, low: 1)
        for i in 0..<(RemoteBatch.maxEvents * 5 / 2) {
            events.append(
                RecordedEvent(
                    position: UInt64(i + 1), id: Identifier(high: 2, low: UInt64(i)), stream: "note/\(i % 7)",
                    version: UInt64(i / 7 + 1), type: "NoteCategorized", schemaVersion: 1, recordedAt: 0,
                    metadata: EventMetadata(actor: "a", correlationID: correlation), payload: [0], digest: []))
        }
        let batches = Notebook.batches(events)
        #expect(batches.count == 3)
        for b in batches { #expect(throws: Never.self) { try b.validate() } }
        #expect(batches.flatMap { $0.appends.flatMap(\.events) }.map(\.id) == events.map(\.id))
    }

    @Test("an empty store clones a large notebook in one write: the same events, projections equal to a rebuild")
    func largeClone() throws {
        let total = Notebook.syncChunk + 5_000
        let a = try Device(stem: 1, notebook: 116)
        try a.pushWorkload(events: total)
        let report = try a.sync()
        #expect(report.pulled == total)
        #expect(try a.book.syncState().confirmed == UInt64(total))
        #expect(try a.book.verify().isEmpty)
        let theirs = try a.remote.pull(notebook: a.notebookID, after: UInt64(total) - 3, limit: 10)
        #expect(try Array(a.log().suffix(3)) == theirs, "byte for byte, digests included")
        // The store goes on as any other: an edit syncs.
        let note = try #require(try a.book.list(everything).first)
        try a.book.edit(note.id, body: "after the clone\n")
        #expect(try a.sync().pushed == 1)
        #expect(try a.book.verify().isEmpty)
    }

    @Test(
        "a category renamed here to the name another device gave its own is merged into it; filings of the old one follow"
    )
    func renameIntoTakenName() throws {
        let (a, b, c) = try trio(117)
        let job = try a.book.add(title: "Job note", category: "Job")
        try a.book.tag(job.id, with: ["urgent"])
        try converge([a, b, c])
        // Offline: b files a note in a new "Work" and tags it "now"; a renames "Job" to "Work"
        // and "urgent" to "now"; c files another note in "Job" and tags it "urgent".
        let fromB = try b.book.add(title: "B's note", category: "Work", tags: ["now"])
        try a.book.renameCategory("Job", to: "Work")
        _ = try a.book.renameTag("urgent", to: "now")
        let fromC = try c.book.add(title: "C's note", category: "Job", tags: ["urgent"])
        try b.sync()
        let report = try a.sync()
        #expect(report.namesMerged == 2)
        try c.sync()
        try converge([a, b, c])
        for d in [a, b, c] {
            #expect(try d.book.categories().filter { !$0.deleted }.map(\.name) == ["Work"])
            let work = try d.book.category(named: "work")
            #expect(work.count == 3, "the notes of both, and the one filed offline in the old name")
            let now = try d.book.tag(named: "now")
            #expect(now.count == 3)
            for id in [job.id, fromB.id, fromC.id] {
                let n = try d.book.note(id)
                #expect(n.category == work.id && n.tags == [now.id], "\(n.title)")
            }
        }
        var q = LogQuery()
        q.type = "CategoryMerged"
        let merged = try a.book.log(q)
        #expect(merged.count == 1)
        if case .entity(.category, _, _, let change)? = merged.first?.subject {
            #expect(change.summary(.category) == "category \"Job\" merged into \"Work\"")
        } else {
            Issue.record("the merge is in the audit log: \(merged)")
        }
    }

    /// Two devices on a fresh notebook: the first joins with one note, the second clones it.
    @Test("a remote restored from an older backup gets the confirmed events past its head back, unchanged")
    func restoredRemote() throws {
        let (a, b) = try pair(120)
        let n = try a.book.add(title: "Plan", body: "one\n")
        try converge([a, b])
        let backup = try a.book.syncState().confirmed
        try b.book.edit(n.id, body: "two\n")
        try b.book.add(title: "Late")
        try converge([a, b])
        let before = try a.log()
        try restoreBackup(a.notebookID, at: backup)
        #expect(try a.remote.head(notebook: a.notebookID).position == backup)
        // What the remote refuses: a head that is not where the events start, an event whose
        // bytes are not those its digest covers.
        let lost = Array(before[Int(backup)...])
        #expect(
            remoteError { _ = try a.remote.restore(notebook: a.notebookID, after: backup - 1, events: lost) }
                == .invalidBatch("event \(lost[0].id) is at position \(backup + 1), not \(backup)"))
        var tampered = lost
        tampered[0].payload += [0x20]
        let refused = remoteError { _ = try a.remote.restore(notebook: a.notebookID, after: backup, events: tampered) }
        #expect(refused?.description.contains("position \(backup + 1) does not continue the chain") == true)
        #expect(try a.remote.head(notebook: a.notebookID).position == backup, "nothing written")

        try a.book.add(title: "After the restore")
        let report = try a.sync()
        #expect(report.restored == before.count - Int(backup))
        #expect(Array(try a.log().prefix(before.count)) == before, "every confirmed event as it was")
        #expect(try pullAll(a.remote, a.notebookID) == a.log(), "the remote holds them byte for byte")
        try converge([a, b])
        #expect(try b.log() == a.log())
        #expect(try b.book.list(everything).map(\.title).sorted() == ["After the restore", "Late", "Plan", "Welcome"])
    }

    @Test("a restored remote that took other events first: the lost confirmed events are rebased and pushed again")
    func restoredRemoteAppendedMeanwhile() throws {
        let (a, b) = try pair(121)
        try a.book.add(title: "Kept")
        try converge([a, b])
        let backup = try a.book.syncState().confirmed
        try a.book.add(title: "Lost on the server")
        try a.book.add(title: "Lost too")
        try a.sync()
        #expect(try a.book.syncState().confirmed == backup + 2)
        try restoreBackup(a.notebookID, at: backup)
        // Another device pushes to the restored server first, where a's lost events were.
        try b.book.add(title: "Pushed to the restored server")
        try b.sync()
        let report = try a.sync()
        #expect(report.reopened == 2 && report.restored == 0)
        try converge([a, b])
        for d in [a, b] {
            #expect(
                try d.book.list(everything).map(\.title).sorted() == [
                    "Kept", "Lost on the server", "Lost too", "Pushed to the restored server", "Welcome",
                ])
        }
        #expect(try pullAll(a.remote, a.notebookID) == a.log())

        // The remote restored again, and an event of a's appended there again, same id and
        // stream, at another position and instant (what a device that had confirmed it too
        // pushes once it reopened it): taken as the confirmation of a's copy, not a second event.
        let lost = try #require(try a.log().first { $0.position == backup + 2 })
        try restoreBackup(a.notebookID, at: backup)
        try appendAgain(lost, in: lost.stream, by: b)
        #expect(try a.sync().reopened > 0)
        try converge([a, b])
        for d in [a, b] {
            let log = try d.log()
            #expect(Set(log.map(\.id)).count == log.count, "no event twice")
            #expect(log.filter { $0.id == lost.id }.map(\.position) == [backup + 1], "the remote's copy")
            #expect(
                try d.book.list(everything).map(\.title).sorted() == [
                    "Kept", "Lost on the server", "Lost too", "Pushed to the restored server", "Welcome",
                ])
            #expect(try d.book.verify().isEmpty)
        }
        #expect(try pullAll(a.remote, a.notebookID) == a.log())

        // Restored once more, and an id of a's appended in another stream: a rewritten log,
        // refused, naming the position; a's log untouched.
        let moved = try #require(try a.log().first { $0.position == backup + 2 })
        try restoreBackup(a.notebookID, at: backup)
        try appendAgain(
            moved, in: Note.stream(Identifier(high: 0xBAD0_0000_0000_4000, low: 0x8000_0000_0000_0003)), by: b)
        let before = try a.log()
        #expect(throws: SyncError.diverged(position: backup + 1, detail: "the events there differ")) { try a.sync() }
        #expect(try a.log() == before, "nothing merged, nothing lost")
        #expect(try a.book.syncState().confirmed == UInt64(before.count))

        // And in its own stream with other content (a rewritten log): refused too, a's text kept.
        try restoreBackup(a.notebookID, at: backup)
        var forged = moved
        forged.payload =
            NoteEvent.created(title: "Forged", body: "", pinned: false, category: nil)
            .newEvent(id: moved.id, metadata: moved.metadata).payload
        try appendAgain(forged, in: moved.stream, by: b)
        #expect(throws: SyncError.diverged(position: backup + 1, detail: "the events there differ")) { try a.sync() }
        #expect(try a.log() == before)
        #expect(!(try a.book.list(everything)).contains { $0.title == "Forged" })
    }

    @Test(
        "a restored remote, three devices: the one that confirmed another's lost event pushes it again first; the author then syncs, not locked out"
    )
    func restoredRemoteThreeDevices() throws {
        let (a, b, c) = try trio(166)
        let shared = try a.book.add(title: "Shared", body: "one\n")
        try converge([a, b, c])
        let backup = try a.book.syncState().confirmed
        // a writes, b takes it; c stays behind; then the server loses both.
        let mine = try a.book.add(title: "A's note lost on the server", body: "kept by a and b\n")
        try a.book.edit(shared.id, body: "one\nand a's line\n")
        try a.sync()
        try b.sync()
        try restoreBackup(a.notebookID, at: backup)
        // c pushes first to the restored server; b, which confirmed a's events too, reopens them
        // and pushes them again, rebased after c's; then a, their author, syncs.
        try c.book.add(title: "C's note after the restore")
        try c.sync()
        #expect(try b.sync().reopened == 2)
        let report = try a.sync()
        #expect(report.reopened == 2, "\(report)")
        try converge([a, b, c])
        let expected = ["A's note lost on the server", "C's note after the restore", "Shared", "Welcome"]
        for d in [a, b, c] {
            let log = try d.log()
            #expect(Set(log.map(\.id)).count == log.count, "no event twice")
            #expect(try d.book.list(everything).map(\.title).sorted() == expected)
            #expect(try d.book.note(shared.id).body == "one\nand a's line\n")
            #expect(try d.book.note(mine.id).body == "kept by a and b\n")
            #expect(try d.book.verify().isEmpty)
        }
        #expect(try pullAll(a.remote, a.notebookID) == a.log())
        #expect(try b.log() == a.log() && c.log() == a.log())
    }

    /// Appends `event` (its id, type, payload and metadata) to `device`'s remote again, as the
    /// first event of `stream`.
    private func appendAgain(_ event: RecordedEvent, in stream: String, by device: Device) throws {
        _ = try device.remote.append(
            notebook: device.notebookID,
            batch: RemoteBatch([
                RemoteAppend(
                    stream: stream, expecting: .noStream,
                    events: [
                        NewEvent(
                            id: event.id, type: event.type, schemaVersion: event.schemaVersion,
                            payload: event.payload, metadata: event.metadata)
                    ])
            ]))
    }

    @Test(
        "a store that joins with events of old schemas, more than a step of them: notes whose events span two steps rebase",
        .enabled(
            if: getenv("NOTES_LONG_TESTS").map { String(cString: $0) == "1" } ?? false,
            "a step is 20,000 events: about a minute in a debug build (NOTES_LONG_TESTS=1)"))
    func joinWithLegacyEventsAcrossSteps() throws {
        // The generated workload (5% of its events of schema 1, lifted by upcasters) written in
        // this store, more than a step of it: the first pull brings a note's first events, and
        // its later ones, in the next step, are rebased over them from the outbox. Before, the
        // rebase folded the outbox without lifting it and refused the join: "note ... does not
        // begin with NoteCreated".
        let a = try Device(stem: 1, notebook: 172)
        var workload = EventWorkload(EventWorkload.Spec(notes: 2_500, events: Notebook.syncChunk + 5_000))
        var pending: [(stream: String, event: NewEvent)] = []
        func flush() throws {
            try a.book.write { session, _ in
                for p in pending { try session.append([p.event], to: p.stream) }
            }
            pending = []
        }
        while let e = workload.next() {
            pending.append((e.stream, e.event))
            if pending.count == 5_000 { try flush() }
        }
        try flush()
        let before = try a.book.list(everything).count
        try a.sync(join: true)
        let b = try Device(stem: 2, notebook: 172)
        try b.sync()
        try converge([a, b])
        #expect(try b.book.list(everything).count == before)
        #expect(try b.log() == a.log())
    }

    /// The notebook's server as if restored from a backup taken at `position`: the later events
    /// gone, its head back there (as the superuser, with the log's triggers off in that session).
    private func restoreBackup(_ book: Identifier, at position: UInt64) throws {
        try cluster().execute(
            """
            SET session_replication_role = replica;
            DELETE FROM notes_log.events WHERE notebook = '\(book)' AND position > \(position);
            UPDATE notes_log.notebooks nb
                SET head_position = e.position, head_recorded_at = e.recorded_at, head_digest = e.digest
                FROM notes_log.events e
                WHERE nb.notebook = '\(book)' AND e.notebook = nb.notebook AND e.position = \(position);
            """)
    }

    @Test("the device's own instant travels as writtenAt: shown beside the remote's instant, never ordering")
    func writtenAtTravels() throws {
        let (a, b) = try pair(140)
        // The device's clock runs a year ahead of the server's (whose instants the pair's first
        // sync brought), so its own instants are its clock's, not the log's last one raised.
        a.fixture.clock.advance(seconds: 366 * 86_400)
        let t1 = a.fixture.clock.micros
        let n = try a.book.add(title: "Written offline", body: "x\n")
        let pending = try #require(try a.book.history(of: n.id).last).revision
        #expect(pending.recordedAt == t1 && pending.metadata.writtenAt == nil, "recorded where it was written")
        let report = try a.sync()
        #expect(report.pushed > 0 && report.confirmedInPlace == report.pushed, "\(report)")
        try b.sync()
        let remote = try #require(try pullAll(a.remote, a.notebookID).last)
        #expect(remote.metadata.writtenAt == t1 && remote.recordedAt != t1)
        for d in [a, b] {
            let r = try #require(try d.book.history(of: n.id).last).revision
            #expect(r.recordedAt == remote.recordedAt, "the remote's instant is the recorded one")
            #expect(r.metadata.writtenAt == t1, "the device's instant is kept as its claim")
            #expect(try d.book.verify().isEmpty)
        }
        // Time travel reads the shared log's instants alone: the note is there from the remote's
        // instant on (long before the one its device claims), and not a microsecond before.
        #expect(!(try b.book.state(asOf: remote.recordedAt - 1).list(everything)).contains { $0.id == n.id })
        #expect(try b.book.state(asOf: remote.recordedAt).list(everything).contains { $0.id == n.id })
        // Rebased over another device's change, an edit keeps the instant it was written at, not
        // the rebase's.
        a.fixture.clock.advance(seconds: 60)
        let t2 = a.fixture.clock.micros
        try a.book.edit(n.id, body: "x\nfrom a\n")
        try b.book.edit(n.id, title: "Retitled on b")
        try b.sync()
        a.fixture.clock.advance(seconds: 3600)
        let rebased = try a.sync()
        #expect(rebased.pulled == 1 && rebased.pushed == 1, "\(rebased)")
        try converge([a, b])
        let edit = try #require(try b.book.history(of: n.id).last).revision
        #expect(edit.metadata.writtenAt == t2 && edit.note.body == "x\nfrom a\n" && edit.note.title == "Retitled on b")
    }

    @Test("joining proposes the store's own events with their old instants as writtenAt")
    func joinKeepsOldInstants() throws {
        let a = try Device(stem: 1, notebook: 141)
        let n = try a.book.add(title: "Old", body: "from before\n", category: "Home")
        a.fixture.clock.advance(seconds: 90)
        try a.book.edit(n.id, body: "edited before\n")
        let before = try a.log()
        // Another store joined first: the join rebases on top of its events.
        let b = try Device(stem: 2, notebook: 141)
        try b.book.add(title: "Already there")
        try b.sync(join: true)
        try a.sync(join: true)
        let joined = Dictionary(uniqueKeysWithValues: try a.log().map { ($0.id, $0) })
        for e in before {
            let now = try #require(joined[e.id])
            #expect(now.metadata.writtenAt == e.recordedAt, "position \(e.position)")
            #expect(now.recordedAt != e.recordedAt)
        }
        try converge([a, b])
        let claims = try b.book.history(of: n.id).map(\.revision.metadata.writtenAt)
        #expect(claims == before.filter { $0.stream == Note.stream(n.id) }.map(\.recordedAt))
    }

    /// `a` and `b` edit note `id` offline, `a` syncs first: the body both hold after `b`'s sync
    /// counted one conflict.
    func conflictingEdits(_ id: Identifier, _ a: Device, _ first: String, _ b: Device, _ second: String) throws
        -> String
    {
        try a.book.edit(id, body: first)
        try b.book.edit(id, body: second)
        try a.sync()
        #expect(try b.sync().conflicts == 1)
        try converge([a, b])
        return try a.book.note(id).body
    }

    func pair(_ n: Int, maxBodyBytes: Int? = nil) throws -> (Device, Device) {
        let a = try Device(stem: 1, notebook: n, maxBodyBytes: maxBodyBytes)
        let b = try Device(stem: 2, notebook: n, maxBodyBytes: maxBodyBytes)
        try a.book.add(title: "Welcome")
        try a.sync(join: true)
        try b.sync()
        return (a, b)
    }

    /// ``pair(_:)`` and a third device that has cloned the notebook.
    func trio(_ n: Int) throws -> (Device, Device, Device) {
        let (a, b) = try pair(n)
        let c = try Device(stem: 3, notebook: n)
        try c.sync()
        return (a, b, c)
    }
}

/// The real remote, recording which of its calls a sync makes (a pull's round trip to the server
/// is most of a small sync's time).
final class CountingRemote: RemoteEventLog {
    let base: any RemoteEventLog
    private(set) var calls: [String] = []
    /// Sends each batch to the remote once more before the call itself, as another sync of the
    /// same store would have pushed it first: the call's answer is then "already stored".
    var pushedFirstElsewhere = false
    /// Answers each append with a head digest that is not the remote's (a server that chains
    /// differently): the device must not confirm its events from that answer.
    var wrongHeadDigest = false
    /// Runs before the first append reaches the remote (a command of the device meanwhile).
    var beforeFirstAppend: (() throws -> Void)?
    /// Loses the answer of each append the remote took, as a sync killed or cut off after
    /// sending its batch would: the call fails with `connectionLost`.
    var loseAnswers = false

    init(_ base: any RemoteEventLog) { self.base = base }

    func initialize() throws(RemoteLogError) -> RemoteSchemaChange { try base.initialize() }
    func notebook(named name: String, create: Bool) throws(RemoteLogError) -> Identifier {
        try base.notebook(named: name, create: create)
    }
    func share(notebook name: String, role: String, canWrite: Bool) throws(RemoteLogError) {
        try base.share(notebook: name, role: role, canWrite: canWrite)
    }
    func unshare(notebook name: String, role: String) throws(RemoteLogError) -> Bool {
        try base.unshare(notebook: name, role: role)
    }
    func members(notebook name: String) throws(RemoteLogError) -> [RemoteMember] { try base.members(notebook: name) }
    func append(notebook: Identifier, batch: RemoteBatch) throws(RemoteLogError) -> RemoteAppendResult {
        calls.append("append")
        if let before = beforeFirstAppend {
            beforeFirstAppend = nil
            do { try before() } catch { Issue.record("the command during the push failed: \(error)") }
        }
        if pushedFirstElsewhere { _ = try base.append(notebook: notebook, batch: batch) }
        var result = try base.append(notebook: notebook, batch: batch)
        if loseAnswers { throw .connectionLost(detail: "the answer was lost") }
        if wrongHeadDigest { result.head.digest[0] ^= 1 }
        return result
    }
    func restore(notebook: Identifier, after position: UInt64, events: [RecordedEvent]) throws(RemoteLogError)
        -> RemoteHead
    {
        calls.append("restore")
        return try base.restore(notebook: notebook, after: position, events: events)
    }
    func pull(notebook: Identifier, after position: UInt64, limit: Int) throws(RemoteLogError) -> [RecordedEvent] {
        let page = try base.pull(notebook: notebook, after: position, limit: limit)
        calls.append("pull \(page.count)")
        return page
    }
    func pullAttributed(notebook: Identifier, after position: UInt64, limit: Int) throws(RemoteLogError)
        -> [RemotePulledEvent]
    {
        calls.append("pullAttributed")
        return try base.pullAttributed(notebook: notebook, after: position, limit: limit)
    }
    func head(notebook: Identifier) throws(RemoteLogError) -> RemoteHead {
        calls.append("head")
        return try base.head(notebook: notebook)
    }
    func mayAppend(notebook: Identifier) throws(RemoteLogError) -> Bool {
        calls.append("mayAppend")
        return try base.mayAppend(notebook: notebook)
    }
}

extension Device {
    /// Syncs through a ``CountingRemote`` that `configure` sets up: the report and the calls made.
    func countedSync(_ configure: (CountingRemote) -> Void = { _ in }) throws -> (report: SyncReport, calls: [String]) {
        let counting = CountingRemote(remote)
        configure(counting)
        let report = try book.sync(with: counting, notebook: notebookID)
        return (report, counting.calls)
    }
}

/// Sync's round trips (in the suite, for its cluster).
extension NotebookSyncTests {
    @Test(
        "an edit syncs in one pull and its push, confirmed by the push's answer; the other device takes it in one pull")
    func fewestCalls() throws {
        let (a, b) = try pair(150)
        let note = try #require(try a.book.list(everything).first)
        try a.book.edit(note.id, body: "edited on a\n")
        let (pushed, ra) = try a.countedSync()
        // The page read with the check of the confirmed event is the first pull: only that event.
        #expect(ra == ["pull 1", "append"], "\(ra)")
        #expect(pushed.pushed == 1 && pushed.confirmedInPlace == 1 && pushed.rounds == 1)
        #expect(try a.book.syncState().pending == 0 && pushed.remoteHead == (try a.book.syncState().confirmed))
        let (pulled, rb) = try b.countedSync()
        #expect(rb == ["pull 2"], "\(rb)")
        #expect(pulled.pulled == 1 && pulled.rounds == 1)
        let quiet = try b.countedSync().calls
        #expect(quiet == ["pull 1"], "nothing new: one pull, \(quiet)")
        try converge([a, b])
    }

    @Test("a device behind by more than a page takes the rest after the page read with its prefix check")
    func behindByMoreThanAPage() throws {
        let (a, b) = try pair(151)
        let note = try #require(try a.book.list(everything).first)
        let others = Notebook.pullPage + 1_500
        try a.pushWorkload(events: others)
        try b.book.edit(note.id, body: "offline on b\n")
        let (report, rb) = try b.countedSync()
        #expect(
            rb == ["pull \(Notebook.pullPage)", "pull 1501", "append"],
            "a full first page, the rest, the push of the rebased edit: \(rb)")
        #expect(report.pulled == others && report.pushed == 1)
        try converge([a, b])
        #expect(try a.book.note(note.id).body == "offline on b\n")
    }
}

extension NotebookSyncTests {
    @Test("a notebook is found by its current name only: renamed on the server, the old name is refused")
    func lookupByCurrentName() throws {
        let c = try cluster()
        let a = try Device(stem: 1, notebook: 152)
        try a.book.add(title: "Named")
        try a.sync(join: true)
        #expect(try a.remote.notebook(named: "book-152", create: false) == a.notebookID)
        try PostgresConnection(c.address()).execute(
            "UPDATE notes_log.notebooks SET name = 'book-152-renamed' WHERE name = 'book-152'")
        #expect(try a.remote.notebook(named: "book-152-renamed", create: false) == a.notebookID)
        let refusal = remoteError { _ = try a.remote.notebook(named: "book-152", create: false) }
        #expect(
            "\(refusal.map { "\($0)" } ?? "")".contains("no notebook named 'book-152'"),
            "\(String(describing: refusal))")
        // Through the program: the old name is refused (exit 5), the new one syncs.
        #expect(
            try runSync(store: a.fixture.path, address: c.address(), notebook: "book-152", join: false, killAfter: nil)
                == 5)
        #expect(
            try runSync(
                store: a.fixture.path, address: c.address(), notebook: "book-152-renamed", join: false, killAfter: nil)
                == 0)
    }
}

extension NotebookSyncTests {
    @Test("a push the remote already held (another sync of this store went first) is confirmed by the next round")
    func alreadyStoredPush() throws {
        let (a, _) = try pair(153)
        let note = try #require(try a.book.list(everything).first)
        try a.book.edit(note.id, body: "pushed twice\n")
        let (report, calls) = try a.countedSync { $0.pushedFirstElsewhere = true }
        #expect(report.pushed == 0, "the remote took nothing new")
        #expect(calls == ["pull 1", "append", "pull 1"], "\(calls)")
        #expect(try a.book.syncState().pending == 0, "the next round pulled the event back and confirmed it")
        #expect(report.remoteHead == (try a.book.syncState().confirmed))
    }
}

extension NotebookSyncTests {
    @Test(
        "events an earlier sync sent whose answer was lost count as confirmed when they come back with another device's and are rebased"
    )
    func lostAnswerConfirmedByRebase() throws {
        let (a, b) = try pair(158)
        let note = try #require(try a.book.list(everything).first)
        try a.book.edit(note.id, body: "sent, answer lost\n")
        try a.book.pin(note.id)
        #expect(throws: SyncError.self) { try a.countedSync { $0.loseAnswers = true } }
        #expect(try a.book.syncState().pending == 2, "the remote took them, the device never heard")
        // Another device pushes after them, and this one writes more before its next sync.
        try b.book.add(title: "From b")
        try b.book.add(title: "From b too")
        try b.sync()
        try a.book.add(title: "Later on a")
        let report = try a.sync()
        #expect(report.pulled == 2 && report.pushed == 1, "\(report)")
        #expect(report.confirmedByRebase == 2 && report.confirmed == 3, "\(report)")
        #expect(report.confirmed - report.pushed == 2, "two events of the earlier sync")
        #expect(try a.book.syncState().pending == 0)
        try converge([a, b])
    }

    @Test(
        "a conflict behind an edit an earlier sync sent (its answer lost) names that edit's version as where it started, not the one before"
    )
    func conflictBaseAfterLostAnswer() throws {
        let (a, b) = try pair(159)
        let n = try a.book.add(title: "Plan", body: "intro\nthe shared line\nend\n")
        try converge([a, b])
        try a.book.edit(n.id, body: "intro\nsent, answer lost\nend\n")
        #expect(throws: SyncError.self) { try a.countedSync { $0.loseAnswers = true } }
        try a.book.edit(n.id, body: "intro\nwritten on a\nend\n")
        try b.sync()
        try b.book.edit(n.id, body: "intro\nwritten on b\nend\n")
        try b.sync()
        let report = try a.sync()
        #expect(report.conflicts == 1, "\(report)")
        // v2 is a's edit the remote held; a's next edit started from it, b's v3 followed it. Before
        // 2026-12-06: "an edit of v1 ... and v2-v3", and a history imported on two devices, then
        // joined, named v0 (a new user's trial).
        let note = try a.book.note(n.id)
        let flag = note.properties[NoteProperty.conflict.rawValue]
        #expect(flag == "an edit of v2 by ana@laptop and v3 changed the same lines", "\(note.properties)")
        #expect(
            note.body.contains("<<<<<<< edit of v2 by ana@laptop\n")
                && note.body.contains(">>>>>>> v3, first in the shared log"), "\(note.body)")
        #expect(note.body.contains("written on a\n") && note.body.contains("written on b\n"))
        try converge([a, b])
    }

    @Test("a conflict's other side names the other device's versions, not this device's own event rebased before it")
    func conflictOtherSideExcludesOwnEvents() throws {
        let (a, b) = try pair(175)
        let n = try a.book.add(title: "Plan", body: "intro\nthe shared line\nend\n")
        try converge([a, b])
        try b.book.edit(n.id, body: "intro\nwritten on b\nend\n")
        try b.sync()
        // a pins, then edits: the pin is rebased first (v3, after b's v2), then the edit conflicts.
        try a.book.pin(n.id)
        try a.book.edit(n.id, body: "intro\nwritten on a\nend\n")
        let report = try a.sync()
        #expect(report.conflicts == 1, "\(report)")
        let note = try a.book.note(n.id)
        #expect(note.pinned)
        // Before 2026-12-07: "v2-v3", v3 being a's own pin.
        let flag = note.properties[NoteProperty.conflict.rawValue]
        #expect(flag == "an edit of v1 by ana@laptop and v2 changed the same lines", "\(note.properties)")
        #expect(note.body.contains(">>>>>>> v2, first in the shared log\n"), "\(note.body)")
        try converge([a, b])
    }

    @Test("a push whose answer does not chain to the device's events is confirmed by pulling them back")
    func pushAnswerNotTrusted() throws {
        let (a, b) = try pair(154)
        let note = try #require(try a.book.list(everything).first)
        try a.book.edit(note.id, body: "edited on a\n")
        try a.book.pin(note.id)
        let (report, calls) = try a.countedSync { $0.wrongHeadDigest = true }
        #expect(calls == ["pull 1", "append", "pull 2"], "\(calls)")
        #expect(report.pushed == 2 && report.confirmedInPlace == 2 && report.rounds == 2)
        #expect(try a.book.syncState().pending == 0)
        try converge([a, b])
    }

    @Test("the events confirmed by a push's answer are the remote's, byte for byte, and what a pull would confirm")
    func pushAnswerConfirmsExactly() throws {
        let (a, b) = try pair(155)
        var notes = [try #require(try a.book.list(everything).first)]
        for i in 0..<2 { notes.append(try a.book.add(title: "Note \(i)", body: "first\n")) }
        try a.sync()
        // Commands of several events and several streams, each confirmed from the answers.
        for (i, note) in notes.enumerated() {
            try a.book.edit(note.id, title: "Retitled \(i)", body: "edit \(i)\n")
            try a.book.pin(note.id)
        }
        try a.book.add(title: "New on a", body: "body\n")
        let (report, calls) = try a.countedSync()
        #expect(!calls.contains { $0.hasPrefix("pull") && $0 != "pull 1" }, "\(calls)")
        #expect(report.confirmedInPlace == report.pushed && report.pushed >= 7)
        let state = try a.book.syncState()
        #expect(state.pending == 0)
        let theirs = try a.remote.pull(notebook: a.notebookID, after: 0, limit: Int(state.confirmed) + 1)
        let ours = try a.book.store.read { txn in
            try (1...state.confirmed).map { p in try #require(try a.book.store.event(at: p, in: txn)) }
        }
        #expect(ours.count == theirs.count)
        for (mine, remote) in zip(ours, theirs) {
            #expect(mine.id == remote.id && mine.recordedAt == remote.recordedAt && mine.digest == remote.digest)
            #expect(mine.metadata == remote.metadata && mine.payload == remote.payload)
        }
        try converge([a, b])
    }
}

extension NotebookSyncTests {
    @Test("an outbox pushed in several batches is confirmed by their answers, the chain carried across them")
    func pushAnswerAcrossBatches() throws {
        let (a, b) = try pair(156)
        // Bodies of 0.9 MB: a batch closes between commands past half the remote's 16 MiB.
        let body = String(repeating: "0123456789abcdef ", count: 900_000 / 17) + "\n"
        for i in 0..<10 { try a.book.add(title: "Large \(i)", body: body) }
        let (report, calls) = try a.countedSync()
        #expect(calls == ["pull 1", "append", "append"], "\(calls)")
        #expect(report.pushed == 10 && report.confirmedInPlace == 10 && report.rounds == 1)
        #expect(try a.book.syncState().pending == 0)
        try converge([a, b])
    }

    @Test("a command appended while the push is on its way is rebased and pushed by the next round, nothing lost")
    func commandDuringPush() throws {
        let (a, b) = try pair(157)
        let note = try #require(try a.book.list(everything).first)
        try a.book.edit(note.id, body: "before the push\n")
        let (report, calls) = try a.countedSync { remote in
            remote.beforeFirstAppend = { _ = try a.book.edit(note.id, body: "during the push\n") }
        }
        #expect(report.pushed == 2 && report.rounds == 2, "\(report), \(calls)")
        #expect(try a.book.syncState().pending == 0)
        try converge([a, b])
        #expect(try b.book.note(note.id).body == "during the push\n")
    }
}
