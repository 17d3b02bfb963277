import FitBaseCore
import FitBaseKit
import Foundation
import Testing

/// Each user action is one analytics event, over the live container (the fakes track nothing, so only the live
/// services could double one), and nothing is sent without the user's `analytics` consent.
@Suite struct AnalyticsOnceTests {
    /// The events' names and how many times each was tracked.
    static func counts(_ events: [AnalyticsEvent]) -> [String: Int] {
        events.reduce(into: [:]) { counts, event in counts[event.name, default: 0] += 1 }
    }

    @Test func eachActionOfTheScreensIsCountedOnceThroughTheLiveServices() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await Self.walk(device)
        }
    }

    /// Signs up, onboards with analytics allowed, logs a period, saves a plan, creates, shares and leaves a group,
    /// cancels a purchase and signs out — one screen action each — and compares every event's count.
    @MainActor
    static func walk(_ device: LiveDevice) async throws {
        let dependencies = device.dependencies
        let auth = AuthModel(dependencies: dependencies)
        auth.email = "once-\(UUID().uuidString.prefix(8))@example.com"
        auth.password = LiveDevice.password
        auth.displayName = "Once"
        await auth.signUp()
        #expect(auth.isSignedIn)
        // Not answered yet: the sign-up waits on the device.
        #expect(device.analytics.events.isEmpty)

        let onboarding = OnboardingModel(dependencies: dependencies, timeZone: .gmt)
        await onboarding.load()
        onboarding.profile.displayName = "Once"
        onboarding.profile.fitnessLevel = .beginner
        await onboarding.next()
        onboarding.profile.cycleTrackingEnabled = true
        onboarding.lastPeriodStart = CalendarDay(device.clock.now.addingTimeInterval(-20 * 86_400), in: .gmt)
        await onboarding.next()
        onboarding.profile.goals = [.consistency]
        onboarding.profile.preferredWorkoutTypes = [.yoga]
        await onboarding.next()
        onboarding.profile.notificationsEnabled = false
        (onboarding.acceptsTerms, onboarding.acceptsPrivacy, onboarding.acceptsHealthData, onboarding.acceptsAnalytics) = (true, true, true, true)
        await onboarding.next()
        #expect(onboarding.isCompleted, "\(onboarding.fieldErrors) \(String(describing: onboarding.error))")
        #expect(device.analytics.events.first == .signedUp(.email))

        let cycle = CycleModel(dependencies: dependencies, timeZone: .gmt)
        await cycle.load()
        cycle.startLogging(on: CalendarDay(device.clock.now.addingTimeInterval(-2 * 86_400), in: .gmt))
        await cycle.savePeriod()
        #expect(cycle.error == nil)

        let plans = PlansModel(dependencies: dependencies)
        await plans.appear()
        await plans.create()
        plans.draft?.name = "Once a week"
        await plans.save()
        plans.disappear()
        #expect(plans.error == nil && plans.plans.count == 1)

        let groups = GroupsModel(dependencies: dependencies)
        await groups.load()
        groups.newGroupName = "Counted once"
        await groups.create(timeZone: .gmt)
        await groups.createInvitation()
        groups.didShareInvitation()
        await groups.leave()
        #expect(groups.error == nil && groups.group == nil)

        let paywall = PaywallModel(dependencies: dependencies, prompt: nil)
        await paywall.appear()
        await device.store.set(.cancelled)
        let product = try #require(paywall.offers.flatMap(\.products).first)
        await paywall.purchase(product)

        let profile = ProfileModel(dependencies: dependencies, exportDirectory: device.directory)
        await profile.signOut()

        let counts = Self.counts(device.analytics.events)
        #expect(counts == [
            "sign_up": 1, "onboarding_completed": 1, "period_logged": 1, "plan_saved": 1, "group_created": 1, "invite_shared": 1,
            "group_left": 1, "paywall_shown": 1, "purchase_started": 1, "purchase_cancelled": 1, "sign_out": 1,
        ], "every event once: \(device.analytics.events)")
    }

    @Test func withoutTheConsentNothingIsSentAndWithdrawingItStopsTheEvents() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let analytics = device.dependencies.analytics
            analytics.track(.screenViewed(.home))
            _ = try await device.dependencies.profile.recordConsent(.analytics, version: "1", granted: false)
            analytics.track(.screenViewed(.library))
            #expect(device.analytics.events.isEmpty)
            // Granting sends what follows, not what was tracked under a no.
            _ = try await device.dependencies.profile.recordConsent(.analytics, version: "2", granted: true)
            analytics.track(.screenViewed(.history))
            #expect(device.analytics.events == [.screenViewed(.history)])
            _ = try await device.dependencies.profile.recordConsent(.analytics, version: "3", granted: false)
            analytics.track(.screenViewed(.cycle))
            #expect(device.analytics.events == [.screenViewed(.history)])

            // Another install of the same user reads the answer when the session opens, and follows it.
            let second = try LiveDevice(server: server)
            defer { second.remove() }
            _ = try await second.dependencies.auth.signIn(email: try #require(try await device.dependencies.profile.profile().email), password: LiveDevice.password)
            second.dependencies.analytics.track(.screenViewed(.plans))
            _ = try await second.dependencies.profile.recordConsent(.analytics, version: "4", granted: true)
            second.dependencies.analytics.track(.screenViewed(.groups))
            // The sign-in's wait was decided by the user's "no" (read at sign-in) or by the later "yes": never sent twice.
            #expect(second.analytics.events.last == .screenViewed(.groups))
            #expect(Set(second.analytics.events).count == second.analytics.events.count, "\(second.analytics.events)")
        }
    }

    @Test func theGateHoldsABoundedQueueUntilTheAnswerAndKeepsTheOrder() {
        let sink = RecordingAnalytics()
        let gate = ConsentGatedAnalytics(sink, heldLimit: 3)
        #expect(gate.consent == .unknown)
        for screen in [AnalyticsScreen.home, .library, .history, .cycle] { gate.track(.screenViewed(screen)) }
        #expect(sink.events.isEmpty)
        gate.decide(true)
        gate.track(.screenViewed(.plans))
        #expect(sink.events == [.screenViewed(.library), .screenViewed(.history), .screenViewed(.cycle), .screenViewed(.plans)])
        gate.decide(nil)
        gate.track(.groupLeft)
        gate.decide(false)
        gate.decide(true)
        #expect(sink.events.count == 4, "what was held under a no is dropped")
    }
}
