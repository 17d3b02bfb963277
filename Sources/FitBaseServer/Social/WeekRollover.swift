import FitBaseCore
import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// Closes finished challenge weeks: the results become final, every member of the group gets a `week_ended`
/// notification with their standing, and a `week_ended` event goes to the group. Archives older than 90 days and
/// expired notifications are purged. Safe when several instances run it: a week is closed by a conditional update,
/// so only one instance notifies.
package struct WeekRollover: Sendable {
    let database: Database
    static let archiveRetention: TimeInterval = 90 * 86_400

    package init(database: Database) {
        self.database = database
    }

    /// Rolls over every week that ended by `now`; returns how many challenges this call closed.
    @discardableResult
    package func rollOver(at now: Date) async throws -> Int {
        let due = try await database.withConnection { db in
            try await db.select().columns("id", "group_id", "type", "week_start").from("challenges")
                .where("ends_at", .lessThanOrEqual, now).where("closed_at", .is, SQLLiteral.null).all()
                .map { (id: ChallengeID(rawValue: try $0.decode(column: "id", as: UUID.self)), group: GroupID(rawValue: try $0.decode(column: "group_id", as: UUID.self)),
                        kind: try $0.decode(column: "type", as: String.self), week: try $0.decode(column: "week_start", as: String.self)) }
        }
        var closed = 0
        for challenges in Dictionary(grouping: due, by: { "\($0.group)|\($0.week)" }).values {
            closed += try await database.transaction { db in
                var standings: [UserID: [String]] = [:]
                var closedHere = 0
                for challenge in challenges {
                    let won = try await db.update("challenges").set("closed_at", to: now).where("id", .equal, challenge.id.rawValue)
                        .where("closed_at", .is, SQLLiteral.null).returning("id").all()
                    guard !won.isEmpty else { continue }  // another instance closed it
                    closedHere += 1
                    let label = challenge.kind == ChallengeKind.streak.rawValue ? "streak" : "check-ins"
                    for entry in try await ChallengeScoring.entries(of: challenge.id, on: db) {
                        standings[entry.user, default: []].append("#\(entry.rank) in \(label) (\(entry.value))")
                    }
                }
                guard closedHere > 0, let first = challenges.first else { return 0 }
                for member in try await GroupStore.members(of: first.group, on: db) {
                    let result = standings[member.user].map { $0.joined(separator: ", ") } ?? "no workouts counted"
                    try await NotificationStore.add(
                        .weekEnded, to: member.user, group: first.group, message: "The week of \(first.week) is over: \(result).", now: now, on: db
                    )
                }
                try await EventLog.append(
                    topic: .group(first.group), type: "week_ended", data: ["weekStart": first.week], now: now, on: db
                )
                return closedHere
            }
        }
        try await database.transaction { db in
            try await db.delete(from: "challenges").where("ends_at", .lessThan, now.addingTimeInterval(-Self.archiveRetention)).run()
            try await db.delete(from: "notifications").where("expires_at", .lessThanOrEqual, now).run()
        }
        return closed
    }
}

extension PeriodicService {
    /// Closes the challenge weeks that have ended, every minute, at the application's time.
    static func weekRollover(_ rollover: WeekRollover, clock: ServerClock, logger: Logger, every interval: Duration = .seconds(60)) -> PeriodicService {
        PeriodicService(interval: interval, logger: logger, failure: "week rollover failed") {
            let closed = try await rollover.rollOver(at: clock.now)
            if closed > 0 { logger.info("closed challenge weeks", metadata: ["challenges": "\(closed)"]) }
        }
    }
}
