import FitBaseCore
import Foundation
import SQLKit

/// A challenge as stored.
struct Challenge: Sendable, Equatable {
    var id: ChallengeID
    var group: GroupID
    var kind: ChallengeKind
    var week: ChallengeWeek
    var closedAt: Date?
}

/// A leaderboard entry as stored.
struct ChallengeEntry: Sendable, Equatable {
    var user: UserID
    var value: Int
    var rank: Int
    var reachedAt: Date
    var displayName: String?
    var photoURL: String?
}

/// Keeps challenges scored as workouts are logged and deleted, inside the transaction that logs or deletes them.
///
/// A workout counts for the member's group when they share workout data (`privacy.shareWorkoutData`, checked when it
/// is logged: turning it back on does not backfill), in the challenges of the group-time-zone week its `completedAt`
/// falls in. Each log counts once per challenge (`challenge_workouts`), so re-sending or editing it never counts twice
/// and deleting it takes it back. The group's row is locked first, so concurrent workouts of one group are scored one
/// after the other and ranks are never computed from a stale board.
enum ChallengeScoring {
    /// Scores a logged (or edited) workout. Returns the group whose leaderboards changed, if any.
    @discardableResult
    static func logged(_ log: WorkoutLog, of user: UserID, now: Date, on db: any SQLDatabase) async throws -> GroupID? {
        // Outside a group nothing is scored (leaving took the member's workouts off the open boards already).
        // Read once per push: no pushed write changes a membership.
        let membership = try await SyncFeed.Batch.remembered("group-membership") { try await GroupStore.membership(of: user, on: db) }
        guard let membership else { return nil }
        let profile = try await ProfileStore.settings(of: user, on: db)
        guard profile.shareWorkoutData, let group = try await GroupStore.group(membership.group, on: db, locking: true) else { return nil }
        let week = ChallengeWeek.containing(log.completedAt, in: LocalCalendar.timeZone(group.timeZone))
        var targets: Set<ChallengeID> = []
        for kind in ChallengeKind.allCases {
            let challenge = try await ensureChallenge(group: group.id, kind: kind, week: week, now: now, on: db)
            guard challenge.closedAt == nil else { continue }  // a finished week's results are final
            targets.insert(challenge.id)
            try await db.insert(into: "challenge_workouts").columns("challenge_id", "workout_log_id", "user_id", "local_date")
                .values(SQLBind(challenge.id.rawValue), SQLBind(log.id.rawValue), SQLBind(user.rawValue), SQLBind(log.localDate.description))
                .onConflict(with: ["challenge_id", "workout_log_id"]) { $0.set(excludedValueOf: "local_date") }
                .run()
            try await rescore(challenge, user: user, profile: profile, now: now, on: db)
        }
        // An edit that moved the workout to another week takes it out of that week's challenges.
        _ = try await withdraw(log.id, of: user, except: targets, now: now, on: db)
        return group.id
    }

    /// Takes a deleted workout back out of every challenge it counted in. Returns the group whose boards changed.
    @discardableResult
    static func removed(_ logID: WorkoutLogID, of user: UserID, now: Date, on db: any SQLDatabase) async throws -> GroupID? {
        try await withdraw(logID, of: user, except: [], now: now, on: db)
    }

