import HTTPTypes
import FitBaseCore
import Foundation
import SQLKit

/// Limits password guessing without letting a stranger lock an owner out.
///
/// Every attempt is counted *before* its password is checked, in one atomic step per counter (see ``RateLimiter``),
/// so N concurrent guesses cannot all pass a limit of 5. An attempt counts against:
/// * its e-mail address — 5 per 15 minutes, known address or not (so the limit reveals nothing), and its client
///   address — 30 failures per 15 minutes; or, instead of both,
/// * its **trusted device**: a device that signed in to this account with the password before presents the device
///   token it was given then (`deviceToken`), and gets its own allowance of 5 per 15 minutes. Someone who knows only
///   the address can exhaust the address's allowance, but not the owner's devices'.
struct SignInThrottle: Sendable {
    static let perAddress = RateLimiter.Rule(name: "signin-address", limit: 5, window: 15 * 60)
    static let perClient = RateLimiter.Rule(name: "signin-client", limit: 30, window: 15 * 60)
    static let perDevice = RateLimiter.Rule(name: "signin-device", limit: 5, window: 15 * 60)
    /// A device token stays valid this long after the last sign-in that used it.
    static let deviceLifetime: TimeInterval = 180 * 24 * 3600

    let database: Database

    /// What an admitted attempt was counted against, to settle once the password is checked.
    struct Attempt: Sendable {
        let address: String
        let client: String?
        /// The hash of a valid device token presented with the attempt.
        let deviceHash: String?
    }

    /// Counts an attempt for `email`; throws 429 `too_many_attempts` with `Retry-After` when it is over a limit.
    func admit(_ email: EmailAddress, deviceToken: String?, client: String?, now: Date) async throws -> Attempt {
        let address = email.value
        let presented = deviceToken.map(Self.hash)
        let outcome: (Attempt, Int?) = try await database.transaction { db in
            if let presented, try await Self.isTrusted(presented, for: address, now: now, on: db) {
                let attempt = Attempt(address: address, client: client, deviceHash: presented)
                return (attempt, try await RateLimiter.hit(presented, Self.perDevice, now: now, on: db))
            }
            let attempt = Attempt(address: address, client: client, deviceHash: nil)
            var retryAfter = try await RateLimiter.hit(address, Self.perAddress, now: now, on: db)
            if let client, let clientRetry = try await RateLimiter.hit(client, Self.perClient, now: now, on: db) {
                retryAfter = max(retryAfter ?? 0, clientRetry)
            }
            return (attempt, retryAfter)
        }
        if let retryAfter = outcome.1 {
            throw Problem.tooManyRequests(
                .tooManyAttempts, retryAfter: retryAfter, "Too many sign-in attempts; try again in \(retryAfter) seconds."
            )
        }
        return outcome.0
    }

    /// The password was right: the counter the attempt used starts over (a trusted device's success leaves the
    /// address's counter alone: it must not hand whoever is guessing at the address a fresh allowance), and the device
    /// is (still) trusted. Returns the device token to give the client (the one it presented, or a new one).
    func succeeded(_ attempt: Attempt, presentedToken: String?, user: UserID, now: Date, on db: any SQLDatabase) async throws -> String {
        if attempt.deviceHash == nil {
            try await RateLimiter.reset(attempt.address, Self.perAddress, on: db)
            if let client = attempt.client { try await RateLimiter.undo(client, Self.perClient, on: db) }
        }
        if let deviceHash = attempt.deviceHash, let presentedToken {
            try await RateLimiter.reset(deviceHash, Self.perDevice, on: db)
            try await db.update("trusted_devices").set("expires_at", to: now.addingTimeInterval(Self.deviceLifetime))
                .where("token_hash", .equal, deviceHash).run()
            return presentedToken
        }
        return try await Self.trustDevice(of: user, now: now, on: db)
    }

    /// Makes a new device token for `user` (after a password sign-in).
    static func trustDevice(of user: UserID, now: Date, on db: any SQLDatabase) async throws -> String {
        let token = randomToken()
        try await db.insert(into: "trusted_devices").columns("token_hash", "user_id", "created_at", "expires_at")
            .values(SQLBind(hash(token)), SQLBind(user.rawValue), SQLBind(now), SQLBind(now.addingTimeInterval(deviceLifetime)))
            .run()
        return token
    }

    /// Forgets every device of `user` (the password was reset, or the account taken over by its provider).
    static func forgetDevices(of user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "trusted_devices").where("user_id", .equal, user.rawValue).run()
    }

    /// Clears the address's counter (the password was reset through a link sent to it).
    static func forgive(_ email: EmailAddress, on db: any SQLDatabase) async throws {
        try await RateLimiter.reset(email.value, perAddress, on: db)
    }

    private static func isTrusted(_ hash: String, for address: String, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.select().column(SQLColumn("token_hash", table: "trusted_devices")).from("trusted_devices")
            .join("users", on: SQLColumn("id", table: "users"), .equal, SQLColumn("user_id", table: "trusted_devices"))
            .where(SQLColumn("token_hash", table: "trusted_devices"), .equal, SQLBind(hash))
            .where(SQLColumn("email", table: "users"), .equal, SQLBind(address))
            .where(SQLColumn("expires_at", table: "trusted_devices"), .greaterThan, SQLBind(now))
            .first() != nil
    }

    static func hash(_ token: String) -> String {
        sha256Hex("device:\(token)")
    }
}

/// 256 random bits, base64url: refresh tokens, device tokens, e-mail link tokens.
func randomToken() -> String {
    Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncoded
}
