/// What a Markdown body holds as code or comment, where neither `#tags` nor `[[links]]` are
/// found: the one rule the tag scanner of Markdown import (`MarkdownNote.inlineTags`) and the
/// link parser (``WikiLink/parse(_:)``) share. Fenced blocks of the top level, indented code
/// blocks, fenced blocks of a list item (indented as deep as the item) or of a block quote
/// (`> ````, an Obsidian callout's code), and HTML comments (`<!-- ... -->`, over lines too).
package enum MarkdownCode {
    /// What a scan of a body's lines carries from one line to the next: whether an HTML comment
    /// is open, and whether an inline code span is (one a backtick run opened on an earlier line
    /// of the paragraph, which a run as long on a later line of it closes).
    package struct LineState {
        /// An HTML comment is open (where the line starts, while the scan has not passed it).
        package var inComment = false
        /// The length of the backtick run of a code span open where the line starts, if any.
        fileprivate var openSpan: Int?
        /// Where the paragraph of the line that opened ``openSpan`` is: what ends it.
        fileprivate var openParagraph = Paragraph()
        /// Where the paragraph of the line being read is.
        fileprivate var lineParagraph = Paragraph()
        /// The body's bytes: where a run that no later run of the line closes looks for its
        /// closing run on the paragraph's next lines.
        fileprivate let bytes: [UInt8]
        /// For a run length (and where the paragraph is), the offset of a paragraph's end before
        /// which no run of that length starts after the last place looked from: each paragraph is
        /// searched once per length.
        private var noCloserBefore: [CloserKey: Int] = [:]

        private struct CloserKey: Hashable {
            var count: Int
            var paragraph: Paragraph
        }

        fileprivate init(bytes: [UInt8]) { self.bytes = bytes }

        /// Whether the line starts inside a code span opened on an earlier line.
        package var startsInCodeSpan: Bool { openSpan != nil }

        /// Whether a run of exactly `count` backticks starts on a line after the one ending at
        /// `lineEnd`, before the paragraph (where `paragraph` tells) ends: see
        /// ``IndentedBlocks/endsParagraph(_:_:)``, or the end of the body.
        fileprivate mutating func closesLater(_ count: Int, after lineEnd: Int, paragraph: Paragraph) -> Bool {
            let key = CloserKey(count: count, paragraph: paragraph)
            if let end = noCloserBefore[key], lineEnd < end { return false }
            var p = lineEnd
            while p < bytes.count, bytes[p] != 0x0A { p += 1 }
            while p < bytes.count {
                let start = p + 1
                var end = start
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                let line = bytes[start..<end]
                if IndentedBlocks.endsParagraph(line, paragraph) {
                    noCloserBefore[key] = start
                    return false
                }
                var k = start
                while let run = MarkdownCode.nextBacktickRun(line, from: &k) {
                    if run.count == count { return true }
                }
                p = end
            }
            noCloserBefore[key] = bytes.count
            return false
        }
    }

    /// Calls `body` with each line of `bytes` that is not code (without its line feed, or a
    /// carriage return before it), the line's number from 0, and what is open where the line
    /// starts (an HTML comment, a code span of lines before); `body` leaves that state as the
    /// line leaves it (its scan steps over comments and code spans with
    /// ``stepOverCode(_:at:state:spans:)`` from the line's start, and reads every line that holds
    /// a backtick or starts in a span).
    package static func forEachTextLine(_ bytes: [UInt8], _ body: (ArraySlice<UInt8>, Int, inout LineState) -> Void) {
        var state = LineState(bytes: bytes)
        var blocks = IndentedBlocks()
        var last = -1
        WikiLink.forEachLineOutsideFences(bytes) { line, index in
            // A span goes on only over the paragraph's next line.
            if index != last + 1
                || (state.openSpan != nil && IndentedBlocks.endsParagraph(line, state.openParagraph))
            {
                state.openSpan = nil
            }
            last = index
            if blocks.isCode(line, index: index, inComment: state.inComment) {
                state.openSpan = nil
                return
            }
            let quotes = IndentedBlocks.quoteMarkers(line).depth
            state.lineParagraph = Paragraph(quotes: quotes, column: quotes == 0 ? blocks.itemColumn : 0)
            body(line, index, &state)
        }
    }

    /// Steps over what is code or comment at `k` of a line: in a code span a line before opened,
    /// to the byte after its closing run (or the line's end); in an HTML comment
    /// (`state.inComment`), to the byte after its `-->` or else the next byte; at a `<!--`, into
    /// it; at a backtick, past the inline code span it opens (``CodeSpans``, made from the line
    /// when first needed), to the line's end when the run that closes it is on a later line of
    /// the paragraph. False, with nothing moved, at any other byte. A scan calls it at each byte
    /// it would read, from the line's start, so that no `<!--` in a code span opens a comment and
    /// no backtick in a comment opens a span (before 2026-12-07 a span over two lines was
    /// backticks, and a `<!--` in its second line hid every tag and link after it).
    @inline(__always)
    package static func stepOverCode(
        _ b: ArraySlice<UInt8>, at k: inout Int, state: inout LineState, spans: inout CodeSpans?
    ) -> Bool {
        if let open = state.openSpan {
            // At the line's start: past the first run as long, which closes the span.
            var p = b.startIndex
            k = b.endIndex
            while let run = nextBacktickRun(b, from: &p) {
                if run.count == open {
                    k = p
                    state.openSpan = nil
                    break
                }
            }
            return true
        }
        if stepComment(b, at: &k, inComment: &state.inComment) { return true }
        guard b[k] == 0x60 else { return false }
        if spans == nil { spans = CodeSpans(b) }
        if let unclosed = spans?.skip(at: &k),
            state.closesLater(unclosed, after: b.endIndex, paragraph: state.lineParagraph)
        {
            state.openSpan = unclosed
            state.openParagraph = state.lineParagraph
            k = b.endIndex
        }
        return true
    }

    /// The next run of backticks in `b` at or after `p`: where it starts and how long it is,
    /// with `p` moved past it; nil (and `p` at the end) when there is none.
    @inline(__always)
    static func nextBacktickRun(_ b: ArraySlice<UInt8>, from p: inout Int) -> (start: Int, count: Int)? {
        while p < b.endIndex, b[p] != 0x60 { p += 1 }
        guard p < b.endIndex else { return nil }
        let start = p
        while p < b.endIndex, b[p] == 0x60 { p += 1 }
        return (start, p - start)
    }

    @inline(__always)
    private static func stepComment(_ b: ArraySlice<UInt8>, at k: inout Int, inComment: inout Bool) -> Bool {
        if inComment {
            if b[k] == 0x2D, k + 2 < b.endIndex, b[k + 1] == 0x2D, b[k + 2] == 0x3E {
                inComment = false
                k += 3
            } else {
                k += 1
            }
            return true
        }
        guard b[k] == 0x3C, k + 3 < b.endIndex, b[k + 1] == 0x21, b[k + 2] == 0x2D, b[k + 3] == 0x2D else {
            return false
        }
        inComment = true
        k += 4
        return true
    }
}

