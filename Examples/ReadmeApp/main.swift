// The README's app against a running `fitbase serve`, as `scripts/ci/readme-app.sh` runs it:
//
//   fitbase-readme-app SERVER_URL
//
// Its app code is the README's snippet: the same `FitBaseDependencies.live(...)` call (the script compares the two,
// ignoring whitespace) and the same `AppModel` hooks, SwiftUI left out. Nothing else is configured: the defaults must
// give a working app. Then it does what a person does on the screens: signs up, onboards (a last period, the analytics
// consent), opens Today, Cycle and the paywall, opens a mangled link, and sends the app to the background. Each step
// prints a line; the first that fails prints why and exits 1. The last line names the analytics events the steps
// caused (`events: name=count …`), for the script to find on the server's console.
import FitBaseCore
import FitBaseKit
import Foundation

struct ReadmeAppFailure: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    guard condition else { throw ReadmeAppFailure(description: what()) }
}

/// Waits up to 15 seconds for `condition` (state that arrives through a stream the models follow).
@MainActor
func until(_ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(15))
    while !condition() {
        guard ContinuousClock.now < deadline else { throw ReadmeAppFailure(description: "timed out: \(what)") }
        try await Task.sleep(for: .milliseconds(50))
    }
}

guard CommandLine.arguments.count == 2, let server = URL(string: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: fitbase-readme-app SERVER_URL\n".utf8))
    exit(64)
}

// The README's app code.
let dependencies = try! FitBaseDependencies.live(.init(serverURL: server, appScheme: "trainapp"))
let app = AppModel(dependencies: dependencies)
await app.start()

do {
    try check(app.route == .signIn, "a new install shows sign-in (route \(app.route))")
    app.auth.email = "readme-\(UUID().uuidString.prefix(8).lowercased())@example.com"
    app.auth.password = "correct horse battery staple"
    app.auth.displayName = "Reader"
    await app.auth.signUp()
    try await until("signed up and sent to onboarding (\(String(describing: app.auth.error)))") {
        app.auth.isSignedIn && app.route == .onboarding
    }
    print("✓ signed up")

    // Onboarding's four steps, with a period that started ten days ago and the analytics consent.
    let onboarding = OnboardingModel(dependencies: dependencies)
    await onboarding.load()
    onboarding.profile.displayName = "Reader"
    onboarding.profile.fitnessLevel = .intermediate
    await onboarding.next()
    onboarding.profile.cycleTrackingEnabled = true
    onboarding.lastPeriodStart = CalendarDay(Date().addingTimeInterval(-10 * 86_400), in: .current)
    await onboarding.next()
    onboarding.profile.goals = [.buildStrength]
    onboarding.profile.preferredWorkoutTypes = [.strength, .pilates]
    await onboarding.next()
    // The notifications step: one call shows the system's prompt and registers for pushes (no prompt on Linux).
    onboarding.profile.notificationsEnabled = try await dependencies.push.requestPermissionAndRegister()
    (onboarding.acceptsTerms, onboarding.acceptsPrivacy, onboarding.acceptsHealthData, onboarding.acceptsAnalytics) = (true, true, true, true)
    await onboarding.next()
    try check(onboarding.isCompleted, "onboarding finishes (\(onboarding.fieldErrors), \(String(describing: onboarding.error)))")
    await app.onboardingFinished()
    try check(app.route == .main, "onboarded, the app shows (route \(app.route))")
    print("✓ onboarded with a last period and the analytics consent")

    // The app goes away and comes back: the foreground's work (config, entitlement, sync) runs.
    await app.becameActive()
    try check(app.auth.isSignedIn && app.route == .main, "back in the foreground, still in the app (route \(app.route))")
    print("✓ back from the background")

    // Today (the server's phase) and Cycle (the device's) agree.
    dependencies.analytics.track(.screenViewed(.home))
    let today = TodayModel(dependencies: dependencies)
    await today.load()
    guard let recommendations = today.recommendations else {
        throw ReadmeAppFailure(description: "Today loads (\(String(describing: today.error)))")
    }
    let todayPhase = recommendations.phase
    dependencies.analytics.track(.screenViewed(.cycle))
    let cycle = CycleModel(dependencies: dependencies)
    await cycle.load()
    let cyclePhase = cycle.current?.phase
    try check(todayPhase != nil, "Today shows a phase after onboarding with a last period")
    try check(
        cyclePhase == todayPhase,
        "the Cycle screen shows the phase Today shows: Cycle \(cyclePhase?.rawValue ?? "none"), Today \(todayPhase?.rawValue ?? "none")")
    print("✓ Today and Cycle show the same phase: \(todayPhase?.rawValue ?? "none")")

    // The paywall sells the server's products.
    dependencies.analytics.track(.screenViewed(.paywall))
    let paywall = PaywallModel(dependencies: dependencies)
    await paywall.appear()
    let products = paywall.offers.flatMap(\.products)
    try check(paywall.error == nil && !products.isEmpty, "the paywall shows products (\(String(describing: paywall.error)))")
    print("✓ the paywall shows \(products.count) products: \(products.map(\.id).joined(separator: ", "))")

    // A mangled link of the app's scheme is reported (its kind only) and not opened.
    try check(await app.open(URL(string: "trainapp://auth/reset")!) == false, "a reset link without its token is not opened")
    print("✓ a mangled link was refused")

    // Going to the background sends the queued analytics and reports.
    await app.movedToBackground()
    app.stop()
    print("events: sign_up=1 onboarding_completed=1 screen_view=3 paywall_shown=1 deep_link_rejected=1")
} catch {
    print("readme-app FAILED: \(error)")
    exit(1)
}
