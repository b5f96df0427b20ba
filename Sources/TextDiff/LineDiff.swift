#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line of a text: its bytes without the line feed, and whether a line feed ended it.
///
/// A carriage return before the line feed stays part of `text`, so `"a\r\n"` is the line `"a\r"`
/// with a newline and texts with CRLF endings round-trip byte for byte.
public struct TextLine: Sendable, Hashable, Codable {
    /// The line's content, without the terminating `"\n"` (but with any `"\r"`).
    public var text: String
    /// Whether the line ended with `"\n"`; only the last line of a text can lack one.
    public var hasNewline: Bool

    /// Creates a line from its content and whether a line feed ends it.
    public init(text: String, hasNewline: Bool) {
        self.text = text
        self.hasNewline = hasNewline
    }
}

/// A text split into lines at `"\n"` bytes, as `diff` sees it.
///
/// Lines compare by their UTF-8 bytes, not by Unicode canonical equivalence: a diff has to show a
/// change from a precomposed `"é"` to a decomposed one, because the stored bytes differ.
///
/// ```swift
/// let lines = TextLines("one\r\ntwo")
/// lines.count            // 2
/// lines[0].text          // "one\r"
/// lines[1].hasNewline    // false
/// ```
public struct TextLines: Sendable, Equatable, RandomAccessCollection {
    /// The text's UTF-8 bytes.
    let bytes: [UInt8]
    /// Byte range of each line, including its `"\n"` when it has one.
    let ranges: [Range<Int>]

    /// Splits `text` into lines. The empty text has no lines; a final line without a line feed
    /// is still a line.
    public init(_ text: String) {
        let bytes = Array(text.utf8)
        var ranges: [Range<Int>] = []
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            // memchr keeps splitting fast even in unoptimised (debug and test) builds.
            while start < buffer.count,
                let found = memchr(base + start, Int32(UInt8(ascii: "\n")), buffer.count - start)
            {
                let end = base.distance(to: UnsafeRawPointer(found)) + 1
                ranges.append(start..<end)
                start = end
            }
            if start < buffer.count {
                ranges.append(start..<buffer.count)
            }
        }
        self.bytes = bytes
        self.ranges = ranges
    }

    /// The first line's index, always 0.
    public var startIndex: Int { 0 }
    /// One past the last line's index: the number of lines.
    public var endIndex: Int { ranges.count }

    /// The line at `index`, which must be in `indices`.
    public subscript(index: Int) -> TextLine {
        let range = ranges[index]
        let hasNewline = bytes[range.upperBound - 1] == UInt8(ascii: "\n")
        let end = hasNewline ? range.upperBound - 1 : range.upperBound
        return TextLine(
            text: String(decoding: bytes[range.lowerBound..<end], as: UTF8.self),
            hasNewline: hasNewline
        )
    }

    /// The bytes of line `index` including its line feed: the identity a diff compares.
    func key(_ index: Int) -> LineKey {
        LineKey(bytes: bytes[ranges[index]])
    }

    /// Whether both texts have exactly the same bytes.
    public static func == (lhs: TextLines, rhs: TextLines) -> Bool {
        lhs.bytes == rhs.bytes
    }
}

/// A line's bytes as a dictionary key, hashed in one call over contiguous memory.
struct LineKey: Hashable {
    let bytes: ArraySlice<UInt8>

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: LineKey, rhs: LineKey) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count else { return false }
        return lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in
                guard let l = left.baseAddress, let r = right.baseAddress else { return true }
                return memcmp(l, r, left.count) == 0
            }
        }
    }
}

/// Gives equal lines equal small integers, so the diff compares integers instead of bytes.
///
/// One interner can serve many texts (blame interns every revision once).
struct LineInterner {
    private var ids: [LineKey: Int] = [:]
    /// Whether a new line's bytes are copied into the table. An interner that outlives the texts
    /// it saw (blame's) copies, so as not to keep each whole text alive; one used for a single
    /// diff of two texts that live as long as it does not.
    private var copiesLines = true

    init() {}

    /// An interner for one diff of texts that outlive it: lines not copied, and the table sized
    /// for `lines` lines at once. Growing it and copying each line was half the time of the
    /// `history` of a 5.8 MB note (2026-12-07).
    init(borrowingLinesOf lines: Int) {
        copiesLines = false
        ids.reserveCapacity(lines)
    }

