import Basics
import CIntrinsics
import EventStore
import Glibc
import Notes
import NotesInterchange
import NotesWorkload
import SearchEngine
import SwiftEvolutionHistory

extension Suite {
    /// Batched append (10,000 events per commit) with every projection, against raw LMDB
    /// putting the same envelope bytes with `MDB_APPEND` in the same batches.
    func benchAppend() throws {
        let slice = data.events.prefix(min(data.events.count, scale.appendEvents))
        let warm = slice.prefix(batch)
        let ours = try measureRate(warmup: 1, runs: scale.heavyRuns) { run in
            let path = root + "/append-\(run)"
            defer { removeDirectory(path) }
            let part = run < 0 ? warm : slice
            let seconds = try { () throws -> Double in
                let book = try openBook(path)
                return try appendBatched(part, to: book.store, batch: batch).reduce(0, +)
            }()
            return (seconds, Double(part.count), UInt64(part.count))
        }
        let logOnly = try measureRate(warmup: 0, runs: scale.heavyRuns) { run in
            let path = root + "/append-log-\(run)"
            defer { removeDirectory(path) }
            let seconds = try appendBatched(slice, to: try openLog(path), batch: batch).reduce(0, +)
            return (seconds, Double(slice.count), UInt64(slice.count))
        }
        let all = try envelopes()
        var packed = PackedValues()
        for i in 0..<min(slice.count, all.count) { all.withValue(i) { packed.append($0) } }
        let raw = measureRate(warmup: 1, runs: scale.heavyRuns) { run in
            let path = root + "/raw-append-\(run)"
            mkdir(path, 0o700)
            defer { removeDirectory(path) }
            let seconds = RawLMDB(path: path).appendBatched(packed, batch: batch)
            return (seconds, Double(packed.count), UInt64(packed.totalBytes))
        }
        let avg = packed.count > 0 ? packed.totalBytes / packed.count : 0
        record(
            Figure(
                name: "append",
                title:
                    "batched append with all projections (10,000 events/commit, first \(formatCount(slice.count)) events)",
                unit: "events/s", value: ours,
                extra: [
                    ("log only, no projections", "\(format(logOnly.median)) events/s"), ("mean envelope", "\(avg) B"),
                ],
                peerTitle: "raw LMDB mdb_put MDB_APPEND of the same envelopes, same batches", peer: raw,
                ratio: ours.median / raw.median, goal: ">= 100,000 events/s", goalMet: ours.median >= 100_000))
    }

    /// One event per durable commit (fsync), against raw LMDB's one put + commit.
    func benchSingleAppend() throws {
        let warm = 20
        let n = scale.singleAppends
        let preload = max(0, min(batch, data.events.count - n - warm))
        guard preload + warm + n <= data.events.count else { throw BenchError("too few events for single appends") }
        let path = root + "/single"
        defer { removeDirectory(path) }
        var ours: [Double] = []
        let envelopes = try { () throws -> PackedValues in
            let book = try openBook(path)
            _ = try appendBatched(data.events.prefix(preload), to: book.store, batch: batch)
            for (i, e) in data.events[preload..<(preload + warm + n)].enumerated() {
                let start = monotonicSeconds()
                try book.store.append([e.event], to: e.stream, expecting: .any)
                if i >= warm { ours.append((monotonicSeconds() - start) * 1000) }
            }
            return try storedEnvelopes(of: book)
        }()
        let rawPath = root + "/single-raw"
        mkdir(rawPath, 0o700)
        defer { removeDirectory(rawPath) }
        let raw = RawLMDB(path: rawPath)
        var head = PackedValues()
        for i in 0..<preload { envelopes.withValue(i) { head.append($0) } }
        _ = raw.appendBatched(head, batch: batch)
        let singles = (preload..<(preload + warm + n)).map { i in envelopes.withValue(i) { Array($0) } }
        let rawMs = Array(raw.appendSingly(singles, firstKey: UInt64(preload + 1)).dropFirst(warm))
        let o = Latency(milliseconds: ours)
        let r = Latency(milliseconds: rawMs)
        record(
            Figure(
                name: "append-durable", title: "durable single append (one event, one fsync'd commit), p50",
                unit: "ms", value: Stat(ours),
                extra: [("p99", "\(fixed(o.p99, 2)) ms"), ("raw p99", "\(fixed(r.p99, 2)) ms"), ("samples", "\(n)")],
                peerTitle: "raw LMDB one mdb_put + mdb_txn_commit", peer: Stat(rawMs),
                ratio: o.p50 / r.p50, goal: "p50 within 1.5x of raw", goalMet: o.p50 <= 1.5 * r.p50))
    }

