/// A three-way merge of texts by lines, as `diff3 -m` and `git merge-file` do it: the changes
/// each side made to a common ancestor are applied together; where both changed the same or
/// adjacent lines differently (or inserted different lines at the same place), both versions
/// are kept between conflict markers.
///
/// ```swift
/// let r = ThreeWayMerge.merge(base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n")
/// r.text        // "A\nb\nC\n"
/// r.conflicts   // 0
/// ```
public enum ThreeWayMerge {
    /// The merged text and how many conflicting regions it holds.
    public struct Result: Sendable, Equatable {
        public var text: String
        public var conflicts: Int
        public var isClean: Bool { conflicts == 0 }
        public init(text: String, conflicts: Int) {
            self.text = text
            self.conflicts = conflicts
        }
    }

    /// The labels written after the conflict markers.
    public struct Labels: Sendable, Equatable {
        public var ours: String
        public var theirs: String
        public init(ours: String, theirs: String) {
            self.ours = ours
            self.theirs = theirs
        }
    }

    /// Merges the changes from `base` to `ours` and from `base` to `theirs`.
    public static func merge(
        base: String, ours: String, theirs: String, labels: Labels = Labels(ours: "ours", theirs: "theirs")
    ) -> Result {
        if ours == theirs { return Result(text: ours, conflicts: 0) }
        if base == ours { return Result(text: theirs, conflicts: 0) }
        if base == theirs { return Result(text: ours, conflicts: 0) }
        let b = TextLines(base)
        let o = TextLines(ours)
        let t = TextLines(theirs)
        let changes = merged(LineDiff.changes(from: b, to: o).groups, LineDiff.changes(from: b, to: t).groups)
        let eol = lineEnding(base, ours, theirs)
        var out: [UInt8] = []
        out.reserveCapacity(max(o.bytes.count, t.bytes.count))
        var conflicts = 0
        var baseAt = 0
        // Offsets of each side's positions from the base's, after the changes already passed.
        var oursShift = 0
        var theirsShift = 0
        for region in changes {
            append(b, baseAt..<region.base.lowerBound, to: &out)
            let oursRange =
                (region.base.lowerBound + oursShift)..<(region.base.upperBound + oursShift + region.oursDelta)
            let theirsRange =
                (region.base.lowerBound + theirsShift)..<(region.base.upperBound + theirsShift + region.theirsDelta)
            oursShift += region.oursDelta
            theirsShift += region.theirsDelta
            baseAt = region.base.upperBound
            if !region.byTheirs {
                append(o, oursRange, to: &out)
            } else if !region.byOurs {
                append(t, theirsRange, to: &out)
            } else if o.slice(oursRange) == t.slice(theirsRange) {
                append(o, oursRange, to: &out)
            } else {
                conflicts += 1
                marker("<<<<<<< " + labels.ours, eol, to: &out)
                append(o, oursRange, to: &out)
                marker("=======", eol, to: &out)
                append(t, theirsRange, to: &out)
                marker(">>>>>>> " + labels.theirs, eol, to: &out)
            }
        }
        append(b, baseAt..<b.count, to: &out)
        return Result(text: String(decoding: out, as: UTF8.self), conflicts: conflicts)
    }

    /// ``merge(base:ours:theirs:labels:)``, but a conflicted result of more than `limit` bytes
    /// (markers repeat for each conflicting hunk, with their labels) is given as one conflict
    /// holding both sides whole when that is shorter: its size is both sides' and one set of
    /// markers, whatever the number of hunks.
    public static func merge(
        base: String, ours: String, theirs: String, labels: Labels = Labels(ours: "ours", theirs: "theirs"),
        limit: Int
    ) -> Result {
        let result = merge(base: base, ours: ours, theirs: theirs, labels: labels)
        guard !result.isClean, result.text.utf8.count > limit else { return result }
        let whole = conflict(ours: ours, theirs: theirs, labels: labels, lineEndingOf: base)
        guard whole.utf8.count < result.text.utf8.count else { return result }
        return Result(text: whole, conflicts: 1)
    }

