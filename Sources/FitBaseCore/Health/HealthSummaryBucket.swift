#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Period length of summary buckets.
public enum HealthSummaryBucketSize: String, Sendable, Codable, CaseIterable {
    case day, week
}

/// Min/max/average/count of one measured quantity.
public struct HealthStatistic: Sendable, Equatable, Codable {
    /// How many samples were measured.
    public var count: Int
    /// The smallest value.
    public var min: Double
    /// The largest value.
    public var max: Double
    /// The plain mean of the values.
    public var average: Double

    /// A statistic from its parts.
    public init(count: Int, min: Double, max: Double, average: Double) {
        self.count = count
        self.min = min
        self.max = max
        self.average = average
    }

    /// The statistic of both series of values together: counts added, the average weighted by them.
    public func merged(with other: HealthStatistic) -> HealthStatistic {
        let count = count + other.count
        guard count > 0 else { return self }
        return HealthStatistic(
            count: count, min: Swift.min(min, other.min), max: Swift.max(max, other.max),
            average: (average * Double(self.count) + other.average * Double(other.count)) / Double(count))
    }
}

/// One bucket of a summary (local days of the user's time zone; weeks start on Monday).
public struct HealthSummaryBucket: Sendable, Equatable, Codable {
    /// The first local day of the bucket's period (even when `from` cuts the period short).
    public var start: CalendarDay
    /// Samples that fell, at least in part, into the bucket.
    public var sampleCount: Int
    /// Heart rate (count/min) or oxygen saturation (%).
    public var value: HealthStatistic?
    /// Blood pressure's upper number (mmHg).
    public var systolic: HealthStatistic?
    /// Blood pressure's lower number (mmHg).
    public var diastolic: HealthStatistic?
    /// Steps, with samples crossing the bucket's edges counted in proportion to their time inside.
    public var sum: Double?
    /// Sleep: seconds per stage, for every stage seen in the bucket.
    public var sleepSeconds: [SleepStage: Double]?
    /// Sleep: seconds in the asleep* stages together.
    public var asleepSeconds: Double?

    /// A bucket from its parts.
    public init(
        start: CalendarDay, sampleCount: Int, value: HealthStatistic? = nil, systolic: HealthStatistic? = nil,
        diastolic: HealthStatistic? = nil, sum: Double? = nil, sleepSeconds: [SleepStage: Double]? = nil,
        asleepSeconds: Double? = nil
    ) {
        self.start = start
        self.sampleCount = sampleCount
        self.value = value
        self.systolic = systolic
        self.diastolic = diastolic
        self.sum = sum
        self.sleepSeconds = sleepSeconds
        self.asleepSeconds = asleepSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case start, sampleCount, value, systolic, diastolic, sum, sleepSeconds, asleepSeconds
    }

    /// Decodes a bucket whose `start` is a `YYYY-MM-DD` string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .start)
        guard let start = CalendarDay(text) else {
            throw DecodingError.dataCorruptedError(forKey: .start, in: container, debugDescription: "not YYYY-MM-DD")
        }
        self.init(
            start: start, sampleCount: try container.decode(Int.self, forKey: .sampleCount),
            value: try container.decodeIfPresent(HealthStatistic.self, forKey: .value),
            systolic: try container.decodeIfPresent(HealthStatistic.self, forKey: .systolic),
            diastolic: try container.decodeIfPresent(HealthStatistic.self, forKey: .diastolic),
            sum: try container.decodeIfPresent(Double.self, forKey: .sum),
            sleepSeconds: try container.decodeIfPresent([SleepStage: Double].self, forKey: .sleepSeconds),
            asleepSeconds: try container.decodeIfPresent(Double.self, forKey: .asleepSeconds))
    }

    /// Encodes the bucket with `start` as a `YYYY-MM-DD` string, leaving out absent statistics.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start.description, forKey: .start)
        try container.encode(sampleCount, forKey: .sampleCount)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(systolic, forKey: .systolic)
        try container.encodeIfPresent(diastolic, forKey: .diastolic)
        try container.encodeIfPresent(sum, forKey: .sum)
        try container.encodeIfPresent(sleepSeconds, forKey: .sleepSeconds)
        try container.encodeIfPresent(asleepSeconds, forKey: .asleepSeconds)
    }
}

extension HealthSummaryBucket {
    /// Day buckets gathered into weeks starting on Monday, oldest first: what a summary with `week` buckets over the
    /// same whole local days holds, statistics merged by ``HealthStatistic/merged(with:)``, steps and seconds added.
    /// `sampleCount` adds the days' counts, so a sample spanning midnight counts once per day it touched.
    public static func weeks(of days: [HealthSummaryBucket]) -> [HealthSummaryBucket] {
        var weeks: [HealthSummaryBucket] = []
        for day in days.sorted(by: { $0.start < $1.start }) {
            let start = WorkoutStreaks.weekStart(of: day.start)
            if let last = weeks.last, last.start == start {
                weeks[weeks.count - 1] = last.adding(day)
            } else {
                var week = day
                week.start = start
                weeks.append(week)
            }
        }
        return weeks
    }

    /// This bucket with `other`'s samples added in.
    private func adding(_ other: HealthSummaryBucket) -> HealthSummaryBucket {
        func merge(_ one: HealthStatistic?, _ two: HealthStatistic?) -> HealthStatistic? {
            guard let one else { return two }
            return two.map(one.merged(with:)) ?? one
        }
        func add(_ one: Double?, _ two: Double?) -> Double? {
            one == nil && two == nil ? nil : (one ?? 0) + (two ?? 0)
        }
        var sleep = sleepSeconds
        if let more = other.sleepSeconds { sleep = (sleep ?? [:]).merging(more, uniquingKeysWith: +) }
        return HealthSummaryBucket(
            start: start, sampleCount: sampleCount + other.sampleCount, value: merge(value, other.value), systolic: merge(systolic, other.systolic),
            diastolic: merge(diastolic, other.diastolic), sum: add(sum, other.sum), sleepSeconds: sleep, asleepSeconds: add(asleepSeconds, other.asleepSeconds))
    }
}
