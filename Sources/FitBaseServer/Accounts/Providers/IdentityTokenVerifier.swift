import FitBaseCore
import Crypto
import Foundation
import HTTPTypes
import JWTKit
import SQLKit

/// What a verified provider ID token says about the person.
struct VerifiedIdentity: Sendable, Equatable {
    let provider: IdentityProvider
    /// The provider's stable user id (`sub`); accounts are keyed by it.
    let subject: String
    /// The audience the token was issued to (the app's bundle id or services id).
    let audience: String
    let email: String?
    let emailVerified: Bool
    let isPrivateEmail: Bool
    let name: String?
    /// SHA-256 (hex) of the token's signature bytes: a token without a nonce is spent by it instead.
    let signatureDigest: String
    /// The token's `nonce` claim: spent once (``IdentityTokenNonces``) until `expiresAt`.
    var nonce: String? = nil
    var expiresAt: Date = .distantFuture
}

enum IdentityProvider: String, Sendable {
    case apple, google

    /// The provider's name as people know it (in e-mails).
    var displayName: String {
        switch self {
        case .apple: "Apple"
        case .google: "Google"
        }
    }
}

/// Verifies provider ID tokens (Sign in with Apple, Google) the way the providers document, with a distinct 401
/// code for each way a token can be wrong:
///
/// `identity_token_malformed`, `identity_token_unsupported_algorithm` (only RS256; `none` is refused),
/// `identity_token_unknown_key`, `identity_token_bad_signature`, `identity_token_wrong_issuer`,
/// `identity_token_wrong_audience`, `identity_token_expired` (60 s leeway, `iat` too), `identity_token_nonce_mismatch`.
struct IdentityTokenVerifier: Sendable {
    static let leeway: TimeInterval = 60

    let provider: IdentityProvider
    let issuers: Set<String>
    let audiences: Set<String>
    let keys: CachedKeySet

    /// How the token's `nonce` claim must relate to what the client sent.
    enum NonceCheck: Sendable {
        /// Apple: the claim is `hex(SHA256(rawNonce))`.
        case sha256Hex(of: String)
        /// Google: the claim is the nonce itself.
        case equal(to: String)
        /// The client sent none: a token that carries one is refused (it was minted for a flow that checks it).
        case none
    }

    func verify(_ token: String, nonce: NonceCheck, now: Date) async throws -> VerifiedIdentity {
        let claims = try await verifySignature(token, as: ProviderClaims.self)
        let audience = try checkIssuerAndAudience(iss: claims.iss, aud: claims.aud)
        guard claims.exp.addingTimeInterval(Self.leeway) > now, claims.iat.map({ $0 <= now.addingTimeInterval(Self.leeway) }) ?? true else {
            throw Self.reject(.identityTokenExpired, "The identity token has expired; sign in again.")
        }
        switch nonce {
        case .sha256Hex(let raw):
            let expected = sha256Hex(raw)
            guard claims.nonce == expected else {
                throw Self.reject(.identityTokenNonceMismatch, "The identity token's nonce does not match rawNonce.")
            }
        case .equal(let value):
            guard claims.nonce == value else {
                throw Self.reject(.identityTokenNonceMismatch, "The identity token's nonce does not match.")
            }
        case .none:
            guard claims.nonce == nil else {
                throw Self.reject(.identityTokenNonceMismatch, "The identity token carries a nonce; send it with the token.")
            }
        }
        let email = claims.email?.lowercased()
        return VerifiedIdentity(
            provider: provider, subject: claims.sub, audience: audience, email: email,
            emailVerified: claims.emailVerified == true && vouchesFor(email, hostedDomain: claims.hd), isPrivateEmail: claims.isPrivateEmail ?? false, name: claims.name,
            signatureDigest: try Self.signatureDigest(of: token), nonce: claims.nonce,
            expiresAt: claims.exp.addingTimeInterval(Self.leeway)
        )
    }

    /// Whether the provider answers for `email` when it says `email_verified`. Apple does for every address it
    /// hands out. Google does only for `gmail.com` addresses and Workspace accounts (tokens with `hd`): for any
    /// other address, `email_verified` means only that the address was once confirmed, not that it is still theirs.
    private func vouchesFor(_ email: String?, hostedDomain: String?) -> Bool {
        switch provider {
        case .apple: true
        case .google: email?.hasSuffix("@gmail.com") == true || hostedDomain?.isEmpty == false
        }
    }

    /// The digest of the signature's bytes. RS256 signs deterministically, so one token has one signature and another
    /// token another; a signature spelled another way than base64url's one spelling (spare bits set, which the
    /// signature check lets pass) is refused, so a token cannot be sent again under a second spelling.
    private static func signatureDigest(of token: String) throws(Problem) -> String {
        guard let encoded = token.split(separator: ".", omittingEmptySubsequences: false).last,
            let signature = Data(base64URLEncoded: encoded.utf8)
        else {
            throw reject(.identityTokenMalformed, "The identity token's signature is not in base64url's one spelling.")
        }
        return hexString(SHA256.hash(data: signature))
    }

