import EventStore
import Notes
import NotesWorkload
import Testing

/// The benchmark workloads must be the same on every run, or figures from two runs (or two
/// machines) would not measure the same work.
@Suite("Benchmark workloads")
struct WorkloadTests {
    static let spec = EventWorkload.Spec(notes: 400, events: 6_000, categories: 6, hotNoteVersions: 120, seed: 99)
    static let text = ZipfText(vocabularySize: 5_000)

    static func generate(_ spec: EventWorkload.Spec) -> [EventWorkload.Event] {
        var log = EventWorkload(spec, text: text)
        var out: [EventWorkload.Event] = []
        while let e = log.next() { out.append(e) }
        return out
    }

    @Test func randomIsDeterministic() {
        var a = WorkloadRandom(seed: 1)
        var b = WorkloadRandom(seed: 1)
        var c = WorkloadRandom(seed: 2)
        let xs = (0..<100).map { _ in a.next() }
        #expect(xs == (0..<100).map { _ in b.next() })
        #expect(xs != (0..<100).map { _ in c.next() })
        // SplitMix64's published first output for seed 1, so the generator never drifts.
        var d = WorkloadRandom(seed: 1)
        #expect(d.next() == 0x910A_2DEC_8902_5CC1)
        for bound in [1, 2, 7, 1000] {
            #expect((0..<200).allSatisfy { _ in (0..<bound).contains(a.next(below: bound)) })
        }
        #expect(a.next(below: 0) == 0)
    }

    @Test func textIsDeterministicAndZipfShaped() {
        let text = ZipfText(vocabularySize: 5_000)
        #expect(text.vocabulary == Self.text.vocabulary)
        #expect(Set(text.vocabulary).count == 5_000)
        #expect(text.vocabulary.prefix(3) == ["the", "of", "and"])
        var a = WorkloadRandom(seed: 3)
        var b = WorkloadRandom(seed: 3)
        let bodies = (0..<50).map { _ in text.body(using: &a) }
        #expect(bodies == (0..<50).map { _ in text.body(using: &b) })
        #expect(bodies.allSatisfy { $0.hasSuffix(".\n") })
        var counts = [Int](repeating: 0, count: text.vocabulary.count)
        for _ in 0..<20_000 { counts[text.rank(using: &a)] += 1 }
        // Zipf with s = 1: the commonest word about twice as often as the second, ten times the tenth.
        #expect(counts[0] > counts[1] && counts[1] > counts[9])
        let ratio = Double(counts[0]) / Double(max(counts[9], 1))
        #expect(ratio > 6 && ratio < 16)
    }

    @Test func editsChangeOneLine() {
        var rng = WorkloadRandom(seed: 4)
        var body = Self.text.body(using: &rng)
        for _ in 0..<300 {
            let next = Self.text.edit(body, using: &rng)
            let before = body.split(separator: "\n").count
            let after = next.split(separator: "\n").count
            #expect(abs(before - after) <= 1)
            #expect(next.hasSuffix("\n") && after >= 1 && after <= 40)
            body = next
        }
    }

    @Test func eventsAreDeterministic() {
        let a = Self.generate(Self.spec)
        let b = Self.generate(Self.spec)
        #expect(a.count == Self.spec.events)
        #expect(a == b)
        var other = Self.spec
        other.seed = 100
        #expect(Self.generate(other) != a)
        #expect(EventWorkload.noteID(5, spec: Self.spec) == EventWorkload.noteID(5, spec: Self.spec))
        #expect(EventWorkload.noteID(5, spec: Self.spec) != EventWorkload.noteID(6, spec: Self.spec))
    }

    @Test func mixCoversTheCatalogueWithLegacyShare() throws {
        let events = Self.generate(Self.spec)
        var types: [SchemaKey: Int] = [:]
        for e in events { types[SchemaKey(e.event.type, e.event.schemaVersion), default: 0] += 1 }
        for s in NotesSchema.current + NotesSchema.legacy {
            #expect(types[SchemaKey(s.type, s.version), default: 0] > 0, "no \(s.type) v\(s.version)")
        }
        let legacy = NotesSchema.legacy.reduce(0) { $0 + types[SchemaKey($1.type, $1.version), default: 0] }
        let share = Double(legacy) / Double(events.count)
        #expect(share > 0.02 && share < 0.09, "legacy share \(share)")
        // Every payload decodes with the schema it claims.
        let schemas = NotesSchema.current + NotesSchema.legacy
        for e in events {
            let schema = try #require(schemas.first { $0.type == e.event.type && $0.version == e.event.schemaVersion })
            #expect(throws: Never.self) { try schema.decode(e.event.payload) }
        }
        // Time never goes back and the hot note has exactly the versions asked for.
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.event.recordedAt! < $1.event.recordedAt! })
        let hot = Note.stream(EventWorkload.noteID(0, spec: Self.spec))
        #expect(events.filter { $0.stream == hot }.count == Self.spec.hotNoteVersions)
        #expect(Set(events.map(\.event.id)).count == events.count)
    }

    @Test func logFoldsIntoTheNotebookItDescribes() throws {
        var state = NotebookState()
        var versions: [String: UInt64] = [:]
        var log = EventWorkload(Self.spec, text: Self.text)
        let registry = NotesSchema.registry
        while let e = log.next() {
            let version = versions[e.stream, default: 0] + 1
            versions[e.stream] = version
            let key = SchemaKey(e.event.type, e.event.schemaVersion)
            let lifted: [(SchemaKey, [UInt8])] =
                registry.isCurrent(e.event.type, e.event.schemaVersion)
                ? [(key, e.event.payload)]
                : try e.event.payload.withUnsafeBytes { try registry.upcast(key, payload: $0) }
            for (k, payload) in lifted {
                try payload.withUnsafeBytes { p in
                    try state.apply(
                        type: k.type, schemaVersion: k.version, payload: p, stream: StreamRef(e.stream),
                        version: version, at: e.event.recordedAt ?? 0, position: 0)
                }
            }
        }
        #expect(state.notes.count == log.notesCreated)
        #expect(log.notesCreated > Self.spec.notes * 9 / 10)
        #expect(state.notes[log.hotNote]?.version == UInt64(Self.spec.hotNoteVersions))
        // One category deleted, one merged into another (both end): no note is left in either.
        let ended = state.categories.values.filter(\.deleted)
        #expect(ended.count == 2)
        for c in ended { #expect(!state.notes.values.contains { $0.category == c.id }) }
        // Tags: nested ones, one renamed with what is below it, one deleted and left on no note.
        #expect(state.tags.count == Self.spec.tags)
        #expect(state.tags.values.contains { $0.name.contains("/") })
        #expect(state.tags.values.filter { $0.name.contains(" renamed") }.count >= 1)
        // One tag deleted, one merged: left on no note.
        let endedTags = state.tags.values.filter(\.deleted)
        #expect(endedTags.count == 2)
        for t in endedTags { #expect(!state.notes.values.contains { $0.tags.contains(t.id) }) }
        let linking = state.notes.values.filter { !WikiLink.parse($0.body).isEmpty }.count
        #expect(linking > state.notes.count / 10 && linking < state.notes.count / 2, "\(linking) notes with links")
        #expect(
            state.notes.values.contains {
                WikiLink.parse($0.body).contains { if case .id = $0.target { true } else { false } }
            })
        let tagged = state.notes.values.filter { !$0.tags.isEmpty }.count
        #expect(tagged > state.notes.count / 4 && tagged < state.notes.count * 3 / 4, "\(tagged) tagged notes")
    }
}
