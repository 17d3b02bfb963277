import FitBaseClient
import FitBaseCore
import Foundation
import Observation

/// The sign-in screens and the session they watch (seeds 000, 001, 004): whether someone is signed in — read at
/// launch and followed, so the server ending the session signs the app out — e-mail sign-up and sign-in with field
/// validation, Apple and Google, the password reset and e-mail verification links, and signing out.
@MainActor @Observable
public final class AuthModel {
    /// Where the session stands.
    public enum State: Sendable, Equatable {
        /// Not known yet (before ``start()`` has read it).
        case unknown
        /// A session is open for this user.
        case signedIn(userID: UserID)
        /// Nobody is signed in, and why (a plain launch, a sign-out, the server ended the session …).
        case signedOut(SignOutReason)
        /// The last attempt to sign in or up failed while nobody was signed in.
        case error(ScreenError)

        /// The signed-in user's id.
        public var userID: UserID? {
            if case .signedIn(let id) = self { return id }
            return nil
        }
    }

    /// Where the session stands.
    public private(set) var state: State = .unknown
    /// The e-mail form's fields.
    public var email = ""
    public var password = ""
    /// The sign-up form's optional name.
    public var displayName = ""
    /// The new-password form's field (after a reset link).
    public var newPassword = ""
    /// The token of the reset link the app was opened with: the new-password form shows while it is set.
    public private(set) var resetToken: String?
    /// The per-field messages of the last refused form (`email`, `password`, `newPassword`).
    public private(set) var fieldErrors: [String: String] = [:]
    /// A request is running (disable the buttons, show a spinner).
    public private(set) var isWorking = false
    /// The last failure, as the screen shows it.
    public private(set) var error: ScreenError?
    /// A confirmation to show (reset e-mail sent, address verified, password changed).
    public private(set) var notice: String?
    /// The account of the last sign-in or sign-up (`isNewUser` sends it to onboarding).
    public private(set) var user: SignedInUser?
    /// What the last verification link proved.
    public private(set) var verifiedEmail: VerifiedEmail?

    private let auth: any AuthService
    private let analytics: any AnalyticsService
    @ObservationIgnored private var observation: Task<Void, Never>?

    /// A model over the auth service of `dependencies`.
    public convenience init(dependencies: FitBaseDependencies) {
        self.init(auth: dependencies.auth, analytics: dependencies.analytics)
    }

    /// A model over `auth`, tracking to `analytics`.
    public init(auth: any AuthService, analytics: any AnalyticsService) {
        self.auth = auth
        self.analytics = analytics
    }

    /// Whether someone is signed in.
    public var isSignedIn: Bool { state.userID != nil }

    /// Reads the session at launch, then follows every change (sign-in elsewhere in the app, the server ending the
    /// session, the account being deleted) until ``stop()``.
    public func start() async {
        apply(await auth.currentState())
        observation?.cancel()
        let updates = await auth.stateUpdates()
        observation = Task { [weak self] in
            for await update in updates {
                guard let self, !Task.isCancelled else { return }
                self.apply(update)
            }
        }
    }

    /// Stops following the session.
    public func stop() {
        observation?.cancel()
        observation = nil
    }

    private func apply(_ new: AuthState) {
        switch new {
        case .signedIn(let id): state = .signedIn(userID: id)
        case .signedOut(let reason):
            state = .signedOut(reason)
            switch reason {
            case .sessionEnded: notice = "You were signed out. Please sign in again."
            case .appleIDRevoked: notice = "Your Apple ID no longer signs you in here. Please sign in again."
            case .notSignedIn, .signedOut, .accountDeleted: break
            }
        }
    }

    // MARK: E-mail

    /// Creates an account with the form's address, password and name.
    public func signUp() async {
        guard validate(email: true, password: password, passwordField: "password") else { return }
        let name = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        await run(method: .email, signUp: true) { [auth, email, password] () async throws(KitError) -> SignedInUser in
            try await auth.signUp(email: email, password: password, displayName: name.isEmpty ? nil : name)
        }
    }

    /// Signs in with the form's address and password.
    public func signIn() async {
        var fields: [String: String] = [:]
        if EmailAddress(email) == nil { fields["email"] = "Enter a valid e-mail address." }
        if password.isEmpty { fields["password"] = "Enter your password." }
        guard fields.isEmpty else { return refuse(fields) }
        await run(method: .email, signUp: false) { [auth, email, password] () async throws(KitError) -> SignedInUser in
            try await auth.signIn(email: email, password: password)
        }
    }