    /// Checks the header (RS256 only, a published `kid`) and the signature, then decodes the claims.
    func verifySignature<Claims: JWTPayload>(_ token: String, as type: Claims.Type) async throws -> Claims {
        let header = try Self.header(of: token)
        guard header.alg == "RS256" else {
            throw Self.reject(.identityTokenUnsupportedAlgorithm, "Only RS256-signed identity tokens are accepted.")
        }
        guard let kid = header.kid, let collection = try await keys.keys(containing: kid) else {
            throw Self.reject(.identityTokenUnknownKey, "The identity token names a signing key the provider does not publish.")
        }
        do {
            return try await collection.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw Self.reject(.identityTokenBadSignature, "The identity token's signature does not verify.")
        } catch {
            throw Self.reject(.identityTokenMalformed, "The identity token could not be read.")
        }
    }

    /// The audience among ours that the token names; throws when the issuer or every audience is foreign.
    func checkIssuerAndAudience(iss: String, aud: [String]) throws(Problem) -> String {
        guard issuers.contains(iss) else {
            throw Self.reject(.identityTokenWrongIssuer, "The identity token was not issued by \(provider.rawValue).")
        }
        guard let audience = aud.first(where: audiences.contains) else {
            throw Self.reject(.identityTokenWrongAudience, "The identity token was issued to an app this server does not serve.")
        }
        return audience
    }

    static func reject(_ code: ProblemCode, _ detail: String) -> Problem {
        Problem(.unauthorized, code: code, title: "Unauthorized", detail: detail)
    }

    private struct Header: Decodable {
        let alg: String?
        let kid: String?
    }

    private static func header(of token: String) throws(Problem) -> Header {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Data(base64URLEncoded: String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: data)
        else {
            throw reject(.identityTokenMalformed, "The identity token is not a JWT.")
        }
        return header
    }
}

/// The claims Apple and Google put in ID tokens. Apple sends `email_verified` and `is_private_email` as strings
/// or booleans depending on the flow; both are accepted.
private struct ProviderClaims: JWTPayload {
    let iss: String
    let sub: String
    let aud: [String]
    let exp: Date
    let iat: Date?
    let nonce: String?
    let email: String?
    let emailVerified: Bool?
    let isPrivateEmail: Bool?
    let name: String?
    /// Google Workspace: the domain of the account.
    let hd: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, email, name, hd
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        if let single = try? container.decode(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decode([String].self, forKey: .aud)
        }
        exp = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .exp))
        iat = try container.decodeIfPresent(Double.self, forKey: .iat).map(Date.init(timeIntervalSince1970:))
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        hd = try? container.decodeIfPresent(String.self, forKey: .hd)
        emailVerified = Self.flexibleBool(container, .emailVerified)
        isPrivateEmail = Self.flexibleBool(container, .isPrivateEmail)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(sub, forKey: .sub)
        try container.encode(aud, forKey: .aud)
        try container.encode(exp.timeIntervalSince1970, forKey: .exp)
    }

    /// Our own checks run after signature verification, with leeway and distinct codes.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    private static func flexibleBool(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) -> Bool? {
        if let value = try? container.decode(Bool.self, forKey: key) { return value }
        if let text = try? container.decode(String.self, forKey: key) { return text.lowercased() == "true" }
        return nil
    }
}

/// The replay cache of provider ID tokens: a token's nonce — or, for a token minted without one (Google allows it),
/// the token itself — is spent by the sign-in that uses it, in the sign-in's transaction, and kept in the database
/// until the token expires (housekeeping drops it then). A captured token (with its raw nonce) therefore signs in
/// once, on whichever instance sees it first.
enum IdentityTokenNonces {
    /// Spends `identity`'s nonce, or its token when it has none; 401 `identity_token_replayed` when it was spent
    /// before.
    static func spend(_ identity: VerifiedIdentity, on db: any SQLDatabase) async throws {
        let provider = identity.provider.rawValue
        // "apple:…"/"google:…" for a nonce, as before; a space, which no such key has there, for a token.
        let spentKey = identity.nonce.map { "\(provider):\($0)" } ?? "\(provider) token \(identity.signatureDigest)"
        let spent = try await db.insert(into: "identity_token_nonces").columns("nonce_hash", "expires_at")
            .values(SQLBind(sha256Hex(spentKey)), SQLBind(identity.expiresAt))
            .ignoringConflicts(with: ["nonce_hash"]).returning("nonce_hash").all()
        guard !spent.isEmpty else {
            throw IdentityTokenVerifier.reject(
                .identityTokenReplayed,
                "This identity token (or its nonce) was used before; get a new one from the provider and sign in again."
            )
        }
    }

    /// Drops nonces whose tokens expired before `now`.
    static func purge(now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "identity_token_nonces").where("expires_at", .lessThan, now).run()
    }
}
