import EventStore
import Glibc
import Notes
import NotesInterchange
import NotesWorkload
import SwiftEvolutionHistory

/// How much work each benchmark does at a scale.
struct Scale {
    var name: String
    var spec: EventWorkload.Spec
    /// Timed runs of cheap benchmarks and of expensive ones (a full append or rebuild).
    var runs: Int
    var heavyRuns: Int
    var singleAppends: Int
    var gets: Int
    var listPages: Int
    var processRuns: Int
    /// Events appended (and imported) through the projections per run: a prefix of the
    /// dataset, because inline projections make a whole million-event pass take minutes.
    var appendEvents: Int

    static let small = Scale(
        name: "small", spec: .small, runs: 5, heavyRuns: 3, singleAppends: 100, gets: 20_000, listPages: 1_000,
        processRuns: 10, appendEvents: 20_000)
    /// Seconds, for checking the suite itself.
    static let tiny = Scale(
        name: "tiny", spec: EventWorkload.Spec(notes: 1_000, events: 12_000, hotNoteVersions: 200), runs: 3,
        heavyRuns: 2, singleAppends: 30, gets: 2_000, listPages: 200, processRuns: 5, appendEvents: 12_000)
    static let full = Scale(
        name: "full", spec: .full, runs: 5, heavyRuns: 3, singleAppends: 200, gets: 50_000, listPages: 2_000,
        processRuns: 15, appendEvents: 50_000)
    /// 1,000,000 notes, 10,000,000 events: run by hand (not in CI, not by `make bench`), for
    /// the figures that must not grow with the log. Its events are generated into the store,
    /// never held in memory.
    static let huge = Scale(
        name: "huge", spec: EventWorkload.Spec(notes: 1_000_000, events: 10_000_000), runs: 3, heavyRuns: 1,
        singleAppends: 0, gets: 50_000, listPages: 2_000, processRuns: 5, appendEvents: 0)
    /// Three million events: a step between `full` and `huge`.
    static let large = Scale(
        name: "large", spec: EventWorkload.Spec(notes: 300_000, events: 3_000_000), runs: 3, heavyRuns: 1,
        singleAppends: 0, gets: 50_000, listPages: 2_000, processRuns: 5, appendEvents: 0)

    /// The benchmarks that mean something at the scales run by hand (the others need the
    /// events in memory or a peer that would take hours).
    static let byHand = ["rebuild", "get", "as-of", "history", "search-store"]
}

/// What the benchmarks share: the dataset, the store built from it and the raw peer's copy.
final class Suite {
    let scale: Scale
    let data: Dataset
    let root: String
    private(set) var figures: [Figure] = []
    /// The store holding every event of the dataset with all projections.
    private var storePath: String?
    private var envelopeCache: PackedValues?
    private var rawEventsPath: String?
    private var rebuildSeconds: Double?
    private(set) var rawScanRates: [RawLMDB.ScanDepth: Stat] = [:]
    /// The search comparison's report as printed (its table and notes), for the JSON.
    private(set) var searchReport: [String] = []

    init(scale: Scale, data: Dataset) {
        self.scale = scale
        self.data = data
        root = scratchDirectory(scale.name)
    }

    /// Removes every scratch store and file of the run.
    func removeScratch() { removeDirectory(root) }

    func record(_ f: Figure) {
        figures.append(f)
        print(row(f))
    }

    var batch: Int { 10_000 }

    // MARK: Fixtures

    /// The store with the whole dataset: the events appended to the bare log, then the
    /// projections rebuilt when the notebook opens (the fast way to load a big log).
    func store() throws -> String {
        if let storePath { return storePath }
        let path = root + "/store"
        log("building the store: \(formatCount(data.eventCount)) events into the log")
        let start = monotonicSeconds()
        var appended = 0.0
        if let spec = data.streamedSpec {
            let log = try openLog(path)
            var workload = EventWorkload(spec)
            while true {
                let events = workload.next(batch: 100_000)
                if events.isEmpty { break }
                appended += try appendBatched(events[...], to: log, batch: batch).reduce(0, +)
            }
        } else {
            appended = try appendBatched(data.events[...], to: try openLog(path), batch: batch).reduce(0, +)
        }
        let opened = monotonicSeconds()
        let book = try openBook(path)
        log(
            "  log \(fixed(appended, 1)) s, projections rebuilt at open in \(fixed(monotonicSeconds() - opened, 1)) s "
                + "(\(book.rebuildAtOpen.map { "\($0.events) events" } ?? "no rebuild")), total \(fixed(monotonicSeconds() - start, 1)) s"
        )
        storePath = path
        return path
    }

