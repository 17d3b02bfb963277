import FitBaseAPI
import FitBaseCore
import Foundation

/// A group's weekly challenges and their boards: this week's made on first use, earlier weeks' read as they were.
struct ChallengeBoards: Sendable {
    let database: Database
    let clock: ServerClock

    /// This week's two challenges of the group, created on first use (read first: only the week's first request
    /// writes).
    func current(of group: StoredGroup) async throws -> [Challenge] {
        let week = ChallengeWeek.containing(clock.now, in: LocalCalendar.timeZone(group.timeZone))
        let existing = try await existing(of: group.id, in: week)
        if existing.count == ChallengeKind.allCases.count { return existing }
        return try await database.transaction { db in
            var challenges: [Challenge] = []
            for kind in ChallengeKind.allCases {
                challenges.append(try await ChallengeScoring.ensureChallenge(group: group.id, kind: kind, week: week, now: clock.now, on: db))
            }
            return challenges
        }
    }

    /// The group's challenges of `week` that were made, in ``ChallengeKind`` order (none is created).
    func existing(of group: GroupID, in week: ChallengeWeek) async throws -> [Challenge] {
        try await database.withConnection { db in
            var found: [Challenge] = []
            for kind in ChallengeKind.allCases {
                if let challenge = try await ChallengeScoring.challenge(group: group, kind: kind, week: week, on: db) { found.append(challenge) }
            }
            return found
        }
    }

    /// The boards of `challenges` as `user` sees them (their own entry beside the ranking), in one connection.
    func boards(of challenges: [Challenge], for user: UserID) async throws -> [Components.Schemas.Leaderboard] {
        try await database.withConnection { db in
            var boards: [Components.Schemas.Leaderboard] = []
            for challenge in challenges {
                let entries = try await ChallengeScoring.entries(of: challenge.id, on: db).map(ChallengeWire.wire)
                boards.append(.init(challenge: ChallengeWire.wire(challenge), entries: entries, currentUserEntry: entries.first { $0.userId == user.description }))
            }
            return boards
        }
    }
}
