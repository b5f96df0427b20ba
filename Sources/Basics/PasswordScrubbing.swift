/// Keeps passwords out of what is printed: the one place that knows where a libpq address
/// may carry one (`notes` prints addresses without linking libpq, `notes-sync` its messages).
public enum PasswordScrubbing {
    /// `text` with every password a libpq address may carry replaced by `***`, whatever the
    /// value's form, read as libpq reads it (`conninfo_parse` and `conninfo_uri_parse` in
    /// PostgreSQL's fe-connect.c):
    ///
    /// - `password=…` (any case, spaces around `=` allowed), its value single-quoted (`\'` and
    ///   `\\` escapes inside) or up to the next unescaped space (a `\` escapes the byte after it;
    ///   a `"` is an ordinary character). An unclosed quote hides the rest of the text.
    /// - a URI's `user:password@` (the password ends at the last `@` before the authority's
    ///   first `/` that no space separates from the first `@`), and a query's `password=…`, its
    ///   key possibly percent-encoded, up to the next `&` or the end.
    ///
    /// Another keyword's value is copied with its own passwords scrubbed, so that a quoted value
    /// holding `password=` is not taken for one. Text that is not an address (an error message)
    /// is scanned the same way: more may be hidden than libpq would read, never less.
    public static func scrubbed(_ text: String) -> String {
        var scrubber = Scrubber(Array(text.utf8))
        scrubber.run()
        return String(decoding: scrubber.out, as: UTF8.self)
    }
}

private struct Scrubber {
    let s: [UInt8]
    var i = 0
    var out: [UInt8] = []
    /// Past a `://`: values end at `&` (or the end), not at a space.
    var inURI = false

    init(_ s: [UInt8]) { self.s = s }

    mutating func run() {
        while i < s.count {
            if maskPasswordKeyword() || scrubAuthority() { continue }
            if inURI {
                if maskQueryParameter() { continue }
            } else if copyKeywordValue() {
                continue
            }
            out.append(s[i])
            i += 1
        }
    }

    /// `password` (any case), spaces, `=`, spaces and a value: replaced by `password=***`.
    mutating func maskPasswordKeyword() -> Bool {
        let keyword = "password".utf8
        guard i + keyword.count <= s.count,
            zip(s[i...], keyword).allSatisfy({ $0 | 0x20 == $1 })
        else { return false }
        var j = skipSpaces(from: i + keyword.count)
        guard j < s.count, s[j] == UInt8(ascii: "=") else { return false }
        j = skipSpaces(from: j + 1)
        out += "password=***".utf8
        if inURI {
            i = s[j...].firstIndex(of: UInt8(ascii: "&")) ?? s.count
        } else if j < s.count, s[j] == UInt8(ascii: "'") {
            // Not closed: libpq refuses the address, and any of the rest may be the password.
            i = closingQuote(after: j).map { $0 + 1 } ?? s.count
        } else if j < s.count, s[j] == UInt8(ascii: "\""), let close = s[(j + 1)...].firstIndex(of: UInt8(ascii: "\""))
        {
            // libpq reads `"` as an ordinary byte (and `password="my secret"` as a broken
            // address), but whoever wrote it meant what the quotes hold: all of it is hidden.
            i = max(close + 1, unquotedEnd(from: j))
        } else {
            i = unquotedEnd(from: j)
        }
        return true
    }

    /// `://` and an authority `user:password@host`: the password replaced by `***`.
    mutating func scrubAuthority() -> Bool {
        guard s[i...].starts(with: "://".utf8) else { return false }
        inURI = true
        let start = i + 3
        // libpq looks for the `@` before the first `/`; '?' and spaces do not end the authority.
        // A `user:pa/ss@host` (a `/` unencoded in the password, as base64 has) is read by libpq
        // as host `user` and port `pa`, but is meant as a password: an `@` before the first
        // space and the first `?`, after a `:`, ends the authority too.
        var end = s[start...].firstIndex(of: UInt8(ascii: "/")) ?? s.count
        if s[start..<end].firstIndex(of: UInt8(ascii: "@")) == nil,
            let colon = s[start..<end].firstIndex(of: UInt8(ascii: ":"))
        {
            let word = s[colon...].firstIndex { isSpace($0) || $0 == UInt8(ascii: "?") } ?? s.count
            if let at = s[colon..<word].lastIndex(of: UInt8(ascii: "@")) { end = at + 1 }
        }
        guard let firstAt = s[start..<end].firstIndex(of: UInt8(ascii: "@")),
            let colon = s[start..<firstAt].firstIndex(of: UInt8(ascii: ":"))
        else {
            out += "://".utf8
            i = start
            return true
        }
        // An unencoded `@` in the password: hide up to the last one of the word.
        var lastAt = firstAt
        var k = firstAt + 1
        while k < end, !isSpace(s[k]) {
            if s[k] == UInt8(ascii: "@") { lastAt = k }
            k += 1
        }
        out += "://".utf8
        out += s[start...colon]
        out += "***".utf8
        i = lastAt
        return true
    }

