import Basics
import EventStore
import Glibc

/// The local time zone as a function from an instant to its UTC offset, so that tests can pin it
/// and the CLI can honour `TZ`.
///
/// ```swift
/// let paris = LocalTimeZone.fixed(secondsEastOfUTC: 3600)
/// let tz = LocalTimeZone.system  // localtime_r, which reads TZ
/// ```
public struct LocalTimeZone: Sendable {
    private let offset: @Sendable (Int64) -> Int

    /// A zone whose offset (seconds east of UTC) at each instant (seconds since the epoch) is
    /// given by `offsetAt`. Offsets are clamped to less than a day either way.
    public init(offsetAt: @escaping @Sendable (_ utcSeconds: Int64) -> Int) {
        offset = offsetAt
    }

    /// A zone that is always `secondsEastOfUTC` ahead of UTC (negative: behind).
    public static func fixed(secondsEastOfUTC: Int) -> LocalTimeZone {
        LocalTimeZone { _ in secondsEastOfUTC }
    }

    /// UTC itself.
    public static let utc = fixed(secondsEastOfUTC: 0)

    /// The process's zone, as the C library sees it (`TZ`, else `/etc/localtime`).
    public static let system = LocalTimeZone { utcSeconds in
        var time = time_t(truncatingIfNeeded: utcSeconds)
        var fields = tm()
        guard localtime_r(&time, &fields) != nil else { return 0 }
        return Int(fields.tm_gmtoff)
    }

    /// Seconds east of UTC at the instant `utcSeconds`.
    public func offset(atUTCSeconds utcSeconds: Int64) -> Int {
        min(max(offset(utcSeconds), -86_399), 86_399)
    }

    /// Local wall-clock microseconds (as if the local time were UTC) for the instant `utc`.
    /// Saturates at the ends of `Int64` rather than trapping.
    public func localMicros(fromUTC utc: Int64) -> Int64 {
        let shift = Int64(offset(atUTCSeconds: floorDivide(utc, 1_000_000))) * 1_000_000
        let (sum, overflow) = utc.addingReportingOverflow(shift)
        guard !overflow else { return shift > 0 ? .max : .min }
        return sum
    }

    /// The instant at which local clocks read `local` (wall-clock microseconds).
    ///
    /// A wall-clock time that occurs twice (clocks going back) gives the earlier instant; one that
    /// is skipped (clocks going forward) gives the instant of the change, as `mktime` does for a
    /// day that starts at 01:00. `local` is clamped to the years 0001-9999 (give or take two days).
    public func utcMicros(fromLocal local: Int64) -> Int64 {
        let margin = 2 * microsPerDay
        let local = min(max(local, RFC3339.validRange.lowerBound - margin), RFC3339.validRange.upperBound + margin)
        let localSeconds = floorDivide(local, 1_000_000)
        let before = offset(atUTCSeconds: localSeconds - 86_400)
        let after = offset(atUTCSeconds: localSeconds + 86_400)
        var best: Int64? = nil
        for candidate in [before, after] {
            let instant = local - Int64(candidate) * 1_000_000
            if offset(atUTCSeconds: floorDivide(instant, 1_000_000)) == candidate {
                best = min(best ?? instant, instant)
            }
        }
        return best ?? local - Int64(min(before, after)) * 1_000_000
    }

    /// Days since 1970-01-01 of the local date at the instant `utc`.
    func localDay(ofUTC utc: Int64) -> Int64 {
        floorDivide(localMicros(fromUTC: utc), microsPerDay)
    }
}

let microsPerDay: Int64 = 86_400_000_000

/// Division rounding toward negative infinity, for instants before 1970.
func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return value % divisor < 0 ? quotient - 1 : quotient
}

