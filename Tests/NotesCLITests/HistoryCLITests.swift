import Basics
import EventStore
import Foundation
import Notes
import Testing

/// Issue 5's commands end to end through the built binary, with NOTES_NOW fixing the clock of
/// every run and TZ=UTC fixing local dates.
@Suite("CLI: history, show --at, diff, blame, restore, undo, log, --as-of")
struct HistoryCLITests {
    /// `2026-11-01T<10 + hour>:00:00Z`.
    static func hour(_ h: Int) -> String {
        "2026-11-01T" + String(String(100 + 10 + h).suffix(2)) + ":00:00Z"
    }

    /// Runs `notes args` at the instant `now` (default: the sandbox's fixed now, 2026-11-29).
    @discardableResult
    static func run(_ s: Sandbox, _ args: [String], now: String = fixedNow, actor: String? = nil) -> CLIRun {
        var env: [String: String?] = ["NOTES_NOW": now, "TZ": "UTC"]
        if let actor { env["NOTES_ACTOR"] = actor }
        return s.run(args, env: env)
    }

    @discardableResult
    static func ok(_ s: Sandbox, _ args: String..., now: String = fixedNow, actor: String? = nil) throws -> CLIRun {
        let r = run(s, args, now: now, actor: actor)
        try #require(r.code == 0, "notes \(args.joined(separator: " ")) failed: \(r)")
        return r
    }

    /// v1 at +0h (Home), v2 body at +1h, v3 title at +2h, v4 pinned at +3h, v5 category Work at
    /// +4h, v6 trashed at +5h.
    static func story(_ s: Sandbox) throws -> String {
        let id = try ok(s, "add", "Groceries", "--body", "milk\neggs\n", "-c", "Home", now: hour(0)).line
        try ok(s, "edit", id, "--body", "milk\neggs\nbread\n", now: hour(1))
        try ok(s, "edit", id, "--title", "Shopping", now: hour(2))
        try ok(s, "pin", id, now: hour(3))
        try ok(s, "categorize", id, "Work", now: hour(4))
        try ok(s, "trash", id, now: hour(5))
        return id
    }

