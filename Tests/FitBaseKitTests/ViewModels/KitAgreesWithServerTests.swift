import FitBaseKit
import Foundation
import Testing

/// The fakes and the screens over them follow the server's rules where the Kit used to restate them: the cycle from
/// the profile's last period start and current lengths, the chart by stored local day, the detail by tier, the
/// workout form by ``WorkoutLogRules``.
@MainActor @Suite struct KitAgreesWithServerTests {
    /// A signed-in user with nothing logged, who answered the onboarding's cycle step with `lastPeriodStart`.
    private func onboarded(lastPeriodStart: CalendarDay, cycleLength: Int = 28, clock: TestKitClock) async throws -> FakeServices {
        let fakes = FakeServices(scenario: .empty, clock: clock)
        var profile = try await fakes.profile.profile().profile
        profile.cycleTrackingEnabled = true
        profile.lastPeriodStartDate = lastPeriodStart.description
        profile.averageCycleLength = cycleLength
        _ = try await fakes.profile.saveProfile(profile)
        return fakes
    }

    @Test func afterOnboardingTheCycleScreenShowsThePhaseTodayShows() async throws {
        let clock = TestKitClock()
        let today = CalendarDay(clock.now, in: .gmt)
        let fakes = try await onboarded(lastPeriodStart: today.adding(days: -16), clock: clock)
        let todayModel = TodayModel(dependencies: .fake(fakes))
        await todayModel.load()
        let phase = try #require(todayModel.recommendations?.phase)
        let cycle = CycleModel(dependencies: .fake(fakes), timeZone: .gmt)
        await cycle.load()
        #expect(cycle.current?.phase == phase && cycle.current?.cycleDay == 17 && cycle.forecast != nil)
        // Not the "log your first period" state: the phase card shows, and the grid has today's phase.
        #expect(!cycle.isEmpty && cycle.periods.isEmpty)
        #expect(cycle.calendar?.days.contains { $0.isToday && $0.phase == phase } == true)
        #expect(cycle.calendar?.days.contains { $0.day < today.adding(days: -16) && $0.phase != nil } == false)
    }

    @Test func anEditedCycleLengthShowsOnTheCycleScreenAtOnce() async throws {
        let clock = TestKitClock()
        let start = CalendarDay(clock.now, in: .gmt).adding(days: -3)
        let fakes = try await onboarded(lastPeriodStart: start, clock: clock)
        #expect(try await fakes.cycle.forecast()?.nextPeriodStart == start.adding(days: 28))
        var profile = try await fakes.profile.profile().profile
        profile.averageCycleLength = 35
        _ = try await fakes.profile.saveProfile(profile)
        #expect(try await fakes.cycle.forecast()?.nextPeriodStart == start.adding(days: 35))
    }

    /// Monday 2026-03-02 01:00 UTC; the workout was done on Sunday evening in New York, and the log keeps that day.
    @Test func theWeeklyChartCountsALogInTheWeekOfItsStoredDay() async throws {
        let clock = TestKitClock(now: Date(timeIntervalSince1970: 1_772_413_200))
        let workout = FakeData.workouts[0]
        let log = WorkoutLog(
            id: WorkoutLogID(), workout: workout.id, workoutType: workout.type, workoutTitle: workout.title,
            completedAt: clock.now.addingTimeInterval(-600), localDate: try #require(CalendarDay("2026-03-01")), durationMinutes: 30,
            rating: nil, energyBefore: nil, energyAfter: nil, notes: nil, cyclePhase: nil, cycleDay: nil
        )
        let history = FakeHistoryService(logs: [LoggedWorkout(log: log)], catalog: FakeCatalogService(clock: clock), timeZone: .gmt, clock: clock)
        #expect(try await history.weeklySeries(.workouts, weeks: 2).map(\.value) == [1, 0])
        #expect(try await history.weeklySeries(.minutes, weeks: 2).map(\.day) == [CalendarDay("2026-02-23"), CalendarDay("2026-03-02")])
        #expect(try await history.stats().thisWeek == 0)
    }

    @Test func detailedStatisticsAreComputedOnlyForATierWithTheirFeature() async throws {
        let clock = TestKitClock()
        let fakes = FakeServices(scenario: .populated, clock: clock)
        let basic = try await fakes.history.stats()
        #expect(basic.totalWorkouts > 0 && basic.byType.isEmpty && basic.byPhase.isEmpty && basic.weekly.isEmpty)
        let refused = await #expect(throws: KitError.self) { try await fakes.history.weeklySeries(.minutes, weeks: 4) }
        #expect(refused?.kind == .upgradeRequired && refused?.requiredTier == .pro)
        _ = try await fakes.billing.purchase(productID: "fitbase.pro.monthly")
        #expect(try await !fakes.history.stats().byType.isEmpty)
        #expect(try await fakes.history.weeklySeries(.minutes, weeks: 4).count == 4)
    }

    @Test func theWorkoutFormChecksCoresRulesAndLogsTheMinutesAsTheyAre() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.history.knobs.implement(.log)
        let workout = try #require(FakeData.workouts.first { !$0.isPremium })
        let model = WorkoutDetailModel(workoutID: workout.id, dependencies: fixture.dependencies)
        await model.load()
        model.start()
        // Left running for eleven hours: not cut to 600 minutes behind the user's back, but refused as the server would.
        fixture.clock.advance(by: .seconds(11 * 3_600))
        model.energyAfter = 6
        await model.complete()
        #expect(model.measuredMinutes == 660)
        #expect(model.fieldErrors == ["duration": "must be between 1 and 600 minutes", "energyAfter": "must be between 1 and 5"])
        #expect(fixture.fakes.history.knobs.callCount(.log) == 0)
        model.durationMinutes = 45
        model.energyAfter = 4
        await model.complete()
        guard case .completed(let logged) = model.session else { Issue.record("not completed: \(model.session)"); return }
        #expect(logged.log.durationMinutes == 45)
    }
}