    /// Signs in (or up) with Sign in with Apple: Apple's sheet, then the server. Closing the sheet changes nothing.
    public func signInWithApple() async {
        await run(method: .apple, signUp: nil) { [auth] () async throws(KitError) -> SignedInUser in try await auth.signInWithApple() }
    }

    /// Signs in (or up) with Google: Google's sign-in, then the server. Closing it changes nothing.
    public func signInWithGoogle() async {
        await run(method: .google, signUp: nil) { [auth] () async throws(KitError) -> SignedInUser in try await auth.signInWithGoogle() }
    }

    /// Signs in or up; `signUp` `nil` means the account tells (Apple and Google create one on first use).
    private func run(method: SignInMethod, signUp: Bool?, _ operation: () async throws(KitError) -> SignedInUser) async {
        begin()
        defer { isWorking = false }
        do throws(KitError) {
            let account = try await operation()
            user = account
            password = ""
            state = .signedIn(userID: account.id)
            analytics.track((signUp ?? account.isNewUser) ? .signedUp(method) : .signedIn(method))
        } catch {
            fail(error)
            if state.userID == nil, !error.isCancellation { state = .error(ScreenError(error)) }
        }
    }

    // MARK: Password reset and verification

    /// E-mails a reset link to the form's address (the answer is the same whether an account uses it).
    public func requestPasswordReset() async {
        guard EmailAddress(email) != nil else { return refuse(["email": "Enter a valid e-mail address."]) }
        begin()
        defer { isWorking = false }
        do throws(KitError) {
            try await auth.requestPasswordReset(email: email)
            notice = "If an account uses \(email), we've sent it a link to choose a new password."
        } catch {
            fail(error)
        }
    }

    /// Opens the new-password form for a reset link's token.
    public func openResetLink(token: String) {
        resetToken = token
        newPassword = ""
        fieldErrors = [:]
        error = nil
    }

    /// Sets the form's new password with the reset link's token; every session ends, so the user signs in again.
    public func resetPassword() async {
        guard let token = resetToken else { return refuse(["newPassword": "Open the link in the e-mail again."]) }
        guard validate(email: false, password: newPassword, passwordField: "newPassword") else { return }
        begin()
        defer { isWorking = false }
        do throws(KitError) {
            try await auth.resetPassword(token: token, newPassword: newPassword)
            resetToken = nil
            newPassword = ""
            notice = "Your password was changed. Sign in with the new one."
        } catch {
            fail(error)
        }
    }

    /// Redeems a verification link's token.
    public func verifyEmail(token: String) async {
        begin()
        defer { isWorking = false }
        do throws(KitError) {
            let verified = try await auth.verifyEmail(token: token)
            verifiedEmail = verified
            notice = verified.changedAddress ? "Your e-mail address is now \(verified.email)." : "\(verified.email) is verified."
        } catch {
            fail(error)
        }
    }

    /// E-mails the signed-in user a new verification link.
    public func resendVerification() async {
        begin()
        defer { isWorking = false }
        do throws(KitError) {
            try await auth.resendVerification()
            notice = "We've sent you a new verification link."
        } catch {
            fail(error)
        }
    }

    /// Signs out (the state follows through the session updates, and at once here).
    public func signOut() async {
        await auth.signOut()
        analytics.track(.signedOut)
        user = nil
        state = .signedOut(.signedOut)
    }

    /// Forgets the last error and notice (the user dismissed them or edits the form).
    public func dismissMessages() {
        error = nil
        notice = nil
        fieldErrors = [:]
        if case .error = state { state = .signedOut(.notSignedIn) }
    }

    // MARK: Helpers

    private func validate(email checkEmail: Bool, password: String, passwordField: String) -> Bool {
        var fields: [String: String] = [:]
        if checkEmail, EmailAddress(email) == nil { fields["email"] = "Enter a valid e-mail address." }
        // Core's password rules, as the server checks them (length in characters and in bcrypt's 72 bytes, not the address).
        if let broken = PasswordPolicy.violations(of: password, email: EmailAddress(email)).first { fields[passwordField] = broken.message }
        guard fields.isEmpty else {
            refuse(fields)
            return false
        }
        return true
    }

    private func refuse(_ fields: [String: String]) {
        fieldErrors = fields
        error = .invalid(fields)
    }

    private func begin() {
        isWorking = true
        error = nil
        notice = nil
        fieldErrors = [:]
    }

    private func fail(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        fieldErrors = failure.fieldErrors
        analytics.track(.operationFailed(feature: .auth, reason: failure.kind))
    }
}
