import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// Refuses password sign-ins for an e-mail address after 5 failures within 15 minutes, whether or not an account
/// exists for it (so the limit does not reveal which addresses have accounts). Kept in the database so every instance
/// counts the same failures; addresses are stored only as SHA-256.
struct SignInThrottle: Sendable {
    static let maximumFailures = 5
    static let window: TimeInterval = 15 * 60

    let database: Database

    /// Throws 429 `too_many_attempts` with `Retry-After` when `email` is locked out at `now`.
    func check(_ email: EmailAddress, now: Date) async throws {
        let subject = Self.subject(email)
        let failures = try await database.withConnection { db in
            try await db.select().column("failed_at").from("sign_in_failures")
                .where("subject", .equal, subject)
                .where("failed_at", .greaterThan, now.addingTimeInterval(-Self.window))
                .orderBy("failed_at", .descending)
                .limit(Self.maximumFailures)
                .all()
                .map { try $0.decode(column: "failed_at", as: Date.self) }
        }
        guard failures.count >= Self.maximumFailures, let oldest = failures.last else { return }
        let retryAfter = max(1, Int((oldest.addingTimeInterval(Self.window).timeIntervalSince(now)).rounded(.up)))
        throw Problem(
            .tooManyRequests, code: "too_many_attempts",
            detail: "Too many failed sign-ins for this address; try again in \(retryAfter) seconds.",
            headers: [.retryAfter: String(retryAfter)]
        )
    }

    /// Records a failure and forgets those older than the window.
    func recordFailure(_ email: EmailAddress, now: Date) async throws {
        let subject = Self.subject(email)
        try await database.transaction { db in
            try await db.delete(from: "sign_in_failures").where("failed_at", .lessThan, now.addingTimeInterval(-Self.window)).run()
            try await db.insert(into: "sign_in_failures").columns("id", "subject", "failed_at")
                .values(SQLBind(UUID()), SQLBind(subject), SQLBind(now)).run()
        }
    }

    /// Clears the failures of `email` after a successful sign-in.
    func reset(_ email: EmailAddress) async throws {
        let subject = Self.subject(email)
        try await database.transaction { db in
            try await db.delete(from: "sign_in_failures").where("subject", .equal, subject).run()
        }
    }

    private static func subject(_ email: EmailAddress) -> String {
        sha256Hex("email:\(email.value)")
    }
}
