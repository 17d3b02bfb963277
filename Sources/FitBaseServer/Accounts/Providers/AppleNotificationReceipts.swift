import Foundation
import SQLKit

/// SQL for `apple_notification_receipts`: the `jti` of every Apple server-to-server notification acted on, so a replay
/// (from any instance) is ignored. Receipts older than twice a notification's accepted age are swept as new ones come.
struct AppleNotificationReceipts: Sendable {
    let database: Database

    /// Records `jti` received at `now`; `false` when it was received before. Receipts older than `keep` go first.
    func claim(_ jti: String, now: Date, keep: TimeInterval) async throws -> Bool {
        try await database.transaction { db in
            try await db.delete(from: "apple_notification_receipts").where("received_at", .lessThan, now.addingTimeInterval(-keep)).run()
            return !(try await db.insert(into: "apple_notification_receipts").columns("jti", "received_at")
                .values(SQLBind(jti), SQLBind(now)).ignoringConflicts(with: ["jti"]).returning("jti").all()).isEmpty
        }
    }

    /// Forgets `jti`, so Apple's retry of a notification that was not acted on is.
    func forget(_ jti: String) async throws {
        try await database.transaction { db in try await db.delete(from: "apple_notification_receipts").where("jti", .equal, jti).run() }
    }
}