/// The inline code spans of one line, as CommonMark reads them: a run of backticks opens a span
/// that the next run of the same length closes, and a run that none closes is backticks. Part of
/// ``MarkdownCode``: before 2026-12-06 the `#tag` scanner took each backtick for an edge of a
/// span, so that ``` ``<!--`` ``` opened a comment that hid every tag after it. Each run's
/// closing run is found once, so a line of many unmatched runs stays linear.
package struct CodeSpans {
    private var runs: [(start: Int, count: Int)] = []
    /// The index in `runs` of the run that closes each run, or -1.
    private var closing: [Int] = []
    /// The first run not passed yet.
    private var next = 0

    init(_ line: ArraySlice<UInt8>) {
        var p = line.startIndex
        while let run = MarkdownCode.nextBacktickRun(line, from: &p) { runs.append(run) }
        closing = [Int](repeating: -1, count: runs.count)
        var nextOfLength: [Int: Int] = [:]
        for r in runs.indices.reversed() {
            closing[r] = nextOfLength[runs[r].count] ?? -1
            nextOfLength[runs[r].count] = r
        }
    }

    /// At a backtick `k` of the line (a scan reads it from its start, in order): moves `k` past
    /// the span that starts there, its closing run included, or past the run when none of the
    /// line closes it, and then returns the run's length (a later line may close it).
    mutating func skip(at k: inout Int) -> Int? {
        while next < runs.count, runs[next].start + runs[next].count <= k { next += 1 }
        guard next < runs.count else {
            k += 1
            return nil
        }
        let c = closing[next]
        k = c >= 0 ? runs[c].start + runs[c].count : runs[next].start + runs[next].count
        return c >= 0 ? nil : runs[next].count
    }
}

