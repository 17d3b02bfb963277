import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

/// Waits, yielding (never sleeping), until `condition` holds — for state that arrives through a stream the model
/// follows. Records an issue when it never does. On the main actor, where the models live.
@MainActor
func eventually(_ condition: @MainActor () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    if await FitBaseTestSupport.eventually(every: .zero, { condition() }) { return }
    Issue.record("the condition never held", sourceLocation: sourceLocation)
}

/// Strict fakes on a test clock, and the container over them. Whatever data the scenario starts with (`.strict`: the
/// populated fakes; `.empty`; `.signedOut`), a fake answers only the operations the test names with
/// `knobs.implement(…)` — what the model is meant to call, and what the test itself calls to set up — and anything
/// else the model touches reports an issue, failing the test.
struct Fixture {
    let clock: TestKitClock
    let fakes: FakeServices
    let dependencies: FitBaseDependencies

    init(_ scenario: FakeScenario = .strict) {
        let clock = TestKitClock()
        self.clock = clock
        fakes = FakeServices(scenario: scenario, clock: clock)
        fakes.unimplementAll()
        dependencies = .fake(fakes)
    }

    /// The events recorded so far.
    var events: [AnalyticsEvent] { fakes.analytics.events }
}
