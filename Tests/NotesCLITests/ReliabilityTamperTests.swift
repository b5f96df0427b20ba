import EventStore
import Glibc
import LMDB
import Notes
import Testing

/// Damage on disk: bytes flipped in stored events and in projection records. `notes verify`
/// names each problem and exits 5, the rest of the notebook stays readable, nothing traps,
/// and `notes rebuild` repairs projections (never the log).
@Suite("Reliability: tampered and corrupted stores")
struct ReliabilityTamperTests {
    /// A store with a victim note whose first body survives only in its NoteCreated event
    /// (the body was edited since), and two bystanders.
    struct Fixture {
        let sandbox: Sandbox
        let victim: String
        let others: [String]
        /// Text found only in the victim's first event.
        static let marker = "MARKER-only-in-the-log-7f3a9c"

        init() throws {
            sandbox = try Sandbox()
            let first = try sandbox.add("bystander one", "--body", "first bystander")
            victim = try sandbox.add("victim", "--body", Self.marker)
            try sandbox.ok("edit", victim, "--body", "the current body")
            others = [first, try sandbox.add("bystander two", "--body", "second bystander")]
        }

        /// The log position of the event holding `marker`.
        func position(holding marker: String) throws -> UInt64 {
            let book = try Notebook(path: sandbox.store, options: libraryOptions())
            let wanted = Array(marker.utf8)
            return try #require(
                try book.store.read { txn throws in
                    var found: UInt64?
                    try book.store.forEachEvent(from: 1, in: txn) { view in
                        if contains(Array(view.payload), wanted) { found = view.position }
                        return found == nil
                    }
                    return found
                })
        }
    }

    /// Every command a user might try on a damaged store ends with an exit code, never a signal.
    static func expectNoTrap(_ s: Sandbox, _ ids: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        var commands: [[String]] = [["list", "--all"], ["stats"], ["categories"], ["search", "bystander"]]
        commands += [["export", "--output", s.path("export.jsonl")], ["verify", "--json"]]
        for id in ids {
            commands += [["show", id], ["history", id], ["show", id, "--at", "1"], ["diff", id]]
        }
        for args in commands {
            let r = s.run(args)
            #expect(
                (0...5).contains(r.code), "notes \(args.joined(separator: " ")) trapped: \(r)",
                sourceLocation: sourceLocation)
        }
    }

    @Test("a flipped byte in a stored event: verify names its position, other notes read, rebuild cannot hide it")
    func flippedEventByte() throws {
        let f = try Fixture()
        let s = f.sandbox
        let position = try f.position(holding: Fixture.marker)
        // LMDB keeps no checksums of its own; flip the marker's bytes wherever the file holds
        // them (old copies in free pages are harmless), as a failing disk or an editor would.
        let file = s.store + "/data.mdb"
        var bytes = read(file: file)
        let marker = Array(Fixture.marker.utf8)
        var flipped = 0
        var i = 0
        while let at = firstIndex(of: marker, in: bytes, from: i) {
            bytes[at + 3] ^= 0x20  // "MARKER" -> "MARkER"
            flipped += 1
            i = at + marker.count
        }
        try #require(flipped > 0, "the marker is not in data.mdb")
        write(file: file, bytes)

        let verify = s.run("verify")
        #expect(verify.code == 5, "\(verify)")
        #expect(verify.stdout.contains("position \(position): checksum"), "\(verify.stdout)")
        #expect(verify.stderr.contains("the log itself is damaged"), "\(verify.stderr)")
        for (id, body) in zip(f.others, ["first bystander", "second bystander"]) {
            #expect(try s.object("show", id)["body"] as? String == body)
        }
        #expect(try s.titles("--all").count == 3)
        Self.expectNoTrap(s, [f.victim] + f.others)

        // A rebuild replays the log: it may refuse, but it must not make the damage disappear.
        let rebuild = s.run("rebuild")
        #expect((0...5).contains(rebuild.code), "\(rebuild)")
        let again = s.run("verify")
        #expect(again.code == 5 && again.stdout.contains("position \(position): checksum"), "\(again)")
        #expect(try s.object("show", f.others[0])["body"] as? String == "first bystander")
    }

    @Test("an event altered with a recomputed checksum is caught by the hash chain alone")
    func chainCatchesRecomputedChecksum() throws {
        let f = try Fixture()
        let s = f.sandbox
        let position = try f.position(holding: Fixture.marker)
        // Change the actor (which no projection holds) and recompute the CRC-32C, as someone
        // who knows the format would: only the chain digest can tell.
        let env = try Environment(path: s.store)
        let events = try env.openDatabase("events")
        var key = [UInt8](repeating: 0, count: 8)
        for b in 0..<8 { key[b] = UInt8(truncatingIfNeeded: position >> (56 - 8 * UInt64(b))) }
        try env.write { txn throws in
            var value = try #require(try txn.get(events, key: key))
            let actor = Array("tester@test".utf8)
            let at = try #require(firstIndex(of: actor, in: value, from: 0))
            value[at] = UInt8(ascii: "T")
            let crc = CRC32C.checksum(Array(value[0..<(value.count - 4)]))
            for b in 0..<4 { value[value.count - 4 + b] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32(b))) }
            try txn.put(events, key: key, value: value)
        }

        let verify = s.run("verify", "--json")
        #expect(verify.code == 5, "\(verify)")
        let problems = try #require(try verify.object()["problems"] as? [[String: Any]])
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?["kind"] as? String == "chain")
        #expect(problems.first?["position"] as? Int == Int(position))
        // The event itself reads (its checksum is right), and so does everything else.
        #expect(try s.object("show", f.victim)["body"] as? String == "the current body")
        Self.expectNoTrap(s, [f.victim] + f.others)
        #expect(s.run("rebuild").code == 0)
        let again = s.run("verify")
        #expect(again.code == 5 && again.stdout.contains("position \(position): chain"), "\(again)")
    }

    /// The victim's record in the active notes projection, changed by `damage` through LMDB.
    func damageNoteRecord(_ f: Fixture, _ damage: (inout [UInt8]) -> Void) throws {
        let book = try Notebook(path: f.sandbox.store, options: libraryOptions())
        let id = try book.resolve(f.victim)
        let db = try book.read { _, dbs in dbs["notes"] }
        try book.store.environment.write { txn throws in
            var value = try #require(try txn.get(db, key: id.bytes))
            damage(&value)
            try txn.put(db, key: id.bytes, value: value)
        }
    }

    @Test(
        "a damaged projection record: verify names the note, other notes read, rebuild repairs it",
        arguments: ["changed body", "truncated record", "missing list entry"])
    func damagedProjection(kind: String) throws {
        let f = try Fixture()
        let s = f.sandbox
        switch kind {
        case "changed body":
            try damageNoteRecord(f) { value in
                let at = firstIndex(of: Array("current".utf8), in: value, from: 0) ?? value.count / 2
                value[at] ^= 0x01
            }
        case "truncated record":
            try damageNoteRecord(f) { value in value.removeLast(value.count / 2) }
        default:
            let book = try Notebook(path: s.store, options: libraryOptions())
            let id = try book.resolve(f.victim)
            let db = try book.read { _, dbs in dbs["list"] }
            try book.store.environment.write { txn throws in
                var doomed: [UInt8]?
                try txn.withCursor(db) { c in
                    var entry = try c.first()
                    while let e = entry, doomed == nil {
                        if contains(Array(e.key), id.bytes) { doomed = Array(e.key) }
                        entry = try c.next()
                    }
                }
                #expect(try txn.delete(db, key: try #require(doomed)))
            }
        }

        let verify = s.run("verify")
        #expect(verify.code == 5, "\(verify)")
        #expect(verify.stdout.contains("projection:"), "\(verify.stdout)")
        if kind != "missing list entry" {
            #expect(verify.stdout.contains(f.victim), "names the note: \(verify.stdout)")
        }
        #expect(verify.stderr.contains("notes rebuild"), "suggests the repair: \(verify.stderr)")
        #expect(!verify.stdout.contains("current body") && !verify.stderr.contains("current body"), "echoes note text")
        for (id, body) in zip(f.others, ["first bystander", "second bystander"]) {
            #expect(try s.object("show", id)["body"] as? String == body)
        }
        let victim = s.run("show", f.victim, "--json")
        #expect(victim.code == 0 || victim.code == 5, "\(victim)")
        if kind == "truncated record" { #expect(victim.code == 5 && victim.stderr.contains("notes rebuild")) }
        Self.expectNoTrap(s, [f.victim] + f.others)

        try s.ok("rebuild")
        #expect(s.run("verify").code == 0)
        #expect(try s.object("show", f.victim)["body"] as? String == "the current body")
        #expect(try s.titles("--all").count == 3)
    }
}

