import Crypto
import FitBaseFakeAPNs
import Foundation
import Logging
import NIOSSL
import Synchronization
import Testing

@testable import FitBaseServer

/// ``APNsProvider`` against ``FakeAPNsServer``: HTTP/2 over TLS on loopback, every request checked as Apple checks it.
/// Serialized: several tests send a thousand pushes at once, and the 2-core CI machines share one event loop group.
@Suite(.serialized) struct APNsProviderTests {
    static let teamID = "TEAMFB0001"
    static let keyID = "KEYFB00001"
    static let topic = "app.fitbase.tests"
    static let alert = Data(#"{"aps":{"alert":{"title":"Streak","body":"Three days in a row"},"sound":"default"}}"#.utf8)
    static let logger: Logger = {
        var logger = Logger(label: "fitbase.test.apns")
        logger.logLevel = .critical
        return logger
    }()

    let key = P256.Signing.PrivateKey()

    // MARK: Outcomes

    @Test func deliversWithApplesHeaders() async throws {
        try await withGateway { fake, provider in
            let message = Self.message()
            #expect(await provider.send(message) == .delivered(apnsID: message.id.uuidString.lowercased()))

            var later = Self.message(topic: Self.topic, collapseID: "weekly-leaderboard")
            later.pushType = .background
            later.priority = 5
            later.expiration = Date(timeIntervalSince1970: 1_900_000_000)
            #expect(await provider.send(later) == .delivered(apnsID: later.id.uuidString.lowercased()))

            let pushes = fake.accepted
            try #require(pushes.count == 2)
            #expect(pushes[0].deviceToken == message.deviceToken)
            #expect(pushes[0].payload == Self.alert)
            #expect(pushes[0].headers["authorization"]?.hasPrefix("bearer ") == true)
            #expect(pushes[0].headers["apns-topic"] == Self.topic)
            #expect(pushes[0].headers["apns-push-type"] == "alert")
            #expect(pushes[0].headers["apns-priority"] == "10")
            #expect(pushes[0].headers["apns-expiration"] == "0")
            #expect(pushes[0].headers["apns-collapse-id"] == nil)
            #expect(pushes[0].headers["apns-id"] == message.id.uuidString.lowercased())
            #expect(pushes[1].headers["apns-push-type"] == "background")
            #expect(pushes[1].headers["apns-priority"] == "5")
            #expect(pushes[1].headers["apns-expiration"] == "1900000000")
            #expect(pushes[1].headers["apns-collapse-id"] == "weekly-leaderboard")
            #expect(fake.refusals.isEmpty)
        }
    }

    @Test func badDeviceTokenIsDeviceGone() async throws {
        try await withGateway { fake, provider in
            let message = Self.message()
            fake.answer(.badDeviceToken, forDeviceToken: message.deviceToken)
            #expect(await provider.send(message) == .deviceGone(reason: "BadDeviceToken", since: nil))
            #expect(fake.refusals.count == 1)
        }
    }

    @Test func unregisteredIsDeviceGoneSinceApplesTimestamp() async throws {
        try await withGateway { fake, provider in
            let message = Self.message()
            let since = Date(timeIntervalSince1970: 1_763_000_000.250)
            fake.answer(.unregistered(since: since), forDeviceToken: message.deviceToken)
            #expect(await provider.send(message) == .deviceGone(reason: "Unregistered", since: since))
        }
    }

    @Test func tooManyRequestsIsRetryAfterItsRetryAfter() async throws {
        try await withGateway { fake, provider in
            fake.answerNext(1, with: .tooManyRequests(retryAfter: 7))
            fake.answerNext(1, with: .tooManyRequests(retryAfter: nil))
            #expect(await provider.send(Self.message()) == .retry(reason: "TooManyRequests", after: .seconds(7)))
            #expect(await provider.send(Self.message()) == .retry(reason: "TooManyRequests", after: nil))
            #expect(fake.refusals.count == 2)
        }
    }

    @Test func retryAfterIsReadInBothOfHTTPsForms() {
        let now = Date(timeIntervalSince1970: 784_111_700)  // 08:48:20 GMT on 6 November 1994
        #expect(APNsRefusal.delay(fromRetryAfter: " 120 ", now: now) == .seconds(120))
        #expect(APNsRefusal.delay(fromRetryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(77))
        #expect(APNsRefusal.delay(fromRetryAfter: "Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .seconds(0))
        for unreadable in ["-5", "soon", "", "06 Nov 1994"] { #expect(APNsRefusal.delay(fromRetryAfter: unreadable, now: now) == nil) }
        let refusal = APNsRefusal(status: 503, body: Data(#"{"reason":"ServiceUnavailable"}"#.utf8), retryAfter: "Sun, 06 Nov 1994 08:58:20 GMT", now: now)
        #expect(refusal.outcome == .retry(reason: "ServiceUnavailable", after: .seconds(600)))
    }

    @Test func internalServerErrorIsRetry() async throws {
        try await withGateway { fake, provider in
            fake.answerNext(1, with: .internalServerError)
            #expect(await provider.send(Self.message()) == .retry(reason: "InternalServerError", after: nil))
            fake.answerNext(1, with: .refuse(status: 503, reason: "ServiceUnavailable"))
            #expect(await provider.send(Self.message()) == .retry(reason: "ServiceUnavailable", after: nil))
            // Sent once each: retrying is the outbox's job, later.
            #expect(fake.refusals.count == 2)
        }
    }

    @Test func expiredProviderTokenIsReplacedAndThePushResent() async throws {
        try await withGateway { fake, provider in
            #expect(Self.isDelivered(await provider.send(Self.message())))
            fake.expireProviderTokensSeen()

            let message = Self.message()
            #expect(await provider.send(message) == .delivered(apnsID: message.id.uuidString.lowercased()))
            #expect(fake.refusals.map(\.reason) == ["ExpiredProviderToken"])
            #expect(fake.distinctProviderTokens == 2)
            let tokens = fake.accepted.map(\.providerToken)
            #expect(tokens.count == 2 && tokens[0] != tokens[1])
        }
    }

    @Test func pushesRefusedTogetherShareOneNewProviderToken() async throws {
        try await withGateway { fake, provider in
            #expect(Self.isDelivered(await provider.send(Self.message())))
            fake.expireProviderTokensSeen()

            let outcomes = await Self.sendConcurrently(100, through: provider)
            #expect(outcomes.filter { !Self.isDelivered($0) }.count == 0)
            // However many pushes were refused with the old token, one new token replaced it.
            #expect(fake.distinctProviderTokens == 2)
            #expect(provider.tokens.issuedCount == 2)
            #expect(fake.refusals.allSatisfy { $0.reason == "ExpiredProviderToken" })
        }
    }

    @Test func providerTokenRefusedAfterReplacementIsRetry() async throws {
        try await withGateway { fake, provider in
            fake.answerNext(2, with: .expiredProviderToken)
            #expect(await provider.send(Self.message()) == .retry(reason: "ExpiredProviderToken", after: nil))
            #expect(fake.refusals.count == 2)
            #expect(fake.distinctProviderTokens == 2)
            // A second refusal within 20 minutes does not make a third token: it would be TooManyProviderTokenUpdates.
            fake.answerNext(1, with: .expiredProviderToken)
            #expect(await provider.send(Self.message()) == .retry(reason: "ExpiredProviderToken", after: nil))
            #expect(fake.distinctProviderTokens == 2)
        }
    }

    @Test func oversizedPayloadIsRejectedWithoutBeingSent() async throws {
        try await withGateway { fake, provider in
            let filler = String(repeating: "x", count: APNsProvider.maximumPayloadBytes)
            let message = Self.message(payload: Data(#"{"aps":{"alert":"\#(filler)"}}"#.utf8))
            #expect(await provider.send(message) == .rejected(reason: "PayloadTooLarge"))

            let exactly = String(repeating: "x", count: APNsProvider.maximumPayloadBytes - #"{"aps":{"alert":""}}"#.utf8.count)
            #expect(Self.isDelivered(await provider.send(Self.message(payload: Data(#"{"aps":{"alert":"\#(exactly)"}}"#.utf8)))))
            #expect(fake.refusals.isEmpty)
            #expect(fake.accepted.count == 1)
        }
    }

    @Test func payloadTooLargeFromAppleIsRejectedOnce() async throws {
        try await withGateway { fake, provider in
            fake.answerNext(1, with: .refuse(status: 413, reason: "PayloadTooLarge"))
            #expect(await provider.send(Self.message()) == .rejected(reason: "PayloadTooLarge"))
            #expect(fake.refusals.count == 1)
        }
    }

    @Test func configurationErrorsAreRejected() async throws {
        try await withGateway { fake, provider in
            #expect(await provider.send(Self.message(topic: "com.example.other")) == .rejected(reason: "BadTopic"))
            fake.answerNext(1, with: .refuse(status: 403, reason: "BadCertificateEnvironment"))
            #expect(await provider.send(Self.message()) == .rejected(reason: "BadCertificateEnvironment"))
            #expect(fake.refusals.map(\.reason) == ["BadTopic", "BadCertificateEnvironment"])
        }
        // Tokens signed by another key than the one Apple holds for the key id.
        try await withGateway(fakeKey: P256.Signing.PrivateKey().publicKey) { fake, provider in
            #expect(await provider.send(Self.message()) == .rejected(reason: "InvalidProviderToken"))
            #expect(fake.refusals.map(\.reason) == ["InvalidProviderToken"])
        }
    }

    @Test func malformedMessagesAreNotSent() async throws {
        try await withGateway { fake, provider in
            #expect(await provider.send(Self.message(to: "not-hex/../../x")) == .deviceGone(reason: "BadDeviceToken", since: nil))
            var badPriority = Self.message()
            badPriority.priority = 7
            #expect(await provider.send(badPriority) == .rejected(reason: "BadPriority"))
            #expect(await provider.send(Self.message(collapseID: String(repeating: "c", count: 65))) == .rejected(reason: "BadCollapseId"))
            #expect(await provider.send(Self.message(collapseID: "a\r\nx-injected: 1")) == .rejected(reason: "BadCollapseId"))
            #expect(fake.refusals.isEmpty && fake.accepted.isEmpty)
        }
    }

    // MARK: Provider token and connections

    @Test func oneProviderTokenServesManyPushes() async throws {
        try await withGateway { fake, provider in
            for _ in 0..<3 {
                let outcomes = await Self.sendConcurrently(50, through: provider)
                #expect(outcomes.filter { !Self.isDelivered($0) }.count == 0)
            }
            #expect(fake.accepted.count == 150)
            #expect(fake.distinctProviderTokens == 1)
            #expect(provider.tokens.issuedCount == 1)
        }
    }

    @Test func concurrentPushesShareOneHTTP2Connection() async throws {
        try await withGateway { fake, provider in
            // A running server's client is warm: its connection is open before a burst.
            #expect(Self.isDelivered(await provider.send(Self.message())))
            let outcomes = await Self.sendConcurrently(150, through: provider)
            #expect(outcomes.filter { !Self.isDelivered($0) }.count == 0)
            #expect(fake.accepted.count == 151)
            #expect(fake.connectionsAccepted == 1)
        }
    }

    @Test func coldBurstOpensFewConnections() async throws {
        try await withGateway { fake, provider in
            let outcomes = await Self.sendConcurrently(150, through: provider)
            #expect(outcomes.filter { !Self.isDelivered($0) }.count == 0)
            // Before ALPN has said h2, the client may open a few connections; never one per push.
            #expect(fake.connectionsAccepted <= 8)
        }
    }

    @Test func untrustedGatewayIsNeverSentTo() async throws {
        try await withGateway(trustCA: false) { fake, provider in
            let outcome = await provider.send(Self.message())
            guard case .retry = outcome else {
                Issue.record("expected a retry, got \(outcome)")
                return
            }
            #expect(fake.accepted.isEmpty && fake.refusals.isEmpty)
            #expect(fake.distinctProviderTokens == 0)
        }
    }

    @Test func environmentChoosesTheGateway() async throws {
        let fake = try await FakeAPNsServer.start(fakeOptions())
        var configuration = try configuration(gateway: fake.url, ca: fake.certificateAuthorityPEM)
        // Nothing listens on port 1: the sandbox push fails to connect.
        configuration.sandboxGatewayURL = "https://127.0.0.1:1"
        let provider = APNsProvider(configuration: configuration, logger: Self.logger, connectTimeout: .milliseconds(500), clock: .system)
        let production = await provider.send(Self.message())
        let sandbox = await provider.send(Self.message(environment: .sandbox))
        try await provider.shutdown()
        try await fake.stop()
        #expect(Self.isDelivered(production))
        guard case .retry = sandbox else {
            Issue.record("expected a retry, got \(sandbox)")
            return
        }
        #expect(fake.accepted.count == 1)
    }

    @Test func providerTokenLastsFiftyMinutesAndIsForcedAtMostOnceInTwenty() throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_763_000_000))
        let tokens = APNsProviderTokens(teamID: Self.teamID, keyID: Self.keyID, privateKey: key, now: { clock.now })
        func advance(minutes: Double) { clock.advance(by: minutes * 60) }

        let first = try tokens.current()
        let header = try Self.jsonPart(0, of: first.jwt)
        let claims = try Self.jsonPart(1, of: first.jwt)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == Self.keyID)
        #expect(claims["iss"] as? String == Self.teamID && claims["iat"] as? Int == 1_763_000_000)
        let parts = first.jwt.split(separator: ".").map(String.init)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Self.base64URLDecoded(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))

        advance(minutes: 49)
        #expect(try tokens.current() == first)
        advance(minutes: 1)
        let second = try tokens.current()
        #expect(second != first && second.issuedAt == first.issuedAt.addingTimeInterval(50 * 60))

        // Refused as expired: the first refusal replaces it, the others find it replaced.
        advance(minutes: 1)
        let forced = try #require(try tokens.refresh(replacing: second))
        #expect(forced != second)
        #expect(try tokens.refresh(replacing: second) == forced)
        #expect(try tokens.current() == forced)
        // Refused again within 20 minutes: no new token.
        advance(minutes: 19)
        #expect(try tokens.refresh(replacing: forced) == nil)
        advance(minutes: 1)
        #expect(try tokens.refresh(replacing: forced) != nil)
        #expect(tokens.issuedCount == 4)
    }

    // MARK: Helpers

    /// A fake gateway expecting this suite's team, key and topic, and a provider that trusts the fake's CA unless
    /// `trustCA` is `false`; both stop after `body`.
    private func withGateway(
        fakeKey: P256.Signing.PublicKey? = nil, trustCA: Bool = true,
        _ body: (FakeAPNsServer, APNsProvider) async throws -> Void
    ) async throws {
        var options = fakeOptions()
        if let fakeKey { options.publicKey = fakeKey }
        let fake = try await FakeAPNsServer.start(options)
        let provider = APNsProvider(
            configuration: try configuration(gateway: fake.url, ca: trustCA ? fake.certificateAuthorityPEM : nil), logger: Self.logger,
            requestTimeout: .seconds(30), connectTimeout: .seconds(1), clock: .system
        )
        do {
            try await body(fake, provider)
        } catch {
            try? await provider.shutdown()
            try? await fake.stop()
            throw error
        }
        try await provider.shutdown()
        try await fake.stop()
    }

    private func fakeOptions() -> FakeAPNsServer.Options {
        FakeAPNsServer.Options(teamID: Self.teamID, keyID: Self.keyID, publicKey: key.publicKey, topic: Self.topic)
    }

    func configuration(gateway: String, ca: String?) throws -> APNsConfiguration {
        APNsConfiguration(
            teamID: Self.teamID, keyID: Self.keyID, privateKey: key, defaultTopic: Self.topic, productionGatewayURL: gateway,
            sandboxGatewayURL: gateway, trustRoots: try ca.map { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
        )
    }

    func environment(keyFile: String) -> [String: String] {
        [
            "FITBASE_APNS_TEAM_ID": Self.teamID, "FITBASE_APNS_KEY_ID": Self.keyID, "FITBASE_APNS_KEY_FILE": keyFile,
            "FITBASE_APNS_TOPIC": Self.topic,
        ]
    }

    static func message(
        to device: String = randomDeviceToken(), environment: PushEnvironment = .production, topic: String? = nil,
        collapseID: String? = nil, payload: Data = alert
    ) -> PushMessage {
        PushMessage(deviceToken: device, environment: environment, topic: topic, collapseID: collapseID, id: UUID(), payload: payload)
    }

    static func isDelivered(_ outcome: PushOutcome) -> Bool {
        if case .delivered = outcome { return true }
        return false
    }

    static func randomDeviceToken() -> String {
        (0..<32).map { _ in String(UInt8.random(in: 0...255), radix: 16).leftPadded(to: 2) }.joined()
    }

    static func sendConcurrently(_ count: Int, through provider: APNsProvider) async -> [PushOutcome] {
        await withTaskGroup(of: PushOutcome.self) { group in
            for _ in 0..<count {
                group.addTask { await provider.send(message()) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    static func jsonPart(_ index: Int, of jwt: String) throws -> [String: Any] {
        let part = try #require(jwt.split(separator: ".").dropFirst(index).first)
        let data = try #require(base64URLDecoded(String(part)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func base64URLDecoded(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    func temporaryFile(_ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-apns-\(UUID().uuidString)")
        try Data(contents.utf8).write(to: url)
        return url.path
    }
}

/// A clock that moves only when told.
private final class TestClock: Sendable {
    private let date: Mutex<Date>

    init(_ date: Date) {
        self.date = Mutex(date)
    }

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0.addTimeInterval(seconds) }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
