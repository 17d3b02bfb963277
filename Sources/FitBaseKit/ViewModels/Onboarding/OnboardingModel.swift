import FitBaseCore
import Foundation
import Observation

/// Onboarding (seed 001): profile basics → cycle → goals and equipment → notifications and consents, each step
/// checked before moving on; finishing saves the profile and records the consents.
@MainActor @Observable
public final class OnboardingModel {
    /// The steps, in order.
    public enum Step: Int, Sendable, Equatable, CaseIterable, Comparable {
        case basics, cycle, goals, notifications

        public static func < (lhs: Step, rhs: Step) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The version of the terms, privacy policy and health-data wording the consent step shows.
    nonisolated public static let consentVersion = "2026-01"

    /// The step showing.
    public private(set) var step: Step = .basics
    /// The answers so far (prefilled from the saved profile by ``load()``).
    public var profile = Profile()
    /// The cycle step's last period start (required when tracking the cycle).
    public var lastPeriodStart: CalendarDay?
    /// The consent step's answers: terms and privacy are required, health data is required when tracking the cycle.
    public var acceptsTerms = false
    public var acceptsPrivacy = false
    public var acceptsHealthData = false
    public var acceptsMarketing = false
    /// Whether product analytics may be sent (nothing is, without it).
    public var acceptsAnalytics = false
    /// The current step's problems, per field (`displayName`, `fitnessLevel`, `lastPeriodStartDate`, `goals` …).
    public private(set) var fieldErrors: [String: String] = [:]
    public private(set) var isLoading = false
    public private(set) var isSaving = false
    public private(set) var error: ScreenError?
    /// Onboarding is done: the profile is saved (route to the app).
    public private(set) var isCompleted = false

    private let profiles: any ProfileService
    private let analytics: any AnalyticsService
    private let clock: any KitClock
    private let timeZone: TimeZone

    /// A model over the services of `dependencies`, counting days in `timeZone`.
    public init(dependencies: FitBaseDependencies, timeZone: TimeZone = .current) {
        profiles = dependencies.profile
        analytics = dependencies.analytics
        clock = dependencies.clock
        self.timeZone = timeZone
    }

    /// Whether Back is possible.
    public var canGoBack: Bool { step != .basics }
    /// Whether the step showing is the last.
    public var isLastStep: Bool { step == .notifications }
    /// Progress through the steps, 0…1.
    public var progress: Double { Double(step.rawValue + 1) / Double(Step.allCases.count) }

    /// Prefills the answers from the saved profile.
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            let saved = try await profiles.profile()
            profile = saved.profile
            lastPeriodStart = saved.profile.lastPeriodStartDate.flatMap { CalendarDay($0) }
            error = nil
        } catch {
            present(error)
        }
    }

    /// Checks the step and moves to the next; on the last step, finishes.
    public func next() async {
        guard validate(step) else { return }
        if let following = Step(rawValue: step.rawValue + 1) {
            step = following
        } else {
            await finish()
        }
    }

    /// Goes back a step (answers are kept).
    public func back() {
        fieldErrors = [:]
        if let previous = Step(rawValue: step.rawValue - 1) { step = previous }
    }

    /// The problems of `step`'s answers; empty when it may be left.
    public func problems(of step: Step) -> [String: String] {
        var fields: [String: String] = [:]
        switch step {
        case .basics:
            let name = DisplayNameRule.trimmed(profile.displayName ?? "")
            if name.isEmpty {
                fields["displayName"] = "Tell us what to call you."
            } else if DisplayNameRule.isTooLong(name) {
                fields["displayName"] = "Use at most \(DisplayNameRule.maximumCharacters) characters."
            }
            if profile.fitnessLevel == nil { fields["fitnessLevel"] = "Choose your fitness level." }
        case .cycle:
            if profile.cycleTrackingEnabled {
                let today = CalendarDay(clock.now, in: timeZone)
                if let start = lastPeriodStart {
                    if start > today { fields["lastPeriodStartDate"] = "The date can't be in the future." }
                } else {
                    fields["lastPeriodStartDate"] = "When did your last period start?"
                }
                if !Profile.cycleLengthRange.contains(profile.averageCycleLength) { fields["averageCycleLength"] = "Between 21 and 45 days." }
                if !Profile.periodLengthRange.contains(profile.averagePeriodLength) { fields["averagePeriodLength"] = "Between 2 and 10 days." }
            }
        case .goals:
            if profile.goals.isEmpty { fields["goals"] = "Choose at least one goal." }
            if profile.preferredWorkoutTypes.isEmpty { fields["preferredWorkoutTypes"] = "Choose at least one kind of workout." }
        case .notifications:
            if profile.notificationsEnabled == nil { fields["notificationsEnabled"] = "Choose whether to get reminders." }
            if !acceptsTerms { fields["terms"] = "Accept the terms to continue." }
            if !acceptsPrivacy { fields["privacy"] = "Accept the privacy policy to continue." }
            if profile.cycleTrackingEnabled, !acceptsHealthData { fields["healthData"] = "Cycle tracking needs your consent to store health data." }
        }
        return fields
    }

    private func validate(_ step: Step) -> Bool {
        fieldErrors = problems(of: step)
        error = fieldErrors.isEmpty ? nil : .invalid(fieldErrors)
        return fieldErrors.isEmpty
    }

    /// Saves the profile and the consents.
    private func finish() async {
        isSaving = true
        defer { isSaving = false }
        var answers = profile
        answers.displayName = answers.displayName.map(DisplayNameRule.trimmed)
        answers.lastPeriodStartDate = answers.cycleTrackingEnabled ? lastPeriodStart?.description : nil
        answers.timeZone = answers.timeZone ?? timeZone.identifier
        let consents: [(ConsentKind, Bool)] = [
            (.terms, acceptsTerms), (.privacy, acceptsPrivacy), (.healthData, acceptsHealthData), (.marketing, acceptsMarketing),
            (.analytics, acceptsAnalytics),
        ]
        do throws(KitError) {
            profile = try await profiles.saveProfile(answers).profile
            for (kind, granted) in consents {
                _ = try await profiles.recordConsent(kind, version: Self.consentVersion, granted: granted)
            }
            isCompleted = true
            error = nil
            analytics.track(.onboardingCompleted)
        } catch {
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        fieldErrors = failure.fieldErrors
        analytics.track(.operationFailed(feature: .profile, reason: failure.kind))
    }
}
