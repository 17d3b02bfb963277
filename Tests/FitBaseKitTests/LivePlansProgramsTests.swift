import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The week plan, the programs and plan progression through the live services and their screens, against a real
/// server: what the server answers, cache-first reads offline, and the premium gates from the server's answers.
@Suite struct LivePlansProgramsTests {
    @Test func theWeekFollowsThePredictedPhasesWithRestDaysByLevelAndOpensOffline() async throws {
        try await LiveDevice.withServer { server, _ in try await Self.week(server) }
    }

    @MainActor
    private static func week(_ server: URL) async throws {
        let device = try LiveDevice(server: server)
        defer { device.remove() }
        try await device.signUp()
        let services = device.dependencies
        let today = CalendarDay(device.clock.now, in: .gmt)

        // No level, no cycle: a beginner's three days, never two in a row, and no phases.
        let first = try await services.recommendations.week(policy: .cacheFirst)
        #expect(first.source == .server && first.value.startDate == today && first.value.source == "rules")
        #expect(first.value.days.map(\.date) == (0..<7).map { today.adding(days: $0) })
        let trained = first.value.days.enumerated().filter { !$0.element.isRestDay }.map(\.offset)
        #expect(trained.count == 3 && zip(trained, trained.dropFirst()).allSatisfy { $1 - $0 > 1 })
        #expect(first.value.days.allSatisfy { $0.phase == nil && !$0.note.isEmpty })
        #expect(first.value.days.compactMap(\.workout).allSatisfy { !$0.isPremium })
        let requests = device.network.count("getWeekRecommendations")
        let again = try await services.recommendations.week(policy: .cacheFirst)
    #expect(again.source == .cache && again.value == first.value)
        #expect(device.network.count("getWeekRecommendations") == requests)

        // An intermediate level and a period: four days, the phases predicted after today.
        var profile = try await services.profile.profile().profile
        profile.fitnessLevel = .intermediate
        profile.cycleTrackingEnabled = true
        _ = try await services.profile.saveProfile(profile)
        _ = try await services.cycle.logPeriod(Period(start: today.adding(days: -3), flow: .medium))
        try await services.plans.syncNow()
        let model = WeekPlanModel(dependencies: services)
        await model.load(policy: .revalidate)
        let (days, training, source) = (model.days, model.trainingDays, model.source)
        #expect(source == .server && days.count == 7 && training.count == 4)
        #expect(days.first?.phase == .menstrual && days.first?.cycleDay == 4 && days.first?.isPredicted == false)
        #expect(days.dropFirst().allSatisfy { $0.isPredicted && $0.phase != nil })

        // Offline: the device's copy of today's week, marked stale; another day's week was never fetched.
        device.network.offline = true
        await model.load(policy: .revalidate)
        #expect(model.isStale && model.isCached && model.days == days && model.error == nil)
        device.clock.advance(by: .seconds(24 * 3_600))
        await model.load()
        #expect(model.error?.isOffline == true && model.days == days)
    }

    @Test func programsArePagedResolvedToWorkoutsAndPremiumOnesLeadToThePaywall() async throws {
        try await LiveDevice.withServer { server, database in try await Self.programs(server, database) }
    }

    @MainActor
    private static func programs(_ server: URL, _ database: TestDatabase) async throws {
        let device = try LiveDevice(server: server)
        defer { device.remove() }
        let user = try await device.signUp()
        let catalog = device.dependencies.catalog
        let first = try await catalog.programs(page: .first(2), policy: .cacheFirst)
        #expect(first.source == .server && first.value.items.count == 2 && first.value.hasMore)
        #expect(try await catalog.programs(page: .first(2), policy: .cacheFirst).source == .cache)
        let rest = try await catalog.programs(page: PageRequest(cursor: first.value.nextCursor, limit: 10), policy: .cacheFirst)
        let all = first.value.items + rest.value.items
        #expect(all.count == 4 && !rest.value.hasMore && all.map(\.title) == all.map(\.title).sorted())
        let premium = try #require(all.first { $0.isPremium })
        let detail = try await catalog.program(id: premium.id, policy: .cacheFirst)
        #expect(detail.value == premium && detail.value.weeks.allSatisfy { !$0.isEmpty })
        let missing = await #expect(throws: KitError.self) { try await catalog.program(id: ProgramID(), policy: .cacheFirst) }
        #expect(missing?.kind == .notFound)

        let shelf = ProgramsModel(dependencies: device.dependencies, pageSize: 3)
        await shelf.load()
        await shelf.loadMore()
        #expect(shelf.items.count == 4 && !shelf.hasMore)
        #expect(shelf.items.filter(\.isLocked).map(\.id) == all.filter(\.isPremium).map(\.id))

        let screen = ProgramDetailModel(programID: premium.id, dependencies: device.dependencies)
        await screen.load()
        let weeks = screen.weeks
        #expect(weeks.map { $0.workouts.map(\.workout.id) } == premium.weeks)
        #expect(screen.lockedBy == .premium && screen.missingWorkouts == 0)
        let workout = try #require(weeks.first?.workouts.first)
        #expect(!screen.start(workout) && screen.paywall?.requiredTier == .premium)

        try await database.grant(.premium, toUser: user.id.description)
        _ = try await device.dependencies.billing.entitlement(policy: .revalidate)
        screen.dismissPaywall()
        await screen.load(policy: .revalidate)
        let unlocked = try #require(screen.weeks.first?.workouts.first)
        #expect(unlocked.workout.id == workout.workout.id && !screen.isLocked && screen.start(unlocked) && screen.paywall == nil)
        #expect(screen.weeks.flatMap(\.workouts).allSatisfy { !$0.isVideoLocked })

        // The tier changed, so the catalog's cached answers went with the old one; read again, then offline they are
        // served stale past their 6 hours.
        let again = try await catalog.programs(page: .first(2), policy: .cacheFirst)
        #expect(again.source == .server && again.value == first.value)
        device.network.offline = true
        device.clock.advance(by: .seconds(7 * 3_600))
        let stale = try await catalog.programs(page: .first(2), policy: .cacheFirst)
        #expect(stale.source == .staleCache && stale.value == first.value)
    }