    /// The peer of the scan figures: the C API's cursor reading every byte of every envelope.
    var rawScanTitle: String { "raw LMDB cursor scan (MDB_NEXT) reading every byte of the same envelopes" }

    /// Every event read with its checksum verified and its envelope decoded.
    func benchRead() throws {
        let book = try openBook(try store())
        let (ours, raw, ratio) = try pairedWithRawScan { _ in
            var n = 0
            var sum: UInt64 = 0
            let start = monotonicSeconds()
            try book.store.read { txn in
                try book.store.forEachEvent(from: 1, in: txn) { v in
                    n += 1
                    sum &+= v.position &+ UInt64(v.payload.count) &+ UInt64(v.typeBytes.count)
                    return true
                }
            }
            return (monotonicSeconds() - start, Double(n), sum)
        }
        let walk = try rawScan(.walk)
        let checksum = try rawScan(.checksum)
        record(
            Figure(
                name: "read", title: "read all events (decode envelope + CRC-32C check)", unit: "events/s",
                value: ours,
                extra: [
                    ("raw scan + CRC-32C in the loop", "\(format(checksum.median)) events/s"),
                    ("raw cursor walk reading no value bytes", "\(format(walk.median)) events/s"),
                    ("ours / walk", "\(fixed(ours.median / walk.median, 2))x"),
                ],
                peerTitle: rawScanTitle, peer: raw, ratio: ratio, goal: ">= 50% of raw scan", goalMet: ratio >= 0.5))
    }

    /// Decode + upcast + fold of the whole log into memory (what a rebuild and `--as-of` do
    /// before writing anything).
    func benchFold() throws {
        let book = try openBook(try store())
        let shards = NotebookState.replayShards(events: UInt64(data.events.count))
        func fold(shards: Int) -> (Int) throws -> (seconds: Double, work: Double, keep: UInt64) {
            { _ in
                let start = monotonicSeconds()
                let state = try NotebookState.replay(store: book.store, upTo: .max, shards: shards)
                return (monotonicSeconds() - start, Double(state.events), UInt64(state.notes.count))
            }
        }
        let (ours, raw, ratio) = try pairedWithRawScan(fold(shards: shards))
        let oneCore = shards > 1 ? try measureRate(warmup: 1, runs: scale.runs, fold(shards: 1)) : ours
        record(
            Figure(
                name: "fold", title: "decode + upcast + fold every event into notes and categories",
                unit: "events/s", value: ours,
                extra: [
                    ("scans", "\(shards)"), ("on one scan", "\(format(oneCore.median)) events/s"),
                    ("legacy events", "\(formatCount(data.legacyEvents))"),
                ],
                peerTitle: rawScanTitle, peer: raw, ratio: ratio, goal: ">= 40% of raw scan",
                goalMet: ratio >= 0.4))
    }

