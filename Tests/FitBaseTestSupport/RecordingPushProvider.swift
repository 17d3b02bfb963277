import FitBaseServer
import Foundation
import Synchronization

/// A push provider for tests: records every push it is given and answers, per device token, the outcomes a test
/// scripted (in order; then `delivered`). ``hold()`` makes every send wait until ``release()``, as a slow or stuck
/// APNs connection would.
package final class RecordingPushProvider: PushProvider {
    private struct State {
        var sent: [PushMessage] = []
        var scripts: [String: [PushOutcome]] = [:]
        var held: [CheckedContinuation<Void, Never>]?
    }

    private let state = Mutex(State())
    /// How long each send takes.
    private let delay: Duration?

    package init(delay: Duration? = nil) {
        self.delay = delay
    }

    /// The next sends to `token` answer `outcomes`, one each, in order.
    package func script(_ token: String, _ outcomes: PushOutcome...) {
        state.withLock { $0.scripts[token, default: []] += outcomes }
    }

    /// Every push sent so far, in the order they were handed over.
    package var sent: [PushMessage] {
        state.withLock { $0.sent }
    }

    /// The pushes sent to `token`.
    package func sent(to token: String) -> [PushMessage] {
        sent.filter { $0.deviceToken == token }
    }

    /// Makes sends wait until ``release()``.
    package func hold() {
        state.withLock { if $0.held == nil { $0.held = [] } }
    }

    /// Lets held sends (and later ones) through.
    package func release() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.held = nil }
            return state.held ?? []
        }
        for continuation in waiting { continuation.resume() }
    }

    package func send(_ message: PushMessage) async -> PushOutcome {
        // A held send also ends when its task is cancelled (the app shutting down), so a test that fails before
        // `release()` cannot hang.
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let wait = state.withLock { state -> Bool in
                    guard state.held != nil, !Task.isCancelled else { return false }
                    state.held?.append(continuation)
                    return true
                }
                if !wait { continuation.resume() }
            }
        } onCancel: {
            release()
        }
        if let delay { try? await Task.sleep(for: delay) }
        return state.withLock { state in
            state.sent.append(message)
            guard var script = state.scripts[message.deviceToken], !script.isEmpty else { return .delivered(apnsID: message.id.uuidString) }
            let outcome = script.removeFirst()
            state.scripts[message.deviceToken] = script
            return outcome
        }
    }
}

extension PushMessage {
    /// The JSON body as a dictionary.
    package var body: [String: Any] {
        (try? JSONSerialization.jsonObject(with: payload) as? [String: Any]) ?? [:]
    }

    /// `aps.alert.body`.
    package var alertBody: String? {
        ((body["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String
    }

    /// `aps.badge`.
    package var badge: Int? {
        switch (body["aps"] as? [String: Any])?["badge"] {
        case let value as Int: value
        case let value as NSNumber: value.intValue
        default: nil
        }
    }

    /// `fitbase.type`.
    package var fitbaseType: String? {
        (body["fitbase"] as? [String: Any])?["type"] as? String
    }
}
