// Calendar arithmetic in a named time zone needs the time-zone database, which FoundationEssentials lacks on Linux.
import Foundation

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

/// Buckets samples of one type in a time zone.
///
/// Point samples (heart rate, oxygen saturation, blood pressure) belong to the bucket of their `start` and count when
/// `from ≤ start < to`. Steps and sleep are intervals: they are clipped to `[from, to)` and split at bucket edges by
/// real elapsed seconds, so a 25-hour day holds 25 hours. A zero-length steps sample counts wholly at its `start`;
/// a zero-length sleep sample counts nowhere. Bucket edges are computed once per summary; each sample is then placed
/// by binary search (with the previous sample's bucket tried first, so sorted input costs O(1) per sample).
public enum HealthSummarizer {
    /// Buckets covering [from, to) that contain at least one sample, oldest first.
    public static func summarize(
        _ samples: [HealthSample], type: HealthSampleType, bucket: HealthSummaryBucketSize, timeZone: TimeZone,
        from: Date, to: Date
    ) -> [HealthSummaryBucket] {
        summarize(samples, slotTotals: nil, type: type, bucket: bucket, timeZone: timeZone, from: from, to: to)
    }

    /// The same buckets, with the samples that count by their start (``countsByStart(_:start:end:)``) taken from
    /// per-slot totals wherever ``HealthSummaryPlan/usesTotals(of:)`` says so: there, `slotTotals` stands in for them
    /// and such samples in `samples` are passed over (a slot without totals held none). Everywhere else, and for every
    /// other sample, `samples` is used as in ``summarize(_:type:bucket:timeZone:from:to:)``, whose results these
    /// equal. `nil` totals: every sample is used.
    public static func summarize(
        _ samples: [HealthSample], slotTotals: [Int64: HealthSlotTotals]?, type: HealthSampleType,
        bucket: HealthSummaryBucketSize, timeZone: TimeZone, from: Date, to: Date
    ) -> [HealthSummaryBucket] {
        guard from < to else { return [] }
        let periods = BucketPeriods(size: bucket, timeZone: timeZone, from: from, to: to)
        let plan = slotTotals == nil ? HealthSummaryPlan(edges: []) : HealthSummaryPlan(edges: periods.edges)
        var totals = [BucketTotals](repeating: BucketTotals(), count: periods.startDays.count)
        var hint = 0
        for (slot, slotTotals) in slotTotals ?? [:] where plan.usesTotals(of: slot) {
            guard let index = periods.index(of: HealthSlots.start(of: slot).timeIntervalSinceReferenceDate, hint: &hint) else { continue }
            totals[index].add(slotTotals)
        }
        hint = 0
        for sample in samples where sample.type == type {
            if !plan.isEmpty, countsByStart(sample.value, start: sample.start, end: sample.end),
                plan.usesTotals(of: HealthSlots.slot(of: sample.start))
            {
                continue
            }
            let start = sample.start.timeIntervalSinceReferenceDate
            let end = sample.end?.timeIntervalSinceReferenceDate ?? start
            switch sample.value {
            case .heartRate(let number), .oxygenSaturation(let number):
                guard let index = periods.index(of: start, hint: &hint) else { continue }
                totals[index].sampleCount += 1
                totals[index].value.add(number)
            case .bloodPressure(let systolic, let diastolic):
                guard let index = periods.index(of: start, hint: &hint) else { continue }
                totals[index].sampleCount += 1
                totals[index].systolic.add(systolic)
                totals[index].diastolic.add(diastolic)
            case .steps(let count):
                guard end > start else {
                    guard let index = periods.index(of: start, hint: &hint) else { continue }
                    totals[index].sampleCount += 1
                    totals[index].sum += count
                    continue
                }
                periods.forEachOverlap(start: start, end: end, hint: &hint) { index, seconds in
                    totals[index].sampleCount += 1
                    totals[index].sum += count * seconds / (end - start)
                }
            case .sleep(let stage):
                periods.forEachOverlap(start: start, end: end, hint: &hint) { index, seconds in
                    totals[index].sampleCount += 1
                    totals[index].sleepSeconds[stage, default: 0] += seconds
                }
            }
        }
        return zip(periods.startDays, totals).compactMap { day, totals in
            totals.sampleCount == 0 ? nil : totals.bucket(start: day, type: type)
        }
    }

