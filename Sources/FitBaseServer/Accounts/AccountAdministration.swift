import FitBaseCore
import Foundation
import SQLKit

/// Account administration for the command line (`fitbase admin`).
package struct AccountAdministration: Sendable {
    let database: Database
    /// Where the grants' times come from (the command line: the system's).
    let clock: ServerClock

    package init(database: Database, clock: ServerClock) {
        self.database = database
        self.clock = clock
    }

    /// Gives the account with `email` the role named `roleName`.
    package func grantRole(_ roleName: String, toEmail email: String) async throws {
        guard let role = Role(rawValue: roleName.lowercased()) else {
            throw AdministrationError("unknown role \"\(roleName)\"; expected one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let address = EmailAddress(email) else { throw AdministrationError("\"\(email)\" is not an e-mail address") }
        let users = UserStore(database: database)
        guard let user = try await users.find(email: address) else { throw AdministrationError("no account has the e-mail \(address)") }
        try await users.setRole(role, for: user.id, now: clock.now)
    }

    /// Grants the account with `email` the tier named `tierName` for `days` days (`nil`: without end), as a promotional
    /// subscription that resolves with the stores' like any other; returns when it ends.
    @discardableResult
    package func grantTier(_ tierName: String, toEmail email: String, days: Int?) async throws -> Date? {
        guard let tier = SubscriptionTier(rawValue: tierName.lowercased()), tier != .free else {
            throw AdministrationError("unknown tier \"\(tierName)\"; expected pro or premium")
        }
        if let days, days < 1 { throw AdministrationError("--days must be at least 1") }
        guard let address = EmailAddress(email) else { throw AdministrationError("\"\(email)\" is not an e-mail address") }
        guard let user = try await UserStore(database: database).find(email: address) else { throw AdministrationError("no account has the e-mail \(address)") }
        return try await grantTier(tier, to: user.id, days: days)
    }

    /// ``grantTier(_:toEmail:days:)`` by user id.
    @discardableResult
    package func grantTier(_ tier: SubscriptionTier, to user: UserID, days: Int?) async throws -> Date? {
        let now = clock.now
        return try await database.transaction { db in try await Self.grantTier(tier, to: user, days: days, now: now, on: db) }
    }

    /// ``grantTier(_:to:days:)`` in the caller's transaction (the console records who granted it in the same one).
    static func grantTier(_ tier: SubscriptionTier, to user: UserID, days: Int?, now: Date, on db: any SQLDatabase) async throws -> Date? {
        let expires = days.map { now.addingTimeInterval(TimeInterval($0) * 86_400) }
        let id = UUID.random()
        let record = SubscriptionRecord(
            id: id, user: user, externalID: "promotional-\(id.uuidString.lowercased())",
            state: SubscriptionState(source: .promotional, productID: "promotional.\(tier.rawValue)", tier: tier, expiresAt: expires, willRenew: false),
            stateAt: now
        )
        try await SubscriptionStore.save(record, now: now, on: db)
        return expires
    }
}

/// A refused administration command, said in one line.
package struct AdministrationError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
