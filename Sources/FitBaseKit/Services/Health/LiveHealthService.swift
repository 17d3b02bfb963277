import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``HealthService`` over ``getHealthOverview`` (the server decrypts, summarises in the user's time zone and audits)
/// and, when the app reads HealthKit, the SDK's ``HealthSampleUploader``. Values are never cached on the device (a
/// batch on its way is kept sealed until the server has it) nor passed to analytics.
public struct LiveHealthService: HealthService {
    let client: FitBaseClient
    let uploader: HealthSampleUploader?
    /// Where HealthKit uploads are timed (`health.upload`).
    var reporter: (any ReportingService)?

    init(client: FitBaseClient, uploader: HealthSampleUploader?, reporter: (any ReportingService)? = nil) {
        self.client = client
        self.uploader = uploader
        self.reporter = reporter
    }

    public func overview(from: Date, to: Date) async throws(KitError) -> HealthOverview {
        guard from < to else { throw KitError(.invalidInput, fieldErrors: ["from": "must be before to"]) }
        let client = self.client
        return try await kit { () async throws(FitBaseError) in
            let body = try await client.call {
                try await client.api.getHealthOverview(query: .init(from: from, to: to, bucket: .day)).ok.body.json
            }
            var days: [HealthSampleType: [HealthSummaryBucket]] = [:]
            for summary in body.summaries where days[summary._type] == nil {
                days[summary._type] = try ContractJSON.record([HealthSummaryBucket].self, from: summary.buckets)
            }
            let latest = try ContractJSON.record([HealthSample].self, from: body.latest)
            return HealthOverview(
                from: from, to: to, timeZone: TimeZone(identifier: body.timeZone) ?? .gmt, days: days,
                latest: Dictionary(latest.map { ($0.type, $0) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    public var uploadsHealthKit: Bool { uploader != nil }

    public func uploadHealthKitSamples(progress: @escaping @MainActor @Sendable (HealthUploadProgress) -> Void) async -> HealthUploadProgress {
        guard let uploader else { return HealthUploadProgress(phase: .upToDate) }
        let start = ContinuousClock.now
        let result = HealthUploadProgress(await uploader.run { step in await progress(HealthUploadProgress(step)) })
        reporter?.trace("health.upload", milliseconds: ReportedTime.milliseconds(since: start))
        return result
    }
}

extension HealthUploadProgress {
    /// The SDK uploader's progress as the app layer reports it.
    init(_ progress: HealthSampleUploader.Progress) {
        let phase: Phase =
            switch progress.state {
            case .idle: .idle
            case .uploading(let type): .uploading(type)
            case .uploadingCycle: .uploadingCycleData
            case .upToDate: .upToDate
            case .consentRequired: .consentRequired
            case .quotaExceeded: .quotaExceeded
            case .sourceFailed: .healthKitUnavailable
            case .failed(let error): .failed(KitError(error))
            }
        self.init(phase: phase, uploaded: progress.uploaded, rejected: progress.rejected, completedMetrics: progress.completedTypes.count)
    }
}
