// Shim of the part of Apple's AuthenticationServices FitBase's adapter calls (Sign in with Apple: the Apple ID
// provider, its request, the authorization controller and its delegate, the credential and its state), written from
// Apple's documentation: same names, labels, optionality, async/throws and main-actor isolation as the SDK. CI only
// (scripts/ci/apple-adapters.sh). `_AuthenticationServicesShim` plays Apple's sheet for AppleAdapterTests.
import Foundation
import Synchronization

// MARK: Requests and providers

/// A base class for authorization requests.
open class ASAuthorizationRequest: NSObject {}

/// An OpenID authorization request that provides a nonce and state.
open class ASAuthorizationOpenIDRequest: ASAuthorizationRequest {
    /// The contact information to be requested from the user during authentication.
    open var requestedScopes: [ASAuthorization.Scope]?
    /// A string the app provides to the request, which the identity token then carries.
    open var nonce: String?
    /// Data that's returned to you unmodified in the corresponding credential after a successful authentication.
    open var state: String?
}

/// An OpenID authorization request that relies on the user's Apple ID.
public final class ASAuthorizationAppleIDRequest: ASAuthorizationOpenIDRequest {
    /// The user identifier, to refresh an existing credential.
    public var user: String?
}

/// A type that provides authorization requests.
public protocol ASAuthorizationProvider: NSObjectProtocol {}

/// A mechanism for generating requests to authenticate users based on their Apple ID.
public final class ASAuthorizationAppleIDProvider: NSObject, ASAuthorizationProvider {
    /// Possible values for the credential state of a user.
    public enum CredentialState: Int, Sendable {
        /// The user's authorization has been revoked and they should be signed out.
        case revoked = 0
        /// The user is authorized.
        case authorized = 1
        /// The user hasn't established a relationship with Sign in with Apple.
        case notFound = 2
        /// The app has been transferred to a different team, and you need to migrate the user's identifier.
        case transferred = 3
    }

    public override init() {}

    /// Creates a new Apple ID authorization request.
    public func createRequest() -> ASAuthorizationAppleIDRequest { ASAuthorizationAppleIDRequest() }

    /// Returns the credential state for the given user in a completion handler.
    public func getCredentialState(
        forUserID userID: String,
        completion: @escaping @Sendable (ASAuthorizationAppleIDProvider.CredentialState, (any Error)?) -> Void
    ) {
        switch _AuthenticationServicesShim.state.withLock({ $0.credentialStates[userID] }) {
        case .failure(let error): completion(.notFound, error)
        case .success(let state): completion(state, nil)
        case nil: completion(.notFound, nil)
        }
    }

    /// Returns the credential state for the given user.
    public func credentialState(forUserID userID: String) async throws -> ASAuthorizationAppleIDProvider.CredentialState
    {
        try await withCheckedThrowingContinuation { continuation in
            getCredentialState(forUserID: userID) { state, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: state) }
            }
        }
    }
}

// MARK: Authorizations and credentials

/// An encapsulation of a successful authorization performed by a controller.
public final class ASAuthorization: NSObject {
    /// Keys that specify the kinds of contact information that the app may request.
    public struct Scope: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A scope that includes the user's full name.
        public static let fullName = Scope(rawValue: "full_name")
        /// A scope that includes the user's email address.
        public static let email = Scope(rawValue: "email")
    }

    /// The credential that the provider generated on successful authorization.
    public let credential: any ASAuthorizationCredential
    /// The object that created this authorization.
    public let provider: any ASAuthorizationProvider

    init(credential: any ASAuthorizationCredential, provider: any ASAuthorizationProvider) {
        self.credential = credential
        self.provider = provider
    }
}

/// A protocol that defines the properties of an authorization credential.
public protocol ASAuthorizationCredential: NSObjectProtocol {}

/// A credential that results from a successful Apple ID authentication.
public final class ASAuthorizationAppleIDCredential: NSObject, ASAuthorizationCredential {
    /// An identifier associated with the authenticated user.
    public let user: String
    /// A JSON Web Token (JWT) that securely communicates information about the user to your app.
    public let identityToken: Data?
    /// A short-lived token used by your app for proof of authorization when interacting with the app's server.
    public let authorizationCode: Data?
    /// The user's name, given on the first authorization only.
    public let fullName: PersonNameComponents?
    /// The user's email address, given on the first authorization only.
    public let email: String?
    /// The contact information the user authorized your app to access.
    public let authorizedScopes: [ASAuthorization.Scope]
    /// An arbitrary string that your app provided to the request that generated the credential.
    public let state: String?

    init(
        user: String, identityToken: Data?, authorizationCode: Data?, fullName: PersonNameComponents?, email: String?,
        authorizedScopes: [ASAuthorization.Scope], state: String?
    ) {
        self.user = user
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.fullName = fullName
        self.email = email
        self.authorizedScopes = authorizedScopes
        self.state = state
    }
}

/// An authorization error.
public struct ASAuthorizationError: Error, Hashable, Sendable {
    /// The error domain.
    public static let errorDomain = "com.apple.AuthenticationServices.AuthorizationError"

