import Foundation
import NIOSSL
import Testing

@testable import FitBaseServer

@Suite struct SMTPMailerTests {
    static let sender = "FitBase Coach <no-reply@fitbase.test>"
    static let message = MailMessage(
        to: "ada@example.com",
        subject: "Dein Trainingsplan für die Woche 💪",
        text: "Hallo Ada,\n.\n.hidden line starts with a dot\nA = sign, a tab\tand a trailing space \n"
            + String(repeating: "long line ", count: 40) + "\nGrüße 💪\n",
        html: "<p>Hallo Ada,</p>\n.<p>Plan: 3 × 20 min</p>\n<p>Grüße 💪</p>"
    )

    let certificates: SMTPTestCertificates

    init() throws {
        certificates = try SMTPTestCertificates()
    }

    @Test func deliversAFaithfulMessageOverPlainSMTP() async throws {
        let server = try await FakeSMTPServer.start()
        try await mailer(for: server, security: .none).send(Self.message, from: Self.sender)

        let received = try #require(server.messages.first)
        #expect(server.messages.count == 1)
        #expect(received.mailFrom == "no-reply@fitbase.test")
        #expect(received.recipients == ["ada@example.com"])
        #expect(server.commands.last == "QUIT")

        let mail = try ParsedMail(received.content)
        #expect(mail.headers["from"] == Self.sender)
        #expect(mail.headers["to"] == "ada@example.com")
        #expect(mail.headers["subject"] == Self.message.subject)
        #expect(mail.headers["mime-version"] == "1.0")
        #expect(mail.headers["message-id"]?.hasSuffix("@fitbase.test>") == true)
        let date = try #require(mail.headers["date"])
        #expect(abs(try #require(ParsedMail.date(date)).timeIntervalSinceNow) < 60)
        #expect(mail.headers["content-type"]?.hasPrefix("multipart/alternative;") == true)
        #expect(mail.parts["text/plain"] == Self.message.text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(mail.parts["text/html"] == Self.message.html.replacingOccurrences(of: "\n", with: "\r\n"))

        // Lines that start with a dot went out with a second one, and nothing else broke the line rules.
        #expect(received.wireLines.contains(".."))
        #expect(received.wireLines.contains("..hidden line starts with a dot"))
        #expect(received.wireLines.allSatisfy { $0.utf8.count <= 78 && $0.unicodeScalars.allSatisfy(\.isASCII) })
    }

    @Test func upgradesWithSTARTTLSAndAuthenticatesWithPLAIN() async throws {
        let server = try await FakeSMTPServer.start(
            .init(tls: .startTLS(try certificates.serverContext()), authMechanisms: ["LOGIN", "PLAIN"])
        )
        try await mailer(for: server, security: .startTLS, credentials: .init(user: "mailer", password: "correct horse"))
            .send(Self.message, from: Self.sender)

        let received = try #require(server.messages.first)
        #expect(received.wasEncrypted)
        #expect(received.authenticatedUser == "mailer")
        #expect(server.commands.filter { $0.hasPrefix("EHLO ") }.count == 2)
        #expect(server.commands.contains("AUTH PLAIN"))
        #expect(server.commands.firstIndex(of: "STARTTLS")! < server.commands.firstIndex(of: "AUTH PLAIN")!)
    }

    @Test func authenticatesWithLOGINWhenPLAINIsNotOffered() async throws {
        let server = try await FakeSMTPServer.start(.init(tls: .startTLS(try certificates.serverContext()), authMechanisms: ["LOGIN"]))
        try await mailer(for: server, security: .startTLS, credentials: .init(user: "mailer", password: "correct horse"))
            .send(Self.message, from: Self.sender)

        #expect(server.messages.first?.authenticatedUser == "mailer")
        #expect(server.commands.contains("AUTH LOGIN"))
    }

    @Test func speaksTLSFromTheFirstByteForSMTPS() async throws {
        let server = try await FakeSMTPServer.start(.init(tls: .implicit(try certificates.serverContext()), authMechanisms: ["PLAIN"]))
        try await mailer(for: server, security: .implicitTLS, credentials: .init(user: "mailer", password: "correct horse"))
            .send(Self.message, from: Self.sender)

        let received = try #require(server.messages.first)
        #expect(received.wasEncrypted)
        #expect(received.authenticatedUser == "mailer")
        #expect(!server.commands.contains("STARTTLS"))
    }

    @Test func checksTheCertificateByIPAddressWhenTheHostIsOne() async throws {
        let server = try await FakeSMTPServer.start(.init(tls: .implicit(try certificates.serverContext())))
        try await mailer(for: server, host: "127.0.0.1", security: .implicitTLS).send(Self.message, from: Self.sender)

        #expect(server.messages.count == 1)
    }

