import Notes

/// The coarse category of a Swift Evolution proposal's free-text `Status:` value.
///
/// A port of `status_category()` and its ordered `CATEGORY_RULES` from the corpus generator
/// (`build_history.py`): links `[x](url)` become `x`, leading blanks and `[]*_` marks are
/// dropped, the rest is lowercased, and the first rule that matches names the category.
/// The rules are plain prefix tests, written out by hand so the result does not depend on a
/// regular-expression engine.
///
/// ```swift
/// ProposalStatus.category(of: "**Implemented (Swift 5.9)**")   // "implemented"
/// ProposalStatus.category(of: "Scheduled for review (May 2)") // "scheduled / awaiting review"
/// ProposalStatus.category(of: nil)                             // nil
/// ```
public enum ProposalStatus {
    /// Every category the rules can give, in rule order, then `other`.
    public static let categories = [
        "rejected", "returned for revision", "withdrawn", "deferred", "expired", "previewing",
        "partially implemented", "implemented", "accepted", "scheduled / awaiting review", "active review",
        "pitch / draft", "other",
    ]

    /// The category of `status`; nil when there is no status (absent or empty).
    public static func category(of status: String?) -> String? {
        guard let status, !status.isEmpty else { return nil }
        let s = normalized(status)
        func starts(_ prefixes: String...) -> Bool { prefixes.contains { s.hasPrefix($0) } }

        if starts("rejected", "this draft is rejected") { return "rejected" }
        if starts("returned", "withdrawn for revision", "under revision", "on hold awaiting revision") {
            return "returned for revision"
        }
        if starts("withdrawn") { return "withdrawn" }
        if starts("deferred") { return "deferred" }
        if starts("expired") { return "expired" }
        if starts("previewing") { return "previewing" }
        if starts("partially implemented") { return "partially implemented" }
        if starts("implemented", "original proposal implemented", "accepted and implemented") { return "implemented" }
        if isAcceptedSpelling(s) || starts("awaiting implementation", "pending implementation") { return "accepted" }
        if s.contains("scheduled")
            || starts(
                "upcoming review", "awaiting review", "awaiting a review", "awating", "pending review",
                "waiting for review", "ready for review", "preparing for review", "awaiting decision",
                "awaiting scheduling", "waiting for scheduling")
        {
            return "scheduled / awaiting review"
        }
        if isActiveReview(s) { return "active review" }
        var rest = Substring(s)
        if rest.hasPrefix("initial ") { rest = rest.dropFirst("initial ".count) }
        for p in ["pitch", "draft", "discussion", "awaiting discussion", "tbd", "rewrite"] where rest.hasPrefix(p) {
            return "pitch / draft"
        }
        return "other"
    }

    /// Links replaced by their text, leading blanks and `[]*_` dropped, lowercased.
    static func normalized(_ status: String) -> String {
        let chars = Array(status)
        var out: [Character] = []
        out.reserveCapacity(chars.count)
        var i = 0
        // `\[([^\]]*)\]\([^)]*\)`: the first `]` after `[` must be followed by `(`, and the
        // link then runs to the first `)`; otherwise the `[` is kept and the scan moves on.
        while i < chars.count {
            if chars[i] == "[", let close = chars[(i + 1)...].firstIndex(of: "]"), close + 1 < chars.count,
                chars[close + 1] == "(", let end = chars[(close + 2)...].firstIndex(of: ")")
            {
                out.append(contentsOf: chars[(i + 1)..<close])
                i = end + 1
            } else {
                out.append(chars[i])
                i += 1
            }
        }
        let start = out.firstIndex { !($0.isWhitespace || "[]*_".contains($0)) } ?? out.endIndex
        return String(out[start...]).lowercased()
    }

    static func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    /// `^acce\w*ted`: "acce", then a run of word characters that contains "ted" (the typo'd
    /// spellings "accpeted", "acceppted"... count too).
    static func isAcceptedSpelling(_ s: String) -> Bool {
        guard s.hasPrefix("acce") else { return false }
        let run = s.dropFirst(4).prefix(while: isWordCharacter)
        return String(run).contains("ted")
    }

    /// `^((under|in) )?(active )?(re-)?review|^active\b|^in review|^review active|^under review`.
    static func isActiveReview(_ s: String) -> Bool {
        var rest = Substring(s)
        if rest.hasPrefix("under ") {
            rest = rest.dropFirst(6)
        } else if rest.hasPrefix("in ") {
            rest = rest.dropFirst(3)
        }
        if rest.hasPrefix("active ") { rest = rest.dropFirst(7) }
        if rest.hasPrefix("re-") { rest = rest.dropFirst(3) }
        if rest.hasPrefix("review") { return true }
        // Backtracking alternatives: "under active" without "review" still fails above, but
        // the optional groups may also match nothing, which `^active\b` covers.
        if s.hasPrefix("active") {
            let after = s.dropFirst(6).first
            return after.map { !isWordCharacter($0) } ?? true
        }
        return false
    }
}
