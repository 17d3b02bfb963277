import Foundation
import Logging
import ServiceLifecycle

/// Purges tombstones (and pushed-mutation results) older than the retention, ten minutes after start and then
/// every six hours; a failure is logged and retried next time.
struct SyncRetentionService: Service {
    let database: Database
    /// Finishes account deletions an instance began and did not end.
    let registry: AccountDataRegistry
    /// `FITBASE_UNVERIFIED_ACCOUNT_DAYS`; `nil` when off.
    let unverifiedAccounts: UnverifiedAccountSweeper?
    let logger: Logger
    var clock = ServerClock.system
    var firstRun: Duration = .seconds(600)
    var interval: Duration = .seconds(6 * 3600)

    func run() async throws {
        var wait = firstRun
        while !Task.isCancelled {
            let pause = wait
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            } catch {
                return
            }
            wait = interval
            do {
                let now = clock.now
                let purged = try await SyncFeed.purge(before: now.addingTimeInterval(-SyncFeed.tombstoneRetention), database: database)
                if purged > 0 { logger.info("purged sync tombstones", metadata: ["count": "\(purged)"]) }
                // Realtime events past their replay window go on the same schedule.
                try await EventLog.purge(before: now.addingTimeInterval(-EventLog.retention), database: database)
                // Challenges (their boards and counted workouts go with them) once their week is past the 90 days of results.
                try await ChallengeScoring.purge(startedBefore: now.addingTimeInterval(-ChallengeScoring.retention), database: database)
                // And the accounts' short-lived rows: spent counters, expired links, delivered e-mail.
                try await AccountsRetention.purge(now: now, database: database)
                try await registry.finishInterruptedDeletions(database: database, startedBefore: now.addingTimeInterval(-600), now: now)
                try await unverifiedAccounts?.sweep(now: now)
            } catch {
                logger.error("sync tombstone purge failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
