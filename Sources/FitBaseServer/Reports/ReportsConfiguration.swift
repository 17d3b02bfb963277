import Foundation

/// App reports (`POST /v1/reports`): errors, crashes and traces.
///
/// | setting | environment | default |
/// |---|---|---|
/// | days reports are kept (a purge deletes older ones) | `FITBASE_REPORTS_RETENTION_DAYS` | `30` |
/// | batches one account may send per minute, counted by all instances together | `FITBASE_REPORTS_BATCHES_PER_MINUTE` | `20` |
/// | batches one client address may send per minute (signed in or not) | `FITBASE_REPORTS_ADDRESS_BATCHES_PER_MINUTE` | `60` |
/// | whether apps that are not signed in may report (`off`: 401) | `FITBASE_REPORTS_ANONYMOUS` | `on` |
/// | batches all callers that are not signed in may send per minute together, whatever their addresses | `FITBASE_REPORTS_ANONYMOUS_BATCHES_PER_MINUTE` | `120` |
/// | new names a day per dimension (operations, crash top frames, app versions); the rest count as `(other)` | `FITBASE_REPORTS_DISTINCT_PER_DAY` | `200` |
public struct ReportsConfiguration: Sendable, Equatable {
    public var retentionDays: Int
    public var batchesPerMinute: Int
    public var addressBatchesPerMinute: Int
    /// Whether a caller without an access token may send reports.
    public var acceptsAnonymous: Bool
    /// Batches of every anonymous caller together per minute: many addresses do not multiply the budget.
    public var anonymousBatchesPerMinute: Int
    /// Distinct names one dimension takes in a day (UTC, by receipt), decided in the database for every instance.
    public var distinctNamesPerDay: Int

    public init(
        retentionDays: Int = 30, batchesPerMinute: Int = 20, addressBatchesPerMinute: Int = 60, acceptsAnonymous: Bool = true,
        anonymousBatchesPerMinute: Int = 120, distinctNamesPerDay: Int = 200
    ) {
        self.retentionDays = retentionDays
        self.batchesPerMinute = batchesPerMinute
        self.addressBatchesPerMinute = addressBatchesPerMinute
        self.acceptsAnonymous = acceptsAnonymous
        self.anonymousBatchesPerMinute = anonymousBatchesPerMinute
        self.distinctNamesPerDay = distinctNamesPerDay
    }

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> ReportsConfiguration {
        var configuration = ReportsConfiguration()
        func number(_ variable: String, setting: String, range: ClosedRange<Int>, expected: String) throws(ConfigurationError) -> Int? {
            guard let text = environment[variable] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
                throw ConfigurationError(setting: setting, source: variable, value: text, expected: expected)
            }
            return value
        }
        if let days = try number("FITBASE_REPORTS_RETENTION_DAYS", setting: "reports-retention-days", range: 1...3_650, expected: "a number of days from 1 to 3650") {
            configuration.retentionDays = days
        }
        if let batches = try number("FITBASE_REPORTS_BATCHES_PER_MINUTE", setting: "reports-batches-per-minute", range: 1...100_000, expected: "a number from 1 to 100000") {
            configuration.batchesPerMinute = batches
        }
        if let batches = try number(
            "FITBASE_REPORTS_ADDRESS_BATCHES_PER_MINUTE", setting: "reports-address-batches-per-minute", range: 1...100_000, expected: "a number from 1 to 100000")
        {
            configuration.addressBatchesPerMinute = batches
        }
        if let text = environment["FITBASE_REPORTS_ANONYMOUS"] {
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "on": configuration.acceptsAnonymous = true
            case "off": configuration.acceptsAnonymous = false
            default:
                throw ConfigurationError(setting: "reports-anonymous", source: "FITBASE_REPORTS_ANONYMOUS", value: text, expected: "on or off")
            }
        }
        if let batches = try number(
            "FITBASE_REPORTS_ANONYMOUS_BATCHES_PER_MINUTE", setting: "reports-anonymous-batches-per-minute", range: 1...100_000,
            expected: "a number from 1 to 100000")
        {
            configuration.anonymousBatchesPerMinute = batches
        }
        if let names = try number(
            "FITBASE_REPORTS_DISTINCT_PER_DAY", setting: "reports-distinct-per-day", range: 1...100_000, expected: "a number from 1 to 100000")
        {
            configuration.distinctNamesPerDay = names
        }
        return configuration
    }
}
