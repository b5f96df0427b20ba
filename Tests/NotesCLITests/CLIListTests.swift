import Foundation
import Testing

/// `notes list`: every filter, sort, --reverse, --limit and their combinations, on one store
/// whose events happen at fixed, distinct instants (NOTES_NOW per command).
@Suite("CLI: list filters, sorts and limits")
struct CLIListTests {
    /// Five notes; the comments give (created, updated) in minutes after 10:00.
    ///
    /// - Apple   (0, 7)  Work        body edited last
    /// - banana  (1, 1)  none        pinned
    /// - Cherry  (2, 2)  Home
    /// - date    (3, 5)  none        archived
    /// - Elder   (4, 6)  Work        trashed
    static func populated() throws -> (Sandbox, [String: String]) {
        let s = try Sandbox()
        func at(_ minute: Int) -> [String: String?] { ["NOTES_NOW": "2026-11-29T10:0\(minute):00Z"] }
        var ids: [String: String] = [:]
        let specs: [(String, [String])] = [
            ("Apple", ["--category", "Work"]), ("banana", ["--pin"]), ("Cherry", ["--category", "Home"]),
            ("date", []), ("Elder", ["--category", "Work"]),
        ]
        for (minute, (title, extra)) in specs.enumerated() {
            let r = s.run(["add", title] + extra, env: at(minute))
            try #require(r.code == 0, "\(r)")
            ids[title] = r.line
        }
        for (args, minute) in [
            (["archive", ids["date"]!], 5), (["trash", ids["Elder"]!], 6), (["edit", ids["Apple"]!, "--body", "x"], 7),
        ] {
            try #require(s.run(args, env: at(minute)).code == 0)
        }
        return (s, ids)
    }

    @Test("titles with accents sort by their letters, in the index and in a past listing alike")
    func accentedTitlesSortByLetters() throws {
        let s = try Sandbox()
        for t in ["zebra", "\u{C5}ngstr\u{F6}m", "\u{C9}chelle", "\u{E9}mile", "apple", "Z\u{FC}rich"] { try s.add(t) }
        let want = ["\u{C5}ngstr\u{F6}m", "apple", "\u{C9}chelle", "\u{E9}mile", "zebra", "Z\u{FC}rich"]
        // Before 2026-12-06 (notes-14) the three titles starting with an accent came after zebra.
        #expect(try s.titles("--sort", "title") == want)
        #expect(try s.titles("--sort", "title", "--as-of", "now") == want)
        #expect(try s.titles("--sort", "title", "--reverse") == want.reversed())
    }

    @Test("sorts and filters each select and order the right notes")
    func filtersAndSorts() throws {
        let (s, _) = try Self.populated()
        let cases: [([String], [String])] = [
            ([], ["banana", "Apple", "Cherry"]),
            (["--sort", "updated"], ["banana", "Apple", "Cherry"]),
            (["--sort", "created"], ["banana", "Cherry", "Apple"]),
            (["--sort", "title"], ["banana", "Apple", "Cherry"]),
            (["--reverse"], ["banana", "Cherry", "Apple"]),
            (["-s", "created", "-r"], ["banana", "Apple", "Cherry"]),
            (["--sort", "title", "--reverse"], ["banana", "Cherry", "Apple"]),
            (["--limit", "2"], ["banana", "Apple"]),
            (["-n", "1"], ["banana"]),
            (["--limit", "99"], ["banana", "Apple", "Cherry"]),
            (["--pinned"], ["banana"]),
            (["--category", "Work"], ["Apple"]),
            (["--category", "work"], ["Apple"]),
            (["-c", "Home"], ["Cherry"]),
            (["--uncategorized"], ["banana"]),
            (["--archived"], ["date"]),
            (["--trashed"], ["Elder"]),
            (["--all"], ["banana", "Apple", "Elder", "date", "Cherry"]),
            (["--all", "--sort", "title"], ["banana", "Apple", "Cherry", "date", "Elder"]),
            (["--all", "--sort", "created", "--reverse"], ["banana", "Apple", "Cherry", "date", "Elder"]),
            (["--all", "--category", "Work"], ["Apple", "Elder"]),
            (["--trashed", "--category", "Work"], ["Elder"]),
            (["--all", "--uncategorized", "--sort", "title", "--reverse", "--limit", "1"], ["banana"]),
            (["--all", "--uncategorized", "--sort", "title", "--reverse"], ["banana", "date"]),
            (["--all", "--category", "Work", "--sort", "title", "--reverse"], ["Elder", "Apple"]),
            (["--archived", "--pinned"], []),
            (["--all", "--pinned", "--sort", "title"], ["banana"]),
            (["--category", "Work", "--sort", "created", "--limit", "1", "--all"], ["Elder"]),
            (["--archived", "--uncategorized", "--reverse"], ["date"]),
        ]
        for (args, expected) in cases {
            #expect(try s.titles(args) == expected, "list \(args.joined(separator: " "))")
        }
    }

