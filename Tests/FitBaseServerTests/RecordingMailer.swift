import FitBaseTestSupport
import Foundation
import HummingbirdTesting
import Synchronization
import Testing

@testable import FitBaseServer

/// A mailer that keeps what it is given, and can be told to fail like an SMTP server that is down.
final class RecordingMailer: Mailer {
    private let state = Mutex<(messages: [MailMessage], failing: Bool, refused: Int)>(([], false, 0))

    var messages: [MailMessage] { state.withLock { $0.messages } }
    /// How many sends were refused while failing.
    var refusals: Int { state.withLock { $0.refused } }

    /// While `true`, every send fails as a temporary error (connection refused).
    func setFailing(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func send(_ message: MailMessage, from: String) async throws(MailDeliveryError) {
        let refused = state.withLock { state in
            if state.failing {
                state.refused += 1
                return true
            }
            state.messages.append(message)
            return false
        }
        if refused { throw .transient("connection refused") }
    }

    /// The messages to `address`, waiting up to `timeout` for at least `count` of them.
    func received(by address: String, atLeast count: Int = 1, timeout: Duration = .seconds(10)) async throws -> [MailMessage] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let found = messages.filter { $0.to == address }
            if found.count >= count || ContinuousClock.now > deadline { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The last message to `address` whose subject contains `subject`, waiting up to 10 s for it.
    func message(to address: String, subject: String) async throws -> MailMessage? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while true {
            if let found = messages.last(where: { $0.to == address && $0.subject.contains(subject) }) { return found }
            if ContinuousClock.now > deadline { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The token of the last link sent to `address` whose subject contains `subject`.
    func token(to address: String, subject: String) async throws -> String {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            if let message = messages.last(where: { $0.to == address && $0.subject.contains(subject) }),
                let range = message.text.range(of: #"token=[A-Za-z0-9_-]+"#, options: .regularExpression)
            {
                return String(message.text[range].dropFirst("token=".count))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw MailNotReceived(address: address, subject: subject)
    }
}

struct MailNotReceived: Error {
    let address: String
    let subject: String
}
