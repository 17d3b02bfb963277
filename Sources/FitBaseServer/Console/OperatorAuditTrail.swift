import FitBaseCore
import Foundation
import SQLKit

/// One thing an administrator did: signing in to the console, opening a user, granting a tier, revoking a session,
/// editing the catalog, deleting an account, changing a group, retrying a delivery.
package struct OperatorAction: Sendable, Equatable {
    package let id: UUID
    package let at: Date
    package let admin: UserID
    /// The administrator's address when it was done (the account may be gone since).
    package let adminEmail: String?
    package let action: String
    package let targetKind: String
    package let targetID: String
    package let detail: String?

    /// Who did it, as shown: their address then, else their id.
    package var adminLabel: String { adminEmail ?? admin.description }
}

/// The operator audit trail (`operator_audit`): written in the transaction of the change it records, read by the
/// console's System page, a user's page and `fitbase admin audit`.
///
/// The health audit log (``AuditLog``) is not reused: it is a chain per user of health-data access, sealed with the
/// audit key and checked by `fitbase audit verify`; an operator's catalog edit belongs to no user's chain.
package enum OperatorAuditTrail {
    /// The action names, stable strings the CLI and tests filter on.
    package enum Action: String, Sendable, CaseIterable {
        case signIn = "console.sign-in"
        case signOut = "console.sign-out"
        case userOpened = "user.opened"
        case sessionRevoked = "user.session-revoked"
        case tierGranted = "user.tier-granted"
        case userDeleted = "user.deleted"
        case workoutCreated = "catalog.workout-created"
        case workoutUpdated = "catalog.workout-updated"
        case workoutDeleted = "catalog.workout-deleted"
        case catalogImported = "catalog.imported"
        case memberRemoved = "group.member-removed"
        case groupEnded = "group.ended"
        case deliveryRetried = "delivery.retried"
        case auditVerified = "system.audit-verified"
        case configFlagSaved = "config.flag-saved"
        case configRolloutChanged = "config.rollout-changed"
        case configOverrideChanged = "config.override-changed"
        case configFlagDeleted = "config.flag-deleted"
    }

    /// Appends an entry on `db` (the transaction of the change it records).
    static func record(
        _ action: Action, by admin: ConsoleAdmin, target kind: String, _ target: String, detail: String? = nil, now: Date,
        on db: any SQLDatabase
    ) async throws {
        try await record(action, by: admin.user, email: admin.email, target: kind, target, detail: detail, now: now, on: db)
    }

    /// ``record(_:by:target:_:detail:now:on:)`` for an administrator outside the console (`fitbase config --by`).
    static func record(
        _ action: Action, by admin: UserID, email: String?, target kind: String, _ target: String, detail: String? = nil, now: Date,
        on db: any SQLDatabase
    ) async throws {
        try await db.insert(into: "operator_audit")
            .columns("id", "at", "admin_id", "admin_email", "action", "target_kind", "target_id", "detail")
            .values(
                SQLBind(UUID.random()), SQLBind(now), SQLBind(admin.rawValue), SQLBind(email), SQLBind(action.rawValue),
                SQLBind(kind), SQLBind(target), SQLBind(detail)
            )
            .run()
    }

    /// The newest entries first, at most `limit`, only those about `target` when given.
    package static func recent(limit: Int, target: String? = nil, in database: Database) async throws -> [OperatorAction] {
        try await database.withConnection { db in
            var query = db.select().columns("id", "at", "admin_id", "admin_email", "action", "target_kind", "target_id", "detail")
                .from("operator_audit")
            if let target { query = query.where("target_id", .equal, target) }
            return try await query.orderBy("at", .descending).orderBy("id", .descending).limit(limit).all().map { row in
                OperatorAction(
                    id: try row.decode(column: "id", as: UUID.self), at: try row.decode(column: "at", as: Date.self),
                    admin: UserID(rawValue: try row.decode(column: "admin_id", as: UUID.self)),
                    adminEmail: try row.decode(column: "admin_email", as: String?.self), action: try row.decode(column: "action", as: String.self),
                    targetKind: try row.decode(column: "target_kind", as: String.self), targetID: try row.decode(column: "target_id", as: String.self),
                    detail: try row.decode(column: "detail", as: String?.self)
                )
            }
        }
    }
}
