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
        return foldScalars(text)
    }

    /// ``fold(_:)`` a scalar at a time, for any text (the reference the ASCII path must match).
    static func foldScalars(_ text: String) -> String {
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
    ///
    /// A space is written at the first white space after a word and the others are skipped, and
    /// a space left at the end is taken back: the same as one space between words. Eight bytes
    /// that need only lowercasing (no byte over 0x7F, no white space but single spaces, none
    /// after a space written) are folded at once; titles are mostly such words.
    private static func foldASCII(_ bytes: UnsafeRawBufferPointer) -> String? {
        var ascii = true
        let out = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return 0 }
            let count = bytes.count
            var n = 0
            var i = 0
            let ones: UInt64 = 0x0101_0101_0101_0101
            let top = ones &* 0x80
            while i + 8 <= count {
                let x = UInt64(littleEndian: source.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                guard x & top == 0 else {
                    ascii = false
                    return 0
                }
                // With every byte below 0x80, adding less than 0x80 to each carries into no other.
                let spaces = ~((x ^ ones &* 0x20) &+ ones &* 0x7F) & top
                let controls = (x &+ ones &* (0x80 - 0x09)) & ~(x &+ ones &* (0x80 - 0x0E)) & top
                let afterSpace = n == 0 || target[n - 1] == 0x20
                if controls == 0, spaces & (spaces << 8) == 0, !(afterSpace && spaces & 0x80 != 0) {
                    let upper = (x &+ ones &* (0x80 - 0x41)) & ~(x &+ ones &* (0x80 - 0x5B)) & top
                    UnsafeMutableRawPointer(target + n).storeBytes(
                        of: (x | upper >> 2).littleEndian, toByteOffset: 0, as: UInt64.self)
                    n += 8
                    i += 8
                    continue
                }
                for k in i..<(i + 8) { fold(source.load(fromByteOffset: k, as: UInt8.self), into: target, at: &n) }
                i += 8
            }
            while i < count {
                let b = source.load(fromByteOffset: i, as: UInt8.self)
                guard b < 0x80 else {
                    ascii = false
                    return 0
                }
                fold(b, into: target, at: &n)
                i += 1
            }
            if n > 0 && target[n - 1] == 0x20 { n -= 1 }
            return n
        }
        return ascii ? out : nil
    }

    /// One ASCII byte of ``foldASCII(_:)``: lowercased, or a space after a word.
    @inline(__always)
    private static func fold(_ b: UInt8, into target: UnsafeMutablePointer<UInt8>, at n: inout Int) {
        if b == 0x20 || (0x09...0x0D).contains(b) {
            if n > 0 && target[n - 1] != 0x20 {
                target[n] = 0x20
                n += 1
            }
        } else {
            target[n] = (0x41...0x5A).contains(b) ? b | 0x20 : b
            n += 1
        }
    }
}
