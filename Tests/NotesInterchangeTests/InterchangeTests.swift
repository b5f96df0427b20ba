import Basics
import EventStore
import Foundation
import Glibc
import Notes
import NotesInterchange
import NotesWorkload
import Synchronization
import TestSupport
import Testing

/// A fresh store in a temp directory with a fixed clock and sequential ids.
final class InterchangeScratch {
    let path: String
    let book: Notebook
    let clock: InterchangeClock

    /// 2026-11-29T12:00:00Z.
    static let start: Int64 = 1_795_953_600_000_000

    init(maxBodyBytes: Int = 1 << 20, now: Int64 = InterchangeScratch.start) throws {
        var template = Array("/tmp/notes-interchange-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
        path = String(cString: try #require(dir))
        let clock = InterchangeClock(now)
        self.clock = clock
        var options = Notebook.Options(actor: "ana@laptop", command: "test")
        options.clock = { clock.tick() }
        options.ids = InterchangeIDs()
        options.maxBodyBytes = maxBodyBytes
        book = try Notebook(path: path, options: options)
    }

    deinit {
        _ = try? FileManager.default.removeItem(atPath: path)
    }

    func export(after: UInt64 = 0, upcast: Bool = false, chunkBytes: Int = 1 << 20) throws -> [UInt8] {
        var out: [UInt8] = []
        try book.exportEvents(after: after, upcast: upcast, chunkBytes: chunkBytes) { out += $0 }
        return out
    }

    var head: UInt64 { get throws { try book.stats().events } }

    /// The names of the tags of note `id`, sorted.
    func tagNames(of id: Identifier) throws -> [String] {
        try book.note(id).tags.compactMap { try book.tagName($0) }.sorted()
    }

    func allNotes() throws -> [Note] {
        var q = ListQuery()
        q.status = .all
        q.sort = .created
        return try book.list(q).sorted { $0.id < $1.id }
    }
}

/// A clock that moves one second on each reading, so every event has its own instant.
final class InterchangeClock: Sendable {
    let micros: Mutex<Int64>
    init(_ start: Int64) { micros = Mutex(start) }
    func tick() -> Int64 {
        micros.withLock {
            $0 += 1_000_000; return $0
        }
    }
}

final class InterchangeIDs: IdentifierGenerator {
    let counter = Mutex<UInt64>(0)
    func next() -> Identifier {
        Identifier(
            high: 0xABCD_0000_0000_4000,
            low: 0x8000_0000_0000_0000
                | counter.withLock {
                    $0 += 1; return $0
                })
    }
}

private func lines(_ bytes: [UInt8]) -> [[UInt8]] {
    bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map(Array.init)
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Four legacy (schema 1) events of one note, as an old program wrote them.
private let legacyLines = [
    #"{"position":1,"eventId":"00000000-0000-4000-8000-000000000001","stream":"note/11111111-1111-4111-8111-111111111111","version":1,"type":"NoteCreated","schemaVersion":1,"recordedAt":"2020-01-01T00:00:00.000000Z","metadata":{"actor":"old@app"},"data":{"title":"Legacy","content":"old body\n","isPinned":true}}"#,
    #"{"position":2,"eventId":"00000000-0000-4000-8000-000000000002","stream":"note/11111111-1111-4111-8111-111111111111","version":2,"type":"NoteUpdated","schemaVersion":1,"recordedAt":"2020-01-02T00:00:00.000000Z","metadata":{"actor":"old@app"},"data":{"title":"Legacy 2","content":"new body\n"}}"#,
    #"{"position":3,"eventId":"00000000-0000-4000-8000-000000000003","stream":"note/11111111-1111-4111-8111-111111111111","version":3,"type":"NotePinToggled","schemaVersion":1,"recordedAt":"2020-01-03T00:00:00.000000Z","metadata":{"actor":"old@app"},"data":{"isPinned":false}}"#,
    #"{"position":4,"eventId":"00000000-0000-4000-8000-000000000004","stream":"note/11111111-1111-4111-8111-111111111111","version":4,"type":"NoteDeleted","schemaVersion":1,"recordedAt":"2020-01-04T00:00:00.000000Z","metadata":{"actor":"old@app","command":"old delete","correlationId":"00000000-0000-4000-8000-0000000000ff"},"data":{}}"#,
]

/// A valid first line for the bad-line tests.
private let goodLine =
    #"{"eventId":"00000000-0000-4000-8000-0000000000a1","stream":"note/22222222-2222-4222-8222-222222222222","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2021-01-01T00:00:00Z","metadata":{"actor":"a"},"data":{"title":"T","body":"b","pinned":false,"category":null}}"#

@Suite("Interchange: JSON Lines export and import")
struct InterchangeTests {
    @Test("importEvents(lines:) skips a byte-order mark that starts the first line, and only there")
    func linesByteOrderMark() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let s = try InterchangeScratch()
        let lines = legacyLines.map { Array($0.utf8) }
        #expect(try s.book.importEvents(lines: [mark + lines[0]] + lines.dropFirst()).appended == lines.count)
        let t = try InterchangeScratch()
        #expect(throws: NotesError.self) { try t.book.importEvents(lines: [lines[0], mark + lines[1]]) }
        #expect(try t.book.stats().events == 0, "a refused import changes nothing")
    }

    /// A store with every kind of event: legacy ones, then commands of the current program.
    private func populated() throws -> InterchangeScratch {
        let s = try InterchangeScratch()
        try s.book.importEvents(lines: legacyLines.map { Array($0.utf8) })
        let a = try s.book.add(title: "Groceries", body: "- milk\r\n- eggs", category: "Home", pinned: true)
        let b = try s.book.add(title: "Ünïcödé ✓", body: "\"quotes\" \\ and \t tabs\n\u{1}", category: "Work")
        try s.book.edit(a.id, title: "Groceries (Sat)", body: "- milk\n")
        try s.book.archive(b.id)
        try s.book.renameCategory("Work", to: "Job")
        try s.book.deleteCategory("Home")
        try s.book.trash(a.id)
        try s.book.untrash(a.id)
        try s.book.add(title: "Empty")
        return s
    }

    @Test("export, import into an empty store and export again give the same bytes, legacy events included")
    func roundTrip() throws {
        let source = try populated()
        let first = try source.export()
        let firstLines = lines(first)
        #expect(firstLines.count == Int(try source.head))
        #expect(text(firstLines[0]) == legacyLines[0], "a stored legacy event exports exactly as it was imported")
        #expect(text(first).contains(#""schemaVersion":1,"#) && text(first).contains(#""type":"NoteUpdated""#))
        #expect(text(first).contains(#""correlationId":"#), "optional metadata is exported when present")

        let target = try InterchangeScratch()
        let summary = try target.book.importEvents(lines: firstLines)
        #expect(summary == ImportSummary(events: firstLines.count, appended: firstLines.count, skipped: 0))
        let second = try target.export()
        #expect(second == first, "byte for byte, positions included")
        #expect(try target.allNotes() == source.allNotes(), "the same notes, history and versions")
        #expect(try target.book.categories() == source.book.categories())
    }

    @Test("every line has the keys in order, compact, with RFC 3339 microsecond instants")
    func lineShape() throws {
        let s = try InterchangeScratch()
        let n = try s.book.add(title: "T", body: "b", category: "C")
        let all = lines(try s.export())
        #expect(all.count == 2)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(all[1])) as? [String: Any])
        #expect(json["stream"] as? String == "note/" + n.id.uuidString)
        let expected =
            #"{"position":2,"eventId":"abcd0000-0000-4000-8000-000000000005","stream":"note/\#(n.id.uuidString)","#
            + #""version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2026-11-29T12:00:02.000000Z","#
            + #""metadata":{"actor":"ana@laptop","command":"test","correlationId":"abcd0000-0000-4000-8000-000000000003"},"#
            + #""data":{"title":"T","body":"b","pinned":false,"category":"abcd0000-0000-4000-8000-000000000002"}}"#
        #expect(text(all[1]) == expected)
    }

    @Test("a line with the device's own instant (writtenAt) imports it as metadata and exports it again")
    func writtenAtRoundTrip() throws {
        let line = goodLine.replacing(
            #"{"actor":"a"}"#, with: #"{"actor":"a","writtenAt":"2020-12-31T23:00:00.000001Z"}"#)
        let s = try InterchangeScratch()
        try s.book.importEvents(lines: [Array(line.utf8)])
        let exported = text(try s.export())
        #expect(exported.contains(#""metadata":{"actor":"a","writtenAt":"2020-12-31T23:00:00.000001Z"}"#))
        let note = Identifier(canonical: "22222222-2222-4222-8222-222222222222")!
        let revision = try #require(try s.book.history(of: note).first).revision
        #expect(revision.metadata.writtenAt == RFC3339.parse("2020-12-31T23:00:00.000001Z"))
        #expect(revision.recordedAt == RFC3339.parse("2021-01-01T00:00:00Z"), "ordered by its recorded instant")
        // Into another store: the same bytes, and a line without it keeps none.
        let again = try InterchangeScratch()
        try again.book.importEvents(lines: lines(try s.export()))
        #expect(try again.export() == s.export())
        let plain = try InterchangeScratch()
        try plain.book.importEvents(lines: [Array(goodLine.utf8)])
        #expect(!text(try plain.export()).contains("writtenAt"))
        #expect(try plain.book.history(of: note).first?.revision.metadata.writtenAt == nil)
    }

    @Test("importing twice changes nothing; a partial import resumes")
    func idempotent() throws {
        let source = try populated()
        let file = lines(try source.export())
        let target = try InterchangeScratch()
        try target.book.importEvents(lines: file.prefix(5))
        #expect(try target.head == 5)
        let resumed = try target.book.importEvents(lines: file)
        #expect(resumed.skipped == 5 && resumed.appended == file.count - 5)
        let again = try target.book.importEvents(lines: file)
        #expect(again == ImportSummary(events: file.count, appended: 0, skipped: file.count))
        #expect(try target.export() == source.export())
    }

    @Test("export --since continues after a position; chunks concatenate to the whole")
    func sinceAndChunks() throws {
        let s = try populated()
        let all = try s.export()
        let chunked = try s.export(chunkBytes: 64)
        #expect(chunked == all)
        var chunks = 0
        try s.book.exportEvents(chunkBytes: 64) { _ in chunks += 1 }
        #expect(chunks == lines(all).count, "a chunk is written as soon as it reaches the size")
        let tail = try s.export(after: 3)
        #expect(lines(tail) == Array(lines(all).dropFirst(3)))
        #expect(try s.export(after: UInt64.max).isEmpty)
    }

    /// Each bad line with the exact message; `prefix` lines come first (they are valid).
    static let badLines: [(String, String)] = [
        (#"{"a":"#, "line 2: malformed JSON: expected a value at byte 5 (found end of input)"),
        (
            goodLine.replacing(#"{"actor":"a"}"#, with: #"{"actor":"a","writtenAt":"0001-01-01T00:00:00+01:00"}"#),
            "line 2: metadata.writtenAt must be an RFC 3339 instant (years 1 to 9999) or null"
        ),
        (
            goodLine.replacing(#"{"actor":"a"}"#, with: #"{"actor":"a","writtenAt":17}"#),
            "line 2: metadata.writtenAt must be an RFC 3339 instant (years 1 to 9999) or null"
        ),
        ("[1,2]", "line 2: expected a JSON object"),
        (
            goodLine.replacing(#""pinned":false"#, with: #""pinned":"no""#),
            #"line 2: data: NoteCreated v2: field "pinned" must be true or false"#
        ),
        (
            goodLine.replacing(#""NoteCreated","schemaVersion":2"#, with: #""NoteFrobbed","schemaVersion":1"#),
            #"line 2: unknown event type "NoteFrobbed""#
        ),
        (
            goodLine.replacing(#""schemaVersion":2"#, with: #""schemaVersion":9"#),
            "line 2: NoteCreated has no schema version 9 (known: 1, 2)"
        ),
        (
            goodLine.replacing("0000000000a1", with: "xyz"),
            #"line 2: eventId "00000000-0000-4000-8000-xyz" is not a UUID"#
        ),
        (
            goodLine.replacing("2021-01-01T00:00:00Z", with: "2021-02-30T00:00:00Z"),
            #"line 2: recordedAt "2021-02-30T00:00:00Z" is not an RFC 3339 instant"#
        ),
        (
            goodLine.replacing(#""stream":"note/22222222"#, with: #""stream":"note/2222222A"#),
            #"line 2: stream "note/2222222A-2222-4222-8222-222222222222" is not note/UUID, category/UUID or tag/UUID (lowercase UUID)"#
        ),
        (
            goodLine.replacing(#""category":null"#, with: #""category":"nope""#),
            #"line 2: data: NoteCreated v2: field "category" must be a UUID or null"#
        ),
        (
            goodLine.replacing(#""body":"b","#, with: ""),
            #"line 2: data: NoteCreated v2: missing field "body""#
        ),
        (
            goodLine.replacing(#""data":{"#, with: #""data":{"x":1,"#),
            #"line 2: data: NoteCreated v2: unknown field "x""#
        ),
        (
            goodLine.replacing(#""version":1,"#, with: #""version":1,"extra":true,"#),
            #"line 2: unknown key "extra""#
        ),
        (
            goodLine.replacing(#""metadata":{"actor":"a"}"#, with: #""metadata":{"user":"a"}"#),
            #"line 2: unknown key "metadata.user""#
        ),
        (
            goodLine.replacing(#""version":1"#, with: #""version":0"#),
            #"line 2: "version" must be a whole number of at least 1"#
        ),
        (goodLine, "line 2: event id 00000000-0000-4000-8000-0000000000a1 appears twice in the file (first on line 1)"),
        (
            goodLine.replacing("a1\"", with: "a2\"").replacing(#""version":1"#, with: #""version":3"#)
                .replacing(#""NoteCreated","schemaVersion":2"#, with: #""NoteTrashed","schemaVersion":1"#)
                .replacing(#""title":"T","body":"b","pinned":false,"category":null"#, with: ""),
            "line 2: version 3 does not continue note/22222222-2222-4222-8222-222222222222, which is at version 1"
        ),
        (
            goodLine.replacing("a1\"", with: "a2\"").replacing(#""version":1"#, with: #""version":2"#),
            "line 2: NoteCreated must be version 1 of its stream, not 2"
        ),
        (
            goodLine.replacing("a1\"", with: "a2\"").replacing("note/2222", with: "category/2222"),
            "line 2: NoteCreated does not belong in stream category/22222222-2222-4222-8222-222222222222"
        ),
        (
            goodLine.replacing("a1\"", with: "a2\"").replacing(#""title":"T""#, with: #""title":" T""#)
                .replacing("2222-4222", with: "3333-4222"),
            "line 2: the title has leading or trailing white space"
        ),
    ]

    @Test("every kind of bad line is refused with its line number and reason, and nothing is imported")
    func badLinesImportNothing() throws {
        for (bad, message) in Self.badLines {
            let s = try InterchangeScratch()
            do {
                try s.book.importEvents(lines: [Array(goodLine.utf8), Array(bad.utf8)])
                Issue.record("accepted: \(bad)")
            } catch {
                #expect(error.description == message + "; nothing was imported", "for \(bad)")
                guard case .validation = error else {
                    Issue.record("\(error) should be a validation error")
                    continue
                }
            }
            #expect(try s.head == 0, "nothing of \(bad) was imported")
        }
    }

    @Test("invalid UTF-8, a body over the limit, a NUL, a version gap against the store")
    func moreBadLines() throws {
        let s = try InterchangeScratch(maxBodyBytes: 4)
        func refuse(_ lines: [[UInt8]], _ message: String) throws {
            let before = try s.head
            #expect(throws: NotesError.self) { try s.book.importEvents(lines: lines) }
            do { try s.book.importEvents(lines: lines) } catch {
                #expect(error.description == message + "; nothing was imported")
            }
            #expect(try s.head == before)
        }
        var invalid = Array(goodLine.utf8)
        let at = try #require(
            goodLine.utf8.firstIndex(of: UInt8(ascii: "T")).map {
                goodLine.utf8.distance(from: goodLine.utf8.startIndex, to: $0)
            })
        invalid[at] = 0xFF
        try refuse([invalid], "line 1: invalid UTF-8 at byte \(at)")
        try refuse(
            [Array(goodLine.replacing(#""body":"b""#, with: #""body":"bbbbb""#).utf8)],
            "line 1: the body is 5 bytes; the limit is 4 (raise it with NOTES_BODY_LIMIT=BYTES or `notes config set body-limit BYTES`)"
        )
        try refuse(
            [Array(goodLine.replacing(#""body":"b""#, with: #""body":"\u0000""#).utf8)],
            "line 1: the body contains a NUL character")
        try s.book.importEvents(lines: [Array(goodLine.utf8)])
        #expect(try s.head == 1)
        let gap = goodLine.replacing("a1\"", with: "a3\"").replacing(#""version":1"#, with: #""version":3"#)
            .replacing(#""NoteCreated","schemaVersion":2"#, with: #""NotePinned","schemaVersion":1"#)
            .replacing(#""title":"T","body":"b","pinned":false,"category":null"#, with: "")
        try refuse(
            [Array(gap.utf8)],
            "line 1: version 3 does not continue note/22222222-2222-4222-8222-222222222222, which is at version 1")
        let moved = goodLine.replacing("2222-4222", with: "4444-4222")
        try refuse(
            [Array(moved.utf8)],
            "line 1: event id 00000000-0000-4000-8000-0000000000a1 is already stored as version 1 of note/22222222-2222-4222-8222-222222222222"
        )
    }

    @Test("a large file is one transaction: a bad last line imports nothing, the good file imports everything")
    func largeAllOrNothing() throws {
        let source = try InterchangeScratch()
        var log = EventWorkload(
            EventWorkload.Spec(notes: 100, events: 2_000, categories: 5, legacyShare: 0.2, hotNoteVersions: 50))
        var written = 0
        while let e = log.next() {
            try source.book.store.append([e.event], to: e.stream)
            written += 1
        }
        let file = lines(try source.export())
        #expect(file.count == written)
        let target = try InterchangeScratch()
        #expect(throws: NotesError.self) { try target.book.importEvents(lines: file + [Array("{}".utf8)]) }
        #expect(try target.head == 0)
        try target.book.importEvents(lines: file)
        #expect(try target.export() == source.export())
        #expect(try target.allNotes() == source.allNotes())
    }

    @Test("importing into a store whose log is newer raises recordedAt: the log never goes back in time")
    func monotonic() throws {
        let s = try InterchangeScratch()
        try s.book.add(title: "Now")
        try s.book.importEvents(lines: [Array(goodLine.utf8)])
        let all = lines(try s.export())
        let json = try #require(try JSONSerialization.jsonObject(with: Data(all[1])) as? [String: Any])
        #expect(json["recordedAt"] as? String == "2026-11-29T12:00:01.000000Z", "2021 was raised to the last instant")
    }

    @Test("--upcast lifts legacy events: 1 -> N lines share the position, versions stay consecutive")
    func upcast() throws {
        let s = try InterchangeScratch()
        try s.book.importEvents(lines: legacyLines.map { Array($0.utf8) })
        let lifted = lines(try s.export(upcast: true)).map { text($0) }
        #expect(lifted.count == 5)
        let objects = try lifted.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(
            objects.map { $0["type"] as? String } == [
                "NoteCreated", "NoteRetitled", "NoteBodyEdited", "NoteUnpinned", "NoteTrashed",
            ])
        #expect(objects.map { $0["position"] as? Int } == [1, 2, 2, 3, 4])
        #expect(objects.map { $0["version"] as? Int } == [1, 2, 3, 4, 5])
        #expect(
            objects[1]["eventId"] as? String == "00000000-0000-4000-8000-000000000002", "the first keeps the stored id")
        #expect(objects[2]["eventId"] as? String != objects[1]["eventId"] as? String)
        #expect(try s.export(upcast: true) == s.export(upcast: true), "derived ids are deterministic")
        #expect(lifted[0].contains(#""data":{"title":"Legacy","body":"old body\n","pinned":true,"category":null}"#))

        let target = try InterchangeScratch()
        try target.book.importEvents(lines: lifted.map { Array($0.utf8) })
        var expected = try s.allNotes()
        expected[0].version = 5
        #expect(try target.allNotes() == expected, "the same note, one version more for the split event")
    }

    @Test("--upcast renumbers a restore's fromVersion with the versions: it names the same state after import")
    func upcastRenumbersRestores() throws {
        let s = try InterchangeScratch()
        let id = try #require(Identifier("11111111-1111-4111-8111-111111111111"))
        // The first two legacy events: a creation, and an update lifted to a retitle and an edit.
        try s.book.importEvents(lines: legacyLines.prefix(2).map { Array($0.utf8) })
        try s.book.restore(id, to: .version(1))
        try s.book.restore(id, to: .version(2))
        let target = try InterchangeScratch()
        try target.book.importEvents(lines: lines(try s.export(upcast: true)))
        let history = try target.book.history(of: id)
        #expect(history.map { $0.revision.version } == [1, 2, 3, 4, 5])
        // Each restore brought back the state it brought back in the store exported.
        for (entry, stored) in zip(history.suffix(2), [1, 2] as [UInt64]) {
            let from = try #require(entry.restoredFrom)
            #expect(try target.book.note(id, atVersion: from).body == s.book.note(id, atVersion: stored).body)
            #expect(try target.book.note(id, atVersion: from).title == s.book.note(id, atVersion: stored).title)
        }
        #expect(history.suffix(2).map { $0.restoredFrom } == [1, 3])
    }

    @Test("a restore or merge naming a version that is not an earlier one of its note is refused")
    func fromVersionRange() throws {
        let note = "note/55555555-5555-4555-8555-555555555555"
        let created =
            #"{"eventId":"00000000-0000-4000-8000-0000000000c1","stream":"\#(note)","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2021-01-01T00:00:00Z","metadata":{"actor":"a"},"data":{"title":"T","body":"b","pinned":false,"category":null}}"#
        func restored(_ from: Int) -> String {
            #"{"eventId":"00000000-0000-4000-8000-0000000000c2","stream":"\#(note)","version":2,"type":"NoteRestored","schemaVersion":1,"recordedAt":"2021-01-01T00:00:01Z","metadata":{"actor":"a"},"data":{"fromVersion":\#(from),"title":"T","body":"b","pinned":false,"category":null}}"#
        }
        let merged =
            #"{"eventId":"00000000-0000-4000-8000-0000000000c3","stream":"\#(note)","version":2,"type":"NoteBodyMerged","schemaVersion":1,"recordedAt":"2021-01-01T00:00:01Z","metadata":{"actor":"a"},"data":{"fromVersion":7,"body":"c"}}"#
        for bad in [restored(-3), restored(0), restored(2), restored(999), merged] {
            let s = try InterchangeScratch()
            #expect(throws: NotesError.self) { try s.book.importEvents(lines: [created, bad].map { Array($0.utf8) }) }
            #expect(try s.head == 0)
        }
        let s = try InterchangeScratch()
        try s.book.importEvents(lines: [created, restored(1)].map { Array($0.utf8) })
        #expect(try s.head == 2)
        // A merge from base 0 (both devices created the note) is what a sync writes.
        let fromNothing = merged.replacingOccurrences(of: #""fromVersion":7"#, with: #""fromVersion":0"#)
        let t = try InterchangeScratch()
        try t.book.importEvents(lines: [created, fromNothing].map { Array($0.utf8) })
        #expect(try t.head == 2)
    }

    @Test("a line whose event id is stored with other content is refused; the same event, or its upcast, is skipped")
    func storedIDOtherContent() throws {
        let s = try InterchangeScratch()
        try s.book.importEvents(lines: legacyLines.map { Array($0.utf8) })
        try s.book.add(title: "Now", body: "x")
        let file = lines(try s.export())
        #expect(try s.book.importEvents(lines: file).skipped == file.count)
        // The first line of an --upcast export keeps the stored legacy event's id.
        let upcast = lines(try s.export(upcast: true))
        #expect(try s.book.importEvents(lines: [upcast[0]]).skipped == 1)
        let head = try s.head
        let last = text(file[file.count - 1])
        for changed in [
            last.replacingOccurrences(of: #""title":"Now""#, with: #""title":"Later""#),
            last.replacingOccurrences(of: #""actor":""#, with: #""actor":"someone else, "#),
        ] {
            #expect(changed != last)
            #expect(throws: NotesError.self) { try s.book.importEvents(lines: [Array(changed.utf8)]) }
        }
        #expect(try s.head == head)
    }

    @Test("a line of an export taken before a sync is the stored event, with the device instant the sync kept")
    func storedIDWrittenAtOnOneSide() throws {
        let s = try InterchangeScratch()
        try s.book.add(title: "Now", body: "x")
        let line = text(lines(try s.export())[0])
        #expect(!line.contains("writtenAt"))
        // The same event as a synced store exports it: its own instant kept as `writtenAt`.
        let synced = line.replacingOccurrences(
            of: #""metadata":{"actor":""#, with: #""metadata":{"writtenAt":"2021-01-01T00:00:00Z","actor":""#)
        #expect(synced != line)
        let other = try InterchangeScratch()
        try other.book.importEvents(lines: [Array(synced.utf8)])
        #expect(try other.book.importEvents(lines: [Array(line.utf8)]).skipped == 1)
        #expect(try s.book.importEvents(lines: [Array(synced.utf8)]).skipped == 1)
        // Two different device instants still disagree.
        let later = synced.replacingOccurrences(of: "2021-01-01T00:00:00Z", with: "2022-01-01T00:00:00Z")
        #expect(throws: NotesError.self) { try other.book.importEvents(lines: [Array(later.utf8)]) }
    }

    @Test("a line longer than any event of the body limit is refused before it is read whole")
    func overlongLine() throws {
        let s = try InterchangeScratch(maxBodyBytes: 1_000)
        let limit = ImportInput.maxLineBytes(forBody: 1_000)
        #expect(limit == 6_000 + (1 << 20))
        // Valid JSON, a body of 3 MiB: over the line limit; the reader stops there.
        let line =
            #"{"eventId":"00000000-0000-4000-8000-0000000000d1","stream":"note/77777777-7777-4777-8777-777777777777","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2021-01-01T00:00:00Z","metadata":{"actor":"a"},"data":{"title":"t","body":""#
            + String(repeating: "y", count: 3 << 20) + #"","pinned":false,"category":null}}"#
        let file = s.path + "/long.jsonl"
        #expect(FileManager.default.createFile(atPath: file, contents: Data((goodLine + "\n" + line + "\n").utf8)))
        var seen: [Int] = []
        let input = try ImportInput(path: file, spoolDirectory: s.path)
        #expect(throws: InterchangeError.self) {
            try input.forEachLine(maxLineBytes: limit) { bytes, n in seen.append(n) }
        }
        #expect(seen == [1], "the long line never reached the parser")
        do {
            try s.book.importEvents(fromFile: file)
            Issue.record("imported")
        } catch {
            // The body limit the user set, not only the line limit made from it (before
            // 2026-12-07 "over 1054576 bytes" alone; with 1 MiB, "over 7340032 bytes").
            #expect(
                "\(error)".contains(
                    "line 2: the line is longer than any event with a body within the limit of 1000 bytes (raise it with "
                ),
                "\(error)")
            #expect("\(error)".contains("): it is over \(limit) bytes;"), "\(error)")
            #expect(ImportInput.bodyLimit(forLine: ImportInput.maxLineBytes(forBody: 1 << 20)) == 1 << 20)
            #expect(ImportInput.bodyLimit(forLine: .max) == nil && ImportInput.bodyLimit(forLine: 7) == nil)
        }
        #expect(try s.head == 0)
    }

    @Test("export to a file replaces it only when complete")
    func exportToFile() throws {
        let s = try populated()
        let path = s.path + "/export.jsonl"
        let summary = try s.book.exportEvents(toFile: path)
        let head = try s.head
        #expect(summary.lines == Int(head) && summary.lastPosition == head)
        #expect(Array(try Data(contentsOf: URL(filePath: path))) == (try s.export()))
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp-\(getpid())"))
        let missing = s.path + "/no/such/dir/export.jsonl"
        #expect(throws: NotesError.self) { try s.book.exportEvents(toFile: missing) }
    }

    @Test("stream names must hold a canonical lower-case UUID; event ids may be upper case")
    func uuidForms() throws {
        let s = try InterchangeScratch()
        let upper = goodLine.replacing(
            "00000000-0000-4000-8000-0000000000a1", with: "ABCDEF00-0000-4000-8000-0000000000A1")
        try s.book.importEvents(lines: [Array(upper.utf8)])
        let exported = String(decoding: try s.export(), as: UTF8.self)
        #expect(exported.contains(#""eventId":"abcdef00-0000-4000-8000-0000000000a1""#), "written in canonical form")
        for bad in [
            "0000000000004000800000000000a1ff", "00000000-0000-4000-8000-0000000000a",
            "00000000_0000-4000-8000-0000000000a1",
        ] {
            let line = goodLine.replacing("00000000-0000-4000-8000-0000000000a1", with: bad)
            #expect(throws: NotesError.self) { try s.book.importEvents(lines: [Array(line.utf8)]) }
        }
        var generator = WorkloadRandom(seed: 0x1D5)
        for _ in 0..<200 {
            let id = Identifier.random(using: &generator)
            let line = goodLine.replacing("00000000-0000-4000-8000-0000000000a1", with: id.uuidString)
                .replacing(
                    "22222222-2222-4222-8222-222222222222", with: Identifier.random(using: &generator).uuidString)
            try s.book.importEvents(lines: [Array(line.utf8)])
            #expect(String(decoding: try s.export(after: try s.head - 1), as: UTF8.self).contains(id.uuidString))
        }
    }
}