/// Why text given for an instant was not understood.
public struct InstantParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Equatable {
        /// The text matches none of the accepted forms.
        case unrecognized
        /// It looks like a date but names no real day or time (`2026-02-30`, `2026-11-29T25:00`).
        case invalidDate
        /// The amount is too large, or the result falls outside the years 0001-9999.
        case outOfRange
        /// A local date or time within the years 0001-9999 whose instant is not (`0001-01-01` at
        /// midnight east of UTC is in the year 0 in UTC): the zone's offset then, in seconds
        /// east of UTC.
        case outOfRangeInUTC(secondsEastOfUTC: Int)
        /// `N <unit> ago` with a unit that is not known.
        case unknownUnit(String)
        /// `last <day>` with something that is not a day of the week.
        case unknownWeekday(String)
    }

    /// The text as given (trimmed).
    public let input: String
    /// What was wrong.
    public let reason: Reason

    /// Creates an error for `input`.
    public init(_ reason: Reason, input: String) {
        self.reason = reason
        self.input = input
    }

    /// The forms a user can type, for the end of each message.
    public static let acceptedForms = "use " + forms

    private static let forms =
        "RFC 3339 (2026-11-29T12:00:00Z), YYYY-MM-DD, YYYY-MM-DDTHH:MM, today, yesterday, "
        + "\"3 days ago\", \"2h ago\" or \"last monday\""

    /// A message that says what was wrong and what would be accepted.
    public var description: String { message() }

    /// The message, naming the option the text was given to (`--since`, or `FROM` for an
    /// argument) when known; `versions`: the option takes a version (`3`, `v3`) too.
    ///
    /// ```swift
    /// InstantParseError(.unrecognized, input: "-1").message(option: "--at", versions: true)
    /// // --at "-1" is not a version or an instant; give a version (3 or v3) or an instant: RFC 3339 ...
    /// ```
    public func message(option: String? = nil, versions: Bool = false) -> String {
        let quoted = "\"\(Self.printable(input))\""
        let subject = option.map { "\($0) \(quoted)" } ?? "date \(quoted)"
        let forms = versions ? "give a version (3 or v3) or an instant: " + Self.forms : Self.acceptedForms
        let named = option.map { "\($0) " } ?? ""
        switch reason {
        case .unrecognized:
            guard option != nil else { return "unrecognized date \(quoted); \(forms)" }
            return "\(subject) is not \(versions ? "a version or " : "")an instant; \(forms)"
        case .invalidDate:
            guard option != nil else { return "invalid date \(quoted): no such day or time; \(forms)" }
            return "\(subject) names no such day or time; \(forms)"
        case .outOfRange:
            guard option != nil else { return "date \(quoted) is out of range (years 0001 to 9999)" }
            return "\(subject) is out of range: instants run from \(Self.first) to \(Self.last); give one between them"
        case .outOfRangeInUTC(let east):
            // East of UTC, the local start of the year 1 is still the year 0 in UTC; west of it,
            // the local end of 9999 is already 10000.
            let zone = Self.zoneName(secondsEast: east)
            let (side, end, other) = east > 0 ? ("before", Self.first, "a later") : ("after", Self.last, "an earlier")
            return "\(subject) is local time (\(zone)), \(side) \(end), the \(east > 0 ? "earliest" : "latest") "
                + "instant notes can name; give \(end) (UTC) or \(other) instant"
        case .unknownUnit(let unit):
            return "\(named)unknown time unit \"\(Self.printable(unit))\" in \(quoted); "
                + "use seconds (s), minutes (m), hours (h), days (d), weeks (w), months or years"
        case .unknownWeekday(let day):
            return "\(named)unknown day of the week \"\(Self.printable(day))\" in \(quoted); "
                + "use last monday, last tuesday, ... or last sunday"
        }
    }

    private static let first = "0001-01-01T00:00:00Z"
    private static let last = "9999-12-31T23:59:59Z"

    /// `UTC+01:00`, `UTC-05:30`, and with its seconds when it has some (`UTC+00:09:21`, Paris's
    /// mean time until 1911, which the zone database gives for the year 1): before 2026-12-07
    /// they were dropped, and the zone named was not the one the date was read in.
    private static func zoneName(secondsEast: Int) -> String {
        let seconds = abs(secondsEast)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let name = "UTC\(secondsEast < 0 ? "-" : "+")\(two(seconds / 3600)):\(two(seconds / 60 % 60))"
        return seconds % 60 == 0 ? name : name + ":" + two(seconds % 60)
    }

    /// The text cut to a readable length, with control characters that could upset a terminal
    /// replaced.
    private static func printable(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(80) {
            scalars.append(scalar.properties.generalCategory == .control ? "\u{FFFD}" : scalar)
        }
        let result = String(scalars)
        return text.unicodeScalars.count > 80 ? result + "..." : result
    }
}

