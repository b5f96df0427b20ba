import Basics
import EventStore

/// Short human renderings of instants for CLI listings: "just now", "5 minutes ago",
/// "3 hours ago", "yesterday", "4 days ago", and otherwise the local date.
///
/// ```swift
/// RelativeTime.describe(micros: then, now: now, timeZone: .utc)  // "3 hours ago"
/// ```
public enum RelativeTime {
    /// How far ahead of `now` an instant may be and still read "just now": clocks of machines
    /// that share a store disagree a little.
    public static let clockSkewMicros: Int64 = 60_000_000

    /// `micros` described relative to `now`.
    ///
    /// Under a minute ago (or up to ``clockSkewMicros`` ahead): "just now"; under an hour:
    /// "N minutes ago"; under a day: "N hours ago"; then by local calendar days: "yesterday",
    /// "N days ago" up to six days; anything older, or further in the future, is the local date
    /// `YYYY-MM-DD`.
    public static func describe(micros: Int64, now: Int64, timeZone: LocalTimeZone = .system) -> String {
        let (elapsed, overflow) = now.subtractingReportingOverflow(micros)
        guard !overflow else { return localDate(micros, timeZone) }
        if elapsed < 0 {
            return -elapsed <= clockSkewMicros ? "just now" : localDate(micros, timeZone)
        }
        let minutes = elapsed / 60_000_000
        if minutes < 1 { return "just now" }
        if minutes < 60 { return count(minutes, "minute") }
        let hours = minutes / 60
        if hours < 24 { return count(hours, "hour") }
        let days = timeZone.localDay(ofUTC: now) - timeZone.localDay(ofUTC: micros)
        if days == 1 { return "yesterday" }
        // A day of clocks going back can make 24 hours end on the same local date.
        if days < 7 { return count(max(days, 1), "day") }
        return localDate(micros, timeZone)
    }

    private static func count(_ value: Int64, _ unit: String) -> String {
        value == 1 ? "1 \(unit) ago" : "\(value) \(unit)s ago"
    }

    private static func localDate(_ micros: Int64, _ timeZone: LocalTimeZone) -> String {
        CivilDate(daysSinceEpoch: timeZone.localDay(ofUTC: micros)).description
    }
}
