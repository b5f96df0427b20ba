import Glibc

/// Seconds of the monotonic clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Results of the work the benchmarks time are folded in here and printed at the end, so the
/// optimiser cannot prove the work unused and drop it.
nonisolated(unsafe) var blackHole: UInt64 = 0

@inline(never)
func consume(_ value: UInt64) { blackHole = blackHole &* 31 &+ value }

/// The median, fastest and slowest of several timed runs, in the figure's unit.
struct Stat: Sendable {
    var median: Double
    var min: Double
    var max: Double
    var runs: Int

    init(_ values: [Double]) {
        let sorted = values.sorted()
        runs = sorted.count
        median = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        if sorted.count > 1, sorted.count % 2 == 0 {
            median = (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }

    /// The spread as a share of the median: (max - min) / median.
    var spread: Double { median == 0 ? 0 : (max - min) / median }
}

/// Percentiles of individual operations, in milliseconds.
struct Latency: Sendable {
    var p50: Double
    var p99: Double
    var count: Int

    init(milliseconds: [Double]) {
        let s = milliseconds.sorted()
        count = s.count
        p50 = s.isEmpty ? .nan : s[s.count / 2]
        p99 = s.isEmpty ? .nan : s[Swift.min(s.count - 1, Int(Double(s.count) * 0.99))]
    }
}

/// Runs `body` `warmup` times untimed, then `runs` times; `body` times its own work (so setup
/// stays out of the figure) and returns (seconds, units of work, a value to keep).
func measureRate(
    warmup: Int, runs: Int, _ body: (_ run: Int) throws -> (seconds: Double, work: Double, keep: UInt64)
) rethrows -> Stat {
    for w in 0..<warmup { consume(try body(-1 - w).keep) }
    var rates: [Double] = []
    for r in 0..<runs {
        let (seconds, work, keep) = try body(r)
        consume(keep)
        rates.append(work / Swift.max(seconds, 1e-9))
    }
    return Stat(rates)
}

/// One line of the results table: our figure beside its peer or limit.
struct Figure: Sendable {
    /// Short machine name, e.g. `append`.
    var name: String
    /// What is measured, for the table.
    var title: String
    var unit: String
    var value: Stat
    /// Extra figures printed in the same row (p99, peak memory...).
    var extra: [(String, String)] = []
    var peerTitle: String?
    var peer: Stat?
    var peerUnit: String?
    /// Ours over the peer, labelled (e.g. `0.62x of raw scan`).
    var ratio: Double?
    var goal: String?
    var goalMet: Bool?
}

/// Formats a number with thousands separators and sensible precision.
func format(_ v: Double) -> String {
    guard v.isFinite else { return "n/a" }
    if abs(v) >= 1000 {
        let n = Int(v.rounded())
        var digits = Array(String(abs(n)))
        var out: [Character] = []
        while digits.count > 3 {
            out.insert(contentsOf: [","] + digits.suffix(3), at: 0)
            digits.removeLast(3)
        }
        out.insert(contentsOf: digits, at: 0)
        return (n < 0 ? "-" : "") + String(out)
    }
    if abs(v) >= 100 { return String(Int(v.rounded())) }
    if abs(v) >= 10 { return fixed(v, 1) }
    if abs(v) >= 1 { return fixed(v, 2) }
    return fixed(v, 3)
}

func fixed(_ v: Double, _ places: Int) -> String {
    guard v.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let n = Int((abs(v) * scale).rounded())
    let whole = n / Int(scale)
    var frac = String(n % Int(scale))
    while frac.count < places { frac = "0" + frac }
    return (v < 0 ? "-" : "") + String(whole) + (places > 0 ? "." + frac : "")
}

func describe(_ s: Stat, _ unit: String) -> String {
    "\(format(s.median)) \(unit) (±\(fixed(s.spread * 50, 0))%, \(s.runs) runs)"
}

/// Prints to stderr (progress), keeping stdout for the table.
func log(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Peak resident memory of this process so far (VmHWM), in bytes.
func peakResidentBytes() -> Int { statusField("VmHWM") }

/// Resident anonymous memory (heap, not the mapped store file) now, in bytes.
func residentAnonymousBytes() -> Int { statusField("RssAnon") }

/// A field of `/proc/self/status` (given in kB) in bytes, 0 when absent.
///
/// Read as bytes into a buffer on the stack: the memory sampler calls it every 2 ms beside the
/// work it measures (with strings and characters, it took a tenth of a core during a rebuild).
func statusField(_ name: String) -> Int {
    let fd = open("/proc/self/status", O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { buffer -> Int in
        var count = 0
        while count < buffer.count {
            let n = read(fd, buffer.baseAddress! + count, buffer.count - count)
            if n <= 0 { break }
            count += n
        }
        let key = Array((name + ":").utf8)
        var i = 0
        while i < count {
            var end = i
            while end < count && buffer[end] != 0x0A { end += 1 }
            if end - i > key.count && key.indices.allSatisfy({ buffer[i + $0] == key[$0] }) {
                var value = 0
                for k in (i + key.count)..<end where (0x30...0x39).contains(buffer[k]) {
                    value = value * 10 + Int(buffer[k] - 0x30)
                }
                return value * 1024
            }
            i = end + 1
        }
        return 0
    }
}

func readTextFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Removes a directory tree (the benchmark's scratch stores).
func removeDirectory(_ path: String) {
    _ = runProcess(["/bin/rm", "-rf", path], quiet: true)
}

/// A fresh scratch directory under $TMPDIR (or /tmp).
func scratchDirectory(_ label: String) -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/notes-bench-\(label)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buf -> String? in
        guard let p = buf.baseAddress, let dir = mkdtemp(p) else { return nil }
        return String(cString: dir)
    }
    guard let made else { fatalError("cannot create a scratch directory under \(base)") }
    return made
}

/// Bytes used by the files under `path` (du -sb).
func directoryBytes(_ path: String) -> Int {
    var total = 0
    guard let dir = opendir(path) else { return 0 }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        var st = stat()
        if stat(path + "/" + name, &st) == 0 { total += Int(st.st_size) }
    }
    return total
}

/// A count with thousands separators.
func formatCount(_ n: Int) -> String {
    abs(n) >= 1000 ? format(Double(n)) : String(n)
}
