import Foundation
import Testing

/// Wiki links and backlinks through the built binary: every command and flag of the links
/// issue, with NOTES_NOW fixing each run's clock.
@Suite("CLI: links and backlinks")
struct CLILinkTests {
    typealias H = HistoryCLITests

    @discardableResult
    func at(_ s: Sandbox, _ hour: Int, _ args: String...) throws -> CLIRun {
        let r = H.run(s, args, now: H.hour(hour))
        try #require(r.code == 0, "notes \(args.joined(separator: " ")) failed: \(r)")
        return r
    }

    func add(_ s: Sandbox, _ hour: Int, _ title: String, body: String = "") throws -> String {
        try at(s, hour, "add", title, "--body", body).line
    }

    /// `links ID --json`: per link, its text and the title it leads to (nil when unresolved).
    func targets(_ s: Sandbox, _ id: String, _ extra: String...) throws -> [String: String?] {
        let r = H.run(s, ["links", id, "--json"] + extra)
        try #require(r.code == 0, "\(r)")
        var out: [String: String?] = [:]
        for l in try r.array() {
            let target = try #require(l["target"] as? [String: Any])
            out[try #require(l["link"] as? String)] = target["title"] as? String
        }
        return out
    }

    /// `backlinks ID --json`: the titles of the linking notes, one per linking line.
    func backlinks(_ s: Sandbox, _ id: String, _ extra: String...) throws -> [String] {
        let r = H.run(s, ["backlinks", id, "--json"] + extra)
        try #require(r.code == 0, "\(r)")
        return try r.array().map { try #require($0["title"] as? String) }
    }

    @Test("links: titles folded, labels, sections, ids; code is not a link; text and JSON")
    func outgoing() throws {
        let s = try Sandbox()
        let plan = try add(s, 0, "Résumé Draft")
        let body = """
            See [[resume   draft]] and [[RÉSUMÉ DRAFT|my CV]] and [[Résumé Draft#Skills]].
            By id: [[\(plan)]]. Nowhere: [[No such page]].
            `[[in code]]` is not a link
            ```
            [[fenced]]
            ```
            """
        let hub = try add(s, 1, "Hub", body: body)
        let links = try H.ok(s, "links", hub, "--json").array()
        #expect(
            links.map { $0["link"] as? String } == [
                "[[resume   draft]]", "[[RÉSUMÉ DRAFT|my CV]]", "[[Résumé Draft#Skills]]", "[[\(plan)]]",
                "[[No such page]]",
            ])
        #expect(
            links.map { $0["label"] as? String } == [
                "resume   draft", "my CV", "Résumé Draft#Skills", plan, "No such page",
            ])
        #expect(links.map { $0["line"] as? Int } == [1, 1, 1, 2, 2])
        let resolved = links.map { ($0["target"] as? [String: Any])?["resolved"] as? Bool }
        #expect(resolved == [true, true, true, true, false])
        let first = try #require(links[0]["target"] as? [String: Any])
        #expect((first["id"] as? String)?.hasPrefix(plan) == true && first["status"] as? String == "active")
        #expect((links[4]["target"] as? [String: Any])?["reason"] as? String == "missing")
        let text = try H.ok(s, "links", hub).lines
        #expect(text.count == 5)
        #expect(text[1].hasPrefix("my CV") && text[1].contains(plan) && text[1].hasSuffix("Résumé Draft"), "\(text)")
        #expect(text[4].hasPrefix("No such page") && text[4].hasSuffix("missing"), "\(text)")
        #expect(try H.ok(s, "links", plan).line == "no links")
        // Several links on one line make one backlink; the id link's line is another.
        let back = try H.ok(s, "backlinks", plan).lines
        #expect(back.count == 2, "\(back)")
        #expect(back[0].hasPrefix(hub) && back[0].contains("Hub") && back[0].contains("1: See [[resume"), "\(back)")
        #expect(back[1].contains("2: By id: [[\(plan)]]"), "\(back)")
        let json = try H.ok(s, "backlinks", plan, "--json").array()
        #expect(json.map { $0["line"] as? Int } == [1, 2])
        #expect(json.first?["lineText"] as? String == body.split(separator: "\n").first.map(String.init))
        #expect(try H.ok(s, "backlinks", hub).line == "no backlinks")
    }

