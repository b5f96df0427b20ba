import EventStore
import TestSupport
import Testing

@testable import Basics

@Suite("Timestamp")
struct TimestampTests {
    @Test("known dates convert both ways")
    func knownDates() {
        let cases: [(Int, Int, Int, Int64, Int)] = [
            (1970, 1, 1, 0, 4), (1969, 12, 31, -1, 3), (2000, 1, 1, 10_957, 6), (2000, 3, 1, 11_017, 3),
            (2026, 11, 29, 20_786, 0), (1, 1, 1, -719_162, 1), (9999, 12, 31, 2_932_896, 5),
            (1600, 2, 29, -135_081, 2), (2024, 2, 29, 19_782, 4),
        ]
        for (year, month, day, days, weekday) in cases {
            let date = CivilDate(year: year, month: month, day: day)
            #expect(date.daysSinceEpoch == days, "\(date)")
            #expect(CivilDate(daysSinceEpoch: days) == date)
            #expect(date.weekday == weekday, "\(date)")
        }
    }

    @Test("every day from 0001-01-01 to 9999-12-31 round-trips and follows the previous one")
    func everyDay() {
        var previous = CivilDate(year: 0, month: 12, day: 31)
        var mismatches = 0
        var weekday = 0  // 0000-12-31 was a Sunday.
        #expect(previous.weekday == weekday)
        for days in Int64(-719_162)...2_932_896 {
            let date = CivilDate(daysSinceEpoch: days)
            let followsPrevious =
                (date.year == previous.year && date.month == previous.month && date.day == previous.day + 1)
                || (date.year == previous.year && date.month == previous.month + 1 && date.day == 1
                    && previous.day == CivilDate.daysInMonth(year: previous.year, month: previous.month))
                || (date.year == previous.year + 1 && date.month == 1 && date.day == 1 && previous.month == 12
                    && previous.day == 31)
            weekday = (weekday + 1) % 7
            if !followsPrevious || date.daysSinceEpoch != days || date.weekday != weekday {
                mismatches += 1
            }
            previous = date
        }
        #expect(mismatches == 0)
        #expect(previous == CivilDate(year: 9999, month: 12, day: 31))
    }

    @Test("leap years and month lengths")
    func leapYears() {
        #expect(CivilDate.isLeapYear(2000))
        #expect(CivilDate.isLeapYear(2024))
        #expect(!CivilDate.isLeapYear(1900))
        #expect(!CivilDate.isLeapYear(2100))
        #expect(!CivilDate.isLeapYear(2026))
        #expect(CivilDate.daysInMonth(year: 2024, month: 2) == 29)
        #expect(CivilDate.daysInMonth(year: 2023, month: 2) == 28)
        #expect(CivilDate.daysInMonth(year: 2023, month: 4) == 30)
        #expect(CivilDate.daysInMonth(year: 2023, month: 12) == 31)
        #expect(CivilDate.daysInMonth(year: 2023, month: 13) == 0)
        #expect(CivilDate.isValid(year: 2024, month: 2, day: 29))
        #expect(!CivilDate.isValid(year: 2023, month: 2, day: 29))
        #expect(!CivilDate.isValid(year: 2023, month: 0, day: 1))
        #expect(!CivilDate.isValid(year: 2023, month: 1, day: 0))
    }

    @Test("dates render as YYYY-MM-DD and sort chronologically")
    func dateDescription() {
        #expect(CivilDate(year: 2026, month: 10, day: 3).description == "2026-10-03")
        #expect(CivilDate(year: 7, month: 1, day: 9).description == "0007-01-09")
        #expect(CivilDate(year: 12345, month: 1, day: 1).description == "12345-01-01")
        #expect(CivilDate(year: -1, month: 1, day: 1).description == "-1-01-01")
        #expect(CivilDate(year: 2026, month: 1, day: 31) < CivilDate(year: 2026, month: 2, day: 1))
    }

    @Test("absurd day counts and fields never trap")
    func extremes() {
        for days in [Int64.min, Int64.min + 1, -1 << 40, 1 << 40, Int64.max - 1, Int64.max] {
            _ = CivilDate(daysSinceEpoch: days).description
        }
        _ = CivilDate(year: .max, month: .min, day: .max).daysSinceEpoch
        _ = CivilDate(year: .min, month: .max, day: .min).weekday
        _ = CivilDate.isValid(year: .min, month: 2, day: 29)
    }

    @Test("format writes UTC with six fractional digits")
    func format() {
        #expect(RFC3339.format(micros: 0) == "1970-01-01T00:00:00.000000Z")
        #expect(RFC3339.format(micros: 1_795_953_600_123_456) == "2026-11-29T12:00:00.123456Z")
        #expect(RFC3339.format(micros: -1) == "1969-12-31T23:59:59.999999Z")
        #expect(RFC3339.format(micros: -86_400_000_000) == "1969-12-31T00:00:00.000000Z")
        #expect(RFC3339.format(micros: 951_782_400_000_001) == "2000-02-29T00:00:00.000001Z")
        #expect(RFC3339.format(micros: RFC3339.validRange.lowerBound) == "0001-01-01T00:00:00.000000Z")
        #expect(RFC3339.format(micros: RFC3339.validRange.upperBound) == "9999-12-31T23:59:59.999999Z")
        #expect(RFC3339.format(micros: Int64.max) == "294247-01-10T04:00:54.775807Z")
        #expect(RFC3339.format(micros: Int64.min) == "-290308-12-21T19:59:05.224192Z")
    }

