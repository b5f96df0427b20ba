/// Renders hunks as a unified diff that GNU `patch` applies.
///
/// ```swift
/// let hunks = LineDiff.hunks(from: "a\n", to: "b\n")
/// UnifiedDiff.render(hunks, oldLabel: "note@1", newLabel: "note@2")
/// // "--- note@1\n+++ note@2\n@@ -1 +1 @@\n-a\n+b\n"
/// ```
public enum UnifiedDiff {
    /// The unified diff of `hunks` under `--- oldLabel` / `+++ newLabel` headers, or `""` when
    /// there are no hunks (the texts are equal).
    ///
    /// Lines are written byte for byte (a `"\r"` before a line feed stays), and a line without a
    /// final line feed is followed by `\ No newline at end of file`. With `color`, file headers
    /// are bold, hunk headers cyan, removed lines red and added lines green (ANSI escapes, like
    /// `diff --color`); the escapes never split a line's text from its newline.
    public static func render(
        _ hunks: [DiffHunk], oldLabel: String, newLabel: String, color: Bool = false
    ) -> String {
        guard !hunks.isEmpty else { return "" }
        var out = ""
        out += paint("--- " + oldLabel, Style.bold, color) + "\n"
        out += paint("+++ " + newLabel, Style.bold, color) + "\n"
        for hunk in hunks {
            out += paint(header(hunk), Style.cyan, color) + "\n"
            for line in hunk.lines {
                switch line.kind {
                case .context:
                    out += " " + line.text
                case .removed:
                    out += paint("-" + line.text, Style.red, color)
                case .added:
                    out += paint("+" + line.text, Style.green, color)
                }
                out += "\n"
                if !line.hasNewline {
                    out += "\\ No newline at end of file\n"
                }
            }
        }
        return out
    }

    /// The `@@ -a,b +c,d @@` line of a hunk, with GNU's habit of leaving out a count of 1.
    public static func header(_ hunk: DiffHunk) -> String {
        "@@ -\(range(hunk.oldStart, hunk.oldCount)) +\(range(hunk.newStart, hunk.newCount)) @@"
    }

    private static func range(_ start: Int, _ count: Int) -> String {
        count == 1 ? "\(start)" : "\(start),\(count)"
    }

    private enum Style {
        static let bold = "\u{1B}[1m"
        static let red = "\u{1B}[31m"
        static let green = "\u{1B}[32m"
        static let cyan = "\u{1B}[36m"
        static let reset = "\u{1B}[0m"
    }

    private static func paint(_ text: String, _ style: String, _ enabled: Bool) -> String {
        enabled ? style + text + Style.reset : text
    }
}