extension ReliabilityTamperTests {
    @Test("a flipped byte in any page's header: verify and list end with an exit code, 0 or 5, never a signal")
    func damagedPageHeaders() throws {
        let f = try Fixture()
        let s = f.sandbox
        for i in 0..<30 {
            try s.add("note \(i)", "--body", "body \(i) [[note \(i + 1)]] " + String(repeating: "lorem ", count: 40))
        }
        let file = s.store + "/data.mdb"
        let pristine = read(file: file)
        let pages = pristine.count / 4096
        var refused = 0
        // Byte 0x12 of a page: its flags and free-space bounds, which LMDB trusts (the meta pages
        // are checked by LMDB itself and left alone).
        for page in 2..<pages {
            var bytes = pristine
            bytes[page * 4096 + 0x12] ^= 0xFF
            write(file: file, bytes)
            for args in [["verify"], ["list", "--all"]] {
                let r = s.run(args, faultsExpected: true)
                #expect(r.code == 0 || r.code == 5, "page \(page), \(args): \(r)")
                if r.code == 5 {
                    refused += 1
                    // Its last line is the error (LMDB's own assertion may print one before it).
                    let last = r.stderr.split(separator: "\n").last ?? ""
                    #expect(last.hasPrefix("notes: error: "), "\(r)")
                    // Damage to a projection's pages is a projection problem, which rebuild
                    // repairs, not a bare storage error.
                    #expect(!r.stderr.contains("storage error: cursor on p"), "\(r)")
                }
            }
        }
        #expect(refused > 0, "some damage is found")
        write(file: file, pristine)
        #expect(s.run("verify").code == 0)
    }

