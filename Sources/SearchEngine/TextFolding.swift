/// Folding of a short text for comparisons that ignore case and accents (a wiki link's title
/// against a note's title): the same foldings as the search index's terms, applied to every
/// character, with runs of white space made one space and the ends trimmed.
///
/// ```swift
/// TextFolding.fold("  Résumé   Draft ")  // "resume draft"
/// ```
public enum TextFolding {
    public static func fold(_ text: String) -> String {
        if let ascii = foldASCII(text) { return ascii }
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.lowercased().unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            // What the search index's words drop folds away: combining marks of decomposed text
            // (as their composed forms do), Hebrew points, Arabic harakat, soft hyphens, joiners.
            if scalar.value >= 0x80 {
                switch Tokenizer.nonASCIIKind(scalar.value) {
                case .droppedMark, .ignorable: continue
                default: break
                }
            }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            let r = scalar.value < 0x80 ? 0 : FoldTable.replacement(scalar.value)
            if r == 0 {
                out.append(scalar)
            } else {
                if let first = Unicode.Scalar(UInt32(truncatingIfNeeded: r)) { out.append(first) }
                if r >> 32 != 0, let second = Unicode.Scalar(UInt32(truncatingIfNeeded: r >> 32)) { out.append(second) }
            }
        }
        return String(out)
    }

    /// The fold of UTF-8 bytes (a title read in place from the store).
    public static func fold(utf8 bytes: UnsafeRawBufferPointer) -> String {
        if let ascii = foldASCII(bytes) { return ascii }
        return fold(String(decoding: bytes, as: UTF8.self))
    }

    /// The common case, byte by byte: nil when `text` is not all ASCII.
    private static func foldASCII(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { foldASCII(UnsafeRawBufferPointer($0)) }
    }

    /// ASCII bytes folded straight into the string's storage (white space as Unicode's
    /// property has it: tab to carriage return, and space); nil at the first byte over 0x7F.
    /// Each byte's class and folded value come from one table: a replay folds the title of every
    /// note's creation and retitle, and comparing ranges per byte was most of its cost.
    private static func foldASCII(_ bytes: UnsafeRawBufferPointer) -> String? {
        var ascii = true
        let out = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            guard let out = buffer.baseAddress, let input = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            else { return 0 }
            let asciiFolding = Self.asciiFolding
            var n = 0
            var pendingSpace = false
            for k in 0..<bytes.count {
                let folded = asciiFolding[Int(input[k])]
                if folded == 0x20 {
                    pendingSpace = n > 0
                    continue
                }
                if folded == 0 {
                    ascii = false
                    return 0
                }
                if pendingSpace {
                    out[n] = 0x20
                    n += 1
                    pendingSpace = false
                }
                out[n] = folded
                n += 1
            }
            return n
        }
        return ascii ? out : nil
    }

    /// A byte's fold: itself, A-Z lowercased, 0x20 for white space (tab to carriage return,
    /// space), 0 for a byte that is not ASCII (and NUL, which takes the general path). Allocated
    /// once, never freed nor written after: read through a pointer, without bounds checks.
    nonisolated(unsafe) private static let asciiFolding: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for b in 0..<256 {
            switch b {
            case 0, 0x80...: table[b] = 0
            case 0x09...0x0D, 0x20: table[b] = 0x20
            case 0x41...0x5A: table[b] = UInt8(b | 0x20)
            default: table[b] = UInt8(b)
            }
        }
        return UnsafePointer(table)
    }()
}
