import Basics
import EventStore
import TestSupport
import Testing

@testable import Notes

@Suite("InstantParser")
struct InstantParserTests {
    /// Sunday 2026-11-29, 12:00 UTC.
    private static let now = utc("2026-11-29T12:00:00Z")
    private static let plusOne = LocalTimeZone.fixed(secondsEastOfUTC: 3600)
    private static let minusFive = LocalTimeZone.fixed(secondsEastOfUTC: -5 * 3600)

    private static func utc(_ text: String) -> Int64 {
        RFC3339.parse(text) ?? Int64.min
    }

    private static func parse(_ text: String, _ zone: LocalTimeZone = plusOne, now: Int64 = now) -> String {
        do {
            return RFC3339.format(micros: try InstantParser(now: now, timeZone: zone).parse(text))
        } catch {
            return "error: \(error.reason)"
        }
    }

    @Test("as an upper bound a form that names a day is its last microsecond, local; an instant is as given")
    func upperBound() throws {
        func bound(_ text: String, _ zone: LocalTimeZone = Self.plusOne) throws -> Int64 {
            try InstantParser(now: Self.now, timeZone: zone).parseUpperBound(text)
        }
        // Before 2026-12-07 `log --until 2026-11-29` ended at that day's midnight.
        #expect(try bound("2026-11-29") == Self.utc("2026-11-29T23:00:00Z") - 1)
        #expect(try bound(" today ") == Self.utc("2026-11-29T23:00:00Z") - 1)
        #expect(try bound("yesterday") == Self.utc("2026-11-28T23:00:00Z") - 1)
        #expect(try bound("last monday") == Self.utc("2026-11-23T23:00:00Z") - 1)
        #expect(try bound("2026-11-29", Self.minusFive) == Self.utc("2026-11-30T05:00:00Z") - 1)
        // A time, an instant or a span is the instant `parse` gives.
        for text in [
            "2026-11-29T10:00", "2026-11-29 10:00:30", "2026-11-29T10:00:00Z", "2h ago", "now", "3 months ago",
        ] {
            #expect(try bound(text) == InstantParser(now: Self.now, timeZone: Self.plusOne).parse(text), "\(text)")
        }
        // A day of 23 hours (clocks forward at 01:00 UTC on 2026-03-29) ends at the next local
        // midnight, whatever its length.
        let spring = Self.utc("2026-03-29T01:00:00Z")
        let paris = LocalTimeZone { $0 < spring / 1_000_000 ? 3600 : 7200 }
        #expect(try bound("2026-03-29", paris) == Self.utc("2026-03-29T22:00:00Z") - 1)
        // The ends of the years notes names: the end of 9999-12-31 west of UTC is the last
        // instant; the end of 0001-01-01 east of it is an instant, where its start is not.
        #expect(try bound("9999-12-31", Self.minusFive) == RFC3339.validRange.upperBound)
        #expect(try bound("0001-01-01") == Self.utc("0001-01-01T23:00:00Z") - 1)
        // What parse refuses, this refuses the same way.
        #expect(throws: InstantParseError(.invalidDate, input: "2026-02-30")) { try bound("2026-02-30") }
        #expect(throws: InstantParseError(.unrecognized, input: "2026-11")) { try bound("2026-11") }
    }

    @Test("`now` is never before the log's last event; the relative forms count from the clock alone")
    func nowAfterTheLogsEnd() throws {
        var parser = InstantParser(now: Self.now, timeZone: .utc)
        parser.logEnd = Self.utc("2026-11-29T17:00:00Z")
        #expect(try parser.parse(" Now ") == Self.utc("2026-11-29T17:00:00Z"))
        #expect(try parser.parse("today") == Self.utc("2026-11-29T00:00:00Z"))
        #expect(try parser.parse("2h ago") == Self.utc("2026-11-29T10:00:00Z"))
        parser.logEnd = Self.utc("2026-11-29T08:00:00Z")
        #expect(try parser.parse("now") == Self.now, "a log that ends before the clock leaves now alone")
        #expect(InstantParser.namesNow("\tNOW ") && !InstantParser.namesNow("now-ish"))
    }