    @Test("a data.mdb cut short is refused as damaged by every command, exit 5, never a SIGBUS")
    func truncatedDataFile() throws {
        let f = try Fixture()
        let s = f.sandbox
        // Enough pages that a cut leaves the meta pages but not the rest.
        for i in 0..<40 { try s.add("note \(i)", "--body", String(repeating: "words \(i) ", count: 200)) }
        let file = s.store + "/data.mdb"
        var st = stat()
        try #require(stat(file, &st) == 0 && st.st_size > 3 * 4096)
        for size in [Int(st.st_size) - 4096, Int(st.st_size) / 2, 8192] {
            try #require(truncate(file, off_t(size)) == 0)
            for args in [["list"], ["verify"], ["export"], ["show", f.victim], ["add", "more"], ["rebuild"]] {
                let r = s.run(args)
                #expect(r.code == 5, "\(args) at \(size) bytes: \(r)")
                #expect(r.stderr.contains("damaged") && r.stderr.contains("cut short"), "\(args): \(r.stderr)")
            }
        }
    }

    /// A fixture's store with notes "one" and "two" added last, its data file's path and bytes.
    private func twoNotes() throws -> (Fixture, String, [UInt8]) {
        let f = try Fixture()
        try f.sandbox.add("one")
        try f.sandbox.add("two")
        let file = f.sandbox.store + "/data.mdb"
        return (f, file, read(file: file))
    }

    @Test("a header page counting more pages than any file holds is refused as damaged, exit 5, never a trap or a hang")
    func headerCountingTooManyPages() throws {
        let (f, file, pristine) = try twoNotes()
        let s = f.sandbox
        // The newest meta page; its last page number is at byte 120, after the page's header.
        let newest = newestMetaPage(pristine)
        // A bit flipped high in the count: its product with the page size overflows (a trap
        // before); two bits: the count reads negative through `Int` (endless map growth before).
        for flips in [[6], [6, 7], [4]] {
            var damaged = pristine
            for b in flips { damaged[newest * 4096 + 16 + 120 + b] ^= 0x80 }
            write(file: file, damaged)
            for args in [["list"], ["verify"], ["export"], ["add", "more"]] {
                let r = s.run(args)
                #expect(r.code == 5, "\(args), bytes \(flips) flipped: \(r)")
                #expect(r.stderr.contains("damaged"), "\(args): \(r.stderr)")
            }
        }
        write(file: file, pristine)
        #expect(s.run("verify").code == 0)
    }