    /// Error codes for authorization attempts.
    public enum Code: Int, Sendable, Equatable, Hashable {
        case unknown = 1000
        case canceled = 1001
        case invalidResponse = 1002
        case notHandled = 1003
        case failed = 1004
        case notInteractive = 1005
        case matchedExcludedCredential = 1006
    }

    /// The error code.
    public let code: Code

    /// An error of `code`.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
    }

    /// The user canceled the authorization attempt.
    public static var canceled: Code { .canceled }
    /// The authorization attempt failed for an unknown reason.
    public static var unknown: Code { .unknown }
    /// The authorization request received an invalid response.
    public static var invalidResponse: Code { .invalidResponse }
    /// The authorization request wasn't handled.
    public static var notHandled: Code { .notHandled }
    /// The authorization attempt failed.
    public static var failed: Code { .failed }
}

// MARK: The controller

/// An interface for providing information about the outcome of an authorization request.
@MainActor public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    /// Tells the delegate when authorization completes successfully (optional in AuthenticationServices).
    func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    /// Tells the delegate when authorization fails (optional in AuthenticationServices).
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

extension ASAuthorizationControllerDelegate {
    /// An optional method: a delegate may leave successes unheard.
    public func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {}
    /// An optional method: a delegate may leave failures unheard.
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {}
}

/// A controller that manages authorization requests that a provider creates.
public final class ASAuthorizationController: NSObject {
    /// The authorization requests that the authorization controller performs.
    public let authorizationRequests: [ASAuthorizationRequest]
    /// A delegate that the authorization controller informs about the success or failure of an authorization attempt.
    public weak var delegate: (any ASAuthorizationControllerDelegate)?

    /// Creates a controller from a collection of authorization requests.
    public init(authorizationRequests: [ASAuthorizationRequest]) {
        self.authorizationRequests = authorizationRequests
    }

    /// Starts the authorization flows named during controller initialization: the system shows its sheet, then tells
    /// the delegate how it ended.
    public func performRequests() {
        _AuthenticationServicesShim.state.withLock { $0.shown.append(Shown(controller: self)) }
    }
}

struct Shown: @unchecked Sendable {
    // The system does not keep the controller alive: an app that lets it go never hears the answer.
    weak var controller: ASAuthorizationController?
}

// MARK: Scripted behaviour (tests only)

/// Apple's sheet and Apple's records of credentials, for AppleAdapterTests.
public enum _AuthenticationServicesShim {
    struct State: @unchecked Sendable {
        var shown: [Shown] = []
        var credentialStates: [String: Result<ASAuthorizationAppleIDProvider.CredentialState, any Error>] = [:]
    }

    static let state = Mutex(State())

    /// No sheet showing; every user unknown.
    public static func reset() { state.withLock { $0 = State() } }

    /// `getCredentialState(forUserID:)` answers `result` for `user`.
    public static func setCredentialState(
        _ result: Result<ASAuthorizationAppleIDProvider.CredentialState, any Error>, forUser user: String
    ) {
        state.withLock { $0.credentialStates[user] = result }
    }

    /// The Apple ID request of the sheet showing now (scopes and nonce), if a sheet shows.
    public static var showingRequest: (scopes: [ASAuthorization.Scope]?, nonce: String?)? {
        state.withLock { state in
            state.shown.removeAll { $0.controller == nil }
            guard
                let request = state.shown.last?.controller?.authorizationRequests.first
                    as? ASAuthorizationAppleIDRequest
            else { return nil }
            return (request.requestedScopes, request.nonce)
        }
    }

    /// The user finishes the sheet showing: Apple hands the credential to its controller's delegate. Answers whether a
    /// delegate heard it (a controller or delegate the app let go hears nothing, as with Apple's weak references).
    @MainActor
    public static func complete(
        user: String, identityToken: Data?, authorizationCode: Data?, fullName: PersonNameComponents? = nil,
        email: String? = nil
    ) -> Bool {
        guard let controller = takeShowing(), let delegate = controller.delegate else { return false }
        let request = controller.authorizationRequests.first as? ASAuthorizationAppleIDRequest
        let credential = ASAuthorizationAppleIDCredential(
            user: user, identityToken: identityToken, authorizationCode: authorizationCode, fullName: fullName,
            email: email, authorizedScopes: request?.requestedScopes ?? [], state: request?.state)
        delegate.authorizationController(
            controller: controller,
            didCompleteWithAuthorization: ASAuthorization(
                credential: credential, provider: ASAuthorizationAppleIDProvider()))
        return true
    }

    /// The sheet showing ends with `error` (the user closing it: `ASAuthorizationError(.canceled)`).
    @MainActor
    public static func fail(with error: any Error) -> Bool {
        guard let controller = takeShowing(), let delegate = controller.delegate else { return false }
        delegate.authorizationController(controller: controller, didCompleteWithError: error)
        return true
    }

    private static func takeShowing() -> ASAuthorizationController? {
        state.withLock { state in
            state.shown.removeAll { $0.controller == nil }
            return state.shown.popLast()?.controller
        }
    }
}