    /// Where a summary over [from, to) in `timeZone` can use slot totals, and where it needs samples one by one.
    public static func plan(bucket: HealthSummaryBucketSize, timeZone: TimeZone, from: Date, to: Date) -> HealthSummaryPlan {
        guard from < to else { return HealthSummaryPlan(edges: []) }
        return HealthSummaryPlan(edges: BucketPeriods(size: bucket, timeZone: timeZone, from: from, to: to).edges)
    }

    /// Whether a sample counts wholly in the bucket its `start` lies in — heart rate, oxygen saturation, blood
    /// pressure and zero-length steps — so that per-slot totals can stand in for it. Steps over an interval and sleep
    /// are split across buckets and never do.
    public static func countsByStart(_ value: HealthValue, start: Date, end: Date?) -> Bool {
        switch value {
        case .heartRate, .oxygenSaturation, .bloodPressure: true
        case .steps: (end ?? start) <= start
        case .sleep: false
        }
    }
}

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

/// Which 15-minute slots of a summary's range can be summed from slot totals: those inside `[from, to)` that no
/// bucket edge cuts. The samples of the other parts of the range (``sampleRanges``) are read one by one.
public struct HealthSummaryPlan: Sendable, Equatable {
    /// Slots that may use totals (those in ``excluded`` aside).
    public let slots: Range<Int64>
    /// Slots a bucket edge cuts.
    public let excluded: Set<Int64>
    /// The parts of `[from, to)` whose by-start samples are not in any used slot, as `[lower, upper)` pairs.
    public let sampleRanges: [(lower: Date, upper: Date)]

    var isEmpty: Bool { slots.isEmpty }

    public func usesTotals(of slot: Int64) -> Bool {
        slots.contains(slot) && !excluded.contains(slot)
    }

    /// `edges`: the buckets' edges, seconds since the reference date, first `from` and last `to`.
    init(edges: [TimeInterval]) {
        guard let first = edges.first, let last = edges.last, first < last else {
            (slots, excluded, sampleRanges) = (0..<0, [], [])
            return
        }
        let from = Date(timeIntervalSinceReferenceDate: first)
        let to = Date(timeIntervalSinceReferenceDate: last)
        let length = Double(HealthSlots.seconds)
        let lower = Int64((from.timeIntervalSince1970 / length).rounded(.up))
        let upper = Int64((to.timeIntervalSince1970 / length).rounded(.down))
        guard lower < upper else {
            (slots, excluded, sampleRanges) = (0..<0, [], [(from, to)])
            return
        }
        slots = lower..<upper
        var excluded: Set<Int64> = []
        for edge in edges.dropFirst().dropLast() {
            let instant = Date(timeIntervalSinceReferenceDate: edge)
            let slot = HealthSlots.slot(of: instant)
            if HealthSlots.start(of: slot) != instant, slots.contains(slot) { excluded.insert(slot) }
        }
        self.excluded = excluded
        var ranges: [(lower: Date, upper: Date)] = []
        if from < HealthSlots.start(of: lower) { ranges.append((from, HealthSlots.start(of: lower))) }
        for slot in excluded.sorted() { ranges.append((HealthSlots.start(of: slot), HealthSlots.start(of: slot + 1))) }
        if HealthSlots.start(of: upper) < to { ranges.append((HealthSlots.start(of: upper), to)) }
        sampleRanges = ranges
    }

    public static func == (left: HealthSummaryPlan, right: HealthSummaryPlan) -> Bool {
        left.slots == right.slots && left.excluded == right.excluded
            && left.sampleRanges.elementsEqual(right.sampleRanges) { $0.lower == $1.lower && $0.upper == $1.upper }
    }
}

