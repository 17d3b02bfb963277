import FitBaseCore
import Foundation
import Hummingbird
import Logging
import SQLKit

/// The System page: engine, version, migrations applied, the settings in effect (secrets masked), the health-data key
/// store, the health audit chain's verification on demand, and the operator audit trail.
extension ConsoleFeature {
    func system(_ admin: ConsoleAdmin, verdict: [String: Any]?) async throws -> Response {
        let migrations = try await MigrationRunner.forServer(database: database, logger: logger).appliedNames()
        let known = FitBaseMigrations.all.map(\.name)
        let keys = try await vault.keys.masterKeyIDs()
        let trail = try await OperatorAuditTrail.recent(limit: 100, in: database)
        var values: [String: Any] = [
            "engine": database.engine == .postgres ? "PostgreSQL" : "SQLite", "version": Self.version(of: contractDocument),
            "migrationCount": migrations.count, "pending": known.filter { !migrations.contains($0) },
            "migrations": known.filter(migrations.contains).reversed().prefix(15).map { ["name": $0] },
            "settings": settings().map { ["name": $0.0, "value": $0.1] },
            "keystore": keystore == nil ? "in the data's database" : "a database of its own (\(Self.location(configuration.keystoreLocation)))",
            "masterKey": masterKeyID,
            "keyCounts": keys.sorted { $0.key < $1.key }.map { ["masterKey": $0.key, "count": $0.value, "current": $0.key == masterKeyID] },
            "trail": trail.map(Self.trailRow),
        ]
        if let verdict { values["verdict"] = verdict }
        return try renderer.page("system", title: "System", section: "/console/system", admin: admin, values)
    }

    /// Checks every health audit chain, its signed digests and checkpoints, as `fitbase audit verify` does.
    func verifyAudit(_ admin: ConsoleAdmin) async throws -> Response {
        let auditKeys = try await AuditKey.load(from: vault.keys, masterKey: masterKey, creating: false)
        let verdict = try await HealthAdministration.verifyAuditChain(in: database, keys: auditKeys, clock: clock)
        let now = clock.now
        let summary = verdict.firstBreak.map { "broken: \($0)" }
            ?? "intact: \(verdict.entries) entries in \(verdict.chains) chains, \(verdict.digests) signed digests, \(verdict.checkpoints) checkpoints"
        try await database.transaction { db in
            try await OperatorAuditTrail.record(.auditVerified, by: admin, target: "health-audit", "chains", detail: summary, now: now, on: db)
        }
        var shown: [String: Any] = ["intact": verdict.firstBreak == nil, "summary": summary]
        if verdict.unsigned > 0 { shown["unsigned"] = "\(verdict.unsigned)" }
        return try await system(admin, verdict: shown)
    }

    /// The settings in effect, as an operator would ask about them; a secret is shown only as set or not.
    func settings() -> [(String, String)] {
        func secret(_ value: String?) -> String { value.map { $0.isEmpty ? "not set" : "set (hidden)" } ?? "not set" }
        func list(_ values: [String]) -> String { values.isEmpty ? "none" : values.joined(separator: ", ") }
        let c = configuration
        return [
            ("Listening on", "\(c.host):\(c.port)"),
            ("Public URL", c.publicURL),
            ("Data directory", c.dataDirectory),
            ("Database", Self.location(c.database)),
            ("Key store", Self.location(c.keystoreLocation)),
            ("Master key (FITBASE_MASTER_KEY)", secret(c.identityProviders.masterKey)),
            ("Master key file", c.identityProviders.masterKeyFile ?? "the data directory's"),
            ("Log level", c.logLevel.rawValue),
            ("Largest request body", "\(c.maxBodyBytes) bytes"),
            ("Password hashing cost (bcrypt)", "\(c.bcryptCost)"),
            ("Demo catalog", c.loadsDemoCatalog ? "loaded when the catalog is empty" : "off"),
            ("App name", c.accounts.appName),
            ("Trusted proxies", list(c.accounts.trustedProxies)),
            ("SMTP", c.accounts.smtp == nil ? "not configured (mail is logged)" : "configured (credentials hidden)"),
            ("Sign in with Apple audiences", list(c.identityProviders.appleAudiences)),
            ("Apple private key file", c.identityProviders.applePrivateKeyFile == nil ? "not set" : "set (hidden)"),
            ("Google audiences", list(c.identityProviders.googleAudiences)),
            ("App Store bundle id", c.billing.appStoreBundleID ?? "not set"),
            ("App Store environment", c.billing.appStoreEnvironment),
            ("Stripe webhook secrets", c.billing.stripeWebhookSecrets.isEmpty ? "none" : "\(c.billing.stripeWebhookSecrets.count) set (hidden)"),
            ("Language model", c.languageModel.map { "\($0.model) at \($0.baseURL), API key \(secret($0.apiKey))" } ?? "off (rules only)"),
            ("Push (APNs)", c.apns == nil ? "not configured" : "configured (key hidden)"),
            ("Rate limits", c.rateLimits.isEnabled ? "on" : "off"),
        ]
    }

    static func location(_ location: DatabaseLocation) -> String {
        switch location {
        case .sqlite(let path): "SQLite \(path)"
        case .postgres(let url): ServerConfiguration.withoutPassword(url)
        }
    }

    /// The `info.version` of the contract this server answers.
    static func version(of document: Data) -> String {
        let text = String(decoding: document.prefix(4_096), as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("  version:") {
            return line.dropFirst("  version:".count).trimmingCharacters(in: .whitespaces)
        }
        return "unknown"
    }
}
