import AsyncHTTPClient
import Foundation
import Logging

/// Wires the accounts feature: stores, identity providers, controllers and the authentication middleware.
struct AccountsFeature: Sendable {
    let authentication: AuthenticationMiddleware
    let auth: AuthController
    let providers: ProviderSignInController
    let me: MeController
    let credentials: CredentialsController
    let pages: AccountPagesController

    init(
        database: Database, signer: SessionTokenSigner, hasher: PasswordHasher, httpClient: HTTPClient,
        appleTokens: AppleTokenRevoker?, providers configuration: IdentityProvidersConfiguration, settings: AccountsConfiguration,
        rateLimits: RateLimitConfiguration, profiles: ProfileStore, composer: AccountMailComposer, outbox: Outbox, registry: AccountDataRegistry, logger: Logger
    ) {
        let users = UserStore(database: database)
        let sessions = SessionStore(database: database)
        let identities = IdentityStore(database: database)
        let responses = AuthSessionBuilder(signer: signer, profiles: profiles, identities: identities, groups: GroupStore(database: database))
        let keyFetcher = HTTPJSONWebKeySetFetcher(client: httpClient)
        let apple = configuration.appleAudiences.isEmpty ? nil : IdentityTokenVerifier(
            provider: .apple, issuers: ["https://appleid.apple.com"], audiences: Set(configuration.appleAudiences),
            keys: CachedKeySet(url: configuration.appleJWKSURL, fetcher: keyFetcher)
        )
        let google = configuration.googleAudiences.isEmpty ? nil : IdentityTokenVerifier(
            provider: .google, issuers: ["accounts.google.com", "https://accounts.google.com"],
            audiences: Set(configuration.googleAudiences), keys: CachedKeySet(url: configuration.googleJWKSURL, fetcher: keyFetcher)
        )
        let signUpsPerClient = rateLimits.isEnabled ? rateLimits.signUpsPerAddress.map {
            RateLimiter.Rule(name: "signup-client", limit: $0.capacity, window: TimeInterval($0.seconds))
        } : nil
        let accountCredentials = AccountCredentials(
            database: database, hasher: hasher, composer: composer, outbox: outbox, signUpsPerClient: signUpsPerClient
        )

        authentication = AuthenticationMiddleware(
            signer: signer, sessions: sessions, trustedProxies: settings.trustedProxyRanges, proxyWarning: UntrustedProxyWarning(logger: logger)
        )
        auth = AuthController(
            database: database, users: users, sessions: sessions, throttle: SignInThrottle(database: database),
            hasher: hasher, signer: signer, responses: responses, credentials: accountCredentials
        )
        providers = ProviderSignInController(
            apple: apple, google: google, googleRequiresNonce: configuration.googleRequiresNonce, linker: ProviderAccountLinker(
                database: database, sessions: sessions, composer: composer, outbox: outbox, logger: logger
            ),
            responses: responses, appleTokens: appleTokens, sessions: sessions, identities: identities, registry: registry,
            database: database, logger: logger
        )
        me = MeController(
            database: database, users: users, profiles: profiles, sessions: sessions, consents: ConsentStore(database: database),
            registry: registry, responses: responses, logger: logger
        )
        credentials = CredentialsController(credentials: accountCredentials)
        pages = AccountPagesController(credentials: accountCredentials, composer: composer)
    }
}
