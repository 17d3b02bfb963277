import FitBaseCore
import Foundation
import Observation

/// The health dashboard (seed 003): the five metrics' summaries, newest readings and the selected metric's chart over
/// a day, a week or a month — one request per range, none for another metric — and the upload of what HealthKit
/// recorded, with its progress. Health data shows only with the user's health-data consent; without it the screen asks
/// for it. The values never reach analytics — only which chart was opened.
@MainActor @Observable
public final class HealthDashboardModel {
    /// The period the dashboard covers.
    public enum Range: String, Sendable, Equatable, CaseIterable {
        case day, week, month

        /// Its length in days.
        public var days: Int {
            switch self {
            case .day: 1
            case .week: 7
            case .month: 30
            }
        }

        /// The chart's buckets.
        var bucket: HealthBucket { self == .month ? .week : .day }
    }

    /// The version of the health-data consent asked for.
    nonisolated public static let consentVersion = OnboardingModel.consentVersion

    public private(set) var range: Range = .week
    /// The metric whose chart shows.
    public private(set) var selectedMetric: HealthSampleType = .heartRate
    /// The five summaries, in `HealthSampleType.allCases` order.
    public private(set) var summaries: [HealthMetricSummary] = []
    /// The selected metric's chart.
    public private(set) var series: [ChartPoint] = []
    /// Each metric's newest reading, whatever its date.
    public private(set) var latest: [HealthSampleType: HealthSample] = [:]
    /// The HealthKit upload's progress: `nil` before the first upload.
    public private(set) var upload: HealthUploadProgress?
    /// The user has not consented to health data: show the consent request instead of the figures.
    public private(set) var consentRequired = false
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?

    private let health: any HealthService
    private let profiles: any ProfileService
    private let analytics: any AnalyticsService
    private let clock: any KitClock
    private let timeZone: TimeZone
    @ObservationIgnored private var generation = LoadGeneration()
    /// The figures shown, and the chart buckets of the range they were loaded for.
    @ObservationIgnored private var overview: (figures: HealthOverview, bucket: HealthBucket)?

    /// A model over the services of `dependencies`, its days counted in `timeZone`.
    public init(dependencies: FitBaseDependencies, timeZone: TimeZone = .current) {
        health = dependencies.health
        profiles = dependencies.profile
        analytics = dependencies.analytics
        clock = dependencies.clock
        self.timeZone = timeZone
    }

    /// Loaded, and no metric has a sample in the range.
    public var isEmpty: Bool { overview != nil && summaries.allSatisfy { $0.sampleCount == 0 } }
    /// The selected metric's summary.
    public var selectedSummary: HealthMetricSummary? { summaries.first { $0.metric == selectedMetric } }
    /// The selected metric's newest reading.
    public var selectedLatest: HealthSample? { latest[selectedMetric] }
    /// Whether the app reads HealthKit, so the screen offers to upload from it.
    public var canUploadFromHealthKit: Bool { health.uploadsHealthKit }

    /// Checks the consent, then loads the range's figures in one request (from the start of its first day to now).
    public func load() async {
        let ticket = generation.next()
        isLoading = true
        do throws(KitError) {
            let consents = try await profiles.consents()
            let granted = consents.contains { $0.kind == .healthData && $0.granted }
            guard generation.isCurrent(ticket) else { return }
            consentRequired = !granted
            if granted {
                let (now, range) = (clock.now, self.range)
                let from = CalendarDay(now, in: timeZone).adding(days: 1 - range.days).start(in: timeZone)
                let figures = try await health.overview(from: from, to: now)
                guard generation.isCurrent(ticket) else { return }
                overview = (figures, range.bucket)
                show()
            }
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
        isLoading = false
    }

    /// Records the user's health-data consent and loads the figures; an upload the missing consent stopped starts again.
    public func grantConsent() async {
        do throws(KitError) {
            _ = try await profiles.recordConsent(.healthData, version: Self.consentVersion, granted: true)
        } catch {
            return present(error)
        }
        await load()
        if upload?.phase == .consentRequired { await uploadFromHealthKit() }
    }

    /// Shows another range.
    public func selectRange(_ range: Range) async {
        guard range != self.range else { return }
        self.range = range
        await load()
    }

    /// Shows another metric's chart, from the figures already loaded (loading them first if there are none).
    public func selectMetric(_ metric: HealthSampleType) async {
        selectedMetric = metric
        analytics.track(.healthChartViewed(metric))
        if overview != nil {
            show()
        } else {
            await load()
        }
    }

    /// Uploads what HealthKit recorded since the last upload, showing its progress in ``upload``, then loads the
    /// figures again when anything new reached the server. Without the consent it stops and asks for it.
    public func uploadFromHealthKit() async {
        guard health.uploadsHealthKit, upload?.isUploading != true else { return }
        let outcome = await health.uploadHealthKitSamples { [weak self] progress in self?.upload = progress }
        upload = outcome
        switch outcome.phase {
        case .consentRequired: consentRequired = true
        case .upToDate where outcome.uploaded > 0: await load()
        default: break
        }
    }

    private func show() {
        guard let (figures, bucket) = overview else { return }
        summaries = figures.summaries
        series = figures.series(selectedMetric, bucket: bucket)
        latest = figures.latest
    }

    private func present(_ failure: KitError) {
        isLoading = false
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .health, reason: failure.kind))
    }
}