/// Reads what people type for an option that takes an instant (`--at`, `--since`, `--as-of`),
/// relative to an injected clock and time zone so that results are reproducible.
///
/// Accepted, case-insensitively and with surrounding whitespace ignored:
/// - an RFC 3339 date-time (`2026-11-29T12:00:00Z`, `2026-11-29 12:00:00.5+01:00`): that instant;
/// - `YYYY-MM-DD`: local midnight at the start of that day;
/// - `YYYY-MM-DDTHH:MM[:SS]` or `YYYY-MM-DD HH:MM[:SS]`: that local wall-clock time;
/// - `now` (the clock's instant, or ``logEnd`` when that is later); `today` and `yesterday`:
///   local midnight at the start of the day (of the clock's day);
/// - `N unit ago`, also written `Nunit ago` (`3 days ago`, `2h ago`, `an hour ago`), where the unit
///   is s/sec/second(s), m/min/minute(s), h/hr/hour(s), d/day(s), w/wk/week(s) (fixed durations:
///   a day is 24 hours) or mo/month(s), y/yr/year(s) (calendar months and years in local time,
///   clamping the day: a month before 31 March is 28 or 29 February);
/// - `last monday` ... `last sunday` (also `mon`, `tue`, ...): local midnight of the most recent
///   such day strictly before today.
///
/// ```swift
/// let parser = InstantParser(now: RFC3339.parse("2026-11-29T12:00:00Z")!, timeZone: .utc)
/// try parser.parse("2h ago")       // 2026-11-29T10:00:00Z
/// try parser.parse("last monday")  // 2026-11-23T00:00:00Z
/// ```
public struct InstantParser: Sendable {
    /// The current instant, in microseconds since the epoch.
    public var now: Int64
    /// The zone that `today`, dates without an offset and calendar units are read in.
    public var timeZone: LocalTimeZone
    /// The instant of the log's last event, when known: `now` is never earlier than it. An
    /// imported event dated ahead of the clock holds every later event at its instant (the log's
    /// time never goes back), and `--as-of now` must still show them. The relative forms
    /// (`today`, `2h ago`) count from ``now`` alone.
    public var logEnd: Int64?

    /// A parser for a given instant and zone.
    public init(now: Int64, timeZone: LocalTimeZone = .system) {
        self.now = now
        self.timeZone = timeZone
    }

    /// A parser for the present moment in the process's time zone.
    public static func current() -> InstantParser {
        InstantParser(now: EventStore.systemClock(), timeZone: .system)
    }

    /// The instant named by `text`, in microseconds since the epoch.
    ///
    /// - Throws: ``InstantParseError`` saying what was wrong and listing the accepted forms.
    public func parse(_ text: String) throws(InstantParseError) -> Int64 {
        try parse(text, upperBound: false)
    }