    @Test("a bit flipped in a header page's transaction id: refused (exit 5), not opened at the older state")
    func headerTransactionIDFlipped() throws {
        let (f, file, pristine) = try twoNotes()
        let s = f.sandbox
        let newest = newestMetaPage(pristine)
        let older = 1 - newest
        // The older page's id made the higher (LMDB opened it: "two" was hidden, then the next
        // write overwrote the newer page for good), or either page's parity broken.
        for (page, byte, bit) in [(older, 0, 6), (older, 2, 0), (older, 7, 7), (newest, 0, 0), (older, 0, 0)] {
            var damaged = pristine
            damaged[page * 4096 + 16 + 128 + byte] ^= UInt8(1 << bit)
            write(file: file, damaged)
            for args in [["list"], ["verify"], ["add", "more"]] {
                let r = s.run(args)
                #expect(r.code == 5, "\(args), page \(page) byte \(byte) bit \(bit): \(r)")
                #expect(r.stderr.contains("two header pages name transactions"), "\(args): \(r.stderr)")
            }
            #expect(read(file: file) == damaged, "nothing was written")
        }
        write(file: file, pristine)
        let titles = try s.titles()
        #expect(titles.contains("two") && titles.contains("one"), "the last commit is there: \(titles)")
        #expect(s.run("verify").code == 0)
    }

    @Test("a free-list entry naming a page in use or past the file: verify says the pages are damaged, exit 5")
    func damagedFreeList() throws {
        let f = try Fixture()
        let s = f.sandbox
        // Edits free pages: the free list has entries.
        for i in 0..<20 {
            let id = try s.add("note \(i)", "--body", "body \(i)")
            try s.ok("edit", id, "--body", "edited \(i)")
        }
        #expect(s.run("verify").code == 0)
        let file = s.store + "/data.mdb"
        let pristine = read(file: file)
        let word = littleEndianWord
        // The newest meta page; its free database's root (byte 40 of its record, after magic,
        // version, address and map size), a leaf here; that leaf's first node's first page.
        let meta = newestMetaPage(pristine)
        let freeRoot = word(pristine, meta * 4096 + 16 + 24 + 40, 8)
        let mainRoot = word(pristine, meta * 4096 + 16 + 24 + 48 + 40, 8)
        let leaf = freeRoot * 4096
        try #require(word(pristine, leaf + 10, 2) & 0x02 != 0, "the free list's root is a leaf")
        let node = leaf + word(pristine, leaf + 16, 2)
        let data = node + 8 + word(pristine, node + 6, 2)
        try #require(word(pristine, data, 8) >= 1, "the first free-list record names pages")
        for (target, says) in [(mainRoot, "which a database still uses"), (1 << 40, "outside the file's pages")] {
            var damaged = pristine
            for k in 0..<8 { damaged[data + 8 + k] = UInt8(truncatingIfNeeded: target >> (8 * k)) }
            write(file: file, damaged)
            let r = s.run("verify")
            #expect(r.code == 5, "\(r)")
            #expect(r.stdout.contains("pages: the free list names page \(target)") && r.stdout.contains(says), "\(r)")
            #expect(r.stderr.contains("write nothing to this store"), "\(r.stderr)")
        }
        write(file: file, pristine)
        #expect(s.run("verify").code == 0)
    }
}

/// The little-endian integer of `size` bytes at `at` of `bytes` (a field of an LMDB page).
func littleEndianWord(_ bytes: [UInt8], _ at: Int, _ size: Int) -> Int {
    (0..<size).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
}

/// Which of a `data.mdb`'s two meta pages (4 KiB each) is the newest: the higher transaction
/// id, at byte 128 of the meta, after the page's 16-byte header.
func newestMetaPage(_ bytes: [UInt8]) -> Int {
    littleEndianWord(bytes, 4096 + 16 + 128, 8) > littleEndianWord(bytes, 16 + 128, 8) ? 1 : 0
}

/// The first index at or after `start` where `needle` occurs in `haystack`.
func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
    var i = start
    while i <= haystack.count - needle.count {
        if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        i += 1
    }
    return nil
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { firstIndex(of: needle, in: haystack, from: 0) != nil }

