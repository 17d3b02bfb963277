import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct AuthModelTests {
    @Test func startReadsTheSessionAndFollowsTheServerEndingIt() async {
        let fixture = Fixture(.strict)
        let model = AuthModel(dependencies: fixture.dependencies)
        #expect(model.state == .unknown)
        await model.start()
        #expect(model.state == .signedIn(userID: FakeData.user.id))
        await fixture.fakes.auth.endSession()
        await eventually { model.state == .signedOut(.sessionEnded) }
        #expect(model.notice != nil)
        model.stop()
    }

    @Test func signedOutAtLaunch() async {
        let fixture = Fixture(.signedOut)
        let model = AuthModel(dependencies: fixture.dependencies)
        await model.start()
        #expect(model.state == .signedOut(.notSignedIn))
        #expect(!model.isSignedIn)
        model.stop()
    }

    @Test func signUpValidatesTheFieldsBeforeAsking() async {
        let fixture = Fixture(.signedOut)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = "not an address"
        model.password = "short"
        await model.signUp()
        #expect(model.fieldErrors.keys.sorted() == ["email", "password"])
        #expect(model.error?.kind == .invalidInput)
        #expect(fixture.fakes.auth.knobs.callCount(.signUp) == 0)
    }

    /// The password rules are Core's (the server's): long enough, at most 72 bytes in UTF-8, not the address.
    @Test func signUpChecksThePasswordByCoresPolicy() async {
        let fixture = Fixture(.signedOut)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = "ana@example.com"
        for refused in ["ana@example.com", String(repeating: "é", count: 40), String(repeating: "x", count: PasswordPolicy.minimumCharacters - 1)] {
            model.password = refused
            await model.signUp()
            #expect(model.fieldErrors.keys.sorted() == ["password"], "\(refused)")
        }
        #expect(fixture.fakes.auth.knobs.callCount(.signUp) == 0)
    }

    @Test func signUpSignsInAndTracksIt() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signUp)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = "new@example.com"
        model.password = "long enough password"
        model.displayName = "  Nia "
        await model.signUp()
        #expect(model.isSignedIn)
        #expect(model.user?.displayName == "Nia" && model.user?.isNewUser == true)
        #expect(model.password.isEmpty)
        #expect(fixture.events == [.signedUp(.email)])
    }

    /// The server answers a sign-up alike for a taken address (enumeration protection); the sign-in after it fails.
    @Test func aTakenAddressFailsAsTheSignInAfterIt() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signUp)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = FakeData.user.email!
        model.password = "long enough password"
        await model.signUp()
        #expect(model.error?.kind == .invalidCredentials)
        guard case .error(let shown) = model.state else { Issue.record("state \(model.state)"); return }
        #expect(shown.message.contains("don't match"))
        model.dismissMessages()
        #expect(model.state == .signedOut(.notSignedIn) && model.error == nil)
    }

    @Test func signInWithWrongPasswordShowsInvalidCredentials() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signIn)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = FakeData.user.email!
        model.password = "wrong"
        await model.signIn()
        #expect(model.error?.kind == .invalidCredentials && model.error?.isRetryable == false)
        #expect(fixture.events == [.operationFailed(feature: .auth, reason: .invalidCredentials)])
        model.password = FakeData.password
        await model.signIn()
        #expect(model.state == .signedIn(userID: FakeData.user.id) && model.error == nil)
        #expect(fixture.events.last == .signedIn(.email))
    }

    @Test func signInNeedsBothFields() async {
        let model = AuthModel(dependencies: Fixture(.signedOut).dependencies)
        await model.signIn()
        #expect(model.fieldErrors.keys.sorted() == ["email", "password"])
    }

    @Test func signInOfflineIsRetryable() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signIn)
        fixture.fakes.auth.knobs.fail(.signIn, with: .offline)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = FakeData.user.email!
        model.password = FakeData.password
        await model.signIn()
        #expect(model.error?.isOffline == true && model.error?.isRetryable == true)
        #expect(!model.isWorking)
    }

    @Test func appleAndGoogleSignInOrUp() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signInWithApple, .signInWithGoogle, .signOut)
        let model = AuthModel(dependencies: fixture.dependencies)
        await fixture.fakes.auth.appleSignIn?.script(.authorize(userIdentifier: "apple.new", email: "apple@example.com"))
        await model.signInWithApple()
        #expect(model.isSignedIn && model.user?.isNewUser == true)
        await model.signOut()
        #expect(model.state == .signedOut(.signedOut))
        let refused = KitError(.invalidCredentials, code: .identityTokenBadSignature)
        await fixture.fakes.auth.googleSignIn?.script(.signIn(email: FakeData.user.email!), .fail(refused))
        await model.signInWithGoogle()
        #expect(model.state == .signedIn(userID: FakeData.user.id))
        await model.signInWithGoogle()
        #expect(model.error?.kind == .invalidCredentials)
        #expect(fixture.events.prefix(4) == [.signedUp(.apple), .signedOut, .signedIn(.google), .operationFailed(feature: .auth, reason: .invalidCredentials)])
    }

    /// The fakes' Apple sign-in: a closed sheet changes nothing, the nonce is checked as the server checks it, and a
    /// revoked Apple ID signs out with its own notice; Google without a provider says so.
    @Test func appleThroughTheScriptedSheetAndARevokedAppleID() async throws {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signInWithApple)
        let apple = try #require(fixture.fakes.auth.appleSignIn)
        let model = AuthModel(dependencies: fixture.dependencies)
        await model.start()
        await apple.script(.cancel, .authorize(userIdentifier: "apple.ana", email: FakeData.user.email!, givenName: "Ana"))
        await model.signInWithApple()
        #expect(model.state == .signedOut(.notSignedIn) && model.error == nil && !model.isWorking)
        await model.signInWithApple()
        #expect(model.state == .signedIn(userID: FakeData.user.id) && model.user?.isNewUser == false)
        #expect(await fixture.fakes.auth.appleUserIdentifier == "apple.ana")
        let nonces = await apple.hashedNonces
        #expect(nonces.count == 2 && Set(nonces).count == 2 && nonces.allSatisfy { $0.count == 64 })

        await fixture.dependencies.auth.checkProviderCredentials()
        #expect(model.isSignedIn)
        await apple.setCredentialState(.revoked, forUserID: "apple.ana")
        await fixture.dependencies.auth.checkProviderCredentials()
        await eventually { model.state == .signedOut(.appleIDRevoked) }
        #expect(model.notice?.contains("Apple ID") == true)
        #expect(await apple.stateQueries == ["apple.ana", "apple.ana"])
        let appleUserIdentifier = await fixture.fakes.auth.appleUserIdentifier
        #expect(appleUserIdentifier == nil)
        // Signed out, there is nothing to ask Apple about.
        await fixture.dependencies.auth.checkProviderCredentials()
        #expect(await apple.stateQueries.count == 2)
        #expect(fixture.events == [.signedIn(.apple)])
        model.stop()
    }

    @Test func aTokenForAnotherNonceOrAMissingProviderIsRefused() async throws {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signInWithApple, .signInWithGoogle)
        let apple = try #require(fixture.fakes.auth.appleSignIn)
        await apple.script(.fail(KitError(.offline)))
        let model = AuthModel(dependencies: fixture.dependencies)
        await model.signInWithApple()
        #expect(model.error?.isOffline == true && !model.isSignedIn)

        let bare = FakeAuthService(signedIn: false, appleSignIn: nil, googleSignIn: nil)
        let missing = await #expect(throws: KitError.self) { try await bare.signInWithGoogle() }
        #expect(missing?.code == .providerNotConfigured)
        await #expect(throws: KitError.self) { try await bare.signInWithApple() }

        // A provider whose token carries another nonce than the one asked for: the server's nonce mismatch.
        let google = FakeGoogleSignInProvider([.replay(email: "g@example.com", nonce: "an earlier request's"), .cancel])
        let auth = FakeAuthService(signedIn: false, googleSignIn: google)
        let mismatch = await #expect(throws: KitError.self) { try await auth.signInWithGoogle() }
        #expect(mismatch?.code == .identityTokenNonceMismatch)
        let cancelled = await #expect(throws: KitError.self) { try await auth.signInWithGoogle() }
        let state = await auth.currentState()
        #expect(cancelled?.kind == .cancelled && state == .signedOut(.notSignedIn))
    }

    @Test func passwordResetFromRequestToNewPassword() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.requestPasswordReset, .resetPassword)
        let model = AuthModel(dependencies: fixture.dependencies)
        await model.requestPasswordReset()
        #expect(model.fieldErrors["email"] != nil)
        model.email = FakeData.user.email!
        await model.requestPasswordReset()
        #expect(model.notice != nil && model.error == nil)
        let token: String? = await fixture.fakes.auth.lastResetToken

        await model.resetPassword()
        #expect(model.fieldErrors["newPassword"] != nil)
        model.openResetLink(token: token ?? "")
        model.newPassword = "short"
        await model.resetPassword()
        #expect(model.fieldErrors["newPassword"] != nil)
        model.newPassword = "a brand new password"
        await model.resetPassword()
        #expect(model.resetToken == nil && model.error == nil && model.notice != nil)

        model.openResetLink(token: token ?? "")
        model.newPassword = "another new password"
        await model.resetPassword()
        #expect(model.error?.message.contains("expired") == true)
    }

    @Test func verifyingTheAddressFromALink() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.resendVerification, .signUp, .verifyEmail)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = "nia@example.com"
        model.password = "long enough password"
        await model.signUp()
        let token = await fixture.fakes.auth.lastVerificationToken ?? ""
        await model.verifyEmail(token: token)
        #expect(model.verifiedEmail?.email == "nia@example.com" && model.notice != nil)
        await model.verifyEmail(token: token)
        #expect(model.error?.kind == .invalidInput)
        await model.resendVerification()
        #expect(model.error?.kind == .conflict)
    }

    @Test func resendingAVerificationLink() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.resendVerification, .signUp)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = "nia@example.com"
        model.password = "long enough password"
        await model.signUp()
        await model.resendVerification()
        #expect(model.notice != nil && model.error == nil)
    }

    @Test func aCancelledSignInShowsNothing() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signIn)
        fixture.fakes.auth.knobs.fail(.signIn, with: .cancelled)
        let model = AuthModel(dependencies: fixture.dependencies)
        model.email = FakeData.user.email!
        model.password = FakeData.password
        await model.signIn()
        #expect(model.error == nil && fixture.events.isEmpty)
    }
}
