import Basics
import EventStore
import FoundationEssentials
import Glibc
@_spi(FaultInjection) import LMDB
import SwiftEvolutionHistory
import TestSupport
import Testing

@testable import Notes
@testable import NotesInterchange

/// Every write path of the notebook with a fault injected at each of its steps: the Nth put,
/// commit or map growth fails with a full map, a full disk or an I/O error.
///
/// A command then either succeeds with exactly the result it has without the fault (the same
/// answer, a byte-identical export), or fails with the documented error and leaves the store
/// as it was (byte-identical export, `verify` passes), with no parser thread left running and
/// no temporary file left in the store. A full map on a put or a commit must never fail a
/// command: the write starts over in a grown map.
///
/// Commits and growths are few and all are tried; puts are sampled with a fixed seed: 6 per
/// path and error, 150 with `NOTES_LONG_TESTS=1` (every put where a path has fewer).
@Suite("Fault injection: every write path, a fault at every step")
struct FaultInjectionTests {
    static let long = ProcessInfo.processInfo.environment["NOTES_LONG_TESTS"] == "1"
    /// Puts tried per (path, failure).
    static let sampledPuts = long ? 150 : 6

    /// A store directory in a fresh temporary directory; removed with it.
    final class Scratch {
        let root: String
        init() throws {
            var template = Array("/tmp/notes-faults.XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { p in p.baseAddress.flatMap { mkdtemp($0) } }
            root = String(cString: try #require(made))
        }
        func path(_ name: String) -> String { root + "/" + name }
        deinit { _ = system("rm -rf '\(root)'") }
    }

    static let clockStart: Int64 = 1_795_953_600_000_000

    /// Options of every open: a fixed clock, ids from their own stem, a map of 1 MiB so that
    /// larger writes must grow it.
    static func options(stem: UInt64) -> Notebook.Options {
        var o = Notebook.Options(actor: "faults@test", command: "notes test")
        o.clock = { clockStart }
        o.ids = NotebookIDs(stem: stem)
        o.initialMapBytes = 1 << 20
        return o
    }

    static func export(_ book: Notebook) throws -> [UInt8] {
        var out: [UInt8] = []
        try book.exportEvents { out += $0 }
        return out
    }

    /// What a trial of one path observed.
    enum Outcome: Equatable {
        case succeeded(result: String, export: [UInt8])
        case failed(NotesError.Kind)
    }

    /// Files a path reads, made once per test so that every trial reads the same bytes.
    struct Inputs {
        let importFile: String
        let gzipFile: String
        let markdownFolder: String
    }

    /// One write path: the command, run on a copy of the base store.
    struct WritePath: Sendable, CustomStringConvertible {
        let name: String
        let run: @Sendable (Notebook, Inputs) throws -> String
        var description: String { name }
    }

    /// A store every path starts from: notes in two categories, edits, a pin, a trashed note.
    static func makeBase(at path: String) throws {
        let book = try Notebook(path: path, options: options(stem: 1))
        let a = try book.add(title: "Groceries", body: "- milk\n- eggs\n", category: "Home")
        try book.edit(a.id, body: "- oat milk\n- eggs\n- bread\n")
        let b = try book.add(title: "Trip", body: "Book the flight.\n", category: "Travel", pinned: true)
        try book.edit(b.id, title: "Trip to Lisbon")
        for i in 0..<6 { try book.add(title: "Home note \(i)", body: "body \(i)\n", category: "Home") }
        let c = try book.add(title: "Old", body: "gone\n")
        try book.trash(c.id)
    }

    /// The import paths' files: another notebook's export (its own ids, 300 events; also
    /// gzipped) and a Markdown folder.
    static func makeInputs(in scratch: Scratch) throws -> Inputs {
        let book = try Notebook(path: scratch.path("source"), options: options(stem: 7))
        for i in 0..<60 {
            let n = try book.add(title: "Imported \(i)", body: "text \(i)\n", category: i % 2 == 0 ? "Even" : nil)
            for v in 0..<3 { try book.edit(n.id, body: "text \(i) edit \(v)\n") }
        }
        let file = scratch.path("import.jsonl")
        try book.exportEvents(toFile: file)
        try #require(system("gzip -kf '\(file)'") == 0, "gzip is needed for the .gz path")
        let dir = scratch.path("md")
        try makeDirectories(dir + "/Work")
        for i in 0..<12 {
            let folder = i % 3 == 0 ? "Work/" : ""
            let text = "---\ntitle: Page \(i)\n---\nline \(i)\n"
            try #require(
                FileManager.default.createFile(atPath: "\(dir)/\(folder)page-\(i).md", contents: Data(text.utf8)))
        }
        return Inputs(importFile: file, gzipFile: file + ".gz", markdownFolder: dir)
    }

