import FitBaseCore
import Foundation

/// The length of a health chart's buckets: Core's, as the server's summary takes it.
public typealias HealthBucket = HealthSummaryBucketSize

/// One metric's figures over a period, for a summary card. Values are in the metric's canonical unit (count/min,
/// steps, %, mmHg; hours asleep for sleep).
public struct HealthMetricSummary: Sendable, Equatable, Identifiable {
    public var metric: HealthSampleType
    /// Samples in the period.
    public var sampleCount: Int
    /// The headline figure: the average (heart rate, SpO2, systolic), the daily average (steps, hours asleep).
    public var average: Double?
    public var minimum: Double?
    public var maximum: Double?
    /// Blood pressure: the average diastolic value.
    public var secondaryAverage: Double?
    /// The unit to show beside the figures.
    public var unit: String

    public var id: HealthSampleType { metric }

    /// Makes a summary.
    public init(
        metric: HealthSampleType, sampleCount: Int, average: Double?, minimum: Double?, maximum: Double?, secondaryAverage: Double? = nil, unit: String
    ) {
        self.metric = metric
        self.sampleCount = sampleCount
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.secondaryAverage = secondaryAverage
        self.unit = unit
    }

    /// The unit shown for `metric`.
    public static func unit(of metric: HealthSampleType) -> String {
        switch metric {
        case .heartRate: "bpm"
        case .steps: "steps"
        case .sleep: "h"
        case .oxygenSaturation: "%"
        case .bloodPressure: "mmHg"
        }
    }
}

/// Health metrics (seed 003): the five metrics' summaries and chart series. The values are the user's health data:
/// they are never logged or sent to analytics.
public protocol HealthService: Sendable {
    /// The summary of each of the five metrics over the last `days` days, in `HealthSampleType.allCases` order.
    func summaries(days: Int) async throws(KitError) -> [HealthMetricSummary]
    /// A chart of `metric` from `from` to `to` in buckets of `bucket` (points carry average, minimum and maximum;
    /// blood pressure's `low`/`high` are diastolic/systolic).
    func series(_ metric: HealthSampleType, bucket: HealthBucket, from: Date, to: Date) async throws(KitError) -> [ChartPoint]
}
