import Basics
import EventStore
import Notes

/// A note as a Markdown file: YAML front matter between `---` lines, then the body byte for
/// byte.
///
/// ```
/// ---
/// id: 5f1e0c52-3b0a-4b7e-9d0e-2f4c7a1b9e33
/// title: "Groceries"
/// category: "Home"
/// tags: ["home", "lists/shopping"]
/// aliases: ["Shopping"]
/// pinned: false
/// archived: false
/// trashed: false
/// created: 2026-11-29T12:00:00.000000Z
/// updated: 2026-11-29T12:30:00.000000Z
/// cssclasses: [wide]
/// ---
/// - milk
/// ```
///
/// The front matter is read as YAML (``FrontMatterYAML``, on libyaml). The keys the store reads
/// are ``ownKeys``; every other entry is kept as the file gave it, byte for byte with its
/// comments, and written back after the store's own keys by an export.
struct MarkdownNote: Equatable {
    var id: Identifier?
    var title: String?
    /// Present when the front matter has a `category` key; an empty or null value means none.
    var category: String??
    /// The `tags` key's names (a list or one string), without a leading `#`.
    var tags: [String] = []
    /// The `aliases` (or `alias`) key's names, when the key is there.
    var aliases: [String]?
    var pinned: Bool?
    var archived: Bool?
    var trashed: Bool?
    var body: String
    /// The front matter entries the store does not read, in order (and the comments before the
    /// first entry, when any entry is kept).
    var kept: [FrontMatterEntry] = []
    var leading = ""

    struct Problem: Error { let message: String }

    /// The keys an export writes from the note, in the order it writes them.
    static let ownKeys = ["id", "title", "category", "tags", "aliases", "pinned", "archived", "trashed", "notes-id"]
    /// The keys an export writes from the note's times unless the file kept its own.
    static let dateKeys = ["created", "updated"]

    /// The kept entries as YAML text: every entry the store does not read, except a `created`
    /// or `updated` an export of the store wrote (its own instant format, to the microsecond);
    /// another tool's dates are kept.
    ///
    /// Byte for byte when those entries' text, alone, reads as the same entries. It does not when
    /// an entry shares a line with a key the store reads (a flow mapping, `{title: Plan, author:
    /// Ana}`), or names with an alias (`*t`) an anchor set in one (`title: &t Plan`): such entries
    /// are written again from their values, one line each, in YAML's flow style (aliases
    /// resolved).
    var keptText: String {
        let entries = kept.filter { !Self.isOwnDate($0) }
        guard !entries.isEmpty else { return "" }
        let text = leading + entries.map(\.source).joined()
        if entries.allSatisfy({ !$0.source.isEmpty }), let read = try? FrontMatterYAML.parse(text),
            read.entries.map(\.key) == entries.map(\.key), read.entries.map(\.value) == entries.map(\.value)
        {
            return text
        }
        return entries.map { Self.flowYAML(.scalar($0.key, plain: true)) + ": " + Self.flowYAML($0.value) + "\n" }
            .joined()
    }

    /// `node` as YAML in flow style: a plain scalar as it was when it reads back as the same
    /// plain text, any other scalar double-quoted with escapes.
    static func flowYAML(_ node: YAMLNode) -> String {
        switch node {
        case .scalar(let text, let plain):
            if plain && text.isEmpty { return "~" }
            return plain && isSafePlain(text) ? text : doubleQuoted(text)
        case .sequence(let items):
            return "[" + items.map(flowYAML).joined(separator: ", ") + "]"
        case .mapping(let pairs):
            return "{" + pairs.map { flowYAML($0.key) + ": " + flowYAML($0.value) }.joined(separator: ", ") + "}"
        }
    }

