import EventStore
import Foundation
import Glibc
import Notes
import NotesWorkload
import TestSupport
import Testing

/// A rebuild killed with SIGKILL at random moments: the old projections keep serving, the
/// next open (or rebuild) finishes the job, and the projections always equal a replay.
@Suite("Rebuild killed at random points")
struct SchemaRebuildKillTests {
    /// A few thousand notes with a share of legacy events. The log is written without
    /// projections (inline projections are slow in a debug build); the first open builds them.
    static func fillStore(_ path: String) throws {
        let spec = EventWorkload.Spec(
            notes: 1_500, events: 6_000, categories: 8, legacyShare: 0.2, hotNoteVersions: 40, seed: 7)
        var workload = EventWorkload(spec)
        var config = EventStore.Configuration(registry: NotesSchema.registry)
        config.clock = { spec.start }
        let store = try EventStore(path: path, configuration: config)
        while true {
            let batch = workload.next(batch: 5_000)
            if batch.isEmpty { break }
            try store.write { session in
                for e in batch { try session.append([e.event], to: e.stream, expecting: .any) }
            }
        }
    }

    static func open(_ path: String) throws -> Notebook {
        var options = Notebook.Options(actor: "tester@test")
        options.clock = { 1_800_000_000_000_000 }
        return try Notebook(path: path, options: options)
    }

    static var everything: ListQuery {
        var q = ListQuery()
        q.status = .all
        q.sort = .created
        return q
    }

    /// Starts `notes args...` with output discarded; returns its pid.
    static func spawn(_ box: Sandbox, _ args: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let argv = [notesBinary] + args
        let rc = withCStrings(argv) { a in
            withCStrings(box.environment.map { "\($0.key)=\($0.value)" }) { e in
                posix_spawn(&pid, notesBinary, &actions, nil, a, e)
            }
        }
        try #require(rc == 0, "posix_spawn failed: \(rc)")
        return pid
    }

    static func activeSlot(_ book: Notebook) throws -> Int {
        try book.store.read { txn in try book.store.activeProjections(in: txn).slot }
    }

    static func seconds(since start: Int64) -> Double { Double(EventStore.monotonicMicros() - start) / 1e6 }

    @Test("kills during `notes rebuild` and during a rebuild at open leave a consistent store")
    func killedRebuilds() throws {
        let box = try Sandbox()
        try Self.fillStore(box.store)
        let expected: [Note]
        do {
            let book = try Self.open(box.store)
            #expect(book.rebuildAtOpen?.events == 6_000, "the first open builds the projections")
            expected = try book.list(Self.everything)
            #expect(expected.count == 1_500)
            #expect(try book.verify().isEmpty)
        }

        // How long one rebuild takes here, to spread the kills over it.
        let start = EventStore.monotonicMicros()
        try box.ok("rebuild")
        let duration = max(Self.seconds(since: start), 0.05)

        var rng = SeededGenerator(seed: 0x5EED)
        var interrupted = 0
        for round in 0..<6 {
            let atOpen = round % 2 == 1
            let (slotBefore, logBefore) = try {
                let book = try Self.open(box.store)
                return (try Self.activeSlot(book), try book.upgradeLog().count)
            }()
            if atOpen { try makeProjectionsStale(box.store) }
            let args = atOpen ? ["list", "--all", "--json"] : ["rebuild"]
            let pid = try Self.spawn(box, args)
            // From just after the start to just past the end, so both early and late kills happen.
            let delay = duration * (0.02 + 1.1 * Double(rng.next() % 1000) / 1000)
            usleep(UInt32(delay * 1_000_000))
            kill(pid, SIGKILL)
            let code = waitForExit(pid, seconds: 60)
            if code == 128 + SIGKILL { interrupted += 1 }

            // The next open works: it finishes a rebuild the kill interrupted at open, and the
            // projections equal a replay whichever slot is active.
            let book = try Self.open(box.store)
            #expect(
                try book.store.read { txn in try book.store.storedProjectionVersion(in: txn) }
                    == book.store.currentProjectionVersion)
            // Every swap is logged with it, and only swaps are: a rebuild at open is done once,
            // by the child or by this open; `notes rebuild` swapped iff the slot changed.
            let logged = try book.upgradeLog().count - logBefore
            if atOpen {
                #expect(logged == 1, "round \(round)")
            } else {
                #expect(logged == (try Self.activeSlot(book) != slotBefore ? 1 : 0), "round \(round)")
            }
            #expect(try book.verify().isEmpty, "round \(round) (killed after \(delay) s)")
            #expect(try book.list(Self.everything) == expected, "round \(round)")
        }
        #expect(interrupted >= 3, "most kills should land during the rebuild (one takes \(duration) s)")

        // The next rebuild completes and is logged.
        try box.ok("rebuild")
        let book = try Self.open(box.store)
        #expect(try book.verify().isEmpty)
        #expect(try book.list(Self.everything) == expected)
        #expect(try book.upgradeLog().last?.reason == "requested by notes rebuild")
    }

    @Test("a long rebuild at open draws a bar on a terminal, cleared after, and nothing in a pipe")
    func progressOnlyOnTerminals() throws {
        let box = try Sandbox()
        try Self.fillStore(box.store)
        try makeProjectionsStale(box.store)
        let quiet = box.run(["list", "--all", "--json"])
        #expect(quiet.code == 0)
        #expect(quiet.stderr.isEmpty, "nothing decorative on a non-terminal stderr: \(quiet.stderr)")

        guard hasProgram("script") else { return }
        try makeProjectionsStale(box.store)
        // script(1) gives the command a terminal and copies what it shows to our stdout.
        let shown = box.run(
            ["-qec", "\(notesBinary) list --all >/dev/null", "/dev/null"], executable: "/usr/bin/script")
        #expect(shown.code == 0, "\(shown)")
        let took = try Self.open(box.store).upgradeLog().last?.microseconds ?? 0
        // The bar waits a second before drawing; a slower rebuild must have shown it.
        if took > 1_500_000 { #expect(shown.stdout.contains("rebuilding projections ["), "\(shown)") }
        if shown.stdout.contains("rebuilding projections") {
            #expect(shown.stdout.hasSuffix("\r\u{1B}[K"), "the bar is cleared when the rebuild ends: \(shown)")
        }
    }
}
