import Glibc

/// Whether every byte of `bytes` is ASCII, eight at a time.
public func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var i = 0
    let n = bytes.count
    while i &+ 8 <= n {
        if UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
        i &+= 8
    }
    while i < n {
        if base[i] >= 0x80 { return false }
        i &+= 1
    }
    return true
}

/// `text.contains(needle)`, as the standard library answers it (character by character,
/// canonically equivalent characters equal), by a byte search where that gives the same answer;
/// the standard library's search is generic and costs tens of thousands of instructions on a
/// note's body (`import-markdown` spent 5% of its instructions in one such call a file).
///
/// The byte search decides for a `needle` of printable ASCII (no control character, so no CR or
/// LF, which join into one character): in an ASCII `text` every byte is a character, so the
/// bytes match where the characters do; in any `text` no match of the bytes means no match,
/// unless the needle holds `K`, `;` or `` ` ``, which U+212A, U+037E and U+1FEF are canonically
/// equivalent to. Everything else goes to the standard library.
public func textContains(_ text: String, _ needle: String) -> Bool {
    var text = text
    var needle = needle
    let answer: Bool? = needle.withUTF8 { n -> Bool? in
        guard !n.isEmpty, n.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return text.withUTF8 { t -> Bool? in
            if holds(t, n) { return isASCII(t) ? true : nil }
            let hasEquivalent = n.contains { $0 == UInt8(ascii: "K") || $0 == UInt8(ascii: ";") || $0 == 0x60 }
            return hasEquivalent && !isASCII(t) ? nil : false
        }
    }
    return answer ?? text.contains(needle)
}

/// Whether the bytes of `needle` (not empty) occur in `bytes`.
private func holds(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress, let n = needle.baseAddress, needle.count <= bytes.count else { return false }
    let last = bytes.count - needle.count
    var i = 0
    while i <= last {
        guard let found = memchr(base + i, Int32(n[0]), last - i + 1) else { return false }
        i = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        if memcmp(base + i, n, needle.count) == 0 { return true }
        i += 1
    }
    return false
}
