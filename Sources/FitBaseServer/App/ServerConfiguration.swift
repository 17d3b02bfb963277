import Foundation
import Logging

/// Everything `fitbase serve` needs to start, resolved from flags, then the environment, then local defaults.
///
/// | setting | flag | environment | default |
/// |---|---|---|---|
/// | host | `--host` | `FITBASE_HOST` | `127.0.0.1` |
/// | port | `--port` | `FITBASE_PORT` | `8080` (`0` picks a free port) |
/// | data directory | `--data-dir` | `FITBASE_DATA_DIR` | `./fitbase-data` |
/// | database | `--database-url` | `FITBASE_DATABASE_URL` | `sqlite://<data dir>/fitbase.sqlite` |
/// | log level | `--log-level` | `FITBASE_LOG_LEVEL` | `info` |
/// | public URL | `--public-url` | `FITBASE_PUBLIC_URL` | `http://<host>:<port>` |
/// | request body limit | `--max-body-bytes` | `FITBASE_MAX_BODY_BYTES` | `1048576` (1 MiB) |
/// | bcrypt cost | — | `FITBASE_BCRYPT_COST` | `12` (4–31; tests use 4) |
/// | load the demo catalog into an empty catalog | — | `FITBASE_DEMO_CATALOG` | `true` |
/// | key store of health data keys | — | `FITBASE_KEYSTORE_URL` | `<data dir>/keystore.sqlite` with SQLite; the database itself with PostgreSQL |
/// | health samples one account may store | — | `FITBASE_HEALTH_SAMPLE_QUOTA` | `2000000` |
///
/// Identity providers and the master key: ``IdentityProvidersConfiguration``; the language model behind
/// recommendations: ``LanguageModelConfiguration``; products, the App Store and Stripe: ``BillingConfiguration``;
/// request rate limits: ``RateLimitConfiguration``; media storage: ``MediaConfiguration``; `/metrics`:
/// ``MetricsConfiguration``; product analytics: ``AnalyticsConfiguration``; app reports: ``ReportsConfiguration``.
public struct ServerConfiguration: Sendable {
    /// Interface to bind.
    public var host: String
    /// TCP port; 0 lets the system choose (the chosen port is printed).
    public var port: Int
    /// Directory for the SQLite file and generated keys; created on start.
    public var dataDirectory: String
    /// SQLite file or PostgreSQL server.
    public var database: DatabaseLocation
    /// Minimum level logged.
    public var logLevel: Logger.Level
    /// The URL clients reach this server at (links in e-mails and invites are built on it).
    public var publicURL: String
    /// Largest request body accepted; larger bodies get 413.
    public var maxBodyBytes: Int
    /// bcrypt work factor for new password hashes (each step doubles the time).
    public var bcryptCost: UInt8
    /// Whether an empty catalog gets the demo workouts on start.
    public var loadsDemoCatalog: Bool
    /// Sign in with Apple, Google and the master key (environment only; see ``IdentityProvidersConfiguration``).
    public var identityProviders: IdentityProvidersConfiguration
    /// The language model that ranks recommendations; `nil` for rules only (environment only).
    public var languageModel: LanguageModelConfiguration?
    /// Products, App Store verification and Stripe webhooks (environment only).
    public var billing: BillingConfiguration
    /// Where health data keys are kept (wrapped), apart from the data; `nil` for the default.
    public var keystore: DatabaseLocation?
    /// Invite links and universal links (environment only).
    public var social: SocialConfiguration
    /// The app's name in e-mails, trusted proxies, password-hashing admission (environment only).
    public var accounts: AccountsConfiguration
    /// Requests per account and per client address in each class (environment only).
    public var rateLimits: RateLimitConfiguration
    /// Health samples one account may keep (`FITBASE_HEALTH_SAMPLE_QUOTA`); past it uploads are 409 `quota_exceeded`.
    public var healthSampleQuota = HealthSampleQuota.defaultLimit
    /// Where media lives and how long its links last (`FITBASE_STORAGE_URL`, …; see ``MediaConfiguration``).
    package var media = MediaConfiguration()
    /// Audit checkpoints: their external sink and schedule (`FITBASE_AUDIT_CHECKPOINT_*`; see ``AuditConfiguration``).
    package var audit = AuditConfiguration()
    /// `GET /metrics`: its bearer token and its own port (`FITBASE_METRICS_TOKEN`, `--metrics-port`).
    public var metrics = MetricsConfiguration()
    /// OpenTelemetry traces over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT` and the other standard variables).
    public var tracing = TracingConfiguration()
    /// Product analytics: retention and each account's batches per minute (`FITBASE_ANALYTICS_*`).
    public var analytics = AnalyticsConfiguration()
    /// App reports: retention and batches per minute per account and per address (`FITBASE_REPORTS_*`).
    public var reports = ReportsConfiguration()
    /// Apple Push Notification service (`FITBASE_APNS_*`); `nil` logs pushes instead of sending them.
    package var apns: APNsConfiguration? = nil
    /// How long a connection may sit without sending a request (or the rest of one) before it is closed: a client
    /// that opens connections and never finishes a request holds nothing for long. Streams being answered are not idle.
    package var httpIdleTimeout: Duration = .seconds(60)
    /// How often each instance checks its open event streams' sessions in the database (a stream whose session ended
    /// without the event reaching this instance still ends); tests shorten it.
    package var streamSessionCheck: Duration = .seconds(30)
    /// When housekeeping (retention purges, the sweep of accounts never verified) first runs after start, and how
    /// often after that; tests shorten it.
    package var housekeeping: (first: Duration, interval: Duration) = (.seconds(600), .seconds(6 * 3600))
    /// How often each instance queues the reminders that are due; `nil`: never, the reminder service does not run (tests
    /// that run a scheduler of their own at the instants they choose).
    package var reminderInterval: Duration? = .seconds(60)