    /// A full rebuild of every projection (notes, list index, categories, search) in a child
    /// process, so its peak memory is its own.
    func benchRebuild() throws {
        let path = try store()
        var peaks: [Int] = []
        var anon: [Int] = []
        var seconds: [Double] = []
        let ours = try measureRate(warmup: 1, runs: scale.heavyRuns) { _ in
            let out = root + "/rebuild.out"
            let (status, _) = runProcess([executablePath(), "--child-rebuild", path], stdoutPath: out)
            guard status == 0, let text = readTextFile(out) else {
                throw BenchError("rebuild child failed (\(status))")
            }
            let f = text.split(separator: " ").compactMap { Double($0.filter { !$0.isWhitespace }) }
            guard f.count == 4 else { throw BenchError("rebuild child printed \(text)") }
            peaks.append(Int(f[2]))
            anon.append(Int(f[3]))
            seconds.append(f[0])
            return (f[0], f[1], UInt64(f[1]))
        }
        let raw = try rawScan()
        let measured = Array(seconds.suffix(scale.heavyRuns))
        setRebuildTime(Stat(measured).median)
        let hwm = Double(peaks.suffix(scale.heavyRuns).max() ?? 0) / 1_048_576
        let heap = Double(anon.suffix(scale.heavyRuns).max() ?? 0) / 1_048_576
        let ratio = ours.median / raw.median
        // Issue 20: under 512 MB at a million events, under 1 GB at ten million.
        let peakGoal = data.eventCount > 5_000_000 ? 1024 : 512
        record(
            Figure(
                name: "rebuild", title: "full rebuild of all projections (replay, fold, bulk write, swap)",
                unit: "events/s", value: ours,
                extra: [
                    ("peak RSS (VmHWM)", "\(fixed(hwm, 0)) MB"), ("peak heap (RssAnon)", "\(fixed(heap, 0)) MB"),
                    ("of raw scan", "\(fixed(ratio * 100, 0))%"),
                ],
                peerTitle: rawScanTitle, peer: raw, ratio: ratio,
                goal: ">= 400,000 events/s, peak < \(peakGoal) MB",
                goalMet: ours.median >= 400_000 && hwm < Double(peakGoal)))
    }

    /// `notes show` and `notes list` without the process: one read transaction each.
    func benchGetAndList() throws {
        let book = try openBook(try store())
        var rng = WorkloadRandom(seed: 11)
        let ids = (0..<scale.gets).map { _ in data.noteIDs[rng.next(below: data.noteIDs.count)] }
        let ours = try measureRate(warmup: 1, runs: scale.runs) { _ in
            var sum: UInt64 = 0
            let start = monotonicSeconds()
            for id in ids { sum &+= try book.note(id).version }
            return (monotonicSeconds() - start, Double(ids.count), sum)
        }
        let rawPath = root + "/raw-notes"
        mkdir(rawPath, 0o700)
        defer { removeDirectory(rawPath) }
        let raw = RawLMDB(path: rawPath)
        raw.load(try noteRecords(of: book))
        let keys = ids.map(\.bytes)
        let peer = measureRate(warmup: 1, runs: scale.runs) { _ in
            let start = monotonicSeconds()
            let keep = raw.getEach(keys)
            return (monotonicSeconds() - start, Double(keys.count), keep)
        }
        record(
            Figure(
                name: "get",
                title: "get note by id (read txn + get + decode), \(formatCount(data.noteIDs.count)) notes",
                unit: "ops/s", value: ours, peerTitle: "raw LMDB read txn + mdb_get", peer: peer,
                ratio: ours.median / peer.median))

        var query = ListQuery()
        query.limit = 50
        // The rows `notes list` prints (no bodies), as the command reads them.
        let page = try book.listRows(query)
        let list = try measureRate(warmup: 1, runs: scale.runs) { _ in
            var sum: UInt64 = 0
            let start = monotonicSeconds()
            for _ in 0..<scale.listPages { sum &+= UInt64(try book.listRows(query).count) }
            return (monotonicSeconds() - start, Double(scale.listPages), sum)
        }
        // The same page as whole notes (bodies and properties decoded), as `list` read it before
        // the rows projection and `list --json` reads it still.
        let whole = try measureRate(warmup: 1, runs: scale.runs) { _ in
            var sum: UInt64 = 0
            let start = monotonicSeconds()
            for _ in 0..<scale.listPages { sum &+= UInt64(try book.list(query).count) }
            return (monotonicSeconds() - start, Double(scale.listPages), sum)
        }
        let pageKeys = page.map(\.id.bytes)
        let rawList = measureRate(warmup: 1, runs: scale.runs) { _ in
            var sum: UInt64 = 0
            let start = monotonicSeconds()
            for _ in 0..<scale.listPages { sum &+= raw.getEach(pageKeys, perTransaction: pageKeys.count) }
            return (monotonicSeconds() - start, Double(scale.listPages), sum)
        }
        record(
            Figure(
                name: "list", title: "list page of 50 (pinned first, by updated) over all notes", unit: "pages/s",
                value: list,
                extra: [
                    ("per page", "\(fixed(1000 / list.median, 3)) ms"),
                    ("whole notes with bodies", "\(fixed(1000 / whole.median, 3)) ms a page"),
                ],
                peerTitle: "raw LMDB read txn + 50 mdb_get of the same notes", peer: rawList,
                ratio: list.median / rawList.median, goal: ">= 0.25x of raw",
                goalMet: list.median / rawList.median >= 0.25))
    }