    static func note(_ book: Notebook, titled title: String) throws -> Identifier {
        var q = ListQuery()
        q.status = .all
        return try #require(try book.list(q).first { $0.title == title }).id
    }

    static let paths: [WritePath] = [
        WritePath(name: "add with a new category") { book, _ in
            let n = try book.add(title: "New", body: "fresh\n", category: "Work")
            return "\(n)"
        },
        WritePath(name: "edit title and body") { book, _ in
            "\(try book.edit(try note(book, titled: "Groceries"), title: "Shopping", body: "- tea\n"))"
        },
        WritePath(name: "pin") { book, _ in "\(try book.pin(try note(book, titled: "Old")))" },
        WritePath(name: "categorize into a new category") { book, _ in
            "\(try book.categorize(try note(book, titled: "Trip to Lisbon"), as: "Holidays"))"
        },
        WritePath(name: "rename a category") { book, _ in "\(try book.renameCategory("Home", to: "House"))" },
        WritePath(name: "delete a category with its notes") { book, _ in "\(try book.deleteCategory("Home"))" },
        WritePath(name: "restore a past version") { book, _ in
            let r = try book.restore(try note(book, titled: "Groceries"), to: .version(1))
            return "\(r.note) \(r.appended)"
        },
        WritePath(name: "undo") { book, _ in "\(try book.undo(try note(book, titled: "Trip to Lisbon")).note)" },
        WritePath(name: "import a file") { book, inputs in "\(try book.importEvents(fromFile: inputs.importFile))" },
        WritePath(name: "import a .gz file") { book, inputs in "\(try book.importEvents(fromFile: inputs.gzipFile))" },
        WritePath(name: "import-markdown") { book, inputs in "\(try book.importMarkdown(from: inputs.markdownFolder))"
        },
        WritePath(name: "import-history") { book, _ in "\(try book.importHistory(fromFile: historySample))" },
        WritePath(name: "rebuild") { book, _ in
            let r = try book.rebuild()
            return "\(r.events) \(r.toVersion)"
        },
    ]

    static let historySample = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Samples/swift-evolution-sample.jsonl").path

    /// Copies the base store into a new directory.
    static func copyBase(_ base: String, to path: String) throws {
        try makeDirectories(path)
        try #require(system("cp '\(base)/data.mdb' '\(path)/data.mdb'") == 0)
    }

    /// Runs `path` on a copy of the base store, with `plan` armed (or only counting).
    static func trial(
        _ path: WritePath, base: String, inputs: Inputs, scratch: Scratch, plan: FaultInjection.Plan
    ) throws -> (
        Outcome, [FaultInjection.Operation: Int]
    ) {
        let store = scratch.path("store-\(UInt64.random(in: 0...UInt64.max))")
        try copyBase(base, to: store)
        FaultInjection.arm(plan, at: store)
        defer { FaultInjection.disarm(at: store) }
        let outcome: Outcome
        var counts: [FaultInjection.Operation: Int] = [:]
        do {
            let book = try Notebook(path: store, options: options(stem: 2))
            do {
                let result = try path.run(book, inputs)
                counts = FaultInjection.counts(at: store)
                outcome = .succeeded(result: result, export: try export(book))
            } catch let e as NotesError {
                counts = FaultInjection.counts(at: store)
                outcome = .failed(e.kind)
            }
            #expect(try book.verify().isEmpty, "\(path) with \(plan): verify")
            if case .failed = outcome {
                let baseBook = try Notebook(path: base, options: options(stem: 9))
                #expect(try export(book) == (try export(baseBook)), "\(path) with \(plan): the store changed")
            }
        }
        #expect(ImportParser.running(forStoreAt: store) == 0, "\(path) with \(plan): a parser thread is still running")
        let left = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        #expect(left == ["data.mdb", "lock.mdb"], "\(path) with \(plan): the store directory holds \(left)")
        _ = system("rm -rf '\(store)'")
        return (outcome, counts)
    }