    @Test(
        "parse accepts the RFC 3339 forms",
        arguments: [
            ("2026-11-29T12:00:00Z", Int64(1_795_953_600_000_000)),
            ("2026-11-29t12:00:00z", 1_795_953_600_000_000),
            ("2026-11-29 12:00:00Z", 1_795_953_600_000_000),
            ("2026-11-29T13:00:00+01:00", 1_795_953_600_000_000),
            ("2026-11-29T06:30:00-05:30", 1_795_953_600_000_000),
            ("2026-11-29T12:00:00-00:00", 1_795_953_600_000_000),
            ("2026-11-29T12:00:00.1Z", 1_795_953_600_100_000),
            ("2026-11-29T12:00:00.123456Z", 1_795_953_600_123_456),
            ("2026-11-29T12:00:00.123456789Z", 1_795_953_600_123_456),
            ("2026-11-29T12:00:00.000000999Z", 1_795_953_600_000_000),
            ("1969-12-31T23:59:59.9999999Z", -1),
            ("1970-01-01T00:00:00Z", 0),
            ("2024-02-29T00:00:00Z", 1_709_164_800_000_000),
            ("2000-02-29T00:00:00Z", 951_782_400_000_000),
            ("2016-12-31T23:59:60Z", 1_483_228_800_000_000),
            ("2016-12-31T15:59:60-08:00", 1_483_228_800_000_000), ("2017-01-01T00:59:60+01:00", 1_483_228_800_000_000),
            ("0001-01-01T00:00:00Z", RFC3339.validRange.lowerBound),
            ("9999-12-31T23:59:59.999999Z", RFC3339.validRange.upperBound),
            ("0001-01-01T00:59:00+00:59", RFC3339.validRange.lowerBound),
            ("9999-12-31T23:59:59.999999+23:59", RFC3339.validRange.upperBound - 86_340_000_000),
        ])
    func parses(text: String, micros: Int64) {
        #expect(RFC3339.parse(text) == micros)
    }

    @Test(
        "parse rejects malformed text and impossible fields",
        arguments: [
            "", "2026-11-29", "2026-11-29T12:00Z", "2026-11-29T12:00:00", "2026-11-29T12:00:00+01",
            "2026-11-29T12:00:00+0100", "2026-11-29T12:00:00 Z", " 2026-11-29T12:00:00Z", "2026-11-29T12:00:00Z ",
            "2026-11-29X12:00:00Z", "2026-11-29T12:00:00.Z", "2026-11-29T12:00:00.1234567890Z",
            "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-04-31T00:00:00Z",
            "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z",
            "2026-01-01T23:59:61Z", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+01:60",
            // A leap second is the last of a UTC day, nowhere else.
            "2026-01-01T12:34:60Z", "2016-12-31T23:58:60Z", "2016-12-31T23:59:60+01:00",
            "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
            "10000-01-01T00:00:00Z", "-001-01-01T00:00:00Z", "+2026-11-29T12:00:00Z", "2026-1-29T12:00:00Z",
            "２０２６-11-29T12:00:00Z", "2026-11-29T12:00:00ZZ", "2026-11-29T12:00:00\u{0}",
        ])
    func rejects(text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test("format then parse is the identity over the whole valid range")
    func roundTrip() {
        var random = SeededGenerator(seed: 3339)
        let span = UInt64(RFC3339.validRange.upperBound - RFC3339.validRange.lowerBound)
        for _ in 0..<20_000 {
            let micros = RFC3339.validRange.lowerBound + Int64(random.next() % span)
            #expect(RFC3339.parse(RFC3339.format(micros: micros)) == micros)
        }
    }

    @Test("random and mutated text never traps")
    func robustness() {
        var random = SeededGenerator(seed: 0xD47E)
        let alphabet = Array("0123456789-:.TtZz+ 9".utf8) + [0xC3, 0xA9, 0x00]
        let valid = Array("2026-11-29T12:00:00.123456789+01:00".utf8)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            } else {
                bytes = valid
                let position = Int(random.next() % UInt64(bytes.count))
                bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let micros = RFC3339.parse(text) {
                #expect(RFC3339.validRange.contains(micros))
            }
        }
    }

    @Test("the system clock reads the present")
    func systemClock() throws {
        let now = EventStore.systemClock()
        // After this code was written and well before the end of the supported range.
        let earliest = try #require(RFC3339.parse("2025-01-01T00:00:00Z"))
        #expect(now > earliest)
        #expect(RFC3339.validRange.contains(now))
    }
}
