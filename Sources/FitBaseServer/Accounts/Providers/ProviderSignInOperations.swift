import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import JWTKit
import Logging

/// Sign in with Apple and Google using the ID token the app got from the provider's SDK, and Apple's
/// server-to-server notifications about those accounts.
protocol ProviderSignInOperations: FeatureOperations { var accountsFeature: AccountsFeature { get } }

extension ProviderSignInOperations {
    private var appleTokens: AppleTokenRevoker? { accountsFeature.appleTokens }

    func signInWithApple(_ input: Operations.SignInWithApple.Input) async throws -> Operations.SignInWithApple.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let verifier = try Self.configured(accountsFeature.apple, "Sign in with Apple", "FITBASE_APPLE_AUDIENCES")
        let now = clock.now
        let identity = try await verifier.verify(body.identityToken, nonce: .sha256Hex(of: body.rawNonce), now: now)
        let name = [body.fullName?.givenName, body.fullName?.familyName].compactMap { $0?.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
        let outcome = try await accountsFeature.linker.signIn(
            identity, displayName: DisplayNameRule.truncated(name),
            deviceLabel: AuthSessionBuilder.deviceLabel(body.deviceName), now: now
        )
        if let code = body.authorizationCode, !code.isEmpty, let appleTokens {
            await appleTokens.storeRefreshToken(code: code, for: identity, now: now)
        }
        return .ok(.init(body: .json(try await session(outcome, now: now))))
    }

