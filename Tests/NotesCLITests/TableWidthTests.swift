import Notes
import Testing

@testable import NotesCLI

/// The listing's column widths and title cuts: the printable-ASCII fast paths agree with the
/// Unicode rules every other text goes through.
@Suite("Table widths and truncation")
struct TableWidthTests {
    @Test("printable ASCII is one column a byte; other text keeps its Unicode widths")
    func widths() {
        #expect(displayWidth("") == 0)
        #expect(displayWidth("Groceries ~ list 42!") == 20)
        #expect(displayWidth("tab\there") == 8)
        #expect(displayWidth("a\r\nb") == 3, "CR LF is one character")
        #expect(displayWidth("日本") == 4)
        #expect(displayWidth("e\u{301}clair") == 6, "a combining mark takes no column")
        #expect(displayWidth("🙂 ok") == 5)
        #expect(displayWidth("🇫🇷 ok") == 5, "a flag is two columns")
        #expect(displayWidth("👨\u{200D}👩\u{200D}👧 ok") == 5, "a family joined by ZWJ is one emoji")
        // Emoji drawn as emoji by default (Emoji_Presentation, East Asian Width W) outside the
        // blocks of pictographs: two columns, as terminals and wcwidth draw them.
        for emoji in ["✅", "❌", "⭐", "⚡", "⌛", "☕", "🀄", "🆗"] {
            #expect(displayWidth(emoji + " done") == 7, "\(emoji)")
        }
        // Symbols drawn as text unless asked otherwise stay one column.
        for symbol in ["✓", "☺", "©", "→", "★"] {
            #expect(displayWidth(symbol + " done") == 6, "\(symbol)")
        }
    }

    @Test("zero-width format characters take no column; keycaps and symbols with U+FE0F take two")
    func formatCharactersKeycapsAndVariationSelectors() {
        // Before 2026-12-07 a format character standing alone took a column, and a keycap or a
        // text symbol asked to be drawn as emoji (U+FE0F) took one: rows holding one stood out.
        let formats: [UInt32] = [
            0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF,
        ]
        for v in formats {
            let c = String(Character(Unicode.Scalar(v)!))
            #expect(displayWidth("a" + c + "b") == 2, "U+\(String(v, radix: 16))")
            #expect(displayWidth(c) == 0, "U+\(String(v, radix: 16)) alone")
            #expect(displayWidth("日" + c + "本") == 4, "U+\(String(v, radix: 16)) between wide ones")
        }
        #expect(displayWidth("\u{FEFF}Title") == 5, "a byte-order mark before a title")
        for keycap in ["1\u{FE0F}\u{20E3}", "#\u{FE0F}\u{20E3}", "*\u{FE0F}\u{20E3}", "0\u{FE0F}\u{20E3}"] {
            #expect(displayWidth(keycap + " ok") == 5, "\(keycap)")
        }
        for symbol in ["\u{2764}\u{FE0F}", "\u{263A}\u{FE0F}", "\u{2714}\u{FE0F}", "\u{00A9}\u{FE0F}"] {
            #expect(displayWidth(symbol + " ok") == 5, "\(symbol)")
        }
        // Without U+FE0F they are text, one column; an emoji already two stays two.
        #expect(displayWidth("\u{2764} ok") == 4 && displayWidth("\u{263A} ok") == 4)
        #expect(displayWidth("\u{2705}\u{FE0F} ok") == 5)
        // A letter has no emoji form: U+FE0F after it changes nothing (a review, 2026-12-07).
        #expect(displayWidth("a\u{FE0F}b") == 2 && displayWidth("\u{00E9}\u{FE0F} ok") == 4)
        #expect(displayWidth("1\u{FE0F}\u{20E3}\u{200B}2\u{FE0F}\u{20E3}") == 4)
        // A cut counts them so too.
        #expect(
            truncate(String(repeating: "\u{2764}\u{FE0F}", count: 40), 10) == String(
                repeating: "\u{2764}\u{FE0F}", count: 4) + "…")
        #expect(truncate("a\u{200B}b\u{200B}c", 3) == "a\u{200B}b\u{200B}c")
    }

    @Test("a title is cut at the width with an ellipsis, and line breaks become spaces")
    func truncation() {
        #expect(truncate("short", 60) == "short")
        #expect(truncate(String(repeating: "x", count: 60), 60) == String(repeating: "x", count: 60))
        #expect(truncate(String(repeating: "x", count: 61), 60) == String(repeating: "x", count: 59) + "…")
        #expect(truncate("two\nlines", 60) == "two lines")
        #expect(truncate("crlf\r\nend", 60) == "crlf end")
        #expect(truncate("ééé", 2) == "é…")
        // Cut by columns, not characters: a CJK title of 60 characters took 120 columns and
        // widened every row of the listing (before 2026-12-07).
        #expect(truncate("日本語日本語", 5) == "日本…")
        #expect(truncate("日本語日本語", 12) == "日本語日本語")
        let wide = truncate(String(repeating: "日本語", count: 40), 60)
        #expect(displayWidth(wide) == 59 && wide.hasSuffix("…"), "\(wide)")
        #expect(displayWidth(truncate(String(repeating: "🇫🇷", count: 40), 60)) <= 60)
        #expect(displayWidth(truncate(String(repeating: "✅ ", count: 40), 60)) <= 60)
    }

    @Test("every command is found by its name, and no other name is")
    func commandsByName() {
        for c in allCommands { #expect(findCommand(c.name)?.name == c.name, "\(c.name)") }
        #expect(findCommand("help")?.name == "help")
        #expect(findCommand("lists") == nil && findCommand("") == nil)
    }
}

