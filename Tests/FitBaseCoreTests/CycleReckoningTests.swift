import FitBaseCore
import Foundation
import Testing

/// Where a user stands on a day from what they logged and what their profile says: the rule the server's Today and
/// cycle answers and the SDK's cycle screen share.
@Suite struct CycleReckoningTests {
    static let today = CalendarDay(year: 2026, month: 11, day: 25)!

    static func profile(lastPeriodStart: CalendarDay?, cycle: Int = 28, period: Int = 5) -> Profile {
        Profile(averageCycleLength: cycle, averagePeriodLength: period, lastPeriodStartDate: lastPeriodStart?.description, cycleTrackingEnabled: true)
    }

    @Test func theOnboardingsLastPeriodStartStandsForAPeriodUntilOneIsLogged() throws {
        let profile = Self.profile(lastPeriodStart: Self.today.adding(days: -9))
        let prediction = try #require(CycleReckoning.prediction(logged: [], signals: [], profile: profile, on: Self.today))
        #expect(prediction.lastPeriodStart == Self.today.adding(days: -9) && prediction.today.cycleDay == 10)
        #expect(prediction.today.phase == CyclePhases.position(cycleDay: 10, length: 28, periodLength: 5).phase)
        #expect(prediction.basis.method == .profileAverage)

        // A logged period wins over the profile's answer; one logged after the day does not count yet.
        let logged = [Period(start: Self.today.adding(days: -2)), Period(start: Self.today.adding(days: 3))]
        let moved = try #require(CycleReckoning.prediction(logged: logged, signals: [], profile: profile, on: Self.today))
        #expect(moved.lastPeriodStart == Self.today.adding(days: -2) && moved.today.phase == .menstrual)
    }

    @Test func withoutAnyPeriodThereIsNoPrediction() {
        #expect(CycleReckoning.prediction(logged: [], signals: [], profile: Self.profile(lastPeriodStart: nil), on: Self.today) == nil)
        // A start after the day (the day asked about is in the past) is not one yet.
        let later = Self.profile(lastPeriodStart: Self.today.adding(days: 1))
        #expect(CycleReckoning.periods(logged: [], profile: later, on: Self.today).isEmpty)
        // A date the profile holds that is not a date is none.
        var broken = Self.profile(lastPeriodStart: nil)
        broken.lastPeriodStartDate = "2026-02-30"
        #expect(CycleReckoning.periods(logged: [], profile: broken, on: Self.today).isEmpty)
    }

    @Test func theProfilesLengthsCarryThePrediction() throws {
        let start = Self.today.adding(days: -3)
        let short = try #require(CycleReckoning.prediction(logged: [], signals: [], profile: Self.profile(lastPeriodStart: start, cycle: 24), on: Self.today))
        let long = try #require(CycleReckoning.prediction(logged: [], signals: [], profile: Self.profile(lastPeriodStart: start, cycle: 35), on: Self.today))
        #expect(short.nextPeriodStart == start.adding(days: 24) && long.nextPeriodStart == start.adding(days: 35))
        let bleeding = try #require(CycleReckoning.prediction(
            logged: [], signals: [], profile: Self.profile(lastPeriodStart: start, period: 2), on: Self.today))
        #expect(bleeding.today.phase == .follicular)
    }
}
