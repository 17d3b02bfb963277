import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of challenges: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum ChallengeWire {
    static func wire(_ challenge: Challenge) -> Components.Schemas.Challenge {
        .init(
            id: challenge.id.description, groupId: challenge.group.description,
            _type: challenge.kind, weekStart: challenge.week.startDay.description,
            startsAt: challenge.week.start, endsAt: challenge.week.lastSecond, isActive: challenge.closedAt == nil
        )
    }

    static func wire(_ entry: ChallengeEntry) -> Components.Schemas.LeaderboardEntry {
        .init(
            userId: entry.user.description, displayName: GroupStore.displayName(entry.displayName, of: entry.user), photoURL: entry.photoURL,
            value: entry.value, rank: entry.rank,
            reachedAt: entry.reachedAt
        )
    }
}
