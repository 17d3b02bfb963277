import Foundation

/// One e-mail ready to send: who it goes to, the subject, and a plain-text and an HTML body of the same content.
struct MailMessage: Sendable, Codable, Equatable {
    /// The recipient's address (`user@example.com`).
    var to: String
    var subject: String
    var text: String
    var html: String
}

/// Delivers e-mail. The real implementation speaks SMTP (``SMTPMailer``); without SMTP settings the server logs each
/// message instead (``LogMailer``). Only the outbox calls it, after the change that caused the message committed.
protocol Mailer: Sendable {
    /// Sends `message` from `from` (`"FitBase <no-reply@example.com>"` or a bare address).
    ///
    /// Throws ``MailDeliveryError``: `.transient` when trying again later may work (connection refused, timeouts, 4xx
    /// replies), `.permanent` when it never will (5xx replies such as an unknown mailbox).
    func send(_ message: MailMessage, from: String) async throws(MailDeliveryError)
}

/// Why a message was not delivered, and whether retrying can help.
enum MailDeliveryError: Error, Equatable, CustomStringConvertible {
    /// Retry later: the server could not be reached, timed out, or answered with a 4xx reply.
    case transient(String)
    /// Do not retry: the server refused the message for good (a 5xx reply).
    case permanent(String)

    var description: String {
        switch self {
        case .transient(let reason): "temporary mail failure: \(reason)"
        case .permanent(let reason): "permanent mail failure: \(reason)"
        }
    }
}
