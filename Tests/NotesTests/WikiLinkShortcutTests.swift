import Testing

@testable import Notes

@Suite("Wiki links: the ASCII shortcut agrees with the general path")
struct WikiLinkShortcutTests {
    @Test("the parts of [[inner]]: target, target as written, label")
    func parts() {
        let pieces = ["a", "B", "1", " ", "\t", "\r", "|", "#", "\\", ".", "/", "-", "\u{0B}"]
        for inner in ShortcutAdversarialTests.texts(pieces, 5_000, seed: 0x6C69_6E6B, length: 12) {
            let ascii = WikiLink.asciiParts(inner)
            let general = WikiLink.parts(inner)
            #expect(ascii?.target == general.target, "\(inner.debugDescription)")
            #expect(ascii?.written == general.written, "\(inner.debugDescription)")
            #expect(ascii?.label == general.label, "\(inner.debugDescription)")
        }
        #expect(WikiLink.asciiParts("é") == nil)
    }
}

@Suite("Titles: the ASCII shortcut agrees with the general path")
struct TitleShortcutTests {
    @Test("validTitle: the title kept, or the same refusal")
    func titles() {
        let pieces = ["a", "B", " ", "  ", "\t", "\r", "\n", "\r\n", "\u{7F}", "\u{0B}", "é", "e\u{301}", " \u{301}"]
        var texts = ShortcutAdversarialTests.texts(pieces, 5_000, seed: 0x7469_746C, length: 8)
        texts += [
            String(repeating: "a", count: 500), String(repeating: "a", count: 501),
            " " + String(repeating: "a", count: 499) + " ",
        ]
        for text in texts {
            let shortcut = Result { () throws(NotesError) in try Notebook.validTitle(text) }
            let general = Result { () throws(NotesError) in try Notebook.validTitleByCharacters(text) }
            #expect("\(shortcut)" == "\(general)", "\(text.debugDescription)")
        }
    }
}

@Suite("Tag names: the ASCII shortcut agrees with the general path")
struct TagNameShortcutTests {
    @Test("validTagName: the name kept, or the same refusal")
    func names() {
        let pieces = ["a", "B", "1", " ", "/", "//", "\t", "\r\n", "\u{7F}", "é", "e\u{301}", " \u{301}", "-"]
        var texts = ShortcutAdversarialTests.texts(pieces, 5_000, seed: 0x7461_6773, length: 8)
        let limit = Notebook.maxTagCharacters
        texts += [String(repeating: "a", count: limit), String(repeating: "a", count: limit + 1), "/", " ", "a/b", ""]
        for text in texts {
            let shortcut = Result { () throws(NotesError) in try Notebook.validTagName(text) }
            let general = Result { () throws(NotesError) in try Notebook.validTagNameByCharacters(text) }
            #expect("\(shortcut)" == "\(general)", "\(text.debugDescription)")
        }
    }
}
