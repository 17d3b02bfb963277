import FitBaseCore
import Foundation
import Hummingbird
import Logging
import SQLKit

/// The Users pages: find an account by e-mail or id, and one account's page — its sign-in methods, sessions (revoke),
/// consents, subscriptions, group, a tier grant and deletion. Never a health or cycle value: nothing here reads them.
/// Opening an account is itself recorded in the operator audit trail.
extension ConsoleFeature {
    func users(_ request: Request, _ admin: ConsoleAdmin) async throws -> Response {
        let query = request.uri.queryParameters.get("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        let rows = try await database.withConnection { db in
            var select = db.select().columns("id", "email", "role", "created_at", "last_sign_in_at").from("users")
                .where("deleting_at", .is, SQLLiteral.null)
            if let id = UUID(uuidString: query) {
                select = select.where("id", .equal, id)
            } else if !query.isEmpty {
                let pattern = "%" + query.lowercased().replacingOccurrences(of: "%", with: "").replacingOccurrences(of: "_", with: "") + "%"
                select = select.where(SQLFunction("lower", args: SQLColumn("email")), .like, SQLBind(pattern))
            }
            return try await select.orderBy("created_at", .descending).limit(50).all().map { row -> [String: String] in
                let id = try row.decode(column: "id", as: UUID.self).uuidString.lowercased()
                return [
                    "id": id, "email": try row.decode(column: "email", as: String?.self) ?? "(no e-mail)",
                    "role": try row.decode(column: "role", as: String.self),
                    "created": consoleTime(try row.decode(column: "created_at", as: Date.self)),
                    "lastSignIn": consoleTime(try row.decode(column: "last_sign_in_at", as: Date?.self)),
                ]
            }
        }
        return try renderer.page("users", title: "Users", section: "/console/users", admin: admin, [
            "query": query, "users": rows, "searched": !query.isEmpty, "count": rows.count,
        ])
    }

    /// One account's page; after a change made on it (the form redirected here), a notice saying what was done.
    func user(_ request: Request, _ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let id = try Self.userID(context)
        guard let account = try await accounts.users.find(id: id) else { throw Problem.notFound("No account \(id).") }
        let now = clock.now
        try await database.transaction { db in
            try await OperatorAuditTrail.record(.userOpened, by: admin, target: "user", id.description, now: now, on: db)
        }
        let sessions = try await accounts.sessions.list(user: id, limit: 100, after: nil)
        let consents = try await accounts.consents.history(of: id)
        let (identities, subscriptions, membership) = try await database.withConnection { db in
            let identities = try await db.select().columns("provider", "email", "created_at").from("user_identities")
                .where("user_id", .equal, id.rawValue).all().map { row -> [String: String] in
                    [
                        "provider": try row.decode(column: "provider", as: String.self),
                        "email": try row.decode(column: "email", as: String?.self) ?? "—",
                        "since": consoleTime(try row.decode(column: "created_at", as: Date.self)),
                    ]
                }
            let subscriptions = try await SubscriptionStore.records(of: id, on: db)
            let membership = try await GroupStore.membership(of: id, on: db)
            return (identities, subscriptions, membership)
        }
        let resolver = EntitlementResolver()
        let trail = try await OperatorAuditTrail.recent(limit: 20, target: id.description, in: database)
        var values: [String: Any] = [
            "id": id.description, "userID": id.description, "email": account.email ?? "(no e-mail)", "confirmWord": account.email ?? id.description,
            "displayName": account.displayName ?? "—", "role": account.role.rawValue,
            "verified": account.emailVerifiedAt.map(consoleTime) ?? "not verified", "created": consoleTime(account.createdAt),
            "lastSignIn": consoleTime(account.lastSignInAt), "hasPassword": account.passwordHash != nil,
            "identities": identities,
            "sessions": sessions.map { session -> [String: Any] in
                [
                    "id": session.id.description, "device": session.deviceLabel ?? "(unnamed device)",
                    "created": consoleTime(session.createdAt), "lastUsed": consoleTime(session.lastUsedAt),
                ]
            },
            "consents": consents.reversed().map { event -> [String: Any] in
                ["kind": event.kind.rawValue, "version": event.version, "answer": event.granted ? "granted" : "withdrawn", "at": consoleTime(event.recordedAt)]
            },
            "subscriptions": subscriptions.filter { !$0.isPlaceholder }.map { record -> [String: Any] in
                [
                    "source": record.state.source.rawValue, "product": record.state.productID, "tier": record.state.tier.rawValue,
                    "status": resolver.status(of: record.state, at: now).rawValue, "expires": consoleTime(record.state.expiresAt),
                    "changed": consoleTime(record.stateAt), "external": record.externalID,
                ]
            },
            "trail": trail.map(Self.trailRow),
        ]
        if let membership { values["group"] = ["id": membership.group.description, "role": membership.role.rawValue] }
        let query = request.uri.queryParameters
        if let revoked = query.get("revoked").flatMap(SessionID.init) {
            values["notice"] = "Session \(revoked) revoked: its next request is refused."
        } else if let granted = query.get("granted").flatMap(SubscriptionTier.init(rawValue:)) {
            values["notice"] = "Granted \(granted.rawValue); the subscription history below says until when."
        }
        return try renderer.page("user", title: account.email ?? id.description, section: "/console/users", admin: admin, values)
    }

