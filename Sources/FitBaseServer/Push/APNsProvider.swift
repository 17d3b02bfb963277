import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

/// Sends pushes through Apple's HTTP/2 provider API with token-based authentication.
///
/// Wiring, at start-up:
///
/// ```swift
/// let push: any PushProvider
/// let apns = try APNsConfiguration(environment: environment).map { APNsProvider(configuration: $0, logger: logger, clock: clock) }
/// push = apns ?? LogPushProvider(logger: logger)
/// // … and when the server stops, after the outbox worker: try await apns?.shutdown()
/// ```
///
/// `APNsConfiguration(environment:)` throws a ``ConfigurationError`` naming the variable when the settings are partial
/// or invalid, and is `nil` when none is set.
///
/// Each push is one `POST /3/device/<token>` to `api.push.apple.com` or `api.sandbox.push.apple.com`, chosen by the
/// message's environment, with `authorization: bearer <provider token>` (``APNsProviderTokens``), `apns-push-type`,
/// `apns-topic` (the message's or the configured default), `apns-priority`, `apns-expiration` (`0` without one),
/// `apns-collapse-id` (when set) and `apns-id`. One ``HTTPClient`` of its own (its TLS trust is APNs's alone) keeps one
/// HTTP/2 connection per gateway, negotiated by ALPN, and multiplexes every concurrent push over it as streams, up to
/// the number Apple's `SETTINGS_MAX_CONCURRENT_STREAMS` allows (more wait for a free stream, not for a new connection).
///
/// What Apple's answers become is in ``APNsRefusal``. In short: 200 is delivered; a token Apple no longer knows is
/// `deviceGone`; too many requests, Apple's 5xx, a network error or a timeout is `retry`; a request Apple calls
/// malformed or unauthorised is `rejected`, logged at `error`. `ExpiredProviderToken` makes a new provider token — one
/// for all the pushes that were refused together — and the push is sent once more; refused again, it is `retry`.
/// Before anything is sent, a payload over 4,096 bytes and a priority, collapse id or topic Apple would refuse are
/// `rejected`, and a device token that is not hex is `deviceGone` (Apple would say `BadDeviceToken`).
package final class APNsProvider: PushProvider {
    /// Apple's limit for the JSON body of a regular push.
    package static let maximumPayloadBytes = 4_096
    /// Apple's limit for `apns-collapse-id`.
    static let maximumCollapseIDBytes = 64
    /// The biggest answer body read; Apple's are a few dozen bytes.
    static let maximumAnswerBytes = 16 * 1024

    package let configuration: APNsConfiguration
    let tokens: APNsProviderTokens
    private let client: HTTPClient
    private let logger: Logger
    private let requestTimeout: TimeAmount
    private let clock: ServerClock

    /// - Parameters:
    ///   - requestTimeout: how long one push may take, waiting for a connection or a stream included.
    ///   - connectTimeout: how long connecting (TCP and TLS) may take; the client tries again meanwhile.
    ///   - clock: when provider tokens are issued and Apple's `Retry-After` dates are counted from (the application's;
    ///     the system's for a provider used on its own, as the benchmarks do).
    package init(
        configuration: APNsConfiguration, logger: Logger, requestTimeout: Duration = .seconds(30), connectTimeout: Duration = .seconds(10),
        clock: ServerClock
    ) {
        self.configuration = configuration
        self.logger = logger
        self.requestTimeout = TimeAmount(requestTimeout)
        self.clock = clock
        tokens = APNsProviderTokens(teamID: configuration.teamID, keyID: configuration.keyID, privateKey: configuration.privateKey, now: { clock.now })

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let roots = configuration.trustRoots {
            // Tests: the fake gateway's CA, and nothing else.
            tls.trustRoots = .certificates(roots)
        }
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(connectTimeout), read: TimeAmount(requestTimeout))
        )
        // `.automatic` offers h2 and http/1.1 by ALPN; Apple's gateways answer h2.
        clientConfiguration.httpVersion = .automatic
        // Apple asks providers to keep their connections open rather than reconnect for each burst.
        clientConfiguration.connectionPool = .init(idleTimeout: .minutes(30))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    /// Closes the connections; sends after it fail as `retry`.
    package func shutdown() async throws {
        try await client.shutdown()
    }

    package func send(_ message: PushMessage) async -> PushOutcome {
        if let refusal = refusalBeforeSending(message) {
            log(refusal, for: message, sent: false)
            return refusal
        }
        let token: APNsProviderTokens.Token
        do {
            token = try tokens.current()
        } catch {
            return retry("cannot sign the provider token: \(error)", message)
        }

        var answer = await post(message, token: token)
        if case .refused(let refusal) = answer, refusal.isExpiredProviderToken {
            let renewed: APNsProviderTokens.Token?
            do {
                renewed = try tokens.refresh(replacing: token)
            } catch {
                return retry("cannot sign the provider token: \(error)", message)
            }
            guard let renewed else {
                logger.error(
                    "push: APNs calls a provider token expired that was made less than 20 minutes ago; is the clock right?",
                    metadata: ["apns-id": "\(message.id)"]
                )
                return .retry(reason: refusal.reason, after: nil)
            }
            answer = await post(message, token: renewed)
            if case .refused(let again) = answer, again.isExpiredProviderToken {
                logger.error(
                    "push: APNs refused a new provider token as expired; is the clock right?", metadata: ["apns-id": "\(message.id)"]
                )
            }
        }

        switch answer {
        case .delivered(let apnsID):
            return .delivered(apnsID: apnsID ?? message.id.uuidString)
        case .refused(let refusal):
            let outcome = refusal.outcome
            log(outcome, for: message, sent: true)
            return outcome
        case .failed(let error):
            return retry("\(error)", message)
        }
    }

    /// What Apple would answer to a message we can tell is wrong without asking; `nil` to send it.
    func refusalBeforeSending(_ message: PushMessage) -> PushOutcome? {
        if message.payload.count > Self.maximumPayloadBytes {
            return .rejected(reason: "PayloadTooLarge")
        }
        if !Self.isDeviceToken(message.deviceToken) {
            return .deviceGone(reason: "BadDeviceToken", since: nil)
        }
        if ![1, 5, 10].contains(message.priority) {
            return .rejected(reason: "BadPriority")
        }
        if let collapseID = message.collapseID,
            collapseID.utf8.count > Self.maximumCollapseIDBytes || !Self.isHeaderValue(collapseID)
        {
            return .rejected(reason: "BadCollapseId")
        }
        if let topic = message.topic, !APNsConfiguration.isTopic(topic) {
            return .rejected(reason: "BadTopic")
        }
        return nil
    }

    /// Apple's device tokens: an even number of hex digits (32 bytes today; Apple warns the length may change).
    static func isDeviceToken(_ token: String) -> Bool {
        (2...512).contains(token.utf8.count) && token.utf8.count.isMultiple(of: 2)
            && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    /// No control characters, which would end the header.
    private static func isHeaderValue(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
    }

    private enum Answer {
        case delivered(apnsID: String?)
        case refused(APNsRefusal)
        case failed(any Error)
    }

    private func post(_ message: PushMessage, token: APNsProviderTokens.Token) async -> Answer {
        let gateway = configuration.gatewayURL(for: message.environment)
        var request = HTTPClientRequest(url: "\(gateway)/3/device/\(message.deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token.jwt)")
        request.headers.add(name: "apns-push-type", value: message.pushType.rawValue)
        request.headers.add(name: "apns-topic", value: message.topic ?? configuration.defaultTopic)
        request.headers.add(name: "apns-priority", value: String(message.priority))
        request.headers.add(name: "apns-expiration", value: String(message.expiration.map { max(0, Int($0.timeIntervalSince1970)) } ?? 0))
        if let collapseID = message.collapseID {
            request.headers.add(name: "apns-collapse-id", value: collapseID)
        }
        request.headers.add(name: "apns-id", value: message.id.uuidString.lowercased())
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: message.payload))
        do {
            let response = try await client.execute(request, timeout: requestTimeout)
            let body = try await response.body.collect(upTo: Self.maximumAnswerBytes)
            guard response.status != .ok else {
                return .delivered(apnsID: response.headers.first(name: "apns-id"))
            }
            return .refused(
                APNsRefusal(status: Int(response.status.code), body: Data(buffer: body), retryAfter: response.headers.first(name: "retry-after"), now: clock.now)
            )
        } catch {
            return .failed(error)
        }
    }

    private func retry(_ reason: String, _ message: PushMessage) -> PushOutcome {
        logger.warning("push: not delivered, will retry", metadata: ["reason": "\(reason)", "apns-id": "\(message.id)"])
        return .retry(reason: reason, after: nil)
    }

    private func log(_ outcome: PushOutcome, for message: PushMessage, sent: Bool) {
        var metadata: Logger.Metadata = [
            "apns-id": "\(message.id)", "environment": "\(message.environment.rawValue)",
            "topic": "\(message.topic ?? configuration.defaultTopic)", "device": "\(message.deviceToken.prefix(8))…",
        ]
        if !sent { metadata["sent"] = "no" }
        switch outcome {
        case .rejected(let reason):
            metadata["reason"] = "\(reason)"
            logger.error("push: refused as malformed or unauthorised; a bug or a configuration error (not retried)", metadata: metadata)
        case .deviceGone(let reason, let since):
            metadata["reason"] = "\(reason)"
            if let since { metadata["since"] = "\(since)" }
            logger.info("push: device token no longer valid", metadata: metadata)
        case .retry(let reason, let after):
            metadata["reason"] = "\(reason)"
            if let after { metadata["retry-after"] = "\(after)" }
            logger.warning("push: not delivered, will retry", metadata: metadata)
        case .delivered:
            break
        }
    }
}
