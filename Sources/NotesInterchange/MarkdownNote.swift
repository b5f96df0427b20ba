import Basics
import EventStore
import Notes

/// A note as a Markdown file: YAML-style front matter between `---` lines, then the body
/// byte for byte.
///
/// ```
/// ---
/// id: 5f1e0c52-3b0a-4b7e-9d0e-2f4c7a1b9e33
/// title: "Groceries"
/// category: "Home"
/// tags: ["home", "lists/shopping"]
/// pinned: false
/// archived: false
/// trashed: false
/// created: 2026-11-29T12:00:00.000000Z
/// updated: 2026-11-29T12:30:00.000000Z
/// ---
/// - milk
/// ```
///
/// Titles, categories and tags are written as double-quoted strings (JSON escapes, which YAML
/// reads too); an uncategorized note has no `category` line, an untagged note no `tags` line.
/// When reading, every key is optional, unknown keys are ignored, strings may also be
/// single-quoted or bare, and `tags` may be a flow list (`[a, "b c"]`), one name, or a block
/// list (`tags:` then `  - a` lines).
struct MarkdownNote: Equatable {
    var id: Identifier?
    var title: String?
    /// Present when the front matter has a `category` line; an empty value means none.
    var category: String??
    /// Present when the front matter has a `tags` key.
    var tags: [String]?
    var pinned: Bool?
    var archived: Bool?
    var trashed: Bool?
    var body: String

    struct Problem: Error { let message: String }

    /// The file's text for a note.
    static func render(_ note: Note, labels: NoteLabels) -> String {
        var out = "---\n"
        out += "id: \(note.id.uuidString)\n"
        out += "title: \(note.title.jsonQuoted)\n"
        if let category = labels.category { out += "category: \(category.jsonQuoted)\n" }
        if !labels.tags.isEmpty { out += "tags: [" + labels.tags.map(\.jsonQuoted).joined(separator: ", ") + "]\n" }
        out += "pinned: \(note.pinned)\n"
        out += "archived: \(note.archived)\n"
        out += "trashed: \(note.trashed)\n"
        out += "created: \(RFC3339.format(micros: note.createdAt))\n"
        out += "updated: \(RFC3339.format(micros: note.updatedAt))\n"
        out += "---\n"
        return out + note.body
    }

    /// Parses a file's text; without front matter, the whole text is the body.
    static func parse(_ text: String) throws(Problem) -> MarkdownNote {
        var result = MarkdownNote(body: text)
        let bytes = Array(text.utf8)
        // A byte-order mark may come before the front matter; without front matter the body
        // keeps it.
        let start0 = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let first = lineEnd(bytes, from: start0), isFence(bytes[start0..<first.content]) else { return result }
        var start = first.next
        // The key of a block list being read (`tags:` with nothing after it).
        var listKey: String?
        while true {
            guard start < bytes.count, let line = lineEnd(bytes, from: start) else {
                throw Problem(message: "the front matter has no closing --- line")
            }
            let content = bytes[start..<line.content]
            if isFence(content) {
                result.body = String(decoding: bytes[line.next...], as: UTF8.self)
                return result
            }
            let text = String(decoding: content, as: UTF8.self)
            let trimmed = Notebook.trim(text)
            if let key = listKey, trimmed == "-" || trimmed.hasPrefix("- ") {
                let item = try string(Notebook.trim(String(trimmed.dropFirst())), key: key)
                if key == "tags", !item.isEmpty { result.tags = (result.tags ?? []) + [item] }
            } else {
                listKey = try result.read(text)
            }
            start = line.next
        }
    }

    /// Where the line starting at `from` ends (before any `\r\n`) and where the next begins.
    private static func lineEnd(_ bytes: [UInt8], from: Int) -> (content: Int, next: Int)? {
        guard from < bytes.count else { return nil }
        var i = from
        while i < bytes.count, bytes[i] != 0x0A { i += 1 }
        let next = i < bytes.count ? i + 1 : i
        let content = i > from && bytes[i - 1] == 0x0D ? i - 1 : i
        return (content, next)
    }

