import Foundation
import Logging

/// Access-token signing key administration for the command line (`fitbase keys rotate-signing`).
package struct SigningKeyAdministration: Sendable {
    let configuration: ServerConfiguration
    let logger: Logger

    package init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Makes a new current signing key for every instance on the database. The key that was current becomes previous:
    /// it still verifies the tokens it signed and stays published, so nobody is signed out. Previous keys that stopped
    /// being current at least an hour before `now` are retired (tokens last 15 minutes). Running instances sign with
    /// the new key within a minute, or at once when they meet a token it signed.
    ///
    /// Needs the deployment's master key (it seals the new key); applies pending migrations first.
    package func rotateSigningKey(now: Date) async throws -> SigningKeyRotation {
        let masterKey = try MasterKey.load(for: configuration)
        let database = try await Database.open(configuration.database, logger: logger)
        do {
            try await MigrationRunner.forServer(database: database, logger: logger).run()
            let check = MasterKeyCheck(database: database)
            try await check.prepare()
            try await check.verify(masterKey, now: now)
            let keys = SigningKeys(
                store: SigningKeyStore(database: database), masterKey: masterKey,
                legacyKeyFile: SigningKeys.legacyKeyFile(in: configuration.dataDirectory),
                logger: logger
            )
            // A deployment upgraded but not started since still has its key in the data directory: import it first,
            // so that it becomes the previous key instead of being dropped.
            try await keys.establish(now: now)
            let rotation = try await keys.rotate(now: now)
            try await database.shutdown()
            return rotation
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}
