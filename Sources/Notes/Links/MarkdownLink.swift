import Basics

/// The Markdown links of a body that are links between notes: an inline link whose destination
/// is a path ending in `.md`, `[text](other.md)`, `[text](sub/Other%20Note.md)`,
/// `[text](other.md#heading)`, `[text](<other note.md>)` (CommonMark's inline links, on one
/// line), and a reference link whose definition's destination is one, `[text][ref]`,
/// `[text][]` or `[text]` with `[ref]: other.md` on a line of the body
/// (``definitions(_:)``). Not one: a destination with a scheme (`https:`, `mailto:`, `file:`) or starting with
/// `//`, an image (`![..](x.md)`), a destination of another extension, a `#heading` of the note
/// itself, and anything in code (``MarkdownCode``, as for wiki links).
///
/// The path is read as a vault's file: percent-decoded, its `#fragment` dropped, relative to the
/// folder of the linking note's file (`..` and `.` resolved; a path starting with `/` is from
/// the vault's root, and so is any path of a note that came from no file). It is parsed with
/// the wiki links (``WikiLink/parse(_:place:)``) and resolved by ``LinkResolution``.
package enum MarkdownLink {
    /// The folders of the file at `place` (a path within its vault), outermost first.
    static func folder(of place: String?) -> [Substring] {
        guard let place else { return [] }
        return place.split(separator: "/").dropLast()
    }

    /// The destination of the inline link whose `(` is just before `start` in `line`, and
    /// where the link ends (after its `)`): the destination's bytes with their backslash escapes
    /// taken away, and as written. An optional title (`"..."`, `'...'`, `(...)`) may follow it;
    /// nil when no `)` closes the link on the line.
    static func destination(_ line: ArraySlice<UInt8>, from start: Int) -> (
        destination: [UInt8], written: ArraySlice<UInt8>, end: Int
    )? {
        let end = line.endIndex
        var p = start
        func skipSpaces() { while p < end, line[p] == 0x20 || line[p] == 0x09 { p += 1 } }
        skipSpaces()
        guard let parsed = bareDestination(line, at: p) else { return nil }
        p = parsed.end
        let beforeTitle = p
        skipSpaces()
        if p > beforeTitle, p < end, line[p] == 0x22 || line[p] == 0x27 || line[p] == 0x28 {
            guard let after = titleEnd(line, at: p) else { return nil }
            p = after
            skipSpaces()
        }
        guard p < end, line[p] == 0x29 else { return nil }
        return (parsed.destination, parsed.written, p + 1)
    }

    /// The link destination at `p` of `line` (an inline link's or a definition's), and the index
    /// after it: its bytes with their backslash escapes taken away, and as written.
    ///
    /// A destination in `<...>` holds no `<` or `>`; any other holds no white space, control
    /// character or bracket, and its parentheses are balanced (at most 32 deep). CommonMark lets
    /// such a destination hold a bracket; it ends there so that a scan of a line full of `](`
    /// reads each byte a bounded number of times (a file name with a bracket can be written in
    /// `<...>`).
    private static func bareDestination(_ line: ArraySlice<UInt8>, at start: Int) -> (
        destination: [UInt8], written: ArraySlice<UInt8>, end: Int
    )? {
        let end = line.endIndex
        var p = start
        var destination: [UInt8] = []
        if p < end, line[p] == 0x3C {
            let first = p + 1
            p = first
            while p < end, line[p] != 0x3E, line[p] != 0x3C {
                if line[p] == 0x5C, p + 1 < end, line[p + 1].isASCIIPunctuation { p += 1 }
                destination.append(line[p])
                p += 1
            }
            guard p < end, line[p] == 0x3E else { return nil }
            return (destination, line[first..<p], p + 1)
        }
        let first = p
        var depth = 0
        while p < end {
            let c = line[p]
            if c <= 0x20 || c == 0x7F || c == 0x5B || c == 0x5D { break }
            if c == 0x5C, p + 1 < end, line[p + 1].isASCIIPunctuation {
                destination.append(line[p + 1])
                p += 2
                continue
            }
            if c == 0x28 {
                depth += 1
                if depth > 32 { return nil }
            } else if c == 0x29 {
                if depth == 0 { break }
                depth -= 1
            }
            destination.append(c)
            p += 1
        }
        guard depth == 0 else { return nil }
        return (destination, line[first..<p], p)
    }

    /// The index after the link title (`"..."`, `'...'` or `(...)`) that starts at `p`, or nil
    /// when none closes on the line.
    private static func titleEnd(_ line: ArraySlice<UInt8>, at start: Int) -> Int? {
        let opener = line[start]
        guard opener == 0x22 || opener == 0x27 || opener == 0x28 else { return nil }
        let closer: UInt8 = opener == 0x28 ? 0x29 : opener
        var p = start + 1
        while p < line.endIndex, line[p] != closer {
            if opener == 0x28 && line[p] == 0x28 { return nil }
            p += line[p] == 0x5C ? 2 : 1
        }
        return p < line.endIndex ? p + 1 : nil
    }

    /// The link reference definitions of a body (CommonMark's `[label]: destination "title"`,
    /// on a line of its own, at most 3 spaces in, outside code and comments, as the `#tag`
    /// scanner of Markdown import passes them over): each label (``label(_:)``) with its
    /// destination, the first definition of a label winning; and the lines they are on, which
    /// hold no link. Reference links (``reference(_:text:_:)``) read them.
    ///
    /// A definition cannot interrupt a paragraph (CommonMark 0.31, 4.7): it is one at the start
    /// of the body, after a blank line, a heading, a thematic break, a code block (fenced or
    /// indented), an HTML comment that started its line and ended, or another definition; right
    /// under a paragraph's line (a list item's, a quote's) it is that paragraph's text
    /// (``IndentedBlocks/paragraphOpen(after:open:)``). Before 2026-12-07 it was one there too.
    static func definitions(_ bytes: [UInt8]) -> (destinations: [String: [UInt8]], lines: Set<Int>) {
        var destinations: [String: [UInt8]] = [:]
        var lines: Set<Int> = []
        var last = -1
        // A paragraph (or an HTML block, which goes on to a blank line) is open after the line before.
        var open = false
        // An HTML comment that started its line (CommonMark's HTML block of kind 2) is open: the
        // block ends on the line that closes the comment.
        var commentBlock = false
        // The block quote depth of the line before.
        var depth = 0
        // The quote depth of an HTML block (`<div>`) open after the line before: up to a blank
        // line, its lines are HTML, where no quote or list item starts a block (CommonMark 0.31,
        // 4.6), unless a line of fewer quotes ends the quote it was in.
        var htmlDepth: Int?
        MarkdownCode.forEachTextLine(bytes) { line, index, state in
            // Lines the scan passed over are code (a fenced or an indented block): no paragraph
            // goes on past them.
            if index != last + 1 {
                open = false
                depth = 0
                htmlDepth = nil
            }
            last = index
            let startsInComment = state.inComment
            let startsInCodeSpan = state.startsInCodeSpan
            // In a block quote or a list item too (`> [a]: x.md`, `- [a]: x.md`), as CommonMark
            // reads them, for the whole note (before 2026-12-07 only a line of its own).
            let contained = IndentedBlocks.containedText(line, previousDepth: depth, open: open)
            depth = contained.depth
            if let html = htmlDepth, contained.depth < html {
                // The quote that held the HTML block ends here: no HTML is a lazy line.
                htmlDepth = nil
                open = false
            }
            // An HTML block goes on to a blank line: a quote or an item in it is its text (before
            // 2026-12-07 `<div>` then `- [p]: x.md` was taken for a definition).
            let startsBlock = contained.startsBlock && htmlDepth == nil
            if !open || startsBlock, !startsInComment, !startsInCodeSpan,
                let found = definition(contained.text)
            {
                lines.insert(index)
                if destinations[found.label] == nil { destinations[found.label] = found.destination }
                open = false
                return
            }
            let text = line.drop { $0 == 0x20 }
            let opensComment =
                !startsInComment && !state.startsInCodeSpan && line.count - text.count <= 3
                && text.starts(with: [0x3C, 0x21, 0x2D, 0x2D])
            if !startsInComment || !commentBlock { open = IndentedBlocks.paragraphOpen(after: line, open: open) }
            // What opens or closes a comment or a code span, as the link scan steps over it.
            if state.inComment || state.startsInCodeSpan || line.contains(0x3C) || line.contains(0x60) {
                var k = line.startIndex
                var spans: CodeSpans?
                while k < line.endIndex {
                    if !MarkdownCode.stepOverCode(line, at: &k, state: &state, spans: &spans) { k += 1 }
                }
            }
            if opensComment { commentBlock = true }
            if commentBlock && !state.inComment {
                // The comment's block ends with this line.
                commentBlock = false
                open = false
            }
            if !open {
                htmlDepth = nil
            } else if htmlDepth == nil, !startsInComment, !startsInCodeSpan,
                contained.text.prefix(while: { $0 == 0x20 }).count < 4,
                IndentedBlocks.startsHTMLBlock(contained.text.drop { $0 == 0x20 })
            {
                htmlDepth = contained.depth
            }
        }
        return (destinations, lines)
    }

    /// The lines of `bytes` that are link reference definitions (``definitions(_:)``): they
    /// hold no link, and the `#tag` scanner of Markdown import passes over them too.
    package static func definitionLines(_ bytes: [UInt8]) -> Set<Int> {
        // Every definition has `]:`; most bodies have none.
        guard bytes.indices.dropFirst().contains(where: { bytes[$0 - 1] == 0x5D && bytes[$0] == 0x3A }) else {
            return []
        }
        return definitions(bytes).lines
    }

    /// The label and destination of `line` when it is a link reference definition.
    private static func definition(_ line: ArraySlice<UInt8>) -> (label: String, destination: [UInt8])? {
        let end = line.endIndex
        var p = line.startIndex
        while p < end, line[p] == 0x20, p - line.startIndex < 4 { p += 1 }
        guard p - line.startIndex <= 3, p < end, line[p] == 0x5B, let close = labelEnd(line, from: p),
            close + 1 < end, line[close + 1] == 0x3A, let label = label(line[(p + 1)..<close])
        else { return nil }
        p = close + 2
        func skipSpaces() { while p < end, line[p] == 0x20 || line[p] == 0x09 { p += 1 } }
        skipSpaces()
        guard let parsed = bareDestination(line, at: p), !parsed.written.isEmpty else { return nil }
        p = parsed.end
        // White space, then an optional title, then nothing but white space.
        let beforeTitle = p
        skipSpaces()
        if p < end {
            guard p > beforeTitle, let after = titleEnd(line, at: p) else { return nil }
            p = after
            skipSpaces()
            guard p == end else { return nil }
        }
        return (label, parsed.destination)
    }

    /// The destination of the reference link whose text is `text` of `line` (between a `[` and
    /// the `]` at `text.upperBound`), and the index after the link, when `definitions` defines
    /// its label: `[text][label]`, `[text][]` or `[text]` (full, collapsed and shortcut, as
    /// CommonMark has them; a text followed by a label that is not defined is no shortcut).
    static func reference(_ line: ArraySlice<UInt8>, text: Range<Int>, _ definitions: [String: [UInt8]]) -> (
        destination: [UInt8], end: Int
    )? {
        let after = text.upperBound + 1
        // The text as a label: without brackets of its own.
        func textLabel() -> String? {
            guard labelEnd(line, from: text.lowerBound - 1) == text.upperBound else { return nil }
            return label(line[text])
        }
        if after < line.endIndex, line[after] == 0x5B, let close = labelEnd(line, from: after) {
            let written = line[(after + 1)..<close]
            guard let key = written.isEmpty ? textLabel() : label(written), let destination = definitions[key] else {
                return nil
            }
            return (destination, close + 1)
        }
        guard let key = textLabel(), let destination = definitions[key] else { return nil }
        return (destination, after)
    }

    /// The index of the `]` that closes the link label whose `[` is at `open`: no bracket but
    /// an escaped one before it, within 1,000 bytes (CommonMark's 999 characters).
    private static func labelEnd(_ line: ArraySlice<UInt8>, from open: Int) -> Int? {
        var k = open + 1
        while k < line.endIndex, k - open <= 1000 {
            switch line[k] {
            case 0x5C: k += 2
            case 0x5B: return nil
            case 0x5D: return k
            default: k += 1
            }
        }
        return nil
    }

    /// A link label as definitions and references match it: case folded, without the white
    /// space at its ends, each run of it inside one space; nil when it is blank.
    private static func label(_ bytes: ArraySlice<UInt8>) -> String? {
        let words = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard !words.isEmpty else { return nil }
        return words.joined(separator: " ").lowercased()
    }

    /// The path within the vault of the note's file a destination names, from the folder of
    /// the linking note's file; nil when it names no note's file (a URL, a path of another
    /// extension, the note's own `#heading`).
    static func filePath(_ destination: [UInt8], from folder: [Substring]) -> String? {
        var bytes = destination[...]
        if let hash = bytes.firstIndex(of: 0x23) { bytes = bytes[..<hash] }
        guard !bytes.isEmpty, !hasScheme(bytes), !bytes.starts(with: [0x2F, 0x2F]) else { return nil }
        let decoded = percentDecoded(bytes)
        guard let text = String(validating: decoded, as: UTF8.self) else { return nil }
        return vaultPath(text, from: folder)
    }

    /// The path within the vault that `text`, a path to a note's file, names from `folder`
    /// (`.` and `..` resolved; from the vault's root when it starts with `/`); nil when it leaves
    /// the vault or names no `.md` file.
    static func vaultPath(_ text: String, from folder: [Substring]) -> String? {
        var parts: [Substring] = text.hasPrefix("/") ? [] : folder
        for part in text.split(separator: "/") {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
            } else {
                parts.append(part)
            }
        }
        // A file name of more than `.md`, and a path that stays in the vault.
        guard let name = parts.last, name.utf8.count > 3, name.lowercased().hasSuffix(".md"), parts.first != ".."
        else { return nil }
        return parts.joined(separator: "/")
    }

    /// Whether the destination starts with a URI scheme: a letter, then 1 to 31 letters, digits,
    /// `+`, `.` or `-`, then `:` (CommonMark's rule for autolinks; `C:` is no scheme).
    private static func hasScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, first.isASCIILetter else { return false }
        var k = bytes.startIndex + 1
        while k < bytes.endIndex, k - bytes.startIndex <= 32 {
            let c = bytes[k]
            if c == 0x3A { return k - bytes.startIndex >= 2 }
            guard c.isASCIILetter || (0x30...0x39).contains(c) || c == 0x2B || c == 0x2E || c == 0x2D else {
                return false
            }
            k += 1
        }
        return false
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }

    /// CommonMark's ASCII punctuation, which a backslash escapes.
    fileprivate var isASCIIPunctuation: Bool {
        (0x21...0x2F).contains(self) || (0x3A...0x40).contains(self) || (0x5B...0x60).contains(self)
            || (0x7B...0x7E).contains(self)
    }
}
