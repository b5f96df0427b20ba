import Basics
import Notes
import Testing

@testable import NotesInterchange

/// The import shortcuts against their general paths on what the existing suites leave out:
/// every ASCII control, marks that join a space, a string's special byte at every offset of the
/// word-at-a-time skip, and ids stored or repeated on the unstored append of an empty store.
@Suite("Import shortcuts: adversarial input")
struct ImportShortcutAdversarialTests {
    static let controls = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + ["\u{7F}"]

    @Test("plainText, oneLine and fileStem with every control and joining marks")
    func markdownNames() {
        let pieces =
            ["a", "B", " ", "  ", "/", ".md", ".", "#", "~", "=", "$", "%", "]", ">", ")", "(", "-"] + Self.controls + [
                " \u{301}", "\u{0600} ", "\u{0085}", "\u{00A0}", "\u{2028}", "\u{3000}", "\r\n", "/\u{301}",
            ]
        for text in MarkdownShortcutTests.texts(pieces, 8_000, seed: 0x6E61_6D65, length: 9) {
            MarkdownShortcutTests.expectAgreement(text)
        }
    }

    static let base =
        #"{"position":3,"eventId":"6f1a0000-0000-4000-8000-000000000001","stream":"note/6f1a0000-0000-4000-8000-0000000000aa","version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2025-01-01T00:00:00Z","metadata":{"actor":"a","command":null,"causationId":null,"correlationId":null},"data":{"title":"T","body":"BODY","pinned":true,"category":null}}"#

    @Test("a body's special byte or escape at every offset: the fast reader agrees with the generic parser")
    func stringRuns() {
        let specials = [
            "\"", "\\\"", "\\\\", "\\n", "\\u0000", "\\u00e9", "\\ud83d\\ude00", "\\ud83d", "\\ude00", "\\ud83dx",
            "\u{7F}", "é", "\u{1F600}", "\t", "\u{1}", "\u{1F}", "\\x", "\\", "\\u12", "\\/", "\\uD83D\\uDE00",
        ]
        var accepted = 0
        for special in specials {
            for before in 0..<20 {
                for after in [0, 1, 7, 8, 9] {
                    let body = String(repeating: "p", count: before) + special + String(repeating: "q", count: after)
                    var line = Array(Self.base.replacing("BODY", with: body).utf8)
                    if ImportFastPathTests.agree(line) { accepted += 1 }
                    // A raw byte that is not UTF-8, in the run or after it.
                    if let i = line.firstIndex(of: UInt8(ascii: "p")) ?? line.firstIndex(of: UInt8(ascii: "q")) {
                        line[i] = 0xFF
                        ImportFastPathTests.agree(line)
                        line[i] = 0x00
                        ImportFastPathTests.agree(line)
                    }
                }
            }
        }
        #expect(accepted > 500, "\(accepted) accepted")
    }

    @Test("keys the in-place comparison must not take: prefixes, longer names, escapes, duplicates")
    func keys() {
        let variants = [
            Self.base.replacing(#""type":"#, with: #""typ":"#), Self.base.replacing(#""type":"#, with: #""types":"#),
            Self.base.replacing(#""type":"#, with: #""type" :"#),
            Self.base.replacing(#""type":"#, with: #""\u0074ype":"#),
            Self.base.replacing(#""title":"#, with: #""titl\u0065":"#),
            Self.base.replacing(#""title":"T","#, with: #""title":"T","title":"U","#),
            Self.base.replacing(#""actor":"#, with: #""actor\u0000":"#),
            Self.base.replacing(#""body":"#, with: #""bod":"#), Self.base.replacing(#""body":"#, with: #""body\"":"#),
            Self.base.replacing(#""metadata":"#, with: #""metadata" "#),
        ]
        for v in variants { ImportFastPathTests.agree(Array(v.utf8)) }
    }

    @Test("an empty store: an id twice in a file, or a file imported twice")
    func emptyStoreIDs() throws {
        let scratch = try InterchangeScratch()
        let line = Array(Self.base.replacing("BODY", with: "b").utf8)
        #expect(throws: NotesError.self) { try scratch.book.importEvents(lines: [line, line]) }
        #expect(try scratch.head == 0)
        let summary = try scratch.book.importEvents(lines: [line])
        #expect(summary.appended == 1)
        let again = try scratch.book.importEvents(lines: [line])
        #expect(again.appended == 0 && again.skipped == 1)
        #expect(try scratch.head == 1)
        // The same from a file, parsed alongside the unstored appends of an empty store.
        let empty = try InterchangeScratch()
        let path = try ImportFileTests.write([line, line], in: empty)
        #expect(throws: NotesError.self) { try empty.book.importEvents(fromFile: path) }
        #expect(try empty.head == 0)
    }
}
