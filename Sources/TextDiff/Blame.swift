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
        var attributor = Attributor(revisions[0])
        for revision in revisions[1..<(index + 1)] { attributor.add(revision) }
        return attributor.lines
    }

    /// The same, a revision at a time: only the last revision's lines, their owners and the
    /// lines met so far are held, not every revision (the blame of a 4.4 MB note with 61
    /// versions held them all, 300 MB).
    public struct Attributor {
        private var interner: LineInterner
        private var current: TextLines
        private var ids: [Int]
        private var owners: [Int]
        /// The index of the last revision added (0 for the first).
        public private(set) var revision = 0

        /// Starts with the first revision: every line is its own.
        public init(_ first: String) {
            var interner = LineInterner()
            current = TextLines(first)
            ids = interner.ids(of: current)
            owners = [Int](repeating: 0, count: ids.count)
            self.interner = interner
        }

        /// Adds the next revision: its unchanged lines keep their owners, the others are its own.
        public mutating func add(_ next: String) {
            revision += 1
            let nextLines = TextLines(next)
            let nextIDs = interner.ids(of: nextLines)
            let changes = MyersDiff.changes(old: ids, new: nextIDs, idCount: interner.count)
            owners = Blame.carry(owners, through: changes, to: revision)
            current = nextLines
            ids = nextIDs
        }

        /// The lines of the last revision added, each with the revision that introduced it.
        public var lines: [BlameLine] {
            zip(current, owners).map { line, owner in
                BlameLine(text: line.text, hasNewline: line.hasNewline, revision: owner)
            }
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
