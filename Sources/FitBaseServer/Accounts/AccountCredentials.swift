import HTTPTypes
import FitBaseCore
import Foundation
import SQLKit

/// Everything that proves or replaces a credential by e-mail: verification links, password reset and change, and
/// e-mail change. The JSON endpoints and the pages the links open both call this one service.
struct AccountCredentials: Sendable {
    static let verificationPerAddress = RateLimiter.Rule(name: "verify-address", limit: 3, window: 3600)
    static let verificationPerClient = RateLimiter.Rule(name: "verify-client", limit: 20, window: 3600)
    static let resetPerAddress = RateLimiter.Rule(name: "reset-address", limit: 3, window: 3600)
    static let resetPerClient = RateLimiter.Rule(name: "reset-client", limit: 20, window: 3600)
    static let emailChangePerUser = RateLimiter.Rule(name: "email-change", limit: 5, window: 3600)
    /// `POST /v1/auth/password/forgot` answers no sooner than this after it arrives, whether or not the address has an
    /// account, so its timing does not tell.
    static let forgotPasswordFloor: Duration = .milliseconds(200)

    let database: Database
    let hasher: PasswordHasher
    let composer: AccountMailComposer
    let outbox: Outbox
    /// `FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS`; `nil` when off.
    let signUpsPerClient: RateLimiter.Rule?

    // MARK: Verification

    /// Issues a verification link for `user`'s address and queues the e-mail, in the caller's transaction.
    func queueVerification(for user: UserRecord, email: String, now: Date, on db: any SQLDatabase) async throws {
        try await AccountTokens.revoke(.verifyEmail, of: user.id, on: db)
        let token = try await AccountTokens.issue(.verifyEmail, for: user.id, email: email, now: now, on: db)
        try await outbox.enqueue(.email(try composer.verification(to: email, token: token)), user: user.id, now: now, on: db)
    }

    /// Counts a password sign-up before its password is hashed, whether or not the address has an account: one
    /// against the client's address (`FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS`) and one e-mail against the mailbox (3 an
    /// hour, shared with resends). 429 `too_many_attempts` past either.
    func admitSignUp(_ email: EmailAddress, client: String?, now: Date) async throws {
        try await database.transaction { [signUpsPerClient] db in
            var retryAfter = try await RateLimiter.hit(email.value, Self.verificationPerAddress, now: now, on: db)
            if let client, let signUpsPerClient, let clientRetry = try await RateLimiter.hit(client, signUpsPerClient, now: now, on: db) {
                retryAfter = max(retryAfter ?? 0, clientRetry)
            }
            if let retryAfter {
                throw Problem.tooManyRequests(.tooManyAttempts, retryAfter: retryAfter, "Too many sign-ups; try again in \(retryAfter) seconds.")
            }
        }
    }

    /// Creates `user` (its address not yet verified) and queues its verification link, in one transaction — unless
    /// an account has the address already: then nothing is created and that address is told someone tried to sign
    /// up with it. The caller answers both alike, so a sign-up does not tell whether an address has an account.
    func signUp(_ user: UserRecord, email: EmailAddress, now: Date) async throws {
        do {
            try await database.transaction { db in
                if try await UserStore.find(email: email, on: db) != nil { throw UserStore.emailTaken }
                try await UserStore.insert(user, on: db)
                try await queueVerification(for: user, email: email.value, now: now, on: db)
            }
        } catch is UserStore.EmailTaken {
            // Found, or taken by a concurrent sign-up (the unique index decided).
            try await database.transaction { [composer, outbox] db in
                guard let owner = try await UserStore.find(email: email, on: db) else { return }
                try await outbox.enqueue(.email(try composer.signUpAttempt(to: email.value)), user: owner.id, now: now, on: db)
            }
        }
    }

    /// Sends `user` a new verification link (`POST /v1/auth/email/verification`).
    func resendVerification(to user: UserID, client: String?, now: Date) async throws {
        try await database.transaction { db in
            guard let account = try await UserStore.find(id: user, on: db) else { throw Problem.internalError }
            guard let email = account.email else {
                throw Problem(.conflict, code: .noEmail, detail: "The account has no e-mail address to verify.")
            }
            guard account.emailVerifiedAt == nil else {
                throw Problem(.conflict, code: .emailAlreadyVerified, detail: "The account's e-mail address is already verified.")
            }
            try await Self.limit(email, Self.verificationPerAddress, client, Self.verificationPerClient, now: now, on: db)
            try await queueVerification(for: account, email: email, now: now, on: db)
        }
    }

