// notes-bench: every headline figure of the notes store beside its peer, measured in one run.
//
//   swift run -c release notes-bench [NAMES...] [--scale tiny|small|full|large|huge] [--json FILE]
//                                    [--events FILE | --corpus PATH]
//
// Names: append append-durable read fold rebuild get as-of history search-store import import-markdown
// search cli (default: all). `--scale large` (3 M events) and `--scale huge` (10 M events) are run by
// hand and run only rebuild get as-of history search-store. `notes-bench remote` measures the remote
// log of sync against a throwaway PostgreSQL (RemoteBenchmark.swift). See README.md for the figures
// and what limits each.
import EventStore
import Glibc
import Notes
import NotesInterchange
import NotesWorkload
import SwiftEvolutionHistory

/// The benchmarks by name, in the order they run (later ones reuse the store the first builds).
let allBenchmarks: [(name: String, run: (Suite) throws -> Void)] = [
    ("append", { try $0.benchAppend() }),
    ("append-durable", { try $0.benchSingleAppend() }),
    ("read", { try $0.benchRead() }),
    ("fold", { try $0.benchFold() }),
    ("rebuild", { try $0.benchRebuild() }),
    ("get", { try $0.benchGetAndList() }),
    ("as-of", { try $0.benchAsOf() }),
    ("history", { try $0.benchHistory() }),
    ("search-store", { try $0.benchStoreSearch() }),
    ("import", { try $0.benchImport() }),
    ("import-markdown", { try $0.benchMarkdownImport() }),
    ("search", { try $0.benchSearch() }),
    ("cli", { try $0.benchProcesses() }),
]

let usage = """
    usage: notes-bench [NAMES...] [--scale tiny|small|full|large|huge] [--json FILE] [--keep]
                       [--reuse-store PATH] [--events FILE | --corpus PATH]
           notes-bench search [--notes FILE] [--queries FILE] [--count N] [--seed N] [--limit N] [--dir DIR]
           notes-bench search --collection DIR [--limit N] [--language NAME] [--dir DIR] [--per-query FILE]
           notes-bench remote [--events N] [--push N] [--page N] [--runs N] [--samples N] [--json FILE]
    names: \(allBenchmarks.map(\.name).joined(separator: " "))
    """

func fail(_ message: String, code: Int32 = 2) -> Never {
    log("notes-bench: \(message)")
    exit(code)
}

