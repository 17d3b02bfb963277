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
        await model.signInWithApple(AppleCredential(identityToken: "fake:apple@example.com", rawNonce: "n"))
        #expect(model.isSignedIn)
        await model.signOut()
        #expect(model.state == .signedOut(.signedOut))
        await model.signInWithGoogle(idToken: "fake:\(FakeData.user.email!)")
        #expect(model.state == .signedIn(userID: FakeData.user.id))
        await model.signInWithGoogle(idToken: "garbage")
        #expect(model.error?.kind == .invalidCredentials)
        #expect(fixture.events.prefix(4) == [.signedUp(.apple), .signedOut, .signedIn(.google), .operationFailed(feature: .auth, reason: .invalidCredentials)])
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