    /// The number of distinct lines seen; ids are `0..<count`.
    var count: Int { ids.count }

    mutating func ids(of lines: TextLines) -> [Int] { ids(of: lines, lines.indices) }

    /// The ids of the lines `range` of `lines`.
    mutating func ids(of lines: TextLines, _ range: Range<Int>) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(range.count)
        for index in range {
            let key = lines.key(index)
            if let id = ids[key] {
                result.append(id)
            } else {
                let id = ids.count
                // Copy the line so the table does not keep the whole text's buffer alive.
                ids[copiesLines ? LineKey(bytes: ArraySlice(Array(key.bytes))) : key] = id
                result.append(id)
            }
        }
        return result
    }
}

/// Which lines of the old side are removed and which lines of the new side are added.
///
/// Every line not marked is common to both sides, and the unmarked lines of both sides are equal
/// in order: this is a complete edit script.
struct LineChanges: Sendable {
    var removed: [Bool]
    var added: [Bool]

    /// Number of removed and added lines.
    var stat: DiffStat {
        DiffStat(
            added: added.reduce(0) { $1 ? $0 + 1 : $0 },
            removed: removed.reduce(0) { $1 ? $0 + 1 : $0 }
        )
    }

    /// Maximal runs of changed lines with their 0-based positions on both sides.
    var groups: [ChangeGroup] {
        var groups: [ChangeGroup] = []
        var old = 0
        var new = 0
        while old < removed.count || new < added.count {
            let oldChanged = old < removed.count && removed[old]
            let newChanged = new < added.count && added[new]
            if !oldChanged && !newChanged {
                old += 1
                new += 1
                continue
            }
            let group = (old: old, new: new)
            while old < removed.count && removed[old] { old += 1 }
            while new < added.count && added[new] { new += 1 }
            groups.append(
                ChangeGroup(
                    oldStart: group.old, oldCount: old - group.old,
                    newStart: group.new, newCount: new - group.new
                ))
        }
        return groups
    }
}

/// A run of removed lines replaced by a run of added lines (either may be empty, not both).
struct ChangeGroup: Sendable, Equatable {
    var oldStart: Int
    var oldCount: Int
    var newStart: Int
    var newCount: Int

    var oldEnd: Int { oldStart + oldCount }
    var newEnd: Int { newStart + newCount }
}

/// Numbers of added and removed lines between two texts, as in `body +12 -3 lines`.
public struct DiffStat: Sendable, Hashable, Codable {
    /// Lines present only in the new text.
    public var added: Int
    /// Lines present only in the old text.
    public var removed: Int

    /// Creates a stat from its counts.
    public init(added: Int, removed: Int) {
        self.added = added
        self.removed = removed
    }
}

/// One line of a hunk.
public struct DiffLine: Sendable, Hashable, Codable {
    /// How a line takes part in a hunk; the raw value names it in JSON.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Unchanged, shown for orientation (`" "` in a unified diff).
        case context
        /// Only in the new text (`"+"`).
        case added
        /// Only in the old text (`"-"`).
        case removed
    }

    /// How this line takes part in the hunk.
    public var kind: Kind
    /// The line's content without its `"\n"` (any `"\r"` is kept).
    public var text: String
    /// Whether the line ended with `"\n"`; when not, a unified diff says
    /// `\ No newline at end of file` after it.
    public var hasNewline: Bool

    /// Creates a hunk line.
    public init(kind: Kind, text: String, hasNewline: Bool) {
        self.kind = kind
        self.text = text
        self.hasNewline = hasNewline
    }
}

/// A group of nearby changes with their surrounding context, as in a unified diff.
///
/// The numbers follow the `@@ -oldStart,oldCount +newStart,newCount @@` header of GNU `diff -u`:
/// starts are 1-based, except that an empty range (count 0) names the line *before* it (0 at the
/// top of the file), which is what `patch` expects.
public struct DiffHunk: Sendable, Hashable, Codable {
    /// First old line of the hunk (1-based), or the line before an empty range.
    public var oldStart: Int
    /// Number of context and removed lines.
    public var oldCount: Int
    /// First new line of the hunk (1-based), or the line before an empty range.
    public var newStart: Int
    /// Number of context and added lines.
    public var newCount: Int
    /// Context, removed and added lines in diff order.
    public var lines: [DiffLine]

