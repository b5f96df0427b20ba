/// Keeps passwords out of what is printed: the one place that knows where a libpq address
/// may carry one (`notes` prints addresses without linking libpq, `notes-sync` its messages).
public enum PasswordScrubbing {
    /// `text` with every password a libpq address may carry replaced by `***`: `password=…`
    /// (bare, quoted, or in a URI's query) and the `user:password@` of a URI.
    public static func scrubbed(_ text: String) -> String {
        var out = ""
        var chars = Substring(text)
        while !chars.isEmpty {
            if let rest = stripPrefixIgnoringCase(chars, "password") {
                var after = rest.drop { $0 == " " || $0 == "\t" }
                if after.first == "=" {
                    after = after.dropFirst().drop { $0 == " " || $0 == "\t" }
                    out += "password=***"
                    if after.first == "'" {
                        after = after.dropFirst()
                        while let c = after.first, c != "'" {
                            after = after.dropFirst(c == "\\" ? 2 : 1)
                        }
                        after = after.dropFirst()
                    } else {
                        after = after.drop { !$0.isWhitespace && $0 != "&" && $0 != "\"" }
                    }
                    chars = after
                    continue
                }
            }
            if chars.hasPrefix("://") {
                // scheme://user:password@host: the authority ends at the first '/', '?' or space.
                let authority = chars.dropFirst(3).prefix { $0 != "/" && $0 != "?" && !$0.isWhitespace }
                if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                    out += "://" + authority[..<colon] + ":***"
                    chars = chars[at...]
                    continue
                }
            }
            out.append(chars.removeFirst())
        }
        return out
    }
}

private func stripPrefixIgnoringCase(_ text: Substring, _ prefix: String) -> Substring? {
    var rest = text
    for p in prefix.utf8 {
        guard let c = rest.utf8.first, c | 0x20 == p else { return nil }
        rest = rest.dropFirst()
    }
    return rest
}
