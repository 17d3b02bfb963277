import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct CycleModelTests {
    @Test func theMonthGridShowsPeriodsPredictionsAndToday() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.cycle.knobs.implement(.current, .forecast, .month, .periods)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        let grid = try #require(model.calendar)
        #expect(grid.year == 2026 && grid.month == 3 && model.year == 2026 && model.month == 3)
        #expect(grid.days.contains { $0.isToday && $0.day == model.today })
        #expect(model.current != nil && model.forecast != nil && !model.isEmpty)
        #expect(model.periods.count == 4 && model.periods.first!.start > model.periods.last!.start)
        // March 2026 starts on a Sunday: six empty cells first.
        #expect(model.weeks.first?.prefix(6).allSatisfy { $0 == nil } == true)
        #expect(model.weeks.allSatisfy { $0.count == 7 })
        #expect(grid.days.contains { $0.isPredictedPeriod })

        await model.nextMonth()
        #expect(model.month == 4 && model.calendar?.month == 4)
        await model.previousMonth()
        await model.previousMonth()
        #expect(model.month == 2 && model.calendar?.days.contains { $0.isPeriod } == true)
        await model.showToday()
        #expect(model.month == 3)
    }

    @Test func navigationWrapsTheYear() async {
        let fixture = Fixture(.empty)
        fixture.fakes.cycle.knobs.implement(.current, .forecast, .month, .periods)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        for _ in 0..<3 { await model.previousMonth() }
        #expect(model.year == 2025 && model.month == 12)
        await model.nextMonth()
        #expect(model.year == 2026 && model.month == 1)
        for _ in 0..<12 { await model.nextMonth() }
        #expect(model.year == 2027 && model.month == 1)
    }

    @Test func loggingAPeriodUpdatesTheGridAndThePhaseCard() async throws {
        let fixture = Fixture(.empty)
        fixture.fakes.cycle.knobs.implement(.current, .deletePeriod, .forecast, .logPeriod, .month, .periods, .updatePeriod)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.isEmpty && model.current == nil)

        model.startLogging(on: model.today.adding(days: -1))
        model.draft?.flow = .heavy
        model.draft?.symptoms = ["cramps", "fatigue"]
        model.draft?.notes = "  first day rough  "
        await model.savePeriod()
        #expect(model.draft == nil && model.error == nil)
        #expect(model.current?.phase == .menstrual && model.current?.cycleDay == 2)
        #expect(model.calendar?.days.first { $0.day == model.today }?.isPeriod == true)
        let logged = try #require(model.periods.first)
        #expect(logged.symptoms == ["cramps", "fatigue"] && logged.notes == "first day rough")
        #expect(fixture.events == [.periodLogged])

        model.edit(logged)
        model.draft?.end = model.today
        await model.savePeriod()
        #expect(model.periods.first?.end == model.today)
        #expect(fixture.events == [.periodLogged])

        await model.delete(logged)
        #expect(model.isEmpty && model.current == nil)
    }

    @Test func theFormIsCheckedOnTheDevice() async {
        let fixture = Fixture(.empty)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        let today = model.today
        #expect(model.problems(of: .init())["start"] != nil)
        #expect(model.problems(of: .init(start: today.adding(days: 1)))["start"] != nil)
        #expect(model.problems(of: .init(start: today, end: today.adding(days: -2)))["end"] != nil)
        #expect(model.problems(of: .init(start: today.adding(days: -30), end: today.adding(days: -5)))["end"] != nil)
        model.startLogging()
        model.draft?.start = today.adding(days: 3)
        await model.savePeriod()
        #expect(model.fieldErrors["start"] != nil && model.draft != nil)
        #expect(fixture.fakes.cycle.knobs.callCount(.logPeriod) == 0)
        model.cancelLogging()
        #expect(model.draft == nil)
        await model.savePeriod()
    }

    @Test func aClashingStartIsAConflictAndKeepsTheForm() async {
        let fixture = Fixture(.strict)
        fixture.fakes.cycle.knobs.implement(.current, .forecast, .logPeriod, .month, .periods)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        model.startLogging(on: model.periods[0].start)
        await model.savePeriod()
        #expect(model.error?.kind == .conflict && model.draft != nil)
    }

    @Test func offlineShowsARetryableError() async {
        let fixture = Fixture(.strict)
        fixture.fakes.cycle.knobs.implement(.current, .deletePeriod, .forecast, .month, .periods)
        fixture.fakes.cycle.knobs.failOnce(.month, with: .offline)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.error?.isOffline == true && model.error?.isRetryable == true && !model.isLoading && model.calendar == nil)
        await model.load()
        #expect(model.error == nil && model.calendar != nil)
        fixture.fakes.cycle.knobs.fail(.deletePeriod, with: .offline)
        await model.delete(model.periods[0])
        #expect(model.error?.isOffline == true && model.periods.count == 4)
    }

    @Test func aSlowMonthDoesNotOverwriteTheNextOne() async {
        let fixture = Fixture(.strict)
        fixture.fakes.cycle.knobs.implement(.current, .forecast, .month, .periods)
        let model = CycleModel(dependencies: fixture.dependencies, timeZone: .gmt)
        fixture.fakes.cycle.knobs.latency = .seconds(1)
        let slow = Task { await model.load() }
        await fixture.clock.waitForSleepers()
        fixture.fakes.cycle.knobs.latency = .zero
        await model.nextMonth()
        #expect(model.calendar?.month == 4)
        fixture.clock.advance(by: .seconds(5))
        await slow.value
        #expect(model.calendar?.month == 4 && model.month == 4)
    }
}
