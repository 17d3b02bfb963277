import Foundation

/// The kinds of request the rate limiter counts apart, each with its own allowance (see ``RequestClass/of(_:_:)``).
public enum RequestClass: String, Sendable, CaseIterable {
    /// Ordinary reads.
    case reads
    /// Every change: creates, updates, deletes, sync pushes, health uploads, sign-in and sign-up.
    case writes
    /// Reads that decrypt or scan much of an account: health samples and summaries, statistics, the export, the week's
    /// plan.
    case expensive
    /// Operations that may call the language model.
    case model
    /// What Apple and Stripe send (they prove themselves by signature, and have no account) and the readiness probe
    /// (which asks the database): counted per address only, generously.
    case external
}

/// Settings of the per-instance request rate limiter, from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_RATE_LIMITS` | `on` or `off` | `on` |
/// | `FITBASE_RATE_LIMIT_<CLASS>` | one account's allowance in a class (`READS`, `WRITES`, `EXPENSIVE`, `MODEL`, `EXTERNAL`), `<requests>/<period>` such as `120/60s`, `10/1m`, `1000/1h`, or `off` | see ``defaults`` |
/// | `FITBASE_RATE_LIMIT_<CLASS>_ADDRESS` | one client address's allowance in the class, same form | see ``defaults`` |
/// | `FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS` | sign-ups from one client address (IPv6: one /64), counted by all instances together in the database, same form | `20/1h` |
///
/// `120/60s` is a token bucket of 120 requests that refills at 120 per 60 seconds: a burst of 120, then 2 a second.
public struct RateLimitConfiguration: Sendable, Equatable {
    /// A bucket's size and how fast it refills: `capacity` requests per `seconds`.
    public struct Rate: Sendable, Equatable, CustomStringConvertible {
        public var capacity: Int
        public var seconds: Int

        public init(_ capacity: Int, per seconds: Int) {
            self.capacity = capacity
            self.seconds = seconds
        }

        public var description: String { "\(capacity)/\(seconds)s" }
    }

    /// A class's allowances; `nil` leaves that side unlimited.
    public struct Allowance: Sendable, Equatable {
        public var perUser: Rate?
        public var perAddress: Rate?

        public init(perUser: Rate?, perAddress: Rate?) {
            self.perUser = perUser
            self.perAddress = perAddress
        }
    }

    /// Whether requests are limited at all (`FITBASE_RATE_LIMITS=off` turns the limiter off).
    public var isEnabled: Bool
    public var reads: Allowance
    public var writes: Allowance
    public var expensive: Allowance
    public var model: Allowance
    public var external: Allowance = Self.externalDefault
    /// Password sign-ups one client address may make, counted across instances in the shared `rate_limits` table
    /// (fixed window); `nil`: unlimited. Each costs a bcrypt hash and a verification e-mail.
    public var signUpsPerAddress: Rate? = Rate(20, per: 3600)
    /// Buckets an instance keeps at most; past it, the least recently used are forgotten (they start full again).
    public var maxBuckets: Int

    /// The defaults, for real app clients: bursts an app makes when it opens or replays its offline queue pass, a
    /// loop does not. Addresses get ten times an account's allowance: a gym's Wi-Fi or a carrier's NAT puts many
    /// accounts behind one address.
    public static let defaults = RateLimitConfiguration(
        reads: Allowance(perUser: Rate(300, per: 60), perAddress: Rate(3000, per: 60)),
        writes: Allowance(perUser: Rate(120, per: 60), perAddress: Rate(1200, per: 60)),
        expensive: Allowance(perUser: Rate(30, per: 60), perAddress: Rate(300, per: 60)),
        model: Allowance(perUser: Rate(10, per: 60), perAddress: Rate(100, per: 60))
    )

    /// Apple's and Stripe's notifications and `/readyz`: no account, 600 a minute per address.
    public static let externalDefault = Allowance(perUser: nil, perAddress: Rate(600, per: 60))

    /// No limits (`FITBASE_RATE_LIMITS=off`).
    public static let off: RateLimitConfiguration = {
        var configuration = defaults
        configuration.isEnabled = false
        return configuration
    }()

    public init(
        isEnabled: Bool = true, reads: Allowance, writes: Allowance, expensive: Allowance, model: Allowance, maxBuckets: Int = 100_000
    ) {
        self.isEnabled = isEnabled
        self.reads = reads
        self.writes = writes
        self.expensive = expensive
        self.model = model
        self.maxBuckets = maxBuckets
    }

    /// The same allowance in every class.
    public static func uniform(_ allowance: Allowance) -> RateLimitConfiguration {
        RateLimitConfiguration(reads: allowance, writes: allowance, expensive: allowance, model: allowance)
    }

    public subscript(_ requestClass: RequestClass) -> Allowance {
        get {
            switch requestClass {
            case .reads: reads
            case .writes: writes
            case .expensive: expensive
            case .model: model
            case .external: external
            }
        }
        set {
            switch requestClass {
            case .reads: reads = newValue
            case .writes: writes = newValue
            case .expensive: expensive = newValue
            case .model: model = newValue
            case .external: external = newValue
            }
        }
    }

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> RateLimitConfiguration {
        var configuration = RateLimitConfiguration.defaults
        if let text = environment["FITBASE_RATE_LIMITS"] {
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "on", "true": configuration.isEnabled = true
            case "off", "false": configuration.isEnabled = false
            default: throw ConfigurationError(setting: "rate-limits", source: "FITBASE_RATE_LIMITS", value: text, expected: "on or off")
            }
        }
        if let text = environment["FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS"] {
            configuration.signUpsPerAddress = try rate(text, variable: "FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS")
        }
        for requestClass in RequestClass.allCases {
            let variable = "FITBASE_RATE_LIMIT_\(requestClass.rawValue.uppercased())"
            if let text = environment[variable] {
                configuration[requestClass].perUser = try rate(text, variable: variable)
            }
            if let text = environment[variable + "_ADDRESS"] {
                configuration[requestClass].perAddress = try rate(text, variable: variable + "_ADDRESS")
            }
        }
        return configuration
    }

    /// `120/60s`, `10/1m`, `1000/1h`, `5/30` (seconds) or `off`.
    private static func rate(_ text: String, variable: String) throws(ConfigurationError) -> Rate? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed == "off" { return nil }
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        let invalid = ConfigurationError(
            setting: variable.dropFirst("FITBASE_".count).lowercased().replacingOccurrences(of: "_", with: "-"), source: variable,
            value: text, expected: "<requests>/<period> such as 120/60s, 10/1m or 1000/1h (at most 1000000 requests, a period of 1s to 24h), or off"
        )
        guard parts.count == 2, let capacity = Int(parts[0].trimmingCharacters(in: .whitespaces)), (1...1_000_000).contains(capacity) else {
            throw invalid
        }
        var period = parts[1].trimmingCharacters(in: .whitespaces)
        var unit = 1
        switch period.last {
        case "s": period.removeLast()
        case "m": period.removeLast(); unit = 60
        case "h": period.removeLast(); unit = 3600
        default: break
        }
        guard let count = Int(period), count > 0, count <= 86_400 / unit else { throw invalid }
        return Rate(capacity, per: count * unit)
    }
}
