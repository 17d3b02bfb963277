#if canImport(AuthenticationServices)
import AuthenticationServices
import FitBaseCore
import Foundation

/// ``AppleSignInProvider`` over AuthenticationServices: Apple's sheet through an `ASAuthorizationController`
/// performing one `ASAuthorizationAppleIDProvider` request (full name and e-mail, `nonce` = the hashed nonce), and the
/// credential state through `getCredentialState(forUserID:)`.
///
/// ```swift
/// let auth = dependencies.auth   // built with `appleSignIn: AppleSignInController()` (the default on iOS)
/// try await auth.signInWithApple()
/// ```
public struct AppleSignInController: AppleSignInProvider {
    /// A provider over the Apple ID the device is signed in to.
    public init() {}

    public func requestCredential(hashedNonce: String) async throws(KitError) -> AppleIDAuthorization {
        try await AppleIDSheet.show(hashedNonce: hashedNonce).get()
    }

    public func credentialState(forUserID userIdentifier: String) async -> AppleCredentialState {
        do {
            switch try await ASAuthorizationAppleIDProvider().credentialState(forUserID: userIdentifier) {
            case .authorized: return .authorized
            case .revoked: return .revoked
            case .notFound: return .notFound
            case .transferred: return .transferred
            @unknown default: return .unknown
            }
        } catch {
            // Offline, or Apple failed: keep the session.
            return .unknown
        }
    }
}

/// One showing of Apple's sheet. The controller holds its delegate weakly and nobody else holds the controller, so
/// the sheet keeps itself (and its controller) alive until Apple answers.
@MainActor
private final class AppleIDSheet: NSObject, ASAuthorizationControllerDelegate {
    private var controller: ASAuthorizationController?
    private var continuation: CheckedContinuation<Result<AppleIDAuthorization, KitError>, Never>?
    private var keptAlive: AppleIDSheet?

    static func show(hashedNonce: String) async -> Result<AppleIDAuthorization, KitError> {
        let request = ASAuthorizationAppleIDProvider().createRequest()
        request.requestedScopes = [.fullName, .email]
        request.nonce = hashedNonce
        let sheet = AppleIDSheet()
        return await withCheckedContinuation { continuation in
            sheet.continuation = continuation
            sheet.keptAlive = sheet
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = sheet
            sheet.controller = controller
            controller.performRequests()
        }
    }

    func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {
        guard let credential = authorization.credential as? ASAuthorizationAppleIDCredential,
            let identityToken = credential.identityToken.map({ String(decoding: $0, as: UTF8.self) })
        else {
            let message = "Apple did not send an identity token. Try again."
            return finish(.failure(KitError(.invalidCredentials, message: message, isRetryable: true)))
        }
        finish(.success(AppleIDAuthorization(
            userIdentifier: credential.user, identityToken: identityToken,
            authorizationCode: credential.authorizationCode.map { String(decoding: $0, as: UTF8.self) },
            givenName: credential.fullName?.givenName, familyName: credential.fullName?.familyName)))
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        if (error as? ASAuthorizationError)?.code == .canceled {
            finish(.failure(.cancelled))
        } else {
            let message = "Sign in with Apple did not finish. Try again."
            finish(.failure(KitError(.invalidCredentials, message: message, isRetryable: true)))
        }
    }

    private func finish(_ result: Result<AppleIDAuthorization, KitError>) {
        continuation?.resume(returning: result)
        continuation = nil
        controller = nil
        keptAlive = nil
    }
}
#endif