/// Where a paragraph is, as far as what ends it goes: in how many block quotes, and at which
/// column the text of the list item it is in starts (0 outside lists, and in quotes).
struct Paragraph: Hashable {
    var quotes = 0
    var column = 0
}

/// What tells the lines of a body's indented code blocks, and of the fenced blocks of its
/// list items, from text indented as a list's or a paragraph's: fed each line outside the
/// fences of the top level (``WikiLink/forEachLineOutsideFences(_:_:)``), in order. Part of
/// ``MarkdownCode``: the one place the `#tag` scanner and the `[[link]]` parser learn what is code.
struct IndentedBlocks {
    /// The line before was text a line may continue (a paragraph's, a list item's).
    private var afterText = false
    /// The line before was blank (or the body starts).
    private var afterBlank = true
    /// In a list: from a line starting with a list marker to a line less indented than its
    /// text after a blank line, a fenced block or a heading.
    private var inList = false
    /// The last line was indented code: the block goes on, blank lines included.
    private var inCode = false
    /// A fenced block inside a list item: its marker and run length.
    private var listFence: (marker: UInt8, count: Int)?
    /// A fenced block inside a block quote (an Obsidian callout's code): its marker and run
    /// length.
    private var quoteFence: (marker: UInt8, count: Int)?
    private var lastIndex = -1
    /// The columns where the text of each list item open at the line starts, outermost first.
    private var itemColumns: [Int] = []

    /// The column where the text of the innermost list item the last line is in starts, 0 when
    /// it is in none: a paragraph there ends at a list marker less indented, and a line indented
    /// 4 columns past it is the paragraph's text.
    var itemColumn: Int { inList ? itemColumns.last ?? 0 : 0 }

    /// Keeps ``itemColumns`` by a line of a list, not blank, indented `columns`: a list item
    /// ends the items whose text starts further right and opens its own; after a blank line, any
    /// other line ends them too (no paragraph's line goes on lazily there).
    private mutating func trackItems(_ text: ArraySlice<UInt8>, columns: Int) {
        let item = Self.listMarker(text)
        guard item != nil || afterBlank else { return }
        while let last = itemColumns.last, last > columns { itemColumns.removeLast() }
        guard let item else { return }
        // The text starts 1 to 4 columns after the marker; 5 or more, or none, and it starts 1
        // after it (the rest is indented code, or the item is empty).
        var k = text.startIndex + item.width
        var spaces = 0
        while k < text.endIndex, text[k] == 0x20 {
            spaces += 1
            k += 1
        }
        let gap = k == text.endIndex || spaces > 4 || text[k] == 0x09 ? 1 : spaces
        itemColumns.append(columns + item.width + gap)
    }

