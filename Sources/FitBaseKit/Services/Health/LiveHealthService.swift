import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``HealthService`` over `/v1/health/overview` (the server decrypts, summarises in the user's time zone and audits)
/// and, when the app reads HealthKit, the SDK's ``HealthSampleUploader``. Values are never cached on the device (a
/// batch on its way is kept sealed until the server has it) nor passed to analytics.
public struct LiveHealthService: HealthService {
    let api: ServerAPI
    let uploader: HealthSampleUploader?
    /// Where HealthKit uploads are timed (`health.upload`).
    var reporter: (any ReportingService)? = nil

    public func overview(from: Date, to: Date) async throws(KitError) -> HealthOverview {
        guard from < to else { throw KitError(.invalidInput, fieldErrors: ["from": "must be before to"]) }
        let body = try await api.get(
            OverviewBody.self, "/v1/health/overview",
            query: [
                URLQueryItem(name: "from", value: InternetDateTime.string(from: from)), URLQueryItem(name: "to", value: InternetDateTime.string(from: to)),
                URLQueryItem(name: "bucket", value: HealthBucket.day.rawValue),
            ],
            operationID: "getHealthOverview")
        return HealthOverview(
            from: from, to: to, timeZone: TimeZone(identifier: body.timeZone) ?? .gmt,
            days: Dictionary(body.summaries.map { ($0.type, $0.buckets) }, uniquingKeysWith: { first, _ in first }),
            latest: Dictionary(body.latest.map { ($0.type, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The body of `getHealthOverview`: the contract's `HealthOverview`, of Core's buckets and samples.
    private struct OverviewBody: Decodable {
        struct Summary: Decodable {
            var type: HealthSampleType
            var buckets: [HealthSummaryBucket]
        }

        var timeZone: String
        var summaries: [Summary]
        var latest: [HealthSample]
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
