import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation
import Testing

/// Sign in with Apple and Google through the Kit against a real server that verifies the tokens as Apple's and
/// Google's: the nonce the Kit makes is the one the server checks, Apple's user is remembered across launches and
/// asked about, and a closed sheet opens no session.
@Suite struct LiveSignInProvidersTests {
    /// One install of an app offering the given sign-ins: its session, store and keys survive ``relaunch()``.
    struct Install {
        let server: URL
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-signin-\(UUID().uuidString)")
        let tokens = InMemoryTokenStore()
        let keys = InMemoryKeyProvider()
        let apple: ScriptedAppleSheet?
        let google: ScriptedGoogleSignIn?

        /// The app's services, as a launch builds them.
        func launch() throws -> FitBaseDependencies {
            let network = SwitchableTransport()
            network.server = server
            return try FitBaseDependencies.live(.init(
                serverURL: server, dataDirectory: directory, tokenStore: tokens, keyProvider: keys, purchaseProvider: nil,
                analytics: RecordingAnalytics(), reachability: nil, notificationPermission: nil, appleSignIn: apple, googleSignIn: google,
                transport: network, healthKit: nil, bundleID: "app.fitbase.kit-tests"
            ))
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func appleSignsInWithTheRawNonceOfTheHashAppleSignedAndARevokedAppleIDSignsOutAtLaunch() async throws {
        try await ProviderTokens.withServer { server in
            let sheet = ScriptedAppleSheet()
            // Apple's name on a first sign-in: 99 characters, a space and one more; kept to Core's 100, no trailing space.
            await sheet.set(givenName: String(repeating: "A", count: 99), familyName: "Z")
            let install = Install(server: server, apple: sheet, google: nil)
            defer { install.remove() }
            let app = try install.launch()
            let user = try await app.auth.signInWithApple()
            let email = await sheet.email
            #expect(user.isNewUser && user.email == email && user.emailVerified, "\(user), Apple's address \(String(describing: email))")
            #expect(user.displayName == String(repeating: "A", count: 99))
            let hashed = try #require(await sheet.hashedNonces.first)
            #expect(hashed.count == 64 && hashed == hashed.lowercased())

            // Apple's answers that keep the session: still authorized, and no answer (offline).
            let relaunched = try install.launch()
            await relaunched.auth.checkProviderCredentials()
            await sheet.set(state: .unknown)
            await relaunched.auth.checkProviderCredentials()
            #expect(await relaunched.auth.currentState() == .signedIn(userID: user.id))

            // The user stopped using Apple ID with the app: the next launch signs out, for a reason the UI can name.
            await sheet.set(state: .revoked)
            let states = await relaunched.auth.stateUpdates()
            var updates = states.makeAsyncIterator()
            #expect(await updates.next() == .signedIn(userID: user.id))
            await relaunched.auth.checkProviderCredentials()
            #expect(await updates.next() == .signedOut(.appleIDRevoked))
            #expect(try await install.tokens.load() == nil)

            // Signing in again asks Apple afresh, with a new nonce, and finds the same account.
            await sheet.set(state: .authorized)
            let again = try await relaunched.auth.signInWithApple()
            #expect(again.id == user.id && !again.isNewUser)
            #expect(Set(await sheet.hashedNonces).count == 2)
        }
    }

    @Test func googleSignsInWithTheNonceGoogleSigned() async throws {
        try await ProviderTokens.withServer { server in
            let google = ScriptedGoogleSignIn()
            let install = Install(server: server, apple: nil, google: google)
            defer { install.remove() }
            let app = try install.launch()
            let user = try await app.auth.signInWithGoogle()
            #expect(user.isNewUser && user.email == google.email && user.displayName == "Grace Hopper", "\(user)")
            #expect(await google.nonces.count == 1)
            // A Google session has no Apple ID to ask about: the check keeps it.
            await app.auth.checkProviderCredentials()
            #expect(await app.auth.currentState() == .signedIn(userID: user.id))
            // Without Apple's sheet in the app, Sign in with Apple says so.
            let missing = await #expect(throws: KitError.self) { try await app.auth.signInWithApple() }
            #expect(missing?.code == .providerNotConfigured && missing?.isRetryable == false)
        }
    }

    @Test func closingTheSheetOpensNoSessionAndShowsNoError() async throws {
        try await ProviderTokens.withServer { server in try await Self.closeTheSheet(server: server) }
    }

    @MainActor
    static func closeTheSheet(server: URL) async throws {
        let sheet = ScriptedAppleSheet()
        await sheet.set(cancels: true)
        let install = Install(server: server, apple: sheet, google: nil)
        defer { install.remove() }
        let app = try install.launch()
        let cancelled = await #expect(throws: KitError.self) { try await app.auth.signInWithApple() }
        #expect(cancelled?.kind == .cancelled)
        #expect(await app.auth.currentState() == .signedOut(.notSignedIn))
        let model = AuthModel(dependencies: app)
        await model.start()
        await model.signInWithApple()
        #expect(model.state == .signedOut(.notSignedIn) && model.error == nil && !model.isWorking)
        model.stop()
    }
}
