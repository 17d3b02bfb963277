import SQLKit

/// `users.email_verified_at` (when the address was proven: a link clicked, or a provider that vouches for it) and
/// `users.last_sign_in_at`. Accounts made by Apple or Google sign-in had a provider-verified address: they count as
/// verified from their creation.
struct AddEmailVerification: Migration {
    let name = "2026-11-24.accounts.add-email-verification"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "users").column("email_verified_at", type: engine.instant).run()
        try await database.alter(table: "users").column("last_sign_in_at", type: engine.instant).run()
        try await database.update("users").set(SQLIdentifier("email_verified_at"), to: SQLIdentifier("created_at"))
            .where("password_hash", .is, SQLLiteral.null).where("email", .isNot, SQLLiteral.null).run()
    }
}

/// `account_tokens`: single-use links sent by e-mail (address verification, password reset, e-mail change), stored
/// only as SHA-256.
struct CreateAccountTokens: Migration {
    let name = "2026-11-24.accounts.create-account-tokens"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "account_tokens")
            .column("token_hash", type: .text, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("purpose", type: .text, .notNull)  // verify-email | reset-password | change-email
            .column("email", type: .text, .notNull)  // the address the link was sent to (the new one for a change)
            .column("created_at", type: engine.instant, .notNull)
            .column("expires_at", type: engine.instant, .notNull)
            .column("used_at", type: engine.instant)
            .run()
        try await database.create(index: "account_tokens_user").on("account_tokens").column("user_id").run()
    }
}

/// `rate_limits`: one counter per subject (an address's sign-in failures, a client address's reset requests, …) in
/// a fixed window; replaces `sign_in_failures`, whose count could be raced.
struct CreateRateLimits: Migration {
    let name = "2026-11-24.accounts.create-rate-limits"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "rate_limits")
            .column("subject", type: .text, .primaryKey(autoIncrement: false))
            .column("window_start", type: engine.instant, .notNull)
            .column("count", type: .int, .notNull)
            .run()
        try await database.drop(table: "sign_in_failures").ifExists().run()
    }
}

/// `trusted_devices`: devices that signed in to an account with its password; each has its own sign-in allowance,
/// so failures caused by someone who knows only the address do not lock them out.
struct CreateTrustedDevices: Migration {
    let name = "2026-11-24.accounts.create-trusted-devices"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "trusted_devices")
            .column("token_hash", type: .text, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("created_at", type: engine.instant, .notNull)
            .column("expires_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "trusted_devices_user").on("trusted_devices").column("user_id").run()
    }
}

/// `apple_notification_receipts`: the `jti` of every Apple server-to-server notification processed recently, so a
/// replayed one is a no-op.
struct CreateAppleNotificationReceipts: Migration {
    let name = "2026-11-24.accounts.create-apple-notification-receipts"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "apple_notification_receipts")
            .column("jti", type: .text, .primaryKey(autoIncrement: false))
            .column("received_at", type: engine.instant, .notNull)
            .run()
    }
}

/// `identity_token_nonces`: the nonce of every provider ID token signed in with, until the token expires, so a
/// captured token and its nonce work once — on any instance.
struct CreateIdentityTokenNonces: Migration {
    let name = "2026-11-25.accounts.create-identity-token-nonces"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "identity_token_nonces")
            .column("nonce_hash", type: .text, .primaryKey(autoIncrement: false))  // SHA-256 of provider and nonce claim
            .column("expires_at", type: engine.instant, .notNull)
            .run()
    }
}

/// `users.deleting_at`: an account whose deletion has begun (it is unreachable, and housekeeping finishes it should
/// the instance that began it stop).
struct AddAccountDeletingAt: Migration {
    let name = "2026-11-25.accounts.add-deleting-at"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "users").column("deleting_at", type: engine.instant).run()
    }
}

/// `outbox`: work that leaves the process after a commit (e-mail, Apple token revocations), written in the
/// transaction of the change that causes it and delivered by ``OutboxWorker`` with retries. Payloads are sealed
/// under the master key: they hold addresses, links and tokens.
struct CreateOutbox: Migration {
    let name = "2026-11-24.mail.create-outbox"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "outbox")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("kind", type: .text, .notNull)  // email | apple-token-revocation
            .column("user_id", type: engine.uuid)  // whom it concerns; no foreign key: revocations outlive the account
            .column("payload", type: engine.bytes, .notNull)
            .column("status", type: .text, .notNull)  // pending | sent | failed
            .column("attempts", type: .int, .notNull)
            .column("next_attempt_at", type: engine.instant, .notNull)
            .column("claimed_until", type: engine.instant)
            .column("last_error", type: .text)
            .column("created_at", type: engine.instant, .notNull)
            .column("completed_at", type: engine.instant)
            .run()
        try await database.create(index: "outbox_due").on("outbox").column("status").column("next_attempt_at").run()
        try await database.create(index: "outbox_user").on("outbox").column("user_id").run()
    }
}

/// `signing_keys`: the deployment's access-token signing keys, shared by every instance on the database.
struct CreateSigningKeys: Migration {
    let name = "2026-11-23.accounts.create-signing-keys"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "signing_keys")
            .column("kid", type: .text, .primaryKey(autoIncrement: false))
            .column("state", type: .text, .notNull)
            .column("public_key", type: .text, .notNull)
            .column("sealed_private_key", type: engine.bytes, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .column("demoted_at", type: engine.instant)
            .run()
        // At most one current key, whatever instances race to insert one.
        try await database.raw("CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (state) WHERE state = 'current'").run()
    }
}
