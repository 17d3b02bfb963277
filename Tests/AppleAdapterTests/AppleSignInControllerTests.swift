import AuthenticationServices
import FitBaseKit
import Foundation
import Testing

/// ``AppleSignInController`` over `ASAuthorizationController`: the request it makes, Apple's answers mapped, and the
/// credential states.
@Suite(.serialized) struct AppleSignInControllerTests {
    init() { _AuthenticationServicesShim.reset() }

    /// Waits for the sheet to show (the request is made on the main actor), then answers what `finish` says.
    private func whenShowing<T: Sendable>(
        _ request: @escaping @Sendable () async throws(KitError) -> T, finish: @MainActor () -> Bool
    ) async throws -> Result<T, KitError> {
        let task = Task { () async -> Result<T, KitError> in
            do throws(KitError) { return .success(try await request()) } catch { return .failure(error) }
        }
        for _ in 0..<200 where _AuthenticationServicesShim.showingRequest == nil {
            try await Task.sleep(for: .milliseconds(5))
        }
        // Apple answers later: the controller and its delegate must still be alive by then.
        try await Task.sleep(for: .milliseconds(20))
        #expect(await finish(), "nobody heard Apple's answer")
        return await task.value
    }

    @Test func theRequestAsksForNameAndEmailWithTheHashedNonce() async throws {
        let controller = AppleSignInController()
        let result = try await whenShowing({ () async throws(KitError) in
            try await controller.requestCredential(hashedNonce: "c0ffee")
        }) {
            let request = _AuthenticationServicesShim.showingRequest
            #expect(request?.scopes == [.fullName, .email])
            #expect(request?.nonce == "c0ffee")
            var name = PersonNameComponents()
            name.givenName = "Ada"
            name.familyName = "Lovelace"
            return _AuthenticationServicesShim.complete(
                user: "000123.abc", identityToken: Data("header.payload.signature".utf8),
                authorizationCode: Data("code-1".utf8),
                fullName: name, email: "ada@example.com")
        }
        #expect(
            try result.get()
                == AppleIDAuthorization(
                    userIdentifier: "000123.abc", identityToken: "header.payload.signature",
                    authorizationCode: "code-1",
                    givenName: "Ada", familyName: "Lovelace"))
    }

    @Test func closingTheSheetIsACancellation() async throws {
        let controller = AppleSignInController()
        let result = try await whenShowing({ () async throws(KitError) in
            try await controller.requestCredential(hashedNonce: "n")
        }) {
            _AuthenticationServicesShim.fail(with: ASAuthorizationError(.canceled))
        }
        #expect(throws: KitError.cancelled) { try result.get() }
    }

    @Test func anotherFailureIsAnInvalidSignInWorthRetrying() async throws {
        let controller = AppleSignInController()
        let result = try await whenShowing({ () async throws(KitError) in
            try await controller.requestCredential(hashedNonce: "n")
        }) {
            _AuthenticationServicesShim.fail(with: ASAuthorizationError(.failed))
        }
        #expect { try result.get() } throws: {
            ($0 as? KitError)?.kind == .invalidCredentials && ($0 as? KitError)?.isRetryable == true
        }
    }

    @Test func aCredentialWithoutIdentityTokenIsRefused() async throws {
        let controller = AppleSignInController()
        let result = try await whenShowing({ () async throws(KitError) in
            try await controller.requestCredential(hashedNonce: "n")
        }) {
            _AuthenticationServicesShim.complete(user: "000123.abc", identityToken: nil, authorizationCode: nil)
        }
        #expect { try result.get() } throws: { ($0 as? KitError)?.kind == .invalidCredentials }
    }

    @Test func credentialStatesAreApplesAndAnErrorKeepsTheSession() async {
        let controller = AppleSignInController()
        let states: [(ASAuthorizationAppleIDProvider.CredentialState, AppleCredentialState)] = [
            (.authorized, .authorized), (.revoked, .revoked), (.notFound, .notFound), (.transferred, .transferred),
        ]
        for (apple, ours) in states {
            _AuthenticationServicesShim.setCredentialState(.success(apple), forUser: "u")
            #expect(await controller.credentialState(forUserID: "u") == ours)
        }
        _AuthenticationServicesShim.setCredentialState(.failure(URLError(.notConnectedToInternet)), forUser: "u")
        #expect(await controller.credentialState(forUserID: "u") == .unknown)
        #expect(await controller.credentialState(forUserID: "someone else") == .notFound)
    }
}