/// Parses the arguments, runs the selected benchmarks and writes the results.
@MainActor func runBenchmarks() -> Never {
    // A child process of the rebuild benchmark: rebuild, then print
    // "seconds events peak-rss-bytes peak-anonymous-bytes".
    if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--child-rebuild" {
        do {
            let book = try openBook(CommandLine.arguments[2])
            let sampler = MemorySampler()
            let start = monotonicSeconds()
            let report = try book.store.rebuildProjections(reason: "notes-bench")
            let seconds = monotonicSeconds() - start
            let anon = sampler.stop()
            print("\(seconds) \(report.events) \(peakResidentBytes()) \(anon)")
            exit(0)
        } catch {
            fail("rebuild child: \(error)", code: 1)
        }
    }

    // A child that folds the log once on SCANS scans (the `fold` figure's work, no sampler
    // thread), then prints "seconds events notes": run it under `valgrind --tool=callgrind` to
    // count the fold's instructions.
    if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--child-fold",
        let shards = Int(CommandLine.arguments[3])
    {
        do {
            let book = try openBook(CommandLine.arguments[2])
            let start = monotonicSeconds()
            let state = try NotebookState.replay(store: book.store, upTo: .max, shards: shards)
            print("\(monotonicSeconds() - start) \(state.events) \(state.notes.count)")
            exit(0)
        } catch {
            fail("fold child: \(error)", code: 1)
        }
    }

    // The stages of a rebuild's memory, for the 10 M scale: the replay, the sorted copy of the
    // notes the writer takes, the search index prepared in memory; print each stage's heap.
    if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--child-rebuild-stages" {
        do {
            try rebuildStages(CommandLine.arguments[2])
            exit(0)
        } catch {
            fail("rebuild stages child: \(error)", code: 1)
        }
    }

    // A child process of the as-of benchmark: one `list --as-of INSTANT --limit 50` page, walked
    // back or replayed, then print "seconds notes peak-rss-bytes peak-heap-bytes". Run it under
    // `valgrind --tool=callgrind` to count its instructions.
    if CommandLine.arguments.count == 5, CommandLine.arguments[1] == "--child-as-of",
        let instant = Int64(CommandLine.arguments[3])
    {
        do {
            let book = try openBook(CommandLine.arguments[2])
            var query = ListQuery()
            query.limit = 50
            let sampler = MemorySampler()
            let start = monotonicSeconds()
            let past = try book.past(asOf: instant)
            let page: [Note]
            switch CommandLine.arguments[4] {
            case "walk": page = try book.list(query, in: past)
            case "replay":
                page = try NotebookState.replayNewestFirst(store: book.store, upTo: past.position).list(query)
            default: fail("--child-as-of PATH INSTANT walk|replay")
            }
            let seconds = monotonicSeconds() - start
            print("\(seconds) \(page.count) \(peakResidentBytes()) \(sampler.stop())")
            exit(0)
        } catch {
            fail("as-of child: \(error)", code: 1)
        }
    }

    // The import figures' work alone, for `valgrind --tool=callgrind` (the suite's setup, the
    // workload and its store, would dominate a profile of the suite): `--child-vault DIR FILES`
    // writes the `import-markdown` figure's vault, `--child-export STORE FILE COUNT` the first
    // COUNT events of a store (a `--keep`'s) as the `import` figure's file, and
    // `--child-import FILE STORE` and `--child-import-markdown DIR STORE` import them into a new
    // store as the figures do, then print "seconds count".
    if CommandLine.arguments.count >= 3, CommandLine.arguments[1].hasPrefix("--child-"),
        ["--child-vault", "--child-export", "--child-import", "--child-import-markdown"].contains(
            CommandLine.arguments[1])
    {
        let a = CommandLine.arguments
        do {
            switch (a[1], a.count) {
            case ("--child-vault", 4):
                guard let files = Int(a[3]) else { fail("--child-vault DIR FILES") }
                try makeVault(a[2], files: files)
            case ("--child-export", 5):
                guard let count = Int(a[4]) else { fail("--child-export STORE FILE COUNT") }
                var lines = 0
                var bytes: [UInt8] = []
                try openBook(a[2]).exportEvents { chunk in
                    for b in chunk where lines < count {
                        bytes.append(b)
                        if b == 0x0A { lines += 1 }
                    }
                }
                guard writeFile(a[3], String(decoding: bytes, as: UTF8.self)) else { fail("cannot write \(a[3])") }
            case ("--child-import", 4):
                let book = try openBook(a[3])
                let start = monotonicSeconds()
                let summary = try book.importEvents(fromFile: a[2])
                print("\(monotonicSeconds() - start) \(summary.appended)")
            case ("--child-import-markdown", 4):
                let book = try openBook(a[3])
                let start = monotonicSeconds()
                let summary = try book.importMarkdown(from: a[2])
                print("\(monotonicSeconds() - start) \(summary.created)")
            default:
                fail(
                    "--child-vault DIR FILES | --child-export STORE FILE COUNT | --child-import FILE STORE | "
                        + "--child-import-markdown DIR STORE")
            }
            exit(0)
        } catch {
            fail("\(a[1]): \(error)", code: 1)
        }
    }

    // `notes-bench search --notes FILE --queries FILE ...`: the search comparison alone, on the
    // caller's data (see runSearchBenchmark for its options).
    let searchOptions: Set<String> = [
        "--notes", "--queries", "--count", "--seed", "--limit", "--dir", "--collection", "--language", "--peer",
        "--times", "--repeat",
    ]
    if CommandLine.arguments.count > 2, CommandLine.arguments[1] == "search",
        CommandLine.arguments.dropFirst(2).contains(where: searchOptions.contains)
    {
        do {
            try runSearchBenchmark(arguments: Array(CommandLine.arguments.dropFirst(2)))
            exit(0)
        } catch {
            fail("search: \(error)", code: 1)
        }
    }

    // `notes-bench sync ...`: devices syncing through a throwaway PostgreSQL (SyncBenchmark.swift).
    if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "sync" {
        do {
            try runSyncBenchmark(arguments: Array(CommandLine.arguments.dropFirst(2)))
            exit(0)
        } catch {
            fail("sync: \(error)", code: 1)
        }
    }

    // `notes-bench remote ...`: the remote log against a throwaway PostgreSQL (RemoteBenchmark.swift).
    if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "remote" {
        do {
            try runRemoteBenchmark(arguments: Array(CommandLine.arguments.dropFirst(2)))
            exit(0)
        } catch {
            fail("remote: \(error)", code: 1)
        }
    }

    var names: [String] = []
    var scale = Scale.small
    var jsonPath: String?
    var eventsPath: String?
    var corpusPath: String?
    var keep = false
    var reusedStore: String?
    var args = CommandLine.arguments.dropFirst()
    func value(of option: String) -> String {
        guard let v = args.popFirst() else { fail("\(option) needs a value\n" + usage) }
        return v
    }

    while let a = args.popFirst() {
        switch a {
        case "--scale":
            switch args.popFirst() {
            case "small": scale = .small
            case "full": scale = .full
            case "tiny": scale = .tiny
            case "large": scale = .large
            case "huge": scale = .huge
            default: fail("--scale takes tiny, small, full, large or huge\n" + usage)
            }
        case "--json": jsonPath = value(of: a)
        case "--events": eventsPath = value(of: a)
        case "--corpus": corpusPath = value(of: a)
        case "--keep": keep = true
        case "--reuse-store": reusedStore = value(of: a)
        case "-h", "--help":
            print(usage)
            exit(0)
        default:
            guard !a.hasPrefix("-"), allBenchmarks.contains(where: { $0.name == a }) else {
                fail("unknown argument \(a)\n" + usage)
            }
            names.append(a)
        }
    }
    if eventsPath != nil && corpusPath != nil { fail("give --events or --corpus, not both") }
    let streamed = scale.name == Scale.large.name || scale.name == Scale.huge.name
    if streamed {
        if eventsPath != nil || corpusPath != nil { fail("--scale \(scale.name) runs the generated workload only") }
        if let other = names.first(where: { !Scale.byHand.contains($0) }) {
            fail("\(other) does not run at --scale \(scale.name); these do: \(Scale.byHand.joined(separator: " "))")
        }
        if names.isEmpty { names = Scale.byHand }
    }
    let selected = names.isEmpty ? allBenchmarks : allBenchmarks.filter { names.contains($0.name) }

    let started = monotonicSeconds()
    let data: Dataset
    do {
        if let eventsPath {
            data = try Dataset.fromExport(eventsPath)
        } else if let corpusPath {
            data = try Dataset.fromCorpus(corpusPath)
        } else {
            log("generating the workload (\(scale.name))")
            data = streamed ? Dataset.streamed(scale.spec) : Dataset.generated(scale.spec)
        }
    } catch {
        fail("cannot load the events: \(error)", code: 1)
    }
    guard data.eventCount > 0, !data.noteIDs.isEmpty else { fail("the dataset has no notes", code: 1) }

    let machine = Machine.current()
    print("notes-bench, scale \(scale.name): \(data.source)")
    print(
        "\(formatCount(data.eventCount)) events, \(formatCount(data.noteIDs.count)) notes, "
            + "\(formatCount(data.legacyEvents)) legacy events, hot note \(data.hotNoteVersions) versions")
    print("machine: \(machine.summary)\n")

    let suite = Suite(scale: scale, data: data)
    if let reusedStore {
        // A path that holds no store would be opened as a new, empty one: every figure 0.
        var st = stat()
        guard stat(reusedStore + "/data.mdb", &st) == 0, st.st_size > 0 else {
            fail(
                "--reuse-store \(reusedStore) holds no store (no data.mdb); give the store directory a run "
                    + "with --keep printed (its `store` subdirectory)")
        }
        suite.reuseStore(reusedStore)
    }
    var failures: [String] = []
    for b in selected {
        log("running \(b.name)")
        do { try b.run(suite) } catch {
            log("\(b.name) failed: \(error)")
            failures.append("\(b.name): \(error)")
        }
    }
    let elapsed = monotonicSeconds() - started
    // exit() below skips deinitializers, so the scratch stores are removed here.
    if keep {
        print("\nkept the scratch stores in \(suite.root)")
    } else {
        suite.removeScratch()
    }
    print("\ndone in \(fixed(elapsed, 0)) s (checksum \(blackHole & 0xFFFF))")

    if let jsonPath {
        let json = resultsJSON(
            figures: suite.figures, machine: machine, scale: scale.name, source: data.source, events: data.eventCount,
            notes: data.noteIDs.count, seconds: elapsed, failures: failures,
            search: suite.searchReport)
        guard writeFile(jsonPath, json) else { fail("cannot write \(jsonPath)", code: 1) }
        log("wrote \(jsonPath)")
    }
    exit(failures.isEmpty ? 0 : 1)
}

#if DEBUG
    log(
        """

        ************************************************************
        * notes-bench refuses to run a DEBUG build: its figures    *
        * would be meaningless. Run it as                          *
        *     swift run -c release notes-bench                     *
        ************************************************************

        """)
    exit(2)
#else
    runBenchmarks()
#endif
