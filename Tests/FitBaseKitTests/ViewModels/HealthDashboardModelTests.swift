import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct HealthDashboardModelTests {
    private func consentingFixture(_ scenario: FakeScenario = .strict) async throws -> Fixture {
        let fixture = Fixture(scenario)
        fixture.fakes.profile.knobs.implement(.recordConsent)
        _ = try await fixture.fakes.profile.recordConsent(.healthData, version: "2026-01", granted: true)
        return fixture
    }

    /// A dashboard over the fixture's services but a health fake uploading from `source`.
    private func uploading(_ fixture: Fixture, from source: FakeHealthKitSource) -> (HealthDashboardModel, FakeHealthService) {
        let health = FakeHealthService(healthKit: source, timeZone: .gmt, clock: fixture.clock)
        var dependencies = fixture.dependencies
        dependencies.health = health
        return (HealthDashboardModel(dependencies: dependencies, timeZone: .gmt), health)
    }

    private func heartRates(_ count: Int, before now: Date) -> [HealthSample] {
        (0..<count).map { index in
            HealthSample(id: HealthSampleID(), value: .heartRate(beatsPerMinute: 60 + Double(index % 40)), start: now.addingTimeInterval(-Double(count - index) * 60), sourceId: "com.apple.health")
        }
    }

    @Test func withoutConsentItAsksForIt() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.consents, .recordConsent)
        fixture.fakes.health.knobs.implement(.overview)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.consentRequired && model.summaries.isEmpty)
        #expect(fixture.fakes.health.knobs.callCount(.overview) == 0)
        await model.grantConsent()
        #expect(!model.consentRequired && model.summaries.count == 5)
    }

    @Test func oneRequestPerRangeAndNoneForAnotherMetric() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.overview)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.range == .week && model.summaries.map(\.metric) == HealthSampleType.allCases && !model.isEmpty)
        #expect(model.series.count == 7 && model.selectedSummary?.unit == "bpm")
        #expect(fixture.fakes.health.knobs.callCount(.overview) == 1)
        // The newest reading of each metric: the canned data's last heart rate is yesterday's evening one.
        let newest = try #require(model.selectedLatest)
        #expect(newest.type == .heartRate && newest.start < fixture.clock.now && Set(model.latest.keys) == Set(HealthSampleType.allCases))
        await model.selectRange(.month)
        #expect(model.series.count == 6 && fixture.fakes.health.knobs.callCount(.overview) == 2)
        await model.selectRange(.month)
        await model.selectRange(.day)
        #expect(model.series.count == 1 && fixture.fakes.health.knobs.callCount(.overview) == 3)
        await model.selectRange(.week)
        await model.selectMetric(.bloodPressure)
        #expect(model.selectedSummary?.secondaryAverage != nil && model.selectedLatest?.type == .bloodPressure)
        #expect(model.series.count == 7 && model.series.allSatisfy { $0.value == nil || $0.low != nil })
        #expect(fixture.fakes.health.knobs.callCount(.overview) == 4)
        #expect(fixture.events == [.healthChartViewed(.bloodPressure)])
        #expect(fixture.events.allSatisfy { event in event.parameters.values.allSatisfy { Double($0) == nil } })
    }

    @Test func aMonthsChartIsItsDaysByWeek() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.overview)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.selectMetric(.steps)
        let days = model.series
        await model.selectRange(.month)
        let weeks = model.series
        // The last week's steps are the sum of its days' steps (the week's days all lie in both ranges).
        let lastWeek = try #require(weeks.last)
        let inLastWeek = days.filter { WorkoutStreaks.weekStart(of: $0.day) == lastWeek.day }.compactMap(\.value)
        if !inLastWeek.isEmpty, lastWeek.day >= days[0].day {
            #expect(abs((lastWeek.value ?? 0) - inLastWeek.reduce(0, +)) < 0.001)
        }
        #expect(weeks.allSatisfy { WorkoutStreaks.weekStart(of: $0.day) == $0.day })
    }

    @Test func noSamplesIsTheEmptyState() async throws {
        let fixture = try await consentingFixture(.empty)
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.overview)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.isEmpty && model.series.allSatisfy { $0.value == nil } && model.latest.isEmpty && model.selectedLatest == nil)
        // Without a HealthKit source there is nothing to upload.
        #expect(!model.canUploadFromHealthKit)
        await model.uploadFromHealthKit()
        #expect(model.upload == nil)
    }

    @Test func offlineAndAFailedConsent() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.overview)
        fixture.fakes.health.knobs.fail(.overview, with: .offline)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.error?.isOffline == true && !model.isLoading && !model.consentRequired)
        // Picking a metric before anything loaded loads.
        fixture.fakes.health.knobs.clearFailures()
        await model.selectMetric(.sleep)
        #expect(model.error == nil && model.series.count == 7 && fixture.fakes.health.knobs.callCount(.overview) == 2)
        fixture.fakes.profile.knobs.fail(.recordConsent, with: .offline)
        await model.grantConsent()
        #expect(model.error?.isOffline == true)
        #expect(fixture.events.filter { $0.name != "health_chart_viewed" }.allSatisfy { $0.name == "operation_failed" })
    }

    @Test func aSlowRangeDoesNotOverwriteTheNext() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.overview)
        fixture.fakes.health.knobs.latency = .seconds(1)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        let slow = Task { await model.selectRange(.month) }
        await fixture.clock.waitForSleepers()
        fixture.fakes.health.knobs.latency = .zero
        await model.selectRange(.day)
        fixture.clock.advance(by: .seconds(2))
        await slow.value
        #expect(model.range == .day && model.series.count == 1)
    }

    @Test func anUploadShowsItsProgressThenTheNewFigures() async throws {
        let fixture = try await consentingFixture(.empty)
        fixture.fakes.profile.knobs.implement(.consents)
        let source = FakeHealthKitSource(samples: heartRates(1_500, before: fixture.clock.now))
        let (model, health) = uploading(fixture, from: source)
        #expect(model.canUploadFromHealthKit)
        await model.load()
        #expect(model.isEmpty)
        health.knobs.latency = .seconds(1)
        let running = Task { await model.uploadFromHealthKit() }
        await fixture.clock.waitForSleepers()
        // Under way: the screen shows the first metric uploading, and a second tap starts nothing.
        #expect(model.upload?.phase == .uploading(.heartRate) && model.upload?.isUploading == true && model.upload?.fractionCompleted == 0)
        await model.uploadFromHealthKit()
        fixture.clock.advance(by: .seconds(1))
        // Then the figures load again (as slowly).
        await fixture.clock.waitForSleepers()
        health.knobs.latency = .zero
        fixture.clock.advance(by: .seconds(1))
        await running.value
        #expect(health.knobs.callCount(.uploadHealthKitSamples) == 1)
        let upload = try #require(model.upload)
        #expect(upload.phase == .upToDate && upload.uploaded == 1_500 && upload.fractionCompleted == 1 && !upload.isUploading)
        // Read in batches of at most 1,000, then once more to find nothing after the anchor.
        #expect(await source.reads[.heartRate] == 2)
        #expect(model.selectedSummary?.sampleCount == 1_500 && model.selectedLatest?.value == .heartRate(beatsPerMinute: 60 + Double(1_499 % 40)))
        #expect(health.knobs.callCount(.overview) == 2)

        // Anchored: the next upload sends only what HealthKit recorded since, and loads nothing when that is nothing.
        await model.uploadFromHealthKit()
        #expect(model.upload?.uploaded == 0 && health.knobs.callCount(.overview) == 2)
        await source.add(heartRates(3, before: fixture.clock.now))
        await model.uploadFromHealthKit()
        #expect(model.upload?.uploaded == 3 && model.selectedSummary?.sampleCount == 1_503 && health.knobs.callCount(.overview) == 3)
    }

    @Test func anUploadStopsWithoutConsentOrHealthKit() async throws {
        let fixture = try await consentingFixture(.empty)
        fixture.fakes.profile.knobs.implement(.consents)
        let source = FakeHealthKitSource(samples: heartRates(5, before: fixture.clock.now))
        let (model, health) = uploading(fixture, from: source)
        health.knobs.failOnce(.uploadHealthKitSamples, with: KitError(.forbidden, code: .consentRequired))
        await model.uploadFromHealthKit()
        #expect(model.upload?.phase == .consentRequired && model.consentRequired)
        // Consenting starts the stopped upload again.
        await model.grantConsent()
        #expect(!model.consentRequired && model.upload?.phase == .upToDate && model.upload?.uploaded == 5)
        await source.add(heartRates(2, before: fixture.clock.now))
        health.knobs.failOnce(.uploadHealthKitSamples, with: KitError(.conflict, code: .quotaExceeded))
        await model.uploadFromHealthKit()
        #expect(model.upload?.phase == .quotaExceeded)
        health.knobs.failOnce(.uploadHealthKitSamples, with: .offline)
        await model.uploadFromHealthKit()
        #expect(model.upload?.phase == .failed(.offline))
        struct Locked: Error {}
        await source.failReads(with: Locked())
        await model.uploadFromHealthKit()
        #expect(model.upload?.phase == .healthKitUnavailable && model.upload?.uploaded == 0)
        await source.failReads(with: nil)
        await model.uploadFromHealthKit()
        #expect(model.upload?.phase == .upToDate && model.upload?.uploaded == 2 && model.summaries.first?.sampleCount == 7)
        #expect(fixture.events.isEmpty)
    }
}
