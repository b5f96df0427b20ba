import Basics
import SearchEngine

/// A wiki link in a note's body: `[[Title]]`, `[[Title|label]]`, `[[Title#section]]` or
/// `[[8+ hex digits of an id]]`.
///
/// Links in code and HTML comments are text, not links: fenced code blocks (```` ``` ```` or
/// `~~~`), those of a list item or a block quote (`> ````, an Obsidian callout's code), indented
/// code blocks, inline code spans and `<!-- ... -->`; what is code is decided as the `#tag`
/// scanner of Markdown import decides it (``MarkdownCode``). The text between the brackets is
/// one line without `[` or `]`; a target of 8 to 32 hex digits (or a whole UUID) names a note by
/// its id, anything else by its title.
///
/// A Markdown link to a note's file, `[text](other.md)`, or a reference link whose definition
/// names one, `[text][ref]` with `[ref]: other.md`, is one too (``Target/file(_:)``, see
/// ``MarkdownLink``), in the same places.
public struct WikiLink: Sendable, Equatable, Hashable {
    public enum Target: Sendable, Equatable, Hashable {
        /// A title, as written.
        case title(String)
        /// Lowercase hex digits of an id, 8 to 32 of them.
        case id(String)
        /// A Markdown link's file: its path within the vault, `.md` included, resolved from the
        /// folder of the linking note's file (or the vault's root for a note from no file),
        /// percent-decoded, without its `#fragment` (`sub/Other Note.md`).
        case file(String)
    }

    /// The mark of a link's syntax that `name` holds (`|`, `#`, `[[` or `]]`), if any: no link
    /// can lead to a note by such a name.
    static func syntax(in name: String) -> String? {
        ["|", "#", "[[", "]]"].first { textContains(name, $0) }
    }

    /// The warning for an alias no link can lead to a note by, if `alias` is one.
    public static func unreachableAlias(_ alias: String) -> String? {
        syntax(in: alias).map {
            "alias \"\(alias)\" holds \($0), which a [[link]] reads as its syntax: no link leads to the note by it"
        }
    }

    public var target: Target
    /// What the link shows: the text after `|`, else the target as written.
    public var label: String
    /// The body line it is on, from 0.
    public var line: Int
    /// The link as written, brackets included.
    public var text: String

    /// Every link of `note`'s body, in order: its Markdown links resolved from the folder of the
    /// file it was imported from (``Note/sourcePath``).
    public static func parse(_ note: Note) -> [WikiLink] { parse(note.body, place: note.sourcePath) }

    /// Every link of `body`, in order; `place` is the path within its vault of the file the body
    /// is from, which a Markdown link's relative path starts from (nil: the vault's root).
    public static func parse(_ body: String, place: String? = nil) -> [WikiLink] {
        var out: [WikiLink] = []
        // Most bodies hold no link: one pass over the bytes settles them.
        guard mayHoldLink(body.utf8) else { return out }
        let folder = MarkdownLink.folder(of: place)
        let bytes = Array(body.utf8)
        // The reference definitions first: a reference link may come before its definition.
        let (definitions, definitionLines) =
            mayHoldDefinition(body.utf8) ? MarkdownLink.definitions(bytes) : ([:], [])
        // Every byte the syntax uses is ASCII, so the scan runs on UTF-8 bytes; texts are cut at
        // ASCII bytes only, never inside a character.
        MarkdownCode.forEachTextLine(bytes) { line, index, state in
            // A definition's line is no text (the definitions' pass left it so too).
            if definitionLines.contains(index) { return }
            // A line without `[[` or `](` (or a `]` when the body defines labels) matters only to
            // a comment or a code span that opens or closes in it.
            if mayHoldLink(line) || (!definitions.isEmpty && line.contains(0x5D)) || state.inComment
                || state.startsInCodeSpan || line.contains(0x3C) || line.contains(0x60)
            {
                scan(line, index: index, state: &state, folder: folder, definitions: definitions, into: &out)
            }
        }
        return out
    }