    /// Whether the line numbered `index` is code: part of an indented code block, or of a
    /// fenced one indented as a list item's (its fence lines too).
    mutating func isCode(_ b: ArraySlice<UInt8>, index: Int, inComment: Bool) -> Bool {
        if index != lastIndex + 1 {
            // A fenced block of the top level was passed over: it ends a paragraph.
            afterText = false
            afterBlank = false
            inCode = false
        }
        lastIndex = index
        var columns = 0
        var k = b.startIndex
        while k < b.endIndex, b[k] == 0x20 || b[k] == 0x09 {
            columns = b[k] == 0x09 ? (columns / 4 + 1) * 4 : columns + 1
            k += 1
        }
        let text = b[k...]
        let quoted = columns < 4 || quoteFence != nil ? Self.unquoted(text) : nil
        if let open = quoteFence {
            if let inner = quoted {
                if let run = Self.fenceRun(inner), run.marker == open.marker, run.count >= open.count,
                    inner.dropFirst(run.count).allSatisfy({ $0 == 0x20 || $0 == 0x09 })
                {
                    quoteFence = nil
                }
                return true
            }
            // A line out of the quote ends it, and the block in it.
            quoteFence = nil
        } else if listFence == nil, !inComment, let inner = quoted, let run = Self.fenceRun(inner),
            run.marker == 0x7E || !inner.dropFirst(run.count).contains(0x60)
        {
            quoteFence = (run.marker, run.count)
            afterText = false
            return true
        }
        if let open = listFence {
            if let run = Self.fenceRun(text), run.marker == open.marker, run.count >= open.count,
                text.dropFirst(run.count).allSatisfy({ $0 == 0x20 || $0 == 0x09 })
            {
                listFence = nil
            }
            return true
        }
        if text.isEmpty {
            afterBlank = true
            afterText = false
            return inCode
        }
        defer { afterBlank = false }
        if columns >= 4, !inComment {
            if inList {
                trackItems(text, columns: columns)
                if let run = Self.fenceRun(text), run.marker == 0x7E || !text.dropFirst(run.count).contains(0x60) {
                    listFence = (run.marker, run.count)
                    afterText = false
                    return true
                }
                afterText = true
                return false
            }
            if inCode || !afterText {
                inCode = true
                return true
            }
            return false
        }
        inCode = false
        // A thematic break (`***`, `---`, `- - -`: it wins over a list item), or a setext
        // heading's underline under a paragraph's line: no text a line continues, and at columns
        // 0-1 a break ends the list (no underline continues an item lazily, so `- item` then
        // `---` is a break). Before 2026-12-06 the indented code under one was read as text.
        if !inComment, Self.isThematicBreak(text) {
            if columns < 2 { inList = false }
            afterText = false
            return false
        }
        if !inComment, afterText, !inList || columns >= 2, Self.isSetextUnderline(text) {
            afterText = false
            return false
        }
        if Self.isListItem(text) {
            if !inList { itemColumns.removeAll() }
            inList = true
            trackItems(text, columns: columns)
        } else if inList, columns >= 2 || !(afterBlank || !afterText || Self.isHeading(text)) {
            trackItems(text, columns: columns)
        } else if columns < 2 {
            // Out of the item's text, and no paragraph's line to continue lazily (after a blank
            // line, a fenced block or a heading), or a heading, which no paragraph continues into:
            // the list ends. Before 2026-12-06 a heading right under an item did not end it, and
            // the indented code after the heading was read as the item's text.
            inList = false
        }
        // A heading is no text a line continues.
        afterText = !Self.isHeading(text)
        return false
    }