    /// Values as given on the command line; `nil` means "not given".
    public struct Overrides: Sendable {
        public var host: String?
        public var port: String?
        public var dataDirectory: String?
        public var databaseURL: String?
        public var logLevel: String?
        public var publicURL: String?
        public var maxBodyBytes: String?
        public var metricsPort: String?

        public init(
            host: String? = nil, port: String? = nil, dataDirectory: String? = nil, databaseURL: String? = nil,
            logLevel: String? = nil, publicURL: String? = nil, maxBodyBytes: String? = nil, metricsPort: String? = nil
        ) {
            self.host = host
            self.port = port
            self.dataDirectory = dataDirectory
            self.databaseURL = databaseURL
            self.logLevel = logLevel
            self.publicURL = publicURL
            self.maxBodyBytes = maxBodyBytes
            self.metricsPort = metricsPort
        }
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        dataDirectory: String = "./fitbase-data",
        database: DatabaseLocation? = nil,
        logLevel: Logger.Level = .info,
        publicURL: String? = nil,
        maxBodyBytes: Int = 1 << 20,
        bcryptCost: UInt8 = 12,
        loadsDemoCatalog: Bool = true,
        identityProviders: IdentityProvidersConfiguration = .init(),
        languageModel: LanguageModelConfiguration? = nil,
        billing: BillingConfiguration = .init(),
        keystore: DatabaseLocation? = nil,
        social: SocialConfiguration = .init(),
        accounts: AccountsConfiguration = .init(),
        rateLimits: RateLimitConfiguration = .defaults
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.database = database ?? .sqlite(path: Self.defaultDatabasePath(in: dataDirectory))
        self.logLevel = logLevel
        self.publicURL = publicURL ?? "http://\(host):\(port)"
        self.maxBodyBytes = maxBodyBytes
        self.bcryptCost = bcryptCost
        self.loadsDemoCatalog = loadsDemoCatalog
        self.identityProviders = identityProviders
        self.languageModel = languageModel
        self.billing = billing
        self.keystore = keystore
        self.social = social
        self.accounts = accounts
        self.rateLimits = rateLimits
    }