    @Test func aWrongPasswordIsPermanent() async throws {
        let server = try await FakeSMTPServer.start(.init(tls: .startTLS(try certificates.serverContext()), authMechanisms: ["PLAIN"]))
        let error = await deliveryError {
            try await mailer(for: server, security: .startTLS, credentials: .init(user: "mailer", password: "wrong"))
                .send(Self.message, from: Self.sender)
        }

        #expect(error?.isPermanent == true)
        #expect(error?.reason.contains("535") == true)
        #expect(error?.reason.contains("wrong") == false)
        #expect(server.messages.isEmpty)
    }

    @Test(
        "a 4xx reply is transient, a 5xx reply permanent",
        arguments: [
            (FakeSMTPServer.Step.greeting, "421 4.3.2 service shutting down"),
            (.ehlo, "421 4.7.0 too busy, try later"),
            (.mailFrom, "451 4.3.0 try again later"),
            (.rcptTo, "550 5.1.1 <ada@example.com>: mailbox unknown"),
            (.data, "452 4.3.1 insufficient storage"),
            (.message, "554 5.6.0 message content rejected"),
        ]
    )
    func mapsReplyCodes(step: FakeSMTPServer.Step, reply: String) async throws {
        let server = try await FakeSMTPServer.start(.init(faults: [step: .reply(reply)]))
        let error = await deliveryError { try await mailer(for: server, security: .none).send(Self.message, from: Self.sender) }

        #expect(error?.isPermanent == reply.hasPrefix("5"))
        #expect(error?.reason.contains(reply) == true)
        #expect(server.messages.isEmpty)
    }

    @Test func fallsBackToHELOWhenEHLOIsRejected() async throws {
        let server = try await FakeSMTPServer.start(.init(faults: [.ehlo: .reply("502 5.5.1 EHLO not implemented")]))
        try await mailer(for: server, security: .none).send(Self.message, from: Self.sender)

        #expect(server.commands.contains { $0.hasPrefix("HELO [127.0.0.1]") })
        #expect(server.messages.count == 1)
    }

    @Test func aDroppedConnectionIsTransient() async throws {
        let server = try await FakeSMTPServer.start(.init(faults: [.data: .disconnect]))
        let error = await deliveryError { try await mailer(for: server, security: .none).send(Self.message, from: Self.sender) }

        #expect(error == .transient("localhost:\(server.port) closed the connection"))
    }

    /// The reply timeout is what ends the wait (its reason names it); the time limit only stops a hang, since wall
    /// time on a loaded machine says nothing.
    @Test(.timeLimit(.minutes(1))) func aSilentServerTimesOut() async throws {
        let server = try await FakeSMTPServer.start(.init(faults: [.mailFrom: .silence]))
        let error = await deliveryError {
            try await mailer(for: server, security: .none, replyTimeout: .milliseconds(300)).send(Self.message, from: Self.sender)
        }

        #expect(error?.isPermanent == false)
        #expect(error?.reason == "no reply from localhost:\(server.port) within 0.3 seconds")
    }

    @Test func aServerThatIsDownIsTransient() async throws {
        let server = try await FakeSMTPServer.start()
        try await server.stop()
        let error = await deliveryError {
            try await mailer(for: server, host: "127.0.0.1", security: .none).send(Self.message, from: Self.sender)
        }

        #expect(error?.isPermanent == false)
        #expect(error?.reason.contains("could not connect to 127.0.0.1:\(server.port)") == true)
    }

    @Test func neverSendsCredentialsWithoutTLS() async throws {
        let server = try await FakeSMTPServer.start(.init(authMechanisms: ["PLAIN", "LOGIN"]))
        let error = await deliveryError {
            try await mailer(for: server, security: .startTLSWhenOffered, credentials: .init(user: "mailer", password: "correct horse"))
                .send(Self.message, from: Self.sender)
        }

        #expect(error?.isPermanent == false)
        #expect(error?.reason.contains("refusing to send the SMTP password") == true)
        #expect(!server.commands.contains { $0.hasPrefix("AUTH") || $0.hasPrefix("MAIL") })
    }

    @Test func sendsCredentialsInPlainTextOnlyWhenTLSIsNone() async throws {
        let server = try await FakeSMTPServer.start(.init(authMechanisms: ["PLAIN"]))
        try await mailer(for: server, security: .none, credentials: .init(user: "mailer", password: "correct horse"))
            .send(Self.message, from: Self.sender)

        #expect(server.messages.first?.authenticatedUser == "mailer")
        #expect(server.messages.first?.wasEncrypted == false)
    }

