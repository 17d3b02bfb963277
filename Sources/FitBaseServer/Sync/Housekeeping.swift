import Foundation
import Logging
import ServiceLifecycle

/// The deployment's housekeeping, ten minutes after start and then every six hours: tombstones and pushed-mutation
/// results past their retention, realtime events past their replay window, challenges past their results, the
/// accounts' short-lived rows, interrupted account deletions, and (`FITBASE_UNVERIFIED_ACCOUNT_DAYS`) accounts never
/// verified.
struct Housekeeping: Sendable {
    let database: Database
    /// Finishes account deletions an instance began and did not end.
    let registry: AccountDataRegistry
    /// `FITBASE_UNVERIFIED_ACCOUNT_DAYS`; `nil` when off.
    let unverifiedAccounts: UnverifiedAccountSweeper?
    let logger: Logger

    /// One turn, at `now`.
    func run(at now: Date) async throws {
        let purged = try await SyncFeed.purge(before: now.addingTimeInterval(-SyncFeed.tombstoneRetention), database: database)
        if purged > 0 { logger.info("purged sync tombstones", metadata: ["count": "\(purged)"]) }
        try await EventLog.purge(before: now.addingTimeInterval(-EventLog.retention), database: database)
        // Challenges (their boards and counted workouts go with them) once their week is past the 90 days of results.
        try await ChallengeScoring.purge(startedBefore: now.addingTimeInterval(-ChallengeScoring.retention), database: database)
        try await AccountsRetention.purge(now: now, database: database)
        try await registry.finishInterruptedDeletions(database: database, startedBefore: now.addingTimeInterval(-600), now: now)
        try await unverifiedAccounts?.sweep(now: now)
    }
}

extension PeriodicService {
    /// A feature's purge on housekeeping's schedule (`FITBASE_HOUSEKEEPING_*`), run by every instance: a DELETE of rows
    /// another instance already deleted deletes nothing, so running it on several at once costs only the query.
    /// `purge` returns how many rows it removed, logged as `purged <what>` when any.
    static func purge(
        _ what: String, schedule: (first: Duration, interval: Duration), logger: Logger, _ purge: @escaping @Sendable () async throws -> Int
    ) -> PeriodicService {
        PeriodicService(interval: schedule.interval, firstRun: schedule.first, logger: logger, failure: "purging \(what) failed") {
            let purged = try await purge()
            if purged > 0 { logger.info("purged \(what)", metadata: ["count": "\(purged)"]) }
        }
    }

    /// Runs `housekeeping` after `firstRun`, then every `interval`, at the application's time.
    static func housekeeping(
        _ housekeeping: Housekeeping, clock: ServerClock, firstRun: Duration = .seconds(600), every interval: Duration = .seconds(6 * 3600)
    ) -> PeriodicService {
        PeriodicService(interval: interval, firstRun: firstRun, logger: housekeeping.logger, failure: "housekeeping failed") {
            try await housekeeping.run(at: clock.now)
        }
    }
}
