import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@testable import FitBaseServer

/// A server others can reach (accounts part 3): no sign-in links in its log by accident, no master key beside the
/// data unnoticed, no database password echoed, no connection held open by a client that never finishes a request.
@Suite struct ExposureTests {
    @Test func aReachableServerWithoutSMTPRefusesToStartUnlessToldToLogMail() throws {
        do {
            _ = try ServerConfiguration.resolve(environment: ["FITBASE_HOST": "0.0.0.0"])
            Issue.record("a server on 0.0.0.0 without SMTP started")
        } catch {
            #expect(error.description.contains("FITBASE_SMTP_URL") && error.description.contains("FITBASE_MAIL=log"))
        }
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_HOST": "0.0.0.0", "FITBASE_MAIL": "log"]).accounts.logsMail)
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_HOST": "0.0.0.0", "FITBASE_SMTP_URL": "smtp://mail.example.com", "FITBASE_MAIL_FROM": "a@example.com"]).accounts.smtp != nil)
        #expect(try ServerConfiguration.resolve(environment: [:]).accounts.smtp == nil)  // loopback: links in the log are fine
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_MAIL": "smtp"]) }
    }

    @Test func aMasterKeyFileBesideTheDataIsWarnedAboutOnAReachableServer() throws {
        var reachable = try ServerConfiguration.resolve(environment: ["FITBASE_HOST": "0.0.0.0", "FITBASE_MAIL": "log", "FITBASE_DATA_DIR": "/var/lib/fitbase"])
        #expect(MasterKey.placementWarning(for: reachable)?.contains("/var/lib/fitbase/master.key") == true)
        reachable.identityProviders.masterKeyFile = "/var/lib/fitbase/keys/master.key"
        #expect(MasterKey.placementWarning(for: reachable) != nil)
        reachable.identityProviders.masterKeyFile = "/run/secrets/fitbase-master-key"
        #expect(MasterKey.placementWarning(for: reachable) == nil)
        reachable.identityProviders.masterKey = Data(count: 32).base64EncodedString()
        #expect(MasterKey.placementWarning(for: reachable) == nil)
        #expect(MasterKey.placementWarning(for: try ServerConfiguration.resolve(environment: [:])) == nil)
    }

    @Test func aDatabaseURLThatCannotBeReadIsNeverEchoedWithItsPassword() {
        do {
            _ = try ServerConfiguration.resolve(environment: ["FITBASE_DATABASE_URL": "mysql://fit:s3cret-pw@db.internal:3306/fit"])
            Issue.record("a MySQL URL was taken")
        } catch {
            #expect(!"\(error)".contains("s3cret-pw"))
            #expect("\(error)".contains("mysql://fit:***@db.internal:3306/fit"))
        }
    }

    @Test func aClientThatNeverFinishesItsRequestIsDisconnected() async throws {
        try await withApp(.sqlite, options: .init(live: true, configure: { $0.httpIdleTimeout = .seconds(1) })) { client, app in
            let port = try #require(client.port)
            // Half a request, then nothing: the connection is closed after the idle time.
            let socket = try LoopbackSocket.connect(port: port)
            defer { close(socket) }
            _ = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n".withCString { send(socket, $0, strlen($0), 0) }
            let began = ContinuousClock.now
            var byte: UInt8 = 0
            let read = recv(socket, &byte, 1, 0)  // blocks until the server closes (0) or the 10 s receive timeout (-1)
            #expect(read == 0)
            #expect(ContinuousClock.now - began < .seconds(8))
            // A whole request is still answered. (Over a socket of its own: the test client's connection, idle
            // meanwhile, was closed too.)
            let whole = try LoopbackSocket.connect(port: port)
            defer { close(whole) }
            _ = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".withCString { send(whole, $0, strlen($0), 0) }
            var answer = [UInt8](repeating: 0, count: 64)
            let count = recv(whole, &answer, answer.count, 0)
            #expect(count > 0 && String(decoding: answer.prefix(max(count, 0)), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        }
    }
}