    /// Whether `line` ends a paragraph before it (where `paragraph` tells), so that no code span
    /// goes on into it: CommonMark's blocks that interrupt a paragraph. A blank line (in a block
    /// quote too); a block quote deeper than the paragraph's (`>` first when the paragraph is in
    /// none, `>>` under `> text`; before 2026-12-07 a nested quote's line went on with the span);
    /// and, indented less than 4 columns past the text of the paragraph's list item (or the
    /// line's start): a fence, an ATX heading, a thematic break, a setext heading's underline
    /// when the line is no lazy one (before 2026-12-07 a span went on past it and hid the
    /// heading's links and tags), an HTML
    /// block's first line (``startsHTMLBlock(_:)``), or a list item that may interrupt a
    /// paragraph: one with text, and when ordered, numbered 1 (`2. x` is the paragraph's text).
    /// Any list marker less indented than the text of the paragraph's item starts an item of an
    /// outer list, which ends it. Indented 4 columns or more past that, none of these is one: the
    /// line is the paragraph's (before 2026-12-07 a list marker, a heading or a break so indented
    /// ended it, and `2.` ended it anywhere).
    static func endsParagraph(_ line: ArraySlice<UInt8>, _ paragraph: Paragraph) -> Bool {
        let (quotes, rest) = quoteMarkers(line)
        var text = rest.drop { $0 == 0x20 || $0 == 0x09 }
        if text.last == 0x0D { text = text.dropLast() }
        if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) || quotes > paragraph.quotes { return true }
        var columns = 0
        for b in rest[..<text.startIndex] { columns = b == 0x09 ? (columns / 4 + 1) * 4 : columns + 1 }
        let base = quotes == paragraph.quotes ? paragraph.column : 0
        guard columns < base + 4 else { return false }
        if let item = listMarker(text) {
            // An item of an outer list, or one that starts a list here: CommonMark lets only an
            // item with text, and an ordered one numbered 1, interrupt a paragraph.
            if columns < base { return true }
            let after = text.dropFirst(item.width)
            if after.contains(where: { $0 != 0x20 && $0 != 0x09 }), item.number == nil || item.number == 1 {
                return true
            }
        }
        // A line of fewer quotes than the paragraph's, or less indented than its item's text, can
        // only go on with it lazily: an underline there is text (CommonMark: no setext underline
        // is a lazy line; before 2026-12-07 `===` under `> a` ended the quote's paragraph).
        let lazy = quotes < paragraph.quotes || columns < base
        return fenceRun(text) != nil || (!lazy && isSetextUnderline(text)) || isHeading(text)
            || isThematicBreak(text) || startsHTMLBlock(text)
    }

    /// How many block quote markers (`>`, each after at most three spaces, and a space after it
    /// dropped) start `line`, and the line after them.
    static func quoteMarkers(_ line: ArraySlice<UInt8>) -> (depth: Int, rest: ArraySlice<UInt8>) {
        var rest = line
        var depth = 0
        while true {
            let text = rest.drop { $0 == 0x20 }
            guard rest.count - text.count < 4, text.first == 0x3E else { return (depth, rest) }
            depth += 1
            rest = text.dropFirst()
            if rest.first == 0x20 { rest = rest.dropFirst() }
        }
    }

    /// Where a link reference definition may start on `line` inside containers: its text without
    /// its block quote markers and the markers of the list items it starts, nested ones too
    /// (`> [a]: x.md`, `- [a]: x.md`, `> 1. [a]: x.md`, `- - [a]: x.md`, `- > [a]: x.md`), and its
    /// quote depth, counting the quotes inside those items; and whether that text starts a block
    /// that a paragraph open before does not go on into (`startsBlock`): a quote deeper than the
    /// line before's (`previousDepth`), or a list item, but for an item numbered other than 1
    /// under an open paragraph, which is that paragraph's text (CommonMark 0.31, 5.2). A line
    /// without either is itself, starting no block. Before 2026-12-07 (the day they were first
    /// read) an item's nested item or quote was not looked past, and a quote inside an item was
    /// not counted in the depth, so `- > a` then `  > [p]: x.md` was taken for a definition.
    static func containedText(_ line: ArraySlice<UInt8>, previousDepth: Int, open: Bool) -> (
        text: ArraySlice<UInt8>, depth: Int, startsBlock: Bool
    ) {
        var (depth, rest) = quoteMarkers(line)
        var startsBlock = depth > previousDepth
        while true {
            let indent = rest.prefix { $0 == 0x20 }.count
            let text = rest.dropFirst(indent)
            // Inside a block started on this line no paragraph is open: any number starts a list.
            guard indent < 4, let marker = listMarker(text),
                startsBlock || !open || marker.number == nil || marker.number == 1
            else { break }
            let after = text.dropFirst(marker.width)
            let spaces = after.prefix { $0 == 0x20 }.count
            // One to four spaces, then the item's text (five or more start indented code).
            guard (1...4).contains(spaces), spaces < after.count else { break }
            startsBlock = true
            let (inner, innerRest) = quoteMarkers(after.dropFirst(spaces))
            depth += inner
            rest = innerRest
        }
        return (rest, depth, startsBlock)
    }

    /// The names of CommonMark's HTML blocks of kind 6, a tag of which starts a block that
    /// interrupts a paragraph (`<div>`, `</table>`, `<hr/>`).
    private static let blockTagNames: Set<[UInt8]> = Set(
        [
            "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center", "col",
            "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
            "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr",
            "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem", "nav", "noframes", "ol",
            "optgroup", "option", "p", "param", "search", "section", "summary", "table", "tbody", "td", "tfoot",
            "th", "thead", "title", "tr", "track", "ul",
        ].map { Array($0.utf8) })

    /// The tag names of CommonMark's HTML blocks of kind 1.
    private static let rawTagNames: Set<[UInt8]> = Set(["pre", "script", "style", "textarea"].map { Array($0.utf8) })

    /// Whether `text` (a line from its first character that is no white space) starts an HTML
    /// block of the kinds that interrupt a paragraph (CommonMark 0.31, kinds 1 to 6): `<pre`,
    /// `<script`, `<style` or `<textarea` then white space, `>` or the line's end; `<!--`; `<?`;
    /// `<!` and an ASCII letter; `<![CDATA[`; or `<` or `</` and a name of ``blockTagNames``
    /// (any case) then white space, the line's end, `>` or `/>`. Kind 7 (any other whole tag
    /// alone on its line, `<span>`) interrupts no paragraph, and is left out.
    static func startsHTMLBlock(_ text: ArraySlice<UInt8>) -> Bool {
        func isLetter(_ c: UInt8) -> Bool { (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) }
        guard text.first == 0x3C else { return false }
        let rest = text.dropFirst()
        if rest.first == 0x3F || rest.starts(with: Array("![CDATA[".utf8)) { return true }
        if rest.first == 0x21 {
            // `<!--`, or `<!` and a letter (a declaration).
            return rest.dropFirst().starts(with: [0x2D, 0x2D]) || rest.dropFirst().first.map(isLetter) == true
        }
        let closing = rest.first == 0x2F
        let named = closing ? rest.dropFirst() : rest
        let name = named.prefix { isLetter($0) || (0x30...0x39).contains($0) }
        let lower = name.map { isLetter($0) ? $0 | 0x20 : $0 }
        let after = named.dropFirst(name.count)
        let ends = after.isEmpty || after.first == 0x20 || after.first == 0x09 || after.first == 0x3E
        if !closing, rawTagNames.contains(lower) { return ends }
        return blockTagNames.contains(lower) && (ends || after.starts(with: [0x2F, 0x3E]))
    }

    /// Whether a paragraph is open after `line`, a line the scan of text lines passes
    /// (``MarkdownCode/forEachTextLine(_:_:)``), when one was before it (`open`): so that a link
    /// reference definition, which cannot interrupt a paragraph (CommonMark 0.31, 4.7), is one
    /// only where none is. A blank line (in a block quote too), an ATX heading, a thematic break,
    /// and a setext heading's underline under the paragraph's line close it; any other line
    /// (a list item's, a quote's, an HTML block's first line, which goes on to a blank line)
    /// opens one or goes on with it. Lines of code the scan passes over, and a definition (which
    /// may follow another), are for the caller to take.
    static func paragraphOpen(after line: ArraySlice<UInt8>, open: Bool) -> Bool {
        let rest = quoteMarkers(line).rest
        let text = rest.drop { $0 == 0x20 || $0 == 0x09 }
        if text.isEmpty { return false }
        var columns = 0
        for b in rest[..<text.startIndex] { columns = b == 0x09 ? (columns / 4 + 1) * 4 : columns + 1 }
        guard columns < 4 else { return true }
        if isHeading(text) || isThematicBreak(text) { return false }
        return !(open && isSetextUnderline(text))
    }

    /// Whether `text` (from its first character that is no white space) is a thematic break:
    /// three or more of one of `*`, `-`, `_`, with white space alone between them.
    private static func isThematicBreak(_ text: ArraySlice<UInt8>) -> Bool {
        guard let c = text.first, c == 0x2A || c == 0x2D || c == 0x5F else { return false }
        var count = 0
        for b in text {
            if b == c {
                count += 1
            } else if b != 0x20 && b != 0x09 {
                return false
            }
        }
        return count >= 3
    }

    /// Whether `text` is a setext heading's underline: a run of `=` or of `-`, then white space
    /// alone.
    private static func isSetextUnderline(_ text: ArraySlice<UInt8>) -> Bool {
        guard let c = text.first, c == 0x3D || c == 0x2D else { return false }
        return text.drop { $0 == c }.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// Whether `text` is an ATX heading: 1 to 6 `#`, then white space or the line's end.
    private static func isHeading(_ text: ArraySlice<UInt8>) -> Bool {
        let hashes = text.prefix { $0 == 0x23 }.count
        guard (1...6).contains(hashes) else { return false }
        let rest = text.dropFirst(hashes)
        return rest.isEmpty || rest.first == 0x20 || rest.first == 0x09
    }

    /// The text of a block quote's line (`> text`, `>> text`) without its markers, or nil
    /// when `text` is no such line.
    private static func unquoted(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard text.first == 0x3E else { return nil }
        var rest = text
        while rest.first == 0x3E {
            rest = rest.dropFirst()
            rest = rest.drop { $0 == 0x20 || $0 == 0x09 }
        }
        return rest
    }

    /// The run of 3 or more backticks or tildes that starts `text`, if any.
    private static func fenceRun(_ text: ArraySlice<UInt8>) -> (marker: UInt8, count: Int)? {
        guard let marker = text.first, marker == 0x60 || marker == 0x7E else { return nil }
        let count = text.prefix { $0 == marker }.count
        return count >= 3 ? (marker, count) : nil
    }

    /// Whether `text` (a line without its indentation) starts with a list marker: `-`, `*`
    /// or `+`, or 1 to 9 digits and `.` or `)`, then white space or the line's end.
    private static func isListItem(_ text: ArraySlice<UInt8>) -> Bool { listMarker(text) != nil }

    /// The list marker `text` (a line without its indentation) starts with, if any: how many
    /// bytes it takes, and an ordered one's number (nil for `-`, `*`, `+`).
    private static func listMarker(_ text: ArraySlice<UInt8>) -> (width: Int, number: Int?)? {
        var k = text.startIndex
        var number: Int?
        if let c = text.first, c == 0x2D || c == 0x2A || c == 0x2B {
            k += 1
        } else {
            var value = 0
            while k < text.endIndex, k - text.startIndex < 9, (0x30...0x39).contains(text[k]) {
                value = value * 10 + Int(text[k] - 0x30)
                k += 1
            }
            guard k > text.startIndex, k < text.endIndex, text[k] == 0x2E || text[k] == 0x29 else { return nil }
            k += 1
            number = value
        }
        guard k == text.endIndex || text[k] == 0x20 || text[k] == 0x09 else { return nil }
        return (k - text.startIndex, number)
    }
}
