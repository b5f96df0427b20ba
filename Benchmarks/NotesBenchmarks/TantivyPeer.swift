import Basics
import Glibc

/// Tantivy (the `tantivy` Python package, pinned in `scripts/bench-deps.sh`) as the search
/// benchmark's second peer: `Benchmarks/tantivy_peer.py` run as a child process on the same
/// notes and queries, written to files. The child times each query around `searcher.search`
/// alone, so neither Python's start nor its loop is counted.
struct TantivyPeer {
    struct QuerySet {
        var name: String
        /// `and`: every word required (the speed sets); `or`: the question as typed, any word.
        var mode: String
        var queries: [String]
    }

    struct Run {
        var version: String
        var buildWall: Double
        var buildCPU: Double
        /// By set name: each query's seconds (the fastest of the timed passes), and its top hits
        /// as line numbers of the notes.
        var times: [String: [Double]]
        var hits: [String: [[Int64]]]
        /// By set name: each query's seconds in the first timed pass.
        var firstTimes: [String: [Double]] = [:]
    }

    enum Outcome {
        case ran(Run)
        case skipped(String)
    }

    /// Indexes `texts` (line n is note n) with `tokenizer` and runs `sets` for the top `limit`:
    /// a warm-up pass, then `repeats` timed passes.
    static func run(
        texts: [String], tokenizer: String, limit: Int, sets: [QuerySet], dir: String, repeats: Int = 1
    ) -> Outcome {
        guard let root = projectRoot() else {
            return .skipped("Benchmarks/tantivy_peer.py not found (run notes-bench from the project's directory)")
        }
        let python: String
        if let given = getenv("NOTES_BENCH_PYTHON").map({ String(cString: $0) }) {
            python = given
        } else {
            python = root + "/.build/bench-venv/bin/python"
            if access(python, X_OK) != 0 {
                log("Tantivy: installing its pinned version with scripts/bench-deps.sh ...")
                let status = (try? ChildProcess.run([root + "/scripts/bench-deps.sh"], standardOutput: 2)) ?? 127
                if status != 0 || access(python, X_OK) != 0 {
                    return .skipped(
                        "scripts/bench-deps.sh could not install it (exit \(status)); see its message above")
                }
            }
        }
        func clean(_ s: String) -> String {
            String(s.map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 })
        }
        let notesPath = dir + "/tantivy-notes.tsv"
        let outPath = dir + "/tantivy-out.json"
        var arguments = [
            python, root + "/Benchmarks/tantivy_peer.py", "--notes", notesPath, "--tokenizer", tokenizer,
            "--limit", String(limit), "--out", outPath, "--repeat", String(repeats),
        ]
        var files = [notesPath, outPath]
        do {
            // The id column is not read back: hits are line numbers.
            try writeText(
                texts.enumerated().map { n, t in String(n) + "\t" + clean(t) + "\n" }.joined(), to: notesPath)
            for (k, set) in sets.enumerated() {
                let path = dir + "/tantivy-queries-\(k).txt"
                files.append(path)
                try writeText(set.queries.map { clean($0) + "\n" }.joined(), to: path)
                arguments += ["--set", set.name, set.mode, path]
            }
        } catch {
            return .skipped("cannot write its input: \(error)")
        }
        defer { for f in files { unlink(f) } }
        let status: Int32
        do { status = try ChildProcess.run(arguments, standardOutput: 2) } catch {
            return .skipped("cannot start \(python) (posix_spawn error \(error.code))")
        }
        guard let bytes = try? readFile(outPath, upTo: 1 << 30), let json = try? JSONValue.parse(bytes) else {
            return .skipped("\(python) Benchmarks/tantivy_peer.py failed (exit \(status)) and wrote no result")
        }
        if let reason = json["skipped"]?.stringValue { return .skipped(reason) }
        var run = Run(
            version: json["version"]?.stringValue ?? "?", buildWall: json["build_wall"]?.doubleValue ?? .nan,
            buildCPU: json["build_cpu"]?.doubleValue ?? .nan, times: [:], hits: [:])
        for set in json["sets"]?.arrayValue ?? [] {
            guard let name = set["name"]?.stringValue else { continue }
            run.times[name] = (set["times"]?.arrayValue ?? []).compactMap(\.doubleValue)
            run.firstTimes[name] = (set["first"]?.arrayValue ?? []).compactMap(\.doubleValue)
            run.hits[name] = (set["hits"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).compactMap(\.int64Value) }
        }
        return .ran(run)
    }

    /// The project's directory: the current one when it holds the peer's script, else the one
    /// this executable was built in (`.build/<triple>/release/notes-bench`).
    static func projectRoot() -> String? {
        let script = "/Benchmarks/tantivy_peer.py"
        if access("." + script, R_OK) == 0, let cwd = getcwd(nil, 0) {
            defer { free(cwd) }
            return String(cString: cwd)
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        var parts = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(
            separator: "/", omittingEmptySubsequences: false)
        while parts.count > 1 {
            parts.removeLast()
            let dir = parts.joined(separator: "/")
            if access(dir + script, R_OK) == 0 { return dir }
        }
        return nil
    }
}

/// Writes `text` to `path` (replacing it).
func writeText(_ text: String, to path: String) throws {
    guard let f = fopen(path, "wb") else { throw BenchmarkFailure("cannot write \(path)") }
    defer { fclose(f) }
    let bytes = Array(text.utf8)
    guard fwrite(bytes, 1, bytes.count, f) == bytes.count else { throw BenchmarkFailure("cannot write \(path)") }
}