    @Test(
        "accepted forms, in a zone one hour east of UTC",
        arguments: [
            ("now", "2026-11-29T12:00:00.000000Z"),
            ("  NOW\t", "2026-11-29T12:00:00.000000Z"),
            ("today", "2026-11-28T23:00:00.000000Z"),
            ("Today", "2026-11-28T23:00:00.000000Z"),
            ("yesterday", "2026-11-27T23:00:00.000000Z"),
            ("2026-11-29T12:00:00Z", "2026-11-29T12:00:00.000000Z"),
            ("2026-11-29t12:00:00.25+02:00", "2026-11-29T10:00:00.250000Z"),
            ("2026-11-29 12:00:00-05:00", "2026-11-29T17:00:00.000000Z"),
            // Typed, any number of fraction digits: those past the microsecond are dropped.
            ("2026-12-06T04:00:00.1234567890Z", "2026-12-06T04:00:00.123456Z"),
            ("2026-10-03", "2026-10-02T23:00:00.000000Z"),
            ("2026-10-03T08:15", "2026-10-03T07:15:00.000000Z"),
            ("2026-10-03 08:15", "2026-10-03T07:15:00.000000Z"),
            ("2026-10-03t08:15:30", "2026-10-03T07:15:30.000000Z"),
            ("2026-10-03   08:15", "2026-10-03T07:15:00.000000Z"),
            ("2h ago", "2026-11-29T10:00:00.000000Z"),
            ("30m ago", "2026-11-29T11:30:00.000000Z"),
            ("45s ago", "2026-11-29T11:59:15.000000Z"),
            ("3 days ago", "2026-11-26T12:00:00.000000Z"),
            ("3  DAYS  AGO", "2026-11-26T12:00:00.000000Z"),
            ("1 day ago", "2026-11-28T12:00:00.000000Z"),
            ("1 week ago", "2026-11-22T12:00:00.000000Z"),
            ("2w ago", "2026-11-15T12:00:00.000000Z"),
            ("90 minutes ago", "2026-11-29T10:30:00.000000Z"),
            ("1 min ago", "2026-11-29T11:59:00.000000Z"),
            ("5 hrs ago", "2026-11-29T07:00:00.000000Z"),
            ("10 seconds ago", "2026-11-29T11:59:50.000000Z"),
            ("an hour ago", "2026-11-29T11:00:00.000000Z"),
            ("a day ago", "2026-11-28T12:00:00.000000Z"),
            ("0 days ago", "2026-11-29T12:00:00.000000Z"),
            ("007d ago", "2026-11-22T12:00:00.000000Z"),
            ("2 months ago", "2026-09-29T12:00:00.000000Z"),
            ("1mo ago", "2026-10-29T12:00:00.000000Z"),
            ("11 months ago", "2025-12-29T12:00:00.000000Z"),
            ("1 year ago", "2025-11-29T12:00:00.000000Z"),
            ("2y ago", "2024-11-29T12:00:00.000000Z"),
            ("last monday", "2026-11-22T23:00:00.000000Z"),
            ("last tuesday", "2026-11-23T23:00:00.000000Z"),
            ("last saturday", "2026-11-27T23:00:00.000000Z"),
            ("last sunday", "2026-11-21T23:00:00.000000Z"),
            ("Last Fri", "2026-11-26T23:00:00.000000Z"),
        ])
    func accepted(text: String, expected: String) {
        #expect(Self.parse(text) == expected)
    }

