import Basics
import EventStore
import Foundation
import Glibc
import Notes
import TestSupport
import Testing

/// Several `notes` processes and an in-process library writer change one store at once while
/// readers (CLI and library) watch it. The event-store level (notes-stress appenders) is
/// covered by EventStoreTests' MultiProcessTests; this suite proves the promise through the
/// commands and the notes domain.
@Suite("Reliability: concurrent notes processes")
struct ReliabilityConcurrencyTests {
    /// One writer or reader: runs its commands one after another, as its own process each.
    final class Actor {
        let name: String
        let commands: [[String]]
        var next = 0
        var running: KillableNotes?
        /// (command index, stdout, exit code) of each finished command.
        var results: [(index: Int, stdout: String, stderr: String, code: Int32)] = []

        init(_ name: String, _ commands: [[String]]) {
            self.name = name
            self.commands = commands
        }

        var done: Bool { running == nil && next == commands.count }

        /// Starts the next command or collects the finished one; never blocks.
        func step(_ s: Sandbox) throws {
            if let r = running {
                guard r.wait(until: 0) else { return }
                results.append((next - 1, r.stdout, r.stderr, r.finish()))
                running = nil
            }
            if next < commands.count {
                running = try KillableNotes(s, commands[next], tag: "\(name)-\(next)")
                next += 1
            }
        }
    }

