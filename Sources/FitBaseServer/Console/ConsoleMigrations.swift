import SQLKit

/// `console_sessions`: the operator console's signed-in browsers. The cookie holds a random token; only its SHA-256 is
/// stored, with the session's CSRF token, so every instance sharing the database knows the session and a revoked one
/// ends everywhere at its next request.
struct CreateConsoleSessions: Migration {
    let name = "2026-11-26.console.create-sessions"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "console_sessions")
            .column("token_hash", type: .text, .primaryKey(autoIncrement: false))
            .column("id", type: engine.uuid, .notNull)
            .ownerColumn(engine)
            .column("csrf_token", type: .text, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .column("expires_at", type: engine.instant, .notNull)
            .column("revoked_at", type: engine.instant)
            .run()
        try await database.create(index: "console_sessions_id").unique().on("console_sessions").column("id").run()
        try await database.create(index: "console_sessions_user").on("console_sessions").column("user_id").run()
    }
}

/// `operator_audit`: what administrators did in the console (and `fitbase admin` on their behalf): who, when, what, to
/// what. No foreign key on the administrator or the target: the trail outlives both.
struct CreateOperatorAudit: Migration {
    let name = "2026-11-26.console.create-operator-audit"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "operator_audit")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("at", type: engine.instant, .notNull)
            .column("admin_id", type: engine.uuid, .notNull)
            .column("admin_email", type: .text)
            .column("action", type: .text, .notNull)
            .column("target_kind", type: .text, .notNull)
            .column("target_id", type: .text, .notNull)
            .column("detail", type: .text)
            .run()
        try await database.create(index: "operator_audit_at").on("operator_audit").column("at").run()
        try await database.create(index: "operator_audit_target").on("operator_audit").column("target_id").run()
    }
}
