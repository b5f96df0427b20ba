import EventStore
import Foundation
import Notes
import NotesInterchange
import SwiftEvolutionHistory
import TestSupport
import Testing

/// The converter on the committed sample, checked against an independent replay of the file.
@Suite("Interchange: swift-evolution history converter")
struct InterchangeHistoryTests {
    static let samplePath = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Samples/swift-evolution-sample.jsonl").path

    /// One lineage as the sample tells it, replayed with Foundation's JSON parser.
    struct Lineage {
        var paths: [String]
        var title: String?
        var text = ""
        var status: String?
        var deleted = false
        /// Note events the lineage should give: one per create/delete, one per changed
        /// title, text or status category on edit and rename.
        var events = 0
    }

    struct ReplayError: Error { let doc: String }

    static func replay() throws -> [Lineage] {
        let data = try Data(contentsOf: URL(filePath: samplePath))
        var lineages: [Lineage] = []
        var byPath: [String: Int] = [:]
        func title(_ t: String?, _ doc: String) -> String {
            if let t, !t.trimmingCharacters(in: .whitespaces).isEmpty { return t }
            return String((doc.split(separator: "/").last ?? "").dropLast(3))
        }
        for line in data.split(separator: UInt8(ascii: "\n")) {
            let e = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let doc = try #require(e["doc"] as? String)
            let op = try #require(e["op"] as? String)
            let newTitle = e["title"] as? String
            let status = e["status"] as? String
            let text = e["text"] as? String
            switch op {
            case "create":
                // NoteCreated, then the path as its source.
                lineages.append(Lineage(paths: [doc], title: newTitle, text: text ?? "", status: status, events: 2))
                byPath[doc] = lineages.count - 1
            case "edit", "rename":
                let from = op == "rename" ? try #require(e["from"] as? String) : doc
                guard let i = byPath.removeValue(forKey: from) else { throw ReplayError(doc: from) }
                byPath[doc] = i
                var l = lineages[i]
                if op == "rename" { l.paths.append(doc) }
                let titleChanged =
                    title(newTitle, doc) != title(l.title, l.paths.dropLast(op == "rename" ? 1 : 0).last ?? doc)
                let categoryChanged = ProposalStatus.category(of: status) != ProposalStatus.category(of: l.status)
                l.events +=
                    (titleChanged ? 1 : 0) + (text != l.text ? 1 : 0) + (categoryChanged ? 1 : 0)
                    + (from != doc ? 1 : 0)
                l.title = newTitle
                l.text = text ?? ""
                l.status = status
                lineages[i] = l
            case "delete":
                guard let i = byPath.removeValue(forKey: doc) else { throw ReplayError(doc: doc) }
                lineages[i].deleted = true
                lineages[i].events += 1
            default:
                Issue.record("unknown op \(op)")
            }
        }
        return lineages
    }

    @Test("the sample becomes one note per lineage, with the versions and final text of each")
    func sample() throws {
        let expected = try Self.replay()
        let s = try InterchangeScratch()
        let summary = try s.book.importHistory(fromFile: Self.samplePath)
        #expect(summary.notes == expected.count)
        #expect(summary.events == expected.reduce(0) { $0 + $1.events })
        #expect(summary.skipped == 0 && summary.appended == summary.events)
        #expect(summary.categoriesCreated == (try s.book.stats().categories) && summary.categoriesCreated > 0)

        let notes = try s.allNotes()
        #expect(notes.count == expected.count)
        let byBody = Dictionary(grouping: notes, by: \.body)
        for l in expected {
            let candidates = byBody[l.text] ?? []
            let note = try #require(
                candidates.first { $0.version == UInt64(l.events) }, "a note with the final text of \(l.paths)")
            #expect(note.trashed == l.deleted, "\(l.paths)")
            #expect(note.sourcePath == l.paths.last, "\(l.paths)")
            let category = try s.book.categoryName(note.category)
            #expect(category == ProposalStatus.category(of: l.status), "\(l.paths)")
        }

