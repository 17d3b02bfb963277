import FitBaseCore
import FitBaseServer
import Foundation
import Logging

extension ServerConfiguration {
    /// A configuration for tests: the given database, its temp data directory, port 0, quiet logs, no demo catalog,
    /// and rate limits on but out of a test's reach (``RateLimitConfiguration/testing``).
    public static func testing(
        _ database: TestDatabase, maxBodyBytes: Int = 1 << 20, demoCatalog: Bool = false,
        identityProviders: IdentityProvidersConfiguration = .init(), languageModel: LanguageModelConfiguration? = nil,
        billing: BillingConfiguration = .init(), rateLimits: RateLimitConfiguration = .testing
    ) -> ServerConfiguration {
        ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: database.dataDirectory, database: database.location,
            logLevel: TestDatabase.logger.logLevel, maxBodyBytes: maxBodyBytes, bcryptCost: 4, loadsDemoCatalog: demoCatalog,
            identityProviders: identityProviders, languageModel: languageModel, billing: billing, rateLimits: rateLimits
        )
    }
}

extension RateLimitConfiguration {
    /// Every class limited per account and per address, far beyond what a test sends (load tests included, all from
    /// 127.0.0.1): the limiter runs and adds its headers in every test without refusing anything.
    public static let testing: RateLimitConfiguration = {
        var limits = RateLimitConfiguration.uniform(.init(perUser: .init(1_000_000, per: 60), perAddress: .init(1_000_000, per: 60)))
        limits.signUpsPerAddress = .init(1_000_000, per: 60)
        return limits
    }()
}

/// The repository's root, for tests that compare served files with their sources.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

extension TestDatabase {
    /// Grants the user with `id` a tier for 30 days, as `fitbase admin grant-tier` does.
    public func grant(_ tier: SubscriptionTier, toUser id: String) async throws {
        guard let uuid = UUID(uuidString: id) else { throw NotAUserID(text: id) }
        let database = try await Database.open(location, logger: TestDatabase.logger)
        do {
            try await AccountAdministration(database: database, clock: .system).grantTier(tier, to: UserID(rawValue: uuid), days: 30)
            try await database.shutdown()
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}

/// A test named a user by something that is not a user id.
struct NotAUserID: Error {
    let text: String
}
