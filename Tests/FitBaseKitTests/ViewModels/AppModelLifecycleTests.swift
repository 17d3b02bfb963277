import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation
import Testing

/// What the root model does at launch and on each return to the foreground without a screen asking (issue 54, items 3
/// and 6): the device syncs, HealthKit samples are uploaded once the app asked for access, the launch is timed, and a
/// FitBase link that cannot be read is reported without its secrets.
@MainActor @Suite struct AppModelLifecycleTests {
    /// A HealthKit source that has or has not asked the user for access yet, holding no samples.
    actor AskingHealthKitSource: HealthKitSource {
        private(set) var asked = false

        func requestAuthorization() async throws { asked = true }
        func hasRequestedAuthorization() async -> Bool { asked }
        func samples(of type: HealthSampleType, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitChanges {
            HealthKitChanges(samples: [], anchor: anchor ?? HealthKitAnchor(data: Data()), hasMore: false)
        }
    }

    @Test func comingToTheForegroundSyncsTheDevice() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.billing.knobs.implement(.refreshEntitlement)
        fixture.fakes.plans.knobs.implement(.syncNow)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        #expect(fixture.fakes.plans.knobs.callCount(.syncNow) == 0)
        await model.becameActive()
        #expect(fixture.fakes.plans.knobs.callCount(.syncNow) == 1)

        // Offline, the foreground still finishes; signed out, there is nothing to sync.
        fixture.fakes.plans.knobs.fail(.syncNow, with: .offline)
        await model.becameActive()
        #expect(fixture.fakes.plans.knobs.callCount(.syncNow) == 2)
        await fixture.fakes.auth.endSession()
        await eventually { model.route == .signIn }
        await model.becameActive()
        #expect(fixture.fakes.plans.knobs.callCount(.syncNow) == 2)
        model.stop()
    }

    @Test func healthKitSamplesAreUploadedAtLaunchAndForegroundOnceAccessWasAsked() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.billing.knobs.implement(.refreshEntitlement)
        fixture.fakes.plans.knobs.implement(.syncNow)
        let source = AskingHealthKitSource()
        let health = FakeHealthService(healthKit: FakeHealthKitSource(), clock: fixture.clock)
        var dependencies = fixture.dependencies
        dependencies.health = health
        dependencies.healthKit = source

        // Never asked: no upload (HealthKit would show nothing anyway, and the app has not said it wants health data).
        let model = AppModel(dependencies: dependencies)
        await model.start()
        await model.becameActive()
        #expect(health.knobs.callCount(.uploadHealthKitSamples) == 0)

        try await source.requestAuthorization()
        await model.becameActive()
        #expect(health.knobs.callCount(.uploadHealthKitSamples) == 1)
        model.stop()

        // The next launch uploads too.
        let relaunched = AppModel(dependencies: dependencies)
        await relaunched.start()
        #expect(health.knobs.callCount(.uploadHealthKitSamples) == 2)

        // Signed out, nothing is uploaded.
        await fixture.fakes.auth.endSession()
        await eventually { relaunched.route == .signIn }
        await relaunched.becameActive()
        #expect(health.knobs.callCount(.uploadHealthKitSamples) == 2)
        relaunched.stop()
    }

    @Test func theLaunchIsTimedOnce() async {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        model.stop()
        await model.start()
        let launches = fixture.fakes.reports.reports.filter { $0.operation == "app.launch" }
        #expect(launches.count == 1)
        #expect(launches.first?.kind == .trace && (launches.first?.durationMilliseconds ?? -1) >= 0)
        model.stop()
    }

    @Test func aFitBaseLinkThatCannotBeReadIsReportedWithoutItsSecrets() async {
        let fixture = Fixture(.signedOut)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        let links = [
            "fitbase://auth/reset", "https://fitbase.example.com/auth/verify?token=", "fitbase://group/invite/bad%20code%20secret",
            "https://fitbase.example.com/group/invite/", "fitbase://settings/secret?token=secret-token",
        ]
        for link in links {
            #expect(await model.open(URL(string: link)!) == false, "\(link)")
        }
        // Another app's or site's link is not a FitBase link that failed: no report.
        #expect(await model.open(URL(string: "https://elsewhere.example.com/auth/reset")!) == false)
        #expect(await model.open(URL(string: "otherapp://group/invite/abcdefgh")!) == false)

        let errors = fixture.fakes.reports.reports.filter { $0.kind == .error }
        #expect(errors.map(\.location) == ["deepLink.resetPassword", "deepLink.verifyEmail", "deepLink.invite", "deepLink.invite", "deepLink"])
        #expect(errors.allSatisfy { $0.code == KitError.Kind.invalidInput.rawValue })
        #expect(errors.allSatisfy { !"\($0)".contains("secret") && !"\($0)".contains("example.com") })
        #expect(fixture.events == Array(repeating: .deepLinkRejected, count: links.count + 2))
        model.stop()
    }
}
