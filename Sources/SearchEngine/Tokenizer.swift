/// Splits text into search terms: an approximation of Unicode word segmentation (UAX #29) built
/// on the scalar properties of the standard library, with case and diacritic folding.
///
/// - Letters and numbers form words; `'` and `’` between letters join (`don't` gives `dont`),
///   `.` and `,` between digits join (`3.14` stays one term). Other punctuation separates.
/// - Ideographs, kana and emoji are one term each, so CJK text without spaces is searchable
///   (a query of several ideographs becomes a phrase).
/// - Terms are lowercased, diacritics are removed (`Résumé` gives `resume`) and a word longer
///   than ``maxTermBytes`` is its first 56 bytes or fewer (cut at a scalar boundary) followed by
///   a hash of all of it in 8 capitals `A` to `P`, which no folded word holds (queries are cut
///   the same way).
///
/// The tokenizer never fails: any string, even one of stray marks or joiners, gives zero or more
/// terms. Changing its behaviour changes the index format: bump ``SearchIndex/version``.
enum Tokenizer {
    /// The longest term, in UTF-8 bytes.
    static let maxTermBytes = 64

    /// What a scalar does to the word around it.
    enum Kind {
        case letter
        case digit
        /// A diacritic to drop (see ``isDroppedMark(_:)``).
        case droppedMark
        /// A mark that belongs to its word (Indic vowel signs, viramas, ...).
        case keptMark
        /// Format characters that never split a word (soft hyphen, joiners, variation selectors).
        case ignorable
        /// Joins two letters and is dropped: apostrophes.
        case apostrophe
        /// Joins two digits and is kept: `.` and `,`.
        case numberSeparator
        /// A term on its own: ideographs, kana, emoji.
        case single
        case separator
    }

    /// The kind of a scalar.
    @inline(__always)
    static func kind(_ v: UInt32) -> Kind {
        if v < 0x80 {
            switch v {
            case 0x61...0x7A, 0x41...0x5A: return .letter
            case 0x30...0x39: return .digit
            case 0x27: return .apostrophe
            case 0x2C, 0x2E: return .numberSeparator
            default: return .separator
            }
        }
        return nonASCIIKind(v)
    }

    /// Whether `v` is a mark that words drop: the combining diacritics of the Latin, Greek and
    /// Cyrillic kind, Hebrew's vowel points and cantillation marks, and Arabic's harakat and
    /// Quranic annotation marks (most text in those scripts is written without them, so a
    /// pointed word finds the unpointed one and the other way round).
    @inline(__always)
    static func isDroppedMark(_ v: UInt32) -> Bool {
        switch v {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F,
            0x0591...0x05BD, 0x05BF, 0x05C1...0x05C2, 0x05C4...0x05C5, 0x05C7,
            0x0610...0x061A, 0x064B...0x065F, 0x0670, 0x06D6...0x06DC, 0x06DF...0x06E4, 0x06E7...0x06E8,
            0x06EA...0x06ED:
            return true
        default:
            return false
        }
    }

