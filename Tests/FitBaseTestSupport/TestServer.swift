import FitBaseServer
import Foundation
import Logging

extension ServerConfiguration {
    /// A configuration for tests: the given database, its temp data directory, port 0, quiet logs, no demo catalog.
    public static func testing(
        _ database: TestDatabase, maxBodyBytes: Int = 1 << 20, demoCatalog: Bool = false,
        identityProviders: IdentityProvidersConfiguration = .init(), languageModel: LanguageModelConfiguration? = nil
    ) -> ServerConfiguration {
        ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: database.dataDirectory, database: database.location,
            logLevel: TestDatabase.logger.logLevel, maxBodyBytes: maxBodyBytes, bcryptCost: 4, loadsDemoCatalog: demoCatalog,
            identityProviders: identityProviders, languageModel: languageModel
        )
    }
}

/// The repository's root, for tests that compare served files with their sources.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