    func signInWithGoogle(_ input: Operations.SignInWithGoogle.Input) async throws -> Operations.SignInWithGoogle.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let verifier = try Self.configured(accountsFeature.google, "Google sign-in", "FITBASE_GOOGLE_AUDIENCES")
        if accountsFeature.googleRequiresNonce && (body.nonce ?? "").isEmpty {
            throw IdentityTokenVerifier.reject(.identityTokenNonceMismatch, "This server requires the nonce the Google token was minted with.")
        }
        let now = clock.now
        let identity = try await verifier.verify(body.idToken, nonce: body.nonce.map { .equal(to: $0) } ?? .none, now: now)
        let outcome = try await accountsFeature.linker.signIn(
            identity, displayName: DisplayNameRule.truncated(identity.name),
            deviceLabel: AuthSessionBuilder.deviceLabel(body.deviceName), now: now
        )
        return .ok(.init(body: .json(try await session(outcome, now: now))))
    }

    /// Apple's notifications: `email-disabled` / `email-enabled` (private relay forwarding), `consent-revoked` (the
    /// user stopped using Sign in with Apple with the app: their sessions end), `account-delete` (the Apple ID is
    /// gone: the account is deleted). Unknown users and event types are acknowledged.
    ///
    /// Replays do nothing: each `jti` is acted on once, a notification issued more than an hour ago (or in the
    /// future) is acknowledged and ignored, and so is one issued before the identity was linked — a captured
    /// `account-delete` cannot delete the account of someone who later signs up again with the same Apple ID.
    func receiveAppleNotification(
        _ input: Operations.ReceiveAppleNotification.Input
    ) async throws -> Operations.ReceiveAppleNotification.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let verifier = try Self.configured(accountsFeature.apple, "Sign in with Apple", "FITBASE_APPLE_AUDIENCES")
        let claims = try await verifier.verifySignature(body.payload, as: AppleNotificationClaims.self)
        _ = try verifier.checkIssuerAndAudience(iss: claims.iss, aud: claims.aud)
        guard let data = claims.events.data(using: .utf8), let event = try? JSONDecoder().decode(AppleNotificationEvent.self, from: data) else {
            throw Problem.invalidRequest("The notification's events claim is not an Apple event.")
        }
        guard let jti = claims.jti, !jti.isEmpty, let issuedAt = claims.iat else {
            throw Problem.invalidRequest("The notification has no jti or iat claim.")
        }
        let now = clock.now
        guard issuedAt > now.addingTimeInterval(-AccountsFeature.appleNotificationMaximumAge), issuedAt < now.addingTimeInterval(IdentityTokenVerifier.leeway) else {
            accountsFeature.logger.warning("stale Apple notification ignored", metadata: ["type": "\(event.type)", "iat": "\(issuedAt)"])
            return .ok(.init())
        }
        let receipts = AppleNotificationReceipts(database: accountsFeature.database)
        let firstTime = try await receipts.claim(jti, now: now, keep: 2 * AccountsFeature.appleNotificationMaximumAge)
        guard firstTime else {
            accountsFeature.logger.info("replayed Apple notification ignored", metadata: ["type": "\(event.type)"])
            return .ok(.init())
        }
        do {
            try await apply(event, issuedAt: issuedAt, now: now)
        } catch {
            // Not acted on: forget the receipt so Apple's retry is.
            try? await receipts.forget(jti)
            throw error
        }
        return .ok(.init())
    }

    private func apply(_ event: AppleNotificationEvent, issuedAt: Date, now: Date) async throws {
        let identity = try await accountsFeature.database.withConnection { db in try await IdentityStore.find(.apple, subject: event.sub, on: db) }
        guard let identity else {
            accountsFeature.logger.info("Apple notification for an unknown account", metadata: ["type": "\(event.type)"])
            return
        }
        guard issuedAt >= identity.linkedAt.addingTimeInterval(-1) else {
            accountsFeature.logger.warning("Apple notification issued before the identity was linked ignored", metadata: ["type": "\(event.type)", "user": "\(identity.user)"])
            return
        }
        switch event.type {
        case "email-disabled":
            try await accountsFeature.identities.setEmailRelayEnabled(false, provider: .apple, subject: event.sub, now: now)
        case "email-enabled":
            try await accountsFeature.identities.setEmailRelayEnabled(true, provider: .apple, subject: event.sub, now: now)
        case "consent-revoked":
            try await accountsFeature.sessions.revokeAll(of: identity.user, now: now)
        case "account-delete":
            try await accountsFeature.registry.deleteAccount(identity.user, now: now, database: accountsFeature.database)
        default:
            accountsFeature.logger.info("ignored Apple notification", metadata: ["type": "\(event.type)"])
        }
        accountsFeature.logger.notice("Apple notification processed", metadata: ["type": "\(event.type)", "user": "\(identity.user)"])
    }

    private func session(_ outcome: ProviderAccountLinker.Outcome, now: Date) async throws -> Components.Schemas.AuthSession {
        var answer = try await accountsFeature.responses.authSession(
            outcome.user, session: outcome.session, refreshToken: outcome.refreshToken, authenticatedAt: now, now: now,
            isNewUser: outcome.isNewUser
        )
        answer.linked = outcome.linked.map { linked in
            switch linked {
            case .created: .created
            case .joined: .joined
            }
        }
        return answer
    }

    private static func configured(_ verifier: IdentityTokenVerifier?, _ name: String, _ setting: String) throws(Problem) -> IdentityTokenVerifier {
        guard let verifier else {
            throw Problem(.serviceUnavailable, code: .providerNotConfigured, detail: "\(name) is not configured on this server (\(setting)).")
        }
        return verifier
    }
}

/// The claims of an Apple server-to-server notification: the event is a JSON document inside a string.
private struct AppleNotificationClaims: JWTPayload {
    let iss: String
    let aud: [String]
    let iat: Date?
    let jti: String?
    let events: String

    enum CodingKeys: String, CodingKey { case iss, aud, iat, jti, events }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        if let single = try? container.decode(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decode([String].self, forKey: .aud)
        }
        iat = try container.decodeIfPresent(Double.self, forKey: .iat).map(Date.init(timeIntervalSince1970:))
        jti = try container.decodeIfPresent(String.self, forKey: .jti)
        events = try container.decode(String.self, forKey: .events)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(aud, forKey: .aud)
        try container.encodeIfPresent(iat?.timeIntervalSince1970, forKey: .iat)
        try container.encodeIfPresent(jti, forKey: .jti)
        try container.encode(events, forKey: .events)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

private struct AppleNotificationEvent: Decodable {
    let type: String
    let sub: String
}