    /// A URI query's `?key=value` or `&key=value` whose key, percent-decoded, is `password`.
    mutating func maskQueryParameter() -> Bool {
        guard s[i] == UInt8(ascii: "?") || s[i] == UInt8(ascii: "&") else { return false }
        let start = i + 1
        let keyEnd = s[start...].firstIndex { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "&") } ?? s.count
        guard keyEnd < s.count, s[keyEnd] == UInt8(ascii: "="),
            percentDecoded(s[start..<keyEnd]).map({ $0 | 0x20 }).elementsEqual("password".utf8)
        else { return false }
        out += s[i...keyEnd]
        out += "***".utf8
        i = s[(keyEnd + 1)...].firstIndex(of: UInt8(ascii: "&")) ?? s.count
        return true
    }

    /// At the start of a word, `keyword = value` for another keyword: copied, the value read as
    /// libpq reads it (so that a quoted `password=` in it is not taken for one) and scrubbed.
    mutating func copyKeywordValue() -> Bool {
        guard i == 0 || isSpace(s[i - 1]) else { return false }
        var j = i
        while j < s.count, isKeywordByte(s[j]) { j += 1 }
        guard j > i else { return false }
        j = skipSpaces(from: j)
        guard j < s.count, s[j] == UInt8(ascii: "=") else { return false }
        j = skipSpaces(from: j + 1)
        if j < s.count, s[j] == UInt8(ascii: "'") {
            guard let close = closingQuote(after: j) else { return false }
            out += s[i...j]
            out += Self.scrubbed(s[(j + 1)..<close])
            out.append(UInt8(ascii: "'"))
            i = close + 1
        } else {
            let end = unquotedEnd(from: j)
            out += s[i..<j]
            out += Self.scrubbed(s[j..<end])
            i = end
        }
        return true
    }

    static func scrubbed(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var inner = Scrubber(Array(bytes))
        inner.run()
        return inner.out
    }

    /// The index of the `'` closing the quote at `open` (`\` escapes the byte after it), or nil.
    func closingQuote(after open: Int) -> Int? {
        var j = open + 1
        while j < s.count {
            if s[j] == UInt8(ascii: "\\") {
                j += 2
            } else if s[j] == UInt8(ascii: "'") {
                return j
            } else {
                j += 1
            }
        }
        return nil
    }

    /// The end of an unquoted value starting at `j`: the next space not escaped by `\`.
    func unquotedEnd(from start: Int) -> Int {
        var j = start
        while j < s.count, !isSpace(s[j]) { j += s[j] == UInt8(ascii: "\\") ? 2 : 1 }
        return min(j, s.count)
    }

    func skipSpaces(from start: Int) -> Int {
        var j = start
        while j < s.count, isSpace(s[j]) { j += 1 }
        return j
    }
}

/// C's `isspace` in the C locale, as libpq's parser uses.
private func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (0x09...0x0D).contains(c) }

private func isKeywordByte(_ c: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)
        || c == UInt8(ascii: "_")
}

/// `bytes` with `%XX` decoded (a `%` not followed by two hex digits kept as it is): a
/// connection URI's password here; a Markdown link's destination, for the attachment check of a
/// vault's import and for links between its notes.
package func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    var j = bytes.startIndex
    while j < bytes.endIndex {
        if bytes[j] == UInt8(ascii: "%"), j + 2 < bytes.endIndex,
            let high = hexValue(bytes[j + 1]), let low = hexValue(bytes[j + 2])
        {
            out.append(high << 4 | low)
            j += 3
        } else {
            out.append(bytes[j])
            j += 1
        }
    }
    return out
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}
