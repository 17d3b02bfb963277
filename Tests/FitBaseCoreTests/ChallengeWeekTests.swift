import FitBaseCore
import Foundation
import Testing

@Suite struct ChallengeWeekTests {
    private func instant(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

    private func zone(_ identifier: String) throws -> TimeZone { try #require(TimeZone(identifier: identifier)) }

    private func day(_ text: String) throws -> CalendarDay { try #require(CalendarDay(text)) }

    /// The week containing `text` in `identifier`, checked to start at `start` and end at `end`.
    private func expectWeek(
        containing text: String, in identifier: String, monday: String, start: String, end: String
    ) throws {
        let week = ChallengeWeek.containing(try instant(text), in: try zone(identifier))
        #expect(week.startDay.description == monday)
        #expect(week.start == (try instant(start)))
        #expect(week.end == (try instant(end)))
    }

    @Test func utcWeeksRunMondayToMonday() throws {
        try expectWeek(
            containing: "2026-11-22T23:59:59Z", in: "UTC", monday: "2026-11-16", start: "2026-11-16T00:00:00Z",
            end: "2026-11-23T00:00:00Z")
        try expectWeek(
            containing: "2026-11-23T00:00:00Z", in: "UTC", monday: "2026-11-23", start: "2026-11-23T00:00:00Z",
            end: "2026-11-30T00:00:00Z")
        let week = ChallengeWeek.containing(try instant("2026-11-18T12:00:00Z"), in: try zone("UTC"))
        #expect(week.lastSecond == (try instant("2026-11-22T23:59:59Z")))
    }

    @Test func newYorkSpringForwardWeekIs167Hours() throws {
        let newYork = try zone("America/New_York")
        let week = ChallengeWeek.containing(try instant("2026-03-08T12:00:00Z"), in: newYork)
        #expect(week.startDay.description == "2026-03-02")
        #expect(week.start == (try instant("2026-03-02T05:00:00Z")))  // 00:00 EST
        #expect(week.end == (try instant("2026-03-09T04:00:00Z")))  // 00:00 EDT
        #expect(week.end.timeIntervalSince(week.start) == 167 * 3600)
        #expect(week.lastSecond == (try instant("2026-03-09T03:59:59Z")))
        // One second before Monday 00:00 local still belongs to the week before.
        #expect(ChallengeWeek.containing(try instant("2026-03-09T03:59:59Z"), in: newYork) == week)
        #expect(ChallengeWeek.containing(try instant("2026-03-09T04:00:00Z"), in: newYork) == week.next(in: newYork))
        let lastOfPrevious = try instant("2026-03-02T04:59:59Z")
        #expect(ChallengeWeek.containing(lastOfPrevious, in: newYork) == week.previous(in: newYork))
    }

    @Test func newYorkFallBackWeekIs169Hours() throws {
        let newYork = try zone("America/New_York")
        let week = ChallengeWeek.containing(try instant("2026-11-01T06:30:00Z"), in: newYork)
        #expect(week.startDay.description == "2026-10-26")
        #expect(week.start == (try instant("2026-10-26T04:00:00Z")))  // 00:00 EDT
        #expect(week.end == (try instant("2026-11-02T05:00:00Z")))  // 00:00 EST
        #expect(week.end.timeIntervalSince(week.start) == 169 * 3600)
        #expect(ChallengeWeek.containing(try instant("2026-11-02T04:59:59Z"), in: newYork).startDay == week.startDay)
        let nextWeek = ChallengeWeek.containing(try instant("2026-11-02T05:00:00Z"), in: newYork)
        #expect(nextWeek.startDay.description == "2026-11-02")
    }

    @Test func halfAndQuarterHourZonesStartAtLocalMidnight() throws {
        try expectWeek(
            containing: "2026-11-15T18:30:00Z", in: "Asia/Kolkata", monday: "2026-11-16",
            start: "2026-11-15T18:30:00Z", end: "2026-11-22T18:30:00Z")
        try expectWeek(
            containing: "2026-11-15T18:29:59Z", in: "Asia/Kolkata", monday: "2026-11-09",
            start: "2026-11-08T18:30:00Z", end: "2026-11-15T18:30:00Z")
        try expectWeek(
            containing: "2026-11-15T18:15:00Z", in: "Asia/Kathmandu", monday: "2026-11-16",
            start: "2026-11-15T18:15:00Z", end: "2026-11-22T18:15:00Z")
        try expectWeek(
            containing: "2026-11-15T18:14:59Z", in: "Asia/Kathmandu", monday: "2026-11-09",
            start: "2026-11-08T18:15:00Z", end: "2026-11-15T18:15:00Z")
    }

    @Test func stJohnsFollowsItsHalfHourOffsetAcrossDST() throws {
        try expectWeek(
            containing: "2026-01-07T12:00:00Z", in: "America/St_Johns", monday: "2026-01-05",
            start: "2026-01-05T03:30:00Z", end: "2026-01-12T03:30:00Z")  // −3:30
        let stJohns = try zone("America/St_Johns")
        let week = ChallengeWeek.containing(try instant("2026-03-08T12:00:00Z"), in: stJohns)
        #expect(week.start == (try instant("2026-03-02T03:30:00Z")))  // −3:30
        #expect(week.end == (try instant("2026-03-09T02:30:00Z")))  // −2:30
        #expect(week.end.timeIntervalSince(week.start) == 167 * 3600)
        #expect(ChallengeWeek.containing(try instant("2026-03-09T02:29:59Z"), in: stJohns) == week)
    }

    @Test func skippedMidnightStartsTheWeekAtTheFirstLocalInstant() throws {
        // Tehran moved clocks from 2021-03-21 24:00 to 01:00 on Monday 2021-03-22.
        let tehran = try zone("Asia/Tehran")
        let week = try #require(ChallengeWeek(starting: try day("2021-03-22"), in: tehran))
        #expect(week.start == (try instant("2021-03-21T20:30:00Z")))  // 01:00 +04:30
        #expect(week.previous(in: tehran).end == week.start)
        let sundayNight = ChallengeWeek.containing(try instant("2021-03-21T20:29:59Z"), in: tehran)
        #expect(sundayNight.startDay.description == "2021-03-15")
        #expect(ChallengeWeek.containing(week.start, in: tehran) == week)
    }

    @Test func startingRejectsDaysOtherThanMonday() throws {
        let utc = try zone("UTC")
        #expect(ChallengeWeek(starting: try day("2026-11-17"), in: utc) == nil)  // Tuesday
        #expect(ChallengeWeek(starting: try day("2026-11-22"), in: utc) == nil)  // Sunday
        let week = try #require(ChallengeWeek(starting: try day("2026-11-16"), in: utc))
        #expect(week.start == (try instant("2026-11-16T00:00:00Z")))
    }

    @Test func previousAndNextRoundTrip() throws {
        let newYork = try zone("America/New_York")
        let week = try #require(ChallengeWeek(starting: try day("2026-03-02"), in: newYork))
        #expect(week.next(in: newYork).startDay.description == "2026-03-09")
        #expect(week.previous(in: newYork).startDay.description == "2026-02-23")
        #expect(week.next(in: newYork).previous(in: newYork) == week)
        #expect(week.previous(in: newYork).next(in: newYork) == week)
        #expect(week.next(in: newYork).start == week.end)
    }

    @Test func daysAreSevenConsecutiveDaysFromMonday() throws {
        let week = try #require(ChallengeWeek(starting: try day("2026-12-28"), in: try zone("Asia/Kolkata")))
        #expect(week.days.map(\.description) == [
            "2026-12-28", "2026-12-29", "2026-12-30", "2026-12-31", "2027-01-01", "2027-01-02", "2027-01-03",
        ])
    }

    @Test func containsIncludesStartAndExcludesEnd() throws {
        let week = ChallengeWeek.containing(try instant("2026-11-18T12:00:00Z"), in: try zone("Asia/Kathmandu"))
        #expect(week.contains(week.start))
        #expect(week.contains(week.lastSecond))
        #expect(!week.contains(week.end))
        #expect(!week.contains(week.start.addingTimeInterval(-1)))
    }

    // MARK: Streak challenge

    private func streak(_ days: [String], week monday: String = "2026-11-16") throws -> Int {
        let week = try #require(ChallengeWeek(starting: try day(monday), in: try zone("UTC")))
        return ChallengeStreak.value(days: Set(try days.map(day)), in: week)
    }

    @Test func streakCountsTheRunEndingOnTheLatestDay() throws {
        #expect(try streak(["2026-11-16", "2026-11-17", "2026-11-18"]) == 3)
        #expect(try streak(["2026-11-16", "2026-11-18"]) == 1)
        #expect(try streak(["2026-11-16", "2026-11-17", "2026-11-19", "2026-11-20"]) == 2)
        #expect(try streak([]) == 0)
    }

    @Test func streakIgnoresDaysOutsideTheWeek() throws {
        #expect(try streak(["2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17"]) == 2)  // last weekend ignored
        #expect(try streak(["2026-11-13", "2026-11-15"]) == 0)
        #expect(try streak(["2026-11-21", "2026-11-22", "2026-11-23"]) == 2)  // next Monday ignored
    }

    @Test func streakCanRunThroughSunday() throws {
        let wholeWeek = [
            "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22",
        ]
        #expect(try streak(wholeWeek) == 7)
        #expect(try streak(["2026-11-16", "2026-11-20", "2026-11-21", "2026-11-22"]) == 3)
    }
}
