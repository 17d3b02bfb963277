import AsyncHTTPClient
import Crypto
import FitBaseCore
import Foundation
import Logging
import SQLKit

/// Health data administration for the command line: master key rotation and audit chain verification.
package struct HealthAdministration: Sendable {
    let configuration: ServerConfiguration
    let logger: Logger
    /// When keys, the master key's record and checkpoints are made (the command line: the system's).
    let clock: ServerClock

    package init(configuration: ServerConfiguration, logger: Logger, clock: ServerClock) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
    }

    /// What a rotation did.
    package struct Rotation: Sendable, CustomStringConvertible {
        package var healthKeys: Int
        package var appleTokens: Int
        package var signingKeys: Int
        package var newKeyID: String
        package var newKeyFile: String

        package var description: String {
            "re-wrapped \(healthKeys) health data key(s) and re-sealed \(appleTokens) Apple token(s) and \(signingKeys) signing key(s) "
                + "under master key \(newKeyID) (\(newKeyFile))"
        }
    }

    /// Re-wraps every health data key (and re-seals every stored Apple refresh token and access-token signing key)
    /// under the master key in `newKeyFile` — created (0600) with a fresh random key when it does not exist — and
    /// records it as the database's master key. Samples are not touched: they are sealed under the data keys, which
    /// do not change. Applies pending migrations first. Start the servers with the new key afterwards.
    package func rotateMasterKey(to newKeyFile: String) async throws -> Rotation {
        let current = try MasterKey.load(for: configuration)
        let next = try MasterKey.load(environmentValue: nil, file: newKeyFile)
        guard next.id != current.id else { throw AdministrationError("the new master key is the current one (id \(current.id))") }

        return try await withDatabases { database, keystore in
            try await rotate(from: current, to: next, newKeyFile: newKeyFile, database: database, keystore: keystore)
        }
    }

    private func rotate(from current: MasterKey, to next: MasterKey, newKeyFile: String, database: Database, keystore: Database) async throws -> Rotation {
        try await MigrationRunner.forServer(database: database, logger: logger).run()
        let keys = HealthKeyStore(database: keystore, clock: clock)
        try await keys.prepare()
        let vault = HealthVault(keys: keys, masterKey: current)
        try await vault.checkMasterKey()
        let check = MasterKeyCheck(database: database)
        try await check.prepare()
        try await check.verify(current, now: clock.now)
        let rewrapped = try await keys.rewrapAll { wrapped in
            let key = try vault.unwrap(wrapped)
            var fresh = wrapped
            fresh.masterKeyID = next.id
            fresh.wrapped = try next.seal(key.key.withUnsafeBytes { Data($0) }, context: HealthVault.context(wrapped.user, wrapped.keyID))
            return fresh
        }
        _ = try await keys.rewrapAuditKeys { wrapped in
            let context = AuditKey.context(wrapped.id)
            var fresh = wrapped
            fresh.masterKeyID = next.id
            fresh.wrapped = try next.seal(try current.open(wrapped.wrapped, context: context), context: context)
            return fresh
        }
        let (tokens, signingKeys) = try await database.transaction { db in
            let rows = try await db.select().columns("provider", "subject", "sealed_refresh_token").from("user_identities")
                .where("sealed_refresh_token", .isNot, SQLLiteral.null).all()
            for row in rows {
                let provider = try row.decode(column: "provider", as: String.self)
                let subject = try row.decode(column: "subject", as: String.self)
                guard let provider = IdentityProvider(rawValue: provider), let sealed = Data(base64Encoded: try row.decode(column: "sealed_refresh_token", as: String.self)) else { continue }
                let context = AppleTokenRevoker.context(provider, subject)
                let resealed = try next.seal(try current.open(sealed, context: context), context: context)
                try await db.update("user_identities").set("sealed_refresh_token", to: resealed.base64EncodedString())
                    .where("provider", .equal, provider.rawValue).where("subject", .equal, subject).run()
            }
            let signingKeys = try await SigningKeyStore.resealAll(on: db) { stored in
                let context = SigningKeys.context(stored.kid)
                return try next.seal(try current.open(stored.sealedPrivateKey, context: context), context: context)
            }
            try await MasterKeyCheck.record(next, now: clock.now, on: db)
            return (rows.count, signingKeys)
        }
        return Rotation(healthKeys: rewrapped, appleTokens: tokens, signingKeys: signingKeys, newKeyID: next.id, newKeyFile: newKeyFile)
    }

    /// What `fitbase audit verify` found.
    package struct AuditVerdict: Sendable {
        package var entries: Int
        package var chains: Int
        package var digests: Int
        package var unsigned: Int
        /// Checkpoints checked (the database's newest, the file's and the sink's newest).
        package var checkpoints: Int
        package var firstBreak: String?
        /// Checkpoints missing from the database or older than the schedule (``AuditCheckpointCoverage``): the chains
        /// may hold, but something deleted checkpoints or stopped them being written.
        package var warnings: [String] = []
    }

    /// Walks every audit chain and checks its signed digests with the audit key (unwrapped with the master key), then
    /// the newest checkpoint the database keeps, the one in `checkpointFile` and the newest in the sink
    /// (`checkpointURL`, else `FITBASE_AUDIT_CHECKPOINT_URL`; ``AuditCheckpoint``): the verdict names the first broken
    /// link, a cut or a deleted chain, and warns of checkpoints missing from the database or older than the schedule.
    package func verifyAuditChain(checkpointFile: String? = nil, checkpointURL: String? = nil) async throws -> AuditVerdict {
        let external = try checkpointFile.map { try AuditCheckpoint.decoder.decode(AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: $0))) }
        var audit = configuration.audit
        if let checkpointURL {
            audit.checkpointSink = try AuditConfiguration.sink(
                parsing: checkpointURL, source: "--checkpoint-url", environment: ProcessInfo.processInfo.environment)
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let sink = audit.openCheckpointSink(client: client, clock: clock)
            let verdict = try await withAuditKeys { [clock] database, auditKeys in
                try await Self.verifyAuditChain(
                    in: database, keys: auditKeys, clock: clock, external: external, sink: sink, interval: audit.checkpointInterval)
            }
            try await client.shutdown()
            return verdict
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// ``verifyAuditChain(checkpointFile:checkpointURL:)`` on an open database with the audit keys (the console's button).
    static func verifyAuditChain(
        in database: Database, keys auditKeys: [String: SymmetricKey], clock: ServerClock, external: AuditCheckpoint? = nil,
        sink: (any AuditCheckpointSink)? = nil, interval: TimeInterval = 3600
    ) async throws -> AuditVerdict {
        // The sink is read first: a checkpoint made meanwhile is then in the database too (it goes there first).
        let sinkNames = try await sink?.names()
        var verdict = try await AuditLog(database: database, clock: clock).verify(keys: auditKeys)
        var fromSink: AuditCheckpoint?
        if let sink, let newest = sinkNames?.last, verdict.firstBreak == nil {
            // Listed but gone or not a checkpoint: the sink was tampered with (it is never rewritten).
            let document = try await sink.document(named: newest)
            fromSink = try? document.map { try AuditCheckpoint.decoder.decode(AuditCheckpoint.self, from: $0) }
            if fromSink == nil {
                verdict.firstBreak = .init(subject: nil, seq: 0, reason: "the newest checkpoint in \(sink) (\(newest)) is not a checkpoint")
            }
        }
        for checkpoint in [try await AuditCheckpoint.latest(in: database), external, fromSink].compactMap(\.self) where verdict.firstBreak == nil {
            verdict.firstBreak = try await checkpoint.firstBreak(in: database, keys: auditKeys)
            verdict.checkpoints += 1
        }
        let coverage = try await AuditCheckpointCoverage.read(
            from: database, sinkNames: sinkNames, sinkDescription: sink?.description ?? "", interval: interval)
        return AuditVerdict(
            entries: verdict.entries, chains: verdict.chains, digests: verdict.digests, unsigned: verdict.unsigned,
            checkpoints: verdict.checkpoints, firstBreak: verdict.firstBreak?.description, warnings: coverage.warnings
        )
    }

    /// Signs a checkpoint of every audit chain's head now and writes it to `path` (JSON), for storage the database's
    /// administrator cannot rewrite, and to the configured sink; returns how many chains it covers.
    package func writeAuditCheckpoint(to path: String) async throws -> Int {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let sink = configuration.audit.openCheckpointSink(client: client, clock: clock)
            let chains = try await withAuditKeys { database, auditKeys in
                guard let key = AuditKey.current(of: auditKeys) else { throw AuditCheckpointError.noAuditKey }
                let checkpoint = try await AuditCheckpoint.make(with: key, database: database, now: clock.now, sink: sink)
                try AuditCheckpoint.encoder.encode(checkpoint).write(to: URL(fileURLWithPath: path), options: .atomic)
                return checkpoint.chains
            }
            try await client.shutdown()
            return chains
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Runs `body` with the migrated database and the audit keys (unwrapped with the master key `serve` uses).
    private func withAuditKeys<Result: Sendable>(_ body: (Database, [String: SymmetricKey]) async throws -> Result) async throws -> Result {
        let masterKey = try MasterKey.load(for: configuration)
        return try await withDatabases { database, keystore in
            try await MigrationRunner.forServer(database: database, logger: logger).run()
            let keys = HealthKeyStore(database: keystore, clock: clock)
            try await keys.prepare()
            return try await body(database, try await AuditKey.load(from: keys, masterKey: masterKey, creating: false))
        }
    }

    /// Runs `body` with the data's database and the key store (the same one unless configured apart), closing both.
    private func withDatabases<Result: Sendable>(_ body: (Database, Database) async throws -> Result) async throws -> Result {
        let database = try await Database.open(configuration.database, logger: logger)
        var keystore = database
        do {
            if configuration.keystoreLocation != configuration.database { keystore = try await Database.open(configuration.keystoreLocation, logger: logger) }
            let result = try await body(database, keystore)
            if keystore !== database { try await keystore.shutdown() }
            try await database.shutdown()
            return result
        } catch {
            if keystore !== database { try? await keystore.shutdown() }
            try? await database.shutdown()
            throw error
        }
    }
}
