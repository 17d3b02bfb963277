import FitBaseCore
import Foundation
import Testing

@Suite struct LeaderboardRankerTests {
    private let monday = Date(timeIntervalSince1970: 1_794_787_200)  // 2026-11-16T00:00:00Z

    /// The member called `name`: the name's letters are the first bytes of the id, so ids order as names do.
    private func user(_ name: String) -> UserID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: name.utf8.prefix(16)) }
        return UserID(rawValue: UUID(uuid: uuid))
    }

    /// The name of a member made by ``user(_:)``.
    private func name(_ user: UserID) -> String {
        withUnsafeBytes(of: user.rawValue.uuid) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// A standing reached `minutes` after Monday 00:00 UTC.
    private func standing(_ name: String, _ value: Int, at minutes: Int = 0) -> LeaderboardStanding {
        LeaderboardStanding(user: user(name), value: value, reachedAt: monday.addingTimeInterval(Double(minutes) * 60))
    }

    private func board(_ standings: [LeaderboardStanding]) -> [RankedStanding] { LeaderboardRanker.rank(standings) }

    private func overtaken(_ before: [LeaderboardStanding], _ after: [LeaderboardStanding]) -> [String] {
        LeaderboardRanker.overtaken(before: board(before), after: board(after))
            .map { "\(name($0.user)) \($0.from)→\($0.to)" }
    }

    @Test func equalValuesShareARankAndTheNextRankSkips() {
        let ranked = board([standing("d", 1), standing("b", 3), standing("a", 5), standing("c", 3)])
        #expect(ranked.map(\.standing.value) == [5, 3, 3, 1])
        #expect(ranked.map(\.rank) == [1, 2, 2, 4])
    }

    @Test func equalValuesAreListedByWhoReachedThemFirstThenUserID() {
        let ranked = board([
            standing("a", 4, at: 30), standing("z", 4, at: 10), standing("c", 4, at: 30), standing("b", 9, at: 50),
        ])
        #expect(ranked.map { name($0.standing.user) } == ["b", "z", "a", "c"])
        #expect(ranked.map(\.rank) == [1, 2, 2, 2])
    }

    @Test func emptySingleAndAllEqualBoards() {
        #expect(board([]).isEmpty)
        #expect(board([standing("solo", 0)]) == [RankedStanding(standing: standing("solo", 0), rank: 1)])
        let tied = board([standing("c", 2, at: 1), standing("a", 2, at: 1), standing("b", 2, at: 0)])
        #expect(tied.map { name($0.standing.user) } == ["b", "a", "c"])
        #expect(tied.map(\.rank) == [1, 1, 1])
    }

    @Test func aPassedMemberReportsOldAndNewRank() {
        let before = [standing("ana", 5), standing("bo", 4), standing("cy", 3)]
        let after = [standing("ana", 5), standing("bo", 4), standing("cy", 6, at: 60)]
        #expect(overtaken(before, after) == ["ana 1→2", "bo 2→3"])
        #expect(overtaken(before, before).isEmpty)
    }

    @Test func tyingIsNotBeingOvertaken() {
        // cy catches up with ana: ana still shares rank 1; bo is passed by cy.
        let before = [standing("ana", 5), standing("bo", 4), standing("cy", 3)]
        let after = [standing("ana", 5), standing("bo", 4), standing("cy", 5, at: 60)]
        #expect(overtaken(before, after) == ["bo 2→3"])
        // Breaking a tie upward passes the member who was tied.
        let tiedBefore = [standing("ana", 4), standing("bo", 4, at: 5)]
        #expect(overtaken(tiedBefore, [standing("ana", 4), standing("bo", 5, at: 60)]) == ["ana 1→2"])
    }

    @Test func aFallingMemberIsNotToldTheyWerePassed() {
        // bo's streak broke (3 → 1): ana, who stood still, now ranks above bo, but nobody passed bo.
        let before = [standing("ana", 2), standing("bo", 3)]
        #expect(overtaken(before, [standing("ana", 2), standing("bo", 1, at: 60)]).isEmpty)
        // Someone who did move past bo still counts.
        let moving = [standing("ana", 4, at: 61), standing("bo", 1, at: 60)]
        #expect(overtaken(before, moving) == ["bo 1→2"])
    }

    @Test func newMembersAreNotReportedButCanPassOthers() {
        let before = [standing("ana", 2), standing("bo", 1)]
        let after = [standing("ana", 2), standing("bo", 1), standing("new", 3, at: 60)]
        #expect(overtaken(before, after) == ["ana 1→2", "bo 2→3"])
        #expect(overtaken(before, [standing("ana", 2), standing("bo", 1), standing("low", 0, at: 60)]).isEmpty)
        #expect(overtaken([], after).isEmpty)
    }
}