    @Test func progressionIsPremiumAndAdjustsTheWeekFromTheServer() async throws {
        try await LiveDevice.withServer { server, database in try await Self.progression(server, database) }
    }

    @MainActor
    private static func progression(_ server: URL, _ database: TestDatabase) async throws {
        let device = try LiveDevice(server: server)
        defer { device.remove() }
        let user = try await device.signUp()
        let services = device.dependencies
        let workouts = try await services.catalog.workouts(matching: WorkoutFilter(premium: false), page: .first(3), policy: .cacheFirst).value.items
        let thisWeek = WorkoutStreaks.weekStart(of: CalendarDay(device.clock.now, in: .gmt))
        let days = workouts.enumerated().map { TrainingPlan.Day(day: 1 + 2 * $0.offset, workouts: [$0.element.id]) }
        // Weeks 1–3 are past, none of their sessions done; week 4 is this week.
        let plan = TrainingPlan(
            name: "Block", startDate: thisWeek.adding(days: -21), daysPerWeek: 3, weeklyWorkouts: (1...4).map { TrainingPlan.Week(week: $0, days: days) })
        // The push is held until the server has been asked about the plan it does not have yet.
        device.network.held = ["pushSyncMutations"]
        _ = try await services.plans.save(plan)
        let unsynced = await #expect(throws: KitError.self) { try await services.plans.progression(of: plan.id, week: 4) }
        #expect(unsynced?.kind == .notFound)
        device.network.held = []
        try await services.plans.syncNow()

        // Free: the server's 402 becomes the paywall.
        let model = PlanProgressionModel(planID: plan.id, dependencies: services)
        await model.load(week: 4)
        #expect(model.isLocked && model.paywall?.requiredTier == .premium && model.paywall?.feature == .advancedProgression)
        #expect(model.suggestion == nil)

        try await database.grant(.premium, toUser: user.id.description)
        model.dismissPaywall()
        await model.load(week: 4)
        let suggestion = try #require(model.suggestion)
        #expect(suggestion.week == 4 && suggestion.startDate == thisWeek && suggestion.endDate == thisWeek.adding(days: 6))
        #expect(suggestion.summary.weeks == [1, 2, 3] && suggestion.summary.plannedSessions == 9 && suggestion.summary.completedSessions == 0)
        #expect(suggestion.summary.hasEnoughHistory && !suggestion.summary.isDeload)
        let rows = model.rows
        #expect(rows.map(\.action) == [.reduce, .reduce, .reduce] && rows.map(\.planned?.id) == workouts.map(\.id))
        #expect(rows.allSatisfy { ($0.session.suggestedDuration ?? 0) < ($0.session.plannedDuration ?? 0) && $0.suggested == nil })
        #expect(model.weekCount == 4 && !model.hasNextWeek && model.hasPreviousWeek)
        await model.showPreviousWeek()
        #expect(model.week == 3 && model.error == nil)

        let outOfPlan = await #expect(throws: KitError.self) { try await services.plans.progression(of: plan.id, week: 9) }
        #expect(outOfPlan?.kind == .invalidInput && outOfPlan?.fieldErrors["week"] != nil)
        let overByDefault = await #expect(throws: KitError.self) { try await services.plans.progression(of: plan.id, week: nil) }
        #expect(overByDefault?.fieldErrors["week"] != nil)
        let stranger = await #expect(throws: KitError.self) { try await services.plans.progression(of: PlanID(), week: nil) }
        #expect(stranger?.kind == .notFound)
    }
}
