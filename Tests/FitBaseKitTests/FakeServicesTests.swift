import FitBaseKit
import Foundation
import Testing

/// The fakes behave like the services they stand for: state that carries from one call to the next, and knobs that
/// fail, slow down or empty them.
@Suite struct FakeServicesTests {
    private let clock = TestKitClock()

    @Test func anLHSurgeMovesTheForecastToTheDetectedOvulation() async throws {
        let today = CalendarDay(clock.now, in: .gmt)
        let starts = [today.adding(days: -75), today.adding(days: -45), today.adding(days: -15)]
        let cycle = FakeCycleService(periods: starts.map { Period(start: $0) }, timeZone: .gmt, clock: clock)
        let before = try #require(try await cycle.forecast())
        #expect(before.method == .cycleHistory && before.ovulationSource == .estimated)
        _ = try await cycle.logSignal(FertilitySignal(date: today.adding(days: -1), reading: .lhTest(.negative)))
        _ = try await cycle.logSignal(FertilitySignal(date: today, reading: .lhTest(.positive)))
        let after = try #require(try await cycle.forecast())
        #expect(after.method == .ovulation && after.ovulationSource == .detected)
        #expect(after.ovulationDate == today.adding(days: 1))
        // No luteal phase of hers yet: the population's 12.4 days after ovulation, moved toward the 14 her 30-day cycles
        // leave after this 16-day follicular phase (12.96 days).
        #expect(after.nextPeriodStart == today.adding(days: 14))
        #expect(try await cycle.signals().count == 2)
        await #expect(throws: KitError.self) {
            _ = try await cycle.logSignal(FertilitySignal(date: today, reading: .basalBodyTemperature(celsius: 40)))
        }
        await #expect(throws: KitError.self) {
            _ = try await cycle.logSignal(FertilitySignal(date: today.adding(days: 1), reading: .lhTest(.negative)))
        }
        let positive = try #require(try await cycle.signals().last)
        try await cycle.deleteSignal(id: positive.id)
        #expect(try await cycle.forecast()?.method == .cycleHistory)
    }

    @Test func loggingAPeriodChangesTheCurrentPhaseAndTheMonthGrid() async throws {
        let fakes = FakeServices(scenario: .empty, clock: clock)
        #expect(try await fakes.cycle.current() == nil)
        #expect(try await fakes.cycle.forecast() == nil)
        let today = CalendarDay(clock.now, in: .gmt)
        let (year, month, _) = today.components
        let before = try await fakes.cycle.month(year: year, month: month)
        #expect(before.days.allSatisfy { $0.phase == nil && !$0.isPeriod })

        let period = try await fakes.cycle.logPeriod(Period(start: today.adding(days: -2), flow: .light))
        let current = try #require(try await fakes.cycle.current())
        #expect(current.phase == .menstrual && current.cycleDay == 3)
        let forecast = try #require(try await fakes.cycle.forecast())
        #expect(forecast.nextPeriodRange.contains(forecast.nextPeriodStart))
        let after = try await fakes.cycle.month(year: year, month: month)
        #expect(after.days.first { $0.day == today }?.isPeriod == true)
        #expect(after.days.first { $0.day == today }?.isToday == true)

        try await fakes.cycle.deletePeriod(id: period.id)
        #expect(try await fakes.cycle.current() == nil)
    }

    @Test func aPeriodInTheFutureIsRefusedNamingTheField() async throws {
        let fakes = FakeServices(scenario: .empty, clock: clock)
        let tomorrow = CalendarDay(clock.now, in: .gmt).adding(days: 1)
        let error = await #expect(throws: KitError.self) { try await fakes.cycle.logPeriod(Period(start: tomorrow)) }
        #expect(error?.kind == .invalidInput && error?.fieldErrors["startDate"] != nil)
    }

    @Test func knobsFailOnceThenRecover() async throws {
        let fakes = FakeServices(scenario: .populated, clock: clock)
        fakes.catalog.knobs.failOnce(.workouts, with: .offline)
        let error = await #expect(throws: KitError.self) { try await fakes.catalog.workouts(matching: .all, page: .first(), policy: .cacheFirst) }
        #expect(error?.kind == .offline && error?.isRetryable == true)
        let page = try await fakes.catalog.workouts(matching: .all, page: .first(5), policy: .cacheFirst)
        #expect(page.value.items.count == 5 && page.value.hasMore)
        #expect(fakes.catalog.knobs.callCount(.workouts) == 2)
    }

    @Test func latencyRunsOnTheInjectedClock() async throws {
        let fakes = FakeServices(scenario: .populated, clock: clock)
        fakes.notifications.knobs.latency = .seconds(2)
        let task = Task { try await fakes.notifications.unreadCount() }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(2))
        #expect(try await task.value == 2)
    }

    @Test func aPurchaseUnlocksPremiumVideosUntilTheEntitlementExpires() async throws {
        let fakes = FakeServices(scenario: .populated, clock: clock)
        let premium = try #require(FakeData.workouts.first { $0.isPremium })
        #expect(try await fakes.catalog.workout(id: premium.id, policy: .cacheFirst).value.isVideoLocked)
        #expect(await fakes.billing.requiresUpgrade(for: .premiumContent) == .premium)

        let result = try await fakes.billing.purchase(productID: "fitbase.premium.monthly")
        guard case .purchased(let state) = result else { Issue.record("not purchased: \(result)"); return }
        #expect(state.entitlement.tier == .premium)
        #expect(try await fakes.catalog.workout(id: premium.id, policy: .cacheFirst).value.isVideoLocked == false)

        clock.advance(by: .seconds(31 * 86_400))
        #expect(await fakes.billing.requiresUpgrade(for: .premiumContent) == .premium)
        let restored = try await fakes.billing.restorePurchases()
        #expect(restored.entitlement.tier == .premium)
    }

    @Test func aCancelledPurchaseChangesNothing() async throws {
        let fakes = FakeServices(scenario: .populated, clock: clock)
        await fakes.billing.store.setNextOutcome(.cancelled)
        #expect(try await fakes.billing.purchase(productID: "fitbase.pro.monthly") == .cancelled)
        #expect(try await fakes.billing.entitlement(policy: .cacheFirst).value.entitlement.tier == .free)
    }

    @Test func emptyScenarioShowsEveryEmptyState() async throws {
        let fakes = FakeServices(scenario: .empty, clock: clock)
        #expect(try await fakes.history.history().isEmpty)
        #expect(try await fakes.history.stats().totalWorkouts == 0)
        #expect(try await fakes.plans.plans().isEmpty)
        #expect(try await fakes.groups.currentGroup() == nil)
        #expect(try await fakes.notifications.feed(page: .first()).page.items.isEmpty)
        let health = try await fakes.health.overview(from: clock.now.addingTimeInterval(-7 * 86_400), to: clock.now)
        #expect(health.summaries.allSatisfy { $0.sampleCount == 0 && $0.average == nil } && health.latest.isEmpty)
    }

    @Test func loggingAWorkoutMovesTheStreakAndTheChart() async throws {
        let fakes = FakeServices(scenario: .empty, clock: clock)
        let workout = FakeData.workouts[0]
        _ = try await fakes.history.log(WorkoutCompletion(workoutID: workout.id, completedAt: clock.now, durationMinutes: 20, rating: 5))
        let stats = try await fakes.history.stats()
        #expect(stats.totalWorkouts == 1 && stats.currentStreak == 1 && stats.totalMinutes == 20)
        _ = try await fakes.billing.purchase(productID: "fitbase.pro.monthly")  // the chart is the `analytics` feature
        let series = try await fakes.history.weeklySeries(.minutes, weeks: 4)
        #expect(series.count == 4 && series.last?.value == 20)
        let error = await #expect(throws: KitError.self) {
            try await fakes.history.log(WorkoutCompletion(workoutID: WorkoutID(), completedAt: clock.now, durationMinutes: 0))
        }
        #expect(error?.fieldErrors.keys.sorted() == ["duration", "workoutId"])
    }

    @Test func joiningByLinkAndLiveLeaderboard() async throws {
        let fakes = FakeServices(scenario: .empty, clock: clock)
        let preview = try await fakes.groups.previewInvitation(code: "https://fitbase.example.com/group/invite/\(FakeGroupService.sampleInviteCode)")
        #expect(preview.groupName == "Evening Crew")
        let group = try await fakes.groups.join(code: "fitbase://group/invite/\(FakeGroupService.sampleInviteCode)")
        #expect(group.memberCount == 4 && group.role == .member)
        var live = fakes.groups.liveLeaderboard(groupID: group.id, type: .checkIns).makeAsyncIterator()
        guard case .board(let first)? = await live.next() else { Issue.record("no first board"); return }
        #expect(first.rows.count == 4)
        await fakes.groups.checkIn(userID: FakeData.user.id)
        guard case .board(let second)? = await live.next() else { Issue.record("no second board"); return }
        #expect(second.currentUser?.value == (first.currentUser?.value ?? 0) + 1)
        try await fakes.groups.leave(groupID: group.id)
        guard case .ended(let error)? = await live.next() else { Issue.record("not ended"); return }
        #expect(error.kind == .notFound)
    }

    @Test func aTestsFakesAnswerOnlyWhatTheTestSetUp() async throws {
        let fakes = FakeServices(scenario: .strict, clock: clock)
        fakes.groups.knobs.implement(.currentGroup)
        let group = try #require(try await fakes.groups.currentGroup())
        #expect(group.name == "Morning Movers")
        await withKnownIssue {
            let error = await #expect(throws: KitError.self) { try await fakes.groups.members(groupID: group.id) }
            #expect(error == fakes.groups.knobs.unimplementedError(.members) && error?.message.contains("FakeGroupService.members") == true)
        }
        await withKnownIssue {
            _ = try? await fakes.notifications.feed(page: PageRequest(limit: 5))
        }
        #expect(fakes.groups.knobs.calls == [.currentGroup, .members] && fakes.notifications.knobs.callCount(.feed) == 1)
    }

    @Test func theLeaderboardIsRankedAsTheServerRanksIt() async throws {
        let fakes = FakeServices(scenario: .populated, clock: clock)
        let group = try #require(try await fakes.groups.currentGroup())
        let board = try await fakes.groups.leaderboard(groupID: group.id, type: .checkIns)
        let standings = board.rows.map { LeaderboardStanding(user: $0.user, value: $0.value, reachedAt: $0.reachedAt) }
        #expect(LeaderboardRanker.rank(standings).map(\.rank) == board.rows.map(\.rank))
        #expect(LeaderboardRanker.rank(standings).map(\.standing.user) == board.rows.map(\.user))
    }

    @Test func deletingTheAccountNeedsThePasswordAndSignsOut() async throws {
        let fakes = FakeServices(scenario: .populated, clock: clock)
        var states = await fakes.auth.stateUpdates().makeAsyncIterator()
        #expect(await states.next() == .signedIn(userID: FakeData.user.id))
        let error = await #expect(throws: KitError.self) { try await fakes.profile.deleteAccount(.password("wrong")) }
        #expect(error?.kind == .invalidCredentials)
        try await fakes.profile.deleteAccount(.password(FakeData.password))
        #expect(await states.next() == .signedOut(.accountDeleted))
        await #expect(throws: KitError.notSignedIn) { try await fakes.profile.profile() }
    }
}