    @Test("a link follows its note through two renames; a reused title leads to its new holder; --as-of")
    func renames() throws {
        let s = try Sandbox()
        let plan = try add(s, 0, "Plan")
        let hub = try add(s, 1, "Hub", body: "read [[Plan]]")
        try at(s, 2, "edit", plan, "--title", "Roadmap")
        #expect(try targets(s, hub) == ["[[Plan]]": "Roadmap"], "the old title leads to the renamed note")
        try at(s, 3, "edit", plan, "--title", "Roadmap 2027")
        #expect(try targets(s, hub) == ["[[Plan]]": "Roadmap 2027"], "and through a second rename")
        #expect(try backlinks(s, plan) == ["Hub"])
        // Another note takes the title: links to it lead there from then on.
        let other = try add(s, 4, "plan")
        #expect(try targets(s, hub) == ["[[Plan]]": "plan"])
        #expect(try backlinks(s, plan) == [])
        #expect(try backlinks(s, other) == ["Hub"])
        // The past as it was: before the first rename, between the renames, before the new "plan".
        #expect(try targets(s, hub, "--as-of", H.hour(1)) == ["[[Plan]]": "Plan"])
        #expect(try targets(s, hub, "--as-of", "2026-11-01T13:30:00Z") == ["[[Plan]]": "Roadmap 2027"])
        #expect(try backlinks(s, plan, "--as-of", H.hour(3)) == ["Hub"])
        let before = H.run(s, ["backlinks", other, "--as-of", H.hour(3)])
        #expect(before.code == 3 && before.stderr.contains("did not exist yet"), "\(before)")
        #expect(try backlinks(s, other, "--as-of", H.hour(4)) == ["Hub"])
        // An id link does not care about titles.
        try at(s, 5, "edit", hub, "--body", "read [[\(plan)]] and [[Roadmap]]")
        #expect(try targets(s, hub) == ["[[\(plan)]]": "Roadmap 2027", "[[Roadmap]]": "Roadmap 2027"])
        #expect(try backlinks(s, plan) == ["Hub"], "two links on one line: one backlink")
        #expect(try backlinks(s, other) == [])
        #expect(try backlinks(s, other, "--as-of", H.hour(4)) == ["Hub"], "the body of that instant")
        try H.ok(s, "verify")
    }

    @Test("trashed targets say so; a missing link resolves once a note takes its title; the log is unchanged")
    func trashedAndLateTargets() throws {
        let s = try Sandbox()
        let old = try add(s, 0, "Archive")
        let hub = try add(s, 1, "Hub", body: "[[Archive]] [[Later]]")
        try at(s, 2, "trash", old)
        let links = try H.ok(s, "links", hub, "--json").array()
        #expect(((links[0]["target"] as? [String: Any])?["status"] as? String) == "trashed")
        #expect(try H.ok(s, "links", hub).lines.first?.hasSuffix("trashed") == true)
        #expect(try H.ok(s, "backlinks", old).lines.first?.contains("Hub") == true)
        // A live note with the title wins over the trashed one.
        let live = try add(s, 3, "archive")
        #expect(try targets(s, hub)["[[Archive]]"] == "archive")
        #expect(try backlinks(s, old) == [] && backlinks(s, live) == ["Hub"])

        #expect(try H.ok(s, "links", "--missing").lines.count == 1)
        let events = try H.ok(s, "export").stdout
        let later = try add(s, 4, "Later")
        #expect(try H.ok(s, "links", "--missing").line == "no missing links")
        #expect(try backlinks(s, later) == ["Hub"])
        let missingThen = try H.ok(s, "links", "--missing", "--as-of", H.hour(3), "--json").array()
        #expect(missingThen.map { $0["link"] as? String } == ["[[Later]]"])
        #expect((missingThen.first?["id"] as? String)?.hasPrefix(hub) == true)
        let exported = try H.ok(s, "export").stdout
        #expect(exported.hasPrefix(events), "resolving the link appended nothing to the hub's history")
        #expect(try H.ok(s, "history", hub).lines.count == 1)
    }

    @Test("list --orphans: no link to another note and none from one; with --as-of, as it was")
    func orphans() throws {
        let s = try Sandbox()
        let a = try add(s, 0, "A", body: "[[B]]")
        _ = try add(s, 1, "B")
        _ = try add(s, 2, "Alone", body: "[[Alone]] links only to itself, [[Nothing]] to nothing")
        #expect(try Set(s.titles("--orphans")) == ["Alone"])
        #expect(try s.titles("--orphans", "--as-of", H.hour(0)) == ["A"], "B did not exist: A's link led nowhere")
        try at(s, 3, "edit", a, "--body", "no more links")
        #expect(try Set(s.titles("--orphans")) == ["A", "B", "Alone"])
        #expect(try s.titles("--orphans", "--limit", "1").count == 1)
        #expect(try Set(s.titles("--orphans", "--as-of", H.hour(2))) == ["Alone"])
    }

