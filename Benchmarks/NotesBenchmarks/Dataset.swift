import Basics
import EventStore
import Glibc
import LMDB
import Notes
import NotesInterchange
import NotesWorkload
import SwiftEvolutionHistory

/// The events every benchmark works on, in log order, and what is known about them.
struct Dataset {
    /// Where the events came from, for the report.
    var source: String
    /// The events, or none when the store is built straight from the generator (``streamed``).
    var events: [EventWorkload.Event]
    /// How many events the store holds.
    var eventCount: Int
    /// The workload to generate again into the store when ``events`` is empty.
    var streamedSpec: EventWorkload.Spec?
    /// Note ids in creation order.
    var noteIDs: [Identifier]
    /// The note with the most events (the generated workload's 1,000-version note).
    var hotNote: Identifier
    var hotNoteVersions: Int
    /// A word to search for: common enough to match many notes, rare enough to rank.
    var searchWord: String
    var legacyEvents: Int
    /// Recorded-at of the last event, and of the event halfway through the log.
    var lastInstant: Int64
    var middleInstant: Int64

    init(source: String, events: [EventWorkload.Event], searchWord: String) {
        self.source = source
        self.events = events
        eventCount = events.count
        lastInstant = events.last?.event.recordedAt ?? 0
        middleInstant = events.isEmpty ? 0 : events[events.count / 2].event.recordedAt ?? 0
        self.searchWord = searchWord
        var counts: [String: Int] = [:]
        var ids: [Identifier] = []
        var legacy = 0
        let current = NotesSchema.registry
        for e in events {
            counts[e.stream, default: 0] += 1
            if counts[e.stream] == 1, e.stream.hasPrefix("note/"), let id = Identifier(e.stream.dropFirst(5)) {
                ids.append(id)
            }
            if !current.isCurrent(e.event.type, e.event.schemaVersion) { legacy += 1 }
        }
        noteIDs = ids
        legacyEvents = legacy
        let hot = counts.filter { $0.key.hasPrefix("note/") }.max { ($0.value, $1.key) < ($1.value, $0.key) }
        hotNote = hot.flatMap { Identifier($0.key.dropFirst(5)) } ?? Identifier(high: 0, low: 0)
        hotNoteVersions = hot?.value ?? 0
    }

    /// The generated workload of `spec`.
    static func generated(_ spec: EventWorkload.Spec) -> Dataset {
        var log = EventWorkload(spec)
        var events: [EventWorkload.Event] = []
        events.reserveCapacity(spec.events)
        while let e = log.next() { events.append(e) }
        return Dataset(
            source:
                "generated: \(formatCount(spec.notes)) notes, \(formatCount(spec.events)) events, seed \(spec.seed)",
            events: events, searchWord: log.word(rank: 300))
    }

    /// The generated workload of `spec`, summarised in one pass of the generator without
    /// keeping its events: the store is built by generating them again
    /// (``Suite/store()``), so ten million events never sit in memory.
    static func streamed(_ spec: EventWorkload.Spec) -> Dataset {
        var log = EventWorkload(spec)
        var events = 0
        var last: Int64 = 0
        var middle: Int64 = 0
        var legacy = 0
        var hotVersions = 0
        let current = NotesSchema.registry
        let hotStream = Note.stream(log.hotNote)
        while let e = log.next() {
            events += 1
            last = e.event.recordedAt ?? last
            if events == spec.events / 2 + 1 { middle = last }
            if !current.isCurrent(e.event.type, e.event.schemaVersion) { legacy += 1 }
            if e.stream == hotStream { hotVersions += 1 }
        }
        var data = Dataset(
            source:
                "generated: \(formatCount(spec.notes)) notes, \(formatCount(spec.events)) events, seed \(spec.seed), streamed",
            events: [], searchWord: log.word(rank: 300))
        data.eventCount = events
        data.streamedSpec = spec
        data.noteIDs = (0..<log.notesCreated).map { EventWorkload.noteID($0, spec: spec) }
        data.hotNote = log.hotNote
        data.hotNoteVersions = hotVersions
        data.legacyEvents = legacy
        data.lastInstant = last
        data.middleInstant = middle
        return data
    }