    /// Calls `body` with each line of `bytes` outside fenced code blocks (the fence lines left
    /// out too), without its line feed or a carriage return before it, and the line's number
    /// from 0. A fence is CommonMark's: a run of 3 or more backticks or tildes after at most 3
    /// spaces, closed by a run of the same character at least as long, followed by spaces only;
    /// a backtick run whose info string holds a backtick opens none. A byte-order mark that
    /// starts the text is not part of its first line (a file's BOM is kept in the body).
    package static func forEachLineOutsideFences(_ bytes: [UInt8], _ body: (ArraySlice<UInt8>, Int) -> Void) {
        var fence: (marker: UInt8, count: Int)?
        var lineStart = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var index = 0
        while lineStart <= bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
            var line = bytes[lineStart..<lineEnd]
            if line.last == 0x0D { line = line.dropLast() }
            let run = fenceRun(line)
            if let open = fence {
                if let run, run.marker == open.marker, run.count >= open.count, run.bare { fence = nil }
            } else if let run, run.marker == 0x7E || !run.infoHasBacktick {
                fence = (run.marker, run.count)
            } else {
                body(line, index)
            }
            lineStart = lineEnd + 1
            index += 1
        }
    }

    /// A line that can open or close a code fence: at most 3 spaces, then 3 or more backticks
    /// or tildes; `bare` when only spaces follow the run, `infoHasBacktick` when a backtick does
    /// (such a line opens no backtick fence).
    private static func fenceRun(_ line: ArraySlice<UInt8>) -> (
        marker: UInt8, count: Int, bare: Bool, infoHasBacktick: Bool
    )? {
        let stripped = line.drop { $0 == 0x20 }
        guard line.count - stripped.count <= 3, let marker = stripped.first, marker == 0x60 || marker == 0x7E else {
            return nil
        }
        let run = stripped.prefix { $0 == marker }.count
        guard run >= 3 else { return nil }
        let rest = stripped.dropFirst(run)
        return (marker, run, rest.allSatisfy { $0 == 0x20 || $0 == 0x09 }, rest.contains(0x60))
    }

    /// Whether the text holds `[[` (a wiki link's start), `](` (an inline link's middle) or `]:`
    /// (a reference definition's, which reference links need): a plain byte loop (the standard
    /// library's substring search is generic and costs more than the rest of a replay's fold).
    @inline(__always)
    static func mayHoldLink(_ utf8: some Collection<UInt8>) -> Bool {
        func search(_ bytes: some Sequence<UInt8>) -> Bool {
            var previous: UInt8 = 0
            for b in bytes {
                if previous == 0x5B && b == 0x5B || previous == 0x5D && (b == 0x28 || b == 0x3A) { return true }
                previous = b
            }
            return false
        }
        return utf8.withContiguousStorageIfAvailable(search) ?? search(utf8)
    }

    /// Whether the text holds `]:`, which every reference definition does.
    private static func mayHoldDefinition(_ utf8: String.UTF8View) -> Bool {
        func search(_ bytes: some Sequence<UInt8>) -> Bool {
            var previous: UInt8 = 0
            for b in bytes {
                if previous == 0x5D && b == 0x3A { return true }
                previous = b
            }
            return false
        }
        return utf8.withContiguousStorageIfAvailable(search) ?? search(utf8)
    }

    /// The links of one line, outside its code spans and HTML comments (`state`: what is open
    /// where the line starts; left as the line leaves it): wiki links, and Markdown links to a
    /// note's file (``MarkdownLink``), whose relative paths start from `folder`.
    ///
    /// Markdown's brackets are matched as CommonMark matches them: a `]` closes the nearest `[`
    /// still open; a link's text may hold brackets, and no link is inside another (once a link
    /// is made, the `[` before it open no link); `\[` and `\]` are no brackets; `![...](...)`
    /// is an image. A destination ends at the next bracket or white space, and a title at its
    /// closing mark (a `(` title at any parenthesis), so the stretches read after each `](` barely
    /// overlap and a line of any length is read in linear time (``MarkdownLink``).
    private static func scan(
        _ line: ArraySlice<UInt8>, index: Int, state: inout MarkdownCode.LineState, folder: [Substring],
        definitions: [String: [UInt8]], into out: inout [WikiLink]
    ) {
        let (open, close): (UInt8, UInt8) = (0x5B, 0x5D)
        var spans: CodeSpans?
        var i = line.startIndex
        let end = line.endIndex
        // The Markdown brackets open at `i`: where each is, and whether it opens an image.
        var openers: [(at: Int, image: Bool)] = []
        // Openers below this index open no link: they hold a link already.
        var inactiveBelow = 0
        // The byte a backslash escapes, if any.
        var escaped = -1
        while i < end {
            if MarkdownCode.stepOverCode(line, at: &i, state: &state, spans: &spans) { continue }
            let b = line[i]
            if b == 0x5C {
                if escaped != i { escaped = i + 1 }
                i += 1
                continue
            }
            if b == close, escaped != i, let opener = openers.popLast() {
                let active = openers.count >= inactiveBelow
                inactiveBelow = min(inactiveBelow, openers.count)
                if i + 1 < end, line[i + 1] == 0x28, let parsed = MarkdownLink.destination(line, from: i + 2) {
                    if active && !opener.image {
                        // No link inside a link: the brackets open before this one open none.
                        inactiveBelow = openers.count
                        if let path = MarkdownLink.filePath(parsed.destination, from: folder) {
                            let inner = trim(String(decoding: line[(opener.at + 1)..<i], as: UTF8.self))
                            out.append(
                                WikiLink(
                                    target: .file(path),
                                    label: inner.isEmpty ? String(decoding: parsed.written, as: UTF8.self) : inner,
                                    line: index, text: String(decoding: line[opener.at..<parsed.end], as: UTF8.self)))
                        }
                    }
                    if active {
                        i = parsed.end
                        continue
                    }
                }
                // A reference link (`[text][label]`, `[text][]`, `[text]`) to a label the body
                // defines: read as the inline link to the definition's destination.
                if active, !definitions.isEmpty,
                    let reference = MarkdownLink.reference(line, text: (opener.at + 1)..<i, definitions)
                {
                    if !opener.image {
                        inactiveBelow = openers.count
                        if let path = MarkdownLink.filePath(reference.destination, from: folder) {
                            let inner = trim(String(decoding: line[(opener.at + 1)..<i], as: UTF8.self))
                            let text = String(decoding: line[opener.at..<reference.end], as: UTF8.self)
                            out.append(
                                WikiLink(
                                    target: .file(path), label: inner.isEmpty ? text : inner, line: index, text: text))
                        }
                    }
                    i = reference.end
                    continue
                }
                i += 1
                continue
            }
            guard b == open else {
                i += 1
                continue
            }
            if escaped != i {
                let image = i > line.startIndex && line[i - 1] == 0x21 && escaped != i - 1
                openers.append((i, image))
            }
            guard i + 1 < end, line[i + 1] == open else {
                i += 1
                continue
            }
            var j = i + 2
            while j < end, line[j] != close, line[j] != open { j += 1 }
            guard j + 1 < end, line[j] == close, line[j + 1] == close else {
                // `[[[Title]]]`: the link may start at the next bracket.
                i += 1
                continue
            }
            // A wiki link is no Markdown bracket.
            openers.removeLast(escaped != i ? 1 : 0)
            let inner = String(decoding: line[(i + 2)..<j], as: UTF8.self)
            let text = String(decoding: line[i..<(j + 2)], as: UTF8.self)
            if let link = link(inner, text: text, line: index, folder: folder) { out.append(link) }
            i = j + 2
        }
    }

    /// The link `[[inner]]`, written on line `line` of a note whose file is in `folder`.
    static func link(_ inner: String, text: String, line: Int, folder: [Substring] = []) -> WikiLink? {
        let (target, written, label) = asciiParts(inner) ?? parts(inner)
        guard !target.isEmpty else { return nil }
        let shown = label.isEmpty ? written : label
        if let hex = idDigits(target) {
            return WikiLink(target: .id(hex), label: shown, line: line, text: text)
        }
        if let path = relativePath(target, from: folder) {
            return WikiLink(target: .file(path), label: shown, line: line, text: text)
        }
        guard !TextFolding.fold(target).isEmpty else { return nil }
        return WikiLink(target: .title(target), label: shown, line: line, text: text)
    }

    /// The parts of the link `[[inner]]`, a character at a time: the target without its
    /// `#section`, the target as written, and the label, each trimmed.
    static func parts(_ inner: String) -> (target: String, written: String, label: String) {
        let parts = inner.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        // In a table, `[[Title\|label]]` escapes the cell separator.
        var target = trim(parts.count > 1 && parts[0].hasSuffix("\\") ? parts[0].dropLast() : parts[0])
        let written = target
        if let hash = target.firstIndex(of: "#") { target = trim(target[..<hash]) }
        return (target, written, parts.count > 1 ? trim(parts[1]) : "")
    }

    /// The parts of the link `[[inner]]` when `inner` is ASCII, byte by byte (each byte is a
    /// character then, and white space is tab to carriage return, and space): the target
    /// without its `#section`, the target as written, and the label, each trimmed; what the
    /// general path, ``parts(_:)``, makes of it a character at a time, which cost 16,000
    /// instructions a link.
    static func asciiParts(_ inner: String) -> (target: String, written: String, label: String)? {
        var inner = inner
        return inner.withUTF8 { b -> (String, String, String)? in
            guard isASCII(b) else { return nil }
            func trimmed(_ range: Range<Int>) -> String {
                var (lo, hi) = (range.lowerBound, range.upperBound)
                while lo < hi, isSpace(b[lo]) { lo += 1 }
                while hi > lo, isSpace(b[hi - 1]) { hi -= 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: b[lo..<hi]), as: UTF8.self)
            }
            let bar = b.firstIndex(of: UInt8(ascii: "|"))
            var targetEnd = bar ?? b.count
            // In a table, `[[Title\|label]]` escapes the cell separator.
            if bar != nil, targetEnd > 0, b[targetEnd - 1] == UInt8(ascii: "\\") { targetEnd -= 1 }
            let written = trimmed(0..<targetEnd)
            var target = written
            if let hash = b[0..<targetEnd].firstIndex(of: UInt8(ascii: "#")) { target = trimmed(0..<hash) }
            let label = bar.map { trimmed(($0 + 1)..<b.count) } ?? ""
            return (target, written, label)
        }
    }

    @inline(__always)
    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }

    /// The vault path of a note's file that a wiki link's target names as a path from the
    /// linking note's folder, `[[../Plan]]`, `[[./Plan]]`, or from the vault's root, `[[/B/Plan]]`
    /// (as Obsidian writes links with its "relative path to file" format, and resolves them), its
    /// `.md` added when not written; nil for any other target, for one that leaves the vault (read
    /// as a name then), and for an attachment's (`![[../img/a.png]]`, which no note is from).
    /// Before 2026-12-07 such a link was a title no note had, missing.
    static func relativePath(_ target: String, from folder: [Substring]) -> String? {
        guard target.hasPrefix("./") || target.hasPrefix("../") || target.hasPrefix("/") else { return nil }
        var path = target
        if !path.lowercased().hasSuffix(".md") {
            if LinkKey.title(TextFolding.fold(path)).isAttachment { return nil }
            path += ".md"
        }
        return MarkdownLink.vaultPath(path, from: folder)
    }

    /// The lowercase hex digits when `text` is 8 to 32 of them, or a whole UUID.
    static func idDigits(_ text: String) -> String? {
        var digits = text
        if text.utf8.count == 36, text.filter({ $0 == "-" }).count == 4 { digits = text.filter { $0 != "-" } }
        guard (8...32).contains(digits.utf8.count), digits.utf8.allSatisfy(\.isHexDigit) else { return nil }
        return digits.lowercased()
    }

    private static func trim(_ s: some StringProtocol) -> String {
        var sub = Substring(s)
        while let f = sub.first, f.isWhitespace { sub.removeFirst() }
        while let l = sub.last, l.isWhitespace { sub.removeLast() }
        return String(sub)
    }

    /// Whether the link names a file of another kind than a note, `![[photo.png]]` or
    /// `[[report.pdf]]`: its target's last path part ends with an extension of
    /// ``attachmentExtensions`` (any case).
    public var isAttachment: Bool { key.isAttachment }

    /// The extensions of the files a vault keeps beside its notes that a link or an embed may
    /// name (Obsidian's images, audio, video, PDF and canvas, and office documents and archives):
    /// no note is imported from them, so a link to one that no note's title or name matches is an
    /// attachment, not a missing note. A closed list, so `[[Node.js]]` or `[[v1.2]]` stays a
    /// note's name.
    public static let attachmentExtensions: Set<String> = [
        "avif", "bmp", "gif", "heic", "ico", "jpeg", "jpg", "png", "svg", "tif", "tiff", "webp",
        "3gp", "aac", "flac", "m4a", "mp3", "oga", "ogg", "opus", "wav",
        "avi", "m4v", "mkv", "mov", "mp4", "ogv", "webm",
        "pdf", "canvas", "base", "epub", "csv", "doc", "docx", "odp", "ods", "odt", "ppt", "pptx", "rtf", "xls",
        "xlsx", "zip",
    ]

    /// The key this link is indexed and resolved by: a title folded (case and accents), the id
    /// digits, or a file's path as written (resolved and decoded; folded where it is looked up).
    public var key: LinkKey {
        switch target {
        case .title(let t): return .title(TextFolding.fold(t))
        case .id(let hex): return .id(hex)
        case .file(let path): return .file(path)
        }
    }
}

/// What a link is looked up by.
public enum LinkKey: Sendable, Hashable {
    /// A folded title.
    case title(String)
    /// Lowercase hex digits of an id.
    case id(String)
    /// A path within the vault, `.md` included, as the link spells it: a Markdown link's file.
    /// It is looked up folded, and the file spelled so comes first (`Plan.md` and `plan.md` are
    /// two files; before notes-24 the key was folded, and a link led to either).
    case file(String)

    /// A file key's file name without `.md`, folded: the name the link falls back to when no
    /// note is from that path (for any other key, nil).
    var fileName: String? {
        guard case .file(let path) = self else { return nil }
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        return TextFolding.fold(String(name.dropLast(3)))
    }

    /// Whether it names an attachment (see ``WikiLink/attachmentExtensions``): a folded title
    /// (lowercase already) whose last path part ends with such an extension.
    public var isAttachment: Bool {
        // A title without a `.` byte (most) has no `.` character either.
        guard case .title(let folded) = self, utf8Contains(folded, UInt8(ascii: ".")),
            let dot = folded.lastIndex(of: "."),
            !folded[dot...].contains("/")
        else { return false }
        return WikiLink.attachmentExtensions.contains(String(folded[folded.index(after: dot)...]))
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