    /// `list --as-of`: a page of 50 in the default order, walked back from the instant (what the
    /// command does), beside the replay of the whole log that it did before and that other orders
    /// and `search --as-of` still do. Each case also runs once in a child process, for its peak
    /// memory.
    func benchAsOf() throws {
        let path = try store()
        let book = try openBook(path)
        var query = ListQuery()
        query.limit = 50
        let last = try book.past(asOf: data.lastInstant)
        var replayTimes: [Double] = []
        for run in 0..<(1 + scale.heavyRuns) {
            let start = monotonicSeconds()
            let past = try book.past(asOf: data.lastInstant)
            let page = try NotebookState.replayNewestFirst(store: book.store, upTo: past.position).list(query)
            let t = monotonicSeconds() - start
            consume(UInt64(page.count))
            if run > 0 { replayTimes.append(t * 1000) }
        }
        let replay = Stat(replayTimes)
        let replayPeak = try asOfChild(path, instant: data.lastInstant, mode: "replay").peakHeapMB
        let events = formatCount(data.eventCount)
        record(
            Figure(
                name: "as-of-replay", title: "replay of all \(events) events + page (other orders, search --as-of)",
                unit: "ms", value: replay, extra: [("peak heap (RssAnon), own process", "\(fixed(replayPeak, 0)) MB")],
                peerTitle: rebuildTime() == nil ? nil : "full rebuild (same run)",
                peer: rebuildTime().map { Stat([$0 * 1000]) }, ratio: rebuildTime().map { replay.median / ($0 * 1000) })
        )

        let middle = try book.past(asOf: data.middleInstant)
        var archived = query
        archived.status = .archived
        var cases: [(name: String, title: String, instant: Int64, past: PastNotebook, query: ListQuery)] = [
            ("as-of", "list --as-of the last instant, page of 50 (walked back)", data.lastInstant, last, query),
            ("as-of-middle", "the same halfway through the log", data.middleInstant, middle, query),
            ("as-of-archived", "the same with --archived, halfway", data.middleInstant, middle, archived),
        ]
        if let category = middle.names.categories.values.filter({ !$0.deleted }).min(by: { $0.id < $1.id }) {
            var inCategory = query
            inCategory.scope = .category(category.id)
            cases.append(
                ("as-of-category", "the same with --category, halfway", data.middleInstant, middle, inCategory))
        }
        for c in cases {
            var times: [Double] = []
            var work = Notebook.PastListingWork()
            for run in 0..<(2 + 4 * scale.runs) {
                let start = monotonicSeconds()
                let past = try book.past(asOf: c.instant)
                let (page, w) = try book.listMeasured(c.query, in: past)
                let t = monotonicSeconds() - start
                consume(UInt64(page.count))
                work = w
                if run > 1 { times.append(t * 1000) }
            }
            let ours = Stat(times)
            let peak = c.name == "as-of" ? try asOfChild(path, instant: c.instant, mode: "walk").peakHeapMB : nil
            var extra: [(String, String)] = [
                ("notes read", formatCount(work.notesRead)), ("events walked", formatCount(work.eventsWalked)),
                ("notes ever pinned looked up", formatCount(work.pinnedLookedUp)),
            ]
            if work.gaveUp { extra.append(("walk gave up for the replay", "yes")) }
            if let peak { extra.append(("peak heap (RssAnon), own process", "\(fixed(peak, 0)) MB")) }
            record(
                Figure(
                    name: c.name, title: c.title, unit: "ms", value: ours, extra: extra,
                    peerTitle: "replay of all \(events) events + page (before)", peer: replay,
                    ratio: ours.median / replay.median, goal: "< 50 ms", goalMet: ours.median < 50))
        }
    }

