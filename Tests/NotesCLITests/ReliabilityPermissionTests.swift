import Glibc
import Testing

/// The store is private by construction: directory 0700 and files 0600 whatever the umask, a
/// warning when others can write the directory, and note text never written to error messages
/// or files outside the store unless the user asked to see it.
@Suite("Reliability: permissions and privacy")
struct ReliabilityPermissionTests {
    static func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : nil
    }

    @Test("a new store is 0700 with 0600 files, parents included, even under umask 000", arguments: ["000", "022"])
    func creationModes(umask: String) throws {
        let s = try Sandbox()
        let store = s.path("deep/er/store")
        let r = s.run(
            ["-c", "umask \(umask) && exec \"$0\" \"$@\"", notesBinary, "--store", store, "add", "Private"],
            executable: "/bin/sh")
        try #require(r.code == 0, "\(r)")
        #expect(Self.mode(store) == 0o700)
        #expect(Self.mode(s.path("deep")) == 0o700 && Self.mode(s.path("deep/er")) == 0o700)
        for file in ["data.mdb", "lock.mdb"] { #expect(Self.mode(store + "/" + file) == 0o600, "\(file)") }
    }

    @Test("a store directory others can write draws a warning on stderr; a private one does not")
    func writableByOthersWarns() throws {
        let s = try Sandbox()
        try s.add("Note")
        for (mode, warns) in [(0o777, true), (0o770, true), (0o755, false), (0o700, false)] as [(mode_t, Bool)] {
            chmod(s.store, mode)
            let r = s.run("list", "--json")
            #expect(r.code == 0, "\(r)")
            #expect(try r.array().count == 1, "stdout stays clean JSON")
            #expect(
                r.stderr.contains("writable by other users") == warns, "mode \(String(mode, radix: 8)): \(r.stderr)")
            if warns { #expect(r.stderr.contains("chmod 700")) }
        }
    }

    @Test("refusals never echo note text: long bodies and titles, conflicts, bad imports, damaged stores")
    func errorsDoNotEchoNoteText() throws {
        let s = try Sandbox()
        let secret = "SECRET-\(UInt32.random(in: 0...UInt32.max))"
        let limit: [String: String?] = ["NOTES_BODY_LIMIT": "64"]
        let id = try s.add("Visible", "--body", "\(secret) stored body")
        var failures: [CLIRun] = []
        let longBody = secret + String(repeating: " more", count: 40)
        failures.append(s.run(["add", "T", "--body", longBody], env: limit))
        failures.append(s.run(["edit", id, "--body", longBody], env: limit))
        failures.append(s.run(["add", secret + String(repeating: "t", count: 600)]))
        failures.append(s.run(["add", "line one\n\(secret)"]))
        failures.append(s.run("edit", id, "--expect-version", "7", "--body", "\(secret) new"))
        failures.append(s.run("categorize", id, secret + String(repeating: "c", count: 200)))
        let line =
            #"{"eventId":"00000000-0000-4000-8000-000000000001","stream":"note/00000000-0000-4000-8000-000000000002","#
            + #""version":1,"type":"NoteCreated","schemaVersion":2,"recordedAt":"2026-01-01T00:00:00Z","#
            + #""metadata":{"actor":"x"},"data":{"title":" \#(secret) ","body":"\#(longBody)","pinned":false,"category":null}}"#
        write(file: s.path("import.jsonl"), line + "\n")
        failures.append(s.run(["import", s.path("import.jsonl")], env: limit))
        failures.append(s.run(["import", s.path("import.jsonl")]))
        for r in failures {
            #expect(r.code != 0, "\(r)")
            #expect(!r.stderr.contains(secret) && !r.stdout.contains(secret), "note text in a refusal: \(r)")
        }
        // Nothing outside the store and the captured output holds the text: no logs, no temp files.
        for dir in ["home", "config", "data", "state", "tmp"] {
            let hits = s.run(["-c", "grep -rl \(secret) '\(s.path(dir))' || true"], executable: "/bin/sh")
            #expect(hits.stdout.isEmpty, "note text written to \(hits.stdout)")
        }
    }
}
