import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``AuthService``: accounts live in memory, tokens of e-mail links are known to it, and the session
/// can be ended "by the server" (``endSession()``) to show the signed-out banner. Apple and Google go through the
/// scripted providers it was given, with a nonce checked as the server checks it.
public actor FakeAuthService: AuthService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case signUp, signIn, signInWithApple, signInWithGoogle, signOut, requestPasswordReset, resetPassword, verifyEmail, resendVerification
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeAuthService")
    private let clock: any KitClock
    private var accounts: [String: (password: String, user: SignedInUser)] = [:]
    private var state: AuthState
    private let observers = ValueStreams<AuthState>()
    /// Tokens of links "e-mailed" so far: verification tokens map to the address they prove.
    private var verificationTokens: [String: String] = [:]
    private var resetTokens: [String: String] = [:]
    /// The account signed in last, also once signed out (whose pushes a device still receives after the server ended
    /// the session, as ``FakePushService`` answers).
    private(set) var lastUserID: UserID?

    /// Apple's sheet, as the test scripts it; `nil`: the app offers no Sign in with Apple.
    public nonisolated let appleSignIn: FakeAppleSignInProvider?
    /// Google's sign-in, as the test scripts it; `nil`: the app offers no Google sign-in.
    public nonisolated let googleSignIn: FakeGoogleSignInProvider?
    /// Apple's id of the user when the session was opened with Sign in with Apple (forgotten when it ends).
    public private(set) var appleUserIdentifier: String?

    /// A fake with Ana's account; signed in as her unless `signedIn` is false; Apple and Google answer as scripted.
    public init(
        signedIn: Bool = true, clock: any KitClock = SystemKitClock(), appleSignIn: FakeAppleSignInProvider? = FakeAppleSignInProvider(),
        googleSignIn: FakeGoogleSignInProvider? = FakeGoogleSignInProvider()
    ) {
        self.clock = clock
        self.appleSignIn = appleSignIn
        self.googleSignIn = googleSignIn
        accounts[FakeData.user.email!] = (FakeData.password, FakeData.user)
        state = signedIn ? .signedIn(userID: FakeData.user.id) : .signedOut(.notSignedIn)
        lastUserID = state.userID
    }

    /// The token of the last verification link sent (what the e-mail would carry).
    public private(set) var lastVerificationToken: String?
    /// The token of the last reset link sent.
    public private(set) var lastResetToken: String?

    /// The signed-in account, if any.
    public func signedInUser() -> SignedInUser? {
        guard let id = state.userID else { return nil }
        return accounts.values.first { $0.user.id == id }?.user
    }

    /// Whether `password` is the signed-in account's.
    func checkPassword(_ password: String) -> Bool {
        guard let id = state.userID else { return false }
        return accounts.values.contains { $0.user.id == id && $0.password == password }
    }

    public func currentState() -> AuthState { state }

    public func stateUpdates() -> AsyncStream<AuthState> {
        let (stream, continuation) = observers.make(buffer: 8)
        continuation.yield(state)
        return stream
    }

    private func publish(_ new: AuthState) {
        appleUserIdentifier = nil
        state = new
        if let id = new.userID { lastUserID = id }
        observers.send(new)
    }

    public func signUp(email: String, password: String, displayName: String?) async throws(KitError) -> SignedInUser {
        try await knobs.enter(.signUp, clock: clock)
        let address = email.trimmingCharacters(in: .whitespaces).lowercased()
        var fields: [String: String] = [:]
        if EmailAddress(address) == nil { fields["email"] = "must be an e-mail address" }
        if let broken = PasswordPolicy.violations(of: password, email: EmailAddress(address)).first { fields["password"] = broken.message }
        guard fields.isEmpty else { throw KitError(.invalidInput, message: "Some details need fixing.", fieldErrors: fields, code: .validationFailed) }
        if let existing = accounts[address] {
            // As the server: a sign-up is answered alike for a taken address, and the sign-in after it decides.
            guard existing.password == password else { throw KitError(.invalidCredentials, code: .invalidCredentials) }
            publish(.signedIn(userID: existing.user.id))
            return existing.user
        }
        let user = SignedInUser(id: UserID(), email: address, displayName: displayName, emailVerified: false, isNewUser: true)
        accounts[address] = (password, user)
        let token = UUID().uuidString
        verificationTokens[token] = address
        lastVerificationToken = token
        publish(.signedIn(userID: user.id))
        return user
    }

    public func signIn(email: String, password: String) async throws(KitError) -> SignedInUser {
        try await knobs.enter(.signIn, clock: clock)
        guard let account = accounts[email.trimmingCharacters(in: .whitespaces).lowercased()], account.password == password else {
            throw KitError(.invalidCredentials, code: .invalidCredentials)
        }
        publish(.signedIn(userID: account.user.id))
        return account.user
    }

    public func signInWithApple() async throws(KitError) -> SignedInUser {
        try await knobs.enter(.signInWithApple, clock: clock)
        guard let appleSignIn else { throw .providerNotConfigured("Sign in with Apple") }
        let nonce = try Self.nonce()
        let apple = try await appleSignIn.requestCredential(hashedNonce: nonce.sha256)
        let name = [apple.givenName, apple.familyName].compactMap { $0 }.joined(separator: " ")
        let user = try providerSignIn(token: apple.identityToken, nonce: nonce.sha256, name: DisplayNameRule.truncated(name))
        appleUserIdentifier = apple.userIdentifier
        return user
    }

    public func signInWithGoogle() async throws(KitError) -> SignedInUser {
        try await knobs.enter(.signInWithGoogle, clock: clock)
        guard let googleSignIn else { throw .providerNotConfigured("Google sign-in") }
        let nonce = try Self.nonce()
        return try providerSignIn(token: try await googleSignIn.idToken(nonce: nonce.raw), nonce: nonce.raw, name: nil)
    }

    /// Like ``currentState()``, not an operation of the knobs: the app asks at every launch and foreground (the
    /// Apple fake's ``FakeAppleSignInProvider/stateQueries`` count the questions).
    public func checkProviderCredentials() async {
        guard let appleSignIn, let appleUser = appleUserIdentifier else { return }
        switch await appleSignIn.credentialState(forUserID: appleUser) {
        case .authorized, .unknown: return
        case .revoked, .notFound, .transferred:
            guard appleUserIdentifier == appleUser else { return }
            publish(.signedOut(.appleIDRevoked))
        }
    }

    private static func nonce() throws(KitError) -> SignInNonce {
        do { return try SignInNonce() } catch { throw KitError(error) }
    }

    /// Apple and Google: the token names the account and the nonce it was minted with (`fake:<address>#<nonce>`), the
    /// nonce being the one this sign-in asked for; a new address creates an account.
    private func providerSignIn(token: String, nonce: String, name: String?) throws(KitError) -> SignedInUser {
        let parts = token.split(separator: "#", maxSplits: 1).map(String.init)
        guard let head = parts.first, head.hasPrefix("fake:"), let address = EmailAddress(String(head.dropFirst(5)))?.value else {
            throw KitError(.invalidCredentials, message: "The sign-in could not be verified. Please try again.", code: .identityTokenMalformed)
        }
        guard parts.count == 2, parts[1] == nonce else {
            throw KitError(.invalidCredentials, message: "The sign-in could not be verified. Please try again.", code: .identityTokenNonceMismatch)
        }
        if var existing = accounts[address]?.user {
            existing.isNewUser = false
            publish(.signedIn(userID: existing.id))
            return existing
        }
        let user = SignedInUser(id: UserID(), email: address, displayName: name, emailVerified: true, isNewUser: true)
        accounts[address] = ("", user)
        publish(.signedIn(userID: user.id))
        return user
    }

    public func signOut() async {
        knobs.record(.signOut)
        if state.userID != nil { publish(.signedOut(.signedOut)) }
    }

    /// The server ends the session (revoked on another device, password reset): observers see `.sessionEnded`.
    public func endSession() {
        publish(.signedOut(.sessionEnded))
    }

    /// The account was deleted: forgets it and signs out.
    func deleteSignedInAccount() {
        guard let id = state.userID else { return }
        accounts = accounts.filter { $0.value.user.id != id }
        publish(.signedOut(.accountDeleted))
    }

    /// Sets the signed-in account's profile name (kept in step with the profile fake).
    func rename(to name: String?) {
        guard let id = state.userID, let key = accounts.first(where: { $0.value.user.id == id })?.key else { return }
        accounts[key]?.user.displayName = name
    }

    public func requestPasswordReset(email: String) async throws(KitError) {
        try await knobs.enter(.requestPasswordReset, clock: clock)
        let address = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard EmailAddress(address) != nil else {
            throw KitError(.invalidInput, message: "Enter a valid e-mail address.", fieldErrors: ["email": "must be an e-mail address"])
        }
        guard accounts[address] != nil else { return }
        let token = UUID().uuidString
        resetTokens[token] = address
        lastResetToken = token
    }

    public func resetPassword(token: String, newPassword: String) async throws(KitError) {
        try await knobs.enter(.resetPassword, clock: clock)
        guard let address = resetTokens.removeValue(forKey: token) else {
            throw KitError(.invalidInput, message: "This link has expired or was already used. Ask for a new one.", code: .tokenInvalid)
        }
        if let broken = PasswordPolicy.violations(of: newPassword, email: EmailAddress(address)).first {
            resetTokens[token] = address
            throw KitError(.invalidInput, fieldErrors: ["newPassword": broken.message], code: .validationFailed)
        }
        accounts[address]?.password = newPassword
        if let user = accounts[address]?.user, state.userID == user.id { publish(.signedOut(.sessionEnded)) }
    }

    public func verifyEmail(token: String) async throws(KitError) -> VerifiedEmail {
        try await knobs.enter(.verifyEmail, clock: clock)
        guard let address = verificationTokens.removeValue(forKey: token) else {
            throw KitError(.invalidInput, message: "This link has expired or was already used. Ask for a new one.", code: .tokenInvalid)
        }
        accounts[address]?.user.emailVerified = true
        return VerifiedEmail(email: address, changedAddress: false)
    }

    public func resendVerification() async throws(KitError) {
        try await knobs.enter(.resendVerification, clock: clock)
        guard let user = signedInUser(), let address = user.email else { throw .notSignedIn }
        guard !user.emailVerified else { throw KitError(.conflict, message: "Your address is already verified.", code: .emailAlreadyVerified) }
        let token = UUID().uuidString
        verificationTokens[token] = address
        lastVerificationToken = token
    }
}