    /// Whether `text` reads back as the same plain scalar wherever a flow value stands: letters
    /// and digits first, then those, spaces and ``plainMarks`` (never `: `, ` #`, or a last space
    /// or `:`).
    static func isSafePlain(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.first, let last = scalars.last,
            first.properties.isAlphabetic || ("0"..."9").contains(first),
            last != " ", last != ":", !text.contains(": "), !text.contains(" #")
        else { return false }
        return scalars.allSatisfy { c in
            c.properties.isAlphabetic || ("0"..."9").contains(c) || plainMarks.unicodeScalars.contains(c)
        }
    }

    /// Marks a plain scalar may hold after its first character, in a flow list or mapping too
    /// (not `,`, brackets or braces, which end it there).
    static let plainMarks = " _.-/+:?=&%~@#()'!*"

    /// `text` as a double-quoted YAML scalar: its JSON literal (YAML reads JSON's escapes), with
    /// the characters YAML takes for line breaks or does not print (DEL, the C1 controls,
    /// U+FFFE and U+FFFF, which it refuses raw) escaped too.
    static func doubleQuoted(_ text: String) -> String {
        var out = ""
        for c in text.jsonQuoted.unicodeScalars {
            switch c.value {
            case 0x7F...0x9F, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// The `updated` the store's export wrote (its own instant format, to the microsecond): the
    /// instant of the version of the note it wrote.
    var exportedAt: Int64? {
        for entry in kept where entry.key == "updated" && Self.isOwnDate(entry) {
            if case .scalar(let text, _) = entry.value { return RFC3339.parse(text) }
        }
        return nil
    }

    /// Whether an entry is a `created` or `updated` as ``render(_:labels:)`` writes them.
    static func isOwnDate(_ entry: FrontMatterEntry) -> Bool {
        guard dateKeys.contains(entry.key), case .scalar(let text, plain: true) = entry.value,
            let micros = RFC3339.parse(text)
        else { return false }
        return RFC3339.format(micros: micros) == text
    }

    /// The file's text for a note: the store's keys, then the entries kept from the file it came
    /// from (a kept key the store also writes is written once, as kept; a file's own `created`
    /// or `updated` stands for both of the store's), then the body. Tags written in the body as
    /// `#tag`, spelled as they are named, are not repeated in the front matter. A body that
    /// begins with a byte-order mark has it written first, before the front matter, where the
    /// file it came from had it. A note of no category in a folder (`inFolder`, its file's
    /// place) says so with `category: null`: a reader would take the folder for its category.
    static func render(_ note: Note, labels: NoteLabels, inFolder: Bool = false) -> String {
        let kept = note.properties[NoteProperty.frontMatter.rawValue] ?? ""
        let keptKeys = Set((try? FrontMatterYAML.parse(kept))?.entries.map(\.key) ?? [])
        var out = "---\n"
        func line(_ key: String, _ value: @autoclosure () -> String) {
            if !keptKeys.contains(key) { out += key + ": " + value() + "\n" }
        }
        // Another tool's `id`, kept, leaves the store's under a name of its own.
        if keptKeys.contains("id") {
            out += "notes-id: \(note.id.uuidString)\n"
        } else {
            line("id", note.id.uuidString)
        }
        line("title", doubleQuoted(note.title))
        if let category = labels.category {
            line("category", doubleQuoted(category))
        } else if inFolder {
            line("category", "null")
        }
        // Only a tag the body spells as its name, byte for byte: one it spells in another case or
        // Unicode form would come back under the body's spelling.
        let inline = Set(inlineTags(note.body).map { Array($0.utf8) })
        let tags = labels.tags.filter { !inline.contains(Array($0.utf8)) }
        // A reader takes one leading `#` off a tag (`tags: ["#home"]` is `home`): a name that
        // begins with one is written with another before it.
        if !tags.isEmpty {
            line(
                "tags", "[" + tags.map { doubleQuoted($0.hasPrefix("#") ? "#" + $0 : $0) }.joined(separator: ", ") + "]"
            )
        }
        if !note.aliases.isEmpty { line("aliases", "[" + note.aliases.map(doubleQuoted).joined(separator: ", ") + "]") }
        line("pinned", "\(note.pinned)")
        line("archived", "\(note.archived)")
        line("trashed", "\(note.trashed)")
        if keptKeys.isDisjoint(with: dateKeys) {
            line("created", RFC3339.format(micros: note.createdAt))
            line("updated", RFC3339.format(micros: note.updatedAt))
        }
        out += kept
        if !kept.isEmpty && !kept.hasSuffix("\n") { out += "\n" }
        out += "---\n"
        if note.body.hasPrefix("\u{FEFF}") { return "\u{FEFF}" + out + note.body.dropFirst() }
        return out + note.body
    }

    /// Parses a file's text; without front matter, the whole text is the body.
    static func parse(_ text: String) throws(Problem) -> MarkdownNote {
        var result = MarkdownNote(body: text)
        let bytes = Array(text.utf8)
        // A byte-order mark may come before the front matter; the body keeps it.
        let start0 = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let first = lineEnd(bytes, from: start0), isFence(bytes[start0..<first.content]) else { return result }
        var start = first.next
        while true {
            guard start < bytes.count, let line = lineEnd(bytes, from: start) else {
                throw Problem(message: "the front matter has no closing --- line; add one after its last entry")
            }
            if isFence(bytes[start..<line.content]) || isEnd(bytes[start..<line.content]) {
                let yaml = String(decoding: bytes[first.next..<start], as: UTF8.self)
                // The body keeps the file's byte-order mark.
                result.body = String(decoding: bytes[0..<start0] + bytes[line.next...], as: UTF8.self)
                let front: FrontMatterYAML
                // Lines counted from the file's first line, the opening `---`.
                do { front = try FrontMatterYAML.parse(yaml, firstLine: 2) } catch {
                    throw Problem(message: "front matter " + error.description)
                }
                try result.read(front)
                return result
            }
            start = line.next
        }
    }

    /// Takes the entries the store reads; keeps the others.
    private mutating func read(_ front: FrontMatterYAML) throws(Problem) {
        leading = front.leading
        for entry in front.entries {
            let value = entry.value
            switch entry.key {
            case "id", "notes-id":
                // An id of another tool (not a UUID as the store writes it) is that tool's, kept
                // as it is; the store's is then written as `notes-id`.
                guard let raw = value.text, raw.utf8.count == 36, let id = Identifier(raw) else {
                    if entry.key == "notes-id" {
                        throw Problem(message: "notes-id \((value.text ?? "").jsonQuoted) is not a UUID")
                    }
                    kept.append(entry)
                    continue
                }
                if let other = self.id, other != id {
                    throw Problem(message: "id and notes-id name two notes; keep one")
                }
                self.id = id
            case "title":
                guard let t = value.text else { throw Problem(message: "title is not a text; give one line of text") }
                // A title the store can hold is kept as written (runs of spaces, tabs); one with a
                // line break (a block scalar) becomes one line.
                let holdable = !t.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" }
                title = value.isNull ? nil : holdable ? t : Self.oneLine(t)
            case "category":
                guard let c = value.text else { throw Problem(message: "category is not a text; give one name") }
                category = .some(value.isNull || Notebook.trim(c).isEmpty ? nil : c)
            case "tags":
                guard var names = value.strings else {
                    throw Problem(message: "tags is not a list of names; give a list or one name")
                }
                // `tags: a, b` or `tags: a b` is a list too, as Obsidian reads it; quoted or not,
                // since quotes do not change a YAML value.
                if case .scalar(let t, _) = value, !value.isNull {
                    names = t.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
                }
                tags = names.map(Notebook.trim).map { String($0.hasPrefix("#") ? $0.dropFirst() : $0[...]) }
                    .filter { !$0.isEmpty }
            case "aliases", "alias":
                guard let names = value.strings else {
                    throw Problem(message: "\(entry.key) is not a list of names; give a list or one name")
                }
                aliases = (aliases ?? []) + names.map(Notebook.trim).filter { !$0.isEmpty }
            case "pinned": pinned = try Self.bool(value, key: entry.key)
            case "archived": archived = try Self.bool(value, key: entry.key)
            case "trashed": trashed = try Self.bool(value, key: entry.key)
            default: kept.append(entry)
            }
        }
    }

    /// The note id named by the front matter that starts `head`, the first bytes of a file too
    /// large to read whole, or nil when `head` does not hold all of it (its closing line, ended)
    /// or it names none.
    static func id(inHeadOf head: [UInt8]) -> Identifier? {
        let start0 = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let first = lineEnd(head, from: start0), isFence(head[start0..<first.content]) else { return nil }
        var start = first.next
        // Only whole lines: the last may be cut where `head` ends.
        while let line = lineEnd(head, from: start), head[line.next - 1] == 0x0A {
            if isFence(head[start..<line.content]) || isEnd(head[start..<line.content]) {
                guard let text = String(validating: head[..<line.next], as: UTF8.self) else { return nil }
                return (try? parse(text))?.id
            }
            start = line.next
        }
        return nil
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

    /// YAML's end of a document, which closes front matter as `---` does.
    private static func isEnd(_ line: ArraySlice<UInt8>) -> Bool { line.elementsEqual("...".utf8) }

    private static func isFence(_ line: ArraySlice<UInt8>) -> Bool {
        var l = line[...]
        while let last = l.last, last == 0x20 || last == 0x09 { l = l.dropLast() }
        return l.elementsEqual("---".utf8)
    }

    private static func bool(_ value: YAMLNode, key: String) throws(Problem) -> Bool {
        if value.isNull { return false }
        guard let b = value.bool else {
            throw Problem(message: "\(key) must be true or false, not \((value.text ?? "a list").jsonQuoted)")
        }
        return b
    }

    /// The `#tags` of a body, as Obsidian finds them: a `#` at the start of a line or after
    /// white space, then letters, digits, emoji (``isEmoji(_:)``), `_`, `-` and `/` with at
    /// least one that is not a digit; not in code (fenced blocks, indented blocks, code spans)
    /// nor in a heading's `# `.
    /// A line indented by 4 columns or more is code only where CommonMark starts or continues an
    /// indented code block there: not in a list (a nested item, `\t- child #tag`, or an item's
    /// own fenced block, which may be indented as deep as the item) and not a paragraph's
    /// continuation line. A fenced block in a block quote (`> ````, an Obsidian callout's code)
    /// is code too. Each name once (the first spelling), in order.
    static func inlineTags(_ body: String) -> [String] {
        guard utf8Contains(body, UInt8(ascii: "#")) else { return [] }
        var out: [String] = []
        var seen: Set<String> = []
        let bytes = Array(body.utf8)
        // A link reference definition (`[name]: #anchor`) is passed over, as the link parser reads
        // them: a line right under a paragraph's is that paragraph's text, and its `#words` are
        // tags (before 2026-12-07 every line of that form was passed over, while the links read
        // such a line as text).
        let definitions = MarkdownLink.definitionLines(bytes)
        // Code, as the link parser has it too (``MarkdownCode``), is passed over.
        MarkdownCode.forEachTextLine(bytes) { b, index, state in
            if definitions.contains(index) { return }
            let i = b.startIndex
            let end = b.endIndex
            var k = i
            var spans: CodeSpans?
            while k < end {
                // An HTML comment, which may span lines, or a code span (none opens in the other).
                if MarkdownCode.stepOverCode(b, at: &k, state: &state, spans: &spans) { continue }
                guard b[k] == 0x23, k == i || isSpace(b[k - 1]) else {
                    k += 1
                    continue
                }
                var j = k + 1
                while j < end, isTagByte(b[j]) { j += 1 }
                var name = String(decoding: b[(k + 1)..<j], as: UTF8.self)
                // Bytes of letters and emoji were taken whole; anything else ends the name.
                if let stop = name.firstIndex(where: { !isTagCharacter($0) }) {
                    name = String(name[..<stop])
                }
                while name.hasSuffix("/") { name.removeLast() }
                if name.contains(where: { !$0.isNumber }), !name.hasPrefix("/"), !name.contains("//"),
                    seen.insert(name.lowercased()).inserted
                {
                    out.append(name)
                }
                k = max(j, k + 1)
            }
        }
        return out
    }

    /// Whether `c` may be in a tag's name: a letter, a digit, `_`, `-`, `/` or an emoji.
    private static func isTagCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || "_-/".contains(c) || isEmoji(c)
    }

    /// Whether `c` is an emoji, which Obsidian takes into a tag (`#🚀launch`, `#done✅`): a
    /// character past ASCII drawn as emoji, its first scalar so by default (Emoji_Presentation:
    /// `🚀`, `✅`, a flag's letters) or made so by what follows it in the character (U+FE0F in
    /// `❤️`, a skin tone in `☝🏽`; its joiners and modifiers are part of the character), but no
    /// general punctuation (U+2000 to U+206F: `‼`, `⁉`), which ends a tag there. A symbol with
    /// Unicode's Emoji property that is drawn as text, `©`, `®`, `™`, `↔`, ends a tag too: before
    /// 2026-12-07 any such symbol counted, and `#©` and `#™` were tags. Before that day an emoji
    /// ended the tag, and `#🚀launch` was none.
    static func isEmoji(_ c: Character) -> Bool {
        let scalars = c.unicodeScalars
        guard let first = scalars.first, first.value >= 0x80, !(0x2000...0x206F).contains(first.value)
        else { return false }
        if first.properties.isEmojiPresentation { return true }
        return first.properties.isEmoji
            && scalars.dropFirst().contains { $0.value == 0xFE0F || $0.properties.isEmojiModifier }
    }

    @inline(__always)
    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A }

    /// ASCII letters, digits, `_`, `-`, `/`, and every byte of a multi-byte character (checked
    /// to be a letter or digit once the name is made).
    @inline(__always)
    private static func isTagByte(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
            || c == 0x2F || c >= 0x80
    }

    /// The title a file's text gives (its front matter's `title` when not empty, else its first
    /// heading's text), or nil when the file's name gives it: a file renamed since its import
    /// is then retitled (see `Notebook.importMarkdown`).
    static func namedBy(frontMatter: String?, body: String) -> String? {
        if let given = frontMatter.map(Notebook.trim), !given.isEmpty { return given }
        if let heading = firstHeading(body).map(plainText), !heading.isEmpty { return heading }
        return nil
    }

    /// The title of an imported file: the front matter's `title` when it is not empty, else the
    /// first heading's text without its Markdown syntax, else the file's name; cut at a word
    /// boundary with `…` when it is over the limit (`cut` says so).
    static func title(frontMatter: String?, body: String, fileStem: String) -> (title: String, cut: Bool) {
        title(named: namedBy(frontMatter: frontMatter, body: body), fileStem: fileStem)
    }

    /// ``title(frontMatter:body:fileStem:)`` of a file whose text gives the title `named`
    /// (``namedBy(frontMatter:body:)``, found once a file).
    static func title(named: String?, fileStem: String) -> (title: String, cut: Bool) {
        let title = named ?? fileStem
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
        plainASCIIText(heading) ?? plainTextByCharacters(heading)
    }

    /// ``plainText(_:)`` a character at a time, for any heading (the reference the ASCII path
    /// must match).
    static func plainTextByCharacters(_ heading: String) -> String {
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
            if ch == "\\", i + 1 < c.count, c[i + 1].isPunctuation || c[i + 1].isSymbol {
                out.append(c[i + 1])  // an escaped character stands for itself
                i += 2
                continue
            }
            if ch == "&", let semi = c[i...].prefix(8).firstIndex(of: ";"),
                let decoded = Self.entities[String(c[(i + 1)..<semi])]
            {
                out.append(decoded)
                i = semi + 1
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

    /// ``plainText(_:)`` of a heading of ASCII text that holds none of the marks it reads (`!`,
    /// `[`, `<`, `\`, `&`, `*`, `` ` ``, `_`), byte by byte: its words, one space between (white
    /// space as `Character.isWhitespace` has it in ASCII: tab to carriage return, and space); nil
    /// for any other heading. Most headings are such text, and the generic path, a character at a
    /// time, cost 47,000 instructions a heading.
    static func plainASCIIText(_ heading: String) -> String? {
        var heading = heading
        return heading.withUTF8 { bytes -> String? in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var space = false
            for b in bytes {
                switch b {
                case 0x80...: return nil
                case UInt8(ascii: "!"), UInt8(ascii: "["), UInt8(ascii: "<"), UInt8(ascii: "\\"), UInt8(ascii: "&"),
                    UInt8(ascii: "*"), UInt8(ascii: "`"), UInt8(ascii: "_"):
                    return nil
                case 0x09...0x0D, 0x20: space = !out.isEmpty
                default:
                    if space { out.append(0x20) }
                    space = false
                    out.append(b)
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The HTML entities a heading is likely to hold.
    static let entities: [String: Character] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "#39": "'", "nbsp": " ", "mdash": "—",
        "ndash": "–", "hellip": "…",
    ]

    /// The first heading of the body (level 1: `# Title`, or a line underlined with `===`), outside
    /// code fences and HTML comments, if any.
    static func firstHeading(_ body: String) -> String? {
        var inComment = false
        var previous: (line: Substring, index: Int)?
        var found: String?
        WikiLink.forEachLineOutsideFences(Array(body.utf8)) { bytes, index in
            guard found == nil else { return }
            let l = Substring(String(decoding: bytes, as: UTF8.self))
            // A heading in an HTML comment is not one.
            if inComment || l.hasPrefix("<!--") {
                inComment = !l.contains("-->")
                previous = nil
                return
            }
            defer { previous = (l, index) }
            if l.hasPrefix("# ") {
                var t = Notebook.trim(String(l.dropFirst(2)))
                while t.hasSuffix("#") { t.removeLast() }
                t = Notebook.trim(t)
                if !t.isEmpty { found = t }
            }
            // A setext heading: the line of text just above a line of `=`.
            if found == nil, let p = previous, p.index == index - 1, !Notebook.trim(String(p.line)).isEmpty,
                !l.isEmpty, l.allSatisfy({ $0 == "=" })
            {
                found = Notebook.trim(String(p.line))
            }
        }
        return found
    }

    /// A name with its line breaks and control characters made spaces (runs of white space one).
    static func oneLine(_ name: String) -> String {
        // Most names hold no control character, no run of spaces and no space at either end:
        // they are one line as they are (each space alone is a character of its own, as a space
        // that a combining mark follows is no separator of the split below).
        var bytes = name
        let isOneLine = bytes.withUTF8 { b in
            b.first != 0x20 && b.last != 0x20
                && !b.indices.contains { b[$0] < 0x20 || b[$0] == 0x7F || (b[$0] == 0x20 && b[$0 &+ 1] == 0x20) }
        }
        return isOneLine ? name : oneLineByCharacters(name)
    }

    /// ``oneLine(_:)`` for any name (the reference its shortcut must match).
    static func oneLineByCharacters(_ name: String) -> String {
        let flat = String(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        return flat.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    /// Whether a recorded source path can be written under an export folder: relative, a `.md`
    /// file, no part empty, hidden or `..`, no control character.
    static func isSafePath(_ path: String) -> Bool {
        guard path.lowercased().hasSuffix(".md"), !path.hasPrefix("/"),
            !path.unicodeScalars.contains(where: { $0.value < 0x20 })
        else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && !$0.hasPrefix(".")
        }
    }

    /// A file-name-safe slug: lowercase letters and digits, other runs become one `-`.
    static func slug(_ title: String, maxLength: Int = 60) -> String {
        var out = ""
        var dash = false
        for c in title.lowercased() {
            if c.isLetter || c.isNumber {
                // At most 180 bytes too: with the id and `.md`, a name within the 255 bytes a
                // file system takes, whatever the script.
                if out.utf8.count + (dash ? 1 : 0) + c.utf8.count > 180 { break }
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

    /// A directory name for a category: `/` cannot appear in one and a leading `.` would hide it,
    /// and a name of 100 characters may take 400 bytes where a file system takes 255: the name
    /// is cut to 200 bytes, at a character; a name ending in `.md` ends in `_md`. (The file's
    /// front matter names the category whole; the folder is only where the file lies.)
    static func folderName(_ category: String) -> String {
        var name = String(category.map { $0 == "/" ? "-" : $0 })
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        if name.utf8.count > 200 {
            var cut = ""
            for c in name {
                if cut.utf8.count + c.utf8.count > 200 { break }
                cut.append(c)
            }
            name = cut.isEmpty ? "_" : cut
        }
        // A folder named like a note's file (`Plan.md`, any case) could stand where an export
        // writes a note imported from that path: the file or the folder could not be made.
        if name.lowercased().hasSuffix(".md") { name = name.dropLast(3) + "_md" }
        return name
    }
}

/// The attachments a vault's file links to or embeds, and whether the folder holds them.
enum VaultAttachments {
    /// A link to an attachment, as written: `![[photo.png]]` or `[[report.pdf]]` (a wiki link,
    /// looked up by path from the folder's top or by the end of a path, as Obsidian resolves
    /// one), or `![](img/a.png)` (a Markdown link, a path from the file's own folder, or else
    /// looked up as a wiki link is).
    struct Reference: Sendable, Equatable {
        var target: String
        var markdown: Bool
    }

    /// The links of `body` that name an attachment (a file whose extension is one of
    /// ``WikiLink/attachmentExtensions``), outside code and comments: wiki links and embeds, and
    /// the relative destinations of Markdown links and images (not a URL, `https:` or `mailto:`;
    /// percent escapes decoded, `#fragment` and `?query` dropped).
    /// In the order of their lines (wiki links before Markdown links on one line).
    static func references(_ body: String) -> [Reference] {
        var out: [(line: Int, reference: Reference)] = []
        for link in WikiLink.parse(body) where link.isAttachment {
            if case .title(let t) = link.target { out.append((link.line, Reference(target: t, markdown: false))) }
        }
        for (line, destination) in markdownDestinations(body) {
            var path = Substring(destination)
            if let cut = path.firstIndex(where: { $0 == "#" || $0 == "?" }) { path = path[..<cut] }
            // A scheme (`https:`, `mailto:`, `data:`, `obsidian:`) before any slash: not a file of the folder.
            if let colon = path.firstIndex(of: ":"), !path[..<colon].contains("/") { continue }
            guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/"),
                WikiLink.attachmentExtensions.contains(path[path.index(after: dot)...].lowercased())
            else { continue }
            out.append((line, Reference(target: String(path), markdown: true)))
        }
        // Stable: each kind is in order already.
        return out.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }.map(
            \.element.reference)
    }

    /// The destinations of the Markdown links and images of `body` (`[text](dest)`,
    /// `![alt](<dest with spaces> "title")`), outside code and comments, percent escapes decoded,
    /// each with its line's number from 0.
    static func markdownDestinations(_ body: String) -> [(line: Int, destination: String)] {
        var out: [(line: Int, destination: String)] = []
        let bytes = Array(body.utf8)
        // Most bodies hold no `](`: one pass settles them.
        guard bytes.indices.dropFirst().contains(where: { bytes[$0 - 1] == 0x5D && bytes[$0] == 0x28 }) else {
            return out
        }
        MarkdownCode.forEachTextLine(bytes) { line, number, state in
            var spans: CodeSpans?
            var k = line.startIndex
            let end = line.endIndex
            while k < end {
                if MarkdownCode.stepOverCode(line, at: &k, state: &state, spans: &spans) { continue }
                guard line[k] == 0x5D, k + 1 < end, line[k + 1] == 0x28 else {
                    k += 1
                    continue
                }
                var j = k + 2
                while j < end, line[j] == 0x20 { j += 1 }
                var destination: ArraySlice<UInt8>
                if j < end, line[j] == 0x3C {
                    // Up to the `>`; a `<` ends it unclosed, as CommonMark has it (a `<...>`
                    // destination holds neither), so that each byte is read by one such scan at
                    // most. Before 2026-12-07 each `](<` read to the line's end: a line of
                    // 200,000 of them (1 MB) held an import for minutes.
                    var e = j + 1
                    while e < end, line[e] != 0x3E, line[e] != 0x3C { e += 1 }
                    guard e < end, line[e] == 0x3E else {
                        k += 2
                        continue
                    }
                    destination = line[(j + 1)..<e]
                    k = e + 1
                } else {
                    // Up to white space or the `)` that closes it (balanced parentheses inside).
                    var depth = 0
                    var e = j
                    scan: while e < end, line[e] != 0x20, line[e] != 0x09 {
                        switch line[e] {
                        case 0x28: depth += 1
                        case 0x29:
                            if depth == 0 { break scan }
                            depth -= 1
                        default: break
                        }
                        e += 1
                    }
                    destination = line[j..<e]
                    k = max(e, k + 2)
                }
                if !destination.isEmpty {
                    // As written when the decoded bytes are not UTF-8.
                    let decoded = String(validating: percentDecoded(destination), as: UTF8.self)
                    out.append((number, decoded ?? String(decoding: destination, as: UTF8.self)))
                }
            }
        }
        return out
    }

    /// The files of a folder, to look links up in: by path from its top, and by every end of a
    /// path that starts after a `/` (`a.png` and `img/a.png` of `notes/img/a.png`), without
    /// regard to case (Obsidian finds `Photo.PNG` by `photo.png`).
    struct Index {
        private var ends: Set<String> = []

        init(_ files: some Sequence<String>) {
            for file in files {
                let lower = file.lowercased()
                ends.insert(lower)
                var rest = Substring(lower)
                while let slash = rest.firstIndex(of: "/") {
                    rest = rest[rest.index(after: slash)...]
                    ends.insert(String(rest))
                }
            }
        }

        /// `path` with `.` and `..` resolved, or nil when it leaves the folder.
        static func normalized(_ path: String) -> String? {
            var parts: [Substring] = []
            for part in path.split(separator: "/", omittingEmptySubsequences: true) {
                if part == "." { continue }
                if part == ".." {
                    guard parts.popLast() != nil else { return nil }
                    continue
                }
                parts.append(part)
            }
            return parts.isEmpty ? nil : parts.joined(separator: "/").lowercased()
        }

        /// Whether the folder holds the file `reference` of the vault file `file` names: a
        /// Markdown link's path, and a wiki link's that starts with `./` or `../`
        /// (`![[../img/a.png]]`, as Obsidian writes a relative path; before 2026-12-07 such an
        /// embed was said to be missing), from the file's own folder first.
        func holds(_ reference: Reference, from file: String) -> Bool {
            let relative =
                reference.markdown
                ? !reference.target.hasPrefix("/")
                : reference.target.hasPrefix("./") || reference.target.hasPrefix("../")
            if relative {
                let folder = file.split(separator: "/").dropLast().joined(separator: "/")
                if let relative = Self.normalized(folder + "/" + reference.target), ends.contains(relative) {
                    return true
                }
            }
            guard let path = Self.normalized(reference.target) else { return false }
            return ends.contains(path)
        }
    }
}