    @Test("no lost or duplicated event, contiguous versions, readers never see an event without its projections")
    func writersAndReaders() throws {
        let s = try Sandbox()
        let n = reliabilityLongRun ? 250 : 20
        let shared = try s.add("shared")
        let own = try s.add("own")
        let book = try Notebook(path: s.store, options: libraryOptions())
        let sharedID = try book.resolve(shared)
        let initialEvents = try expectGapFreeLog(book)

        let writers = [
            Actor("add", (0..<n).map { ["add", "add \($0)", "--body", "add body \($0)"] }),
            Actor("own", (0..<n).map { ["edit", own, "--body", "own \($0)"] }),
            Actor("sharedA", (0..<n).map { ["edit", shared, "--body", "A \($0)"] }),
            Actor("sharedB", (0..<n).map { ["edit", shared, "--body", "B \($0)"] }),
            Actor("title", (0..<n).map { ["edit", shared, "--title", "title \($0)"] }),
        ]
        let readers = [
            Actor("list", Array(repeating: ["list", "--all", "--json"], count: n)),
            Actor("show", Array(repeating: ["show", shared, "--json"], count: n)),
        ]
        var libraryEdits: [(version: UInt64, body: String)] = []
        var libraryAdds: [Identifier] = []
        var snapshots = 0
        var round = 0
        while !(writers + readers).allSatisfy(\.done) {
            for actor in writers + readers { try actor.step(s) }
            // The library writes between the processes' commands, as one more concurrent writer.
            if round < 2 * n {
                if round % 2 == 0 {
                    let body = "library \(round)"
                    libraryEdits.append((try book.edit(sharedID, body: body).version, body))
                } else {
                    libraryAdds.append(try book.add(title: "library \(round)").id)
                }
            }
            try expectConsistentSnapshot(book, sharedID)
            snapshots += 1
            round += 1
            usleep(1000)
        }

        // Every write was acknowledged, once.
        for w in writers {
            #expect(w.results.count == n)
            for r in w.results { #expect(r.code == 0, "\(w.name) \(w.commands[r.index]): \(r.stderr)") }
        }
        let adds = writers[0].results.map { $0.stdout.trimmingCharacters(in: .newlines) }
        #expect(Set(adds).count == n, "each add printed its own id")
        for (i, short) in adds.enumerated() { #expect(try book.note(try book.resolve(short)).title == "add \(i)") }
        for id in libraryAdds { #expect(try book.note(id).version == 1) }

        // The shared note: the versions the writers were told are exactly 2...head, each once,
        // and each holds what its writer wrote.
        var sharedVersions: [UInt64] = libraryEdits.map(\.version)
        for w in writers[2...4] {
            for r in w.results {
                let version = try #require(editedVersion(r.stdout), "\(w.name) printed \(r.stdout)")
                sharedVersions.append(version)
                let note = try book.note(sharedID, atVersion: version)
                let command = w.commands[r.index]
                if command[2] == "--body" {
                    #expect(note.body == command[3], "v\(version) holds \(w.name)'s body")
                } else {
                    #expect(note.title == command[3], "v\(version) holds \(w.name)'s title")
                }
            }
        }
        for edit in libraryEdits { #expect(try book.note(sharedID, atVersion: edit.version).body == edit.body) }
        let sharedHead = try book.note(sharedID).version
        #expect(sharedVersions.sorted() == Array(2...sharedHead), "versions of the shared note are contiguous")
        let ownVersions = try writers[1].results.map { r in try #require(editedVersion(r.stdout)) }
        #expect(ownVersions.sorted() == Array(2...UInt64(n + 1)))

        // No event lost or duplicated: the log holds exactly the acknowledged writes.
        let head = try expectGapFreeLog(book)
        let written = writers.reduce(0) { $0 + $1.results.count } + libraryEdits.count + libraryAdds.count
        #expect(head == initialEvents + UInt64(written))

        // Readers: every run succeeded, and what they saw only moved forward.
        var lastCount = 0
        for r in readers[0].results {
            #expect(r.code == 0, "list: \(r.stderr)")
            let count = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [Any]).count
            #expect(count >= lastCount, "list went back from \(lastCount) to \(count) notes")
            lastCount = count
        }
        var lastVersion = 0
        for r in readers[1].results {
            #expect(r.code == 0, "show: \(r.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let version = try #require(object["version"] as? Int)
            #expect(version >= lastVersion, "show went back from v\(lastVersion) to v\(version)")
            lastVersion = version
        }
        #expect(s.run("verify").code == 0)
        print(
            "reliability concurrency test: \(writers.count + readers.count) processes at a time and the library, "
                + "\(written) writes, \(readers.reduce(0) { $0 + $1.results.count }) CLI reads, "
                + "\(snapshots) library snapshots, \(head) events")
    }

    /// The version in `edit`'s answer, `<short id> v<version>`.
    func editedVersion(_ stdout: String) -> UInt64? {
        let fields = stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        guard fields.count == 2, fields[1].hasPrefix("v") else { return nil }
        return UInt64(fields[1].dropFirst())
    }

    /// In one read snapshot: the shared note's projected version equals the events of its
    /// stream and the stream head, and the notes projection counts every created note.
    func expectConsistentSnapshot(_ book: Notebook, _ id: Identifier) throws {
        let stream = "note/" + id.uuidString
        try book.read { txn, dbs in
            let note = try #require(try book.projection.note(id, in: txn, databases: dbs))
            var events: UInt64 = 0
            try book.store.forEachEvent(inStream: stream, in: txn) { _ in
                events += 1
                return true
            }
            #expect(note.version == events, "projection v\(note.version) but \(events) events in one snapshot")
            #expect(try book.store.streamVersion(stream, in: txn) == events)
            var created = 0
            try book.store.forEachEvent(from: 1, in: txn) { view in
                if view.isType("NoteCreated") { created += 1 }
                return true
            }
            #expect(try book.projection.noteCount(in: txn, databases: dbs) == created)
        }
    }

    @Test("processes opening a store whose projections must be rebuilt take turns: the first rebuilds, none fails")
    func rebuildsAtOpenTakeTurns() throws {
        let s = try Sandbox()
        // A log without projections: the first open rebuilds them (about a second, debug build).
        try SchemaRebuildKillTests.fillStore(s.store)
        for round in 0..<2 {
            if round == 1 { try s.ok("config", "set", "search-language", "german") }
            let racers = try (0..<4).map { i in
                try KillableNotes(
                    s, i == 3 ? ["list", "--limit", "1"] : ["add", "racer \(round) \(i)"], tag: "open-\(round)-\(i)")
            }
            for (i, racer) in racers.enumerated() {
                // Before, all but one failed with "another process took over the rebuild".
                #expect(racer.finish() == 0, "round \(round), racer \(i): \(racer.stderr)")
            }
        }
        let titles = try s.titles("--all", "--limit", "10000")
        #expect(titles.filter { $0.hasPrefix("racer ") }.count == 6)
        #expect(s.run("verify").code == 0)
    }

    @Test("verify while other processes append reports no damage: the projections and the replay are of one log")
    func verifyWhileOthersWrite() throws {
        let s = try Sandbox()
        for i in 0..<50 { try s.add("seed \(i)", "--body", "text \(i)") }
        for round in 0..<3 {
            let writers = try (0..<12).map { i in
                try KillableNotes(s, ["add", "during \(round) \(i)", "--body", "x"], tag: "w-\(round)-\(i)")
            }
            // Before 2026-12-06 the replay and the projections were read in two snapshots: notes
            // added between them were "in the projection but not in the log", exit 5.
            let r = s.run("verify")
            #expect(r.code == 0, "round \(round): \(r)")
            for w in writers { #expect(w.finish() == 0) }
        }
        #expect(s.run("verify").code == 0)
    }

    @Test("of two processes editing with the same --expect-version, exactly one wins; the other exits 4")
    func staleExpectVersion() throws {
        let s = try Sandbox()
        let id = try s.add("contested", "--body", "start")
        let rounds = reliabilityLongRun ? 100 : 10
        for round in 0..<rounds {
            let version = try #require(try s.object("show", id)["version"] as? Int)
            let racers = try (0..<2).map { i in
                try KillableNotes(
                    s, ["edit", id, "--expect-version", "\(version)", "--body", "round \(round) racer \(i)"],
                    tag: "race-\(round)-\(i)")
            }
            let codes = racers.map { $0.finish() }
            #expect(codes.sorted() == [0, 4], "round \(round): exit codes \(codes)")
            let winner = try #require(codes.firstIndex(of: 0))
            #expect(
                racers[1 - winner].stderr.contains("v\(version + 1)") || racers[1 - winner].stderr.contains("version"))
            let note = try s.object("show", id)
            #expect(note["version"] as? Int == version + 1)
            #expect(note["body"] as? String == "round \(round) racer \(winner)")
        }
        // An old version is refused outright, and nothing changes.
        let stale = s.run("edit", id, "--expect-version", "1", "--body", "stale")
        #expect(stale.code == 4, "\(stale)")
        #expect(try s.object("show", id)["version"] as? Int == rounds + 1)
        #expect(s.run("verify").code == 0)
    }

    @Test("commands that only read do not wait for another process's write (an import holding the writer)")
    func readersDoNotWaitForAWriter() throws {
        let s = try Sandbox()
        let id = try s.add("seed", "--body", "some words")
        let book = try Notebook(path: s.store, options: libraryOptions())
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // The write transaction stays open, as a long import's does, until the readers are done.
            _ = try? book.store.write { _ in
                entered.signal()
                release.wait()
            }
            finished.signal()
        }
        entered.wait()
        let commands = [
            ["list"], ["show", id], ["search", "words"], ["stats"], ["history", id], ["verify"], ["export"],
        ]
        for (i, command) in commands.enumerated() {
            let reader = try KillableNotes(s, command, tag: "reader-\(i)")
            let exited = reader.wait(until: monotonicSeconds() + 30)
            #expect(exited, "notes \(command.joined(separator: " ")) waited for the write")
            if exited { #expect(reader.finish() == 0, "notes \(command.joined(separator: " ")): \(reader.stderr)") }
            if !exited { _ = reader.killNow() }
        }
        #expect(finished.wait(timeout: .now()) == .timedOut, "the write was held while they read")
        release.signal()
        finished.wait()
    }

    @Test("a writer held up by another process's write says so once after a second, on stderr, then writes")
    func writerWaitIsSaid() throws {
        let s = try Sandbox()
        try s.add("seed")
        let line = "notes: warning: waiting for another notes process (pid %) to finish writing to this store\n"
        // Another process holding the store's write lock (a writer stopped with Ctrl-Z, a long
        // import): a child that takes it with flock(1), a sign that it has, and lets go later.
        let started = s.path("started")
        let holder = try spawnJob(
            ["/usr/bin/flock", s.store + "/lock.mdb", "-c", "touch '\(started)' && sleep 2.5"],
            environment: s.environment, errors: s.path("io/holder.err"))
        waitForFile(started)
        try #require(fileExists(started), "the child took the lock")
        let began = monotonicSeconds()
        let waiting = try KillableNotes(s, ["add", "Waited"], tag: "waiting")
        #expect(waiting.wait(until: monotonicSeconds() + 30))
        // Before 2026-12-06 it waited without a word.
        #expect(waiting.finish() == 0, "\(waiting.stderr)")
        #expect(monotonicSeconds() - began >= 1.0, "it waited for the child")
        #expect(waiting.stderr == line.replacingOccurrences(of: "%", with: "\(holder)"))
        #expect(waiting.stdout.count == 9 && !waiting.stdout.contains("waiting"), "\(waiting.stdout)")
        #expect(waitForExit(holder, seconds: 30) == 0)

        // A write of this process, held past a second: named by its pid, and a real write.
        let book = try Notebook(path: s.store, options: libraryOptions())
        for (hold, said) in [(1_500_000 as UInt32, true), (150_000, false)] {
            let entered = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = try? book.store.write { _ in
                    entered.signal()
                    usleep(hold)
                }
                finished.signal()
            }
            entered.wait()
            let writer = try KillableNotes(s, ["add", "After \(hold)"], tag: "writer-\(hold)")
            #expect(writer.wait(until: monotonicSeconds() + 30))
            #expect(writer.finish() == 0, "\(writer.stderr)")
            // A short wait says nothing.
            #expect(writer.stderr == (said ? line.replacingOccurrences(of: "%", with: "\(getpid())") : ""))
            finished.wait()
        }
        #expect(try Set(s.titles()) == ["seed", "Waited", "After 1500000", "After 150000"])
    }
}