    /// Creates a hunk from header numbers and lines.
    public init(oldStart: Int, oldCount: Int, newStart: Int, newCount: Int, lines: [DiffLine]) {
        self.oldStart = oldStart
        self.oldCount = oldCount
        self.newStart = newStart
        self.newCount = newCount
        self.lines = lines
    }
}

/// Line-by-line comparison of two texts with GNU `diff -u` semantics.
///
/// The diff is minimal (Myers' algorithm in linear space, as in GNU diff) unless the texts are
/// so different that the search would take too long; then, like GNU diff, it settles for a
/// correct but possibly longer edit script.
///
/// ```swift
/// let hunks = LineDiff.hunks(from: "a\nb\n", to: "a\nc\n")
/// // [@@ -1,2 +1,2 @@  " a", "-b", "+c"]
/// LineDiff.stat(from: "a\nb\n", to: "a\nc\n")  // DiffStat(added: 1, removed: 1)
/// ```
public enum LineDiff {
    /// The hunks that turn `old` into `new`, each with up to `context` unchanged lines around its
    /// changes; hunks whose context would touch or overlap are merged. Identical texts give `[]`.
    public static func hunks(from old: String, to new: String, context: Int = 3) -> [DiffHunk] {
        let oldLines = TextLines(old)
        let newLines = TextLines(new)
        return hunks(from: oldLines, to: newLines, context: context)
    }

    /// The hunks between two already split texts; see the `String` overload.
    public static func hunks(from old: TextLines, to new: TextLines, context: Int = 3) -> [DiffHunk] {
        let changes = changes(from: old, to: new)
        return hunks(old: old, new: new, groups: changes.groups, context: max(0, context))
    }

    /// How many lines `new` adds to and removes from `old`.
    ///
    /// The lines both texts start and end with are left out of the search: some longest common
    /// subsequence always holds them, so the counts are those of the whole texts' shortest edit
    /// script (any shortest script has the same counts; past the cost limit, where the search
    /// settles for a longer script, the two may differ). A note's `history` counts every
    /// version's lines against the one before, which mostly differ by a few lines: interning
    /// every line of both texts was 70% of the `history` of a 50 KB proposal's 59 versions.
    public static func stat(from old: String, to new: String) -> DiffStat {
        let (a, b) = (TextLines(old), TextLines(new))
        var head = 0
        while head < a.count && head < b.count && a.key(head) == b.key(head) { head += 1 }
        var (endA, endB) = (a.count, b.count)
        while endA > head && endB > head && a.key(endA - 1) == b.key(endB - 1) {
            endA -= 1
            endB -= 1
        }
        if head == endA || head == endB { return DiffStat(added: endB - head, removed: endA - head) }
        var interner = LineInterner(borrowingLinesOf: (endA - head) + (endB - head))
        let oldIDs = interner.ids(of: a, head..<endA)
        let newIDs = interner.ids(of: b, head..<endB)
        return MyersDiff.changes(old: oldIDs, new: newIDs, idCount: interner.count).stat
    }

    static func changes(from old: TextLines, to new: TextLines) -> LineChanges {
        var interner = LineInterner(borrowingLinesOf: old.count + new.count)
        let oldIDs = interner.ids(of: old)
        let newIDs = interner.ids(of: new)
        return MyersDiff.changes(old: oldIDs, new: newIDs, idCount: interner.count)
    }

    private static func hunks(
        old: TextLines, new: TextLines, groups: [ChangeGroup], context: Int
    ) -> [DiffHunk] {
        // GNU diff joins two changes when at most 2 * context unchanged lines separate them.
        let joinGap = context > Int.max / 2 ? Int.max : 2 * context
        var hunks: [DiffHunk] = []
        var first = 0
        while first < groups.count {
            var last = first
            while last + 1 < groups.count,
                groups[last + 1].oldStart - groups[last].oldEnd <= joinGap
            {
                last += 1
            }
            hunks.append(
                hunk(old: old, new: new, groups: groups[first...last], context: context))
            first = last + 1
        }
        return hunks
    }