    private static func isFence(_ line: ArraySlice<UInt8>) -> Bool { line.elementsEqual("---".utf8) }

    /// Reads one `key: value` line; returns the key when its value is empty (a block list may
    /// follow).
    private mutating func read(_ line: String) throws(Problem) -> String? {
        let trimmed = Notebook.trim(line)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        guard let colon = line.firstIndex(of: ":") else {
            throw Problem(message: "front matter line \(line.jsonQuoted) is not `key: value`")
        }
        let key = Notebook.trim(String(line[..<colon]))
        let raw = Notebook.trim(String(line[line.index(after: colon)...]))
        switch key {
        case "id":
            guard let id = Identifier(raw), raw.utf8.count == 36 || raw.utf8.count == 32 else {
                throw Problem(message: "id \(raw.jsonQuoted) is not a UUID")
            }
            self.id = id
        case "title": title = try Self.string(raw, key: key)
        case "category":
            let name = try Self.string(raw, key: key)
            category = .some(name.isEmpty || name == "null" || name == "~" ? nil : name)
        case "pinned": pinned = try Self.bool(raw, key: key)
        case "archived": archived = try Self.bool(raw, key: key)
        case "trashed": trashed = try Self.bool(raw, key: key)
        case "tags": tags = try Self.list(raw, key: key)
        default: break
        }
        return raw.isEmpty ? key : nil
    }

    /// A flow list `[a, "b, c", 'd']`, or one name; empty items are dropped.
    private static func list(_ raw: String, key: String) throws(Problem) -> [String] {
        guard raw.hasPrefix("[") else { return raw.isEmpty ? [] : [try string(raw, key: key)] }
        guard raw.hasSuffix("]") else { throw Problem(message: "\(key): \(raw) is missing its closing ]") }
        var items: [String] = []
        var current = ""
        var quote: Character?
        var escaped = false
        for c in raw.dropFirst().dropLast() {
            if let q = quote {
                current.append(c)
                if escaped {
                    escaped = false
                } else if c == "\\" && q == "\"" {
                    escaped = true
                } else if c == q {
                    quote = nil
                }
            } else if c == "," {
                items.append(current)
                current = ""
            } else {
                if c == "\"" || c == "'" { quote = c }
                current.append(c)
            }
        }
        if quote != nil { throw Problem(message: "\(key): \(raw) has a string missing its closing quote") }
        items.append(current)
        var out: [String] = []
        for item in items {
            let s = try string(Notebook.trim(item), key: key)
            if !s.isEmpty { out.append(s) }
        }
        return out
    }

    fileprivate static func string(_ raw: String, key: String) throws(Problem) -> String {
        if raw.hasPrefix("\"") {
            guard let s = (try? JSONValue.parse(raw))?.stringValue else {
                throw Problem(message: "\(key): \(raw) is not a valid double-quoted string")
            }
            return s
        }
        if raw.hasPrefix("'") {
            guard raw.count >= 2, raw.hasSuffix("'") else {
                throw Problem(message: "\(key): \(raw) is not a valid single-quoted string")
            }
            return String(raw.dropFirst().dropLast()).replacing("''", with: "'")
        }
        return raw
    }

