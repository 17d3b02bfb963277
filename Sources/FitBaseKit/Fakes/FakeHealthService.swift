import FitBaseCore
import Foundation

/// An in-memory ``HealthService`` summarising canned samples (or none) per metric and bucket.
public actor FakeHealthService: HealthService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case summaries, series
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeHealthService")
    private let clock: any KitClock
    private let timeZone: TimeZone
    private var samples: [HealthSample]

    /// A fake over `samples`.
    public init(samples: [HealthSample] = [], timeZone: TimeZone = .gmt, clock: any KitClock = SystemKitClock()) {
        self.samples = samples
        self.timeZone = timeZone
        self.clock = clock
    }

    /// Adds samples (as a HealthKit import would).
    public func add(_ new: [HealthSample]) {
        samples.append(contentsOf: new)
    }

    public func summaries(days: Int) async throws(KitError) -> [HealthMetricSummary] {
        try await knobs.enter(.summaries, clock: clock)
        guard days > 0 else { throw KitError(.invalidInput, fieldErrors: ["days": "must be at least 1"]) }
        let from = clock.now.addingTimeInterval(-Double(days) * 86_400)
        let recent = samples.filter { $0.start >= from && $0.start <= clock.now }
        return HealthSampleType.allCases.map { metric in HealthFigures.summary(of: metric, recent.filter { $0.type == metric }, timeZone: timeZone) }
    }

    public func series(_ metric: HealthSampleType, bucket: HealthBucket, from: Date, to: Date) async throws(KitError) -> [ChartPoint] {
        try await knobs.enter(.series, clock: clock)
        guard from < to else { throw KitError(.invalidInput, fieldErrors: ["from": "must be before to"]) }
        let chosen = samples.filter { $0.type == metric && $0.start >= from && $0.start < to }
        return HealthFigures.series(metric, chosen, bucket: bucket, from: from, to: to, timeZone: timeZone)
    }
}

/// Per-metric figures of samples: what a summary card and a chart show.
enum HealthFigures {
    /// The figure a sample contributes: the reading (heart rate, SpO2, systolic), the step count, hours asleep.
    private static func reading(_ sample: HealthSample) -> Double? {
        switch sample.value {
        case .heartRate(let bpm): bpm
        case .steps(let count): count
        case .oxygenSaturation(let percent): percent
        case .bloodPressure(let systolic, _): systolic
        case .sleep(let stage): stage.isAsleep ? (sample.end ?? sample.start).timeIntervalSince(sample.start) / 3_600 : nil
        }
    }

    private static func diastolic(_ sample: HealthSample) -> Double? {
        if case .bloodPressure(_, let diastolic) = sample.value { return diastolic }
        return nil
    }

    /// Steps and sleep add up per day; the others are averaged per reading.
    private static func isDailyTotal(_ metric: HealthSampleType) -> Bool { metric == .steps || metric == .sleep }

    static func summary(of metric: HealthSampleType, _ samples: [HealthSample], timeZone: TimeZone) -> HealthMetricSummary {
        var values: [Double]
        if isDailyTotal(metric) {
            var perDay: [CalendarDay: Double] = [:]
            for sample in samples {
                guard let value = reading(sample) else { continue }
                perDay[CalendarDay(sample.end ?? sample.start, in: timeZone), default: 0] += value
            }
            values = Array(perDay.values)
        } else {
            values = samples.compactMap(reading)
        }
        let diastolics = samples.compactMap(diastolic)
        return HealthMetricSummary(
            metric: metric, sampleCount: samples.count, average: average(values), minimum: values.min(), maximum: values.max(),
            secondaryAverage: average(diastolics), unit: HealthMetricSummary.unit(of: metric)
        )
    }

    static func series(_ metric: HealthSampleType, _ samples: [HealthSample], bucket: HealthBucket, from: Date, to: Date, timeZone: TimeZone) -> [ChartPoint] {
        func key(_ day: CalendarDay) -> CalendarDay { bucket == .day ? day : WorkoutStreaks.weekStart(of: day) }
        var grouped: [CalendarDay: [HealthSample]] = [:]
        for sample in samples { grouped[key(CalendarDay(sample.end ?? sample.start, in: timeZone)), default: []].append(sample) }
        var points: [ChartPoint] = []
        var day = key(CalendarDay(from, in: timeZone))
        let last = CalendarDay(to.addingTimeInterval(-1), in: timeZone)
        while day <= last {
            let bucketSamples = grouped[day] ?? []
            if bucketSamples.isEmpty {
                points.append(ChartPoint(day: day, value: nil))
            } else if metric == .bloodPressure {
                let systolic = bucketSamples.compactMap(reading)
                points.append(ChartPoint(day: day, value: average(systolic), low: average(bucketSamples.compactMap(diastolic)), high: systolic.max()))
            } else if isDailyTotal(metric) {
                let summary = summary(of: metric, bucketSamples, timeZone: timeZone)
                points.append(ChartPoint(day: day, value: summary.average, low: summary.minimum, high: summary.maximum))
            } else {
                let values = bucketSamples.compactMap(reading)
                points.append(ChartPoint(day: day, value: average(values), low: values.min(), high: values.max()))
            }
            day = day.adding(days: bucket == .day ? 1 : 7)
        }
        return points
    }

    private static func average(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }
}