    /// Resolves flags over `FITBASE_*` environment variables over defaults, validating every value.
    public static func resolve(
        flags: Overrides = .init(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> ServerConfiguration {
        func value(_ flag: String?, _ variable: String) -> Setting? {
            if let flag { return Setting(text: flag, source: "--\(Self.flagName(variable))") }
            if let env = environment[variable] { return Setting(text: env, source: variable) }
            return nil
        }

        var host = "127.0.0.1"
        if let setting = value(flags.host, "FITBASE_HOST") {
            let text = setting.text.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0 == "/" }) else {
                throw ConfigurationError(setting: "host", source: setting.source, value: setting.text, expected: "an IP address or host name")
            }
            host = text
        }

        var port = 8080
        if let setting = value(flags.port, "FITBASE_PORT") {
            guard let parsed = Int(setting.text.trimmingCharacters(in: .whitespaces)), (0...65_535).contains(parsed) else {
                throw ConfigurationError(setting: "port", source: setting.source, value: setting.text, expected: "an integer from 0 to 65535")
            }
            port = parsed
        }

        var dataDirectory = "./fitbase-data"
        if let setting = value(flags.dataDirectory, "FITBASE_DATA_DIR") {
            guard !setting.text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ConfigurationError(setting: "data-dir", source: setting.source, value: setting.text, expected: "a directory path")
            }
            dataDirectory = setting.text
        }

        var database: DatabaseLocation? = nil
        if let setting = value(flags.databaseURL, "FITBASE_DATABASE_URL") {
            guard let parsed = DatabaseLocation(parsing: setting.text) else {
                throw ConfigurationError(
                    setting: "database-url", source: setting.source, value: Self.withoutPassword(setting.text),
                    expected: "sqlite:///path/file.sqlite, a file path, or postgres://user:password@host:port/database"
                )
            }
            database = parsed
        }

        var logLevel = Logger.Level.info
        if let setting = value(flags.logLevel, "FITBASE_LOG_LEVEL") {
            guard let parsed = Logger.Level(rawValue: setting.text.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw ConfigurationError(
                    setting: "log-level", source: setting.source, value: setting.text,
                    expected: "one of trace, debug, info, notice, warning, error, critical"
                )
            }
            logLevel = parsed
        }

        var publicURL: String? = nil
        if let setting = value(flags.publicURL, "FITBASE_PUBLIC_URL") {
            let text = setting.text.trimmingCharacters(in: .whitespaces)
            guard let components = URLComponents(string: text), ["http", "https"].contains(components.scheme?.lowercased()),
                components.host?.isEmpty == false, components.query == nil, components.fragment == nil
            else {
                throw ConfigurationError(setting: "public-url", source: setting.source, value: setting.text, expected: "an absolute http(s) URL such as https://api.example.com")
            }
            publicURL = text.hasSuffix("/") ? String(text.dropLast()) : text
        }

        var maxBodyBytes = 1 << 20
        if let setting = value(flags.maxBodyBytes, "FITBASE_MAX_BODY_BYTES") {
            guard let parsed = Int(setting.text.trimmingCharacters(in: .whitespaces)), parsed > 0 else {
                throw ConfigurationError(setting: "max-body-bytes", source: setting.source, value: setting.text, expected: "a positive number of bytes")
            }
            maxBodyBytes = parsed
        }

        var bcryptCost: UInt8 = 12
        if let text = environment["FITBASE_BCRYPT_COST"] {
            guard let parsed = UInt8(text.trimmingCharacters(in: .whitespaces)), (4...31).contains(parsed) else {
                throw ConfigurationError(setting: "bcrypt-cost", source: "FITBASE_BCRYPT_COST", value: text, expected: "an integer from 4 to 31")
            }
            bcryptCost = parsed
        }

        var loadsDemoCatalog = true
        if let text = environment["FITBASE_DEMO_CATALOG"] {
            guard let parsed = Bool(text.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw ConfigurationError(setting: "demo-catalog", source: "FITBASE_DEMO_CATALOG", value: text, expected: "true or false")
            }
            loadsDemoCatalog = parsed
        }