        // SE-0117, the tour's proposal: renamed from 0000-..., retitled twice, reviewed twice.
        let hot = try #require(
            expected.first { $0.paths.contains("proposals/0117-non-public-subclassable-by-default.md") })
        #expect(hot.paths.first == "proposals/0000-non-public-subclassable-by-default.md")
        let note = try #require(notes.first { $0.body == hot.text })
        #expect(note.version == UInt64(hot.events))
        #expect(hot.events == 41, "30 lines of the sample, some changing title, text and status at once, two paths")
        #expect(note.title == "Allow distinguishing between public access and public overridability")
        #expect(note.body == hot.text, "the final text equals the last revision")
        #expect(try s.book.categoryName(note.category) == "implemented")
        let revisions = try s.book.revisions(of: note.id)
        #expect(revisions.count == hot.events)
        #expect(revisions.first?.metadata.actor == "Javier Soto")
        #expect(revisions.first?.note.title == "Default classes to be non-subclassable publicly")
        #expect(revisions.filter { $0.storedType == "NoteRetitled" }.count == 2)
        #expect(note.sourcePath == "proposals/0117-non-public-subclassable-by-default.md")

        // A document's Markdown links to another lead to its note (before 2026-12-08 the notes
        // had no paths, and every such link was missing): SE-0053 links to SE-0031.
        let se31 = try #require(notes.first { $0.sourcePath == "proposals/0031-adjusting-inout-declarations.md" })
        let se53 = try #require(
            notes.first { $0.sourcePath == "proposals/0053-remove-let-from-function-parameters.md" })
        #expect(try s.book.backlinks(of: se31.id).map(\.source.id).contains(se53.id))
        #expect(
            try s.book.links(of: se53.id).contains {
                if case .note(let n) = $0.target { n.id == se31.id } else { false }
            })

        // Re-running is idempotent: derived ids are all found.
        let again = try s.book.importHistory(fromFile: Self.samplePath)
        #expect(again.appended == 0 && again.skipped == summary.events && again.categoriesCreated == 0)
        #expect(try s.allNotes() == notes)
    }

    @Test("recordedAt is the commit time, never going back in time")
    func times() throws {
        let s = try InterchangeScratch()
        try s.book.importHistory(fromFile: Self.samplePath)
        var last = ""
        var first: String?
        try s.book.exportEvents { chunk in
            for line in chunk.split(separator: UInt8(ascii: "\n")) {
                let o = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
                let at = o?["recordedAt"] as? String ?? ""
                #expect(at >= last)
                last = at
                if first == nil { first = at }
            }
        }
        #expect(first == "2015-12-12T20:16:08.000000Z", "the sample's first commit")
    }

    @Test("bad history lines are refused with their line number; nothing is imported")
    func errors() throws {
        let create =
            ##"{"doc":"proposals/a.md","commit":"c1","time":"2016-01-01T00:00:00Z","author":"A","op":"create","title":null,"status":"Accepted","text":"# A\n"}"##
        let cases: [(String, String)] = [
            (
                #"{"doc":"proposals/b.md","commit":"c2","time":"2016-01-02T00:00:00Z","author":"A","op":"edit","title":"B","status":null,"text":"x"}"#,
                "line 2: edit of proposals/b.md, which no earlier line created"
            ),
            (create, "line 2: create of proposals/a.md, which exists already"),
            (
                create.replacing(#""op":"create""#, with: #""op":"move""#),
                #"line 2: op "move" is not create, edit, rename or delete"#
            ),
            (
                create.replacing("2016-01-01T00:00:00Z", with: "soon"),
                #"line 2: time "soon" is not an RFC 3339 instant"#
            ),
            (create.replacing(#""author":"A","#, with: ""), #"line 2: missing key "author""#),
            // A new user's trial: before 2026-12-07 an empty path made a note titled "untitled".
            (
                create.replacing("proposals/a.md", with: ""),
                #"line 2: "doc" is empty: it must be the document's path (proposals/NNNN-name.md)"#
            ),
            (
                #"{"doc":"proposals/b.md","from":"","commit":"c2","time":"2016-01-02T00:00:00Z","author":"A","op":"rename","title":"B","status":null,"text":"x"}"#,
                #"line 2: "from" is empty: it must be the document's path (proposals/NNNN-name.md)"#
            ),
            ("{", "line 2: malformed JSON: expected a string key at byte 1 (found end of input)"),
        ]
        for (bad, message) in cases {
            let s = try InterchangeScratch()
            var converter = HistoryConverter()
            do {
                try converter.add(line: Array(create.utf8))
                try converter.add(line: Array(bad.utf8))
                try s.book.importHistory(converter)
                Issue.record("accepted \(bad)")
            } catch {
                #expect("\(error)" == message + "; nothing was imported")
            }
            #expect(try s.head == 0)
        }
        // A null title falls back to the file name.
        let s = try InterchangeScratch()
        var converter = HistoryConverter()
        try converter.add(line: Array(create.utf8))
        try s.book.importHistory(converter)
        #expect(try s.allNotes().map(\.title) == ["a"])
        #expect(try s.book.categories().map(\.name) == ["accepted"])
    }

    @Test("a commit dated more than a day after the clock is refused, as import refuses it")
    func commitFromTheFuture() throws {
        let create =
            ##"{"doc":"proposals/a.md","commit":"c1","time":"2016-01-01T00:00:00Z","author":"A","op":"create","title":"A","status":null,"text":"# A\n"}"##
        let edit = create.replacing(#""op":"create""#, with: #""op":"edit""#).replacing("# A", with: "# A\\nmore")
        let s = try InterchangeScratch()
        var converter = HistoryConverter()
        try converter.add(line: Array(create.utf8))
        try converter.add(line: Array(edit.replacing("2016-01-01T00:00:00Z", with: "9999-12-31T23:59:59Z").utf8))
        do {
            try s.book.importHistory(converter)
            Issue.record("a commit of 9999 was imported: every later change would be dated then")
        } catch {
            let refusal = "line 2: time 9999-12-31T23:59:59.000000Z is more than a day after this machine's clock"
            #expect("\(error)".hasPrefix(refusal), "\(error)")
            #expect("\(error)".hasSuffix("; nothing was imported"), "\(error)")
        }
        #expect(try s.head == 0)
        // A few hours ahead (another device's clock) is taken.
        var ahead = HistoryConverter()
        try ahead.add(line: Array(create.replacing("2016-01-01T00:00:00Z", with: "2026-11-29T15:00:00Z").utf8))
        #expect(try s.book.importHistory(ahead).appended == 2)
    }

    @Test("status categories follow the corpus' CATEGORY_RULES")
    func statuses() {
        let cases: [(String?, String?)] = [
            (nil, nil), ("", nil),
            ("Accepted", "accepted"), ("**Accepted with revisions**", "accepted"), ("Accpeted", "other"),
            ("Acceppted", "accepted"),
            ("Implemented (Swift 3)", "implemented"), ("[Implemented](https://x) in Swift 5", "implemented"),
            ("Accepted and implemented", "implemented"), ("Partially implemented (Swift 4)", "partially implemented"),
            ("Awaiting review", "scheduled / awaiting review"),
            ("Review scheduled for May 2", "scheduled / awaiting review"),
            ("Active review (May 1...8)", "active review"), ("Active", "active review"), ("Activated", "other"),
            ("Under active re-review", "active review"), ("Returned for revision", "returned for revision"),
            ("Withdrawn", "withdrawn"), ("Withdrawn for revision", "returned for revision"),
            ("This draft is rejected", "rejected"), ("_Rejected_", "rejected"), ("TBD", "pitch / draft"),
            ("Initial pitch", "pitch / draft"), ("Deferred", "deferred"), ("Previewing", "previewing"),
            ("Expired", "expired"), ("Something else", "other"),
        ]
        for (status, category) in cases {
            #expect(ProposalStatus.category(of: status) == category, "\(status ?? "nil")")
        }
    }
}
