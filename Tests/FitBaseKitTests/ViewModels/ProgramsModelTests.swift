import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct ProgramsModelTests {
    /// A fixture whose user bought Premium (the test sets up the purchase, so the store answers it).
    private func premium(_ fixture: Fixture) async throws {
        fixture.fakes.billing.knobs.implement(.purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        _ = try await fixture.fakes.billing.purchase(productID: "fitbase.premium.monthly")
    }

    private let cycleSynced = FakeData.programs[1]
    private let barreBasics = FakeData.programs[2]

    @Test func programsComeByTitleAPageAtATimeWithTheLevelFilterAndTheLock() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.programs)
        let model = ProgramsModel(dependencies: fixture.dependencies, pageSize: 2)
        await model.load()
        #expect(model.items.map(\.program.title) == ["Barre and Pilates Basics", "Cycle-Synced Month"] && model.hasMore)
        await model.loadMore()
        #expect(model.items.map(\.program.title) == ["Barre and Pilates Basics", "Cycle-Synced Month", "Strength Foundations"] && !model.hasMore)
        await model.loadMore()
        #expect(fixture.fakes.catalog.knobs.callCount(.programs) == 2)
        #expect(model.items.filter(\.isLocked).map(\.id) == [cycleSynced.id])
        #expect(model.items[1].weekCount == 4 && model.items[1].workoutCount == 12)
        model.level = .intermediate
        #expect(model.visibleItems.map(\.id) == [barreBasics.id, cycleSynced.id] && !model.isEmpty)
        model.level = .advanced
        #expect(model.isEmpty && !model.isShowingStaleContent && model.source == .server)

        try await premium(fixture)
        await model.load()
        #expect(model.items.count == 2 && model.items.allSatisfy { !$0.isLocked })
    }

    @Test func failuresShowAndALaterPageRecovers() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.programs)
        let model = ProgramsModel(dependencies: fixture.dependencies, pageSize: 1)
        fixture.fakes.catalog.knobs.failOnce(.programs, with: .offline)
        await model.load()
        #expect(model.error?.isOffline == true && model.items.isEmpty && !model.isLoading)
        await model.load()
        #expect(model.error == nil && model.items.count == 1)
        fixture.fakes.catalog.knobs.failOnce(.programs, with: KitError(.server))
        await model.loadMore()
        #expect(model.error?.kind == .server && model.items.count == 1 && !model.isLoadingMore)
        await model.loadMore()
        #expect(model.error == nil && model.items.count == 2)
        #expect(fixture.events == [.operationFailed(feature: .catalog, reason: .offline), .operationFailed(feature: .catalog, reason: .server)])
    }

    @Test func aPremiumProgramShowsItsWeeksAndLeadsAFreeUserToThePaywall() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.program, .workout)
        let model = ProgramDetailModel(programID: cycleSynced.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.program == cycleSynced && model.weeks.map(\.number) == [1, 2, 3, 4])
        #expect(model.weeks.map { $0.workouts.map(\.workout.id) } == cycleSynced.weeks && model.missingWorkouts == 0)
        // Each workout asked for once, however often the program repeats it.
        #expect(fixture.fakes.catalog.knobs.callCount(.workout) == Set(cycleSynced.weeks.joined()).count)
        let minutes = cycleSynced.weeks.joined().compactMap { id in FakeData.workouts.first { $0.id == id }?.durationMinutes }.reduce(0, +)
        #expect(model.totalMinutes == minutes && model.weeks[0].totalMinutes == model.weeks[0].workouts.map(\.workout.durationMinutes).reduce(0, +))
        #expect(model.isLocked && model.lockedBy == .premium)

        let first = try #require(model.weeks.first?.workouts.first)
        #expect(!first.workout.isPremium && !model.start(first))
        #expect(model.paywall == UpgradePrompt(requiredTier: .premium, feature: .premiumContent))
        model.dismissPaywall()
        #expect(model.paywall == nil)

        try await premium(fixture)
        await model.load()
        #expect(!model.isLocked && model.start(first) && model.paywall == nil)
    }

    @Test func aFreeProgramLocksOnlyItsPremiumWorkouts() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.program, .workout)
        let model = ProgramDetailModel(programID: barreBasics.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(!model.isLocked)
        let workouts = model.weeks.flatMap(\.workouts)
        let locked = try #require(workouts.first { $0.workout.isPremium })
        let free = try #require(workouts.first { !$0.workout.isPremium })
        #expect(locked.isVideoLocked && locked.workout.videoURL.isEmpty)
        #expect(model.start(free) && model.paywall == nil)
        #expect(!model.start(locked) && model.paywall?.requiredTier == .premium)

        try await premium(fixture)
        await model.load(policy: .revalidate)
        let unlocked = try #require(model.weeks.flatMap(\.workouts).first { $0.workout.id == locked.workout.id })
        #expect(!unlocked.isVideoLocked && model.start(unlocked))
    }

    @Test func workoutsGoneFromTheCatalogAreLeftOutAndFailuresShow() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.program, .workout)
        let foundations = FakeData.programs[0]
        let gone = try #require(foundations.weeks.first?.first)
        await fixture.fakes.catalog.setCatalog(FakeData.workouts.filter { $0.id != gone })
        let model = ProgramDetailModel(programID: foundations.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.missingWorkouts == 1 && model.weeks[0].workouts.count == foundations.weeks[0].count - 1 && model.error == nil)

        fixture.fakes.catalog.knobs.fail(.workout, with: .offline)
        await model.load()
        #expect(model.error?.isOffline == true && model.program == foundations)
        fixture.fakes.catalog.knobs.clearFailures()

        let unknown = ProgramDetailModel(programID: ProgramID(), dependencies: fixture.dependencies)
        await unknown.load()
        #expect(unknown.error?.kind == .notFound && unknown.program == nil && unknown.weeks.isEmpty)
        #expect(fixture.events == [.operationFailed(feature: .catalog, reason: .offline), .operationFailed(feature: .catalog, reason: .notFound)])
    }
}
