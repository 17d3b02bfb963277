import FitBaseAPI
import FitBaseCore
import Foundation
import JWTKit
import Logging
import ServiceLifecycle
import Synchronization

/// Signs and verifies the server's access tokens: ES256 JWTs with `sub`, `sid`, `iat`, `exp`, `iss` and `aud`, and the
/// signing key's `kid` in the header.
///
/// The keys belong to the deployment, not to an instance: they live in the database, sealed by the master key
/// (``SigningKeys``), so every instance on one database signs with the same current key and accepts every previous
/// one. The signer holds them in memory — issuing and verifying cost no query — and reads them again when a token
/// names a key it does not know (at most once every few seconds, so forged kids cannot hammer the database) and every
/// minute (``SigningKeyRefresh``), so a rotation made elsewhere is taken up. ``load()`` runs as the server starts,
/// after migrations.
actor SessionTokenSigner {
    /// How long an access token is valid.
    static let accessTokenLifetime: TimeInterval = 15 * 60
    static let audience = "fitbase"

    nonisolated let issuer: String
    /// The clock a token's expiry is checked against.
    nonisolated let clock: ServerClock
    /// `nil` for a signer with one fixed key.
    private let keys: SigningKeys?
    /// The least time between two reads of the keys caused by tokens naming keys the signer does not hold.
    private let unknownKeyLookupInterval: Duration
    private var ring: SigningKeyRing?
    private var reading: Task<SigningKeyRing, any Error>?
    private var lastUnknownKeyLookup: ContinuousClock.Instant?

    /// A signer over the deployment's keys in the database; ``load()`` reads them.
    init(keys: SigningKeys, issuer: String, clock: ServerClock = .system, unknownKeyLookupInterval: Duration = .seconds(5)) {
        self.issuer = issuer
        self.clock = clock
        self.keys = keys
        self.unknownKeyLookupInterval = unknownKeyLookupInterval
    }

    /// A signer with one key and no database (tests forge tokens with it).
    init(key: ES256PrivateKey, issuer: String) async {
        self.issuer = issuer
        self.clock = .system
        self.keys = nil
        self.unknownKeyLookupInterval = .zero
        // A ring of one current key cannot fail to build.
        self.ring = try? await SigningKeyRing(keys: [SigningKey(privateKey: key, state: .current)])
    }

    /// Makes sure the deployment has a signing key (importing a legacy key file), then reads the keys.
    func load() async throws {
        try await keys?.establish(now: clock.now)
        try await reload()
    }

    /// Reads the keys again; the current one signs from now on. Concurrent calls share one read.
    @discardableResult
    func reload() async throws -> SigningKeyRing {
        guard let keys else {
            guard let ring else { throw SigningKeysError.noCurrentKey }
            return ring
        }
        if let reading { return try await reading.value }
        let task = Task { try await SigningKeyRing(keys: keys.liveKeys()) }
        reading = task
        defer { reading = nil }
        let fresh = try await task.value
        if let ring, ring.currentKeyID != fresh.currentKeyID {
            keys.logger.notice("signing access tokens with a new key", metadata: ["kid": "\(fresh.currentKeyID)"])
        }
        if ring?.keyIDs != fresh.keyIDs { verified.withLock { $0.removeAll() } }
        ring = fresh
        return fresh
    }

    /// A signed access token for `session` of `user`, and its lifetime in seconds.
    /// - Parameter authenticatedAt: when the user signed in to the session (OIDC `auth_time`); refreshing keeps it.
    func issue(user: UserID, session: SessionID, authenticatedAt: Date, now: Date) async throws -> (token: String, expiresIn: Int) {
        let ring = try await currentRing()
        let payload = AccessTokenPayload(
            sub: .init(value: user.description),
            sid: session.description,
            auth_time: Int(authenticatedAt.timeIntervalSince1970),
            iat: .init(value: now),
            exp: .init(value: now.addingTimeInterval(Self.accessTokenLifetime)),
            iss: .init(value: issuer),
            aud: .init(value: [Self.audience])
        )
        let token = try await ring.collection.sign(payload, kid: JWKIdentifier(string: ring.currentKeyID))
        return (token, Int(Self.accessTokenLifetime))
    }

    /// The verified claims of `token`, or a 401 problem saying why it was refused.
    /// The claims of `token`, from the tokens verified before while they last (a signature check and two JSON
    /// decodings saved on every signed-in request), else verified now. A change of the signing keys (a key retired)
    /// forgets every token verified before it.
    nonisolated func verify(_ token: String) async throws(Problem) -> AccessClaims {
        let now = clock.now
        if let known = verified.withLock({ $0[token] }), now < known.expiresAt { return known.claims }
        let (claims, expiresAt) = try await verifyUncached(token)
        verified.withLock { verified in
            if verified.count >= Self.verifiedTokenLimit { verified.removeAll(keepingCapacity: true) }
            verified[token] = (claims, expiresAt)
        }
        return claims
    }

    /// Tokens verified before, with their claims and expiry (at most ``verifiedTokenLimit``; all are dropped when full).
    private nonisolated let verified = Mutex<[String: (claims: AccessClaims, expiresAt: Date)]>([:])
    static let verifiedTokenLimit = 50_000

    private func verifyUncached(_ token: String) async throws(Problem) -> (AccessClaims, Date) {
        guard let kid = Self.keyID(in: token), let ring = await ring(holding: kid) else {
            throw .unauthenticated(.invalidToken, "The access token is not valid.")
        }
        let payload: AccessTokenPayload
        do {
            payload = try await ring.collection.verify(token, as: AccessTokenPayload.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw .unauthenticated(.tokenExpired, "The access token has expired; refresh the session.")
        } catch {
            throw .unauthenticated(.invalidToken, "The access token is not valid.")
        }
        // Expiry is checked here, against the server's clock, rather than by the payload against the system's.
        guard payload.exp.value > clock.now else {
            throw .unauthenticated(.tokenExpired, "The access token has expired; refresh the session.")
        }
        guard payload.iss.value == issuer, payload.aud.value.contains(Self.audience),
            let user = UserID(payload.sub.value), let session = SessionID(payload.sid)
        else {
            throw .unauthenticated(.invalidToken, "The access token is not valid.")
        }
        let claims = AccessClaims(
            user: user, session: session, authenticatedAt: Date(timeIntervalSince1970: TimeInterval(payload.auth_time)), expiresAt: payload.exp.value
        )
        return (claims, payload.exp.value)
    }

    /// The public keys that verify access tokens (the current and the previous ones), as `/.well-known/jwks.json`
    /// publishes them.
    func publishedKeys() async -> [Components.Schemas.Jwk] {
        (try? await currentRing())?.published ?? []
    }

    private func currentRing() async throws -> SigningKeyRing {
        if let ring { return ring }
        return try await reload()
    }

    /// The ring if it holds `kid`; else the keys are read again first, unless that happened for an unknown kid lately.
    private func ring(holding kid: String) async -> SigningKeyRing? {
        if let ring, ring.keyIDs.contains(kid) { return ring }
        guard let keys else { return nil }
        let now = ContinuousClock.now
        if let last = lastUnknownKeyLookup, now - last < unknownKeyLookupInterval { return nil }
        lastUnknownKeyLookup = now
        do {
            let fresh = try await reload()
            return fresh.keyIDs.contains(kid) ? fresh : nil
        } catch {
            keys.logger.warning("cannot read the signing keys", metadata: ["error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// The `kid` of an ES256 token's header; `nil` for anything else.
    private static func keyID(in token: String) -> String? {
        struct Header: Decodable {
            let alg: String?
            let kid: String?
        }
        guard let end = token.firstIndex(of: "."), let data = Data(base64URLEncoded: String(token[..<end])),
            let header = try? JSONDecoder().decode(Header.self, from: data), header.alg == "ES256"
        else { return nil }
        return header.kid
    }
}

extension PeriodicService {
    /// Rereads the signing keys every minute, so every instance signs with the current key soon after a rotation made
    /// elsewhere (`fitbase keys rotate-signing`), and forgets retired ones.
    static func signingKeyRefresh(_ signer: SessionTokenSigner, logger: Logger, every interval: Duration = .seconds(60)) -> PeriodicService {
        PeriodicService(
            interval: interval, logger: logger, failure: "cannot reread the signing keys; signing with the ones read before", failureLevel: .warning
        ) { try await signer.reload() }
    }
}

/// What a verified access token says.
struct AccessClaims: Sendable, Equatable {
    let user: UserID
    let session: SessionID
    /// When the user signed in to this session (password or provider), not when the token was refreshed.
    let authenticatedAt: Date
    /// When the token expires.
    let expiresAt: Date
}

private struct AccessTokenPayload: JWTPayload {
    var sub: SubjectClaim
    var sid: String
    var auth_time: Int
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var iss: IssuerClaim
    var aud: AudienceClaim

    /// The signature only: ``SessionTokenSigner`` checks the expiry against its clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
