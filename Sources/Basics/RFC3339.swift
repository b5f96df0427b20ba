import Glibc

/// A date in the proleptic Gregorian calendar, with conversions to and from days since
/// 1970-01-01 (Howard Hinnant's `days_from_civil` / `civil_from_days`).
///
/// ```swift
/// CivilDate(daysSinceEpoch: 0)                          // 1970-01-01
/// CivilDate(year: 2026, month: 11, day: 29).daysSinceEpoch  // 20_421
/// ```
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year; 0 is 1 BC, as in ISO 8601.
    public var year: Int
    /// The month, 1...12.
    public var month: Int
    /// The day of the month, 1...31.
    public var day: Int

    /// A date from its fields, unchecked; see ``isValid(year:month:day:)``.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01 (before it when negative).
    ///
    /// Exact for any day count that an `Int64` of microseconds can reach; wrapping arithmetic
    /// keeps absurd inputs from trapping.
    public init(daysSinceEpoch days: Int64) {
        let z = Int(truncatingIfNeeded: days) &+ 719_468
        let era = (z >= 0 ? z : z &- 146_096) / 146_097
        let dayOfEra = z &- era &* 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = (yearOfEra &+ era &* 400) &+ (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01 (negative before it). Fields out of range give a number but not a
    /// meaningful one; never a trap.
    public var daysSinceEpoch: Int64 {
        let y = year &- (month <= 2 ? 1 : 0)
        let era = (y >= 0 ? y : y &- 399) / 400
        let yearOfEra = y &- era &* 400
        let dayOfYear = (153 &* (month > 2 ? month &- 3 : month &+ 9) &+ 2) / 5 &+ day &- 1
        let dayOfEra = yearOfEra &* 365 &+ yearOfEra / 4 &- yearOfEra / 100 &+ dayOfYear
        return Int64(truncatingIfNeeded: era &* 146_097 &+ dayOfEra &- 719_468)
    }

    /// Day of the week: 0 is Sunday, 1 Monday, ..., 6 Saturday.
    public var weekday: Int {
        let days = daysSinceEpoch
        // 1970-01-01 was a Thursday (4).
        return Int(days >= -4 ? (days &+ 4) % 7 : (days &+ 5) % 7 &+ 6)
    }

    /// Whether `year` has a 29 February.
    public static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The number of days in `month` (1...12) of `year`; 0 for a month out of range.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: 31
        case 4, 6, 9, 11: 30
        case 2: isLeapYear(year) ? 29 : 28
        default: 0
        }
    }

    /// Whether the fields name a real day (any year; month 1...12; day within the month).
    public static func isValid(year: Int, month: Int, day: Int) -> Bool {
        day >= 1 && day <= daysInMonth(year: year, month: month)
    }

    /// `YYYY-MM-DD`, zero-padded; years outside 0...9999 get a sign or more digits.
    public var description: String {
        var text = ""
        if year >= 0 && year <= 9999 {
            appendPadded(year, width: 4, to: &text)
        } else {
            text += String(year)
        }
        text += "-"
        appendPadded(month, width: 2, to: &text)
        text += "-"
        appendPadded(day, width: 2, to: &text)
        return text
    }

    private func appendPadded(_ value: Int, width: Int, to text: inout String) {
        let digits = String(value)
        text += String(repeating: "0", count: max(0, width - digits.utf8.count)) + digits
    }

    /// Chronological order.
    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// Instants as RFC 3339 text. The store keeps instants as microseconds since the Unix epoch
/// (UTC, `Int64`); this is how they are written for people and read back.
///
/// ```swift
/// RFC3339.format(micros: 1_795_953_600_123_456)   // "2026-11-29T12:00:00.123456Z"
/// RFC3339.parse("2026-11-29T13:00:00.123456+01:00")  // 1_795_953_600_123_456
/// ```
public enum RFC3339 {
    /// Microseconds per day.
    static let microsPerDay: Int64 = 86_400_000_000

    /// The instants that RFC 3339 can name: 0001-01-01T00:00:00Z through
    /// 9999-12-31T23:59:59.999999Z.
    public static let validRange: ClosedRange<Int64> =
        -62_135_596_800_000_000...253_402_300_799_999_999

