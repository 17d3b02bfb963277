import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// `FitBaseDependencies.live` with only the README's arguments gives a working app (issue 54, item 3): here, analytics
/// that reach the server once the user gives the `analytics` consent, with no sink named by the app.
@MainActor @Suite struct LiveDefaultsTests {
    @Test func analyticsReachTheServerAfterTheConsentWithoutASinkNamed() async throws {
        try await withLiveApp(.sqlite) { @MainActor server, database in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-defaults-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let dependencies = try FitBaseDependencies.live(.init(serverURL: server, dataDirectory: directory, timeZone: { .gmt }))
            let app = AppModel(dependencies: dependencies)
            await app.start()
            defer { app.stop() }

            // Signed up, the consent not given yet: the sign-up waits on the device.
            app.auth.email = "defaults-\(UUID().uuidString.prefix(8))@example.com"
            app.auth.password = "correct horse battery"
            await app.auth.signUp()
            #expect(app.auth.isSignedIn, "\(String(describing: app.auth.error))")
            await app.movedToBackground()
            #expect(try await Self.storedEvents(database).isEmpty)

            let onboarding = OnboardingModel(dependencies: dependencies, timeZone: .gmt)
            await onboarding.load()
            onboarding.profile.displayName = "Defaults"
            onboarding.profile.fitnessLevel = .beginner
            await onboarding.next()
            onboarding.profile.cycleTrackingEnabled = false
            await onboarding.next()
            onboarding.profile.goals = [.buildStrength]
            onboarding.profile.preferredWorkoutTypes = [.strength]
            await onboarding.next()
            onboarding.profile.notificationsEnabled = false
            (onboarding.acceptsTerms, onboarding.acceptsPrivacy, onboarding.acceptsAnalytics) = (true, true, true)
            await onboarding.next()
            #expect(onboarding.isCompleted, "\(onboarding.fieldErrors) \(String(describing: onboarding.error))")
            dependencies.analytics.track(.screenViewed(.library))

            // Going to the background sends what is queued: the sign-up held until the consent, and what followed.
            await app.movedToBackground()
            let stored = try await Self.storedEvents(database)
            #expect(stored["sign_up"] == 1 && stored["onboarding_completed"] == 1 && stored["screen_view"] == 1, "\(stored)")
            // The queue is kept in the data directory, and is empty once sent.
            let queued = try JSONDecoder().decode([AnalyticsRecord].self, from: Data(contentsOf: directory.appendingPathComponent("analytics-queue.json")))
            #expect(queued.isEmpty)
        }
    }

    /// The events the server stored today and yesterday (UTC), counted by name.
    static func storedEvents(_ database: TestDatabase) async throws -> [String: Int] {
        let opened = try await Database.open(database.location, logger: TestDatabase.logger)
        do {
            let today = CalendarDay(Date(), in: .gmt)
            let counts = try await AnalyticsStore(database: opened).dailyCounts(from: today.adding(days: -1), to: today.adding(days: 1))
            try await opened.shutdown()
            return counts.reduce(into: [:]) { $0[$1.name, default: 0] += $1.count }
        } catch {
            try? await opened.shutdown()
            throw error
        }
    }
}
