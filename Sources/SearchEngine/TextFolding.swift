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
            // Combining marks of decomposed text fold away, as their composed forms do.
            if (0x0300...0x036F).contains(scalar.value) { continue }
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

    /// The common case, byte by byte: nil when `text` is not all ASCII.
    private static func foldASCII(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var pendingSpace = false
            for b in bytes {
                guard b < 0x80 else { return nil }
                // The ASCII white space of Unicode's property: tab to carriage return, space.
                if b == 0x20 || (0x09...0x0D).contains(b) {
                    pendingSpace = !out.isEmpty
                    continue
                }
                if pendingSpace {
                    out.append(0x20)
                    pendingSpace = false
                }
                out.append((0x41...0x5A).contains(b) ? b | 0x20 : b)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