/// The buckets' periods as instants: bucket `i` covers `[edges[i], edges[i + 1])`, the first edge being `from` and the
/// last `to`, so clipping to the requested range comes free.
private struct BucketPeriods {
    let startDays: [CalendarDay]
    let edges: [TimeInterval]

    init(size: HealthSummaryBucketSize, timeZone: TimeZone, from: Date, to: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: from)
        let fromDay = CalendarDay(year: parts.year!, month: parts.month!, day: parts.day!)!
        let step = size == .week ? 7 : 1
        var day = size == .week ? WorkoutStreaks.weekStart(of: fromDay) : fromDay
        var startDays = [day]
        var edges = [from.timeIntervalSinceReferenceDate]
        let last = to.timeIntervalSinceReferenceDate
        while true {
            day = day.adding(days: step)
            let (year, month, dayOfMonth) = day.components
            // Noon is never skipped by a clock change; the start of its day is midnight, or the first instant after a
            // skipped midnight. `max` keeps edges ordered even if a time zone drops a whole day.
            let noon = calendar.date(from: DateComponents(year: year, month: month, day: dayOfMonth, hour: 12))!
            let edge = calendar.startOfDay(for: noon).timeIntervalSinceReferenceDate
            guard edge < last else { break }
            startDays.append(day)
            edges.append(max(edge, edges[edges.count - 1]))
        }
        edges.append(last)
        self.startDays = startDays
        self.edges = edges
    }

    /// The bucket holding `instant`, nil outside `[from, to)`; `hint` is tried first and updated.
    func index(of instant: TimeInterval, hint: inout Int) -> Int? {
        guard instant >= edges[0], instant < edges[edges.count - 1] else { return nil }
        if edges[hint] <= instant, instant < edges[hint + 1] { return hint }
        // Largest i with edges[i] <= instant.
        var low = 0
        var high = startDays.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if edges[middle] <= instant { low = middle } else { high = middle - 1 }
        }
        hint = low
        return low
    }

    /// Calls `body` with each bucket that `[start, end)` overlaps and the seconds of the overlap.
    func forEachOverlap(
        start: TimeInterval, end: TimeInterval, hint: inout Int, _ body: (_ index: Int, _ seconds: TimeInterval) -> Void
    ) {
        let clippedStart = max(start, edges[0])
        let clippedEnd = min(end, edges[edges.count - 1])
        guard clippedStart < clippedEnd, var index = self.index(of: clippedStart, hint: &hint) else { return }
        while index < startDays.count, edges[index] < clippedEnd {
            let seconds = min(edges[index + 1], clippedEnd) - max(edges[index], clippedStart)
            if seconds > 0 { body(index, seconds) }
            index += 1
        }
    }
}

/// Running totals of one bucket.
private struct BucketTotals {
    var sampleCount = 0
    var value = HealthRunningStatistic()
    var systolic = HealthRunningStatistic()
    var diastolic = HealthRunningStatistic()
    var sum = 0.0
    var sleepSeconds: [SleepStage: Double] = [:]

    mutating func add(_ slot: HealthSlotTotals) {
        sampleCount += slot.sampleCount
        value.merge(slot.value)
        systolic.merge(slot.systolic)
        diastolic.merge(slot.diastolic)
        sum += slot.sum
    }

    func bucket(start: CalendarDay, type: HealthSampleType) -> HealthSummaryBucket {
        var bucket = HealthSummaryBucket(start: start, sampleCount: sampleCount)
        switch type {
        case .heartRate, .oxygenSaturation:
            bucket.value = value.statistic
        case .bloodPressure:
            bucket.systolic = systolic.statistic
            bucket.diastolic = diastolic.statistic
        case .steps:
            bucket.sum = sum
        case .sleep:
            bucket.sleepSeconds = sleepSeconds
            // Summed in declaration order, so the total does not depend on dictionary order.
            bucket.asleepSeconds = SleepStage.allCases.filter(\.isAsleep).reduce(0) { $0 + (sleepSeconds[$1] ?? 0) }
        }
        return bucket
    }
}

