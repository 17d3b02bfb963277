#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fixed 15-minute slots of UTC time (slot `n` covers `[n × 900 s, (n + 1) × 900 s)` after 1970-01-01T00:00Z).
///
/// Every time zone in use today is offset from UTC by a multiple of 15 minutes and changes its clocks on such a
/// boundary, so a day or week in any of them is a whole number of slots; where an edge is not (a historical local
/// mean time, a range starting mid-slot), ``HealthSummaryPlan`` reads that slot's samples instead.
public enum HealthSlots {
    public static let seconds: Int64 = 900

    /// The slot `instant` lies in.
    public static func slot(of instant: Date) -> Int64 {
        Int64((instant.timeIntervalSince1970 / Double(seconds)).rounded(.down))
    }

    public static func start(of slot: Int64) -> Date {
        Date(timeIntervalSince1970: Double(slot * seconds))
    }
}

/// What the samples of one type that count by their start (``HealthSummarizer/countsByStart(_:start:end:)``) and
/// start in one slot add up to: enough to merge into any bucket that holds the whole slot.
public struct HealthSlotTotals: Sendable, Equatable {
    public var sampleCount = 0
    public var value = HealthRunningStatistic()
    public var systolic = HealthRunningStatistic()
    public var diastolic = HealthRunningStatistic()
    public var sum = 0.0

    public init() {}

    public var isEmpty: Bool { sampleCount == 0 }

    /// Adds a sample if it counts by its start; returns whether it did.
    @discardableResult
    public mutating func add(_ sample: HealthValue, start: Date, end: Date?) -> Bool {
        guard HealthSummarizer.countsByStart(sample, start: start, end: end) else { return false }
        sampleCount += 1
        switch sample {
        case .heartRate(let number), .oxygenSaturation(let number): value.add(number)
        case .bloodPressure(let systolicValue, let diastolicValue):
            systolic.add(systolicValue)
            diastolic.add(diastolicValue)
        case .steps(let count): sum += count
        case .sleep: break
        }
        return true
    }

    public mutating func merge(_ other: HealthSlotTotals) {
        sampleCount += other.sampleCount
        value.merge(other.value)
        systolic.merge(other.systolic)
        diastolic.merge(other.diastolic)
        sum += other.sum
    }
}

/// Count, minimum, maximum and sum of a series of values.
public struct HealthRunningStatistic: Sendable, Equatable {
    public var count = 0
    public var min = Double.infinity
    public var max = -Double.infinity
    public var sum = 0.0

    public init() {}

    public init(count: Int, min: Double, max: Double, sum: Double) {
        (self.count, self.min, self.max, self.sum) = (count, min, max, sum)
    }

    public mutating func add(_ value: Double) {
        count += 1
        min = Swift.min(min, value)
        max = Swift.max(max, value)
        sum += value
    }

    public mutating func merge(_ other: HealthRunningStatistic) {
        count += other.count
        min = Swift.min(min, other.min)
        max = Swift.max(max, other.max)
        sum += other.sum
    }

    var statistic: HealthStatistic? {
        count == 0 ? nil : HealthStatistic(count: count, min: min, max: max, average: sum / Double(count))
    }
}
