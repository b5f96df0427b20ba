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