        var keystore: DatabaseLocation? = nil
        if let text = environment["FITBASE_KEYSTORE_URL"], !text.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let parsed = DatabaseLocation(parsing: text) else {
                throw ConfigurationError(
                    setting: "keystore-url", source: "FITBASE_KEYSTORE_URL", value: text,
                    expected: "sqlite:///path/keystore.sqlite, a file path, or postgres://user:password@host:port/database"
                )
            }
            keystore = parsed
        }

        var configuration = ServerConfiguration(
            host: host, port: port, dataDirectory: dataDirectory, database: database, logLevel: logLevel,
            publicURL: publicURL, maxBodyBytes: maxBodyBytes, bcryptCost: bcryptCost, loadsDemoCatalog: loadsDemoCatalog,
            identityProviders: try IdentityProvidersConfiguration.resolve(environment: environment),
            languageModel: try LanguageModelConfiguration.resolve(environment: environment),
            billing: try BillingConfiguration.resolve(environment: environment),
            keystore: keystore,
            social: try SocialConfiguration.resolve(environment: environment),
            accounts: try AccountsConfiguration.resolve(environment: environment),
            rateLimits: try RateLimitConfiguration.resolve(environment: environment)
        )
        configuration.apns = try APNsConfiguration(environment: environment)
        configuration.media = try MediaConfiguration.resolve(environment: environment)
        configuration.audit = try AuditConfiguration.resolve(environment: environment)
        configuration.metrics = try MetricsConfiguration.resolve(portFlag: flags.metricsPort, environment: environment)
        configuration.tracing = try TracingConfiguration.resolve(environment: environment)
        configuration.analytics = try AnalyticsConfiguration.resolve(environment: environment)
        configuration.reports = try ReportsConfiguration.resolve(environment: environment)
        if let metricsPort = configuration.metrics.port, metricsPort != 0, metricsPort == configuration.port {
            throw ConfigurationError(
                setting: "metrics-port", source: flags.metricsPort != nil ? "--metrics-port" : "FITBASE_METRICS_PORT", value: String(metricsPort),
                expected: "a port other than the API's (\(configuration.port)); leave it unset to serve /metrics on the API's port with FITBASE_METRICS_TOKEN"
            )
        }
        // E-mail carries sign-in and reset links: written to the log only on a machine nobody else reaches, or when told.
        if configuration.accounts.smtp == nil, !configuration.accounts.logsMail, !configuration.bindsLoopbackOnly {
            throw ConfigurationError(
                setting: "smtp-url", source: "FITBASE_SMTP_URL / FITBASE_MAIL", value: "unset on \(configuration.host)",
                expected: "an SMTP server (FITBASE_SMTP_URL, FITBASE_MAIL_FROM) for a server others can reach, or FITBASE_MAIL=log to write e-mail, links included, to the log"
            )
        }
        if let text = environment["FITBASE_HEALTH_SAMPLE_QUOTA"] {
            guard let quota = Int(text.trimmingCharacters(in: .whitespaces)), (1...1_000_000_000).contains(quota) else {
                throw ConfigurationError(setting: "health-sample-quota", source: "FITBASE_HEALTH_SAMPLE_QUOTA", value: text, expected: "a number of samples from 1 to 1000000000")
            }
            configuration.healthSampleQuota = quota
        }
        return configuration
    }

    /// Where health data keys live: the configured key store, else a SQLite file beside the data (`keystore.sqlite`)
    /// when the data is in SQLite, else the PostgreSQL database itself (set `FITBASE_KEYSTORE_URL` to a database
    /// backed up apart so that a backup of the data cannot be decrypted once a key is destroyed).
    public var keystoreLocation: DatabaseLocation {
        if let keystore { return keystore }
        if case .sqlite = database { return .sqlite(path: URL(fileURLWithPath: dataDirectory).appendingPathComponent("keystore.sqlite").path) }
        return database
    }

    /// The SQLite file used when no database URL is given.
    public static func defaultDatabasePath(in dataDirectory: String) -> String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("fitbase.sqlite").path
    }

    /// `FITBASE_MAX_BODY_BYTES` → `max-body-bytes`.
    private static func flagName(_ variable: String) -> String {
        switch variable {
        case "FITBASE_DATA_DIR": "data-dir"
        default: variable.dropFirst("FITBASE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
        }
    }

    private struct Setting {
        let text: String
        let source: String
    }
}

/// An invalid setting, reported at start-up as one line naming the setting and where it came from.
extension ServerConfiguration {
    /// `url` with the password of its user part replaced by `***` (a URL that names a database is echoed in errors and
    /// logs; its password never is), also when the URL does not parse.
    static func withoutPassword(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].lastIndex(of: "@") else { return url }
        let userInfo = url[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }

    /// Whether `host` is a loopback interface: only this machine can reach the server.
    var bindsLoopbackOnly: Bool {
        ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.")
    }
}

public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The setting's name as in `--help`, e.g. `port`.
    public let setting: String
    /// The flag or environment variable that supplied the value.
    public let source: String
    public let value: String
    public let expected: String

    public var description: String {
        "invalid \(setting) \"\(value)\" (from \(source)): expected \(expected)"
    }
}