    /// One `list --as-of` page in a child process (`--child-as-of`): its time and peak heap (its
    /// peak RSS also counts the pages of the store file the kernel maps around each one read).
    func asOfChild(_ path: String, instant: Int64, mode: String) throws -> (seconds: Double, peakHeapMB: Double) {
        let out = root + "/as-of.out"
        let (status, _) = runProcess(
            [executablePath(), "--child-as-of", path, String(instant), mode], stdoutPath: out)
        guard status == 0, let text = readTextFile(out) else { throw BenchError("as-of child failed (\(status))") }
        let f = text.split(separator: " ").compactMap { Double($0.filter { !$0.isWhitespace }) }
        guard f.count == 4 else { throw BenchError("as-of child printed \(text)") }
        return (f[0], f[3] / 1_048_576)
    }

    /// `notes search` in the suite's store, in process: the word the workload picks (rank 300
    /// of its Zipf vocabulary), a commoner one (rank 30) and both together.
    func benchStoreSearch() throws {
        let book = try openBook(try store())
        let workload = EventWorkload(scale.spec)
        let common = workload.word(rank: 30)
        let queries = [data.searchWord, common, "\(common) \(data.searchWord)"]
        for (i, text) in queries.enumerated() {
            let query = try SearchQuery.parse(text)
            var times: [Double] = []
            var hits = 0
            for run in 0..<(5 + 20 * scale.runs) {
                let start = monotonicSeconds()
                let results = try book.search(query, limit: 20)
                let t = monotonicSeconds() - start
                hits = results.count
                consume(UInt64(results.count))
                if run >= 5 { times.append(t * 1000) }
            }
            let latency = Latency(milliseconds: times)
            record(
                Figure(
                    name: "search-store-\(i + 1)",
                    title: "search \"\(text)\", top 20 of \(formatCount(data.noteIDs.count)) notes, in process",
                    unit: "ms", value: Stat(times),
                    extra: [("p99", "\(fixed(latency.p99, 2)) ms"), ("results", "\(hits)")]))
        }
    }

    /// `history` and `show --at` of the note with the most versions.
    func benchHistory() throws {
        let book = try openBook(try store())
        let id = data.hotNote
        let versions = UInt64(data.hotNoteVersions)
        var hist: [Double] = []
        var showAt: [Double] = []
        for i in 0..<(5 + 10 * scale.runs) {
            var start = monotonicSeconds()
            let revs = try book.revisions(of: id)
            let h = (monotonicSeconds() - start) * 1000
            start = monotonicSeconds()
            let old = try book.note(id, atVersion: max(1, versions / 2))
            let s = (monotonicSeconds() - start) * 1000
            consume(UInt64(revs.count) &+ old.version)
            if i >= 5 {
                hist.append(h)
                showAt.append(s)
            }
        }
        let hl = Latency(milliseconds: hist)
        let sl = Latency(milliseconds: showAt)
        record(
            Figure(
                name: "history", title: "history of a note with \(versions) versions (fold every revision)",
                unit: "ms", value: Stat(hist), extra: [("p99", "\(fixed(hl.p99, 2)) ms")],
                goal: "a few ms", goalMet: hl.p50 < 5))
        record(
            Figure(
                name: "show-at", title: "show --at version \(max(1, versions / 2)) of that note", unit: "ms",
                value: Stat(showAt), extra: [("p99", "\(fixed(sl.p99, 2)) ms")], goal: "a few ms",
                goalMet: sl.p50 < 5))
    }

