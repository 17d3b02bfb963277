import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct WeekPlanModelTests {
    @Test func sevenDaysFollowThePredictedPhasesWithRestDaysByLevel() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.week)
        fixture.fakes.cycle.knobs.implement(.current)
        let model = WeekPlanModel(dependencies: fixture.dependencies)
        #expect(model.days.isEmpty && model.source == nil)
        await model.load()
        let today = CalendarDay(fixture.clock.now, in: .gmt)
        #expect(model.days.map(\.date) == (0..<7).map { today.adding(days: $0) } && model.week?.startDate == today)
        // Ana is intermediate: four training days, at most two in a row.
        #expect(model.trainingDays.count == 4 && model.restDays.count == 3)
        let current = try #require(try await fixture.fakes.cycle.current())
        #expect(model.days.first?.phase == current.phase && model.days.first?.cycleDay == current.cycleDay && model.days.first?.isPredicted == false)
        #expect(model.days.dropFirst().allSatisfy { $0.isPredicted && $0.phase != nil })
        #expect(CyclePhase.allCases.flatMap { model.days(in: $0) }.count == 7)
        // Only what a free user with Ana's equipment may do, and the week's minutes add up.
        let equipment = Set(try #require(FakeData.profile.availableEquipment))
        let workouts = model.trainingDays.compactMap(\.workout)
        #expect(workouts.count == 4 && workouts.allSatisfy { !$0.isPremium && $0.canBeDone(with: equipment) })
        #expect(model.plannedMinutes == workouts.map(\.durationMinutes).reduce(0, +))
        #expect(model.days.allSatisfy { !$0.note.isEmpty } && model.source == .server && !model.isCached && model.error == nil)
        #expect(!model.isLoading && fixture.events.isEmpty)
    }

    @Test func aBeginnerWithoutCycleDataTrainsThreeDaysNeverTwoInARow() async {
        let fixture = Fixture(.empty)
        fixture.fakes.recommendations.knobs.implement(.week)
        let model = WeekPlanModel(dependencies: fixture.dependencies)
        await model.load()
        let trained = model.days.enumerated().filter { !$0.element.isRestDay }.map(\.offset)
        #expect(model.days.count == 7 && trained.count == 3 && zip(trained, trained.dropFirst()).allSatisfy { $1 - $0 > 1 })
        #expect(model.days.allSatisfy { $0.phase == nil && $0.cycleDay == nil })
    }

    @Test func theDevicesCopyAndFailuresShowAndOpeningADayIsOneEvent() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.week)
        let model = WeekPlanModel(dependencies: fixture.dependencies)
        fixture.fakes.recommendations.knobs.fail(.week, with: .offline)
        await model.load()
        #expect(model.error?.isOffline == true && model.days.isEmpty)
        #expect(fixture.events == [.operationFailed(feature: .recommendations, reason: .offline)])

        fixture.fakes.recommendations.knobs.clearFailures()
        await model.load(policy: .cacheOnly)
        #expect(model.error == nil && model.isCached && !model.isStale && model.days.count == 7)
        let training = try #require(model.trainingDays.first)
        let rest = try #require(model.restDays.first)
        model.open(rest)
        model.open(training)
        #expect(fixture.events.dropFirst() == [.recommendationOpened(workoutID: try #require(training.workout?.id))])

        // A cancelled load (the screen went away) shows nothing.
        fixture.fakes.recommendations.knobs.fail(.week, with: .cancelled)
        await model.load()
        #expect(model.error == nil && model.days.count == 7 && fixture.events.count == 2)
    }
}