    @Test("local forms follow the injected zone")
    func zones() {
        // 12:00 UTC is 07:00 in a zone five hours west, still the 29th.
        #expect(Self.parse("today", Self.minusFive) == "2026-11-29T05:00:00.000000Z")
        #expect(Self.parse("yesterday", Self.minusFive) == "2026-11-28T05:00:00.000000Z")
        #expect(Self.parse("2026-10-03", Self.minusFive) == "2026-10-03T05:00:00.000000Z")
        #expect(Self.parse("last sunday", Self.minusFive) == "2026-11-22T05:00:00.000000Z")
        // At 02:00 UTC on Sunday it is still Saturday evening there, so "last saturday" is a week back.
        let early = Self.utc("2026-11-29T02:00:00Z")
        #expect(Self.parse("today", Self.minusFive, now: early) == "2026-11-28T05:00:00.000000Z")
        #expect(Self.parse("last saturday", Self.minusFive, now: early) == "2026-11-21T05:00:00.000000Z")
        #expect(Self.parse("last friday", Self.minusFive, now: early) == "2026-11-27T05:00:00.000000Z")
        #expect(Self.parse("today", .utc) == "2026-11-29T00:00:00.000000Z")
        // RFC 3339 instants do not depend on the zone.
        #expect(Self.parse("2026-11-29T12:00:00Z", Self.minusFive) == "2026-11-29T12:00:00.000000Z")
    }

    @Test("calendar months and years clamp the day and keep local time of day")
    func calendarUnits() {
        let endOfMarch = Self.utc("2024-03-31T10:30:00Z")
        #expect(Self.parse("1 month ago", .utc, now: endOfMarch) == "2024-02-29T10:30:00.000000Z")
        #expect(Self.parse("13 months ago", .utc, now: endOfMarch) == "2023-02-28T10:30:00.000000Z")
        #expect(Self.parse("3 months ago", .utc, now: endOfMarch) == "2023-12-31T10:30:00.000000Z")
        let leapDay = Self.utc("2024-02-29T00:00:00Z")
        #expect(Self.parse("1 year ago", .utc, now: leapDay) == "2023-02-28T00:00:00.000000Z")
        #expect(Self.parse("4 years ago", .utc, now: leapDay) == "2020-02-29T00:00:00.000000Z")
        #expect(Self.parse("2025 years ago", .utc) == "0001-11-29T12:00:00.000000Z")
        #expect(Self.parse("2026 years ago", .utc) == "error: outOfRange")
    }

    /// A zone like old Brazilian rules: at 2026-11-01 03:00 UTC, local 00:00 becomes 01:00
    /// (UTC-3 to UTC-2); at 2027-02-21 02:00 UTC, local 00:00 becomes 23:00 of the day before.
    private static let daylightSaving = LocalTimeZone { seconds in
        let springForward = Int64(1_793_502_000)  // 2026-11-01T03:00:00Z
        let fallBack = Int64(1_803_175_200)  // 2027-02-21T02:00:00Z
        return seconds >= springForward && seconds < fallBack ? -2 * 3600 : -3 * 3600
    }

    @Test("wall-clock times skipped or repeated by daylight saving resolve like mktime")
    func daylightSavingTransitions() {
        let zone = Self.daylightSaving
        #expect(RFC3339.parse("2026-11-01T03:00:00Z") == 1_793_502_000_000_000)
        #expect(RFC3339.parse("2027-02-21T02:00:00Z") == 1_803_175_200_000_000)
        // Midnight of 1 November does not exist; the day starts at the change, and a skipped
        // time moves forward by the gap.
        #expect(Self.parse("2026-11-01", zone) == "2026-11-01T03:00:00.000000Z")
        #expect(Self.parse("2026-11-01T00:30", zone) == "2026-11-01T03:30:00.000000Z")
        #expect(Self.parse("2026-11-01T01:30", zone) == "2026-11-01T03:30:00.000000Z")
        #expect(Self.parse("2026-10-31", zone) == "2026-10-31T03:00:00.000000Z")
        #expect(Self.parse("2026-11-02", zone) == "2026-11-02T02:00:00.000000Z")
        // 20 February 23:30 happens twice; the earlier is chosen.
        #expect(Self.parse("2027-02-20T23:30", zone) == "2027-02-21T01:30:00.000000Z")
        #expect(Self.parse("2027-02-21", zone) == "2027-02-21T03:00:00.000000Z")
        let afterSpringForward = Self.utc("2026-11-01T15:00:00Z")
        #expect(Self.parse("today", zone, now: afterSpringForward) == "2026-11-01T03:00:00.000000Z")
        #expect(Self.parse("yesterday", zone, now: afterSpringForward) == "2026-10-31T03:00:00.000000Z")
        #expect(Self.parse("1 month ago", zone, now: afterSpringForward) == "2026-10-01T16:00:00.000000Z")
    }

