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
/// pinned: false
/// archived: false
/// trashed: false
/// created: 2026-11-29T12:00:00.000000Z
/// updated: 2026-11-29T12:30:00.000000Z
/// ---
/// - milk
/// ```
///
/// Titles and categories are written as double-quoted strings (JSON escapes, which YAML reads
/// too); an uncategorized note has no `category` line. When reading, every key is optional,
/// unknown keys are ignored, and strings may also be single-quoted or bare.
struct MarkdownNote: Equatable {
    var id: Identifier?
    var title: String?
    /// Present when the front matter has a `category` line; an empty value means none.
    var category: String??
    var pinned: Bool?
    var archived: Bool?
    var trashed: Bool?
    var body: String

    struct Problem: Error { let message: String }

    /// The file's text for a note.
    static func render(_ note: Note, categoryName: String?) -> String {
        var out = "---\n"
        out += "id: \(note.id.uuidString)\n"
        out += "title: \(note.title.jsonQuoted)\n"
        if let categoryName { out += "category: \(categoryName.jsonQuoted)\n" }
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
        guard let first = lineEnd(bytes, from: 0), isFence(bytes[0..<first.content]) else { return result }
        var start = first.next
        while true {
            guard start < bytes.count, let line = lineEnd(bytes, from: start) else {
                throw Problem(message: "the front matter has no closing --- line")
            }
            let content = bytes[start..<line.content]
            if isFence(content) {
                result.body = String(decoding: bytes[line.next...], as: UTF8.self)
                return result
            }
            try result.read(String(decoding: content, as: UTF8.self))
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

    private mutating func read(_ line: String) throws(Problem) {
        let trimmed = Notebook.trim(line)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
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
        default: break
        }
    }

    private static func string(_ raw: String, key: String) throws(Problem) -> String {
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

    /// The first `# heading` of the body (level 1, outside code fences), if any.
    static func firstHeading(_ body: String) -> String? {
        var inFence = false
        for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
            let l = line.hasSuffix("\r") ? line.dropLast() : line
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