    /// Uses the store an earlier run of the same scale kept (`--keep`), rather than building it.
    func reuseStore(_ path: String) { storePath = path }

    func envelopes() throws -> PackedValues {
        if let envelopeCache { return envelopeCache }
        let book = try openBook(try store())
        let packed = try storedEnvelopes(of: book)
        envelopeCache = packed
        return packed
    }

    /// A raw LMDB environment holding the store's envelopes under the same keys.
    func rawEvents() throws -> String {
        if let rawEventsPath { return rawEventsPath }
        let path = root + "/raw-events"
        mkdir(path, 0o700)
        let raw = RawLMDB(path: path)
        _ = raw.appendBatched(try envelopes(), batch: batch)
        rawEventsPath = path
        return path
    }

    /// The raw cursor scan's rate over the same envelopes, reading `depth` of each value;
    /// measured once per depth and suite run.
    func rawScan(_ depth: RawLMDB.ScanDepth = .bytes) throws -> Stat {
        if let stat = rawScanRates[depth] { return stat }
        let raw = RawLMDB(path: try rawEvents())
        let stat = measureRate(warmup: 1, runs: scale.runs) { _ in
            let start = monotonicSeconds()
            let (n, keep) = raw.scan(depth)
            return (monotonicSeconds() - start, Double(n), keep)
        }
        rawScanRates[depth] = stat
        return stat
    }

    /// `body` and the raw byte scan run alternately, so that a change of load on this shared
    /// machine falls on both alike; the ratio is the median of the pairs' ratios.
    func pairedWithRawScan(
        _ body: (_ run: Int) throws -> (seconds: Double, work: Double, keep: UInt64)
    ) throws -> (ours: Stat, raw: Stat, ratio: Double) {
        let raw = RawLMDB(path: try rawEvents())
        func rawRun() -> Double {
            let start = monotonicSeconds()
            let (n, keep) = raw.scan(.bytes)
            consume(keep)
            return Double(n) / max(monotonicSeconds() - start, 1e-9)
        }
        consume(try body(-1).keep)
        _ = rawRun()
        var ours: [Double] = []
        var peer: [Double] = []
        var ratios: [Double] = []
        for run in 0..<scale.runs {
            let o = try body(run)
            consume(o.keep)
            ours.append(o.work / max(o.seconds, 1e-9))
            peer.append(rawRun())
            ratios.append(ours[run] / peer[run])
        }
        return (Stat(ours), Stat(peer), Stat(ratios).median)
    }

    func rebuildTime() -> Double? { rebuildSeconds }
    func setRebuildTime(_ s: Double) { rebuildSeconds = s }
}

/// One printed line of the results.
func row(_ f: Figure) -> String {
    var s = "\(f.name): \(f.title)\n    ours: \(describe(f.value, f.unit))"
    for (k, v) in f.extra { s += "; \(k) \(v)" }
    if let peer = f.peer, let title = f.peerTitle {
        s += "\n    peer: \(title): \(describe(peer, f.peerUnit ?? f.unit))"
    }
    if let r = f.ratio { s += "\n    ratio: \(format(r))x" }
    if let g = f.goal { s += "\n    goal: \(g): " + (f.goalMet.map { $0 ? "met" : "MISSED" } ?? "n/a") }
    return s
}

extension Suite {
    /// Search against SQLite FTS5 and Tantivy on the same notes: owned by the search benchmark
    /// (SearchBenchmark.swift), which prints its own table; the JSON keeps that report's lines
    /// (`search`), which `scripts/bench-table.py` prints under the suite's table.
    /// Each query's fastest of three timed passes, ours and Tantivy's alike (since 2026-12-07;
    /// the first pass's figures are printed below the table): a query the scheduler stopped for
    /// a time slice moved a one-pass figure by a fifth.
    func benchSearch() throws {
        searchReport = try runSearchBenchmark(
            arguments: ["--count", "\(scale.spec.notes)", "--dir", root + "/search", "--repeat", "3"])
    }
}