    /// The steps to try among `count`: all of them for few, else the first, the last and a
    /// seeded sample.
    static func steps(_ count: Int, sample: Int, seed: UInt64) -> [Int] {
        guard count > 0 else { return [] }
        if count <= sample + 2 { return Array(1...count) }
        var rng = SeededGenerator(seed: seed)
        var picked: Set<Int> = [1, count]
        while picked.count < sample + 2 { picked.insert(Int.random(in: 1...count, using: &rng)) }
        return picked.sorted()
    }

    @Test("each write path either succeeds exactly or fails cleanly, with the fault at every step", arguments: paths)
    func everyStep(_ path: WritePath) throws {
        let scratch = try Scratch()
        let base = scratch.path("base")
        try Self.makeBase(at: base)
        let inputs = try Self.makeInputs(in: scratch)
        let never = FaultInjection.Plan(.put, at: .max, failing: .noSpace)
        let (reference, counts) = try Self.trial(path, base: base, inputs: inputs, scratch: scratch, plan: never)
        guard case .succeeded = reference else {
            Issue.record("\(path) fails without a fault: \(reference)")
            return
        }
        var tried = 0
        for operation in FaultInjection.Operation.allCases {
            let total = counts[operation] ?? 0
            for failure in FaultInjection.Failure.allCases {
                let seed = UInt64(path.name.utf8.count) &* 1_000 &+ UInt64(tried)
                for step in Self.steps(total, sample: Self.sampledPuts, seed: seed) {
                    let plan = FaultInjection.Plan(operation, at: step, failing: failure)
                    let (outcome, _) = try Self.trial(path, base: base, inputs: inputs, scratch: scratch, plan: plan)
                    tried += 1
                    switch (operation, failure, outcome) {
                    case (.put, .mapFull, _), (.commit, .mapFull, _):
                        #expect(outcome == reference, "\(path) with \(plan): a full map must only restart the write")
                    case (_, _, .succeeded):
                        #expect(outcome == reference, "\(path) with \(plan): succeeded with another result")
                    case (_, .noSpace, .failed(let kind)):
                        #expect(kind == .diskFull, "\(path) with \(plan): \(kind)")
                    case (_, .io, .failed(let kind)):
                        #expect(kind == .storage(code: EIO), "\(path) with \(plan): \(kind)")
                    case (.growth, .mapFull, .failed(let kind)):
                        #expect(
                            kind == .storage(code: LMDBError.Code.mapFull.rawValue), "\(path) with \(plan): \(kind)")
                    case (.put, _, .failed), (.commit, _, .failed):
                        Issue.record("unreachable")
                    }
                }
            }
        }
        #expect(counts[.commit, default: 0] >= 1, "\(path) commits nothing")
        #expect(tried > 0)
        print(
            "fault trials: \(path): \(tried) (puts \(counts[.put] ?? 0), commits \(counts[.commit] ?? 0), "
                + "growths \(counts[.growth] ?? 0))")
    }
}

extension NotesError {
    /// What a fault trial compares: the kind of failure, not its wording.
    enum Kind: Equatable {
        case diskFull
        case storage(code: Int32)
        case other(String)
    }

    var kind: Kind {
        if case .store(.storage(let e)) = self {
            return e.isOutOfSpace ? .diskFull : .storage(code: e.code.rawValue)
        }
        return .other(description)
    }
}
