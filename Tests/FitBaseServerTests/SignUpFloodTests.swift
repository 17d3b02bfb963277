import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Logging
import SQLKit
import Synchronization
import Testing

@testable import FitBaseServer

/// Sign-up and e-mail floods (accounts part 3): one address cannot fill the hashing slots with sign-ups, nor one
/// mailbox with verification e-mails.
@Suite struct SignUpFloodTests {
    @Test(arguments: TestEngines.all)
    func oneClientAddressSignsUpTwentyTimesAnHour(engine: DatabaseEngine) async throws {
        try await withFloodApp(engine, RateLimitConfiguration.defaults) { client in
            func signUp(_ n: Int, from address: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/auth/signup", method: .post,
                    headers: [.contentType: "application/json", .xForwardedFor: address],
                    body: ByteBuffer(string: #"{"email":"flood-\#(n)-\#(UUID().uuidString.prefix(6))@example.com","password":"correct horse battery"}"#)
                )
            }
            for n in 0..<20 { #expect(try await signUp(n, from: "2001:db8:7:1::10").status == .accepted) }
            // The 21st from the same /64 — another address in it — is refused, with when to try again.
            let refused = try await signUp(20, from: "2001:db8:7:1:ffff::99")
            try expectProblem(refused, .tooManyAttempts)
            #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 > 3000)
            // Another network is not.
            #expect(try await signUp(21, from: "2001:db8:7:2::10").status == .accepted)
            #expect(try await signUp(22, from: "198.51.100.20").status == .accepted)
        }
    }

    @Test func theLimitTurnsOffWithTheRest() async throws {
        try await withFloodApp(.sqlite, RateLimitConfiguration.off) { client in
            for n in 0..<25 {
                let response = try await client.execute(
                    uri: "/v1/auth/signup", method: .post, headers: [.contentType: "application/json", .xForwardedFor: "198.51.100.9"],
                    body: ByteBuffer(string: #"{"email":"bulk-\#(n)@example.com","password":"correct horse battery"}"#)
                )
                #expect(response.status == .accepted)
            }
        }
        var limits = try RateLimitConfiguration.resolve(environment: ["FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS": "5/1h"])
        #expect(limits.signUpsPerAddress == .init(5, per: 3600))
        limits = try RateLimitConfiguration.resolve(environment: ["FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS": "off"])
        #expect(limits.signUpsPerAddress == nil)
    }

    @Test(arguments: TestEngines.all)
    func oneMailboxGetsThreeVerificationEmailsAnHour(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            // Sign up, delete, sign up again…: each sign-up would mail the victim's box. (Each message is waited for
            // before the deletion, which takes the account's unsent mail with it.)
            for sent in 1...3 {
                let account = try await client.signUp("inbox@example.com")
                #expect(try await mailer.received(by: "inbox@example.com", atLeast: sent).count == sent)
                #expect(try await client.json(.delete, "/v1/me", token: account.accessToken).status == .noContent)
            }
            let fourth = try await client.json(.post, "/v1/auth/signup", body: ["email": "inbox@example.com", "password": "correct horse battery"])
            try expectProblem(fourth, .tooManyAttempts)
            #expect(try await mailer.received(by: "inbox@example.com", atLeast: 3).count == 3)
        }
    }

    @Test func ipv6AddressesCountByTheirSlash64() {
        #expect(ClientAddress.bucket(of: "2001:db8:7:1::10") == "2001:db8:7:1::/64")
        #expect(ClientAddress.bucket(of: "2001:0db8:0007:0001:ffff:0:0:99") == "2001:db8:7:1::/64")
        #expect(ClientAddress.bucket(of: "::ffff:198.51.100.7") == "198.51.100.7")
        #expect(ClientAddress.bucket(of: "198.51.100.7") == "198.51.100.7")
    }

    /// A live application behind a trusted proxy at 127.0.0.1, so `X-Forwarded-For` names the client.
    private func withFloodApp(
        _ engine: DatabaseEngine, _ limits: RateLimitConfiguration, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let options = TestAppOptions(live: true, rateLimits: limits, configure: { $0.accounts = AccountsConfiguration(trustedProxies: ["127.0.0.1", "::1"]) })
        try await withApp(engine, options: options) { client, _ in try await test(client) }
    }
}

/// Accounts never verified do not hold their address for ever.
@Suite struct UnverifiedAccountTests {
    @Test(arguments: TestEngines.all)
    func accountsNeverVerifiedAreDeletedAfterTheirWeek(engine: DatabaseEngine) async throws {
        let clock = MovableClock()
        let options = TestAppOptions(live: true, clock: clock.serverClock, configure: { $0.housekeeping = (.milliseconds(200), .milliseconds(200)) })
        try await withApp(engine, options: options) { client, app in
            _ = try await client.signUp("squatted@example.com")
            let verified = try await client.signUp("verified@example.com")
            try await app.database.transaction { db in
                try await db.update("users").set("email_verified_at", to: clock.serverClock.now).where("email", .equal, "verified@example.com").run()
            }
            // Eight days on, an account made just now is recent.
            clock.advance(by: 8 * 86_400)
            let recent = try await client.signUp("recent@example.com")
            let squatted = await eventually(timeout: .seconds(20)) {
                try await app.database.withConnection { db in
                    try await db.select().column("id").from("users").where("email", .equal, "squatted@example.com").first() == nil
                }
            }
            #expect(squatted)
            // The address is free again; the others are untouched.
            #expect(try await client.json(.post, "/v1/auth/signup", body: ["email": "squatted@example.com", "password": "correct horse battery"]).status == .accepted)
            #expect(try await client.json(.get, "/v1/me", token: recent.accessToken).status == .ok)
            #expect(try await client.json(.get, "/v1/me", token: try await client.signIn(verified).accessToken).status == .ok)
        }
        #expect(try AccountsConfiguration.resolve(environment: ["FITBASE_UNVERIFIED_ACCOUNT_DAYS": "off"]).unverifiedAccountDays == nil)
        #expect(try AccountsConfiguration.resolve(environment: [:]).unverifiedAccountDays == 7)
        #expect(throws: ConfigurationError.self) { try AccountsConfiguration.resolve(environment: ["FITBASE_UNVERIFIED_ACCOUNT_DAYS": "0"]) }
    }
}

/// Behind an untrusted proxy every client shares one address; the operator is told once.
@Suite struct UntrustedProxyWarningTests {
    @Test func aPrivatePeerWithoutTrustedProxiesIsReportedOnce() throws {
        let lines = RecordedLines()
        let warning = UntrustedProxyWarning(logger: Logger(label: "test") { _ in RecordingLogHandler(lines: lines) })
        warning.check(peer: try SocketAddress(ipAddress: "203.0.113.9", port: 4000))
        #expect(lines.all.isEmpty)
        for peer in ["10.0.3.7", "10.0.3.8", "fd00::1"] { warning.check(peer: try SocketAddress(ipAddress: peer, port: 4000)) }
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("FITBASE_TRUSTED_PROXIES") == true)
    }
}

final class RecordedLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}

struct RecordingLogHandler: LogHandler {
    let lines: RecordedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.level) \(event.message)")
    }
}
