import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``HealthService`` summarising canned samples (or none) with Core's ``HealthSummarizer``, as the server
/// does, and uploading from a ``FakeHealthKitSource`` when given one.
///
/// It does not check the health-data consent: fail ``Operation/uploadHealthKitSamples`` with a `consent_required`
/// error to show that state.
public actor FakeHealthService: HealthService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case overview, uploadHealthKitSamples
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeHealthService")
    private let clock: any KitClock
    private let timeZone: TimeZone
    private let healthKit: FakeHealthKitSource?
    private var samples: [HealthSample]
    private var anchors: [HealthSampleType: HealthKitAnchor] = [:]

    /// A fake over `samples`, uploading from `healthKit` when given.
    public init(samples: [HealthSample] = [], healthKit: FakeHealthKitSource? = nil, timeZone: TimeZone = .gmt, clock: any KitClock = SystemKitClock()) {
        self.samples = samples
        self.healthKit = healthKit
        self.timeZone = timeZone
        self.clock = clock
    }

    /// Adds samples (as an upload would).
    public func add(_ new: [HealthSample]) {
        samples.append(contentsOf: new)
    }

    public func overview(from: Date, to: Date) async throws(KitError) -> HealthOverview {
        try await knobs.enter(.overview, clock: clock)
        guard from < to else { throw KitError(.invalidInput, fieldErrors: ["from": "must be before to"]) }
        var days: [HealthSampleType: [HealthSummaryBucket]] = [:]
        var latest: [HealthSampleType: HealthSample] = [:]
        for metric in HealthSampleType.allCases {
            let ofMetric = samples.filter { $0.type == metric }
            days[metric] = HealthSummarizer.summarize(ofMetric, type: metric, bucket: .day, timeZone: timeZone, from: from, to: to)
            latest[metric] = ofMetric.max { $0.start < $1.start }
        }
        return HealthOverview(from: from, to: to, timeZone: timeZone, days: days, latest: latest)
    }

    public nonisolated var uploadsHealthKit: Bool { healthKit != nil }

    /// Reads the source type by type in batches of ``HealthUploadBatch/maximumCount`` from the anchors of the last
    /// upload; a sample whose id the fake holds already counts as uploaded again, not added twice.
    public func uploadHealthKitSamples(progress: @escaping @MainActor @Sendable (HealthUploadProgress) -> Void) async -> HealthUploadProgress {
        var current = HealthUploadProgress(phase: .uploading(HealthSampleType.allCases[0]))
        await progress(current)
        do throws(KitError) {
            try await knobs.enter(.uploadHealthKitSamples, clock: clock)
        } catch {
            current.phase = HealthUploadProgress.phase(stoppedBy: error)
            await progress(current)
            return current
        }
        guard let healthKit else {
            current.phase = .upToDate
            await progress(current)
            return current
        }
        for metric in HealthSampleType.allCases {
            current.phase = .uploading(metric)
            await progress(current)
            var more = true
            while more {
                let changes: HealthKitChanges
                do {
                    changes = try await healthKit.samples(of: metric, after: anchors[metric], limit: HealthUploadBatch.maximumCount)
                } catch {
                    current.phase = .healthKitUnavailable
                    await progress(current)
                    return current
                }
                let known = Set(samples.map(\.id))
                samples += changes.samples.filter { !known.contains($0.id) }
                current.uploaded += changes.samples.count
                anchors[metric] = changes.anchor
                more = changes.hasMore
            }
            current.completedMetrics += 1
        }
        current.phase = .upToDate
        await progress(current)
        return current
    }
}