    /// Events read from a file in the export format.
    static func fromExport(_ path: String) throws -> Dataset {
        guard let text = readTextFile(path) else { throw BenchError("cannot read \(path)") }
        var batch = EventBatch()
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            try batch.add(line: line)
        }
        let events = batch.events.map { EventWorkload.Event(stream: $0.stream, event: $0.event) }
        return Dataset(source: "export file \(path)", events: events, searchWord: "the")
    }

    /// Events of a history corpus (`swift-evolution-history.jsonl.gz`), converted by the
    /// notebook's own history importer into a scratch store and read back in log order.
    static func fromCorpus(_ path: String) throws -> Dataset {
        let dir = scratchDirectory("corpus")
        defer { removeDirectory(dir) }
        let book = try Notebook(path: dir + "/store", options: .init(actor: "bench"))
        try book.importHistory(fromFile: path)
        var events: [EventWorkload.Event] = []
        try book.store.read { txn in
            try book.store.forEachEvent(from: 1, in: txn) { view in
                let r = view.recorded
                events.append(
                    EventWorkload.Event(
                        stream: r.stream,
                        event: NewEvent(
                            id: r.id, type: r.type, schemaVersion: r.schemaVersion, payload: r.payload,
                            metadata: r.metadata, recordedAt: r.recordedAt)))
                return true
            }
        }
        return Dataset(source: "corpus \(path)", events: events, searchWord: "generic")
    }

}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Appends `events` to `store`, `batch` per write transaction, grouping consecutive events
/// of one stream into one append as an import would; returns the seconds spent inside each
/// transaction. Projections run once per transaction over the whole batch (still inside it, so
/// the batch and its projections commit together).
func appendBatched(_ events: ArraySlice<EventWorkload.Event>, to store: EventStore, batch: Int) throws -> [Double] {
    var spent: [Double] = []
    var i = events.startIndex
    while i < events.endIndex {
        let end = min(i + batch, events.endIndex)
        let start = monotonicSeconds()
        try store.write { session in
            // Never in bulk: this measures the projections' incremental path.
            try session.deferProjections(expecting: 0)
            var j = i
            while j < end {
                var k = j + 1
                while k < end && events[k].stream == events[j].stream { k += 1 }
                let group = k == j + 1 ? [events[j].event] : events[j..<k].map(\.event)
                try session.append(group, to: events[j].stream, expecting: .any)
                j = k
            }
        }
        spent.append(monotonicSeconds() - start)
        i = end
    }
    return spent
}

/// Opens (creating) the bare event log of a notes store: the notes schemas, no projections.
func openLog(_ path: String) throws -> EventStore {
    try EventStore(path: path, configuration: .init(registry: NotesSchema.registry, projections: nil))
}

/// Opens (creating) a notebook for the benchmark.
func openBook(_ path: String) throws -> Notebook {
    try Notebook(path: path, options: .init(actor: "bench@notes-bench"))
}

/// The stored envelopes of a store, in log order, copied out of the map.
func storedEnvelopes(of book: Notebook) throws -> PackedValues {
    var packed = PackedValues()
    let env = book.store.environment
    let events = try env.openDatabase("events")
    try env.read { txn in
        try txn.withCursor(events) { c in
            var entry = try c.first()
            while let e = entry {
                packed.append(e.value)
                entry = try c.next()
            }
        }
    }
    return packed
}

/// The records of the active `notes` projection (sorted by id), for the raw get peer.
func noteRecords(of book: Notebook) throws -> [([UInt8], [UInt8])] {
    let env = book.store.environment
    var best: [([UInt8], [UInt8])] = []
    for name in ["p0.notes", "p1.notes"] {
        guard let db = try? env.openDatabase(name) else { continue }
        var pairs: [([UInt8], [UInt8])] = []
        try env.read { txn in
            try txn.withCursor(db) { c in
                var entry = try c.first()
                while let e = entry {
                    pairs.append((Array(e.key), Array(e.value)))
                    entry = try c.next()
                }
            }
        }
        if pairs.count > best.count { best = pairs }
    }
    return best
}
