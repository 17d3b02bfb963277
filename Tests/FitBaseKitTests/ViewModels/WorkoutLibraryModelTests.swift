import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct WorkoutLibraryModelTests {
    @Test func loadsAPageThenMoreWithPremiumBadges() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies, pageSize: 5)
        await model.load()
        #expect(model.items.count == 5 && model.hasMore && model.source == .server && !model.isEmpty && !model.isFiltered)
        await model.loadMore()
        await model.loadMore()
        #expect(model.items.count == 14 && !model.hasMore)
        let premium = model.items.filter(\.isPremium)
        #expect(premium.count == 4 && premium.allSatisfy(\.isLocked))
        #expect(model.items.filter { !$0.isPremium }.allSatisfy { !$0.isLocked })
        await model.loadMore()
        #expect(model.items.count == 14)
    }

    @Test func premiumIsUnlockedForPremiumSubscribers() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        fixture.fakes.billing.knobs.implement(.purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        _ = try await fixture.fakes.billing.purchase(productID: "fitbase.premium.yearly")
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.items.filter(\.isPremium).allSatisfy { !$0.isLocked })
    }

    @Test func filtersNarrowTheList() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        await model.setTypes([.yoga])
        #expect(model.items.allSatisfy { $0.workout.type == .yoga } && model.items.count == 2 && model.isFiltered)
        await model.setTypes([])
        await model.setIntensity(.high)
        #expect(model.items.allSatisfy { $0.workout.intensity == .high })
        await model.setIntensity(nil)
        await model.setPhase(.ovulatory)
        #expect(model.items.allSatisfy { $0.workout.phases.contains(.ovulatory) })
        await model.setPhase(nil)
        await model.setDuration(minimum: 20, maximum: 25)
        #expect(model.items.allSatisfy { (20...25).contains($0.workout.durationMinutes) })
        await model.setDuration(minimum: nil, maximum: nil)
        await model.setEquipment([.none])
        #expect(model.items.allSatisfy { $0.workout.equipment == [.none] })
        await model.setSort(.shortest)
        #expect(model.items.map(\.workout.durationMinutes) == model.items.map(\.workout.durationMinutes).sorted())
        await model.setEquipment([])
        await model.setTypes([.meditation])
        await model.setIntensity(.high)
        #expect(model.isEmpty && model.isFiltered)
        await model.clearFilters()
        #expect(model.items.count == 14 && !model.isFiltered)
    }

    @Test func theSearchRunsAfter300msOfQuietOnTheClock() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        await model.load()
        let before = fixture.fakes.catalog.knobs.callCount(.workouts)
        model.searchText = "yo"
        await fixture.clock.waitForSleepers()
        fixture.clock.advance(by: .milliseconds(200))
        model.searchText = "yoga"
        #expect(fixture.fakes.catalog.knobs.callCount(.workouts) == before)
        await fixture.clock.waitForSleepers()
        fixture.clock.advance(by: .milliseconds(299))
        #expect(fixture.fakes.catalog.knobs.callCount(.workouts) == before)
        fixture.clock.advance(by: .milliseconds(1))
        await model.waitForSearch()
        #expect(fixture.fakes.catalog.knobs.callCount(.workouts) == before + 1)
        #expect(!model.items.isEmpty && model.items.allSatisfy { $0.workout.description.lowercased().contains("yoga") })
    }

    @Test func aSlowerEarlierSearchIsCancelledAndNeverOverwritesTheNewer() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        fixture.fakes.catalog.knobs.latency = .seconds(2)
        model.searchText = "yoga"
        await fixture.clock.waitForSleepers()
        fixture.clock.advance(by: .milliseconds(300))
        // The "yoga" request is now in flight, waiting out the catalog's latency.
        await eventually { fixture.fakes.catalog.knobs.callCount(.workouts) == 1 }
        await fixture.clock.waitForSleepers()
        fixture.fakes.catalog.knobs.latency = .zero
        model.searchText = "strength"
        await fixture.clock.waitForSleepers()
        fixture.clock.advance(by: .milliseconds(300))
        await model.waitForSearch()
        fixture.clock.advance(by: .seconds(5))
        #expect(!model.items.isEmpty && model.items.allSatisfy { $0.workout.description.lowercased().contains("strength") })
        #expect(model.error == nil && !model.isLoading)
    }

    @Test func aSlowerEarlierLoadDoesNotOverwriteANewerFilter() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        fixture.fakes.catalog.knobs.latency = .seconds(2)
        let slow = Task { await model.setTypes([.yoga]) }
        await fixture.clock.waitForSleepers()
        fixture.fakes.catalog.knobs.latency = .zero
        await model.setTypes([.barre])
        fixture.clock.advance(by: .seconds(2))
        await slow.value
        #expect(model.items.allSatisfy { $0.workout.type == .barre } && !model.items.isEmpty)
    }

    @Test func typingAgainDropsTheWaitingSearchAndALoadDropsItToo() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        model.searchText = "core"
        await fixture.clock.waitForSleepers()
        await model.load()
        #expect(fixture.clock.sleeperCount == 0)
        fixture.clock.advance(by: .seconds(1))
        await model.waitForSearch()
        #expect(fixture.fakes.catalog.knobs.callCount(.workouts) == 1)
    }

    @Test func offlineShowsARetryableErrorThenTheStaleBadgeNever() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        fixture.fakes.catalog.knobs.failOnce(.workouts, with: .offline)
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies, pageSize: 5)
        await model.load()
        #expect(model.error?.isOffline == true && model.error?.isRetryable == true && model.items.isEmpty && !model.isEmpty)
        #expect(fixture.events == [.operationFailed(feature: .catalog, reason: .offline)])
        await model.load(policy: .cacheOnly)
        #expect(model.error == nil && model.source == .cache && !model.isShowingStaleContent)
        fixture.fakes.catalog.knobs.failOnce(.workouts, with: KitError(.server))
        await model.loadMore()
        #expect(model.error?.kind == .server && model.items.count == 5)
    }

    @Test func anEmptyCatalogIsTheEmptyState() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workouts)
        await fixture.fakes.catalog.setCatalog([])
        let model = WorkoutLibraryModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.isEmpty && !model.hasMore)
    }
}