    private static func hunk(
        old: TextLines, new: TextLines, groups: ArraySlice<ChangeGroup>, context: Int
    ) -> DiffHunk {
        guard let firstGroup = groups.first, let lastGroup = groups.last else {
            return DiffHunk(oldStart: 0, oldCount: 0, newStart: 0, newCount: 0, lines: [])
        }
        // Lines before the first change and after the last one are unchanged, and the same
        // number of them lie on both sides.
        let leading = min(context, firstGroup.oldStart)
        let trailing = min(context, old.count - lastGroup.oldEnd)
        var oldIndex = firstGroup.oldStart - leading
        var newIndex = firstGroup.newStart - leading
        let oldBegin = oldIndex
        let newBegin = newIndex
        var lines: [DiffLine] = []

        func appendContext(upTo oldEnd: Int) {
            while oldIndex < oldEnd {
                let line = old[oldIndex]
                lines.append(DiffLine(kind: .context, text: line.text, hasNewline: line.hasNewline))
                oldIndex += 1
                newIndex += 1
            }
        }

        for group in groups {
            appendContext(upTo: group.oldStart)
            for index in group.oldStart..<group.oldEnd {
                let line = old[index]
                lines.append(DiffLine(kind: .removed, text: line.text, hasNewline: line.hasNewline))
            }
            for index in group.newStart..<group.newEnd {
                let line = new[index]
                lines.append(DiffLine(kind: .added, text: line.text, hasNewline: line.hasNewline))
            }
            oldIndex = group.oldEnd
            newIndex = group.newEnd
        }
        appendContext(upTo: lastGroup.oldEnd + trailing)

        let oldCount = oldIndex - oldBegin
        let newCount = newIndex - newBegin
        return DiffHunk(
            oldStart: oldCount == 0 ? oldBegin : oldBegin + 1,
            oldCount: oldCount,
            newStart: newCount == 0 ? newBegin : newBegin + 1,
            newCount: newCount,
            lines: lines
        )
    }
}

/// Myers' O((N+M)D) difference algorithm in linear space, after GNU diffutils' `diffseq.h`.
///
/// It lives with ``LineDiff`` because nothing else should call it: it works on interned line ids.
enum MyersDiff {
    /// Marks the removed and added lines of a shortest edit script from `old` to `new`, with
    /// change runs slid into the canonical place GNU diff chooses. `idCount` bounds the ids;
    /// `costLimit` overrides the cost after which the search settles for a non-minimal script
    /// (tests lower it to exercise that path on small inputs).
    static func changes(
        old: [Int], new: [Int], idCount: Int, costLimit: Int? = nil
    ) -> LineChanges {
        var result = LineChanges(
            removed: [Bool](repeating: false, count: old.count),
            added: [Bool](repeating: false, count: new.count)
        )
        // A line with no equal line on the other side cannot be part of a longest common
        // subsequence, so leaving such lines out of the search keeps the diff minimal and makes
        // unrelated texts cost nothing.
        var inOld = [Bool](repeating: false, count: idCount)
        var inNew = [Bool](repeating: false, count: idCount)
        for id in old where id >= 0 && id < idCount { inOld[id] = true }
        for id in new where id >= 0 && id < idCount { inNew[id] = true }
        var oldKept: [Int] = []
        var oldIndex: [Int] = []
        for (index, id) in old.enumerated() {
            if id >= 0 && id < idCount && inNew[id] {
                oldKept.append(id)
                oldIndex.append(index)
            } else {
                result.removed[index] = true
            }
        }
        var newKept: [Int] = []
        var newIndex: [Int] = []
        for (index, id) in new.enumerated() {
            if id >= 0 && id < idCount && inOld[id] {
                newKept.append(id)
                newIndex.append(index)
            } else {
                result.added[index] = true
            }
        }

        var search = Search(a: oldKept, b: newKept, costLimit: costLimit)
        search.run()
        for (kept, index) in oldIndex.enumerated() where search.removed[kept] {
            result.removed[index] = true
        }
        for (kept, index) in newIndex.enumerated() where search.added[kept] {
            result.added[index] = true
        }

        shiftBoundaries(ids: old, changed: &result.removed, other: result.added)
        shiftBoundaries(ids: new, changed: &result.added, other: result.removed)
        return result
    }

    /// The middle-snake search over two id sequences.
    private struct Search {
        let a: [Int]
        let b: [Int]
        var removed: [Bool]
        var added: [Bool]
        /// Furthest x reached on each diagonal `x - y`, forward and backward, offset by
        /// `diagonalOffset` so diagonal `-b.count - 1` is index 0.
        var forward: [Int]
        var backward: [Int]
        let diagonalOffset: Int
        /// Cost after which a partition is accepted even if not provably optimal: GNU diff's
        /// `too_expensive`, about the square root of the input size but at least 4096.
        let tooExpensive: Int

