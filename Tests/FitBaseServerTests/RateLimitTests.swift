import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import FitBaseServer

/// The per-instance request limiter: one bucket per account and one per client address in each class, 429
/// `rate_limited` past either, the ratelimit headers on every answer of a limited route, exempt routes untouched.
@Suite struct RateLimitTests {
    typealias Rate = RateLimitConfiguration.Rate

    /// A limit no test refills (one request an hour after the burst).
    static func tiny(_ capacity: Int) -> Rate { Rate(capacity, per: 3600) }

    // MARK: Classes

    @Test(arguments: TestEngines.all)
    func everyClassAnswers429PastItsLimitWithTheHeaders(engine: DatabaseEngine) async throws {
        var limits = RateLimitConfiguration.uniform(.init(perUser: Self.tiny(2), perAddress: nil))
        limits.writes.perUser = Self.tiny(3)  // the sign-up is anonymous: counted by address only, so not here
        try await withLimitedApp(engine, limits, demoCatalog: true) { client in
            let account = try await client.signUp()
            let routes: [(RequestClass, HTTPRequest.Method, String, [String: Any]?, HTTPResponse.Status, Int)] = [
                (.reads, .get, "/v1/me", nil, .ok, 2),
                (.writes, .post, "/v1/me/consents", ["kind": "marketing", "version": "1", "granted": true], .created, 3),
                (.expensive, .get, "/v1/history/stats", nil, .ok, 2),
                (.model, .get, "/v1/recommendations/today", nil, .ok, 2),
            ]
            for (requestClass, method, path, body, status, capacity) in routes {
                let name = requestClass.rawValue
                for used in 1...capacity {
                    let response = try await client.json(method, path, body: body, token: account.accessToken)
                    #expect(response.status == status, "\(path): \(String(buffer: response.body))")
                    #expect(response.headers[.rateLimitPolicy] == "\"\(name)\";q=\(capacity);w=3600", "\(path)")
                    #expect(response.headers[.rateLimit]?.hasPrefix("\"\(name)\";r=\(capacity - used);t=") == true, "\(path)")
                }
                let refused = try await client.json(method, path, body: body, token: account.accessToken)
                let problem = try expectProblem(refused, .rateLimited)
                #expect(refused.status == .tooManyRequests)
                #expect((problem["detail"] as? String)?.contains("\"\(name)\"") == true)
                let retryAfter = try #require(Int(refused.headers[.retryAfter] ?? ""))
                // One token an hour after a burst of `capacity`: `capacity` tokens take the whole hour.
                #expect(retryAfter > 0 && retryAfter <= 3600 / capacity)
                #expect(refused.headers[.rateLimit] == "\"\(name)\";r=0;t=\(retryAfter)")
                #expect(refused.headers[.rateLimitPolicy] == "\"\(name)\";q=\(capacity);w=3600")
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func twoAccountsDoNotShareABucket(engine: DatabaseEngine) async throws {
        try await withLimitedApp(engine, .uniform(.init(perUser: Self.tiny(2), perAddress: nil))) { client in
            let first = try await client.signUp()
            let second = try await client.signUp()
            for _ in 0..<2 { #expect(try await client.json(.get, "/v1/me", token: first.accessToken).status == .ok) }
            #expect(try await client.json(.get, "/v1/me", token: first.accessToken).status == .tooManyRequests)
            let other = try await client.json(.get, "/v1/me", token: second.accessToken)
            #expect(other.status == .ok)
            #expect(other.headers[.rateLimit]?.hasPrefix("\"reads\";r=1;") == true)
        }
    }

    @Test(arguments: TestEngines.all)
    func aRefusedRequestWritesNothing(engine: DatabaseEngine) async throws {
        var limits = RateLimitConfiguration.testing
        limits.writes.perUser = Self.tiny(1)
        try await withLimitedApp(engine, limits) { client in
            let account = try await client.signUp()
            let granted = try await client.json(
                .post, "/v1/me/consents", body: ["kind": "healthData", "version": "1", "granted": true], token: account.accessToken
            )
            #expect(granted.status == .created)
            let withdrawn = try await client.json(
                .post, "/v1/me/consents", body: ["kind": "healthData", "version": "2", "granted": false], token: account.accessToken
            )
            try expectProblem(withdrawn, .rateLimited)
            let consents = try #require(json(try await client.json(.get, "/v1/me/consents", token: account.accessToken))["items"] as? [[String: Any]])
            #expect(consents.count == 1)
            #expect(consents.first?["granted"] as? Bool == true)
            #expect((consents.first?["history"] as? [Any])?.count == 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func errorsOfALimitedRouteCarryTheHeadersToo(engine: DatabaseEngine) async throws {
        try await withLimitedApp(engine, .uniform(.init(perUser: Self.tiny(5), perAddress: nil))) { client in
            let account = try await client.signUp()
            let missing = try await client.json(.get, "/v1/plans/\(UUID())", token: account.accessToken)
            try expectProblem(missing, .notFound)
            #expect(missing.headers[.rateLimit] == "\"reads\";r=4;t=720")
            let invalid = try await client.json(.post, "/v1/plans", body: ["nonsense": true], token: account.accessToken)
            #expect(invalid.status == .badRequest)
            #expect(invalid.headers[.rateLimitPolicy] == "\"writes\";q=5;w=3600")
        }
    }

    // MARK: Addresses

    @Test(arguments: TestEngines.all)
    func theAddressBucketCatchesOneAddressUsingManyAccounts(engine: DatabaseEngine) async throws {
        var limits = RateLimitConfiguration.testing
        limits.reads = .init(perUser: Self.tiny(2), perAddress: Self.tiny(3))
        try await withLimitedApp(engine, limits, trustedProxies: ["127.0.0.1"], live: true) { client in
            var accounts: [TestAccount] = []
            for _ in 0..<4 { accounts.append(try await client.signUp()) }
            func me(_ account: TestAccount, from address: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/me", method: .get, headers: [.authorization: "Bearer \(account.accessToken)", .xForwardedFor: address]
                )
            }
            for account in accounts.prefix(3) { #expect(try await me(account, from: "198.51.100.7").status == .ok) }
            // A fourth account behind the same address is refused by the address's bucket…
            let refused = try await me(accounts[3], from: "198.51.100.7")
            try expectProblem(refused, .rateLimited)
            #expect(refused.headers[.rateLimitPolicy] == "\"reads\";q=3;w=3600")
            // …which did not cost the account its token: from elsewhere it has spent one of two (its bucket is now the
            // tighter, with one left).
            let elsewhere = try await me(accounts[3], from: "198.51.100.8")
            #expect(elsewhere.status == .ok)
            #expect(elsewhere.headers[.rateLimitPolicy] == "\"reads\";q=2;w=3600")
            #expect(elsewhere.headers[.rateLimit]?.hasPrefix("\"reads\";r=1;") == true)
            // Anonymous requests count against their address only.
            for _ in 0..<3 {
                #expect(try await client.execute(uri: "/v1/workouts", method: .get, headers: [.xForwardedFor: "203.0.113.1"]).status == .ok)
            }
            try expectProblem(try await client.execute(uri: "/v1/workouts", method: .get, headers: [.xForwardedFor: "203.0.113.1"]), .rateLimited)
        }
    }

    @Test(arguments: TestEngines.all)
    func theLivenessProbeIsExemptAndSignedNotificationsHaveAnAddressBucketOfTheirOwn(engine: DatabaseEngine) async throws {
        var limits = RateLimitConfiguration.uniform(.init(perUser: Self.tiny(1), perAddress: Self.tiny(1)))
        limits.external = .init(perUser: nil, perAddress: Self.tiny(4))
        try await withLimitedApp(engine, limits, live: true) { client in
            for _ in 0..<5 {
                let probe = try await client.execute(uri: "/healthz", method: .get)
                #expect(probe.status == .ok)
                #expect(probe.headers[.rateLimit] == nil && probe.headers[.rateLimitPolicy] == nil)
            }
            // The readiness probe and what Apple and Stripe send share one generous bucket per address.
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            for path in ["/v1/webhooks/stripe", "/v1/webhooks/appstore", "/v1/auth/apple/notifications"] {
                let webhook = try await client.execute(uri: path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}"))
                #expect(webhook.status != .tooManyRequests, "\(path)")
                #expect(webhook.headers[.rateLimitPolicy] == "\"external\";q=4;w=3600", "\(path)")
            }
            let flooded = try await client.execute(uri: "/v1/webhooks/appstore", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}"))
            try expectProblem(flooded, .rateLimited)
            // Other classes keep their own buckets (from 127.0.0.1, the test's socket).
            #expect(try await client.execute(uri: "/v1/workouts", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/v1/workouts", method: .get).status == .tooManyRequests)
        }
    }

    @Test func ordinaryTestServersRunTheLimiterAndOffTurnsItOff() async throws {
        try await withLimitedApp(.sqlite, .testing) { client in
            let account = try await client.signUp()
            #expect(try await client.json(.get, "/v1/me", token: account.accessToken).headers[.rateLimitPolicy] == "\"reads\";q=1000000;w=60")
        }
        try await withLimitedApp(.sqlite, .off) { client in
            let account = try await client.signUp()
            #expect(try await client.json(.get, "/v1/me", token: account.accessToken).headers[.rateLimitPolicy] == nil)
        }
    }

    // MARK: Classification

    @Test func everyOperationHasTheClassItShould() throws {
        #expect(RequestClass.of(.get, "/v1/workouts/{workoutId}") == .reads)
        #expect(RequestClass.of(.head, "/v1/workouts") == .reads)
        #expect(RequestClass.of(.get, "/v1/events") == .reads)
        #expect(RequestClass.of(.post, "/v1/sync/push") == .writes)
        #expect(RequestClass.of(.post, "/v1/health/samples") == .writes)
        #expect(RequestClass.of(.post, "/v1/auth/signin") == .writes)
        #expect(RequestClass.of(.delete, "/v1/me") == .writes)
        for path in ["/v1/health/samples", "/v1/health/summary", "/v1/health/overview", "/v1/history/stats", "/v1/me/export", "/v1/recommendations/week"] {
            #expect(RequestClass.of(.get, path) == .expensive, "\(path)")
        }
        #expect(RequestClass.of(.get, "/v1/recommendations/today") == .model)
        #expect(RequestClass.of(.post, "/v1/recommendations/refresh") == .model)
        #expect(RequestClass.of(.get, "/healthz") == nil)
        for (method, path) in [
            (HTTPRequest.Method.get, "/readyz"), (.post, "/v1/webhooks/stripe"), (.post, "/v1/webhooks/appstore"), (.post, "/v1/auth/apple/notifications"),
        ] {
            #expect(RequestClass.of(method, path) == .external, "\(path)")
        }
    }

    // MARK: Buckets (a clock of the test's own)

    @Test func aBucketRefillsAtItsRateAndSaysWhenTheNextTokenComes() {
        let clock = TestClock()
        let limiter = RequestRateLimiter(
            configuration: .uniform(.init(perUser: Rate(2, per: 60), perAddress: nil)), now: { clock.now }
        )
        let user = UserID(rawValue: UUID())
        #expect(limiter.admit(.reads, user: user, address: nil)?.remaining == 1)
        let last = limiter.admit(.reads, user: user, address: nil)
        #expect(last?.allowed == true && last?.remaining == 0 && last?.secondsUntilToken == 30)
        let refused = limiter.admit(.reads, user: user, address: nil)
        #expect(refused?.allowed == false && refused?.secondsUntilToken == 30)
        clock.advance(seconds: 29)
        #expect(limiter.admit(.reads, user: user, address: nil)?.allowed == false)
        clock.advance(seconds: 1)
        #expect(limiter.admit(.reads, user: user, address: nil)?.allowed == true)
        clock.advance(seconds: 3600)
        let full = limiter.admit(.reads, user: user, address: nil)
        #expect(full?.remaining == 1 && full?.secondsUntilToken == 30)
        // Nothing to count a request against: no bucket applies.
        #expect(limiter.admit(.reads, user: nil, address: nil) == nil)
        #expect(limiter.admit(.reads, user: nil, address: "192.0.2.1") == nil)
    }

    @Test func anAddressThatRefusesGivesTheAccountItsTokenBack() {
        let clock = TestClock()
        let limiter = RequestRateLimiter(
            configuration: .uniform(.init(perUser: Rate(5, per: 60), perAddress: Rate(1, per: 60))), now: { clock.now }
        )
        let user = UserID(rawValue: UUID())
        #expect(limiter.admit(.writes, user: user, address: "192.0.2.1")?.allowed == true)
        for _ in 0..<3 { #expect(limiter.admit(.writes, user: user, address: "192.0.2.1")?.allowed == false) }
        let elsewhere = limiter.admit(.writes, user: user, address: "192.0.2.2")
        #expect(elsewhere?.allowed == true)
        // The user's bucket lost two tokens (one request each from two addresses), not five; the new address's is tighter.
        #expect(elsewhere?.rate == Rate(1, per: 60) && elsewhere?.remaining == 0)
        #expect(limiter.admit(.writes, user: user, address: nil)?.remaining == 2)
    }

    @Test func aFloodOfAddressesCannotGrowTheBucketsWithoutBound() {
        let clock = TestClock()
        var configuration = RateLimitConfiguration.uniform(.init(perUser: Rate(10, per: 60), perAddress: Rate(10, per: 60)))
        configuration.maxBuckets = 1_000
        let limiter = RequestRateLimiter(configuration: configuration, now: { clock.now })
        for index in 0..<50_000 {
            _ = limiter.admit(.reads, user: nil, address: "10.\(index >> 16).\((index >> 8) & 255).\(index & 255)")
        }
        #expect(limiter.bucketCount <= 1_000)
        #expect(limiter.bucketCount > 0)
    }

    @Test func idleBucketsAreDroppedOnceFullAgain() {
        let clock = TestClock()
        let limiter = RequestRateLimiter(
            configuration: .uniform(.init(perUser: Rate(10, per: 60), perAddress: Rate(10, per: 60))), shards: 1, now: { clock.now }
        )
        for index in 0..<100 { _ = limiter.admit(.reads, user: UserID(rawValue: UUID()), address: "192.0.2.\(index)") }
        #expect(limiter.bucketCount == 200)
        // Two refill periods later every one of them is full again and the next request finds only its own.
        clock.advance(seconds: 61)
        _ = limiter.admit(.reads, user: nil, address: "198.51.100.1")
        clock.advance(seconds: 61)
        _ = limiter.admit(.reads, user: nil, address: "198.51.100.1")
        #expect(limiter.bucketCount == 1)
    }

    // MARK: Settings

    @Test func settingsAreReadFromTheEnvironment() throws {
        let defaults = try ServerConfiguration.resolve(environment: [:]).rateLimits
        #expect(defaults == .defaults && defaults.isEnabled)
        #expect(defaults.external.perUser == nil && defaults.external.perAddress == Rate(600, per: 60))
        for requestClass in RequestClass.allCases where requestClass != .external {
            let allowance = defaults[requestClass]
            // An address holds many accounts (a gym's Wi-Fi): its allowance is looser than one account's.
            #expect(try #require(allowance.perAddress).capacity > (try #require(allowance.perUser)).capacity)
        }
        let configured = try ServerConfiguration.resolve(environment: [
            "FITBASE_RATE_LIMITS": "on", "FITBASE_RATE_LIMIT_WRITES": "10/1m", "FITBASE_RATE_LIMIT_READS_ADDRESS": "off",
            "FITBASE_RATE_LIMIT_MODEL": "1000/1h", "FITBASE_RATE_LIMIT_EXPENSIVE_ADDRESS": " 5/30 ",
        ]).rateLimits
        #expect(configured.writes.perUser == Rate(10, per: 60))
        #expect(configured.reads.perAddress == nil)
        #expect(configured.model.perUser == Rate(1000, per: 3600))
        #expect(configured.expensive.perAddress == Rate(5, per: 30))
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_RATE_LIMIT_EXTERNAL_ADDRESS": "60/1m"]).rateLimits.external.perAddress == Rate(60, per: 60))
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_RATE_LIMITS": "off"]).rateLimits.isEnabled == false)
    }

    @Test(arguments: [
        ("FITBASE_RATE_LIMITS", "sometimes"), ("FITBASE_RATE_LIMIT_WRITES", "fast"), ("FITBASE_RATE_LIMIT_WRITES", "0/60s"),
        ("FITBASE_RATE_LIMIT_READS", "10/0s"), ("FITBASE_RATE_LIMIT_READS", "10/25h"), ("FITBASE_RATE_LIMIT_MODEL", "10/60d"),
        ("FITBASE_RATE_LIMIT_EXPENSIVE_ADDRESS", "-1/60s"), ("FITBASE_RATE_LIMIT_MODEL_ADDRESS", "10"),
    ])
    func badSettingsAreRefusedNamingTheVariable(variable: String, value: String) {
        #expect {
            try ServerConfiguration.resolve(environment: [variable: value])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.source == variable && error.description.contains(variable) && error.description.contains(value)
                && !error.description.contains("\n")
        }
    }

    // MARK: Helpers

    /// Runs `test` against an application with `limits` (in-process, or over a socket from 127.0.0.1 when `live`).
    private func withLimitedApp(
        _ engine: DatabaseEngine, _ limits: RateLimitConfiguration, demoCatalog: Bool = false, trustedProxies: [String] = [],
        live: Bool = false, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let options = TestAppOptions(
            live: live, demoCatalog: demoCatalog, rateLimits: limits, configure: { $0.accounts = AccountsConfiguration(trustedProxies: trustedProxies) }
        )
        try await withApp(engine, options: options) { client, _ in try await test(client) }
    }
}

/// A monotonic clock the test moves by hand.
private final class TestClock: Sendable {
    private let nanoseconds = Mutex<UInt64>(1_000_000_000)

    var now: UInt64 { nanoseconds.withLock { $0 } }

    func advance(seconds: UInt64) {
        nanoseconds.withLock { $0 += seconds * 1_000_000_000 }
    }
}
