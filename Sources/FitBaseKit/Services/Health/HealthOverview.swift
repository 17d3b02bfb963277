import FitBaseCore
import Foundation

/// The five metrics per local day over a period, and each metric's newest reading: what the health dashboard shows,
/// from one answer of the server (or the fake's samples summarised by Core's ``HealthSummarizer``).
public struct HealthOverview: Sendable, Equatable {
    /// The period's start: the start of its first local day, usually.
    public var from: Date
    /// The period's end (excluded): now, usually.
    public var to: Date
    /// The user's time zone, whose local days the buckets are.
    public var timeZone: TimeZone
    /// Each metric's day buckets, oldest first; days without samples are left out.
    public var days: [HealthSampleType: [HealthSummaryBucket]]
    /// Each metric's newest sample, whatever its date (none for a metric never measured).
    public var latest: [HealthSampleType: HealthSample]

    /// An overview of the given parts.
    public init(from: Date, to: Date, timeZone: TimeZone, days: [HealthSampleType: [HealthSummaryBucket]], latest: [HealthSampleType: HealthSample]) {
        self.from = from
        self.to = to
        self.timeZone = timeZone
        self.days = days
        self.latest = latest
    }

    /// The five summaries, in `HealthSampleType.allCases` order.
    public var summaries: [HealthMetricSummary] { HealthSampleType.allCases.map(summary(of:)) }

    /// `metric`'s figures over the period: the sample-weighted average, minimum and maximum of readings; for steps and
    /// hours asleep the average, smallest and largest day.
    public func summary(of metric: HealthSampleType) -> HealthMetricSummary {
        let buckets = days[metric] ?? []
        let count = buckets.reduce(0) { $0 + $1.sampleCount }
        let unit = HealthMetricSummary.unit(of: metric)
        switch metric {
        case .steps, .sleep:
            let daily = buckets.compactMap { Self.figures(metric, $0).value }
            return HealthMetricSummary(
                metric: metric, sampleCount: count, average: daily.isEmpty ? nil : daily.reduce(0, +) / Double(daily.count), minimum: daily.min(),
                maximum: daily.max(), unit: unit)
        case .bloodPressure:
            let systolic = buckets.compactMap(\.systolic).reduce(nil, Self.merge)
            let diastolic = buckets.compactMap(\.diastolic).reduce(nil, Self.merge)
            return HealthMetricSummary(
                metric: metric, sampleCount: count, average: systolic?.average, minimum: systolic?.min, maximum: systolic?.max,
                secondaryAverage: diastolic?.average, unit: unit)
        case .heartRate, .oxygenSaturation:
            let values = buckets.compactMap(\.value).reduce(nil, Self.merge)
            return HealthMetricSummary(metric: metric, sampleCount: count, average: values?.average, minimum: values?.min, maximum: values?.max, unit: unit)
        }
    }

    /// A chart of `metric`: one point per local day (or per week starting Monday) of the period, `nil` where nothing was
    /// measured. Points carry the average with minimum and maximum; steps their total; sleep hours asleep; blood pressure
    /// the average systolic with the average diastolic as `low` and the highest systolic as `high`.
    public func series(_ metric: HealthSampleType, bucket: HealthBucket) -> [ChartPoint] {
        let buckets = bucket == .week ? HealthSummaryBucket.weeks(of: days[metric] ?? []) : days[metric] ?? []
        let byStart = Dictionary(buckets.map { ($0.start, $0) }, uniquingKeysWith: { first, _ in first })
        func key(_ day: CalendarDay) -> CalendarDay { bucket == .day ? day : WorkoutStreaks.weekStart(of: day) }
        var points: [ChartPoint] = []
        var day = key(CalendarDay(from, in: timeZone))
        let last = CalendarDay(max(from, to.addingTimeInterval(-1)), in: timeZone)
        while day <= last {
            if let found = byStart[day] {
                let figures = Self.figures(metric, found)
                points.append(ChartPoint(day: day, value: figures.value, low: figures.low, high: figures.high))
            } else {
                points.append(ChartPoint(day: day, value: nil))
            }
            day = day.adding(days: bucket == .day ? 1 : 7)
        }
        return points
    }

    /// A bucket's figure and range: the average with min and max; steps' sum; hours asleep; blood pressure's average
    /// systolic with the average diastolic as `low` and the highest systolic as `high`.
    private static func figures(_ metric: HealthSampleType, _ bucket: HealthSummaryBucket) -> (value: Double?, low: Double?, high: Double?) {
        switch metric {
        case .steps: (bucket.sum, nil, nil)
        case .sleep: (bucket.asleepSeconds.map { $0 / 3_600 }, nil, nil)
        case .bloodPressure: (bucket.systolic?.average, bucket.diastolic?.average, bucket.systolic?.max)
        case .heartRate, .oxygenSaturation: (bucket.value?.average, bucket.value?.min, bucket.value?.max)
        }
    }

    private static func merge(_ total: HealthStatistic?, _ next: HealthStatistic) -> HealthStatistic? {
        total.map { $0.merged(with: next) } ?? next
    }
}