    /// `notes import` of the dataset exported to a file (its first events, as many as the
    /// append benchmark appends), into a fresh store with projections.
    func benchImport() throws {
        let file = root + "/export.jsonl"
        let count = min(data.events.count, scale.appendEvents)
        var lines = 0
        var bytes: [UInt8] = []
        try { () throws in
            let book = try openBook(try store())
            try book.exportEvents { chunk in
                guard lines < count else { return }
                for b in chunk where lines < count {
                    bytes.append(b)
                    if b == 0x0A { lines += 1 }
                }
            }
        }()
        guard writeFile(file, String(decoding: bytes, as: UTF8.self)) else { throw BenchError("cannot write \(file)") }
        defer { removeDirectory(file) }
        let ours = try measureRate(warmup: 1, runs: scale.heavyRuns) { run in
            let path = root + "/import-\(run)"
            defer { removeDirectory(path) }
            let book = try openBook(path)
            let start = monotonicSeconds()
            let summary = try book.importEvents(fromFile: file)
            return (monotonicSeconds() - start, Double(summary.appended), UInt64(summary.appended))
        }
        let append = figures.first { $0.name == "append" }?.value
        record(
            Figure(
                name: "import",
                title: "bulk import of an export file (\(formatCount(lines)) events: parse + append + projections)",
                unit: "events/s", value: ours, extra: [("file", "\(fixed(Double(bytes.count) / 1_048_576, 1)) MB")],
                peerTitle: append == nil ? nil : "batched append of the same events (this run)", peer: append,
                ratio: append.map { ours.median / $0.median }, goal: ">= 100,000 events/s",
                goalMet: ours.median >= 100_000))
    }
}

func directoryFileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

extension Suite {
    /// `notes import-markdown` of a generated vault in Obsidian's style (10,000 files at every
    /// scale but tiny: YAML front matter with lists, aliases and keys of its own, `#tags`, wiki
    /// links to titles, aliases and file names, 20 folders) into a fresh store.
    func benchMarkdownImport() throws {
        let files = scale.name == "tiny" ? 1_000 : 10_000
        let dir = root + "/vault"
        try makeVault(dir, files: files)
        defer { removeDirectory(dir) }
        let ours = try measureRate(warmup: 1, runs: scale.heavyRuns) { run in
            let path = root + "/vault-store-\(run)"
            defer { removeDirectory(path) }
            let book = try openBook(path)
            let start = monotonicSeconds()
            let summary = try book.importMarkdown(from: dir)
            let seconds = monotonicSeconds() - start
            guard summary.created == files else { throw BenchError("imported \(summary.created) of \(files) files") }
            return (seconds, Double(files), UInt64(summary.created))
        }
        record(
            Figure(
                name: "import-markdown",
                title: "import-markdown of a generated vault (\(formatCount(files)) files, YAML front matter, links)",
                unit: "files/s", value: ours, extra: [], peerTitle: nil, peer: nil, ratio: nil,
                goal: ">= 5,000 files/s", goalMet: ours.median >= 5_000))
    }
}

