import FitBaseCore
import Foundation
import Synchronization

/// Analytics that reach the app's sink only with the signed-in user's `analytics` consent (the live container wraps
/// `LiveConfiguration.analytics` in one; nothing is sent without the consent).
///
/// * **Granted**: each event goes to the sink as it is tracked.
/// * **Withheld** (the user answered no): events are dropped.
/// * **Not known yet** (a fresh install, a user who has not answered, consents not loaded): events are held in memory,
///   at most `heldLimit` of them (the oldest go first), and sent in order when the user grants the consent — the
///   sign-up that led to it counts — or dropped when the user declines.
///
/// The answer is learned from the profile service: loading the consents and recording one tell the gate, and a new
/// user signing in makes it not known again until their consents are read.
public final class ConsentGatedAnalytics: AnalyticsService {
    /// What the gate knows of the consent.
    public enum Consent: Sendable, Equatable {
        case unknown, granted, withheld
    }

    private struct State {
        var consent = Consent.unknown
        var held: [AnalyticsEvent] = []
        /// Whose answer ``consent`` is.
        var user: UserID?
        /// Counts decisions, so a read that started before one does not undo it.
        var decisions = 0
    }

    private let sink: any AnalyticsService
    private let heldLimit: Int
    private let state = Mutex(State())

    /// A gate in front of `sink`, holding at most `heldLimit` events while the consent is not known.
    public init(_ sink: any AnalyticsService, heldLimit: Int = 200) {
        self.sink = sink
        self.heldLimit = max(0, heldLimit)
    }

    /// What the gate knows of the consent now.
    public var consent: Consent { state.withLock { $0.consent } }

    public func track(_ event: AnalyticsEvent) {
        // The sink's `track` only queues, so it is called under the lock: events keep their order across a decision.
        state.withLock { state in
            switch state.consent {
            case .granted:
                sink.track(event)
            case .withheld:
                break
            case .unknown:
                guard heldLimit > 0 else { return }
                if state.held.count == heldLimit { state.held.removeFirst() }
                state.held.append(event)
            }
        }
    }

    public func flush() async {
        guard consent == .granted else { return }
        await sink.flush()
    }

    /// `user` signed in: when it is another user than the one whose answer the gate has, their answer is not known
    /// until it is read. Returns whether it was another user.
    @discardableResult
    func begin(user: UserID) -> Bool {
        state.withLock { state in
            guard state.user != user else { return false }
            state.user = user
            state.consent = .unknown
            state.decisions += 1
            return true
        }
    }

    /// A mark to pass to ``decide(from:since:)`` when the consents are read.
    func mark() -> Int { state.withLock { $0.decisions } }

    /// Records the user's answer: `true` sends what is held and what follows, `false` drops them, `nil` (a new user,
    /// no answer yet) holds what follows.
    public func decide(_ granted: Bool?) {
        state.withLock { state in
            state.decisions += 1
            switch granted {
            case true?:
                state.consent = .granted
                for event in state.held { sink.track(event) }
                state.held = []
            case false?:
                state.consent = .withheld
                state.held = []
            case nil:
                state.consent = .unknown
            }
        }
    }

    /// Records the answer in `consents`, the user's consents in force as read after `mark` (no `analytics` entry:
    /// not answered yet) — unless another answer was recorded, or another user signed in, since.
    func decide(from consents: [ConsentRecord], since mark: Int) {
        guard self.mark() == mark else { return }
        decide(consents.last { $0.kind == .analytics }?.granted)
    }
}