    @Test func failsWhenRequiredSTARTTLSIsNotOffered() async throws {
        let server = try await FakeSMTPServer.start()
        let error = await deliveryError { try await mailer(for: server, security: .startTLS).send(Self.message, from: Self.sender) }

        #expect(error?.isPermanent == false)
        #expect(error?.reason.contains("does not offer STARTTLS") == true)
        #expect(!server.commands.contains { $0.hasPrefix("MAIL") })
    }

    @Test func sendsInPlainTextWhenOptionalSTARTTLSIsNotOffered() async throws {
        let server = try await FakeSMTPServer.start()
        try await mailer(for: server, security: .startTLSWhenOffered).send(Self.message, from: Self.sender)

        #expect(server.messages.first?.wasEncrypted == false)
    }

    /// An untrusted certificate is transient: the message is fine, and once the operator fixes the certificate or
    /// `FITBASE_SMTP_CA_FILE`, the outbox's next try delivers it. The reason says what to fix.
    @Test func anUntrustedCertificateIsTransientAndSaysWhy() async throws {
        let server = try await FakeSMTPServer.start(.init(tls: .startTLS(try certificates.serverContext()), authMechanisms: ["PLAIN"]))
        let error = await deliveryError {
            try await mailer(for: server, security: .startTLS, credentials: .init(user: "mailer", password: "correct horse"), trustsTestCA: false)
                .send(Self.message, from: Self.sender)
        }

        #expect(error?.isPermanent == false)
        #expect(error?.reason.contains("TLS with localhost:\(server.port) failed") == true)
        #expect(error?.reason.contains("FITBASE_SMTP_CA_FILE") == true)
        #expect(!server.commands.contains { $0.hasPrefix("AUTH") })
    }

    @Test func aCertificateForAnotherHostIsRejected() async throws {
        let context = try certificates.serverContext(hostNames: ["mail.example.org"], namesLoopbackAddress: false)
        let server = try await FakeSMTPServer.start(.init(tls: .implicit(context)))
        let error = await deliveryError { try await mailer(for: server, security: .implicitTLS).send(Self.message, from: Self.sender) }

        #expect(error?.isPermanent == false)
        #expect(error?.reason.contains("TLS with localhost:\(server.port) failed") == true)
        #expect(server.messages.isEmpty)
    }

    /// A reply sent in plain text right behind the `220` to `STARTTLS` would otherwise be read as if it came over TLS.
    @Test func refusesPlainTextSentAheadOfTheTLSHandshake() async throws {
        let tls = try certificates.serverContext()
        let server = try await FakeSMTPServer.start(.init(tls: .startTLS(tls), faults: [.startTLS: .reply("220 go ahead\r\n250 AUTH NONE")]))
        let error = await deliveryError { try await mailer(for: server, security: .startTLS).send(Self.message, from: Self.sender) }

        #expect(error == .transient("localhost:\(server.port) sent data after agreeing to STARTTLS, before TLS began"))
        #expect(!server.commands.contains { $0.hasPrefix("MAIL") })
    }

    @Test func refusesMessagesThatWouldInjectHeadersBeforeConnecting() async throws {
        let server = try await FakeSMTPServer.start()
        let mailer = try mailer(for: server, security: .none)
        var message = Self.message
        message.subject = "Hello\r\nBcc: everyone@example.com"
        var badRecipient = Self.message
        badRecipient.to = "ada@example.com\r\nBcc: everyone@example.com"

        #expect(await deliveryError { try await mailer.send(message, from: Self.sender) } == .permanent("the subject contains a line break"))
        #expect(await deliveryError { try await mailer.send(badRecipient, from: Self.sender) }?.isPermanent == true)
        let badSender = "FitBase <no-reply@fitbase.test>\nBcc: x@y"
        #expect(await deliveryError { try await mailer.send(Self.message, from: badSender) }?.isPermanent == true)
        #expect(server.commands.isEmpty)
    }

    /// Sends one message through a real SMTP server (aiosmtpd, started by `scripts/ci/smtp-ci-setup.sh`) with STARTTLS
    /// and `AUTH`, and finds it in the directory the server writes messages to.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FITBASE_TEST_SMTP_URL"] != nil, "FITBASE_TEST_SMTP_URL is not set"))
    func deliversThroughARealServer() async throws {
        let environment = ProcessInfo.processInfo.environment
        let mailDirectory = try #require(environment["FITBASE_TEST_SMTP_MAILDIR"])
        let configuration = try #require(
            try SMTPConfiguration.resolve(environment: [
                "FITBASE_SMTP_URL": environment["FITBASE_TEST_SMTP_URL"] ?? "",
                "FITBASE_MAIL_FROM": "FitBase CI <ci@fitbase.test>",
                "FITBASE_SMTP_CA_FILE": environment["FITBASE_TEST_SMTP_CA_FILE"] ?? "",
            ])
        )
        #expect(configuration.security == .startTLS)
        #expect(configuration.credentials != nil)
        var message = Self.message
        message.subject = "CI check \(UUID().uuidString) ✓"

