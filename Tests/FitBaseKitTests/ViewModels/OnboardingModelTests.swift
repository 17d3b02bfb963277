import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct OnboardingModelTests {
    private func fillEveryStep(_ model: OnboardingModel, today: CalendarDay) async {
        model.profile.fitnessLevel = .beginner
        await model.next()
        model.profile.cycleTrackingEnabled = true
        model.lastPeriodStart = today.adding(days: -3)
        await model.next()
        model.profile.goals = [.consistency]
        model.profile.preferredWorkoutTypes = [.yoga]
        model.profile.availableEquipment = [.yogaMat]
        await model.next()
        model.profile.notificationsEnabled = true
        model.acceptsTerms = true
        model.acceptsPrivacy = true
        model.acceptsHealthData = true
    }

    @Test func eachStepIsCheckedAndFinishingSavesTheProfileAndConsents() async throws {
        let fixture = Fixture(.empty)
        fixture.fakes.profile.knobs.implement(.consents, .profile, .recordConsent, .saveProfile)
        let model = OnboardingModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        #expect(model.profile.displayName == "Ana" && model.step == .basics && !model.canGoBack)

        await model.next()
        #expect(model.step == .basics && model.fieldErrors.keys.sorted() == ["fitnessLevel"])
        let today = CalendarDay(fixture.clock.now, in: .gmt)
        await fillEveryStep(model, today: today)
        #expect(model.step == .notifications && model.isLastStep && model.progress == 1)

        await model.next()
        #expect(model.isCompleted && model.error == nil)
        let saved = try await fixture.fakes.profile.profile()
        #expect(saved.onboardingCompleted)
        #expect(saved.profile.lastPeriodStartDate == today.adding(days: -3).description)
        let consents = try await fixture.fakes.profile.consents()
        #expect(consents.count == 5 && consents.first { $0.kind == .marketing }?.granted == false && consents.first { $0.kind == .analytics }?.granted == false)
        #expect(fixture.events == [.onboardingCompleted])
    }

    @Test func theCycleStepNeedsAPastStartWhenTracking() async {
        let fixture = Fixture(.empty)
        let model = OnboardingModel(dependencies: fixture.dependencies, timeZone: .gmt)
        model.profile.displayName = "Ana"
        model.profile.fitnessLevel = .advanced
        await model.next()
        model.profile.cycleTrackingEnabled = true
        model.profile.averageCycleLength = 60
        model.profile.averagePeriodLength = 1
        await model.next()
        #expect(model.step == .cycle)
        #expect(model.fieldErrors.keys.sorted() == ["averageCycleLength", "averagePeriodLength", "lastPeriodStartDate"])
        model.lastPeriodStart = CalendarDay(fixture.clock.now, in: .gmt).adding(days: 2)
        #expect(model.problems(of: .cycle)["lastPeriodStartDate"]?.contains("future") == true)
        model.back()
        #expect(model.step == .basics && model.fieldErrors.isEmpty)
    }

    @Test func goalsAndConsentsAreRequired() async {
        let model = OnboardingModel(dependencies: Fixture(.empty).dependencies, timeZone: .gmt)
        #expect(model.problems(of: .goals).keys.sorted() == ["goals", "preferredWorkoutTypes"])
        model.profile.cycleTrackingEnabled = true
        #expect(model.problems(of: .notifications).keys.sorted() == ["healthData", "notificationsEnabled", "privacy", "terms"])
        model.profile.displayName = String(repeating: "x", count: 101)
        #expect(model.problems(of: .basics)["displayName"] != nil)
    }

    @Test func aFailedSaveKeepsTheAnswersAndCanBeRetried() async {
        let fixture = Fixture(.empty)
        fixture.fakes.profile.knobs.implement(.profile, .recordConsent, .saveProfile)
        fixture.fakes.profile.knobs.failOnce(.saveProfile, with: .offline)
        let model = OnboardingModel(dependencies: fixture.dependencies, timeZone: .gmt)
        await model.load()
        await fillEveryStep(model, today: CalendarDay(fixture.clock.now, in: .gmt))
        await model.next()
        #expect(!model.isCompleted && model.error?.isRetryable == true && model.step == .notifications)
        await model.next()
        #expect(model.isCompleted)
    }

    @Test func loadingOfflineShowsTheError() async {
        let fixture = Fixture(.empty)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.profile.knobs.fail(.profile, with: .offline)
        let model = OnboardingModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.kind == .offline && !model.isLoading)
    }
}
