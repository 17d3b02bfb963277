import SQLKit

/// `users`: one row per account, whatever the sign-in method.
struct CreateUsers: Migration {
    let name = "2026-11-22.accounts.create-users"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "users")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("email", type: .text)  // normalised; NULL for provider accounts without one
            .column("password_hash", type: .text)  // bcrypt; NULL for provider-only accounts
            .column("display_name", type: .text)
            .column("role", type: .text, .notNull, .default("user"))
            .timestampColumns(engine)
            .run()
        try await database.create(index: "users_email_unique").unique().on("users").column("email").run()
    }
}

/// `sessions` (one per sign-in on a device, the refresh-token family) and `refresh_tokens` (stored as SHA-256 only).
struct CreateSessions: Migration {
    let name = "2026-11-22.accounts.create-sessions"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "sessions")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("device_label", type: .text)
            .column("created_at", type: engine.instant, .notNull)
            .column("last_used_at", type: engine.instant, .notNull)
            .column("revoked_at", type: engine.instant)
            .run()
        try await database.create(index: "sessions_user").on("sessions").column("user_id").run()

        try await database.create(table: "refresh_tokens")
            .column("token_hash", type: .text, .primaryKey(autoIncrement: false))
            .column("session_id", type: engine.uuid, .notNull, .references("sessions", "id", onDelete: .cascade))
            .ownerColumn(engine)
            .column("created_at", type: engine.instant, .notNull)
            .column("expires_at", type: engine.instant, .notNull)
            .column("replaced_at", type: engine.instant)  // set when rotated; presenting it again is reuse
            .run()
        try await database.create(index: "refresh_tokens_session").on("refresh_tokens").column("session_id").run()
    }
}

/// `sign_in_failures`: recent failed password sign-ins per e-mail address, for throttling.
struct CreateSignInFailures: Migration {
    let name = "2026-11-22.accounts.create-sign-in-failures"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "sign_in_failures")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("subject", type: .text, .notNull)
            .column("failed_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "sign_in_failures_subject").on("sign_in_failures").column("subject").column("failed_at").run()
    }
}

/// `user_profiles`: onboarding answers and preferences, one row per account that has set any.
struct CreateUserProfiles: Migration {
    let name = "2026-11-22.accounts.create-user-profiles"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "user_profiles")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("fitness_level", type: .text)
            .column("goals", type: .text, .notNull)  // JSON array
            .column("preferred_workout_types", type: .text, .notNull)  // JSON array
            .column("average_cycle_length", type: .int, .notNull)
            .column("average_period_length", type: .int, .notNull)
            .column("last_period_start_date", type: .text)
            .column("cycle_tracking_enabled", type: engine.boolean, .notNull)
            .column("notifications_enabled", type: engine.boolean)
            .column("preferred_workout_time", type: .text)
            .column("time_zone", type: .text)
            .column("share_workout_data", type: engine.boolean, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .run()
    }
}

/// `consents`: every grant and withdrawal, kept as history; the latest per kind is in force.
struct CreateConsents: Migration {
    let name = "2026-11-22.accounts.create-consents"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "consents")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("kind", type: .text, .notNull)
            .column("version", type: .text, .notNull)
            .column("granted", type: engine.boolean, .notNull)
            .column("recorded_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "consents_user_kind").on("consents").column("user_id").column("kind").run()
    }
}

/// `user_identities`: Sign in with Apple and Google accounts, keyed by the provider's `sub`.
struct CreateUserIdentities: Migration {
    let name = "2026-11-22.accounts.create-user-identities"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "user_identities")
            .column("provider", type: .text, .notNull)
            .column("subject", type: .text, .notNull)
            .ownerColumn(engine)
            .column("audience", type: .text, .notNull)  // the client id the token was issued to (needed to revoke)
            .column("email", type: .text)
            .column("email_verified", type: engine.boolean, .notNull)
            .column("is_private_email", type: engine.boolean, .notNull)
            .column("email_relay_enabled", type: engine.boolean, .notNull)
            .column("sealed_refresh_token", type: .text)  // Apple refresh token, AES-GCM under the master key
            .timestampColumns(engine)
            .primaryKey("provider", "subject")
            .run()
        try await database.create(index: "user_identities_user").on("user_identities").column("user_id").run()
    }
}

/// `user_profiles.available_equipment`: the equipment the user has (JSON array; null until answered).
struct AddAvailableEquipment: Migration {
    let name = "2026-11-23.accounts.add-available-equipment"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "user_profiles").column("available_equipment", type: .text).run()
    }
}

/// `user_profiles.cycle_key_id`/`cycle_sealed`: the profile's cycle dates (``SealedProfileFields``) sealed under the
/// user's data key like the rest of their cycle data. Dates earlier versions kept in `last_period_start_date` move
/// there as the server starts (``CycleDataSealing``); the clear column is only ever NULL after.
struct SealProfileCycleDates: Migration {
    let name = "2026-11-25.accounts.seal-profile-cycle-dates"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "user_profiles").column("cycle_key_id", type: .text).run()
        try await database.alter(table: "user_profiles").column("cycle_sealed", type: engine.bytes).run()
    }
}