        init(a: [Int], b: [Int], costLimit: Int?) {
            self.a = a
            self.b = b
            removed = [Bool](repeating: false, count: a.count)
            added = [Bool](repeating: false, count: b.count)
            let diagonals = a.count + b.count + 3
            forward = [Int](repeating: 0, count: diagonals)
            backward = [Int](repeating: 0, count: diagonals)
            diagonalOffset = b.count + 1
            var limit = 1
            var remaining = diagonals
            while remaining != 0 {
                limit <<= 1
                remaining >>= 2
            }
            tooExpensive = costLimit.map { max(1, $0) } ?? max(4096, limit)
        }

        private struct Partition {
            var xMid: Int
            var yMid: Int
            var loMinimal: Bool
            var hiMinimal: Bool
        }

        private struct Range4 {
            var xOff: Int
            var xLim: Int
            var yOff: Int
            var yLim: Int
            var minimal: Bool
        }

        /// Compares the whole sequences. An explicit stack instead of recursion keeps deep
        /// partitions of large inputs from exhausting the thread's stack.
        mutating func run() {
            var stack = [Range4(xOff: 0, xLim: a.count, yOff: 0, yLim: b.count, minimal: false)]
            while var r = stack.popLast() {
                while r.xOff < r.xLim && r.yOff < r.yLim && a[r.xOff] == b[r.yOff] {
                    r.xOff += 1
                    r.yOff += 1
                }
                while r.xOff < r.xLim && r.yOff < r.yLim && a[r.xLim - 1] == b[r.yLim - 1] {
                    r.xLim -= 1
                    r.yLim -= 1
                }
                if r.xOff == r.xLim {
                    for y in r.yOff..<r.yLim { added[y] = true }
                } else if r.yOff == r.yLim {
                    for x in r.xOff..<r.xLim { removed[x] = true }
                } else {
                    let part = partition(r)
                    stack.append(
                        Range4(
                            xOff: part.xMid, xLim: r.xLim, yOff: part.yMid, yLim: r.yLim,
                            minimal: part.hiMinimal))
                    stack.append(
                        Range4(
                            xOff: r.xOff, xLim: part.xMid, yOff: r.yOff, yLim: part.yMid,
                            minimal: part.loMinimal))
                }
            }
        }

        /// Finds the midpoint of a shortest edit script of the range (GNU `diag`).
        private mutating func partition(_ r: Range4) -> Partition {
            let off = diagonalOffset
            let dMin = r.xOff - r.yLim
            let dMax = r.xLim - r.yOff
            let fMid = r.xOff - r.yOff
            let bMid = r.xLim - r.yLim
            var fMin = fMid
            var fMax = fMid
            var bMin = bMid
            var bMax = bMid
            let odd = (fMid - bMid) & 1 != 0

            forward[fMid + off] = r.xOff
            backward[bMid + off] = r.xLim

            var cost = 1
            while true {
                if fMin > dMin {
                    fMin -= 1
                    forward[fMin - 1 + off] = -1
                } else {
                    fMin += 1
                }
                if fMax < dMax {
                    fMax += 1
                    forward[fMax + 1 + off] = -1
                } else {
                    fMax -= 1
                }
                var d = fMax
                while d >= fMin {
                    let low = forward[d - 1 + off]
                    let high = forward[d + 1 + off]
                    var x = low < high ? high : low + 1
                    var y = x - d
                    while x < r.xLim && y < r.yLim && a[x] == b[y] {
                        x += 1
                        y += 1
                    }
                    forward[d + off] = x
                    if odd && bMin <= d && d <= bMax && backward[d + off] <= x {
                        return Partition(xMid: x, yMid: y, loMinimal: true, hiMinimal: true)
                    }
                    d -= 2
                }

                if bMin > dMin {
                    bMin -= 1
                    backward[bMin - 1 + off] = Int.max
                } else {
                    bMin += 1
                }
                if bMax < dMax {
                    bMax += 1
                    backward[bMax + 1 + off] = Int.max
                } else {
                    bMax -= 1
                }
                d = bMax
                while d >= bMin {
                    let low = backward[d - 1 + off]
                    let high = backward[d + 1 + off]
                    var x = low < high ? low : high - 1
                    var y = x - d
                    while r.xOff < x && r.yOff < y && a[x - 1] == b[y - 1] {
                        x -= 1
                        y -= 1
                    }
                    backward[d + off] = x
                    if !odd && fMin <= d && d <= fMax && x <= forward[d + off] {
                        return Partition(xMid: x, yMid: y, loMinimal: true, hiMinimal: true)
                    }
                    d -= 2
                }

                if !r.minimal && cost >= tooExpensive {
                    return bestEffort(r, fMin: fMin, fMax: fMax, bMin: bMin, bMax: bMax)
                }
                cost += 1
            }
        }

