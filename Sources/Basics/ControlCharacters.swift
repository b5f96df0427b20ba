import Glibc

/// The visible symbol a control character is shown as: C0 controls as their Unicode control
/// pictures (escape as `␛`), delete as `␡`, C1 controls as `�`, the line and paragraph
/// separators as `␤`; nil for any other character.
public func controlPicture(_ c: Unicode.Scalar) -> Unicode.Scalar? {
    switch c.value {
    case 0x00..<0x20: return Unicode.Scalar(0x2400 + c.value)
    case 0x7F: return "\u{2421}"
    case 0x80...0x9F: return "\u{FFFD}"
    case 0x2028, 0x2029: return "\u{2424}"
    default: return nil
    }
}

/// Whether a character would break a one-line field or control the terminal: C0 and C1 control
/// characters, DEL, and the Unicode line and paragraph separators.
public func breaksLine(_ c: Unicode.Scalar) -> Bool { controlPicture(c) != nil }

/// Whether a character is DEL (U+007F) or a C1 control (U+0080-U+009F, NEL U+0085 among them):
/// the controls past the C0 range, which a name typed at a command refuses as it does the C0
/// ones (before 2026-12-07 titles, aliases and category names took them; names already in the
/// log, or pulled from another device, keep them).
public func isDeleteOrC1Control(_ c: Unicode.Scalar) -> Bool { c.value >= 0x7F && c.value <= 0x9F }

/// Whether a character is an invisible bidirectional formatting character: the Arabic letter
/// mark, the left-to-right and right-to-left marks, embeddings, overrides and isolates (U+061C,
/// U+200E, U+200F, U+202A-U+202E, U+2066-U+2069). On a terminal an override such as U+202E
/// reverses the text after it, even past the field it is in.
public func isBidiControl(_ c: Unicode.Scalar) -> Bool {
    switch c.value {
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}

/// The visible escape an invisible format character is shown as: `<U+202E>`.
public func formatEscape(_ c: Unicode.Scalar) -> String {
    let hex = String(c.value, radix: 16, uppercase: true)
    return "<U+" + String(repeating: "0", count: max(0, 4 - hex.utf8.count)) + hex + ">"
}

/// Whether the UTF-8 form of `text` holds `byte`, by `memchr` over its bytes: the generic
/// `text.utf8.contains(byte)` walks a string's view one byte at a time (about 30 instructions
/// a byte), and stream names, types and actors are checked for a NUL at every append.
public func utf8Contains(_ text: String, _ byte: UInt8) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return false }
        return memchr(base, Int32(byte), bytes.count) != nil
    }
}

/// Whether the text holds a NUL, which notes refuse.
public func containsNUL(_ text: String) -> Bool { utf8Contains(text, 0) }
