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