    /// One conflict of `ours` and `theirs` whole, between markers labelled `labels`, their line
    /// ending that of the texts (and of `base`, when given).
    public static func conflict(ours: String, theirs: String, labels: Labels, lineEndingOf base: String = "")
        -> String
    {
        let eol = lineEnding(base, ours, theirs)
        var out: [UInt8] = []
        out.reserveCapacity(
            ours.utf8.count + theirs.utf8.count + labels.ours.utf8.count + labels.theirs.utf8.count + 32)
        marker("<<<<<<< " + labels.ours, eol, to: &out)
        out.append(contentsOf: ours.utf8)
        marker("=======", eol, to: &out)
        out.append(contentsOf: theirs.utf8)
        marker(">>>>>>> " + labels.theirs, eol, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A run of base lines that one side or both changed, with how many lines each side has
    /// there more than the base.
    struct Region {
        var base: Range<Int>
        var oursDelta = 0
        var theirsDelta = 0
        var byOurs = false
        var byTheirs = false
    }

    /// The changes of both sides in base order, those that overlap or touch joined in one region.
    /// Two insertions at one place, or an insertion at the edge of the other side's change, touch.
    static func merged(_ ours: [ChangeGroup], _ theirs: [ChangeGroup]) -> [Region] {
        var all: [(group: ChangeGroup, ours: Bool)] = ours.map { ($0, true) } + theirs.map { ($0, false) }
        all.sort { ($0.group.oldStart, $0.group.oldEnd) < ($1.group.oldStart, $1.group.oldEnd) }
        var regions: [Region] = []
        for (g, isOurs) in all {
            let range = g.oldStart..<g.oldEnd
            let delta = g.newCount - g.oldCount
            if var last = regions.last,
                touches(last.base, range, lastFromOtherSide: isOurs ? last.byTheirs : last.byOurs)
            {
                last.base = last.base.lowerBound..<max(last.base.upperBound, range.upperBound)
                if isOurs {
                    last.oursDelta += delta
                    last.byOurs = true
                } else {
                    last.theirsDelta += delta
                    last.byTheirs = true
                }
                regions[regions.count - 1] = last
            } else {
                var r = Region(base: range)
                if isOurs {
                    r.oursDelta = delta
                    r.byOurs = true
                } else {
                    r.theirsDelta = delta
                    r.byTheirs = true
                }
                regions.append(r)
            }
        }
        return regions
    }

    /// Whether a change at `next` joins the region `last` (which starts no later): when they
    /// overlap, or when they meet and the region holds a change of the other side. Changes of one
    /// side are apart by at least one common line, so they join only through the other side's;
    /// changes of adjacent lines conflict, as `git merge-file` has them, rather than being
    /// interleaved on a guess.
    private static func touches(_ last: Range<Int>, _ next: Range<Int>, lastFromOtherSide: Bool) -> Bool {
        if next.lowerBound < last.upperBound { return true }
        return lastFromOtherSide && next.lowerBound == last.upperBound
    }

    private static func append(_ lines: TextLines, _ range: Range<Int>, to out: inout [UInt8]) {
        guard !range.isEmpty else { return }
        let bytes = lines.ranges[range.lowerBound].lowerBound..<lines.ranges[range.upperBound - 1].upperBound
        out.append(contentsOf: lines.bytes[bytes])
    }

    private static func marker(_ text: String, _ eol: [UInt8], to out: inout [UInt8]) {
        if let last = out.last, last != UInt8(ascii: "\n") { out.append(contentsOf: eol) }
        out.append(contentsOf: text.utf8)
        out.append(contentsOf: eol)
    }

    /// The line ending of conflict markers: CRLF when each of the texts that has a line ending
    /// ends its first line so (and one does), else LF: a CRLF body's markers are CRLF, a mixed
    /// one's LF.
    private static func lineEnding(_ texts: String...) -> [UInt8] {
        var crlf = false
        for text in texts {
            let bytes = text.utf8
            guard let lf = bytes.firstIndex(of: UInt8(ascii: "\n")) else { continue }
            guard lf > bytes.startIndex, bytes[bytes.index(before: lf)] == UInt8(ascii: "\r") else { return [0x0A] }
            crlf = true
        }
        return crlf ? [0x0D, 0x0A] : [0x0A]
    }
}

extension TextLines {
    /// The bytes of the lines in `range`.
    fileprivate func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        guard !range.isEmpty else { return [] }
        return bytes[ranges[range.lowerBound].lowerBound..<ranges[range.upperBound - 1].upperBound]
    }
}
