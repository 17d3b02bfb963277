#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One weekly challenge of a group (the contract's `Challenge`): what it counts and the week it runs.
public struct WeeklyChallenge: Sendable, Hashable, Identifiable, Codable {
    public var id: ChallengeID
    /// The group it belongs to.
    public var group: GroupID
    /// What it counts.
    public var type: ChallengeKind
    /// The Monday the week starts on (in the group's time zone).
    public var weekStart: CalendarDay
    /// Monday 00:00 in the group's time zone.
    public var startsAt: Date
    /// Sunday 23:59:59 in the group's time zone.
    public var endsAt: Date
    /// The week is running; once over, its board is final.
    public var isActive: Bool

    /// A challenge from its parts.
    public init(
        id: ChallengeID, group: GroupID, type: ChallengeKind, weekStart: CalendarDay, startsAt: Date, endsAt: Date, isActive: Bool
    ) {
        self.id = id
        self.group = group
        self.type = type
        self.weekStart = weekStart
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.isActive = isActive
    }

    private enum CodingKeys: String, CodingKey {
        case id, type, weekStart, startsAt, endsAt, isActive
        case group = "groupId"
    }
}

/// A week's leaderboard of one challenge (the contract's `Leaderboard`): the challenge, its rows best first, and the
/// reader's own row.
public struct GroupLeaderboard: Sendable, Hashable, Codable {
    /// The challenge the board ranks.
    public var challenge: WeeklyChallenge
    /// Best first (``LeaderboardRanker``).
    public var rows: [LeaderboardEntry]
    /// The reader's own row, when they have scored.
    public var currentUser: LeaderboardEntry?

    /// A board from its parts.
    public init(challenge: WeeklyChallenge, rows: [LeaderboardEntry], currentUser: LeaderboardEntry?) {
        self.challenge = challenge
        self.rows = rows
        self.currentUser = currentUser
    }

    /// What the challenge counts.
    public var type: ChallengeKind { challenge.type }
    /// The Monday the week starts on.
    public var weekStart: CalendarDay { challenge.weekStart }
    /// When the week ends.
    public var endsAt: Date { challenge.endsAt }
    /// The week is over: the board is final.
    public var isFinal: Bool { !challenge.isActive }

    private enum CodingKeys: String, CodingKey {
        case challenge
        case rows = "entries"
        case currentUser = "currentUserEntry"
    }
}