    @Test("history shows the device's own instant (writtenAt) when it differs from the recorded one")
    func historyShowsWrittenAt() throws {
        let s = try Sandbox()
        let id = try Self.ok(s, "add", "Groceries", "--body", "milk\n", now: Self.hour(0)).line
        try Self.ok(s, "edit", id, "--body", "milk\neggs\n", now: Self.hour(1))
        try Self.ok(s, "edit", id, "--body", "milk\neggs\nbread\n", now: Self.hour(2))
        // As a shared log would hand them over: v1 written on the device two hours before the
        // shared log recorded it, v2 at the very instant it was recorded, v3 3.2 seconds before
        // (the sync's own delay).
        var lines = try Self.ok(s, "export").stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        lines[0] = lines[0].replacingOccurrences(
            of: #"},"data":"#, with: #","writtenAt":"2026-11-01T08:00:00.000000Z"},"data":"#)
        lines[1] = lines[1].replacingOccurrences(
            of: #"},"data":"#, with: #","writtenAt":"2026-11-01T11:00:00.000000Z"},"data":"#)
        lines[2] = lines[2].replacingOccurrences(
            of: #"},"data":"#, with: #","writtenAt":"2026-11-01T11:59:56.800000Z"},"data":"#)
        let other = s.path("other")
        let exported = lines.joined(separator: "\n") + "\n"
        #expect(s.run(["import", "--store", other, "-"], stdin: Array(exported.utf8)).code == 0)
        #expect(try Self.ok(s, "export", "--store", other).stdout == exported, "writtenAt round-trips")
        #expect(try Self.ok(s, "verify", "--store", other).line.hasPrefix("ok:"))
        let text = try Self.ok(s, "history", "--store", other, id).lines
        #expect(text.count == 3)
        #expect(text.first?.hasSuffix("(written 2026-11-01T08:00:00Z on the device)") == true, "\(text)")
        #expect(text[1].contains("written") == false, "the same instant is not repeated")
        // Seconds apart, as every event a sync pushes is: not repeated on every line of the table
        // either (before 2026-12-06 each synced event's line ended with its instant to the
        // microsecond; a new user's trial). --json keeps it exact.
        #expect(text[2].contains("written") == false, "\(text)")
        let json = try Self.ok(s, "history", "--store", other, id, "--json").stdout
        #expect(json.contains(#""writtenAt": "2026-11-01T08:00:00.000000Z""#), "\(json)")
        #expect(json.contains(#""writtenAt": "2026-11-01T11:59:56.800000Z""#), "\(json)")
        #expect(json.components(separatedBy: "writtenAt").count == 3, "only where it differs")
        // Time travel orders by the recorded instant: at 09:00 the note was not in the log yet.
        let early = Self.run(s, ["show", "--store", other, id, "--at", "2026-11-01T09:00:00Z"])
        #expect(early.code != 0, "\(early)")
    }

    @Test("history prints one aligned line per event; --json has version, position, type, recordedAt, actor, changes")
    func history() throws {
        let s = try Sandbox()
        let id = try Self.story(s)
        let text = try Self.ok(s, "history", id).lines
        #expect(
            text == [
                "v1  2026-11-01  tester@test  NoteCreated      created \"Groceries\" in Home",
                "v2  2026-11-01  tester@test  NoteBodyEdited   body +1 -0 lines",
                "v3  2026-11-01  tester@test  NoteRetitled     title \"Groceries\" -> \"Shopping\"",
                "v4  2026-11-01  tester@test  NotePinned       pinned",
                "v5  2026-11-01  tester@test  NoteCategorized  category Home -> Work",
                "v6  2026-11-01  tester@test  NoteTrashed      trashed",
            ])
        // Recent events read relative to now.
        let recent = try Self.ok(s, "history", id, now: "2026-11-01T17:30:00Z").lines
        #expect(recent.first?.contains("7 hours ago") == true && recent.last?.contains("2 hours ago") == true)

        let json = try Self.run(s, ["history", id, "--json"]).array()
        #expect(json.count == 6)
        for (i, e) in json.enumerated() {
            #expect(e["version"] as? Int == i + 1 && isJSONInteger(e["position"]))
            #expect(e["actor"] as? String == "tester@test")
            #expect(e["recordedAt"] as? String == Self.hour(i).replacingOccurrences(of: ":00Z", with: ":00.000000Z"))
        }
        #expect(
            json.map { $0["type"] as? String } == [
                "NoteCreated", "NoteBodyEdited", "NoteRetitled", "NotePinned", "NoteCategorized", "NoteTrashed",
            ])
        let body = try #require((json[1]["changes"] as? [[String: Any]])?.first)
        #expect(body["field"] as? String == "body" && body["added"] as? Int == 1 && body["removed"] as? Int == 0)
        let title = try #require((json[2]["changes"] as? [[String: Any]])?.first)
        #expect(title["from"] as? String == "Groceries" && title["to"] as? String == "Shopping")
        let category = try #require((json[4]["changes"] as? [[String: Any]])?.first)
        #expect(category["from"] as? String == "Home" && category["to"] as? String == "Work")
        let trashed = try #require((json[5]["changes"] as? [[String: Any]])?.first)
        #expect(isJSONBool(trashed["from"]) && trashed["to"] as? Bool == true)

        #expect(Self.run(s, ["history", "ffffffff"]).code == 3)
    }

    @Test("show --at takes vN, N and every instant form; beyond the head or before creation exits 3")
    func showAt() throws {
        let s = try Sandbox()
        let id = try Self.story(s)
        func version(_ at: String, now: String = fixedNow) throws -> Int? {
            let r = Self.run(s, ["show", id, "--at", at, "--json"], now: now)
            try #require(r.code == 0, "show --at \(at): \(r)")
            return try r.object()["version"] as? Int
        }
        #expect(try version("v2") == 2)
        #expect(try version("V2") == 2, "as a shift key or an autocapitalizing keyboard types it")
        #expect(try version("2") == 2)
        #expect(try version("2026-11-01T11:00:00Z") == 2, "exactly at an event")
        #expect(try version("2026-11-01T11:59:59.999999Z") == 2, "between two events")
        #expect(try version("2026-11-01 12:30:00+00:00") == 3)
        #expect(try version("2026-11-01T13:30") == 4, "local wall-clock time")
        #expect(try version("2026-11-02") == 6, "local midnight")
        #expect(try version("2h ago", now: "2026-11-01T12:30:00Z") == 1)
        #expect(try version("yesterday", now: "2026-11-03T09:00:00Z") == 6)
        // `now` is never before the log's last event (a clock behind it, or an import dated
        // ahead); a relative form counts from the clock alone.
        #expect(try version("now", now: "2026-11-01T11:30:00Z") == 6)
        #expect(try version("0 seconds ago", now: "2026-11-01T11:30:00Z") == 2)
        let old = try Self.ok(s, "show", id, "--at", "v1")
        #expect(old.lines.first == "Groceries" && old.stdout.hasSuffix("milk\neggs\n"))
        #expect(try Self.ok(s, "show", id, "--at", " 1 ").stdout == old.stdout, "a version with spaces around it")

        for at in ["v0", "0", "v7", "99999999999999999999", "2026-10-31", "2026-11-01T09:59:59Z"] {
            let r = Self.run(s, ["show", id, "--at", at])
            #expect(r.code == 3, "--at \(at): \(r)")
        }
        let yesterday = Self.run(s, ["show", id, "--at", "yesterday"], now: "2026-11-01T20:00:00Z")
        #expect(yesterday.code == 3 && yesterday.stderr.contains("did not exist yet"))
        #expect(Self.run(s, ["show", id, "--at", "soon"]).code == 2)
    }

    @Test("diff prints field changes then a unified body diff; identical versions say so in one line")
    func diff() throws {
        let s = try Sandbox()
        let id = try Self.story(s)
        let short = String(id.prefix(8))
        let r = try Self.ok(s, "diff", id, "1", "v5")
        #expect(
            r.stdout == """
                title: "Groceries" -> "Shopping"
                category: Home -> Work
                pinned: false -> true
                --- a/\(short)\tv1
                +++ b/\(short)\tv5
                @@ -1,2 +1,3 @@
                 milk
                 eggs
                +bread

                """)
        #expect(!r.stdout.contains("\u{1B}"), "no color without a terminal")
        // TO defaults to the head; instants work on both sides.
        let toHead = try Self.ok(s, "diff", id, "2026-11-01T12:00:00Z").stdout
        #expect(toHead == "category: Home -> Work\npinned: false -> true\ntrashed: false -> true\n")
        // One version twice says so, on standard output (before 2026-12-07 it printed nothing).
        for (a, b, v) in [("3", "3", 3), ("v2", "2026-11-01T11:30:00Z", 2), ("2026-11-01T11:00:00Z", "v2", 2)] {
            let same = Self.run(s, ["diff", id, a, b])
            #expect(
                same.code == 0 && same.stderr.isEmpty
                    && same.stdout == "\(short) v\(v) and v\(v) are the same version: nothing differs\n",
                "\(a) \(b): \(same)")
        }
        let json = try Self.run(s, ["diff", id, "v1", "v2", "--json"]).object()
        #expect(json["from"] as? Int == 1 && json["to"] as? Int == 2)
        #expect((json["fields"] as? [Any])?.isEmpty == true)
        let hunk = try #require((json["hunks"] as? [[String: Any]])?.first)
        #expect(hunk["oldStart"] as? Int == 1 && hunk["oldCount"] as? Int == 2 && hunk["newCount"] as? Int == 3)
        let lines = try #require(hunk["lines"] as? [[String: Any]])
        #expect(lines.map { $0["kind"] as? String } == ["context", "context", "added"])
        #expect(lines.last?["text"] as? String == "bread")
        let empty = try Self.run(s, ["diff", id, "4", "4", "--json"]).object()
        #expect((empty["hunks"] as? [Any])?.isEmpty == true && (empty["fields"] as? [Any])?.isEmpty == true)
        #expect(empty["from"] as? Int == 4 && empty["to"] as? Int == 4 && empty.count == 4, "the same keys as ever")
        // Two versions alike (trashed, then taken out of the trash) say so too.
        try Self.ok(s, "untrash", id, now: Self.hour(6))
        #expect(try Self.ok(s, "diff", id, "5", "7").stdout == "\(short) v5 and v7 do not differ\n")
        #expect(Self.run(s, ["diff", id, "v9"]).code == 3)
        #expect(Self.run(s, ["diff", id]).code == 2)
    }

    @Test("blame shows each body line with version, date and actor, aligned; after a restore too")
    func blame() throws {
        let s = try Sandbox()
        let id = try Self.ok(s, "add", "Poem", "--body", "one\ntwo\n", now: Self.hour(0)).line
        try Self.ok(s, "edit", id, "--body", "one\n2\n", now: Self.hour(1), actor: "bo")
        try Self.ok(s, "restore", id, "--to", "1", now: Self.hour(2), actor: "b")
        try Self.ok(s, "edit", id, "--body", "one\ntwo\nthree", now: "2026-11-12T10:00:00Z", actor: "bo")
        #expect(
            try Self.ok(s, "blame", id).lines == [
                "v1  2026-11-01  tester@test | one",
                "v3  2026-11-01  b           | two",
                "v4  2026-11-12  bo          | three",
            ])
        #expect(
            try Self.ok(s, "blame", id, "--at", "v2").lines == [
                "v1  2026-11-01  tester@test | one",
                "v2  2026-11-01  bo          | 2",
            ])
        let json = try Self.run(s, ["blame", id, "--json"]).array()
        #expect(json.map { $0["version"] as? Int } == [1, 3, 4])
        #expect(json.map { $0["line"] as? Int } == [1, 2, 3])
        #expect(json.last?["newline"] as? Bool == false && json.last?["actor"] as? String == "bo")
        #expect(Self.run(s, ["blame", id, "--at", "v5"]).code == 3)
    }

    @Test("blame of an empty body says so, with the version that emptied it, exit 0; --json is an empty array")
    func blameOfAnEmptyBody() throws {
        let s = try Sandbox()
        let id = try Self.ok(s, "add", "Empty", now: Self.hour(0)).line
        // Before 2026-12-07 it printed nothing, as a command that did nothing.
        #expect(
            try Self.ok(s, "blame", id).stdout
                == "\(id) v1 has an empty body (since v1, 2026-11-01, tester@test): no lines to blame\n")
        try Self.ok(s, "edit", id, "--body", "one\n", now: Self.hour(1))
        try Self.ok(s, "edit", id, "--body", "", now: Self.hour(2), actor: "bob")
        try Self.ok(s, "edit", id, "--title", "Still empty", now: Self.hour(3))
        #expect(
            try Self.ok(s, "blame", id).line
                == "\(id) v4 has an empty body (since v3, 2026-11-01, bob): no lines to blame")
        #expect(try Self.ok(s, "blame", id, "--at", "2").line.hasPrefix("v2  2026-11-01  tester@test | one"))
        #expect(try Self.ok(s, "blame", id, "--json").array().isEmpty)
        #expect(try Self.ok(s, "blame", id, "--json", "--at", "1").stdout == "[]\n")
    }

    @Test("restore appends NoteRestored (untrashing); nothing to change says so; conflicts exit 4")
    func restore() throws {
        let s = try Sandbox()
        let id = try Self.story(s)
        let r = try Self.ok(s, "restore", id, "--to", "v2")
        #expect(r.line == "\(id) v7 (restored from v2)")
        let note = try s.object("show", id)
        #expect(note["title"] as? String == "Groceries" && note["category"] as? String == "Home")
        #expect(note["trashed"] as? Bool == false && note["pinned"] as? Bool == false)
        #expect(note["body"] as? String == "milk\neggs\nbread\n")
        let again = try Self.ok(s, "restore", id, "--to", "2026-11-01T11:00:00Z")
        #expect(again.line == "\(id) v7 is already as it was at v2; nothing changed")
        #expect(try s.object("show", id)["version"] as? Int == 7)

        let conflict = Self.run(s, ["restore", id, "--to", "1", "--expect-version", "3"])
        #expect(conflict.code == 4, "\(conflict)")
        let json = try Self.run(s, ["restore", id, "--to", "1", "--expect-version", "7", "--json"]).object()
        #expect(json["version"] as? Int == 8 && json["restoredFrom"] as? Int == 1 && json["appended"] as? Bool == true)
        #expect(json["deletedCategory"] is NSNull)
        #expect(Self.run(s, ["restore", id, "--to", "v99"]).code == 3)
        #expect(Self.run(s, ["restore", id]).code == 2)

        // The restored version's category was deleted since: restored uncategorized, with a warning.
        try Self.ok(s, "categories", "delete", "Home")
        let dropped = try Self.ok(s, "restore", id, "--to", "v2")
        #expect(dropped.line.hasSuffix("(restored from v2)"))
        #expect(dropped.stderr.contains("\"Home\", deleted since"))
        #expect(try s.object("show", id)["category"] is NSNull)
        // Again: nothing left to change, but the note is not as v2 was (its category is gone).
        let same = try Self.ok(s, "restore", id, "--to", "v2")
        #expect(same.line.hasSuffix("is already as v2 was, but for what was deleted since; nothing changed"), "\(same)")
    }

    @Test("undo restores the version before the last event; undo of a restore; a new note has nothing to undo")
    func undo() throws {
        let s = try Sandbox()
        let id = try Self.ok(s, "add", "A", "--body", "1\n", now: Self.hour(0)).line
        let fresh = Self.run(s, ["undo", id])
        #expect(fresh.code == 2 && fresh.stderr.contains("nothing to undo"))
        try Self.ok(s, "edit", id, "--body", "2\n", now: Self.hour(1))
        try Self.ok(s, "restore", id, "--to", "1", now: Self.hour(2))
        #expect(try Self.ok(s, "undo", id).line == "\(id) v4 (back to v2)")
        #expect(try s.object("show", id)["body"] as? String == "2\n")
        try Self.ok(s, "archive", id)
        #expect(try Self.ok(s, "undo", id, "--json").object()["archived"] as? Bool == false)
        #expect(Self.run(s, ["undo", id, "--expect-version", "1"]).code == 4)
        let history = try Self.ok(s, "history", id).lines
        #expect(history.count == 6 && history.last?.hasSuffix("NoteUnarchived  unarchived") == true)
    }

    @Test("undo right after add --tag has nothing to undo, as after add; a later tag command is undone alone")
    func undoAfterAddWithTags() throws {
        let s = try Sandbox()
        let id = try Self.ok(s, "add", "A", "--tag", "work", "--tag", "home", now: Self.hour(0))
            .line
        let before = try Self.ok(s, "export").stdout
        // Before 2026-12-07 this took the tags off (exit 0): a state no command made.
        let r = Self.run(s, ["undo", id])
        CLIErrorTests.expectFailure(
            r, 2, mentioning: "nothing to undo: note \(id) has only the command that created it")
        #expect(try Self.ok(s, "export").stdout == before, "nothing was written")
        func tags() throws -> [String] { try #require(try s.object("show", id)["tags"] as? [String]) }
        #expect(try tags() == ["home", "work"])
        try Self.ok(s, "tag", id, "later", now: Self.hour(1))
        #expect(try Self.ok(s, "undo", id).line == "\(id) v5 (back to v3)")
        #expect(try tags() == ["home", "work"])
        // Two tags in one command are undone together, back to the creation's tags.
        try Self.ok(s, "tag", id, "x", "y", now: Self.hour(2))
        #expect(try Self.ok(s, "undo", id).line.hasSuffix("(back to v5)"))
        #expect(try tags() == ["home", "work"])
        // Every other option of add writes into the one creation event; with tags and a new
        // category besides, still one command.
        let all = try Self.ok(s, "add", "B", "-c", "New", "--pin", "--tag", "t", "--body", "b\n").line
        CLIErrorTests.expectFailure(Self.run(s, ["undo", all]), 2, mentioning: "nothing to undo")
        let category = try Self.ok(s, "add", "C", "-c", "Other").line
        CLIErrorTests.expectFailure(Self.run(s, ["undo", category]), 2, mentioning: "nothing to undo")
        #expect(try s.object("show", all)["tags"] as? [String] == ["t"])
    }

    @Test("log: newest first with summaries and category events; filters; --reverse; --json")
    func log() throws {
        let s = try Sandbox()
        let a = try Self.ok(s, "add", "A", "-c", "Home", now: Self.hour(0)).line
        let b = try Self.ok(s, "add", "B", now: Self.hour(1), actor: "bob").line
        try Self.ok(s, "edit", a, "--title", "A2", now: Self.hour(2))
        try Self.ok(s, "categories", "rename", "Home", "House", now: Self.hour(3))
        let lines = try Self.ok(s, "log").lines
        #expect(
            lines == [
                "2026-11-01  tester@test  category House  CategoryRenamed  category renamed \"Home\" -> \"House\"",
                "2026-11-01  tester@test  \(a) v2     NoteRetitled     title \"A\" -> \"A2\"",
                "2026-11-01  bob          \(b) v1     NoteCreated      created \"B\"",
                "2026-11-01  tester@test  \(a) v1     NoteCreated      created \"A\" in Home",
                "2026-11-01  tester@test  category Home   CategoryCreated  created category \"Home\"",
            ])
        func positions(_ args: String...) throws -> [Int] {
            let r = Self.run(s, ["log"] + args + ["--json"])
            #expect(r.code == 0, "log \(args): \(r)")
            return try r.array().map { try #require($0["position"] as? Int) }
        }
        #expect(try positions("--reverse", "--limit", "2") == [1, 2])
        #expect(try positions("-n", "1") == [5])
        #expect(try positions("--actor", "bob") == [3])
        // Any case, the whole name (before 2026-12-07 `BOB` found nothing and said nothing).
        #expect(try positions("--actor", "BOB") == [3])
        #expect(try positions("--actor", "bo").isEmpty)
        let none = Self.run(s, ["log", "--actor", "bo"])
        #expect(none.code == 0 && none.stdout.contains("no events by \"bo\" (an actor is matched whole"), "\(none)")
        #expect(try positions("--note", a) == [4, 2])
        #expect(try positions("--type", "NoteCreated") == [3, 2])
        #expect(try positions("--since", Self.hour(1), "--until", Self.hour(2)) == [4, 3])
        #expect(try positions("--since", "2026-11-01T11:00", "--reverse") == [3, 4, 5])
        #expect(try positions("--until", "2026-10-01").isEmpty)
        let json = try Self.run(s, ["log", "--json", "-n", "2"]).array()
        #expect(json[0]["type"] as? String == "CategoryRenamed" && json[0]["name"] as? String == "House")
        #expect((json[1]["note"] as? String)?.hasPrefix(a) == true && json[1]["version"] as? Int == 2)
        #expect(json[1]["summary"] as? String == "title \"A\" -> \"A2\"")
        #expect(isRFC3339UTC(json[1]["recordedAt"] as? String ?? ""))
        let unknown = Self.run(s, ["log", "--type", "NoteExploded"])
        #expect(unknown.code == 2 && unknown.stderr.contains("NoteRetitled"))
        #expect(Self.run(s, ["log", "--since", "whenever"]).code == 2)
    }

    @Test("log --since later than --until is a usage error naming both, exit 2; equal ends are one instant")
    func logRangeBackwards() throws {
        let s = try Sandbox()
        try Self.ok(s, "add", "A", now: Self.hour(0))
        // A new user's trial: before 2026-12-06 it printed nothing and exited 0.
        let backwards = Self.run(s, ["log", "--since", Self.hour(2), "--until", Self.hour(1)])
        CLIErrorTests.expectFailure(
            backwards, 2, mentioning: "--since \"\(Self.hour(2))\" is later than --until \"\(Self.hour(1))\"")
        #expect(backwards.stderr.contains("give a --since at or before the --until"), "\(backwards)")
        CLIErrorTests.expectFailure(
            Self.run(s, ["log", "--until", "3 days ago", "--since", "yesterday", "--json"]), 2,
            mentioning: "is later than --until")
        #expect(try Self.ok(s, "log", "--since", Self.hour(0), "--until", Self.hour(0), "--json").array().count == 1)
    }

    @Test("log --until DATE takes in the whole day, in the local zone; an instant given whole is exact")
    func logUntilADateTakesTheDay() throws {
        let s = try Sandbox()
        try Self.ok(s, "add", "A", now: "2026-11-01T00:00:00Z")
        try Self.ok(s, "add", "B", now: "2026-11-01T23:59:59.999999Z")
        // 22:00 on 1 November five hours west of UTC, the 2nd in UTC.
        try Self.ok(s, "add", "C", now: "2026-11-02T03:00:00Z")
        func count(_ args: String..., tz: String = "UTC") throws -> Int {
            let r = s.run(["log"] + args + ["--json"], env: ["TZ": tz])
            try #require(r.code == 0, "log \(args): \(r)")
            return try r.array().count
        }
        // A new user's trial: before 2026-12-07 the --until was the day's midnight, and a day's
        // own events were none of its range.
        #expect(try count("--since", "2026-11-01", "--until", "2026-11-01") == 2)
        #expect(try count("--until", "2026-11-01") == 2)
        // Five hours west of UTC, 1 November runs from 05:00 UTC to 05:00 UTC the next day.
        #expect(try count("--until", "2026-11-01", tz: "XXX+5") == 3)
        #expect(try count("--since", "2026-11-01", "--until", "2026-11-01", tz: "XXX+5") == 2)
        #expect(try count("--since", "2026-11-02", "--until", "2026-11-02") == 1)
        #expect(try count("--until", "2026-10-31") == 0)
        // The day's last microsecond is in it, the next day's first is not; an instant is exact.
        #expect(try count("--until", "2026-11-01T00:00:00Z") == 1)
        #expect(try count("--until", "2026-11-01T23:59:59.999999Z") == 2)
        #expect(try count("--until", "2026-11-01T23:59") == 1, "a local time is an instant, not a day")
        // today, yesterday and last monday name days too (the clock: Sunday 2026-11-29).
        #expect(try count("--until", "yesterday") == 3)
        #expect(try count("--until", "last monday") == 3)
        // A --since later than the day still refused, naming both.
        CLIErrorTests.expectFailure(
            Self.run(s, ["log", "--since", "2026-11-02", "--until", "2026-11-01"]), 2,
            mentioning: #"--since "2026-11-02" is later than --until "2026-11-01""#)
        let none = Self.run(s, ["log", "--until", "2026-10-31"])
        #expect(none.code == 0 && none.line == "no events", "\(none)")
    }

    @Test("an instant that cannot be read names the option, the value and the forms it takes, exit 2")
    func instantErrorsNameTheOption() throws {
        let s = try Sandbox()
        let id = try Self.ok(s, "add", "A", "--body", "1\n", now: Self.hour(0)).line
        let before = try Self.ok(s, "export").stdout
        let forms = "RFC 3339 (2026-11-29T12:00:00Z), YYYY-MM-DD"
        // A new user's trial: before 2026-12-06 each said only `unrecognized date "-1"; ...`.
        for (args, start) in [
            (["show", id, "--at", "-1"], #"--at "-1" is not a version or an instant; give a version (3 or v3) or an"#),
            (["blame", id, "--at", "-1"], #"--at "-1" is not a version or an instant"#),
            (["diff", id, "--", "-1"], #"FROM "-1" is not a version or an instant"#),
            (["restore", id, "--to", "-1"], #"--to "-1" is not a version or an instant"#),
            (["list", "--as-of", "-1"], #"--as-of "-1" is not an instant; use "#),
            (["search", "x", "--as-of", "-1"], #"--as-of "-1" is not an instant"#),
            (["log", "--since", "-1"], #"--since "-1" is not an instant"#),
            (["log", "--until", "2026-02-30"], #"--until "2026-02-30" names no such day or time"#),
            (["log", "--since", "99999999999999 days ago"], #"--since "99999999999999 days ago" is out of range"#),
        ] {
            let r = Self.run(s, args)
            CLIErrorTests.expectFailure(r, 2, mentioning: start)
            #expect(r.stderr.contains(forms) || r.stderr.contains("out of range"), "\(args): \(r)")
        }
        // Midnight of 0001-01-01 an hour east of UTC (TZ=XXX-1) is in the year 0 in UTC, before
        // any instant the store holds: said so, with the instant to give instead (before
        // 2026-12-06, "is out of range (years 0001 to 9999)" of a date in the year 1).
        let east = s.run(["show", id, "--at", "0001-01-01"], env: ["TZ": "XXX-1"])
        CLIErrorTests.expectFailure(
            east, 2,
            mentioning: #"--at "0001-01-01" is local time (UTC+01:00), before 0001-01-01T00:00:00Z, the earliest "#
                + "instant notes can name; give 0001-01-01T00:00:00Z (UTC) or a later instant")
        CLIErrorTests.expectFailure(
            s.run(["list", "--as-of", "0001-01-01"], env: ["TZ": "XXX-1"]), 2, mentioning: "UTC+01:00")
        // An offset with seconds (a zone's local mean time, Paris's +00:09:21 in the year 1) is
        // named with them: before 2026-12-07, "(UTC+00:09)".
        CLIErrorTests.expectFailure(
            s.run(["show", id, "--at", "0001-01-01"], env: ["TZ": "LMT-0:09:21"]), 2,
            mentioning: #"--at "0001-01-01" is local time (UTC+00:09:21), before 0001-01-01T00:00:00Z"#)
        // In UTC the same date is an instant: the note did not exist then.
        #expect(Self.run(s, ["show", id, "--at", "0001-01-01"]).code == 3)
        #expect(Self.run(s, ["show", id, "--at", "0001-01-01T00:00:00Z"], now: fixedNow).code == 3)
        #expect(try Self.ok(s, "export").stdout == before, "nothing was written")
    }

    @Test("list --as-of before and after a category rename uses the name the category had then")
    func asOfAcrossRename() throws {
        let s = try Sandbox()
        try Self.ok(s, "add", "A", "-c", "Home", now: Self.hour(0))
        try Self.ok(s, "add", "B", now: Self.hour(1))
        try Self.ok(s, "categories", "rename", "Home", "House", now: Self.hour(2))
        func titles(_ args: String...) throws -> [String] {
            let r = Self.run(s, ["list"] + args + ["--json"])
            try #require(r.code == 0, "list \(args): \(r)")
            return try r.array().map { try #require($0["title"] as? String) }
        }
        // --category names the category as it was at the --as-of instant.
        #expect(try titles("--as-of", "2026-11-01T11:30:00Z", "--category", "Home") == ["A"])
        #expect(Self.run(s, ["list", "--as-of", "2026-11-01T11:30:00Z", "--category", "House"]).code == 3)
        #expect(try titles("--as-of", Self.hour(2), "--category", "House") == ["A"])
        #expect(Self.run(s, ["list", "--as-of", Self.hour(2), "--category", "Home"]).code == 3)
        #expect(try titles("--as-of", "2026-11-01T10:30:00Z") == ["A"])
        #expect(try titles("--as-of", "2026-10-01").isEmpty)
        #expect(try titles("--as-of", "now") == ["B", "A"])
    }

    @Test("`now` is never before the log's last event: after an import dated hours ahead, later notes are shown")
    func nowAfterAnEventAhead() throws {
        let s = try Sandbox()
        // Five hours after the clock (NOTES_NOW): an import takes up to a day ahead, and every
        // later event is recorded at that instant, after the clock.
        #expect(fixedNow == "2026-11-29T12:00:00Z")
        let line =
            #"{"position":1,"eventId":"d0000000-0000-4000-8000-000000000001","#
            + #""stream":"note/66666666-6666-4666-8666-666666666666","version":1,"type":"NoteCreated","#
            + #""schemaVersion":2,"recordedAt":"2026-11-29T17:00:00Z","metadata":{"actor":"x"},"#
            + #""data":{"title":"future","body":"one\n","pinned":false,"category":null}}"#
        write(file: s.path("future.jsonl"), line + "\n")
        try s.ok("import", s.path("future.jsonl"))
        let id = try s.add("made now", "--body", "two\n")
        // Before 2026-12-06 each of these saw the log as at the clock: no notes, exit 3.
        #expect(try s.titles("--as-of", "now").sorted() == ["future", "made now"])
        #expect(try s.titles("--as-of", " NOW ").count == 2)
        #expect(try s.object("show", id, "--at", "now")["title"] as? String == "made now")
        #expect(try s.ok("blame", id, "--at", "now").stdout.contains("two"))
        #expect(s.run("diff", id, "1", "now").code == 0)
        #expect(try s.ok("search", "made", "--as-of", "now").stdout.contains("made now"))
        #expect(try s.ok("log", "--until", "now").stdout.contains("made now"))
        #expect(s.run("restore", id, "--to", "now").code == 0)
        // The relative forms count from the clock: the events at 17:00 are after them.
        #expect(try s.titles("--as-of", "1 minute ago").isEmpty)
        #expect(s.run("show", id, "--at", "1 minute ago").code == 3)
    }
}

/// `notes diff` on real edit histories must apply with GNU `patch`, byte for byte.
@Suite("CLI: diff agrees with GNU patch")
struct HistoryPatchAgreementTests {
    static let repositoryRoot = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Revision texts of the sample's documents, followed through renames, oldest first.
    static func lineages() throws -> [(path: String, texts: [String])] {
        let data = try Data(contentsOf: repositoryRoot.appending(path: "Samples/swift-evolution-sample.jsonl"))
        var lineages: [(path: String, texts: [String])] = []
        var live: [String: Int] = [:]
        for line in data.split(separator: UInt8(ascii: "\n")) {
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let doc = try #require(event["doc"] as? String)
            switch event["op"] as? String {
            case "create":
                live[doc] = lineages.count
                lineages.append((doc, [event["text"] as? String ?? ""]))
            case "edit", "rename":
                let previous = event["from"] as? String ?? doc
                let index = try #require(live[previous])
                live[previous] = nil
                live[doc] = index
                lineages[index].texts.append(event["text"] as? String ?? "")
            default:
                live[doc] = nil
            }
        }
        return lineages
    }

    @Test("patch turns version a's body into version b's for revisions of real documents")
    func patchApplies() throws {
        try #require(hasProgram("patch"), "GNU patch is not installed (apt-get install patch)")
        let s = try Sandbox()
        // Replay a few whole histories into notes through the library (fast: one process).
        var notes: [(id: Identifier, bodies: [UInt64: String])] = []
        do {
            let book = try Notebook(path: s.store, options: Notebook.Options(actor: "replay"))
            let chosen = try Self.lineages().filter { $0.texts.count >= 4 }.prefix(4)
            try #require(chosen.count == 4)
            for lineage in chosen {
                let first = try book.add(title: String(lineage.path.prefix(200)), body: lineage.texts[0])
                var bodies: [UInt64: String] = [first.version: lineage.texts[0]]
                for text in lineage.texts.dropFirst() {
                    let n = try book.edit(first.id, body: text)
                    bodies[n.version] = text
                }
                notes.append((first.id, bodies))
            }
        }
        var checked = 0
        for (id, bodies) in notes {
            let versions = bodies.keys.sorted()
            var pairs = zip(versions, versions.dropFirst()).map { ($0, $1) }
            if let first = versions.first, let last = versions.last {
                pairs.append((first, last))
                pairs.append((last, first))
            }
            for (a, b) in pairs.prefix(12) {
                let diff = Self.run(s, ["diff", id.hex, "v\(a)", String(b)])
                try #require(diff.code == 0, "diff \(a) \(b): \(diff)")
                let from = try #require(bodies[a])
                let to = try #require(bodies[b])
                #expect(diff.stdout.isEmpty == (from == to))
                write(file: s.path("work.txt"), from)
                write(file: s.path("change.patch"), diff.stdoutBytes)
                // --binary: CRLF lines literally; -F0: no fuzz, every context line must match.
                let patched = s.run(
                    ["--binary", "-F0", "-s", s.path("work.txt"), s.path("change.patch")], executable: "/usr/bin/patch")
                #expect(patched.code == 0, "patch of v\(a) -> v\(b): \(patched)")
                #expect(read(file: s.path("work.txt")) == Array(to.utf8), "v\(a) -> v\(b) of \(id.hex)")
                checked += 1
            }
        }
        #expect(checked >= 30)
    }

    static func run(_ s: Sandbox, _ args: [String]) -> CLIRun { s.run(args, env: ["TZ": "UTC"]) }
}

@Suite("CLI: an actor is one line")
struct ActorLineTests {
    @Test("NOTES_ACTOR with a line break or control character is refused for writes; an imported one cannot forge rows")
    func actorsCannotForgeRows() throws {
        let s = try Sandbox()
        let forged = "mallory\nv2  2026-01-01  alice@laptop  NoteTrashed     trashed"
        for bad in [forged, "\u{1B}[2Jbob", "tab\there", "line\u{2028}separator", String(repeating: "a", count: 201)] {
            let r = s.run(["add", "Budget", "--body", "x"], env: ["NOTES_ACTOR": bad])
            CLIErrorTests.expectFailure(r, 2, mentioning: "NOTES_ACTOR must be one line")
        }
        #expect(!fileExists(s.store + "/data.mdb"), "nothing was written, not even a store made")

        // An import carries the actor it was given (an export of an older store may hold one):
        // history shows it on its one row, and --json gives it exactly.
        let id = try s.add("Budget", "--body", "x")
        // A read does not care who the actor would be.
        #expect(s.run(["list"], env: ["NOTES_ACTOR": forged]).code == 0)
        let line = try s.ok("export").stdout.split(separator: "\n")[0]
        let other = s.path("other")
        let escaped = #"mallory\nv2  2026-01-01  alice@laptop  NoteTrashed  trashed\u001b[2J"#
        let imported = line.replacingOccurrences(of: #""actor":""#, with: #""actor":""# + escaped)
        let file = s.path("forged.jsonl")
        write(file: file, imported + "\n")
        try s.ok("import", file, "--store", other)
        let history = try s.ok("history", id, "--store", other)
        #expect(history.lines.count == 1, "one event, one row: \(history.stdout)")
        #expect(!history.stdout.contains("\u{1B}") && history.stdout.contains("mallory␊v2"), "\(history.stdout)")
        let rows = try s.ok("history", id, "--store", other, "--json").array()
        #expect((rows.first?["actor"] as? String)?.hasPrefix("mallory\nv2  2026-01-01") == true)
        let blame = try s.ok("blame", id, "--store", other)
        #expect(!blame.stdout.contains("\u{1B}") && blame.lines.count == 1, "\(blame.stdout)")
    }

    @Test("a huge or bidi-control actor is cut and escaped in history, blame and log; titles and names too; JSON exact")
    func actorsAreCutAndEscaped() throws {
        let s = try Sandbox()
        let id = try s.add("Budget", "--body", "line\n")
        let line = try s.ok("export").stdout.split(separator: "\n")[0]
        let file = s.path("actors.jsonl")
        let huge = String(repeating: "a", count: 100_000)
        // Before 2026-12-06 the first padded every row to 100 KB, the second (U+202E, a
        // right-to-left override) turned the rest of the line around on a terminal.
        for (n, actor) in [huge, "evil\u{202E}resu@host\u{200B}"].enumerated() {
            let store = s.path("other\(n)")
            write(
                file: file,
                line.replacingOccurrences(of: #""actor":"tester@test""#, with: #""actor":""# + actor + "\"") + "\n")
            try s.ok("import", file, "--store", store)
            for args in [["history", id], ["blame", id], ["log"]] {
                let r = s.run(args + ["--store", store])
                try #require(r.code == 0, "\(args): \(r.stderr)")
                #expect(r.lines.count == 1 && r.stdout.utf8.count < 200, "\(args): \(r.stdout.prefix(300))")
                #expect(!r.stdout.contains("\u{202E}") && !r.stdout.contains("\u{200B}"), "\(args)")
                if n == 0 {
                    let cut = String(repeating: "a", count: 39) + "…"
                    #expect(r.stdout.contains(cut) && !r.stdout.contains("a" + cut), "\(args): \(r.stdout)")
                } else {
                    #expect(r.stdout.contains("evil<U+202E>resu@host<U+200B>"), "\(args): \(r.stdout)")
                }
            }
            let rows = try s.ok("history", id, "--store", store, "--json").array()
            #expect(rows.first?["actor"] as? String == actor, "--json gives the actor exactly")
        }
        // Titles, categories and tags in tables show bidi controls as escapes too; JSON is exact.
        let title = "abc\u{202E}def"
        let other = try s.add(title, "-c", "Work\u{2067}x", "--tag", "t\u{200F}ag")
        let list = try s.ok("list").stdout
        #expect(
            list.contains("abc<U+202E>def") && list.contains("Work<U+2067>x") && list.contains("#t<U+200F>ag"),
            "\(list)")
        #expect(!list.unicodeScalars.contains { isBidiControl($0) }, "\(list)")
        #expect(try s.object("show", other)["title"] as? String == title)
    }
}
