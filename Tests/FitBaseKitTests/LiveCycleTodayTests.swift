import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The cycle screen, Today and the history against a real server: what the device computes agrees with what the
/// server answers, and what the user changes shows at once.
@Suite struct LiveCycleTodayTests {
    /// The onboarding's cycle step answered: tracking on, `lastPeriodStart`, `cycleLength` days.
    private func onboard(_ device: LiveDevice, lastPeriodStart: CalendarDay?, cycleLength: Int = 28) async throws {
        var profile = try await device.dependencies.profile.profile().profile
        profile.cycleTrackingEnabled = true
        profile.lastPeriodStartDate = lastPeriodStart?.description
        profile.averageCycleLength = cycleLength
        _ = try await device.dependencies.profile.saveProfile(profile)
    }

    @Test func afterOnboardingTheCycleScreenShowsThePhaseTodayShows() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let services = device.dependencies
            #expect(try await services.cycle.current() == nil)  // opened before the onboarding: nothing known yet
            try await onboard(device, lastPeriodStart: CalendarDay(device.clock.now, in: .gmt).adding(days: -16))
            let today = try await services.recommendations.today(energy: nil, policy: .cacheFirst)
            #expect(today.source == .server)
            let phase = try #require(today.value.phase)
            let current = try #require(try await services.cycle.current())
            #expect(current.phase == phase && current.cycleDay == today.value.cycleDay)
            let model = await CycleModel(dependencies: services, timeZone: .gmt)
            await model.load()
            #expect(await model.current?.phase == phase)
            #expect(await !model.isEmpty)
        }
    }

    @Test func anEditedCycleLengthShowsOnTheCycleScreenAtOnce() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let services = device.dependencies
            let start = CalendarDay(device.clock.now, in: .gmt).adding(days: -3)
            _ = try await services.cycle.logPeriod(Period(start: start))
            #expect(try await services.cycle.forecast()?.nextPeriodStart == start.adding(days: 28))
            try await onboard(device, lastPeriodStart: start, cycleLength: 35)
            #expect(try await services.cycle.forecast()?.nextPeriodStart == start.adding(days: 35))
            // Offline, the device's copy of the last answer still holds the edit.
            device.network.offline = true
            #expect(try await services.cycle.forecast()?.nextPeriodStart == start.adding(days: 35))
        }
    }

    @Test func loggingAPeriodOrAWorkoutMakesTheNextTodayAskTheServer() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let services = device.dependencies
            let day = CalendarDay(device.clock.now, in: .gmt)
            let before = try await services.recommendations.today(energy: nil, policy: .cacheFirst)
            #expect(before.source == .server && before.value.phase == nil)
            #expect(try await services.recommendations.today(energy: nil, policy: .cacheFirst).source == .cache)

            _ = try await services.cycle.logPeriod(Period(start: day))
            // The test clock stands still: a second later, so the new answer is younger than the change.
            device.clock.advance(by: .seconds(1))
            let afterPeriod = try await services.recommendations.today(energy: nil, policy: .cacheFirst)
            #expect(afterPeriod.source == .server && afterPeriod.value.phase == .menstrual && afterPeriod.value.cycleDay == 1)
            #expect(try await services.recommendations.week(policy: .cacheFirst).value.days.first?.phase == .menstrual)
            #expect(try await services.recommendations.today(energy: nil, policy: .cacheFirst).source == .cache)

            let workout = try #require(try await services.catalog.workouts(matching: .all, page: .first(1), policy: .cacheFirst).value.items.first)
            _ = try await services.catalog.workout(id: workout.id, policy: .cacheFirst)
            let asked = device.network.count("getTodayRecommendations")
            _ = try await services.history.log(WorkoutCompletion(workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 20))
            device.clock.advance(by: .seconds(1))
            #expect(try await services.recommendations.today(energy: nil, policy: .cacheFirst).source == .server)
            #expect(device.network.count("getTodayRecommendations") == asked + 1)

            // Offline after a change, the device's copy still shows, as stale.
            _ = try await services.history.log(WorkoutCompletion(workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 10))
            device.network.offline = true
            #expect(try await services.recommendations.today(energy: nil, policy: .cacheFirst).source == .staleCache)
        }
    }

    @Test func aFreeAccountGetsTheBasicStatisticsAndNoChart() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let services = device.dependencies
            let workout = try #require(try await services.catalog.workouts(matching: .all, page: .first(1), policy: .cacheFirst).value.items.first)
            _ = try await services.catalog.workout(id: workout.id, policy: .cacheFirst)
            _ = try await services.history.log(WorkoutCompletion(workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 20))
            let stats = try await services.history.stats()
            #expect(stats.totalWorkouts == 1 && stats.byType.isEmpty && stats.weekly.isEmpty && stats.energyChangeByPhase.isEmpty)
            let refused = await #expect(throws: KitError.self) { try await services.history.weeklySeries(.workouts, weeks: 2) }
            #expect(refused?.kind == .upgradeRequired && refused?.requiredTier == .pro)
        }
    }
}
