import FitBaseCore
import OpenAPIRuntime
import SQLKit

/// A feature's share of an account: what it exports for the user and how it deletes it.
///
/// Every feature that stores rows for a user adds an owner to the registry, so account export and deletion cover
/// it without the accounts feature knowing its tables.
protocol AccountDataOwner: Sendable {
    /// The export section's name, e.g. `consents`.
    var section: String { get }
    /// The user's data of this feature as JSON (dates as RFC 3339 strings).
    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer
    /// Deletes every row of this feature that belongs to the user, inside the deletion transaction.
    func delete(_ user: UserID, on db: any SQLDatabase) async throws
}

/// All features' owners, in registration order (deletion runs in reverse, dependents first).
struct AccountDataRegistry: Sendable {
    let owners: [any AccountDataOwner]

    /// Every section, on one connection.
    func export(_ user: UserID, database: Database) async throws -> [String: OpenAPIValueContainer] {
        let owners = self.owners
        return try await database.withConnection { db in
            var sections: [String: OpenAPIValueContainer] = [:]
            for owner in owners { sections[owner.section] = try await owner.export(user, on: db) }
            return sections
        }
    }

    /// Deletes the user's rows of every feature, then the account, in one transaction; last, the realtime events that
    /// name the user (what must still be heard names only sessions: their streams end).
    func deleteAccount(_ user: UserID, database: Database) async throws {
        let owners = self.owners
        try await database.transaction { db in
            for owner in owners.reversed() { try await owner.delete(user, on: db) }
            try await db.delete(from: "users").where("id", .equal, user.rawValue).run()
            try await EventLog.purge(naming: user, on: db)
        }
    }
}
