import FitBaseKit
import Foundation
import Testing

/// Waits, yielding (never sleeping), until `condition` holds — for state that arrives through a stream the model
/// follows. Records an issue when it never does.
@MainActor
func eventually(_ condition: @MainActor () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    for _ in 0..<200_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("the condition never held", sourceLocation: sourceLocation)
}

/// Fakes on a test clock, and the container over them.
struct Fixture {
    let clock: TestKitClock
    let fakes: FakeServices
    let dependencies: FitBaseDependencies

    init(_ scenario: FakeScenario = .populated) {
        let clock = TestKitClock()
        self.clock = clock
        fakes = FakeServices(scenario: scenario, clock: clock)
        dependencies = .fake(fakes)
    }

    /// The events recorded so far.
    var events: [AnalyticsEvent] { fakes.analytics.events }
}
