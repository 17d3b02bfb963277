import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct LeaderboardModelTests {
    private let groupID = FakeData.group(now: TestKitClock().now).0.id

    @Test func followsTheBoardAndHighlightsRankChanges() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.leaderboard)
        let model = LeaderboardModel(groupID: groupID, dependencies: fixture.dependencies)
        model.appear()
        #expect(model.isLive)
        await eventually { model.board != nil }
        #expect(model.rows.count == 5 && model.rankChanges.isEmpty && model.currentUser?.user == FakeData.user.id && !model.isEmpty)
        // Check-ins start Bea 5, Carla 4, Dani 3, Eva 2, Ana 1: Ana checking in four times ends level with Bea.
        for count in 2...5 {
            await fixture.fakes.groups.checkIn(userID: FakeData.user.id)
            await eventually { model.currentUser?.value == count }
        }
        #expect(model.currentUser?.rank == 1)
        let carla = try #require(model.rows.first { $0.displayName == "Carla" })
        #expect(model.rankChanges[FakeData.user.id] == .up(1) && model.rankChanges[carla.user] == .down(1))
        model.disappear()
        #expect(!model.isLive)
    }

    @Test func disappearingStopsFollowing() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.leaderboard)
        let model = LeaderboardModel(groupID: groupID, dependencies: fixture.dependencies)
        model.appear()
        await eventually { model.board != nil }
        let before = model.board
        model.disappear()
        await model.waitUntilEnded()
        let last = try #require(model.rows.last)
        await fixture.fakes.groups.checkIn(userID: last.user)
        for _ in 0..<1_000 { await Task.yield() }
        #expect(model.board == before && !model.isLive)
    }

    @Test func switchingTheChallengeRestartsTheStream() async {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.leaderboard)
        let model = LeaderboardModel(groupID: groupID, dependencies: fixture.dependencies)
        await model.select(.checkIns)
        model.appear()
        await eventually { model.board?.type == .checkIns }
        await model.select(.streak)
        #expect(model.board == nil && model.isLive)
        await eventually { model.board?.type == .streak }
        #expect(model.rankChanges.isEmpty)
        model.disappear()
    }

    @Test func theStreamEndsWhenTheUserLeaves() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.leaderboard, .leave)
        let model = LeaderboardModel(groupID: groupID, dependencies: fixture.dependencies)
        model.appear()
        await eventually { model.board != nil }
        try await fixture.fakes.groups.leave(groupID: groupID)
        await model.waitUntilEnded()
        #expect(model.error?.kind == .notFound && !model.isLive)
    }

    @Test func offlineEndsTheStreamWithARetryableError() async {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.leaderboard)
        fixture.fakes.groups.knobs.fail(.leaderboard, with: .offline)
        let model = LeaderboardModel(groupID: groupID, dependencies: fixture.dependencies)
        model.appear()
        await model.waitUntilEnded()
        #expect(model.error?.isOffline == true && model.error?.isRetryable == true && !model.isLive && model.board == nil)
        #expect(fixture.events == [.operationFailed(feature: .groups, reason: .offline)])
    }

    @Test func aNewGroupsBoardIsEmpty() async throws {
        let fixture = Fixture(.empty)
        fixture.fakes.groups.knobs.implement(.createGroup, .leaderboard)
        let group = try await fixture.fakes.groups.createGroup(name: "New", timeZone: "UTC")
        let model = LeaderboardModel(groupID: group.id, dependencies: fixture.dependencies)
        model.appear()
        await eventually { model.board != nil }
        #expect(model.isEmpty)
        await fixture.fakes.groups.checkIn(userID: FakeData.user.id)
        await eventually { !model.isEmpty }
        model.disappear()
    }

    @Test func rankChangesBetweenBoards() {
        let (a, b, c) = (UserID(), UserID(), UserID())
        func row(_ user: UserID, _ name: String, value: Int, rank: Int) -> LeaderboardEntry {
            LeaderboardEntry(user: user, displayName: name, value: value, rank: rank, reachedAt: Date(timeIntervalSince1970: 0))
        }
        let old = [row(a, "A", value: 3, rank: 1), row(b, "B", value: 1, rank: 2)]
        let new = [row(b, "B", value: 4, rank: 1), row(a, "A", value: 3, rank: 2), row(c, "C", value: 1, rank: 3)]
        #expect(LeaderboardModel.changes(from: old, to: new) == [a: .down(1), b: .up(1), c: .new])
    }
}

@MainActor @Suite struct LeaderboardWeeksTests {
    private let groupID = FakeData.group(now: TestKitClock().now).0.id

    @Test func pastWeeksShowTheirFinalBoardAndThisWeekGoesLiveAgain() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.leaderboard, .leaderboards)
        let model = LeaderboardModel(groupID: groupID, dependencies: fixture.dependencies)
        model.appear()
        await eventually { model.board != nil }
        let thisWeek = try #require(model.board?.weekStart)
        await model.showPreviousWeek()
        #expect(model.pastWeek == thisWeek.adding(days: -7) && !model.isLive && model.board == nil && model.error == nil)
        await model.showWeek(of: thisWeek)
        #expect(model.pastWeek == thisWeek && model.board?.type == .checkIns)
        await model.select(.streak)
        #expect(model.board?.type == .streak && !model.isLive)
        await model.showWeek(of: thisWeek.adding(days: -120))
        #expect(model.error?.fieldErrors["week"] != nil)
        model.showThisWeek()
        #expect(model.pastWeek == nil && model.isLive)
        await eventually { model.board?.type == .streak }
        model.disappear()
    }
}