/// Writes the vault of the `import-markdown` figure: the same files on every run.
func makeVault(_ dir: String, files: Int) throws {
    var rng = WorkloadRandom(seed: 0x7661_756C_74)
    let text = ZipfText(vocabularySize: 20_000)
    var titles: [String] = []
    for i in 0..<files {
        let folder = "folder-\(i % 20)"
        let title = text.title(using: &rng) + " \(i)"
        titles.append(title)
        var fm = "---\naliases:\n  - alias \(i)\ntags:\n  - \(text.word(using: &rng))\n  - area/\(i % 7)\n"
        fm += "cssclasses: [wide]\ncreated: 2024-01-\(10 + i % 18)\nstatus: draft\n---\n"
        var body = "# \(title)\n\n" + text.body(using: &rng) + "\n"
        if i > 0 {
            let j = rng.next(below: i)
            body +=
                "See [[\(titles[j])]], [[alias \(rng.next(below: i))]] and [[note-\(j)|that one]]. #topic/\(i % 13)\n"
        }
        let path = "\(dir)/\(folder)/note-\(i).md"
        if i < 20 { try makeDirectories(dir + "/" + folder) }
        guard writeFile(path, fm + body) else { throw BenchError("cannot write \(path)") }
    }
}

/// What a rebuild holds in memory, stage by stage (`--child-rebuild-stages PATH`): the replay's
/// state, the sorted copy of the notes the writer takes, and the search index prepared in
/// memory, each with the heap (RssAnon) it leaves and the peak so far. Not a rebuild: the links'
/// tables and the listing index's buckets, built beside these, are not included.
func rebuildStages(_ path: String) throws {
    let book = try openBook(path)
    let sampler = MemorySampler()
    func stage(_ what: String) {
        let mb = Double(residentAnonymousBytes()) / 1_048_576
        print("\(what): heap \(fixed(mb, 0)) MB, peak RSS \(fixed(Double(peakResidentBytes()) / 1_048_576, 0)) MB")
    }
    stage("opened")
    var state = try NotebookState.replay(store: book.store, releasingPages: true)
    stage(
        "replayed: \(formatCount(state.notes.count)) notes, \(formatCount(state.titleChanges.count)) title changes, "
            + "\(formatCount(state.nameChanges.count)) name changes, \(formatCount(state.everPinned.count)) ever pinned, "
            + "\(formatCount(state.filingCount)) filings"
    )
    var textBytes = 0
    for n in state.notes.values { textBytes += n.title.utf8.count + n.body.utf8.count }
    print("  titles and bodies: \(fixed(Double(textBytes) / 1_048_576, 0)) MB of UTF-8")
    let notes = state.notes.values.sorted { $0.id < $1.id }
    stage("sorted copy of the notes")
    let documents = notes.map { n in
        SearchDocument(
            id: n.id, title: n.title, body: n.body, category: n.category, updatedAt: n.updatedAt, pinned: n.pinned,
            status: n.trashed ? .trashed : n.archived ? .archived : .active)
    }
    stage("search documents")
    let prepared = try SearchIndex.prepare(documents, language: .english)
    stage("search index prepared")
    withExtendedLifetime(prepared) {}
    print("peak heap \(fixed(Double(sampler.stop()) / 1_048_576, 0)) MB")
    withExtendedLifetime(documents) {}
    withExtendedLifetime(notes) {}
    // What each part of the replayed state holds: let go of one by one (the search index, its
    // documents and the sorted copy are gone by now), the heap given back to the system after
    // each (malloc_trim), the difference printed.
    var before = trimmedHeap()
    print("the replayed state, part by part (\(fixed(Double(before) / 1_048_576, 0)) MB of heap with it):")
    for (what, drop) in NotebookState.parts {
        drop(&state)
        let now = trimmedHeap()
        print("  \(what): \(fixed(Double(before - now) / 1_048_576, 0)) MB")
        before = now
    }
    print("  left: \(fixed(Double(before) / 1_048_576, 0)) MB of heap")
}

/// The heap now, after giving freed memory back to the system.
private func trimmedHeap() -> Int {
    notes_trim_heap()
    return residentAnonymousBytes()
}
