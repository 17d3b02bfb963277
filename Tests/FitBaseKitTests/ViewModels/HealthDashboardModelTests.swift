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

    @Test func withoutConsentItAsksForIt() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.consents, .recordConsent)
        fixture.fakes.health.knobs.implement(.series, .summaries)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.consentRequired && model.summaries.isEmpty)
        #expect(fixture.fakes.health.knobs.callCount(.summaries) == 0)
        await model.grantConsent()
        #expect(!model.consentRequired && model.summaries.count == 5)
    }

    @Test func summariesAndChartsPerRange() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.series, .summaries)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.range == .week && model.summaries.map(\.metric) == HealthSampleType.allCases && !model.isEmpty)
        #expect(model.series.count == 7 && model.selectedSummary?.unit == "bpm")
        await model.selectRange(.month)
        #expect(model.series.count == 6)
        await model.selectRange(.month)
        await model.selectRange(.day)
        #expect(model.series.count == 1)
        await model.selectMetric(.bloodPressure)
        #expect(model.selectedSummary?.secondaryAverage != nil)
        #expect(fixture.events == [.healthChartViewed(.bloodPressure)])
        #expect(fixture.events.allSatisfy { event in event.parameters.values.allSatisfy { Double($0) == nil } })
    }

    @Test func noSamplesIsTheEmptyState() async throws {
        let fixture = try await consentingFixture(.empty)
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.series, .summaries)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.isEmpty && model.series.allSatisfy { $0.value == nil })
    }

    @Test func offlineAndAFailedConsent() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.summaries)
        fixture.fakes.health.knobs.fail(.summaries, with: .offline)
        let model = HealthDashboardModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.error?.isOffline == true && !model.isLoading && !model.consentRequired)
        fixture.fakes.profile.knobs.fail(.recordConsent, with: .offline)
        await model.grantConsent()
        #expect(model.error?.isOffline == true)
        #expect(fixture.events.allSatisfy { $0.name == "operation_failed" })
    }

    @Test func aSlowRangeDoesNotOverwriteTheNext() async throws {
        let fixture = try await consentingFixture()
        fixture.fakes.profile.knobs.implement(.consents)
        fixture.fakes.health.knobs.implement(.series, .summaries)
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
}