extension ReliabilityTamperTests {
    @Test(
        "a damaged search index: search exits 5 with the damaged-store advice (run `notes rebuild`), which repairs it")
    func damagedSearchIndex() throws {
        let f = try Fixture()
        let s = f.sandbox
        let book = try Notebook(path: s.store, options: libraryOptions())
        let db = try book.read { _, dbs in dbs["search_postings"] }
        // Every posting block claims three entries and holds no term frequency: undecodable.
        try book.store.environment.write { txn throws in
            var keys: [[UInt8]] = []
            try txn.withCursor(db) { c in
                var entry = try c.first()
                while let e = entry {
                    keys.append(Array(e.key))
                    entry = try c.next()
                }
            }
            #expect(!keys.isEmpty)
            for key in keys { try txn.put(db, key: key, value: [0x03, 0x00, 0x04, 0x01, 0x01, 0x01, 0, 0, 0, 0]) }
        }
        let r = s.run("search", "bystander")
        CLIErrorTests.expectFailure(r, 5, mentioning: "run `notes rebuild` to repair them")
        #expect(r.stderr.contains("search index") && !r.stderr.contains("unexpected error"), "\(r.stderr)")
        try s.ok("rebuild")
        #expect(try s.ok("search", "bystander", "--json").stdout.contains("bystander one"))
    }
}

extension ReliabilityTamperTests {
    /// Deletes `versions` of the victim's stream from the log's index (`streams`), and its head
    /// (`stream_heads`) when `head` is set, as a flipped bit in those pages can lose them.
    func damageStreamIndex(_ f: Fixture, versions: [UInt64], head: Bool = false) throws {
        let book = try Notebook(path: f.sandbox.store, options: libraryOptions())
        let stream = Array(Note.stream(try book.resolve(f.victim)).utf8)
        let env = book.store.environment
        let streams = try env.openDatabase("streams")
        let heads = try env.openDatabase("stream_heads")
        try env.write { txn throws in
            for v in versions {
                var key = stream + [0]
                withUnsafeBytes(of: v.bigEndian) { key.append(contentsOf: $0) }
                #expect(try txn.delete(streams, key: key))
            }
            if head { #expect(try txn.delete(heads, key: stream)) }
        }
    }

    @Test(
        "a note the log's index has lost (its events, a version, its head): damage, exit 5, not 'no note' or 'changed meanwhile'",
        arguments: ["every version", "one version", "the head"])
    func streamIndexDamage(kind: String) throws {
        let f = try Fixture()
        let s = f.sandbox
        let before = try s.ok("export").stdout
        switch kind {
        case "every version": try damageStreamIndex(f, versions: [1, 2])
        case "one version": try damageStreamIndex(f, versions: [1])
        default: try damageStreamIndex(f, versions: [], head: true)
        }
        // The note is still listed (its projection is whole).
        #expect(try s.titles("--all").contains("victim"))
        var commands: [[String]] = [["restore", f.victim, "--to", "1"], ["undo", f.victim]]
        if kind == "the head" {
            // A write checks the head it appends after (an edit reads no index).
            commands += [["edit", f.victim, "--title", "x"], ["tag", f.victim, "t"]]
        } else {
            commands += [
                ["show", f.victim, "--at", "1"], ["diff", f.victim, "1", "2"], ["blame", f.victim, "--at", "1"],
            ]
        }
        if kind == "every version" { commands += [["history", f.victim], ["blame", f.victim]] }
        for args in commands {
            let r = s.run(args)
            // Before 2026-12-07: "no note has id ...; try `notes list --all`" or "has no version 1
            // (versions run from 1 to 2)" (exit 3), "nothing to undo" (exit 2), or "it changed
            // meanwhile; run `notes show ID` and try again" (exit 4).
            #expect(r.code == 5, "notes \(args.joined(separator: " ")): \(r)")
            #expect(r.stderr.contains("the store is damaged") && r.stderr.contains(f.victim), "\(r.stderr)")
            #expect(r.stderr.contains("notes verify"), "says what to do: \(r.stderr)")
            #expect(!r.stderr.contains("current body") && !r.stderr.contains(Fixture.marker), "echoes note text")
        }
        #expect(s.run("verify").code == 5)
        // Nothing was written, and the bystanders still read and change.
        #expect(try s.ok("export").stdout == before)
        for id in f.others { #expect(s.run("history", id).code == 0) }
        try s.ok("edit", f.others[0], "--title", "still writable")
        // A note that does not exist is still not found (exit 3).
        #expect(s.run("history", "0123456789abcdef0123456789abcdef").code == 3)
    }
}