    func revokeSession(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let user = try Self.userID(context)
        guard let session = SessionID(Self.parameter("session", context)) else { throw Problem.notFound("No such session.") }
        let now = clock.now
        let revoked = try await database.transaction { db in
            guard try await SessionStore.revoke(session, of: user, now: now, on: db) else { return false }
            try await OperatorAuditTrail.record(.sessionRevoked, by: admin, target: "user", user.description, detail: "session \(session)", now: now, on: db)
            return true
        }
        guard revoked else { throw Problem.notFound("The session has ended already, or is not this account's.") }
        return ConsoleRenderer.redirect("/console/users/\(user)?revoked=\(session)")
    }

    func grantTier(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let user = try Self.userID(context)
        var errors: [Problem.FieldError] = []
        let tier = form.text("tier").flatMap(SubscriptionTier.init(rawValue:))
        if tier == nil || tier == .free { errors.append(.init(field: "tier", message: "must be pro or premium")) }
        var days: Int?
        if let text = form.text("days") {
            days = Int(text)
            if days.map({ $0 < 1 || $0 > 3650 }) ?? true { errors.append(.init(field: "days", message: "must be a whole number of days, 1–3650, or empty")) }
        }
        guard let tier, errors.isEmpty else { throw Problem.validationFailed(errors) }
        let grantedDays = days
        guard try await accounts.users.find(id: user) != nil else { throw Problem.notFound("No account \(user).") }
        let now = clock.now
        try await database.transaction { db in
            _ = try await AccountAdministration.grantTier(tier, to: user, days: grantedDays, now: now, on: db)
            try await OperatorAuditTrail.record(
                .tierGranted, by: admin, target: "user", user.description, detail: "\(tier.rawValue) " + (grantedDays.map { "for \($0) days" } ?? "without end"),
                now: now, on: db
            )
        }
        return ConsoleRenderer.redirect("/console/users/\(user)?granted=\(tier.rawValue)")
    }

    func deleteUser(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let user = try Self.userID(context)
        guard let account = try await accounts.users.find(id: user) else { throw Problem.notFound("No account \(user).") }
        let expected = account.email ?? user.description
        guard form.text("confirm") == expected else {
            throw Problem.validationFailed([.init(field: "confirm", message: "must be the account's e-mail address (\(expected)) to delete it")])
        }
        guard user != admin.user else {
            throw Problem(.forbidden, code: .forbidden, detail: "You cannot delete your own account from the console; use the app or another administrator.")
        }
        let now = clock.now
        try await database.transaction { db in
            try await OperatorAuditTrail.record(.userDeleted, by: admin, target: "user", user.description, detail: account.email, now: now, on: db)
        }
        try await accounts.registry.deleteAccount(user, now: now, database: database)
        logger.notice("account deleted from the console", metadata: ["user": "\(user)", "admin": "\(admin.user)"])
        return try renderer.page("message", title: "Account deleted", section: "/console/users", admin: admin, [
            "message": "The account \(expected) and all its data were deleted.", "back": "/console/users",
        ])
    }

    static func userID(_ context: FitBaseRequestContext) throws(Problem) -> UserID {
        guard let id = UserID(parameter("user", context)) else { throw Problem.notFound("No account \(parameter("user", context)).") }
        return id
    }

    static func trailRow(_ action: OperatorAction) -> [String: Any] {
        [
            "at": consoleTime(action.at), "admin": action.adminLabel, "action": action.action,
            "target": "\(action.targetKind) \(action.targetID)", "detail": action.detail ?? "",
        ]
    }
}