    /// `2026-11-29T12:00:00.123456Z`: UTC, always six fractional digits, so that the text sorts
    /// like the instant. Outside ``validRange`` the year is written with a sign or five digits,
    /// which ``parse(_:)`` rejects.
    public static func format(micros: Int64) -> String {
        var days = micros / microsPerDay
        var remainder = micros % microsPerDay
        if remainder < 0 {
            days -= 1
            remainder += microsPerDay
        }
        let date = CivilDate(daysSinceEpoch: days)
        let fraction = Int(remainder % 1_000_000)
        let secondOfDay = Int(remainder / 1_000_000)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        if date.year >= 0 && date.year <= 9999 {
            appendDigits(date.year, count: 4, to: &bytes)
            bytes.append(UInt8(ascii: "-"))
            appendDigits(date.month, count: 2, to: &bytes)
            bytes.append(UInt8(ascii: "-"))
            appendDigits(date.day, count: 2, to: &bytes)
        } else {
            bytes.append(contentsOf: date.description.utf8)
        }
        bytes.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(fraction, count: 6, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the last `count` decimal digits of a non-negative `value`.
    private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// The instant named by an RFC 3339 date-time, or `nil` when the text is not one or it falls
    /// outside ``validRange``.
    ///
    /// Accepts `T`, `t` or a space between date and time; `Z`, `z` or a `±hh:mm` offset; and
    /// 1 to 9 fractional digits (beyond microseconds they are truncated toward the past). Fields
    /// are range-checked, including the days of each month in leap and common years. A leap
    /// second (`:60`) is read as the first second of the next minute, as POSIX time does; it is
    /// accepted only in the last minute of a day in UTC (`23:59:60Z`, `15:59:60-08:00`), where
    /// leap seconds are inserted (RFC 3339, section 5.7): `12:34:60` is not a time.
    public static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// ``parse(_:)`` over UTF-8 bytes.
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let micros = parse(utf8: bytes, fractionDigits: 9) else { return nil }
        return validRange.contains(micros) ? micros : nil
    }

    /// The instant an RFC 3339 date-time names, in or out of ``validRange``, with any number of
    /// fractional digits: what a person may type, told apart from what is not a date-time at all
    /// (for a message that says which). Nil when the text is not one.
    public static func parseUnbounded(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        parse(utf8: bytes, fractionDigits: .max)
    }

    private static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>, fractionDigits: Int) -> Int64? {
        var cursor = DigitCursor(bytes)
        guard let year = cursor.number(digits: 4), year >= 1,
            cursor.skip(UInt8(ascii: "-")), let month = cursor.number(digits: 2),
            cursor.skip(UInt8(ascii: "-")), let day = cursor.number(digits: 2),
            CivilDate.isValid(year: year, month: month, day: day),
            cursor.skip(anyOf: UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")),
            let hour = cursor.number(digits: 2), hour <= 23,
            cursor.skip(UInt8(ascii: ":")), let minute = cursor.number(digits: 2), minute <= 59,
            cursor.skip(UInt8(ascii: ":")), let second = cursor.number(digits: 2), second <= 60
        else { return nil }
        var fraction = 0
        if cursor.skip(UInt8(ascii: ".")) {
            var digits = 0
            while let digit = cursor.digit() {
                digits += 1
                guard digits <= fractionDigits else { return nil }
                if digits <= 6 { fraction = fraction * 10 + digit }
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 6)..<6 { fraction *= 10 }
        }
        var offsetSeconds = 0
        if !cursor.skip(anyOf: UInt8(ascii: "Z"), UInt8(ascii: "z")) {
            let sign: Int
            if cursor.skip(UInt8(ascii: "+")) {
                sign = 1
            } else if cursor.skip(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHour = cursor.number(digits: 2), offsetHour <= 23,
                cursor.skip(UInt8(ascii: ":")),
                let offsetMinute = cursor.number(digits: 2), offsetMinute <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard cursor.atEnd else { return nil }
        if second == 60 {
            let utcMinute = ((hour * 60 + minute - offsetSeconds / 60) % 1440 + 1440) % 1440
            guard utcMinute == 23 * 60 + 59 else { return nil }
        }
        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        return seconds * 1_000_000 + Int64(fraction)
    }
}

/// Reads fixed-width ASCII fields; every read is bounds-checked.
struct DigitCursor {
    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    /// The next byte if it is a decimal digit, consuming it.
    mutating func digit() -> Int? {
        guard index < bytes.count else { return nil }
        let value = bytes[index] &- UInt8(ascii: "0")
        guard value < 10 else { return nil }
        index += 1
        return Int(value)
    }

    /// Exactly `digits` decimal digits as a number.
    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    /// Consumes `byte` if it is next.
    mutating func skip(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Consumes the next byte if it is one of `choices`.
    mutating func skip(anyOf choices: UInt8...) -> Bool {
        guard index < bytes.count, choices.contains(bytes[index]) else { return false }
        index += 1
        return true
    }
}