    @Test(
        "what is wrong is named",
        arguments: [
            ("tomorow", InstantParseError.Reason.unrecognized),
            ("", .unrecognized),
            ("   ", .unrecognized),
            ("ago", .unrecognized),
            ("3 ago", .unrecognized),
            ("h ago", .unrecognized),
            ("-3 days ago", .unrecognized),
            ("3 days", .unrecognized),
            ("3 days from now", .unrecognized),
            ("in 3 days", .unrecognized),
            ("2h", .unrecognized),
            ("last", .unrecognized),
            ("last week", .unknownWeekday("week")),
            ("last funday", .unknownWeekday("funday")),
            ("3 fortnights ago", .unknownUnit("fortnights")),
            ("3x ago", .unknownUnit("x")),
            ("2026-11-29T", .unrecognized),
            ("2026-11-29T12", .unrecognized),
            ("2026-11-29 noon", .unrecognized),
            ("2026-11-29 12:00 extra", .unrecognized),
            ("2026/11/29", .unrecognized),
            ("2026-11-29T12:00:00+01", .unrecognized),
            ("2026-02-30", .invalidDate),
            ("2026-13-01", .invalidDate),
            ("2026-11-29T24:00", .invalidDate),
            ("2026-11-29T12:60", .invalidDate),
            ("2026-02-30T12:00:00Z", .invalidDate),
            ("0000-01-01", .invalidDate),
            ("99999999999999 days ago", .outOfRange),
            ("99999999999999999999999999999 seconds ago", .outOfRange),
            ("9223372036854775807 weeks ago", .outOfRange),
            ("999999 years ago", .outOfRange),
            ("100000000 hours ago", .outOfRange),
            // Local midnight of 0001-01-01 an hour east of UTC is still the year 0 in UTC.
            ("0001-01-01", .outOfRangeInUTC(secondsEastOfUTC: 3600)),
            ("0001-01-01T00:59", .outOfRangeInUTC(secondsEastOfUTC: 3600)),
            // RFC 3339 instants past the years the store holds are out of range, not unrecognized.
            ("9999-12-31T23:59:59-01:00", .outOfRange),
            ("0001-01-01T00:00:00+14:00", .outOfRange),
        ])
    func rejects(text: String, reason: InstantParseError.Reason) {
        #expect(throws: InstantParseError(reason, input: text.trimmingSpaces())) {
            try InstantParser(now: Self.now, timeZone: Self.plusOne).parse(text)
        }
    }

    @Test("messages say what was wrong and list the accepted forms")
    func messages() {
        let unrecognized = InstantParseError(.unrecognized, input: "tomorow")
        #expect(
            unrecognized.description
                == #"unrecognized date "tomorow"; use RFC 3339 (2026-11-29T12:00:00Z), YYYY-MM-DD, "#
                + #"YYYY-MM-DDTHH:MM, today, yesterday, "3 days ago", "2h ago" or "last monday""#)
        #expect(
            InstantParseError(.invalidDate, input: "2026-02-30").description.hasPrefix(#"invalid date "2026-02-30""#))
        #expect(
            InstantParseError(.outOfRange, input: "99999999999999 days ago").description
                == #"date "99999999999999 days ago" is out of range (years 0001 to 9999)"#)
        #expect(
            InstantParseError(.unknownUnit("fortnights"), input: "3 fortnights ago").description.contains("hours (h)"))
        #expect(InstantParseError(.unknownWeekday("funday"), input: "last funday").description.contains("last monday"))
        // Named by the option it was given to, with the forms it takes (a new user's trial: before
        // 2026-12-06 `--at -1` said "unrecognized date" without the option or the versions).
        #expect(
            InstantParseError(.unrecognized, input: "-1").message(option: "--at", versions: true)
                == #"--at "-1" is not a version or an instant; give a version (3 or v3) or an instant: "#
                + #"RFC 3339 (2026-11-29T12:00:00Z), YYYY-MM-DD, YYYY-MM-DDTHH:MM, today, yesterday, "#
                + #""3 days ago", "2h ago" or "last monday""#)
        #expect(
            InstantParseError(.unrecognized, input: "-1").message(option: "--since")
                .hasPrefix(#"--since "-1" is not an instant; use RFC 3339 (2026-11-29T12:00:00Z), "#))
        #expect(
            InstantParseError(.outOfRangeInUTC(secondsEastOfUTC: 3600), input: "0001-01-01").message(option: "--at")
                == #"--at "0001-01-01" is local time (UTC+01:00), before 0001-01-01T00:00:00Z, the earliest "#
                + "instant notes can name; give 0001-01-01T00:00:00Z (UTC) or a later instant")
        #expect(
            InstantParseError(.outOfRangeInUTC(secondsEastOfUTC: -19_800), input: "9999-12-31T23:30").description
                .hasPrefix(#"date "9999-12-31T23:30" is local time (UTC-05:30), after 9999-12-31T23:59:59Z"#))
        // A zone's offset with seconds (the local mean time the zone database gives for the year
        // 1: Paris's +00:09:21, New York's -04:56:02) is named with them: before 2026-12-07 the
        // seconds were dropped, "UTC+00:09".
        #expect(
            InstantParseError(.outOfRangeInUTC(secondsEastOfUTC: 561), input: "0001-01-01").message(option: "--at")
                .hasPrefix(#"--at "0001-01-01" is local time (UTC+00:09:21), before 0001-01-01T00:00:00Z"#))
        #expect(
            InstantParseError(.outOfRangeInUTC(secondsEastOfUTC: -17_762), input: "9999-12-31T23:00").description
                .contains("(UTC-04:56:02), after 9999-12-31T23:59:59Z"))
        #expect(
            InstantParseError(.unknownUnit("fortnights"), input: "3 fortnights ago").message(option: "--until")
                .hasPrefix(#"--until unknown time unit "fortnights""#))
        // Control characters are not echoed to the terminal, and long input is cut.
        let hostile = InstantParseError(.unrecognized, input: "\u{1B}[2J" + String(repeating: "x", count: 500))
        #expect(!hostile.description.contains("\u{1B}"))
        #expect(hostile.description.utf8.count < 400)
    }

    @Test("a clock outside the supported years is an error for relative forms, not a trap")
    func extremeClock() {
        for now in [Int64.min, Int64.max, RFC3339.validRange.upperBound + 1] {
            let parser = InstantParser(now: now, timeZone: .fixed(secondsEastOfUTC: 14 * 3600))
            #expect((try? parser.parse("now")) == now)
            for text in ["today", "yesterday", "3 days ago", "1 year ago", "last monday"] {
                #expect(throws: InstantParseError(.outOfRange, input: text)) { try parser.parse(text) }
            }
        }
        // A zone function that returns nonsense is clamped rather than trusted.
        let wild = InstantParser(now: Self.now, timeZone: LocalTimeZone { _ in Int.max })
        #expect((try? wild.parse("today")) != nil)
        #expect((try? wild.parse("2026-01-01")) != nil)
    }

    @Test("random and mutated input never traps")
    func robustness() {
        var random = SeededGenerator(seed: 0x7157)
        let words = [
            "now", "today", "yesterday", "last", "ago", "monday", "sun", "days", "h", "m", "mo", "y", "w",
            "a", "an", "2026-11-29", "12:00", "T", "Z", "+01:00", "-", ":", " ", "  ", "0", "7", "99999999999999999999",
            "9223372036854775807", "é", "\u{0}", "\t", "2026-02-29t23:59:60z", ".", "1e5", "０",
        ]
        let parser = InstantParser(now: Self.now, timeZone: Self.daylightSaving)
        var accepted = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<(random.next() % 5) {
                text += words[Int(random.next() % UInt64(words.count))]
                if random.next() % 3 == 0 { text += " " }
            }
            if random.next() % 4 == 0, !text.isEmpty {
                var bytes = Array(text.utf8)
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                text = String(decoding: bytes, as: UTF8.self)
            }
            do {
                let instant = try parser.parse(text)
                accepted += 1
                #expect(RFC3339.validRange.contains(instant))
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
        #expect(accepted > 200)
    }

    @Test("the system zone agrees with the C library")
    func systemZone() {
        // Whatever TZ is, UTC offsets are under a day and the round trip through local time holds.
        let zone = LocalTimeZone.system
        let offset = zone.offset(atUTCSeconds: Self.now / 1_000_000)
        #expect(abs(offset) < 86_400)
        #expect(zone.utcMicros(fromLocal: zone.localMicros(fromUTC: Self.now)) == Self.now)
        _ = InstantParser.current()
    }
}

@Suite("RelativeTime")
struct RelativeTimeTests {
    private static let now = RFC3339.parse("2026-11-29T12:00:00Z") ?? 0

    private static func describe(secondsAgo: Int64, _ zone: LocalTimeZone = .fixed(secondsEastOfUTC: 3600)) -> String {
        RelativeTime.describe(micros: now - secondsAgo * 1_000_000, now: now, timeZone: zone)
    }

    private static let hour: Int64 = 3600
    private static let day: Int64 = 86_400
    private static let cases: [(Int64, String)] = [
        (0, "just now"), (59, "just now"), (60, "1 minute ago"), (119, "1 minute ago"),
        (300, "5 minutes ago"), (3599, "59 minutes ago"), (hour, "1 hour ago"), (3 * hour, "3 hours ago"),
        (day - 1, "23 hours ago"), (day, "yesterday"), (day + 11 * hour, "yesterday"),
        (day + 14 * hour, "2 days ago"), (4 * day, "4 days ago"), (6 * day, "6 days ago"),
        (7 * day, "2026-11-22"), (57 * day, "2026-10-03"), (400 * day, "2025-10-25"),
        (-30, "just now"), (-60, "just now"), (-61, "2026-11-29"), (-3 * day, "2026-12-02"),
    ]

    @Test("recent instants read relative, older ones as a local date", arguments: cases)
    func describes(secondsAgo: Int64, expected: String) {
        #expect(Self.describe(secondsAgo: secondsAgo) == expected)
    }

    @Test("calendar days are counted in the injected zone")
    func zoneMatters() {
        // 30 hours before 12:00 UTC is 06:00 UTC the day before: local 01:00 on the 28th at UTC+1,
        // but 20:00 on the 27th at UTC-10.
        #expect(Self.describe(secondsAgo: 30 * 3600) == "yesterday")
        #expect(Self.describe(secondsAgo: 30 * 3600, .fixed(secondsEastOfUTC: -10 * 3600)) == "2 days ago")
        #expect(Self.describe(secondsAgo: 8 * 86_400, .fixed(secondsEastOfUTC: -13 * 3600)) == "2026-11-20")
    }

    @Test("extreme instants never trap")
    func extremes() {
        #expect(RelativeTime.describe(micros: .min, now: .max, timeZone: .utc) == "-290308-12-21")
        #expect(RelativeTime.describe(micros: .max, now: .min, timeZone: .utc) == "294247-01-10")
        #expect(RelativeTime.describe(micros: .max, now: .max, timeZone: .fixed(secondsEastOfUTC: 3600)) == "just now")
        _ = RelativeTime.describe(
            micros: .min, now: .min + 86_400_000_000 * 3, timeZone: .fixed(secondsEastOfUTC: -3600))
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}
