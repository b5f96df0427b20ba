/// A line of a revision together with the revision that last changed it.
public struct BlameLine: Sendable, Hashable, Codable {
    /// The line's content without its `"\n"` (any `"\r"` is kept).
    public var text: String
    /// Whether the line ended with `"\n"`.
    public var hasNewline: Bool
    /// Index, in the revisions passed to ``Blame``, of the revision that introduced the line in
    /// its current form.
    public var revision: Int

    /// Creates a blamed line.
    public init(text: String, hasNewline: Bool, revision: Int) {
        self.text = text
        self.hasNewline = hasNewline
        self.revision = revision
    }
}

/// Attributes each line of a text to the revision that introduced it, like `git blame`.
///
/// Each pair of consecutive revisions is diffed once and the attributions are carried forward
/// through the unchanged lines, so blaming a note with a thousand versions costs a thousand
/// small diffs, not a thousand diffs against the first version.
///
/// ```swift
/// let lines = Blame.attribute(["a\n", "a\nb\n", "A\nb\n"])
/// lines.map(\.revision)  // [2, 1]
/// ```
public enum Blame {
    /// Blames the last of `revisions` (oldest first). Returns `[]` for no revisions.
    public static func attribute(_ revisions: [String]) -> [BlameLine] {
        attribute(revisions, upTo: revisions.count - 1)
    }

    /// Blames `revisions[index]`, using only the revisions up to it. Returns `[]` when `index` is
    /// not a valid index of `revisions`.
    public static func attribute(_ revisions: [String], upTo index: Int) -> [BlameLine] {
        guard index >= 0 && index < revisions.count else { return [] }
        var interner = LineInterner()
        var lines = TextLines(revisions[0])
        var ids = interner.ids(of: lines)
        var owners = [Int](repeating: 0, count: ids.count)
        var revision = 1
        while revision <= index {
            let nextLines = TextLines(revisions[revision])
            let nextIDs = interner.ids(of: nextLines)
            let changes = MyersDiff.changes(old: ids, new: nextIDs, idCount: interner.count)
            owners = carry(owners, through: changes, to: revision)
            lines = nextLines
            ids = nextIDs
            revision += 1
        }
        return zip(lines, owners).map { line, owner in
            BlameLine(text: line.text, hasNewline: line.hasNewline, revision: owner)
        }
    }

    /// The owners of the new side: unchanged lines keep the owner of their old line, added lines
    /// belong to `revision`.
    static func carry(_ owners: [Int], through changes: LineChanges, to revision: Int) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(changes.added.count)
        var old = 0
        for added in changes.added {
            if added {
                result.append(revision)
                continue
            }
            while old < changes.removed.count && changes.removed[old] { old += 1 }
            // The edit script pairs every unchanged new line with an unchanged old line; the
            // fallback only guards against a broken script.
            result.append(old < owners.count ? owners[old] : revision)
            old += 1
        }
        return result
    }
}