        try await SMTPMailer(configuration: configuration, clock: .system).send(message, from: configuration.sender)

        var delivered: (mail: ParsedMail, file: String)?
        for _ in 0..<50 where delivered == nil {
            for file in try FileManager.default.contentsOfDirectory(atPath: mailDirectory) where file.hasSuffix(".eml") {
                let mail = try ParsedMail(String(contentsOfFile: "\(mailDirectory)/\(file)", encoding: .utf8))
                if mail.headers["subject"] == message.subject { delivered = (mail, file) }
            }
            if delivered == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let (mail, file) = try #require(delivered)
        #expect(mail.headers["from"] == "FitBase CI <ci@fitbase.test>")
        #expect(mail.headers["to"] == message.to)
        #expect(mail.parts["text/plain"] == message.text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(mail.parts["text/html"] == message.html.replacingOccurrences(of: "\n", with: "\r\n"))

        // What the server saw of the envelope and the connection, in NAME.json beside NAME.eml.
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let detailsFile = URL(fileURLWithPath: mailDirectory).appendingPathComponent(file.replacingOccurrences(of: ".eml", with: ".json"))
        let details = try decoder.decode(ServerDetails.self, from: Data(contentsOf: detailsFile))
        #expect(details.mailFrom == "ci@fitbase.test")
        #expect(details.rcptTos == [message.to])
        #expect(details.tls)
        #expect(details.user == configuration.credentials?.user)
    }

    /// The `NAME.json` that `scripts/ci/smtp-test-server.py` writes beside each message.
    private struct ServerDetails: Decodable {
        var mailFrom: String
        var rcptTos: [String]
        var tls: Bool
        var user: String?
    }

    private func mailer(
        for server: FakeSMTPServer, host: String = "localhost", security: SMTPConfiguration.Security,
        credentials: SMTPConfiguration.Credentials? = nil, trustsTestCA: Bool = true, replyTimeout: Duration = .seconds(10)
    ) throws -> SMTPMailer {
        let configuration = SMTPConfiguration(
            host: host, port: server.port, security: security, credentials: credentials, sender: Self.sender,
            additionalTrustRoots: trustsTestCA ? [try certificates.trustRoot] : []
        )
        return SMTPMailer(configuration: configuration, clock: .system, connectTimeout: .seconds(5), replyTimeout: replyTimeout)
    }
}

@Suite struct MailEncodingTests {
    @Test func writesDisplayNamesSafely() throws {
        #expect(try #require(MailAddress(parsing: "FitBase <a@b.example>")).headerValue == "FitBase <a@b.example>")
        #expect(try #require(MailAddress(parsing: "\"FitBase, Inc.\" <a@b.example>")).headerValue == "\"FitBase, Inc.\" <a@b.example>")
        #expect(try #require(MailAddress(parsing: "Zoë <a@b.example>")).headerValue == "=?UTF-8?B?Wm/Dqw==?= <a@b.example>")
        #expect(MailAddress(parsing: "a..b@example.com") == nil)
        #expect(MailAddress(parsing: "a@-example.com") == nil)
        #expect(MailAddress(parsing: "Name <a@b.example>\r\n") == nil)
    }

    @Test func splitsLongSubjectsIntoShortEncodedWords() throws {
        let subject = String(repeating: "Grüße aus dem Studio 💪 ", count: 8)
        let encoded = MIMEEncoding.encodedWords(subject)
        let words = encoded.components(separatedBy: "\r\n ")

        #expect(words.count > 1)
        #expect(words.allSatisfy { $0.count <= 75 && $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") })
        #expect(ParsedMail.decodeHeader(encoded.replacingOccurrences(of: "\r\n", with: "")) == subject)
    }

    @Test func keepsQuotedPrintableLinesShort() {
        let text = String(repeating: "é=", count: 100) + " \n" + String(repeating: "x", count: 200)
        let encoded = MIMEEncoding.quotedPrintable(text)

        #expect(encoded.components(separatedBy: "\r\n").allSatisfy { $0.count <= 76 })
        #expect(ParsedMail.decodeQuotedPrintable(encoded) == text.replacingOccurrences(of: "\n", with: "\r\n"))
    }
}
