import Basics
import EventStore
import Notes

/// Turns notes into JSON and aligned text.
extension Context {
    func noteJSON(_ n: Note, labels: NoteLabels) -> JSONValue {
        .object([
            ("id", .string(n.id.uuidString)),
            ("title", .string(n.title)),
            ("body", .string(n.body)),
            ("category", labels.category.map(JSONValue.string) ?? .null),
            ("tags", .array(labels.tags.map(JSONValue.string))),
            ("pinned", .bool(n.pinned)),
            ("archived", .bool(n.archived)),
            ("trashed", .bool(n.trashed)),
            ("createdAt", .string(RFC3339.format(micros: n.createdAt))),
            ("updatedAt", .string(RFC3339.format(micros: n.updatedAt))),
            ("version", .uint(n.version)),
            ("aliases", .array(n.aliases.map(JSONValue.string))),
            ("source", n.sourcePath.map(JSONValue.string) ?? .null),
            // The sync conflict the body holds between markers, not resolved yet (`notes conflicts`).
            ("conflict", n.properties[NoteProperty.conflict.rawValue].map(JSONValue.string) ?? .null),
        ])
    }

    func noteJSON(_ n: Note) throws -> JSONValue {
        noteJSON(n, labels: try labels(n))
    }

    /// Prints JSON (pretty) followed by a newline.
    func printJSON(_ value: JSONValue) {
        terminal.print(value.serialized(pretty: true))
    }

    func relative(_ micros: Int64) -> String {
        RelativeTime.describe(micros: micros, now: now, timeZone: .system)
    }

    /// The note as `show` prints it, its category and tags named as `labels` says (by default
    /// as they are called now).
    func printNote(_ n: Note, labels given: NoteLabels? = nil) throws {
        let labels = try given ?? self.labels(n)
        let mark = try pendingMark(n.id, version: n.version, state: try syncMarks())
        if json {
            var value = noteJSON(n, labels: labels)
            if !mark.isEmpty, case .object(var fields) = value {
                fields.append(("pending", .bool(true)))
                value = .object(fields)
            }
            printJSON(value)
            return
        }
        let t = terminal
        var flags: [String] = []
        if n.pinned { flags.append(t.yellow("pinned")) }
        if n.archived { flags.append("archived") }
        if n.trashed { flags.append(t.red("trashed")) }
        // The header's names are shown as a table's cells are (``oneLine(_:)``), through a pipe
        // too: a control character as its symbol, a bidi control as its escape (before
        // 2026-12-07 a title holding U+202E turned its heading line around on a terminal).
        t.print(t.bold(oneLine(n.title)))
        var meta = "  v\(n.version)\(mark)  updated \(relative(n.updatedAt))  created \(relative(n.createdAt))"
        if let c = labels.category { meta += "  [\(oneLine(c))]" }
        var line = t.cyan(shortID(n.id)) + t.dim(meta)
        if !flags.isEmpty { line += "  " + flags.concatenated(separator: " ") }
        t.print(line)
        if !labels.tags.isEmpty {
            t.print(t.dim("  tags: ") + labels.tags.map { t.green("#" + oneLine($0)) }.concatenated(separator: " "))
        }
        if !n.aliases.isEmpty { t.print(t.dim("  aliases: ") + oneLine(n.aliases.concatenated(separator: ", "))) }
        // A file name may hold any byte but `/`: a line break or an escape in it is shown as a
        // symbol, so that it neither splits the header nor reaches the terminal.
        if let path = n.sourcePath { t.print(t.dim("  from: ") + oneLine(t.shown(path))) }
        if let conflict = n.properties[NoteProperty.conflict.rawValue] {
            t.print(
                t.red("  conflict: ") + t.shown(conflict)
                    + t.dim(" (both kept between markers; edit the body to resolve)"))
        }
        if !n.body.isEmpty {
            t.print()
            t.print(t.shown(n.body), terminator: n.body.utf8.last == 0x0A ? "" : "\n")
        }
    }

    /// One line per note: id, pin mark, title, category, updated, and tags when any note of the
    /// listing has some.
    /// Prints the rows of a listing; `pending` says whose last version is still in the outbox
    /// (its update time is then followed by `(not synced)`).
    func printNoteTable(
        _ notes: [NoteRow], pending: (NoteRow) throws -> Bool = { _ in false }, labels: (NoteRow) throws -> NoteLabels
    ) throws {
        var rows: [[String]] = []
        let withTags = notes.contains { !$0.tags.isEmpty }
        for n in notes {
            let l = try labels(n)
            var row = [
                shortID(n.id), n.pinned ? "*" : " ", terminal.shown(truncate(n.title, 60)),
                terminal.shown(l.category ?? ""),
                relative(n.updatedAt) + statusSuffix(trashed: n.trashed, archived: n.archived)
                    + (try pending(n) ? " (not synced)" : ""),
            ]
            if withTags {
                row.append(terminal.shown(truncate(l.tags.map { "#" + $0 }.concatenated(separator: " "), 60)))
            }
            rows.append(row)
        }
        printTable(rows, styles: [terminal.cyan, terminal.yellow, { $0 }, terminal.dim, terminal.dim, terminal.green])
    }