    @Test("errors: one line, documented exit codes")
    func errors() throws {
        let s = try Sandbox()
        let a = try add(s, 0, "A")
        let none = s.run("links", "ffffffff")
        #expect(none.code == 3 && none.stderr.split(separator: "\n").count == 1, "\(none)")
        #expect(s.run("backlinks", "ffffffff").code == 3)
        #expect(s.run("links").code == 2, "an id or --missing is needed")
        #expect(s.run("backlinks").code == 2)
        #expect(s.run("links", a, "b").code == 2)
        #expect(s.run("links", "--missing", a).code == 2)
        let badInstant = s.run("backlinks", a, "--as-of", "yesterday-ish")
        #expect(badInstant.code == 2 && badInstant.stderr.hasPrefix("notes: error:"), "\(badInstant)")
        let early = H.run(s, ["links", a, "--as-of", "2020-01-01"])
        #expect(early.code == 3 && early.stderr.contains("did not exist yet"), "\(early)")
    }

    @Test("export, import, rebuild and verify keep the links")
    func interchange() throws {
        let s = try Sandbox()
        let plan = try add(s, 0, "Plan")
        let hub = try add(s, 1, "Hub", body: "[[Plan]] and [[Gone]]")
        try at(s, 2, "edit", plan, "--title", "Roadmap")
        try H.ok(s, "export", "--output", s.path("all.jsonl"))
        let other = s.path("other")
        try H.ok(s, "import", "--store", other, s.path("all.jsonl"))
        for store in [s.store, other] {
            #expect(try H.ok(s, "backlinks", plan, "--store", store).lines.first?.contains("Hub") == true)
            #expect(try H.ok(s, "links", "--missing", "--store", store).line.contains("[[Gone]]"))
            try H.ok(s, "verify", "--store", store)
        }
        try H.ok(s, "rebuild", "--store", other)
        #expect(try targets(s, hub, "--store", other) == ["[[Plan]]": "Roadmap", "[[Gone]]": nil])
        try H.ok(s, "verify", "--store", other)
    }

    @Test("alias: other names lead links to a note, after titles; history shows them; --as-of keeps their time")
    func aliases() throws {
        let s = try Sandbox()
        let cv = try add(s, 0, "Résumé Draft")
        // None yet: said in one line, and an empty list in JSON.
        #expect(try H.ok(s, "alias", cv).stdout == "no aliases\n")
        #expect(try H.ok(s, "alias", cv, "--json").stdout.contains(#""aliases": []"#))
        let hub = try add(s, 1, "Hub", body: "[[CV]] and [[curriculum vitae]] and [[Plan]]")
        #expect(try targets(s, hub) == ["[[CV]]": nil, "[[curriculum vitae]]": nil, "[[Plan]]": nil])
        try at(s, 2, "alias", cv, "CV", "Curriculum Vitae", "cv", "Plan")
        #expect(try at(s, 3, "alias", cv).stdout == "CV\nCurriculum Vitae\nPlan\n")
        #expect(
            try targets(s, hub) == [
                "[[CV]]": "Résumé Draft", "[[curriculum vitae]]": "Résumé Draft", "[[Plan]]": "Résumé Draft",
            ])
        #expect(try backlinks(s, cv) == ["Hub"])
        // A title wins over an alias.
        _ = try add(s, 4, "Plan")
        #expect(try targets(s, hub)["[[Plan]]"] == "Plan")
        #expect(try at(s, 5, "history", cv).stdout.contains(#"aliases "CV, Curriculum Vitae, Plan""#))
        try at(s, 6, "alias", cv, "--none")
        #expect(try H.ok(s, "alias", cv).stdout == "no aliases\n")
        // A name given up still leads to its note while no other note has it.
        #expect(try targets(s, hub)["[[CV]]"] == "Résumé Draft")
        #expect(try targets(s, hub, "--as-of", H.hour(1))["[[CV]]"] == .some(nil))
        let bad = H.run(s, ["alias", cv, "two\nlines"])
        #expect(bad.code == 2)
        #expect(bad.stderr.contains("alias \"two"))
        // A name a link cannot spell is kept, with a warning for each.
        let odd = H.run(s, ["alias", cv, "a|b", "C#", "fine"])
        #expect(odd.code == 0, "\(odd)")
        #expect(odd.stderr.contains("alias \"a|b\" holds |, which a [[link]] reads as its syntax"), "\(odd.stderr)")
        #expect(odd.stderr.contains("alias \"C#\" holds #"))
        #expect(!odd.stderr.contains("\"fine\""))
        try s.ok("verify")
    }
}
