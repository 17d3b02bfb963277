import Foundation

/// A push Apple did not accept: the HTTP status and the JSON body `{"reason": "...", "timestamp": <ms>}` of its answer,
/// and what FitBase does about it (``outcome``).
///
/// | status | reason | outcome | why |
/// |---|---|---|---|
/// | 400 | `BadDeviceToken` | device gone | the token is not a token of this environment: it never will be (an app registered with the wrong environment registers again) |
/// | 400 | `DeviceTokenNotForTopic` | device gone | the token belongs to another app |
/// | 410 | `Unregistered`, `ExpiredToken` | device gone, since `timestamp` | the app was removed or the token expired; `timestamp` tells since when, so a registration made after it can be kept |
/// | 403 | `ExpiredProviderToken` | (handled by ``APNsProvider``: a new provider token and one resend) then retry | our token is older than Apple accepts, usually a clock problem |
/// | 429 | `TooManyRequests` | retry (after `Retry-After`) | too many pushes to one device in a short time: later is fine |
/// | 429 | `TooManyProviderTokenUpdates` | retry | tokens replaced too often; the next one lasts 50 minutes |
/// | 400 | `IdleTimeout` | retry | the connection idled out, not the push's fault |
/// | 5xx | `InternalServerError`, `ServiceUnavailable`, `Shutdown`, any | retry (after `Retry-After`) | Apple's trouble, temporary |
/// | 413 | `PayloadTooLarge` | rejected | the payload will never shrink: a bug in what composed it |
/// | 400 | `BadTopic`, `MissingTopic`, `TopicDisallowed`, `BadCollapseId`, `BadExpirationDate`, `BadMessageId`, `BadPriority`, `InvalidPushType`, `PayloadEmpty`, `DuplicateHeaders`, `MissingDeviceToken`, … | rejected | a malformed request: a bug on our side, identical on every retry |
/// | 403 | `InvalidProviderToken`, `MissingProviderToken`, `BadCertificateEnvironment`, `BadCertificate`, `Forbidden`, … | rejected | wrong key, team or environment: a configuration error no retry fixes |
/// | 404, 405 | `BadPath`, `MethodNotAllowed` | rejected | a bug in the request |
/// | other 4xx | any | rejected | a request Apple refuses as such does not improve by waiting |
/// | other | any | retry | something between us and Apple (a proxy, a redirect) that may pass |
///
/// Rejected pushes are logged at `error` as a bug or configuration report; they never loop through retries.
struct APNsRefusal: Sendable, Equatable {
    let status: Int
    /// Apple's `reason`, or `HTTP <status>` when the body had none.
    let reason: String
    /// `timestamp` of a 410: when Apple learned the token stopped being valid.
    let timestamp: Date?
    /// The answer's `Retry-After` in seconds, if any.
    let retryAfter: Duration?

    /// Reasons that say the device token will never work again.
    static let deviceGoneReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered", "ExpiredToken"]
    /// Reasons that say "not now" although their status is a 4xx that otherwise means a bug.
    static let temporaryReasons: Set<String> = [
        "TooManyRequests", "TooManyProviderTokenUpdates", "IdleTimeout", "ExpiredProviderToken",
    ]

    var isExpiredProviderToken: Bool { status == 403 && reason == "ExpiredProviderToken" }

    var outcome: PushOutcome {
        if Self.deviceGoneReasons.contains(reason) { return .deviceGone(reason: reason, since: timestamp) }
        if Self.temporaryReasons.contains(reason) || status == 429 || status >= 500 {
            return .retry(reason: reason, after: retryAfter)
        }
        if (400..<500).contains(status) { return .rejected(reason: reason) }
        return .retry(reason: reason, after: retryAfter)
    }

    /// Reads Apple's answer: `status`, the JSON body (a missing or unreadable one leaves `HTTP <status>` as the reason)
    /// and `Retry-After`, in either of HTTP's forms: delta-seconds, or an HTTP-date (counted from `now`; a date already
    /// past means "now").
    init(status: Int, body: Data, retryAfter: String?, now: Date) {
        struct Body: Decodable {
            let reason: String?
            /// Milliseconds since 1970.
            let timestamp: Double?
        }
        let decoded = try? JSONDecoder().decode(Body.self, from: body)
        self.status = status
        self.reason = decoded?.reason.flatMap { $0.isEmpty ? nil : $0 } ?? "HTTP \(status)"
        self.timestamp = decoded?.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) }
        self.retryAfter = retryAfter.flatMap { Self.delay(fromRetryAfter: $0, now: now) }
    }

    /// `Retry-After`'s value as a delay: delta-seconds, or an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110
    /// §5.6.7) counted from `now`.
    static func delay(fromRetryAfter value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return seconds >= 0 ? .seconds(seconds) : nil }
        guard let date = try? httpDate.parse(trimmed) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }

    private static let httpDate = Date.ParseStrategy(
        format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .padded(4)) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
        locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt
    )
}
