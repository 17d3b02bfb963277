import AsyncHTTPClient
import Foundation
import Logging

/// Accounts: sign-up and sign-in (password, Apple, Google), sessions, the account's own data, e-mail verification
/// and password reset, and the authentication every other route runs behind.
struct AccountsFeature: ServerFeature {
    /// How recently the caller must have signed in to delete the account or change its credentials.
    static let reauthenticationWindow: TimeInterval = 5 * 60
    /// How old an Apple notification may be (by its `iat`) and still be acted on; receipts are kept twice as long.
    static let appleNotificationMaximumAge: TimeInterval = 3600

    let authentication: AuthenticationMiddleware
    let database: Database
    let users: UserStore
    let sessions: SessionStore
    let identities: IdentityStore
    let profiles: ProfileStore
    let consents: ConsentStore
    let throttle: SignInThrottle
    let hasher: PasswordHasher
    let signer: SessionTokenSigner
    let responses: AuthSessionBuilder
    let credentials: AccountCredentials
    let passwordSessions: PasswordSessions
    let composer: AccountMailComposer
    /// Identity-token verifiers, `nil` for a provider without audiences configured.
    let apple: IdentityTokenVerifier?
    let google: IdentityTokenVerifier?
    /// `FITBASE_GOOGLE_REQUIRE_NONCE`.
    let googleRequiresNonce: Bool
    let linker: ProviderAccountLinker
    let appleTokens: AppleTokenRevoker?
    /// Every feature's rows of a user, for export and deletion.
    let registry: AccountDataRegistry
    let logger: Logger

    /// The account's own rows; registered first, so they are deleted last.
    static func dataOwners(_ foundation: ServerFoundation) -> [any AccountDataOwner] {
        [
            AccountProfileOwner(profiles: foundation.profiles), IdentitiesOwner(appleTokens: foundation.appleTokens), SessionsOwner(), ConsentsOwner(),
            OutboxOwner(),
        ]
    }

    init(_ foundation: ServerFoundation, registry: AccountDataRegistry) {
        let (configuration, database, logger) = (foundation.configuration, foundation.database, foundation.logger)
        let providers = configuration.identityProviders
        let composer = foundation.composer
        let sessions = SessionStore(database: database)
        let identities = IdentityStore(database: database)
        let keyFetcher = HTTPJSONWebKeySetFetcher(client: foundation.httpClient)
        let rateLimits = configuration.rateLimits
        let signUpsPerClient = rateLimits.isEnabled ? rateLimits.signUpsPerAddress.map {
            RateLimiter.Rule(name: "signup-client", limit: $0.capacity, window: TimeInterval($0.seconds))
        } : nil

        authentication = AuthenticationMiddleware(
            signer: foundation.signer, sessions: sessions, trustedProxies: configuration.accounts.trustedProxyRanges,
            proxyWarning: UntrustedProxyWarning(logger: logger)
        )
        self.database = database
        users = UserStore(database: database)
        self.sessions = sessions
        self.identities = identities
        profiles = foundation.profiles
        consents = ConsentStore(database: database)
        throttle = SignInThrottle(database: database)
        hasher = foundation.hasher
        signer = foundation.signer
        responses = AuthSessionBuilder(signer: foundation.signer, profiles: foundation.profiles, identities: identities, groups: GroupStore(database: database))
        credentials = AccountCredentials(
            database: database, hasher: foundation.hasher, composer: composer, outbox: foundation.outbox, signUpsPerClient: signUpsPerClient
        )
        passwordSessions = PasswordSessions(database: database, sessions: sessions, throttle: throttle)
        self.composer = composer
        apple = providers.appleAudiences.isEmpty ? nil : IdentityTokenVerifier(
            provider: .apple, issuers: ["https://appleid.apple.com"], audiences: Set(providers.appleAudiences),
            keys: CachedKeySet(url: providers.appleJWKSURL, fetcher: keyFetcher)
        )
        google = providers.googleAudiences.isEmpty ? nil : IdentityTokenVerifier(
            provider: .google, issuers: ["accounts.google.com", "https://accounts.google.com"],
            audiences: Set(providers.googleAudiences), keys: CachedKeySet(url: providers.googleJWKSURL, fetcher: keyFetcher)
        )
        googleRequiresNonce = providers.googleRequiresNonce
        linker = ProviderAccountLinker(
            database: database, sessions: sessions, composer: composer, outbox: foundation.outbox, registry: registry, logger: logger
        )
        appleTokens = foundation.appleTokens
        self.registry = registry
        self.logger = logger
    }

    /// The profile's preferences, synced as one record.
    var syncedCollections: [any SyncedCollection] { [PreferencesCollection(profiles: profiles)] }

    var middleware: [ScopedMiddleware] {
        [PageHeadersMiddleware.scoped(under: "/auth/")]
    }
}