    func printTable(_ rows: [[String]], styles: [(String) -> String]) {
        guard let columns = rows.first?.count else { return }
        // Cells hold titles, names, link texts, lines of bodies and properties, each on one
        // line of the table: a control character (or line break) in them is shown as its
        // symbol, through a pipe too, never acted on and never forging a row.
        let rows = rows.map { $0.map(oneLine) }
        let cellWidths = rows.map { $0.map(displayWidth) }
        var widths = [Int](repeating: 0, count: columns)
        for r in cellWidths { for (i, w) in r.enumerated() { widths[i] = max(widths[i], w) } }
        // Each line is put together as bytes: padding a `String` cell by cell (a `String` of
        // spaces made for each) took a quarter of the instructions of `notes list`.
        var line: [UInt8] = []
        for (r, cells) in zip(rows, cellWidths) {
            line.removeAll(keepingCapacity: true)
            for (i, c) in r.enumerated() {
                line.append(contentsOf: (i < styles.count ? styles[i](c) : c).utf8)
                if i != columns - 1 { line.append(contentsOf: repeatElement(0x20, count: widths[i] - cells[i] + 2)) }
            }
            while line.last == 0x20 { line.removeLast() }
            terminal.print(String(decoding: line, as: UTF8.self))
        }
    }
}

/// What a listing says after a note's time when the note is not active (`--all`, `--archived`,
/// `--trashed` show such notes beside active ones).
func statusSuffix(trashed: Bool, archived: Bool) -> String {
    trashed ? " (trashed)" : archived ? " (archived)" : ""
}

/// A count and its noun, plural unless the count is one: `1 event`, `2 events`, `0 events`.
func counted(_ count: some BinaryInteger, _ noun: String, plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? noun : plural ?? noun + "s")
}

/// Cuts `s` to at most `width` terminal columns, marking the cut with an ellipsis, and shows
/// line breaks as spaces so one note is one line. (Before 2026-12-07 it cut at `width`
/// characters, so a title in CJK took twice the columns of the others and widened every row.)
func truncate(_ s: String, _ width: Int) -> String {
    // Most titles are printable ASCII: one byte, one character, one column.
    if s.utf8.count <= width, s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return s }
    let flat = String(s.map { $0.isNewline ? " " : $0 })
    if displayWidth(flat) <= width { return flat }
    var cut = ""
    var used = 0
    for ch in flat {
        let w = columns(ch)
        if used + w > width - 1 { break }
        cut.append(ch)
        used += w
    }
    return cut + "…"
}

/// Terminal columns a string takes: wide for CJK and emoji, zero for combining marks.
func displayWidth(_ s: String) -> Int {
    // Printable ASCII is one column a byte, without the Unicode property lookups below (which
    // were most of the instructions of `notes list`).
    if s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return s.utf8.count }
    var w = 0
    for ch in s { w += columns(ch) }
    return w
}

/// Terminal columns one character takes: 2 for CJK and emoji, 0 for combining marks and
/// zero-width format characters, else 1.
private func columns(_ ch: Character) -> Int {
    guard let first = ch.unicodeScalars.first else { return 0 }
    let v = first.value
    if ch.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .nonspacingMark || isZeroWidthFormat($0) }) {
        return 0
    }
    // A keycap (`1️⃣`: a digit, `#` or `*`, U+FE0F, U+20E3) or a text symbol asked to be drawn as
    // emoji (`❤️`: U+FE0F after it): two columns, as terminals draw them (before 2026-12-07 one,
    // the first character's, so a row holding one stood a column out). Only a character that has
    // an emoji form: a letter followed by U+FE0F has none, and terminals draw it as the letter.
    if ch.unicodeScalars.count > 1, first.properties.isEmoji,
        ch.unicodeScalars.contains(where: { $0.value == 0x20E3 || $0.value == 0xFE0F })
    {
        return 2
    }
    let wide =
        (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
        || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
        || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1FAFF).contains(v) || (0x20000...0x3FFFD).contains(v)
        // A flag (two regional indicators, one character): two columns, as terminals draw
        // it (before 2026-12-07 one, so a row with a flag in its title stood a column out).
        || (0x1F1E6...0x1F1FF).contains(v)
        // Emoji drawn as emoji by default outside those blocks (`✅`, `❌`, `⭐`, `⚡`, `⌛`: East
        // Asian Width W, two columns in terminals and wcwidth); before 2026-12-07 one, so a
        // title starting `✅ ` stood a column out of the listing.
        || first.properties.isEmojiPresentation
    return wide ? 2 : 1
}

/// Whether `c` is a format character terminals draw in no column: the zero-width space,
/// non-joiner and joiner, the left-to-right and right-to-left marks (U+200B-U+200F), the word
/// joiner and invisible operators (U+2060-U+2064) and the zero-width no-break space, or
/// byte-order mark (U+FEFF). Before 2026-12-07 each took a column when it stood alone.
private func isZeroWidthFormat(_ c: Unicode.Scalar) -> Bool {
    switch c.value {
    case 0x200B...0x200F, 0x2060...0x2064, 0xFEFF: return true
    default: return false
    }
}

extension Array where Element == String {
    /// `joined(separator:)` without the standard library's generic path: its first call in a
    /// process looks up the array's `StringProtocol` conformance by scanning every conformance
    /// record of the binary (about 110,000 instructions, 8% of a whole `notes show`).
    func concatenated(separator: String) -> String {
        var out = ""
        for (i, s) in enumerated() {
            if i > 0 { out += separator }
            out += s
        }
        return out
    }
}
