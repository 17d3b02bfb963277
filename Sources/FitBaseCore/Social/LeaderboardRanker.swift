#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A member's standing before ranking.
public struct LeaderboardStanding: Sendable, Equatable {
    /// The member.
    public var user: UserID
    /// Check-ins this week, or streak days.
    public var value: Int
    /// When the member reached `value` (earlier ranks higher among equal values).
    public var reachedAt: Date

    /// A standing from its parts.
    public init(user: UserID, value: Int, reachedAt: Date) {
        self.user = user
        self.value = value
        self.reachedAt = reachedAt
    }
}

/// A ranked standing.
public struct RankedStanding: Sendable, Equatable {
    /// The member's standing.
    public var standing: LeaderboardStanding
    /// 1-based; equal values share a rank and the next rank skips (1, 2, 2, 4).
    public var rank: Int

    /// A ranked standing from its parts.
    public init(standing: LeaderboardStanding, rank: Int) {
        self.standing = standing
        self.rank = rank
    }
}

/// Orders a leaderboard: value descending, then who reached it first, then user id (in its text's order, as the
/// server lists a board); equal values share a rank.
public enum LeaderboardRanker {
    /// The standings in leaderboard order with their ranks ("competition" ranking: 1, 2, 2, 4).
    ///
    /// `reachedAt` and the user id only order members with equal values; they never split a shared rank.
    public static func rank(_ standings: [LeaderboardStanding]) -> [RankedStanding] {
        let ordered = standings.sorted { lhs, rhs in
            if lhs.value != rhs.value { return lhs.value > rhs.value }
            if lhs.reachedAt != rhs.reachedAt { return lhs.reachedAt < rhs.reachedAt }
            return lhs.user < rhs.user
        }
        var ranked: [RankedStanding] = []
        ranked.reserveCapacity(ordered.count)
        for (index, standing) in ordered.enumerated() {
            let shared = ranked.last.flatMap { $0.standing.value == standing.value ? $0.rank : nil }
            ranked.append(RankedStanding(standing: standing, rank: shared ?? index + 1))
        }
        return ranked
    }

    /// Users whose rank got worse from `before` to `after` because someone passed them (for "you were overtaken"
    /// notifications), in `after`'s order, with their old and new rank.
    ///
    /// A user is reported when they are in both lists, their rank number grew, and at least one member passed them:
    /// someone now strictly above them who was not before (was tied, below or absent) and who moved (their value grew
    /// or they are new). So tying with someone is never being overtaken (a shared rank keeps its number), order among
    /// tied members does not count, and a member whose own value fell (a broken streak) is not told someone passed
    /// them unless someone really did. Users absent from `before` are never reported; users absent from `after` are
    /// ignored. Quadratic in the group size, which is meant for one group's board.
    public static func overtaken(
        before: [RankedStanding], after: [RankedStanding]
    ) -> [(user: UserID, from: Int, to: Int)] {
        let old = Dictionary(before.map { ($0.standing.user, $0) }, uniquingKeysWith: { first, _ in first })
        return after.compactMap { entry in
            guard let previous = old[entry.standing.user], entry.rank > previous.rank else { return nil }
            let passed = after.contains { other in
                guard other.standing.value > entry.standing.value else { return false }
                guard let was = old[other.standing.user] else { return true }
                return was.standing.value <= previous.standing.value && was.standing.value < other.standing.value
            }
            return passed ? (entry.standing.user, previous.rank, entry.rank) : nil
        }
    }
}