        /// Gives up on optimality: splits at whichever search got further (GNU's heuristic).
        private func bestEffort(_ r: Range4, fMin: Int, fMax: Int, bMin: Int, bMax: Int)
            -> Partition
        {
            let off = diagonalOffset
            var fxyBest = -1
            var fxBest = r.xOff
            var d = fMax
            while d >= fMin {
                var x = min(forward[d + off], r.xLim)
                var y = x - d
                if r.yLim < y {
                    x = r.yLim + d
                    y = r.yLim
                }
                if fxyBest < x + y {
                    fxyBest = x + y
                    fxBest = x
                }
                d -= 2
            }
            var bxyBest = Int.max
            var bxBest = r.xLim
            d = bMax
            while d >= bMin {
                var x = max(r.xOff, backward[d + off])
                var y = x - d
                if y < r.yOff {
                    x = r.yOff + d
                    y = r.yOff
                }
                if x + y < bxyBest {
                    bxyBest = x + y
                    bxBest = x
                }
                d -= 2
            }
            if (r.xLim + r.yLim) - bxyBest < fxyBest - (r.xOff + r.yOff) {
                return Partition(
                    xMid: fxBest, yMid: fxyBest - fxBest, loMinimal: true, hiMinimal: false)
            }
            return Partition(
                xMid: bxBest, yMid: bxyBest - bxBest, loMinimal: false, hiMinimal: true)
        }
    }

    /// Slides each run of changed lines to a canonical place (GNU diff's `shift_boundaries`):
    /// as far down as equal lines allow, merging with neighbouring runs, then back up to line
    /// up with a run of changes on the other side. This turns the arbitrary choice between
    /// equally short scripts into the one people expect, e.g. a function added after another
    /// shows as added lines ending at its closing brace, not starting in the middle.
    static func shiftBoundaries(ids: [Int], changed: inout [Bool], other: [Bool]) {
        let end = changed.count
        // Out-of-range positions read as unchanged, like GNU's sentinel entries.
        func isChanged(_ i: Int) -> Bool { i >= 0 && i < end && changed[i] }
        func isOtherChanged(_ j: Int) -> Bool { j >= 0 && j < other.count && other[j] }

        var i = 0
        var j = 0
        while true {
            while i < end && !isChanged(i) {
                while isOtherChanged(j) { j += 1 }
                j += 1
                i += 1
            }
            if i == end { break }
            var start = i
            i += 1
            while isChanged(i) { i += 1 }
            while isOtherChanged(j) { j += 1 }

            var runLength = 0
            var corresponding = end
            repeat {
                runLength = i - start
                // Move the run up while the line above equals its last line.
                while start > 0 && ids[start - 1] == ids[i - 1] {
                    start -= 1
                    changed[start] = true
                    i -= 1
                    changed[i] = false
                    while isChanged(start - 1) { start -= 1 }
                    j -= 1
                    while isOtherChanged(j) { j -= 1 }
                }
                corresponding = isOtherChanged(j - 1) ? i : end
                // Then down while the line below equals its first line.
                while i != end && ids[start] == ids[i] {
                    changed[start] = false
                    start += 1
                    changed[i] = true
                    i += 1
                    while isChanged(i) { i += 1 }
                    j += 1
                    while isOtherChanged(j) {
                        corresponding = i
                        j += 1
                    }
                }
            } while runLength != i - start

            while corresponding < i && start > 0 {
                start -= 1
                changed[start] = true
                i -= 1
                changed[i] = false
                j -= 1
                while isOtherChanged(j) { j -= 1 }
            }
        }
    }
}
