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
    private static func foldASCII(_ bytes: UnsafeRawBufferPointer) -> String? {
        var ascii = true
        let out = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            var n = 0
            var pendingSpace = false
            for b in bytes {
                guard b < 0x80 else {
                    ascii = false
                    return 0
                }
                if b == 0x20 || (0x09...0x0D).contains(b) {
                    pendingSpace = n > 0
                    continue
                }
                if pendingSpace {
                    buffer[n] = 0x20
                    n += 1
                    pendingSpace = false
                }
                buffer[n] = (0x41...0x5A).contains(b) ? b | 0x20 : b
                n += 1
            }
            return n
        }
        return ascii ? out : nil
    }
}