@Suite("The sync summary line")
struct SyncSummaryTests {
    @Test(
        "events the remote already held (an earlier, killed sync's) are said to be confirmed, not left as 'pushed 0, pulled 0'"
    )
    func earlierPushConfirmed() {
        var report = SyncReport()
        report.remoteHead = 15_021
        #expect(syncSummary(report) == "pushed 0, pulled 0, merged 0, conflicts 0; at position 15021")
        report.confirmedInPlace = 15_020
        // Not "an earlier sync had sent": a store that joins with a history another device pushed
        // too never sent them (before 2026-12-06; a new user's trial).
        #expect(
            syncSummary(report)
                == "pushed 0, pulled 0, merged 0, conflicts 0, 15020 events the remote already held confirmed; at position 15021"
        )
        // Its own pushes confirmed by the remote's answer are not counted again.
        report.pushed = 20
        report.confirmedInPlace = 20
        #expect(syncSummary(report) == "pushed 20, pulled 0, merged 0, conflicts 0; at position 15021")
        // Those that came back with another device's events, confirmed by a rebase, count too.
        report.pushed = 6
        report.pulled = 7
        report.confirmedInPlace = 6
        report.confirmedByRebase = 7
        #expect(
            syncSummary(report)
                == "pushed 6, pulled 7, merged 0, conflicts 0, 7 events the remote already held confirmed; at position 15021"
        )
    }

    @Test("a conflict another device recorded is said to be pulled, so the line agrees with the exit 4 after it")
    func pulledConflict() {
        var report = SyncReport()
        report.remoteHead = 12
        report.pulled = 3
        report.conflictsPulled = 1
        report.unresolvedConflicts = 1
        #expect(
            syncSummary(report)
                == "pushed 0, pulled 3, merged 0, conflicts 0, 1 conflict pulled from another device; at position 12")
        report.conflicts = 1
        report.conflictsPulled = 2
        #expect(
            syncSummary(report)
                == "pushed 0, pulled 3, merged 0, conflicts 1, 2 conflicts pulled from another device; at position 12")
    }

    @Test("a repair of crossed pushes says what it joined and moved")
    func crossedPushRepair() {
        var report = SyncReport()
        report.remoteHead = 9
        report.namesMerged = 1
        report.refiled = 2
        #expect(
            syncSummary(report)
                == "pushed 0, pulled 0, merged 0, conflicts 0, 1 same-named category or tag joined, 2 notes moved out of categories or tags deleted or merged elsewhere; at position 9"
        )
        report.namesMerged = 2
        report.refiled = 1
        report.confirmedInPlace = 1
        #expect(
            syncSummary(report)
                == "pushed 0, pulled 0, merged 0, conflicts 0, 1 event the remote already held confirmed, 2 same-named categories or tags joined, 1 note moved out of categories or tags deleted or merged elsewhere; at position 9"
        )
    }
}