    @Test("list prints aligned columns: id, pin mark, title, category, relative update time")
    func humanOutput() throws {
        let (s, ids) = try Self.populated()
        let out = try s.ok("list", "--all", env: ["NOTES_NOW": "2026-11-29T10:10:00Z"])
        #expect(out.lines.count == 5)
        let banana = try #require(out.lines.first)
        #expect(banana.hasPrefix(ids["banana"]! + "  *  banana"), "\(banana)")
        // Every title starts in the same column (after the id and the pin mark), every category too.
        for line in out.lines {
            let c = Array(line)
            #expect(c.count > 14 && String(c[8..<10]) == "  " && String(c[11..<13]) == "  " && c[13] != " ", "\(line)")
        }
        let apple = try #require(out.lines.first { $0.contains("Apple") })
        let elder = try #require(out.lines.first { $0.contains("Elder") })
        let appleWork = try #require(apple.range(of: "Work")).lowerBound
        let elderWork = try #require(elder.range(of: "Work")).lowerBound
        #expect(
            apple.distance(from: apple.startIndex, to: appleWork)
                == elder.distance(from: elder.startIndex, to: elderWork))
        #expect(apple.hasSuffix("3 minutes ago"), "relative update time: \(apple)")
        // A note that is not active says so after its time.
        #expect(elder.hasSuffix("4 minutes ago (trashed)"), "relative update time and status: \(elder)")
        let date = try #require(out.lines.first { $0.contains("date") })
        #expect(date.hasSuffix(" (archived)"), "\(date)")
        #expect(out.lines.filter { $0.hasSuffix("(trashed)") || $0.hasSuffix("(archived)") }.count == 2)
        #expect(!out.lines.contains { $0.hasSuffix(" ") }, "no trailing spaces")

        let empty = try s.ok("list", "--pinned", "--archived")
        #expect(empty.line == "no notes")
    }

    @Test("list refuses contradictory or malformed filters, naming the fix")
    func badFilters() throws {
        let s = try Sandbox()
        try s.add("A", "--category", "Work")
        let cases: [([String], Int32, String)] = [
            (["--archived", "--trashed"], 2, "--archived"),
            (["--all", "--archived"], 2, "--all"),
            (["--category", "Work", "--uncategorized"], 2, "--uncategorized"),
            (["--sort", "titel"], 2, "did you mean \"title\""),
            (["--sort", "size"], 2, "updated, created or title"),
            (["--limit", "0"], 2, "--limit"),
            (["--limit", "-3"], 2, "--limit"),
            (["--limit", "ten"], 2, "--limit"),
            (["--limit", "99999999999999999999999"], 2, "--limit"),
            (["--category", "Nope"], 3, "Nope"),
            (["extra"], 2, "unexpected argument"),
        ]
        for (args, code, text) in cases {
            let r = s.run(["list"] + args)
            #expect(r.code == code, "list \(args): \(r)")
            #expect(r.stderr.hasPrefix("notes: error: ") && r.stderr.contains(text), "list \(args): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }
}
