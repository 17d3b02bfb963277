import Foundation

/// App reports (`POST /v1/reports`): errors, crashes and traces.
///
/// | setting | environment | default |
/// |---|---|---|
/// | days reports are kept (a purge deletes older ones) | `FITBASE_REPORTS_RETENTION_DAYS` | `30` |
/// | batches one account may send per minute, counted by all instances together | `FITBASE_REPORTS_BATCHES_PER_MINUTE` | `20` |
/// | batches one client address may send per minute (signed in or not) | `FITBASE_REPORTS_ADDRESS_BATCHES_PER_MINUTE` | `60` |
public struct ReportsConfiguration: Sendable, Equatable {
    public var retentionDays: Int
    public var batchesPerMinute: Int
    public var addressBatchesPerMinute: Int

    public init(retentionDays: Int = 30, batchesPerMinute: Int = 20, addressBatchesPerMinute: Int = 60) {
        self.retentionDays = retentionDays
        self.batchesPerMinute = batchesPerMinute
        self.addressBatchesPerMinute = addressBatchesPerMinute
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
        return configuration
    }
}
