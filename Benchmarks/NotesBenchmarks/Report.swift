import Glibc
import Synchronization

/// Where the figures were measured.
struct Machine {
    var cores: Int
    var os: String
    var swift: String
    var date: String
    var commit: String
    var load: String

    static func current() -> Machine {
        let os =
            readTextFile("/etc/os-release")?.split(separator: "\n")
            .first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst(12).filter { $0 != "\"" }) } ?? "Linux"
        return Machine(
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), os: os, swift: output(["swift", "--version"]) ?? "?",
            date: output(["date", "-u", "+%Y-%m-%dT%H:%M:%SZ"]) ?? "?",
            commit: output(["git", "rev-parse", "--short", "HEAD"]) ?? "?",
            load: readTextFile("/proc/loadavg").map {
                String($0.split(separator: " ").prefix(3).joined(separator: " "))
            }
                ?? "?")
    }

    var summary: String {
        "\(cores) cores, \(os), \(swift), \(date), commit \(commit), load \(load)"
    }

    /// The first line a command prints, or nil.
    static func output(_ argv: [String]) -> String? {
        let file = "/tmp/notes-bench-\(getpid()).out"
        defer { unlink(file) }
        guard runProcess(argv, stdoutPath: file, quiet: true).status == 0, let text = readTextFile(file) else {
            return nil
        }
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        // `swift --version` starts with the vendor; keep "Swift version X.Y.Z".
        if let r = line.firstRange(of: "Swift version ") {
            return "Swift " + line[r.upperBound...].prefix { $0 != " " }
        }
        return line
    }
}

/// Samples the resident anonymous memory (the heap, not the mapped store) of this process
/// every 2 ms on a thread, keeping the peak; VmHWM alone also counts the store file's pages
/// the map has touched.
final class MemorySampler: Sendable {
    private let running = Atomic<Bool>(true)
    private let peak = Atomic<Int>(0)
    private let done = Atomic<Bool>(false)

    init() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let sampler = Unmanaged<MemorySampler>.fromOpaque(raw).takeRetainedValue()
                while sampler.running.load(ordering: .relaxed) {
                    let now = residentAnonymousBytes()
                    if now > sampler.peak.load(ordering: .relaxed) { sampler.peak.store(now, ordering: .relaxed) }
                    usleep(2000)
                }
                sampler.done.store(true, ordering: .releasing)
                return nil
            }, box)
        pthread_detach(thread)
    }

    /// Stops sampling and returns the peak in bytes.
    func stop() -> Int {
        let last = residentAnonymousBytes()
        running.store(false, ordering: .relaxed)
        while !done.load(ordering: .acquiring) { usleep(500) }
        return max(last, peak.load(ordering: .relaxed))
    }
}

/// The results as JSON (see scripts/bench-table.py, which turns it into the README table).
func resultsJSON(
    figures: [Figure], machine: Machine, scale: String, source: String, events: Int, notes: Int, seconds: Double,
    failures: [String], search: [String] = []
) -> String {
    func str(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
    func num(_ v: Double) -> String { v.isFinite ? "\(v)" : "null" }
    func stat(_ s: Stat) -> String {
        "{\"median\": \(num(s.median)), \"min\": \(num(s.min)), \"max\": \(num(s.max)), \"runs\": \(s.runs)}"
    }
    var rows: [String] = []
    for f in figures {
        var fields = [
            "\"name\": \(str(f.name))", "\"title\": \(str(f.title))", "\"unit\": \(str(f.unit))",
            "\"value\": \(stat(f.value))",
        ]
        let extra = f.extra.map { "\(str($0.0)): \(str($0.1))" }.joined(separator: ", ")
        fields.append("\"extra\": {\(extra)}")
        if let p = f.peer, let t = f.peerTitle {
            fields.append(
                "\"peer\": {\"title\": \(str(t)), \"unit\": \(str(f.peerUnit ?? f.unit)), \"value\": \(stat(p))}")
        }
        if let r = f.ratio { fields.append("\"ratio\": \(num(r))") }
        if let g = f.goal { fields.append("\"goal\": \(str(g))") }
        if let m = f.goalMet { fields.append("\"goalMet\": \(m)") }
        rows.append("    {" + fields.joined(separator: ", ") + "}")
    }
    return """
        {
          "machine": {"cores": \(machine.cores), "os": \(str(machine.os)), "swift": \(str(machine.swift)), \
        "date": \(str(machine.date)), "commit": \(str(machine.commit)), "load": \(str(machine.load))},
          "scale": \(str(scale)),
          "source": \(str(source)),
          "events": \(events),
          "notes": \(notes),
          "seconds": \(num(seconds)),
          "failures": [\(failures.map(str).joined(separator: ", "))],
          "search": [\(search.map(str).joined(separator: ", "))],
          "figures": [
        \(rows.joined(separator: ",\n"))
          ]
        }

        """
}

func writeFile(_ path: String, _ text: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var t = text
    return t.withUTF8 { buf in write(fd, buf.baseAddress, buf.count) == buf.count }
}