    /// A member left (or was removed): their entries leave the group's open challenges and the others are re-ranked.
    static func memberLeft(_ user: UserID, group: GroupID, now: Date, on db: any SQLDatabase) async throws {
        let open = try await db.select().column("id").from("challenges").where("group_id", .equal, group.rawValue).where("closed_at", .is, SQLLiteral.null)
            .all().map { ChallengeID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
        for challenge in open {
            try await db.delete(from: "challenge_workouts").where("challenge_id", .equal, challenge.rawValue).where("user_id", .equal, user.rawValue).run()
            try await db.delete(from: "challenge_entries").where("challenge_id", .equal, challenge.rawValue).where("user_id", .equal, user.rawValue).run()
            _ = try await rerank(challenge, group: group, now: now, on: db)
        }
    }

    // MARK: Challenges

    /// How long a week's results stay readable (`GET /v1/groups/{id}/challenges?week=`).
    static let retention: TimeInterval = 90 * 86_400

    /// Deletes challenges whose week started before `cutoff`; their entries and counted workouts cascade.
    static func purge(startedBefore cutoff: Date, database: Database) async throws {
        try await database.transaction { db in try await db.delete(from: "challenges").where("starts_at", .lessThan, cutoff).run() }
    }

    /// The group's challenge of `kind` for `week`, created on first use.
    static func ensureChallenge(group: GroupID, kind: ChallengeKind, week: ChallengeWeek, now: Date, on db: any SQLDatabase) async throws -> Challenge {
        if let existing = try await challenge(group: group, kind: kind, week: week, on: db) { return existing }
        try await db.insert(into: "challenges").columns("id", "group_id", "type", "week_start", "starts_at", "ends_at", "created_at")
            .values(SQLBind(ChallengeID().rawValue), SQLBind(group.rawValue), SQLBind(kind.rawValue), SQLBind(week.startDay.description), SQLBind(week.start), SQLBind(week.end), SQLBind(now))
            .ignoringConflicts(with: ["group_id", "type", "week_start"])
            .run()
        guard let challenge = try await challenge(group: group, kind: kind, week: week, on: db) else { throw ChallengeScoringError.vanished }
        return challenge
    }

    /// The group's challenge of `kind` for `week`, if it was made.
    static func challenge(group: GroupID, kind: ChallengeKind, week: ChallengeWeek, on db: any SQLDatabase) async throws -> Challenge? {
        try await db.select().columns("id", "closed_at").from("challenges").where("group_id", .equal, group.rawValue)
            .where("type", .equal, kind.rawValue).where("week_start", .equal, week.startDay.description).first()
            .map { row in
                Challenge(id: ChallengeID(rawValue: try row.decode(column: "id", as: UUID.self)), group: group, kind: kind, week: week, closedAt: try row.decode(column: "closed_at", as: Date?.self))
            }
    }

    // MARK: Scoring

    private static func withdraw(_ logID: WorkoutLogID, of user: UserID, except kept: Set<ChallengeID>, now: Date, on db: any SQLDatabase) async throws -> GroupID? {
        let rows = try await db.select().columns(SQLColumn("challenge_id", table: "challenge_workouts"), SQLColumn("group_id", table: "challenges"),
            SQLColumn("type", table: "challenges"), SQLColumn("week_start", table: "challenges"), SQLColumn("closed_at", table: "challenges"))
            .from("challenge_workouts").join("challenges", on: SQLColumn("id", table: "challenges"), .equal, SQLColumn("challenge_id", table: "challenge_workouts"))
            .where(SQLColumn("workout_log_id", table: "challenge_workouts"), .equal, SQLBind(logID.rawValue))
            .where(SQLColumn("user_id", table: "challenge_workouts"), .equal, SQLBind(user.rawValue)).all()
        var changed: GroupID?
        for row in rows {
            let id = ChallengeID(rawValue: try row.decode(column: "challenge_id", as: UUID.self))
            guard !kept.contains(id), try row.decode(column: "closed_at", as: Date?.self) == nil else { continue }
            let groupID = GroupID(rawValue: try row.decode(column: "group_id", as: UUID.self))
            guard let group = try await GroupStore.group(groupID, on: db, locking: true),
                let monday = CalendarDay(try row.decode(column: "week_start", as: String.self)),
                let week = ChallengeWeek(starting: monday, in: LocalCalendar.timeZone(group.timeZone))
            else { continue }
            try await db.delete(from: "challenge_workouts").where("challenge_id", .equal, id.rawValue).where("workout_log_id", .equal, logID.rawValue).run()
            let challenge = Challenge(
                id: id, group: groupID, kind: ChallengeKind(rawValue: try row.decode(column: "type", as: String.self)) ?? .checkIns, week: week, closedAt: nil
            )
            try await rescore(challenge, user: user, profile: nil, now: now, on: db)
            changed = groupID
        }
        return changed
    }

    /// Recounts the member's value in the challenge, then re-ranks the board (notifying whoever was overtaken). The
    /// entry keeps the name and picture of `profile` (the scorer's, as the seed denormalizes them).
    private static func rescore(_ challenge: Challenge, user: UserID, profile: Profile?, now: Date, on db: any SQLDatabase) async throws {
        let days = try await db.select().column("local_date").from("challenge_workouts").where("challenge_id", .equal, challenge.id.rawValue)
            .where("user_id", .equal, user.rawValue).all().compactMap { CalendarDay(try $0.decode(column: "local_date", as: String.self)) }
        let value = switch challenge.kind {
        case .checkIns: days.count
        case .streak: ChallengeStreak.value(days: Set(days), in: challenge.week)
        }
        let board = try await entries(of: challenge.id, on: db)
        let current = board.first { $0.user == user }?.value
        if value == 0 {
            try await db.delete(from: "challenge_entries").where("challenge_id", .equal, challenge.id.rawValue).where("user_id", .equal, user.rawValue).run()
        } else if current == nil {
            try await db.insert(into: "challenge_entries")
                .columns("challenge_id", "user_id", "value", "reached_at", "rank", "display_name", "photo_url", "updated_at")
                .values(
                    SQLBind(challenge.id.rawValue), SQLBind(user.rawValue), SQLBind(value), SQLBind(now), SQLBind(0), SQLBind(profile?.displayName),
                    SQLBind(profile?.photoURL), SQLBind(now)
                ).run()
        } else if current != value {
            var update = db.update("challenge_entries").set("value", to: value).set("reached_at", to: now).set("updated_at", to: now)
            if let profile { update = update.set("display_name", to: profile.displayName).set("photo_url", to: profile.photoURL) }
            try await update.where("challenge_id", .equal, challenge.id.rawValue).where("user_id", .equal, user.rawValue).run()
        }
        guard current != value else { return }
        _ = try await rerank(challenge.id, group: challenge.group, kind: challenge.kind, before: board, now: now, on: db)
    }

    /// Ranks the board again; members passed by someone (comparing with the board `before` the change) get a
    /// `rank_change` notification. Returns the board.
    @discardableResult
    static func rerank(
        _ challenge: ChallengeID, group: GroupID, kind knownKind: ChallengeKind? = nil, before previous: [ChallengeEntry]? = nil, now: Date, on db: any SQLDatabase
    ) async throws -> [ChallengeEntry] {
        let entries = try await self.entries(of: challenge, on: db)
        let before = (previous ?? entries).filter { $0.rank > 0 }.map {
            RankedStanding(standing: LeaderboardStanding(user: $0.user, value: $0.value, reachedAt: $0.reachedAt), rank: $0.rank)
        }
        let ranked = LeaderboardRanker.rank(entries.map { LeaderboardStanding(user: $0.user, value: $0.value, reachedAt: $0.reachedAt) })
        var reranked = false
        for standing in ranked {
            guard let entry = entries.first(where: { $0.user == standing.standing.user }), entry.rank != standing.rank else { continue }
            try await db.update("challenge_entries").set("rank", to: standing.rank).where("challenge_id", .equal, challenge.rawValue)
                .where("user_id", .equal, entry.user.rawValue).run()
            reranked = true
        }
        let kind: String? = if let knownKind {
            knownKind.rawValue
        } else {
            try await db.select().column("type").from("challenges").where("id", .equal, challenge.rawValue).first()?.decode(column: "type", as: String.self)
        }
        let board = reranked ? try await self.entries(of: challenge, on: db) : entries
        try await EventLog.append(topic: .group(group), type: "leaderboard", data: LeaderboardEvent(
            challengeId: challenge.description, type: kind ?? ChallengeKind.checkIns.rawValue,
            entries: board.map {
                .init(userId: $0.user.description, displayName: GroupStore.displayName($0.displayName, of: $0.user), photoURL: $0.photoURL, value: $0.value, rank: $0.rank)
            }
        ), now: now, on: db)
        for passed in LeaderboardRanker.overtaken(before: before, after: ranked) {
            let label = kind == ChallengeKind.streak.rawValue ? "streak" : "check-ins"
            try await NotificationStore.add(.rankChange, to: passed.user, group: group, message: "You were overtaken in this week's \(label): now #\(passed.to) (was #\(passed.from)).", now: now, on: db)
        }
        return board
    }

    /// The board, best first.
    static func entries(of challenge: ChallengeID, on db: any SQLDatabase) async throws -> [ChallengeEntry] {
        try await db.select().columns("user_id", "value", "rank", "reached_at", "display_name", "photo_url").from("challenge_entries")
            .where("challenge_id", .equal, challenge.rawValue).all()
            .map { row in
                ChallengeEntry(
                    user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)), value: try row.decode(column: "value", as: Int.self),
                    rank: try row.decode(column: "rank", as: Int.self), reachedAt: try row.decode(column: "reached_at", as: Date.self),
                    displayName: try row.decode(column: "display_name", as: String?.self),
                    photoURL: try row.decode(column: "photo_url", as: String?.self)
                )
            }
            .sorted { ($0.value, $1.reachedAt, $1.user) > ($1.value, $0.reachedAt, $0.user) }
    }
}

/// The `leaderboard` event: a board as it now stands.
struct LeaderboardEvent: Encodable, Sendable {
    struct Entry: Encodable, Sendable {
        var userId: String
        var displayName: String
        var photoURL: String?
        var value: Int
        var rank: Int
    }

    var challengeId: String
    var type: String
    var entries: [Entry]
}

enum ChallengeScoringError: Error {
    case vanished
}
