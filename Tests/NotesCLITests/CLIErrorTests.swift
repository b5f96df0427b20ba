import Basics
import EventStore
import Foundation
import Glibc
import LMDB
import Notes
import Synchronization
import Testing

/// Every error of issue 3 through the binary: its exit code, one line on stderr naming the
/// next step, nothing on stdout, and nothing changed in the store.
@Suite("CLI: errors and exit codes")
struct CLIErrorTests {
    /// Checks the documented form of a failure: the code, one `notes: error:` line, empty stdout.
    static func expectFailure(
        _ r: CLIRun, _ code: Int32, mentioning text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(r.code == code, "expected exit \(code): \(r)", sourceLocation: sourceLocation)
        #expect(r.stdout.isEmpty, "nothing on stdout: \(r)", sourceLocation: sourceLocation)
        #expect(r.stderr.hasPrefix("notes: error: "), "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(
            r.stderr.hasSuffix("\n") && r.stderr.dropLast().contains("\n") == false, "one line: \(r.stderr)",
            sourceLocation: sourceLocation)
        #expect(r.stderr.contains(text), "\(r.stderr) should mention \(text)", sourceLocation: sourceLocation)
    }

    static func events(_ s: Sandbox) throws -> Int {
        try #require(try s.object("stats")["events"] as? Int)
    }

    @Test("validation errors exit 2 and add nothing: empty and over-long titles, large and non-UTF-8 bodies")
    func validation() throws {
        let s = try Sandbox()
        let id = try s.add("Keep", "--body", "original")
        let before = try Self.events(s)
        let limit: [String: String?] = ["NOTES_BODY_LIMIT": "16"]
        Self.expectFailure(s.run("add", ""), 2, mentioning: "title is empty")
        Self.expectFailure(s.run("add", " \t "), 2, mentioning: "title is empty")
        Self.expectFailure(s.run("add", String(repeating: "a", count: 501)), 2, mentioning: "500")
        Self.expectFailure(s.run("add", "two\nlines"), 2, mentioning: "one line")
        Self.expectFailure(s.run("edit", id, "--title", "  "), 2, mentioning: "title is empty")
        // Nothing to see is empty too: zero-width or direction characters, a mark with no letter.
        for invisible in ["\u{200B}", "\u{202E}", "\u{0301}", "\u{200B}\u{FEFF}\u{2060}"] {
            Self.expectFailure(s.run("add", invisible), 2, mentioning: "title is empty")
        }
        // Each says the limit and how to raise it.
        let raise = "(raise it with NOTES_BODY_LIMIT=BYTES or `notes config set body-limit BYTES`)"
        let big = s.run("add", "Big", "--body", String(repeating: "x", count: 17), env: limit)
        Self.expectFailure(big, 2, mentioning: "the limit is 16 \(raise)")
        // Once (it was said a second time, in other words).
        #expect(big.stderr.components(separatedBy: "raise it").count == 2, "\(big.stderr)")
        Self.expectFailure(
            s.run(["add", "Big", "-"], stdin: Array(repeating: 120, count: 17), env: limit), 2,
            mentioning: "over 16 bytes, the limit \(raise)")
        Self.expectFailure(
            s.run(["add", "Big"], stdin: Array(repeating: 120, count: 17), env: limit), 2,
            mentioning: "over 16 bytes, the limit \(raise)")
        write(file: s.path("big.txt"), String(repeating: "é", count: 9))
        Self.expectFailure(
            s.run("add", "Big", "--body-file", s.path("big.txt"), env: limit), 2,
            mentioning: "over 16 bytes, the limit \(raise)")
        Self.expectFailure(
            s.run("edit", id, "--body", String(repeating: "x", count: 17), env: limit), 2,
            mentioning: "the limit is 16 \(raise)")
        Self.expectFailure(s.run("add", "X", env: ["NOTES_BODY_LIMIT": "lots"]), 2, mentioning: "NOTES_BODY_LIMIT")
        write(file: s.path("latin1.txt"), [0x63, 0x61, 0x66, 0xE9, 0x0A])
        Self.expectFailure(s.run("add", "Bad", "--body-file", s.path("latin1.txt")), 2, mentioning: "UTF-8")
        Self.expectFailure(s.run(["add", "Bad", "-"], stdin: [0xFF, 0xFE, 0x41]), 2, mentioning: "UTF-8")
        Self.expectFailure(s.run("edit", id, "--body-file", s.path("latin1.txt")), 2, mentioning: "UTF-8")
        Self.expectFailure(s.run("add", "Missing", "--body-file", s.path("nope.txt")), 1, mentioning: "nope.txt")
        Self.expectFailure(s.run("add", "Dir", "--body-file", s.root), 2, mentioning: "directory")
        #expect(try Self.events(s) == before, "no failing command appended an event")
        #expect(try s.object("show", id)["body"] as? String == "original")

        // A mark on a letter, and a zero-width character beside it, are a title to see.
        #expect(try s.object("show", s.add("e\u{0301}\u{200B}"))["title"] as? String == "e\u{0301}\u{200B}")
        // The limits themselves are accepted: 500 characters (not bytes), a body of exactly the limit.
        let long = String(repeating: "é", count: 500)
        #expect(try s.object("show", s.add(long))["title"] as? String == long)
        let exact = try s.add("Exact", "--body", String(repeating: "x", count: 16))
        #expect(try s.ok("show", exact, env: limit).stdout.contains(String(repeating: "x", count: 16)))
        let r = s.run(["add", "Exact file", "-"], stdin: Array(repeating: 121, count: 16), env: limit)
        #expect(r.code == 0, "\(r)")
    }

    @Test("a body limit over 1 GiB is refused, exit 2, naming the setting, the value and the ceiling; nothing changes")
    func bodyLimitCeiling() throws {
        // A new user's trial: before 2026-12-07 `NOTES_BODY_LIMIT=20000000000 notes import-markdown`
        // of a 10 GB file grew to 23.8 GB and was killed; a body past 1 MiB was refused at
        // 1 MiB ("over 1048576 bytes, the limit") without a word of the setting's value.
        let s = try Sandbox()
        let id = try s.add("Keep", "--body", "original")
        let before = try Self.events(s)
        let huge: [String: String?] = ["NOTES_BODY_LIMIT": "20000000000"]
        mkdir(s.path("vault"), 0o700)
        write(file: s.path("vault/a.md"), "# A\n")
        write(file: s.path("body.txt"), String(repeating: "x", count: (1 << 20) + 1))
        let refusal = "NOTES_BODY_LIMIT=20000000000 is over 1073741824 bytes (1 GiB), the most it may be"
        for args in [
            ["add", "X"], ["add", "X", "--body-file", s.path("body.txt")], ["edit", id, "--body", "x"],
            ["import-markdown", s.path("vault")],
        ] {
            let r = s.run(args, env: huge)
            Self.expectFailure(r, 2, mentioning: refusal)
            #expect(r.stderr.contains("set it to 1073741824 or less"), "\(args): \(r)")
        }
        #expect(try Self.events(s) == before)
        // At the ceiling it is taken.
        try s.ok("add", "Y", "--body-file", s.path("body.txt"), env: ["NOTES_BODY_LIMIT": "1073741824"])
        // The config key has the same ceiling: `config set` refuses it, a file holding it names its line.
        let set = s.run("config", "set", "body-limit", "20000000000")
        Self.expectFailure(set, 2, mentioning: "body-limit must be at most 1073741824 bytes (1 GiB)")
        #expect(!FileManager.default.fileExists(atPath: s.configFile))
        try s.ok("config", "set", "body-limit", "1073741824")
        write(file: s.configFile, "body-limit = 20000000000\n")
        Self.expectFailure(
            s.run("add", "Z"), 2,
            mentioning: "\(s.configFile):1: body-limit must be at most 1073741824 bytes (1 GiB)")
        #expect(try s.ok("list", "--json", env: ["XDG_CONFIG_HOME": s.path("none")]).array().count == 2)
        // Such a file, valid before the ceiling, refuses every command, a read too: the refusal
        // says how to change it (before, it named no way out), and that does.
        let read = s.run("list")
        Self.expectFailure(read, 2, mentioning: "`notes config set body-limit 1073741824` sets the most it may be")
        try s.ok("config", "set", "body-limit", "1073741824")
        #expect(try s.ok("list", "--json").array().count == 2)
    }

    @Test("a tag or category name that cannot be one is quoted in the error, with what to give instead")
    func badNamesQuoted() throws {
        let s = try Sandbox()
        let id = try s.add("Note")
        let before = try Self.events(s)
        // Before (trial-s31) each said only "the tag name contains a control character": which of
        // the names given, and what to do, were left to guess.
        let oneLine = "contains a control character (a line break, a tab...); give a name on one line without them"
        Self.expectFailure(s.run("tag", id, "fine", "new\nline"), 2, mentioning: "tag name \"new␊line\" \(oneLine)")
        Self.expectFailure(s.run("add", "B", "--tag", "a\tb"), 2, mentioning: "tag name \"a␉b\" \(oneLine)")
        Self.expectFailure(
            s.run("categorize", id, "x\ny"), 2, mentioning: "category name \"x␊y\" \(oneLine)")
        Self.expectFailure(
            s.run("categories", "add", "a\u{1B}b"), 2, mentioning: "category name \"a␛b\" \(oneLine)")
        Self.expectFailure(
            s.run("categories", "add", "  "), 2,
            mentioning: "the category name is empty; give a name with at least one visible character")
        Self.expectFailure(
            s.run("tag", id, String(repeating: "t", count: 201)), 2,
            mentioning: "the tag name has 201 characters; the limit is 200: give a shorter name")
        Self.expectFailure(
            s.run("categorize", id, String(repeating: "c", count: 201)), 2,
            mentioning: "the category name has 201 characters; the limit is")
        #expect(try Self.events(s) == before)
    }

    @Test("names typed at a command refuse DEL and the C1 controls as C0 ones; those the store holds still read")
    func deleteAndC1ControlsInTypedNames() throws {
        let s = try Sandbox()
        let id = try s.add("Note")
        // Held already, as an import, another device or an older program wrote them.
        let old = try addThroughLibrary(
            s, "Old\u{85}title", category: "Cat\u{9B}", tags: ["t\u{90}"], aliases: ["al\u{7F}ias"])
        let before = try Self.events(s)
        // Before 2026-12-07 each of these was taken (a C0 control was refused the same way).
        let oneLine = "contains a control character (a line break, a tab...); give a name on one line without them"
        let title = "the title contains a line break or control character; titles are one line"
        for bad in ["a\u{7F}b", "a\u{85}b", "a\u{80}b", "a\u{9F}b"] {
            // Quoted with the control as its symbol: DEL as U+2421, a C1 control as U+FFFD.
            let shown = bad == "a\u{7F}b" ? "a\u{2421}b" : "a\u{FFFD}b"
            Self.expectFailure(s.run("add", bad), 2, mentioning: title)
            Self.expectFailure(
                s.run("add", "Fine", "--category", bad), 2, mentioning: "category name \"\(shown)\" \(oneLine)")
            Self.expectFailure(s.run("add", "Fine", "--tag", bad), 2, mentioning: "tag name \"\(shown)\" \(oneLine)")
            Self.expectFailure(s.run("edit", id, "--title", bad), 2, mentioning: title)
            Self.expectFailure(s.run("categorize", id, bad), 2, mentioning: "category name \"\(shown)\" \(oneLine)")
            Self.expectFailure(s.run("categories", "add", bad), 2, mentioning: "category name \"\(shown)\" \(oneLine)")
            Self.expectFailure(
                s.run("categories", "rename", "Cat\u{9B}", bad), 2, mentioning: "category name \"\(shown)\" \(oneLine)")
            Self.expectFailure(s.run("tag", id, "fine", bad), 2, mentioning: "tag name \"\(shown)\" \(oneLine)")
            Self.expectFailure(
                s.run("tags", "rename", "t\u{90}", bad), 2, mentioning: "tag name \"\(shown)\" \(oneLine)")
            Self.expectFailure(
                s.run("alias", id, "fine", bad), 2, mentioning: "it contains a line break or control character")
        }
        #expect(try Self.events(s) == before, "nothing was written")
        // What the store holds reads, and the names that find it are looked up as they are.
        #expect(try s.object("show", old)["title"] as? String == "Old\u{85}title")
        #expect(try s.ok("untag", old, "t\u{90}").code == 0)
        try s.ok("categories", "rename", "Cat\u{9B}", "Work")
        #expect(try s.object("show", old)["category"] as? String == "Work")
        #expect(try s.ok("alias", old).stdout == "al\u{2421}ias\n")
    }

    @Test("an existing tag whose name holds a C1 control is taken by `tag` typed exactly; a new such name is refused")
    func existingC1TagRetyped() throws {
        let s = try Sandbox()
        let old = try addThroughLibrary(s, "Imported", tags: ["t\u{90}"])
        let id = try s.add("Note")
        // Before 2026-12-07 refused, "the tag name ... contains a control character", though
        // `untag` and `tags rename` took the same name.
        try s.ok("tag", id, "t\u{90}")
        #expect(try s.object("show", id)["tags"] as? [String] == ["t\u{90}"])
        try s.ok("untag", old, "t\u{90}")
        try s.ok("tag", old, "#T\u{90}")
        #expect(try s.object("show", old)["tags"] as? [String] == ["t\u{90}"], "found as untag finds it")
        // A new name with one stays refused, and with it the names beside it.
        let other = try s.add("Other")
        let afterAdd = try Self.events(s)
        Self.expectFailure(
            s.run("tag", other, "fine", "u\u{90}"), 2, mentioning: "tag name \"u\u{FFFD}\" contains a control character"
        )
        #expect(try Self.events(s) == afterAdd, "nothing was written")
        #expect(try s.object("show", other)["tags"] as? [String] == [])
        // Once deleted, the name is a new one again.
        try s.ok("tags", "delete", "t\u{90}")
        Self.expectFailure(s.run("tag", id, "t\u{90}"), 2, mentioning: "contains a control character")
    }

    @Test(
        "an instant's option named as another command names it (show --as-of, list --at) is answered with this command's"
    )
    func instantOptionOfAnotherCommand() throws {
        let s = try Sandbox()
        let id = try s.add("Note")
        let before = try Self.events(s)
        // `list`, `search` and `links` take --as-of; `show` and `blame` --at; `restore` --to. A
        // new user's trial typed `show ID --as-of DATE` and was only sent to the help.
        Self.expectFailure(s.run("show", id, "--as-of", "2026-01-01"), 2, mentioning: "did you mean \"--at\"")
        Self.expectFailure(s.run("blame", id, "--as-of=yesterday"), 2, mentioning: "did you mean \"--at\"")
        Self.expectFailure(s.run("list", "--at", "yesterday"), 2, mentioning: "did you mean \"--as-of\"")
        Self.expectFailure(s.run("backlinks", id, "--at", "yesterday"), 2, mentioning: "did you mean \"--as-of\"")
        Self.expectFailure(s.run("restore", id, "--at", "1"), 2, mentioning: "did you mean \"--to\"")
        Self.expectFailure(s.run("restore", id, "--as-of", "1"), 2, mentioning: "did you mean \"--to\"")
        Self.expectFailure(s.run("history", id, "--as-of", "1"), 2, mentioning: "notes help history")
        #expect(try Self.events(s) == before)
    }

    @Test("usage errors exit 2 with a hint: unknown options and commands, repeated options, missing values")
    func usage() throws {
        let s = try Sandbox()
        let id = try s.add("Note")
        let before = try Self.events(s)
        Self.expectFailure(s.run("add", "X", "--pinn"), 2, mentioning: "did you mean \"--pin\"")
        Self.expectFailure(s.run("list", "--sortt", "title"), 2, mentioning: "did you mean \"--sort\"")
        Self.expectFailure(s.run("list", "--categroy", "x"), 2, mentioning: "did you mean \"--category\"")
        // The hint sits after the word it corrects, and the message reads on (before 2026-12-08:
        // `"renam"; did you mean "rename"?; use add, ...`).
        for (args, line) in [
            (
                ["categories", "renam", "a", "b"],
                #"unknown categories action "renam" (did you mean "rename"?); use add, rename or delete"#
            ),
            (["tags", "dlete", "a"], #"unknown tags action "dlete" (did you mean "delete"?); use rename or delete"#),
            (
                ["config", "set", "colr", "never"],
                #"unknown setting "colr" (did you mean "color"?); see `notes config list`"#
            ),
        ] {
            #expect(s.run(args).stderr == "notes: error: \(line)\n", "\(args)")
        }
        Self.expectFailure(s.run("list", "--zzzzzz"), 2, mentioning: "notes help list")
        Self.expectFailure(s.run("list", "-Z"), 2, mentioning: "unknown option \"-Z\"")
        // A word of a query, or a value, that starts with -: the command to give instead, whole.
        Self.expectFailure(
            s.run("search", "actor", "-isolation", "it's", "--limit", "3"), 2,
            mentioning: #"goes after --: notes search [OPTIONS] -- 'actor -isolation it'\''s'"#)
        Self.expectFailure(
            s.run("search", "actor", "-isolation", "-n", "5"), 2,
            mentioning: #"goes after --: notes search [OPTIONS] -- 'actor -isolation'"#)
        Self.expectFailure(
            s.run("add", "Buy milk", "-5"), 2, mentioning: "goes after --, in one argument: notes add -- 'Buy milk -5'")
        // After --, every argument is text: an option there is said to be text.
        Self.expectFailure(
            s.run("add", "--", "-x", "--body", "B"), 2,
            mentioning: #"unexpected argument "--body": after --, every argument is text"#)
        Self.expectFailure(
            s.run("edit", id, "--", "--title", "T"), 2,
            mentioning: #"unexpected argument "--title": after --, every argument is text"#)
        Self.expectFailure(
            s.run("search", "actor", "-isolation", "-sendable"), 2,
            mentioning: "goes after --: notes search -- 'actor -isolation -sendable'")
        Self.expectFailure(
            s.run("search", "-isolation", "--", "foo"), 2, mentioning: "goes after --: notes search -- '-isolation foo'"
        )
        Self.expectFailure(
            s.run("config", "set", "body-limit", "-5"), 2,
            mentioning: "a value that starts with - goes after --: notes config set body-limit -- -5")
        Self.expectFailure(s.run("lsit"), 2, mentioning: "did you mean \"list\"")
        Self.expectFailure(s.run("ad", "X"), 2, mentioning: "did you mean \"add\"")
        Self.expectFailure(s.run("frobnicate"), 2, mentioning: "notes --help")
        Self.expectFailure(s.run("add", "X", "--body", "a", "--body", "b"), 2, mentioning: "more than once")
        Self.expectFailure(s.run("add", "X", "-b", "a", "--body", "b"), 2, mentioning: "more than once")
        Self.expectFailure(s.run("list", "--sort", "title", "-s", "created"), 2, mentioning: "more than once")
        Self.expectFailure(s.run("add", "X", "--body"), 2, mentioning: "needs a value")
        Self.expectFailure(s.run("list", "--store"), 2, mentioning: "--store needs a value")
        Self.expectFailure(s.run("list", "--store="), 2, mentioning: "--store")
        Self.expectFailure(s.run("add", "X", "--pin=yes"), 2, mentioning: "takes no value")
        Self.expectFailure(s.run("add"), 2, mentioning: "missing TITLE")
        Self.expectFailure(s.run("add", "two", "words"), 2, mentioning: "quote")
        Self.expectFailure(s.run("show"), 2, mentioning: "usage")
        Self.expectFailure(s.run("show", id, id), 2, mentioning: "unexpected argument")
        Self.expectFailure(s.run("edit"), 2, mentioning: "missing ID")
        Self.expectFailure(s.run("edit", id, "--expect-version", "zero"), 2, mentioning: "--expect-version")
        Self.expectFailure(s.run("edit", id, "--expect-version", "0"), 2, mentioning: "--expect-version")
        Self.expectFailure(s.run("--json"), 2, mentioning: "no command")
        #expect(try Self.events(s) == before)
        // The advice is a command that works (before 2026-12-07: `notes add 'Buy milk' -- -5`,
        // refused in turn); after --, `-` is a title, not standard input ("missing TITLE").
        #expect(try s.ok("add", "--", "Buy milk -5").stdout.count == 9)
        let dash = try s.ok("add", "--body", "B", "--", "-")
        #expect(try s.object("show", String(dash.line))["title"] as? String == "-")

        // No arguments at all prints the overview and exits 2 (a usage error), on stdout.
        let bare = s.run([])
        #expect(bare.code == 2 && bare.stdout.contains("USAGE: notes"))
    }

    @Test("ids: not found exits 3, malformed exits 2, a short prefix is refused")
    func notFound() throws {
        let s = try Sandbox()
        let id = try s.add("Note")
        let other = id.first == "f" ? "0000" : "ffff"
        Self.expectFailure(s.run("show", other), 3, mentioning: "notes list --all")
        Self.expectFailure(s.run("show", "0123456789abcdef0123456789abcdef"), 3, mentioning: "01234567")
        // A whole id is quoted whole: its first eight digits may be those of a note that exists.
        let sameStart = String(id.prefix(8)) + "-0000-4000-8000-000000000000"
        Self.expectFailure(s.run("show", sameStart), 3, mentioning: "no note has id \(sameStart)")
        // A version past the largest number is named as given, not as that number.
        Self.expectFailure(
            s.run("show", id, "--at", "99999999999999999999"), 3, mentioning: "version 99999999999999999999")
        for command in ["pin", "unpin", "archive", "unarchive", "trash", "untrash", "edit"] {
            Self.expectFailure(s.run(command, other), 3, mentioning: other)
        }
        Self.expectFailure(s.run("categorize", other, "Work"), 3, mentioning: other)
        Self.expectFailure(s.run("show", String(id.prefix(3))), 2, mentioning: "at least 4 hex digits")
        Self.expectFailure(s.run("show", "not-an-id"), 2, mentioning: "not a note id")
        // An error that quotes what was given stays one line, a line break in it shown as ␊.
        Self.expectFailure(s.run("show", "ab\ncd"), 2, mentioning: "ab\u{240A}cd")
        Self.expectFailure(s.run("list", "--category", "x\ny"), 3, mentioning: "x\u{240A}y")
        Self.expectFailure(s.run("alias", id, "a\nb"), 2, mentioning: "line break")
        Self.expectFailure(s.run("search", "x", "--bogus\nopt"), 2, mentioning: "--bogus\u{240A}opt")
        // Reading commands on a store that does not exist yet explain how to start.
        let fresh = try Sandbox()
        Self.expectFailure(fresh.run("list"), 3, mentioning: "notes add")
        #expect(!fileExists(fresh.store), "a read does not create the store")
    }

    @Test("an ambiguous prefix exits 3 and lists the candidates with their titles")
    func ambiguousPrefix() throws {
        let s = try Sandbox()
        // Ids that share their first digits, made through the library with a fixed generator.
        var options = Notebook.Options(actor: "fixture")
        options.ids = SharedPrefixIDs()
        options.clock = { 1_800_000_000_000_000 }
        var ids: [String] = []
        do {
            let book = try Notebook(path: s.store, options: options)
            for title in ["First", "Second", "Third"] { ids.append(try book.add(title: title).id.hex) }
        }
        #expect(ids.allSatisfy { $0.hasPrefix("abcd") })
        let r = s.run("show", "abcd")
        Self.expectFailure(r, 3, mentioning: "matches 3 notes")
        for (id, title) in zip(ids, ["First", "Second", "Third"]) {
            #expect(r.stderr.contains("\(id.prefix(8)) \"\(title)\""), "candidate \(id.prefix(8)) \(title)")
        }
        #expect(r.stderr.contains("type more digits"))
        Self.expectFailure(s.run("pin", "ABCD"), 3, mentioning: "matches 3 notes")
        // The short ids the CLI prints, and longer prefixes, are unique.
        for (id, title) in zip(ids, ["First", "Second", "Third"]) {
            #expect(try s.object("show", String(id.prefix(8)))["title"] as? String == title)
            #expect(try s.object("show", String(id.prefix(12)))["title"] as? String == title)
        }
        #expect(try s.titles("--sort", "title") == ["First", "Second", "Third"])
    }

    @Test("store unusable exits 5: a file as the store, a newer format")
    func storeUnusable() throws {
        let s = try Sandbox()
        write(file: s.path("a-file"), "not a store\n")
        Self.expectFailure(s.run("--store", s.path("a-file"), "list"), 5, mentioning: "not a notes store")
        Self.expectFailure(s.run("--store", s.path("a-file"), "add", "X"), 5, mentioning: "--store")
        // A path through the file: every command as `add` (before 2026-12-07 a read said "no
        // store yet; add a note", exit 3, and `add` then refused it).
        let through = s.path("a-file") + "/sub"
        for args in [["list"], ["add", "X"], ["stats"]] {
            Self.expectFailure(
                s.run(["--store", through] + args), 5,
                mentioning: "\(through) is not a notes store (it is not a folder); choose another path with --store")
        }
        #expect(String(decoding: read(file: s.path("a-file")), as: UTF8.self) == "not a store\n")
        // A folder of /proc or /sys, where no file can be made: every command as `add` (before
        // 2026-12-07 `add` said "storage error: mdb_env_open /proc/self: No such file or
        // directory", and a read "no store yet; add a note").
        for args in [["list"], ["add", "X"], ["stats"]] {
            Self.expectFailure(
                s.run(["--store", "/proc/self"] + args), 5,
                mentioning: "/proc/self is not a notes store (it is a folder of a file system the kernel makes up, "
                    + "where no file can be made); choose another path with --store")
        }
        // A folder not made yet inside one, and devpts (/dev/pts), a kernel's file system the
        // first fix left out: before, a read said "no store yet; add a note", and `add`
        // "storage error: mkdir /proc/self/notes: No such file or directory" or "permission
        // denied on the store".
        var kernelFolders = ["/proc/self/notes", "/proc/self/notes/deeper"]
        var pts = stat()
        if stat("/dev/pts", &pts) == 0 { kernelFolders += ["/dev/pts", "/dev/pts/notes"] }
        for path in kernelFolders {
            for args in [["list"], ["add", "X"], ["stats"]] {
                Self.expectFailure(
                    s.run(["--store", path] + args), 5,
                    mentioning: "\(path) is not a notes store (it ")
            }
        }
        // A file there is said to be one, not a folder (before, "it is a folder of a file system
        // the kernel makes up").
        for args in [["list"], ["add", "X"]] {
            let run = s.run(["--store", "/proc/version"] + args)
            Self.expectFailure(run, 5, mentioning: "/proc/version is not a notes store (it is a file)")
        }

        let id = try s.add("Note")
        do {
            let env = try Environment(path: s.store)
            let meta = try env.openDatabase("meta")
            try env.write { txn throws in try txn.put(meta, key: Array("format".utf8), value: [0, 0, 0, 99]) }
        }
        let before = read(file: s.store + "/data.mdb")
        for args in [["list"], ["show", id], ["add", "Y"], ["pin", id], ["stats"]] {
            Self.expectFailure(s.run(args), 5, mentioning: "format 99")
        }
        #expect(read(file: s.store + "/data.mdb") == before, "a newer store is left untouched")
    }

    /// Root ignores file modes, so as root the binary runs as `nobody` through setpriv.
    static let canDropPrivileges = getuid() != 0 || hasProgram("setpriv")

    @Test(
        "store unusable exits 5: permission denied (as root, run as nobody via setpriv)",
        .enabled(if: canDropPrivileges, "running as root without setpriv: file modes cannot deny root"))
    func permissionDenied() throws {
        let s = try Sandbox()
        let id = try s.add("Private")
        if getuid() == 0 {
            // nobody may pass through the sandbox (0711) but not into the store (0700, owned by root).
            chmod(s.root, 0o711)
            chmod(s.store, 0o700)
            // Copied by cp, not written from here: a file this process held open for writing could
            // be inherited by a child another test forks meanwhile, and exec would then fail with
            // ETXTBSY (exit 126).
            let copy = s.path("notes-copy")
            let copied = s.run([notesBinary, copy], executable: "/bin/cp")
            try #require(copied.code == 0, "cp: \(copied)")
            chmod(copy, 0o755)
            let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", copy]
            let probe = s.run(asNobody + ["--version"], executable: "/usr/bin/setpriv")
            try #require(probe.code == 0, "nobody cannot run the copied binary: \(probe)")
            for args in [["list"], ["show", id], ["add", "X"]] {
                Self.expectFailure(s.run(asNobody + args, executable: "/usr/bin/setpriv"), 5, mentioning: "ermission")
            }
        } else {
            chmod(s.store, 0)
            defer { chmod(s.store, 0o700) }
            for args in [["list"], ["show", id], ["add", "X"]] {
                Self.expectFailure(s.run(args), 5, mentioning: "ermission")
            }
        }
        #expect(try s.titles() == ["Private"])
    }
}

/// Ids whose first four hex digits are all `abcd`, differing in the next four: every note
/// (and event) id shares a 4-digit prefix while each short id stays unique.
final class SharedPrefixIDs: IdentifierGenerator {
    private let counter = Mutex<UInt64>(1)

    func next() -> Identifier {
        let n = counter.withLock { v -> UInt64 in
            defer { v += 1 }
            return v
        }
        return Identifier(high: (0xABCD_0000 + n) << 32 | 0x4000, low: 0x8000_0000_0000_0000 | n)
    }
}
