import Foundation
import Logging

/// Which of Apple's push gateways a device token belongs to: tokens from a development build are valid only on the
/// sandbox (`api.sandbox.push.apple.com`), tokens from TestFlight and App Store builds only on production
/// (`api.push.apple.com`).
package enum PushEnvironment: String, Sendable, Codable, CaseIterable {
    case sandbox
    case production
}

/// Apple's `apns-push-type`: `alert` shows something to the user, `background` wakes the app silently.
package enum PushType: String, Sendable, Codable {
    case alert
    case background
}

/// One push to one device, as Apple's HTTP/2 provider API takes it: the request's path (the device token), headers
/// and JSON body.
package struct PushMessage: Sendable, Codable, Equatable {
    /// The device token, lower-case hex, as the app received it from `didRegisterForRemoteNotificationsWithDeviceToken`.
    package var deviceToken: String
    package var environment: PushEnvironment
    /// `apns-topic`: the app's bundle id; `nil` sends the configured default topic.
    package var topic: String?
    /// `apns-push-type`.
    package var pushType: PushType = .alert
    /// `apns-priority`: 10 delivers at once, 5 when the device sees fit (background pushes must use 5).
    package var priority: Int = 10
    /// `apns-expiration`: until when Apple keeps trying a device that is offline; `nil` sends `0` (try once).
    package var expiration: Date?
    /// `apns-collapse-id` (at most 64 bytes): a later push with the same id replaces an undelivered earlier one.
    package var collapseID: String?
    /// `apns-id`: names the push in Apple's answer and in our logs.
    package var id: UUID
    /// The JSON body (`{"aps": {...}, ...}`), at most 4,096 bytes.
    package var payload: Data

    package init(
        deviceToken: String, environment: PushEnvironment, topic: String? = nil, pushType: PushType = .alert,
        priority: Int = 10, expiration: Date? = nil, collapseID: String? = nil, id: UUID, payload: Data
    ) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.id = id
        self.payload = payload
    }
}

/// What became of one push.
package enum PushOutcome: Sendable, Equatable {
    /// Apple accepted it (200), naming it by `apns-id`.
    case delivered(apnsID: String?)
    /// The token will never work again: `BadDeviceToken`, `DeviceTokenNotForTopic`, or `Unregistered` (410, with the
    /// time Apple learned the token was no longer valid). The device is to be removed.
    case deviceGone(reason: String, since: Date?)
    /// Worth another try later: `TooManyRequests` (429), Apple's 5xx, a network failure, a provider token still
    /// refused after being refreshed. `after` is a hint (a `Retry-After`), not a promise.
    case retry(reason: String, after: Duration?)
    /// Never worth retrying and not the device's fault — a bug on our side (`PayloadTooLarge`, `BadTopic`,
    /// `MissingTopic`, `BadCertificateEnvironment` …): logged as an error, the job fails.
    case rejected(reason: String)
}

/// Sends pushes. The real implementation speaks Apple's HTTP/2 provider API with token-based authentication
/// (``APNsProvider``); without APNs settings the server logs each push instead. Only the outbox's worker calls it,
/// after the change that caused the push committed; it never throws: every failure is a ``PushOutcome``.
///
/// These types are `package` rather than internal so that the APNs benchmark (`Benchmarks/APNsBench`) and the
/// test support module can use them.
package protocol PushProvider: Sendable {
    func send(_ message: PushMessage) async -> PushOutcome
}

/// With no APNs settings (the embedded default), each push is written to the log at `info` and counts as delivered,
/// so a developer sees what their users would have received.
package struct LogPushProvider: PushProvider {
    let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    package func send(_ message: PushMessage) async -> PushOutcome {
        logger.info(
            "push (no APNs key configured: FITBASE_APNS_KEY_ID)",
            metadata: [
                "device": "\(message.deviceToken.prefix(8))…", "environment": "\(message.environment.rawValue)",
                "type": "\(message.pushType.rawValue)", "apns-id": "\(message.id)",
                "payload": "\(String(decoding: message.payload, as: UTF8.self))",
            ]
        )
        return .delivered(apnsID: message.id.uuidString)
    }
}
