// Calendar arithmetic in a named time zone needs the time-zone database, which FoundationEssentials lacks on Linux.
import Foundation

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