    private static func bool(_ raw: String, key: String) throws(Problem) -> Bool {
        switch raw.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off", "": return false
        default: throw Problem(message: "\(key) must be true or false, not \(raw.jsonQuoted)")
        }
    }

    /// The title of an imported file: the front matter's `title` when it is not empty, else the
    /// first heading's text without its Markdown syntax, else the file's name; cut at a word
    /// boundary with `…` when it is over the limit (`cut` says so).
    static func title(frontMatter: String?, body: String, fileStem: String) -> (title: String, cut: Bool) {
        var title = fileStem
        if let given = frontMatter.map(Notebook.trim), !given.isEmpty {
            title = given
        } else if let heading = firstHeading(body).map(plainText), !heading.isEmpty {
            title = heading
        }
        let limit = Notebook.maxTitleCharacters
        guard title.count > limit else { return (title, false) }
        var cut = String(title.prefix(limit - 1))
        if let space = cut.lastIndex(where: \.isWhitespace), cut.distance(from: cut.startIndex, to: space) > limit / 2 {
            cut = String(cut[..<space])
        }
        return (Notebook.trim(cut) + "…", true)
    }

    /// A heading's text as a reader sees it: images and badges drop out, links become their
    /// text (wiki links their label), emphasis and code marks and HTML tags go, white space
    /// runs become one space.
    static func plainText(_ heading: String) -> String {
        let c = Array(heading)
        var out = ""
        var i = 0
        /// The index after the `]` that closes the `[` at `open`, brackets nesting.
        func closing(_ open: Int) -> Int? {
            var depth = 0
            var k = open
            while k < c.count {
                if c[k] == "[" { depth += 1 }
                if c[k] == "]" {
                    depth -= 1
                    if depth == 0 { return k + 1 }
                }
                k += 1
            }
            return nil
        }
        /// The index after the `)` of a `(url)` at `k`, if one is there.
        func destination(_ k: Int) -> Int? {
            guard k < c.count, c[k] == "(", let end = c[k...].firstIndex(of: ")") else { return nil }
            return end + 1
        }
        while i < c.count {
            let ch = c[i]
            if ch == "!", i + 1 < c.count, c[i + 1] == "[", let end = closing(i + 1), let after = destination(end) {
                i = after  // an image
                continue
            }
            if ch == "[", i + 1 < c.count, c[i + 1] == "[", let end = c[(i + 2)...].firstIndex(of: "]"),
                end + 1 < c.count, c[end + 1] == "]"
            {
                let inner = String(c[(i + 2)..<end])
                let parts = inner.split(separator: "|", maxSplits: 1)
                out += String(parts.count > 1 ? parts[1] : (parts.first ?? ""))
                i = end + 2
                continue
            }
            if ch == "[", let end = closing(i), let after = destination(end) {
                // A link: its text, itself cleaned (a badge is an image inside a link).
                out += plainText(String(c[(i + 1)..<(end - 1)]))
                i = after
                continue
            }
            if ch == "<", let end = c[i...].firstIndex(of: ">"), end > i + 1,
                c[i + 1].isLetter || c[i + 1] == "/"
            {
                i = end + 1  // an HTML tag
                continue
            }
            if ch == "*" || ch == "`" || (ch == "_" && (i + 1 < c.count && c[i + 1] == "_")) {
                i += ch == "_" ? 2 : 1
                continue
            }
            out.append(ch)
            i += 1
        }
        return out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The first `# heading` of the body (level 1, outside code fences), if any.
    static func firstHeading(_ body: String) -> String? {
        var inFence = false
        let text = body.hasPrefix("\u{FEFF}") ? String(body.dropFirst()) : body
        // Lines at line feed bytes: "\r\n" is one Character, so splitting characters would not
        // see the lines of a CRLF file.
        for bytes in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false) {
            let l = Substring(String(decoding: bytes.last == 0x0D ? bytes.dropLast() : bytes[...], as: UTF8.self))
            if l.hasPrefix("```") || l.hasPrefix("~~~") {
                inFence.toggle()
                continue
            }
            if !inFence, l.hasPrefix("# ") {
                var t = Notebook.trim(String(l.dropFirst(2)))
                while t.hasSuffix("#") { t.removeLast() }
                t = Notebook.trim(t)
                if !t.isEmpty { return t }
            }
        }
        return nil
    }

    /// A file-name-safe slug: lowercase letters and digits, other runs become one `-`.
    static func slug(_ title: String, maxLength: Int = 60) -> String {
        var out = ""
        var dash = false
        for c in title.lowercased() {
            if c.isLetter || c.isNumber {
                if dash && !out.isEmpty { out.append("-") }
                dash = false
                out.append(c)
                if out.count >= maxLength { break }
            } else {
                dash = true
            }
        }
        return out.isEmpty ? "note" : out
    }

    /// A directory name for a category: `/` cannot appear in one and a leading `.` would hide it.
    static func folderName(_ category: String) -> String {
        var name = String(category.map { $0 == "/" ? "-" : $0 })
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        return name
    }
}
