import Basics
import EventStore
import Notes
import NotesInterchange
import NotesWorkload
import SearchEngine
import SwiftEvolutionHistory

extension Suite {
    /// Process start to exit of `notes show`, `notes list` and `notes search` on the store,
    /// against the `sqlite3` CLI running the equivalent query on the same notes.
    func benchProcesses() throws {
        guard let notes = notesBinary() else {
            log(
                "skipping cli: no release `notes` next to notes-bench; build it first with "
                    + "`swift build -c release --product notes`")
            return
        }
        guard onPath("sqlite3") else {
            log("skipping cli: the sqlite3 CLI is not installed (apt-get install sqlite3)")
            return
        }
        // The user's own settings (a remote, a pager, a default store) must not change what is
        // timed: an empty config directory, and no remote from the environment.
        let config = scratchDirectory("config")
        defer { removeDirectory(config) }
        let env = [
            "NO_COLOR": "1", "NOTES_ACTOR": "bench@notes-bench", "XDG_CONFIG_HOME": config, "NOTES_REMOTE": "",
        ]
        let floor = timeProcess(["/bin/true"], env: env)
        let notesFloor = timeProcess([notes, "--version"], env: env)
        let store = try store()
        let all = try processCases(
            notes: notes, store: store, ids: data.noteIDs, word: data.searchWord, suffix: "", note: "", env: env,
            floor: floor, notesFloor: notesFloor)
        // Where start-up dominates: 15,000 notes of one to five short lines, a few edits each.
        let small = Dataset.generated(
            EventWorkload.Spec(notes: 15_000, events: 30_000, categories: 10, tags: 30, hotNoteVersions: 20))
        let smallStore = root + "/store-15k"
        _ = try appendBatched(small.events[...], to: try openLog(smallStore), batch: batch)
        _ = try openBook(smallStore)
        _ = try processCases(
            notes: notes, store: smallStore, ids: small.noteIDs, word: small.searchWord, suffix: "-15k",
            note: ", 15,000 short notes", env: env, floor: floor, notesFloor: notesFloor)
        try benchLinksAndTags(notes: notes, store: store, all: all, env: env, floor: notesFloor)
    }

    /// `notes show`, `notes list` and `notes search` on `store` against `sqlite3` on the same
    /// notes, each figure named with `suffix`; returns the store's notes.
    private func processCases(
        notes: String, store: String, ids: [Identifier], word: String, suffix: String, note: String,
        env: [String: String], floor: Stat, notesFloor: Stat
    ) throws -> [Note] {
        let all = try { () throws -> [Note] in
            let book = try openBook(store)
            return try NotebookState.replay(store: book.store).notes.values.sorted { $0.id < $1.id }
        }()
        let db = store + ".sqlite"
        log("writing \(formatCount(all.count)) notes to SQLite for the sqlite3 peer")
        try SQLitePeer.write(all, to: db)
        var rng = WorkloadRandom(seed: 5)
        let shown = ids[rng.next(below: ids.count)]
        let prefix = String(shown.hex.prefix(8))
        let cases: [(name: String, title: String, ours: [String], peer: [String])] = [
            (
                "cli-show" + suffix, "process: notes show ID" + note, [notes, "--store", store, "show", prefix],
                ["sqlite3", "-readonly", db, SQLitePeer.showQuery(prefix: prefix)]
            ),
            (
                "cli-list" + suffix, "process: notes list --limit 50" + note,
                [notes, "--store", store, "list", "--limit", "50"],
                ["sqlite3", "-readonly", db, SQLitePeer.listQuery]
            ),
            (
                "cli-search" + suffix, "process: notes search \(word)" + note,
                [notes, "--store", store, "search", word],
                ["sqlite3", "-readonly", db, SQLitePeer.searchQuery(word)]
            ),
        ]
        for c in cases {
            let check = runProcess(c.ours, environment: env)
            guard check.status == 0 else {
                log("skipping \(c.name): `\(c.ours.dropFirst().joined(separator: " "))` exited with \(check.status)")
                continue
            }
            guard runProcess(c.peer, quiet: true).status == 0 else {
                log("skipping \(c.name): sqlite3 failed on \(c.peer.last ?? "")")
                continue
            }
            var ours: [Double] = []
            var peer: [Double] = []
            for i in 0..<(3 + scale.processRuns) {
                // Interleaved, so both see the same machine load.
                let o = runProcess(c.ours, environment: env).seconds * 1000
                let p = runProcess(c.peer, environment: env).seconds * 1000
                if i >= 3 {
                    ours.append(o)
                    peer.append(p)
                }
            }
            let o = Stat(ours)
            let p = Stat(peer)
            record(
                Figure(
                    name: c.name, title: c.title, unit: "ms", value: o,
                    extra: [
                        ("beyond `notes --version`", "\(fixed(o.median - notesFloor.median, 2)) ms"),
                        ("`notes --version`", "\(fixed(notesFloor.median, 2)) ms"),
                        ("/bin/true", "\(fixed(floor.median, 2)) ms"),
                    ],
                    peerTitle: "sqlite3 CLI, equivalent query on the same notes", peer: p, ratio: o.median / p.median,
                    goal: "no slower than sqlite3", goalMet: o.median <= p.median))
        }
        return all
    }

    /// `notes backlinks` of the most linked note and `notes list --tag` of the most used tag:
    /// their cost beyond process start (no peer has the same index).
    private func benchLinksAndTags(notes binary: String, store: String, all: [Note], env: [String: String], floor: Stat)
        throws
    {
        var counts: [String: Int] = [:]
        for n in all {
            for link in WikiLink.parse(n.body) {
                if case .title = link.target, case .title(let k) = link.key { counts[k, default: 0] += 1 }
            }
        }
        let byTitle = Dictionary(all.map { (TextFolding.fold($0.title), $0.id) }, uniquingKeysWith: { a, _ in a })
        let target = counts.filter { byTitle[$0.key] != nil }.max { ($0.value, $1.key) < ($1.value, $0.key) }
        let tag = try openBook(store).allTags().max { ($0.count, $1.name) < ($1.count, $0.name) }
        var cases: [(name: String, title: String, argv: [String])] = []
        if let target, let id = byTitle[target.key] {
            cases.append(
                (
                    "cli-backlinks", "process: notes backlinks ID (\(target.value) links to it)",
                    [binary, "--store", store, "backlinks", String(id.hex.prefix(8))]
                ))
        }
        if let tag {
            cases.append(
                (
                    "cli-list-tag", "process: notes list --tag T --limit 50 (\(tag.count) notes tagged)",
                    [binary, "--store", store, "list", "--tag", tag.name, "--limit", "50"]
                ))
        }
        for c in cases {
            let check = runProcess(c.argv, environment: env)
            guard check.status == 0 else {
                log("skipping \(c.name): `\(c.argv.dropFirst().joined(separator: " "))` exited with \(check.status)")
                continue
            }
            let o = timeProcess(c.argv, env: env)
            let beyond = o.median - floor.median
            record(
                Figure(
                    name: c.name, title: c.title, unit: "ms", value: o,
                    extra: [
                        ("beyond `notes --version`", "\(fixed(beyond, 2)) ms"),
                        ("`notes --version`", "\(fixed(floor.median, 2)) ms"),
                    ],
                    goal: "<= 5 ms beyond `notes --version`", goalMet: beyond <= 5))
        }
    }

    private func timeProcess(_ argv: [String], env: [String: String]) -> Stat {
        let times = (0..<(3 + scale.processRuns)).map { _ in runProcess(argv, environment: env).seconds * 1000 }
        return Stat(Array(times.dropFirst(3)))
    }
}