    /// Redeems a verification or e-mail change token: the address is proven, and a change takes effect (its old
    /// address is told). Returns the proven address and what the token was for.
    func verifyEmail(token: String, now: Date) async throws -> RedeemedAccountToken {
        try await database.transaction { [composer, outbox] db in
            let redeemed = try await AccountTokens.redeem(token, purposes: [.verifyEmail, .changeEmail], now: now, on: db)
            guard let account = try await UserStore.find(id: redeemed.user, on: db) else { throw AccountTokens.invalid }
            switch redeemed.purpose {
            case .changeEmail:
                try await UserStore.changeEmail(of: account.id, to: redeemed.email, now: now, on: db)
                try await AccountTokens.revoke(.verifyEmail, of: account.id, on: db)
                if let old = account.email, old != redeemed.email {
                    try await outbox.enqueue(
                        .email(try composer.emailChanged(to: old, newEmail: redeemed.email)),
                        user: account.id, now: now, on: db
                    )
                }
            case .verifyEmail, .resetPassword:
                // A link to an address the account no longer has proves nothing about the current one.
                guard account.email == redeemed.email else { throw AccountTokens.invalid }
                try await UserStore.markEmailVerified(account.id, email: redeemed.email, now: now, on: db)
            }
            return redeemed
        }
    }

    /// The address and purpose a verification or e-mail change token would prove, without spending it (the page a
    /// link opens shows them above its confirm button).
    func checkVerificationToken(_ token: String, now: Date) async throws -> RedeemedAccountToken {
        try await database.withConnection { db in
            try await AccountTokens.peek(token, purposes: [.verifyEmail, .changeEmail], now: now, on: db)
        }
    }

    // MARK: Password reset

    /// Queues a reset link if an account has `email` (`POST /v1/auth/password/forgot`). Takes the same time either way.
    func requestPasswordReset(_ email: EmailAddress, client: String?, now: Date) async throws {
        let deadline = ContinuousClock.now.advanced(by: Self.forgotPasswordFloor)
        try await database.transaction { [composer, outbox] db in
            try await Self.limit(email.value, Self.resetPerAddress, client, Self.resetPerClient, now: now, on: db)
            guard let account = try await UserStore.find(email: email, on: db) else { return }
            let token = try await AccountTokens.issue(.resetPassword, for: account.id, email: email.value, now: now, on: db)
            try await outbox.enqueue(
                .email(try composer.passwordReset(to: email.value, token: token)), user: account.id, now: now, on: db
            )
        }
        try? await Task.sleep(until: deadline)
    }

    /// The address a reset token was sent to, without spending it (the reset page shows it above the form).
    func checkResetToken(_ token: String, now: Date) async throws -> String {
        try await database.withConnection { db in
            try await AccountTokens.peek(token, purposes: [.resetPassword], now: now, on: db).email
        }
    }

    /// Sets a new password with a reset token: the address counts as verified, every session and trusted device of
    /// the account ends, its other links are void, its sign-in counter starts over, and the address is told.
    func resetPassword(token: String, newPassword: String, now: Date) async throws {
        let redeemed = try await database.withConnection { db in
            try await AccountTokens.peek(token, purposes: [.resetPassword], now: now, on: db)
        }
        try Self.checkPolicy(newPassword, email: EmailAddress(redeemed.email), field: "newPassword")
        let hash = try await hasher.hash(newPassword)
        try await database.transaction { [composer, outbox] db in
            let redeemed = try await AccountTokens.redeem(token, purposes: [.resetPassword], now: now, on: db)
            guard let account = try await UserStore.find(id: redeemed.user, on: db), account.email == redeemed.email else {
                throw AccountTokens.invalid
            }
            try await UserStore.setPasswordHash(hash, for: account.id, now: now, on: db)
            try await UserStore.markEmailVerified(account.id, email: redeemed.email, now: now, on: db)
            try await SessionStore.revokeAll(of: account.id, except: nil, now: now, on: db)
            try await SignInThrottle.forgetDevices(of: account.id, on: db)
            try await AccountTokens.revokeAll(of: account.id, on: db)
            if let email = EmailAddress(redeemed.email) { try await SignInThrottle.forgive(email, on: db) }
            try await outbox.enqueue(
                .email(try composer.passwordChanged(to: redeemed.email, resetByLink: true)),
                user: account.id, now: now, on: db
            )
        }
    }

    // MARK: Changes by the signed-in user