    /// The instant that `text` names as the upper bound of a range (`log --until`): a form that
    /// names a whole day (`YYYY-MM-DD`, `today`, `yesterday`, `last monday`) is the last
    /// microsecond of that local day, so that the day is in the range; any other form is the
    /// instant ``parse(_:)`` gives. (Before 2026-12-07 `--until 2026-12-07` was that day's first
    /// instant, and `--since 2026-12-07 --until 2026-12-07` found nothing.)
    ///
    /// ```swift
    /// let parser = InstantParser(now: RFC3339.parse("2026-11-29T12:00:00Z")!, timeZone: .utc)
    /// try parser.parseUpperBound("2026-11-29")  // 2026-11-29T23:59:59.999999Z
    /// try parser.parseUpperBound("2026-11-29T10:00")  // 2026-11-29T10:00:00Z
    /// ```
    public func parseUpperBound(_ text: String) throws(InstantParseError) -> Int64 {
        try parse(text, upperBound: true)
    }

    private func parse(_ text: String, upperBound: Bool) throws(InstantParseError) -> Int64 {
        let trimmed = Self.trimmed(text)
        let lowered = String(decoding: trimmed.utf8.map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }, as: UTF8.self)
        let words = lowered.utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 }).map { Array($0) }
        func fail(_ reason: InstantParseError.Reason) -> InstantParseError {
            InstantParseError(reason, input: trimmed)
        }
        guard let first = words.first else { throw fail(.unrecognized) }

        if words.count == 1 {
            switch String(decoding: first, as: UTF8.self) {
            case "now": return max(now, logEnd ?? .min)
            case "today": return try localDay(daysBeforeToday: 0, end: upperBound, fail)
            case "yesterday": return try localDay(daysBeforeToday: 1, end: upperBound, fail)
            default: break
            }
        }
        if words.first.map(Self.startsLikeDate) == true, words.count <= 2 {
            return try parseDate(words.joined(separator: [UInt8(ascii: "t")]).map { $0 }, endOfDay: upperBound, fail)
        }
        if words.count == 2, first == Array("last".utf8) {
            return try lastWeekday(String(decoding: words[1], as: UTF8.self), end: upperBound, fail)
        }
        if words.last == Array("ago".utf8), words.count == 2 || words.count == 3 {
            let amountText: [UInt8]
            let unit: [UInt8]
            if words.count == 3 {
                amountText = first
                unit = words[1]
            } else {
                let digits = first.prefix(while: { $0 &- UInt8(ascii: "0") < 10 })
                guard !digits.isEmpty, digits.count < first.count else { throw fail(.unrecognized) }
                amountText = Array(digits)
                unit = Array(first[digits.count...])
            }
            let amount: Int64
            switch String(decoding: amountText, as: UTF8.self) {
            case "a", "an", "one": amount = 1
            default:
                guard !amountText.isEmpty, amountText.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else {
                    throw fail(.unrecognized)
                }
                guard let value = Self.decimal(amountText) else { throw fail(.outOfRange) }
                amount = value
            }
            return try ago(amount, unit: String(decoding: unit, as: UTF8.self), fail)
        }
        throw fail(.unrecognized)
    }

    /// Whether `text` is the word `now` (any case, surrounding white space ignored): the one form
    /// whose instant depends on ``logEnd``.
    public static func namesNow(_ text: String) -> Bool {
        let word = trimmed(text)
        return word.utf8.count == 3 && word.lowercased() == "now"
    }

    private static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...last])
    }

    /// A decimal number of at most 18 digits (so it fits an `Int64`), else `nil`.
    private static func decimal(_ digits: [UInt8]) -> Int64? {
        let significant = digits.drop(while: { $0 == UInt8(ascii: "0") })
        guard significant.count <= 18 else { return nil }
        return significant.reduce(0) { $0 * 10 + Int64($1 &- UInt8(ascii: "0")) }
    }

    private static func startsLikeDate(_ word: [UInt8]) -> Bool {
        word.count >= 5 && word.prefix(4).allSatisfy({ $0 &- UInt8(ascii: "0") < 10 })
            && word[4] == UInt8(ascii: "-")
    }

    /// `now`, provided it is one that RFC 3339 can name; relative forms compute from it.
    private func checkedNow(_ fail: (InstantParseError.Reason) -> InstantParseError) throws(InstantParseError)
        -> Int64
    {
        guard RFC3339.validRange.contains(now) else { throw fail(.outOfRange) }
        return now
    }

    private func inRange(_ instant: Int64, _ fail: (InstantParseError.Reason) -> InstantParseError)
        throws(InstantParseError) -> Int64
    {
        guard RFC3339.validRange.contains(instant) else { throw fail(.outOfRange) }
        return instant
    }

    /// Local midnight at the start of the day `daysBeforeToday` before the clock's, or with
    /// `end` the last microsecond of that day.
    private func localDay(
        daysBeforeToday: Int64, end: Bool, _ fail: (InstantParseError.Reason) -> InstantParseError
    ) throws(InstantParseError) -> Int64 {
        let today = timeZone.localDay(ofUTC: try checkedNow(fail))
        let day = today - daysBeforeToday
        if end { return endOfLocalDay(day) }
        return try inRange(timeZone.utcMicros(fromLocal: day * microsPerDay), fail)
    }

    /// The last microsecond of the local day `day` (days since 1970-01-01): the one before the
    /// next day's midnight, however long the day (23 or 25 hours where clocks change), and at
    /// most the last instant RFC 3339 names (the end of 9999-12-31 west of UTC is in the year
    /// 10000 there; as an upper bound it is the same as that instant).
    private func endOfLocalDay(_ day: Int64) -> Int64 {
        min(timeZone.utcMicros(fromLocal: (day + 1) * microsPerDay) - 1, RFC3339.validRange.upperBound)
    }

    private static let weekdays: [String: Int] = [
        "sunday": 0, "sun": 0, "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2,
        "wednesday": 3, "wed": 3, "thursday": 4, "thu": 4, "thur": 4, "thurs": 4,
        "friday": 5, "fri": 5, "saturday": 6, "sat": 6,
    ]

    private func lastWeekday(
        _ name: String, end: Bool, _ fail: (InstantParseError.Reason) -> InstantParseError
    ) throws(InstantParseError) -> Int64 {
        guard let target = Self.weekdays[name] else { throw fail(.unknownWeekday(name)) }
        let today = timeZone.localDay(ofUTC: try checkedNow(fail))
        let todayWeekday = CivilDate(daysSinceEpoch: today).weekday
        let back = (todayWeekday - target + 7) % 7
        return try localDay(daysBeforeToday: Int64(back == 0 ? 7 : back), end: end, fail)
    }

    private enum Unit {
        case fixed(micros: Int64)
        case months(Int64)
    }

    private static let units: [String: Unit] = {
        var table: [String: Unit] = [:]
        let names: [([String], Unit)] = [
            (["s", "sec", "secs", "second", "seconds"], .fixed(micros: 1_000_000)),
            (["m", "min", "mins", "minute", "minutes"], .fixed(micros: 60_000_000)),
            (["h", "hr", "hrs", "hour", "hours"], .fixed(micros: 3_600_000_000)),
            (["d", "day", "days"], .fixed(micros: 86_400_000_000)),
            (["w", "wk", "wks", "week", "weeks"], .fixed(micros: 604_800_000_000)),
            (["mo", "mos", "month", "months"], .months(1)),
            (["y", "yr", "yrs", "year", "years"], .months(12)),
        ]
        for (words, unit) in names {
            for word in words { table[word] = unit }
        }
        return table
    }()

    private func ago(
        _ amount: Int64, unit name: String, _ fail: (InstantParseError.Reason) -> InstantParseError
    ) throws(InstantParseError) -> Int64 {
        guard let unit = Self.units[name] else { throw fail(.unknownUnit(name)) }
        let now = try checkedNow(fail)
        switch unit {
        case .fixed(let micros):
            let (span, overflow) = amount.multipliedReportingOverflow(by: micros)
            guard !overflow else { throw fail(.outOfRange) }
            // The span can be nearly as large as Int64 allows, so the subtraction is checked too.
            let (instant, underflow) = now.subtractingReportingOverflow(span)
            guard !underflow else { throw fail(.outOfRange) }
            return try inRange(instant, fail)
        case .months(let perUnit):
            // More than 12 * 10,000 months always leaves the years 1-9999.
            guard amount <= 120_000 else { throw fail(.outOfRange) }
            let local = timeZone.localMicros(fromUTC: now)
            let day = floorDivide(local, microsPerDay)
            let timeOfDay = local - day * microsPerDay
            let date = CivilDate(daysSinceEpoch: day)
            let monthIndex = Int64(date.year) * 12 + Int64(date.month - 1) - amount * perUnit
            let year = Int(floorDivide(monthIndex, 12))
            let month = Int(monthIndex - Int64(year) * 12) + 1
            guard year >= 1 else { throw fail(.outOfRange) }
            let target = CivilDate(
                year: year, month: month, day: min(date.day, CivilDate.daysInMonth(year: year, month: month)))
            return try inRange(timeZone.utcMicros(fromLocal: target.daysSinceEpoch * microsPerDay + timeOfDay), fail)
        }
    }

    /// A date-like word: RFC 3339 with an offset, or a local `YYYY-MM-DD[tHH:MM[:SS]]`;
    /// `endOfDay`: a date alone is the last microsecond of that day rather than its midnight.
    private func parseDate(
        _ word: [UInt8], endOfDay: Bool, _ fail: (InstantParseError.Reason) -> InstantParseError
    ) throws(InstantParseError) -> Int64 {
        if let instant = word.withUnsafeBufferPointer({ RFC3339.parseUnbounded(utf8: $0) }) {
            // Digits past the microsecond are dropped, however many (RFC 3339 sets no limit).
            return try inRange(instant, fail)
        }
        // Read as many fields as are well-formed, so that a date with a field out of range is
        // reported as such even when something else is wrong too.
        var fields: [Int] = []
        let separators: [UInt8] = Array("--t::".utf8)
        var index = 0
        var wellFormed = false
        var dateAlone = false
        for (position, width) in [4, 2, 2, 2, 2, 2].enumerated() {
            guard index + width <= word.count,
                word[index..<(index + width)].allSatisfy({ $0 &- UInt8(ascii: "0") < 10 })
            else { break }
            fields.append(word[index..<(index + width)].reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) })
            index += width
            if index == word.count {
                wellFormed = position == 2 || position >= 4
                dateAlone = position == 2
                break
            }
            guard position < separators.count, word[index] == separators[position] else { break }
            index += 1
        }
        let defaults = [1, 1, 1, 0, 0, 0]
        fields += defaults[fields.count...]
        let (year, month, day, hour, minute, second) = (
            fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
        )
        guard year >= 1, CivilDate.isValid(year: year, month: month, day: day),
            hour <= 23, minute <= 59, second <= 59
        else { throw fail(.invalidDate) }
        guard wellFormed else { throw fail(.unrecognized) }
        if endOfDay && dateAlone {
            return endOfLocalDay(CivilDate(year: year, month: month, day: day).daysSinceEpoch)
        }
        let local =
            CivilDate(year: year, month: month, day: day).daysSinceEpoch * microsPerDay
            + Int64(hour * 3600 + minute * 60 + second) * 1_000_000
        let instant = timeZone.utcMicros(fromLocal: local)
        // A wall-clock time of the years 0001-9999 that the zone's offset moves out of them.
        if !RFC3339.validRange.contains(instant), RFC3339.validRange.contains(local) {
            throw fail(.outOfRangeInUTC(secondsEastOfUTC: Int((local - instant) / 1_000_000)))
        }
        return try inRange(instant, fail)
    }
}