    static func nonASCIIKind(_ v: UInt32) -> Kind {
        if isDroppedMark(v) { return .droppedMark }
        switch v {
        // Arabic's tatweel (kashida) only stretches a word in print.
        case 0x00AD, 0x0640, 0x200C, 0x200D, 0x2060, 0xFEFF, 0xFE00...0xFE0F, 0xE0100...0xE01EF, 0x1F3FB...0x1F3FF:
            return .ignorable
        case 0x2019: return .apostrophe
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: return .single
        default: break
        }
        guard let scalar = Unicode.Scalar(v) else { return .separator }
        let p = scalar.properties
        if p.isIdeographic { return .single }
        if p.isAlphabetic { return .letter }
        if p.numericType != nil { return .digit }
        switch p.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return .keptMark
        default: break
        }
        if p.isEmojiPresentation || (p.isEmoji && v >= 0x2100) { return .single }
        return .separator
    }

    /// Calls `body(term, start, end)` for each term of `text`, in order; `term` is the folded
    /// UTF-8 (valid only during the call) and `start..<end` the term's UTF-8 offsets in `text`.
    static func forEachTerm(in text: String, _ body: (UnsafeBufferPointer<UInt8>, Int, Int) -> Void) {
        var text = text
        text.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxTermBytes) { term in
                scan(utf8, into: term, body)
            }
        }
    }

    /// ``forEachTerm(in:_:)`` with each term reduced to its stem by `stemmer` (a stem of no
    /// bytes keeps the word).
    @inline(__always)
    static func forEachTerm(
        in text: String, stemmer: Stemmer?, _ body: (UnsafeBufferPointer<UInt8>, Int, Int) -> Void
    ) {
        guard let stemmer else { return forEachTerm(in: text, body) }
        forEachTerm(in: text) { t, start, end in
            stemmer.stem(t) { stem in body(stem.isEmpty ? t : stem, start, end) }
        }
    }

    /// The terms of `text` as arrays (for queries and tests).
    static func terms(_ text: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        forEachTerm(in: text) { t, _, _ in out.append(Array(t)) }
        return out
    }

    /// The term being gathered by ``scan(_:into:_:)``: a struct with mutating methods rather
    /// than local functions capturing the scan's variables. Until 2026-12-08 those variables
    /// were captured by local functions, one of them handed on as a closure, which made them
    /// heap boxes allocated on every call and read through memory for every letter (the
    /// tokenizer's largest cost after the letters themselves).
    private struct TermBuffer {
        let term: UnsafeMutableBufferPointer<UInt8>
        var length = 0
        // The word is longer than the term: its bytes past those kept go into `hash`, the
        // FNV-1a of all its folded bytes, begun when the first is dropped.
        var full = false
        var hash: UInt32 = 0
        /// Whether a word is being gathered.
        var inWord = false
        /// A joiner seen after a word character, kept until the next scalar says whether it joins.
        var joiner: (kind: Kind, byte: UInt8)? = nil

        init(_ term: UnsafeMutableBufferPointer<UInt8>) { self.term = term }

        mutating func beginOverflow() {
            full = true
            hash = 2_166_136_261
            for k in 0..<length { hash = (hash ^ UInt32(term[k])) &* 16_777_619 }
        }

        @inline(__always) mutating func append(_ b: UInt8) {
            if !full && length < term.count {
                term[length] = b
                length += 1
            } else {
                if !full { beginOverflow() }
                hash = (hash ^ UInt32(b)) &* 16_777_619
            }
        }

        @inline(__always) mutating func appendScalar(_ v: UInt32) {
            let need = v < 0x80 ? 1 : v < 0x800 ? 2 : v < 0x1_0000 ? 3 : 4
            // A scalar that does not fit is not split: all of it goes into the hash.
            if !full && length + need > term.count { beginOverflow() }
            switch need {
            case 1: append(UInt8(truncatingIfNeeded: v))
            case 2:
                append(UInt8(truncatingIfNeeded: 0xC0 | v >> 6))
                append(UInt8(truncatingIfNeeded: 0x80 | v & 0x3F))
            case 3:
                append(UInt8(truncatingIfNeeded: 0xE0 | v >> 12))
                append(UInt8(truncatingIfNeeded: 0x80 | (v >> 6) & 0x3F))
                append(UInt8(truncatingIfNeeded: 0x80 | v & 0x3F))
            default:
                append(UInt8(truncatingIfNeeded: 0xF0 | v >> 18))
                append(UInt8(truncatingIfNeeded: 0x80 | (v >> 12) & 0x3F))
                append(UInt8(truncatingIfNeeded: 0x80 | (v >> 6) & 0x3F))
                append(UInt8(truncatingIfNeeded: 0x80 | v & 0x3F))
            }
        }

        @inline(__always) mutating func appendFolded(_ v: UInt32) {
            if v < 0x80 {
                append(v >= 0x41 && v <= 0x5A ? UInt8(truncatingIfNeeded: v | 0x20) : UInt8(truncatingIfNeeded: v))
                return
            }
            foldNonASCII(v) { appendScalar($0) }
        }

        /// Passes the term gathered to `body` (if any) and empties the buffer: no word is being
        /// gathered and no joiner is pending.
        @inline(__always) mutating func emit(
            start: Int, end: Int, _ body: (UnsafeBufferPointer<UInt8>, Int, Int) -> Void
        ) {
            if full {
                // A word longer than ``maxTermBytes``: its first bytes (cut at a scalar boundary)
                // then the hash of all of it, so that two long words that start alike are two
                // terms (before search-7 both were their first 64 bytes, and a search for one
                // found the other). Its 16 digits are the capitals `A` to `P`, which a folded
                // word never holds: no word's own term is a long word's, and no folded prefix
                // reaches into the hash (in search-7 they were lowercase hex: the 64-byte word
                // spelled as a long word's term was that term, and a prefix ending in the
                // hash's first digits found a long word that does not start so).
                var cut = term.count - 8
                while cut > 0 && term[cut] & 0xC0 == 0x80 { cut -= 1 }
                let digits: StaticString = "ABCDEFGHIJKLMNOP"
                for k in 0..<8 {
                    term[cut + k] = digits.utf8Start[Int((hash >> UInt32(28 - 4 * k)) & 0xF)]
                }
                length = cut + 8
            }
            if length > 0 { body(UnsafeBufferPointer(rebasing: term[0..<length]), start, end) }
            length = 0
            full = false
            inWord = false
            joiner = nil
        }
    }

    @inline(__always)
    private static func scan(
        _ utf8: UnsafeBufferPointer<UInt8>, into term: UnsafeMutableBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, Int, Int) -> Void
    ) {
        var buffer = TermBuffer(term)
        var start = 0
        var end = 0
        var lastKind = Kind.letter

        var i = 0
        let n = utf8.count
        while i < n {
            let b0 = utf8[i]
            var v = UInt32(b0)
            var len = 1
            if b0 >= 0x80 {
                // Swift strings hold valid UTF-8; a short or odd sequence still only ends a word.
                if b0 >= 0xF0, i + 3 < n {
                    v =
                        (UInt32(b0 & 0x07) << 18) | (UInt32(utf8[i + 1] & 0x3F) << 12)
                        | (UInt32(utf8[i + 2] & 0x3F) << 6) | UInt32(utf8[i + 3] & 0x3F)
                    len = 4
                } else if b0 >= 0xE0, b0 < 0xF0, i + 2 < n {
                    v = (UInt32(b0 & 0x0F) << 12) | (UInt32(utf8[i + 1] & 0x3F) << 6) | UInt32(utf8[i + 2] & 0x3F)
                    len = 3
                } else if b0 >= 0xC0, b0 < 0xE0, i + 1 < n {
                    v = (UInt32(b0 & 0x1F) << 6) | UInt32(utf8[i + 1] & 0x3F)
                    len = 2
                } else {
                    v = 0x20
                }
            }
            let k = kind(v)
            switch k {
            case .letter, .digit:
                if buffer.inWord {
                    if let j = buffer.joiner {
                        let joins =
                            (j.kind == .apostrophe && k == .letter && lastKind == .letter)
                            || (j.kind == .numberSeparator && k == .digit && lastKind == .digit)
                        if joins {
                            if j.kind == .numberSeparator { buffer.append(j.byte) }
                            buffer.joiner = nil
                        } else {
                            buffer.emit(start: start, end: end, body)
                        }
                    }
                }
                if !buffer.inWord {
                    buffer.inWord = true
                    start = i
                }
                buffer.appendFolded(v)
                lastKind = k
                end = i + len
                // The rest of a run of ASCII letters and digits (most of any text) in a tight
                // loop: in a word with no joiner pending, each is appended folded, as above.
                if len == 1 {
                    var j = i + 1
                    while j < n {
                        let c = utf8[j]
                        let lower = c | 0x20
                        if lower >= 0x61 && lower <= 0x7A {
                            buffer.append(lower)
                            lastKind = .letter
                        } else if c >= 0x30 && c <= 0x39 {
                            buffer.append(c)
                            lastKind = .digit
                        } else {
                            break
                        }
                        j += 1
                    }
                    end = j
                    len = j - i
                }
            case .droppedMark, .keptMark:
                if buffer.inWord && buffer.joiner == nil {
                    if k == .keptMark { buffer.appendScalar(v) }
                    end = i + len
                } else if buffer.inWord {
                    buffer.emit(start: start, end: end, body)
                }
            case .ignorable:
                break
            case .apostrophe, .numberSeparator:
                if buffer.inWord && buffer.joiner == nil {
                    buffer.joiner = (k, UInt8(truncatingIfNeeded: v))
                } else if buffer.inWord {
                    buffer.emit(start: start, end: end, body)
                }
            case .single:
                if buffer.inWord {
                    buffer.emit(start: start, end: end, body)
                }
                start = i
                end = i + len
                buffer.appendFolded(v)
                buffer.emit(start: start, end: end, body)
            case .separator:
                if buffer.inWord {
                    buffer.emit(start: start, end: end, body)
                }
            }
            i += len
        }
        if buffer.inWord {
            buffer.emit(start: start, end: end, body)
        }
    }

    /// Lowercases and folds one scalar outside ASCII, passing the resulting scalars to `out`.
    static func foldNonASCII(_ v: UInt32, _ out: (UInt32) -> Void) {
        switch v {
        case 0xFF10...0xFF19, 0xFF41...0xFF5A:
            // Fullwidth digits and letters are their ASCII forms, which sit 0xFEE0 lower.
            out(v - 0xFEE0)
            return
        case 0xFF21...0xFF3A:
            out(v - 0xFEE0 + 0x20)
            return
        case 0xFB00...0xFB06:
            let ligatures: [[UInt32]] = [
                [0x66, 0x66], [0x66, 0x69], [0x66, 0x6C], [0x66, 0x66, 0x69], [0x66, 0x66, 0x6C], [0x73, 0x74],
                [0x73, 0x74],
            ]
            for s in ligatures[Int(v - 0xFB00)] { out(s) }
            return
        default: break
        }
        guard let scalar = Unicode.Scalar(v) else { return }
        if scalar.properties.changesWhenLowercased {
            for u in scalar.properties.lowercaseMapping.unicodeScalars { foldLower(u.value, out) }
        } else {
            foldLower(v, out)
        }
    }

    @inline(__always)
    private static func foldLower(_ v: UInt32, _ out: (UInt32) -> Void) {
        if kind(v) == .droppedMark { return }
        let r = FoldTable.replacement(v)
        if r == 0 {
            out(v)
            return
        }
        out(UInt32(truncatingIfNeeded: r))
        let second = UInt32(truncatingIfNeeded: r >> 32)
        if second != 0 { out(second) }
    }
}
