import Foundation
import Testing

@Suite("CLI: categories")
struct CLICategoryTests {
    @Test("categories lists names with counts; add, rename and delete (which uncategorizes its notes)")
    func lifecycle() throws {
        let s = try Sandbox()
        // No store yet: the listing says so and makes none, as `list` does.
        let missing = s.run(["categories"])
        #expect(missing.code == 3 && missing.stderr.contains("no store at"), "\(missing.stderr)")
        try s.add("Loose")
        #expect(try s.ok("categories").line == "no categories")
        #expect(try s.ok("categories", "--json").json() as? [Any] != nil)
        #expect(try s.ok("categories", "add", "  Work ").line == "added Work")
        let added = try s.object("categories", "add", "Home")
        #expect(added["name"] as? String == "Home" && added["count"] as? Int == 0)
        let a = try s.add("A", "--category", "Work")
        let b = try s.add("B", "--category", "work")
        let t = try s.add("T", "--category", "Work")
        try s.ok("trash", t)
        try s.add("C", "--category", "Home")

        let listing = try s.ok("categories", "--json").array()
        #expect(listing.map { $0["name"] as? String } == ["Home", "Work"])
        #expect(listing.map { $0["count"] as? Int } == [1, 2], "trashed notes are not counted")
        for c in listing { #expect(Set(c.keys) == ["name", "count"] && isJSONInteger(c["count"])) }
        let human = try s.ok("categories")
        #expect(human.lines == ["Home  1", "Work  2"])

        let renamed = try s.object("categories", "rename", "work", "Job")
        #expect(renamed["name"] as? String == "Job" && renamed["count"] as? Int == 2)
        #expect(try s.object("show", a)["category"] as? String == "Job", "notes follow the rename")
        #expect(try s.ok("categories", "rename", "Job", "JOB").line == "renamed to JOB", "a change of case is a rename")
        // Before 2026-12-07 a rename to the name it has said "renamed to JOB", though it
        // appended nothing (as `tags rename` says, it changes nothing).
        let events = try s.ok("log", "--json").stdout
        #expect(try s.ok("categories", "rename", "job", " JOB ").line == "JOB already has that name; nothing changed")
        #expect(try s.ok("log", "--json").stdout == events, "nothing was appended")

        let versions = try [a, b, t].map { try s.object("show", $0)["version"] as? Int }
        let deleted = try s.object("categories", "delete", "job")
        #expect(deleted["deleted"] as? String == "job" && deleted["uncategorized"] as? Int == 3)
        for (id, before) in zip([a, b, t], versions) {
            let note = try s.object("show", id)
            #expect(note["category"] is NSNull, "\(id) is uncategorized")
            #expect(note["version"] as? Int == (before ?? 0) + 1, "one NoteCategorized(null) in the note's own stream")
        }
        #expect(try s.object("show", t)["trashed"] as? Bool == true, "trashed notes are uncategorized too")
        let after = try s.ok("categories", "--json").array()
        #expect(after.map { $0["name"] as? String } == ["Home"])
        #expect(try s.titles("--uncategorized").sorted() == ["A", "B", "Loose"])
        #expect(s.run("list", "--category", "JOB").code == 3)
        // The name is free again.
        #expect(try s.ok("categories", "delete", "Home").line == "deleted Home; 1 note uncategorized")
        #expect(try s.ok("categories", "add", "Job").line == "added Job")
    }

    @Test(
        "every event records its actor and command; a delete's NoteCategorized(null) events sit in the notes' own streams"
    )
    func eventMetadata() throws {
        let s = try Sandbox()
        let a = try s.add("A", "--category", "Work")
        let b = s.run(["add", "B", "--category", "Work"], env: ["NOTES_ACTOR": nil, "USER": "bob"])
        #expect(b.code == 0, "\(b)")
        try s.ok("categories", "delete", "Work", env: ["NOTES_ACTOR": "carol@desk"])
        let export = try s.ok("export")
        let events = try export.lines.map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
        #expect(
            events.map { $0["type"] as? String } == [
                "CategoryCreated", "NoteCreated", "NoteCreated", "NoteCategorized", "NoteCategorized",
                "CategoryDeleted",
            ])
        let metadata = events.map { $0["metadata"] as? [String: Any] ?? [:] }
        #expect(metadata[0]["actor"] as? String == "tester@test" && metadata[0]["command"] as? String == "notes add")
        let bob = try #require(metadata[2]["actor"] as? String)
        #expect(bob.hasPrefix("bob@") && bob.count > 4, "user@host without NOTES_ACTOR: \(bob)")
        // Without USER and LOGNAME (cron, systemd, containers): the account's name, not its uid.
        if let account = getpwuid(getuid())?.pointee.pw_name.map({ String(cString: $0) }) {
            let c = s.run(["add", "C"], env: ["NOTES_ACTOR": nil, "USER": nil, "LOGNAME": nil])
            #expect(c.code == 0, "\(c)")
            let actor = try #require(try s.ok("log", "--limit", "1", "--json").array().first?["actor"] as? String)
            #expect(actor.hasPrefix(account + "@"), "no USER nor LOGNAME: \(actor)")
        }
        for m in metadata[3...] {
            #expect(m["actor"] as? String == "carol@desk" && m["command"] as? String == "notes categories")
        }
        let streams = Set(events[3...4].compactMap { $0["stream"] as? String })
        let full = try #require(try s.object("show", a)["id"] as? String)
        #expect(streams.contains("note/" + full) && streams.count == 2)
        for e in events[3...4] {
            let data = try #require(e["data"] as? [String: Any])
            #expect(data["category"] is NSNull, "NoteCategorized {category: null}")
        }
    }

    @Test("category errors: duplicates ignore case, missing names are not found, typos get a hint")
    func errors() throws {
        let s = try Sandbox()
        try s.ok("categories", "add", "Work")
        try s.ok("categories", "add", "Home")
        try s.ok("categories", "add", "Caf\u{E9}")
        let cases: [([String], Int32, String)] = [
            (["add", "work"], 2, "exists already"),
            // The same name with a combining accent (before 2026-12-06 a second category).
            (["add", "CAFE\u{301}"], 2, "exists already"),
            (["add", "   "], 2, "empty"),
            (["add"], 2, "usage"),
            (["add", "a", "b"], 2, "unexpected argument"),
            (["rename", "Work", "HOME"], 2, "exists already"),
            (["rename", "Nope", "X"], 3, "Nope"),
            (["rename", "Work"], 2, "usage"),
            (["delete", "Nope"], 3, "notes categories"),
            (["renam", "Work", "X"], 2, "did you mean \"rename\""),
            (["dlete", "Work"], 2, "did you mean \"delete\""),
        ]
        for (args, code, text) in cases {
            let r = s.run(["categories"] + args)
            #expect(r.code == code, "categories \(args): \(r)")
            #expect(r.stderr.hasPrefix("notes: error: ") && r.stderr.contains(text), "categories \(args): \(r.stderr)")
        }
        let names = try s.ok("categories", "--json").array().map { $0["name"] as? String }
        #expect(names == ["Caf\u{E9}", "Home", "Work"], "failed commands changed nothing")
        // Either spelling names it.
        let filed = try s.add("x", "--category", "cafe\u{301}")
        #expect(try s.titles("--category", "Caf\u{E9}") == ["x"], "\(filed)")
        #expect(try s.ok("categories", "--json").array().count == 3)
        #expect(s.run("categorize", "zzzz", "Work").code == 2, "zzzz is not hex")
    }
}
