import Foundation

/// Product analytics (`POST /v1/analytics/events`).
///
/// | setting | environment | default |
/// |---|---|---|
/// | days events are kept (a purge deletes older ones) | `FITBASE_ANALYTICS_RETENTION_DAYS` | `90` |
/// | batches one account may send per minute, counted by all instances together | `FITBASE_ANALYTICS_BATCHES_PER_MINUTE` | `30` |
public struct AnalyticsConfiguration: Sendable, Equatable {
    public var retentionDays: Int
    public var batchesPerMinute: Int

    public init(retentionDays: Int = 90, batchesPerMinute: Int = 30) {
        self.retentionDays = retentionDays
        self.batchesPerMinute = batchesPerMinute
    }

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> AnalyticsConfiguration {
        var configuration = AnalyticsConfiguration()
        if let text = environment["FITBASE_ANALYTICS_RETENTION_DAYS"] {
            guard let days = Int(text.trimmingCharacters(in: .whitespaces)), (1...3_650).contains(days) else {
                throw ConfigurationError(setting: "analytics-retention-days", source: "FITBASE_ANALYTICS_RETENTION_DAYS", value: text, expected: "a number of days from 1 to 3650")
            }
            configuration.retentionDays = days
        }
        if let text = environment["FITBASE_ANALYTICS_BATCHES_PER_MINUTE"] {
            guard let batches = Int(text.trimmingCharacters(in: .whitespaces)), (1...100_000).contains(batches) else {
                throw ConfigurationError(
                    setting: "analytics-batches-per-minute", source: "FITBASE_ANALYTICS_BATCHES_PER_MINUTE", value: text, expected: "a number from 1 to 100000"
                )
            }
            configuration.batchesPerMinute = batches
        }
        return configuration
    }
}
