import SearchEngine

/// A wiki link in a note's body: `[[Title]]`, `[[Title|label]]`, `[[Title#section]]` or
/// `[[8+ hex digits of an id]]`.
///
/// Links inside fenced code blocks (```` ``` ```` or `~~~`) and inline code spans are text, not
/// links. The text between the brackets is one line without `[` or `]`; a target of 8 to 32 hex
/// digits (or a whole UUID) names a note by its id, anything else by its title.
public struct WikiLink: Sendable, Equatable, Hashable {
    public enum Target: Sendable, Equatable, Hashable {
        /// A title, as written.
        case title(String)
        /// Lowercase hex digits of an id, 8 to 32 of them.
        case id(String)
    }

    public var target: Target
    /// What the link shows: the text after `|`, else the target as written.
    public var label: String
    /// The body line it is on, from 0.
    public var line: Int
    /// The link as written, brackets included.
    public var text: String

    /// Every link of `body`, in order.
    public static func parse(_ body: String) -> [WikiLink] {
        var out: [WikiLink] = []
        // Most bodies hold no link: one search for `[[` settles them.
        guard body.utf8.firstRange(of: "[[".utf8) != nil else { return out }
        var fence: Substring?
        for (index, line) in body.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let stripped = line.drop { $0 == " " }
            if line.count - stripped.count <= 3, stripped.hasPrefix("```") || stripped.hasPrefix("~~~") {
                let marker = stripped.prefix(3)
                if fence == nil {
                    fence = marker
                } else if fence == marker {
                    fence = nil
                }
                continue
            }
            if fence != nil || !line.contains("[[") { continue }
            scan(line, index: index, into: &out)
        }
        return out
    }

    private static func scan(_ line: Substring, index: Int, into out: inout [WikiLink]) {
        let chars = Array(line)
        var i = 0
        while i < chars.count {
            if chars[i] == "`" {
                // An inline code span: a run of backticks up to the same run.
                var run = 0
                while i + run < chars.count, chars[i + run] == "`" { run += 1 }
                var j = i + run
                var closed: Int?
                while j < chars.count {
                    if chars[j] == "`" {
                        var r = 0
                        while j + r < chars.count, chars[j + r] == "`" { r += 1 }
                        if r == run {
                            closed = j + r
                            break
                        }
                        j += r
                    } else {
                        j += 1
                    }
                }
                i = closed ?? (i + run)
                continue
            }
            guard chars[i] == "[", i + 1 < chars.count, chars[i + 1] == "[" else {
                i += 1
                continue
            }
            var j = i + 2
            while j < chars.count, chars[j] != "]", chars[j] != "[" { j += 1 }
            guard j + 1 < chars.count, chars[j] == "]", chars[j + 1] == "]" else {
                i += 2
                continue
            }
            let inner = String(chars[(i + 2)..<j])
            if let link = link(inner, text: String(chars[i...(j + 1)]), line: index) { out.append(link) }
            i = j + 2
        }
    }

    static func link(_ inner: String, text: String, line: Int) -> WikiLink? {
        let parts = inner.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        var target = trim(parts[0])
        let written = target
        if let hash = target.firstIndex(of: "#") { target = trim(target[..<hash]) }
        guard !target.isEmpty else { return nil }
        let label = parts.count > 1 ? trim(parts[1]) : ""
        let shown = label.isEmpty ? written : label
        if let hex = idDigits(target) {
            return WikiLink(target: .id(hex), label: shown, line: line, text: text)
        }
        guard !TextFolding.fold(target).isEmpty else { return nil }
        return WikiLink(target: .title(target), label: shown, line: line, text: text)
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

    /// The key this link is indexed and resolved by: a title folded (case and accents), or the
    /// id digits.
    public var key: LinkKey {
        switch target {
        case .title(let t): return .title(TextFolding.fold(t))
        case .id(let hex): return .id(hex)
        }
    }
}

/// What a link is looked up by.
public enum LinkKey: Sendable, Hashable {
    /// A folded title.
    case title(String)
    /// Lowercase hex digits of an id.
    case id(String)
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
