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

/// Health metrics (seed 003): the five metrics over a period and their newest readings, and the upload of what
/// HealthKit recorded. The values are the user's health data: they are never logged or sent to analytics.
public protocol HealthService: Sendable {
    /// The five metrics per local day of the user's time zone from `from` to `to`, and each metric's newest reading:
    /// one request, from which ``HealthOverview`` derives every summary card and chart.
    func overview(from: Date, to: Date) async throws(KitError) -> HealthOverview
    /// Whether the app reads HealthKit (a source was configured), so uploading from it makes sense.
    var uploadsHealthKit: Bool { get }
    /// Uploads what HealthKit recorded since the last upload, telling `progress` each step; returns where it ended
    /// (``HealthUploadProgress/Phase/upToDate``, or why it stopped). Resumes where an interrupted upload stopped.
    func uploadHealthKitSamples(progress: @escaping @MainActor @Sendable (HealthUploadProgress) -> Void) async -> HealthUploadProgress
}

/// Where an upload from HealthKit is, and what the server did with what it sent.
public struct HealthUploadProgress: Sendable, Equatable {
    /// What the upload is doing.
    public enum Phase: Sendable, Equatable {
        /// Not started.
        case idle
        /// Reading and sending this metric's samples.
        case uploading(HealthSampleType)
        /// Reading and sending HealthKit's cycle data (ovulation tests, temperatures, menstrual flow), after the metrics:
        /// it becomes fertility signals and periods, so predictions improve without the user logging anything.
        case uploadingCycleData
        /// Everything HealthKit had is on the server.
        case upToDate
        /// The user has not consented to health data: ask, then upload again.
        case consentRequired
        /// The account holds as many samples as it may: nothing more is uploaded.
        case quotaExceeded
        /// HealthKit could not be read (access not allowed, the device locked).
        case healthKitUnavailable
        /// The upload stopped on this failure (offline, signed out …); the next upload resumes.
        case failed(KitError)
    }

    /// What the upload is doing, or why it stopped.
    public var phase: Phase
    /// Samples the server has from this upload: new ones and ones it already had (sent again after an interruption).
    public var uploaded: Int
    /// Samples the server refused as impossible values (they are not sent again).
    public var rejected: Int
    /// How many of the five metrics are done.
    public var completedMetrics: Int

    /// Progress of the given parts.
    public init(phase: Phase = .idle, uploaded: Int = 0, rejected: Int = 0, completedMetrics: Int = 0) {
        self.phase = phase
        self.uploaded = uploaded
        self.rejected = rejected
        self.completedMetrics = completedMetrics
    }

    /// The share of the five metrics done, 0 to 1 (for a progress bar).
    public var fractionCompleted: Double { Double(completedMetrics) / Double(HealthSampleType.allCases.count) }
    /// Whether the upload is under way.
    public var isUploading: Bool {
        switch phase {
        case .uploading, .uploadingCycleData: true
        default: false
        }
    }

    /// The phase an upload stopped by `error` ends in: the server's `consent_required` and `quota_exceeded` have their
    /// own.
    static func phase(stoppedBy error: KitError) -> Phase {
        switch error.code {
        case .consentRequired: .consentRequired
        case .quotaExceeded: .quotaExceeded
        default: .failed(error)
        }
    }
}
