import Basics

/// The Markdown links of a body that are links between notes: an inline link whose destination
/// is a path ending in `.md`, `[text](other.md)`, `[text](sub/Other%20Note.md)`,
/// `[text](other.md#heading)`, `[text](<other note.md>)` (CommonMark's inline links, on one
/// line). Not one: a destination with a scheme (`https:`, `mailto:`, `file:`) or starting with
/// `//`, an image (`![..](x.md)`), a destination of another extension, a `#heading` of the note
/// itself, and anything in code (``MarkdownCode``, as for wiki links).
///
/// The path is read as a vault's file: percent-decoded, its `#fragment` dropped, relative to the
/// folder of the linking note's file (`..` and `.` resolved; a path starting with `/` is from
/// the vault's root, and so is any path of a note that came from no file). It is parsed with
/// the wiki links (``WikiLink/parse(_:place:)``) and resolved by ``LinkResolution``.
enum MarkdownLink {
    /// The folders of the file at `place` (a path within its vault), outermost first.
    static func folder(of place: String?) -> [Substring] {
        guard let place else { return [] }
        return place.split(separator: "/").dropLast()
    }

    /// The destination of the inline link whose `(` is just before `start` in `line`, and
    /// where the link ends (after its `)`): the destination's bytes with their backslash escapes
    /// taken away, and as written. An optional title (`"..."`, `'...'`, `(...)`) may follow it;
    /// nil when no `)` closes the link on the line.
    ///
    /// A destination in `<...>` holds no `<` or `>`; any other holds no white space, control
    /// character or bracket, and its parentheses are balanced (at most 32 deep). CommonMark lets
    /// such a destination hold a bracket; it ends there so that a scan of a line full of `](`
    /// reads each byte a bounded number of times (a file name with a bracket can be written in
    /// `<...>`).
    static func destination(_ line: ArraySlice<UInt8>, from start: Int) -> (
        destination: [UInt8], written: ArraySlice<UInt8>, end: Int
    )? {
        let end = line.endIndex
        var p = start
        func skipSpaces() { while p < end, line[p] == 0x20 || line[p] == 0x09 { p += 1 } }
        skipSpaces()
        var destination: [UInt8] = []
        let written: ArraySlice<UInt8>
        if p < end, line[p] == 0x3C {
            let first = p + 1
            p = first
            while p < end, line[p] != 0x3E, line[p] != 0x3C {
                if line[p] == 0x5C, p + 1 < end, line[p + 1].isASCIIPunctuation { p += 1 }
                destination.append(line[p])
                p += 1
            }
            guard p < end, line[p] == 0x3E else { return nil }
            written = line[first..<p]
            p += 1
        } else {
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
            written = line[first..<p]
        }
        let beforeTitle = p
        skipSpaces()
        if p > beforeTitle, p < end, line[p] == 0x22 || line[p] == 0x27 || line[p] == 0x28 {
            let opener = line[p]
            let closer = opener == 0x28 ? 0x29 : opener
            p += 1
            while p < end, line[p] != closer {
                if opener == 0x28 && line[p] == 0x28 { return nil }
                p += line[p] == 0x5C ? 2 : 1
            }
            guard p < end else { return nil }
            p += 1
            skipSpaces()
        }
        guard p < end, line[p] == 0x29 else { return nil }
        return (destination, written, p + 1)
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