    /// Changes the caller's password after checking the current one: the other sessions end, links are void, and
    /// the address is told. The check counts against the address's sign-in allowance.
    func changePassword(of caller: Caller, current: String, new: String, now: Date) async throws {
        guard let account = try await UserStore(database: database).find(id: caller.user) else { throw Problem.internalError }
        guard let currentHash = account.passwordHash else {
            throw Problem(.conflict, code: .passwordNotSet, detail: "The account has no password; add one with a password-reset link.")
        }
        try Self.checkPolicy(new, email: account.email.flatMap(EmailAddress.init), field: "newPassword")
        try await checkPassword(current, against: currentHash, of: account, now: now)
        let hash = try await hasher.hash(new)
        try await database.transaction { [composer, outbox] db in
            try await UserStore.setPasswordHash(hash, for: account.id, now: now, on: db)
            try await SessionStore.revokeAll(of: account.id, except: caller.session, now: now, on: db)
            try await AccountTokens.revokeAll(of: account.id, on: db)
            if let email = account.email {
                try await outbox.enqueue(
                    .email(try composer.passwordChanged(to: email, resetByLink: false)),
                    user: account.id, now: now, on: db
                )
            }
        }
    }

    /// Sends a confirmation link to `newEmail`; the change happens when it is opened. Returns the normalised address.
    func requestEmailChange(of caller: Caller, to newEmail: String, password: String?, now: Date) async throws -> String {
        guard let address = EmailAddress(newEmail) else {
            throw Problem.validationFailed([.init(field: "newEmail", message: "is not a valid e-mail address")])
        }
        guard let account = try await UserStore(database: database).find(id: caller.user) else { throw Problem.internalError }
        guard account.email != address.value else {
            throw Problem.validationFailed([.init(field: "newEmail", message: "is the account's address already")])
        }
        if let hash = account.passwordHash {
            guard let password else { throw Problem.validationFailed([.init(field: "password", message: "is required for an account with a password")]) }
            try await checkPassword(password, against: hash, of: account, now: now)
        } else if now.timeIntervalSince(caller.authenticatedAt) > AccountsFeature.reauthenticationWindow {
            throw Problem.unauthenticated(
                .reauthenticationRequired, "Changing the address needs a sign-in from the last 5 minutes; sign in again first."
            )
        }
        try await database.transaction { [composer, outbox] db in
            if let retryAfter = try await RateLimiter.hit(account.id.description, Self.emailChangePerUser, now: now, on: db) {
                throw Problem.tooManyRequests(.tooManyAttempts, retryAfter: retryAfter, "Too many e-mail change requests; try again in \(retryAfter) seconds.")
            }
            if try await UserStore.find(email: address, on: db) != nil { throw UserStore.emailTaken }
            try await AccountTokens.revoke(.changeEmail, of: account.id, on: db)
            let token = try await AccountTokens.issue(.changeEmail, for: account.id, email: address.value, now: now, on: db)
            try await outbox.enqueue(
                .email(try composer.emailChange(to: address.value, token: token)), user: account.id, now: now, on: db
            )
        }
        return address.value
    }

    // MARK: Helpers

    /// Checks a password the signed-in user typed, counted against their address's sign-in allowance (so a stolen
    /// access token cannot be used to guess it): 403 `wrong_password` when it is wrong.
    private func checkPassword(_ password: String, against hash: String, of account: UserRecord, now: Date) async throws {
        let subject = account.email ?? account.id.description
        try await database.transaction { db in
            if let retryAfter = try await RateLimiter.hit(subject, SignInThrottle.perAddress, now: now, on: db) {
                throw Problem.tooManyRequests(.tooManyAttempts, retryAfter: retryAfter, "Too many wrong passwords; try again in \(retryAfter) seconds.")
            }
        }
        guard try await hasher.verify(password, against: hash) else {
            throw Problem(.forbidden, code: .wrongPassword, detail: "The current password is wrong.")
        }
        try await database.transaction { db in try await RateLimiter.reset(subject, SignInThrottle.perAddress, on: db) }
    }

    private static func checkPolicy(_ password: String, email: EmailAddress?, field: String) throws(Problem) {
        let violations = PasswordPolicy.violations(of: password, email: email)
        guard violations.isEmpty else { throw Problem.validationFailed(violations.map { .init(field: field, message: $0.message) }) }
    }

    /// Counts one send for the address and one for the client; 429 when either is over its limit.
    private static func limit(
        _ address: String, _ addressRule: RateLimiter.Rule, _ client: String?, _ clientRule: RateLimiter.Rule, now: Date, on db: any SQLDatabase
    ) async throws {
        var retryAfter = try await RateLimiter.hit(address, addressRule, now: now, on: db)
        if let client, let clientRetry = try await RateLimiter.hit(client, clientRule, now: now, on: db) {
            retryAfter = max(retryAfter ?? 0, clientRetry)
        }
        if let retryAfter {
            throw Problem.tooManyRequests(.tooManyAttempts, retryAfter: retryAfter, "Too many e-mails asked for; try again in \(retryAfter) seconds.")
        }
    }
}
