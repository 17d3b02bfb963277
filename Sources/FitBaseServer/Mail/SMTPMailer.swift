import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Sends e-mail through an SMTP server (RFC 5321), one connection per message: greeting, `EHLO` (or `HELO`),
/// `STARTTLS` and `EHLO` again, `AUTH PLAIN` or `AUTH LOGIN`, `MAIL FROM`, `RCPT TO`, `DATA`, `QUIT`.
///
/// Errors: a 5xx reply is `.permanent`; a 4xx reply, an unexpected reply, a network error, a timeout, a failed TLS
/// handshake (an untrusted certificate included: the message is not at fault, and once the certificate or
/// `FITBASE_SMTP_CA_FILE` is fixed a retry delivers it), a server without the required STARTTLS and one without a
/// usable `AUTH` are `.transient`. A message that can never be sent (an invalid address, a line break in the subject)
/// is `.permanent` before any connection is made.
struct SMTPMailer: Mailer {
    let configuration: SMTPConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let replyTimeout: TimeAmount
    private let clock: ServerClock

    /// - Parameters:
    ///   - clock: what messages' `Date` header says.
    ///   - connectTimeout: how long the TCP connection may take.
    ///   - replyTimeout: how long the server may take to answer each command, the message included.
    init(
        configuration: SMTPConfiguration, clock: ServerClock, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        connectTimeout: Duration = .seconds(30), replyTimeout: Duration = .seconds(30)
    ) {
        self.configuration = configuration
        self.clock = clock
        self.eventLoopGroup = eventLoopGroup
        self.connectTimeout = TimeAmount(connectTimeout)
        self.replyTimeout = TimeAmount(replyTimeout)
    }

    func send(_ message: MailMessage, from: String) async throws(MailDeliveryError) {
        guard let sender = MailAddress(parsing: from) else {
            throw .permanent("invalid sender address \(String(reflecting: from))")
        }
        guard let recipient = MailAddress(parsing: message.to) else {
            throw .permanent("invalid recipient address \(String(reflecting: message.to))")
        }
        let document = try MIMEMessage(message, from: sender, to: recipient, date: clock.now)
        let tls = configuration.security == .none ? nil : try makeTLSContext()

        let connection = try await SMTPConnection.open(
            host: configuration.host, port: configuration.port, implicitTLS: configuration.security == .implicitTLS ? tls : nil,
            connectTimeout: connectTimeout, replyTimeout: replyTimeout, on: eventLoopGroup
        )
        do {
            try await deliver(document, from: sender, to: recipient, over: connection, tls: tls)
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// The whole conversation on an open connection.
    private func deliver(
        _ document: MIMEMessage, from sender: MailAddress, to recipient: MailAddress, over connection: SMTPConnection,
        tls: NIOSSLContext?
    ) async throws(MailDeliveryError) {
        try expect(await connection.reply(), 220, answering: "the connection", from: connection)
        var capabilities = try await greet(connection)
        var isEncrypted = configuration.security == .implicitTLS

        if let tls, configuration.security == .startTLS || configuration.security == .startTLSWhenOffered {
            if capabilities["STARTTLS"] != nil {
                try expect(await connection.send("STARTTLS"), 220, answering: "STARTTLS", from: connection)
                try await connection.startTLS(tls)
                isEncrypted = true
                capabilities = try await greet(connection)
            } else if configuration.security == .startTLS {
                throw .transient(
                    "\(connection.server) does not offer STARTTLS, which FITBASE_SMTP_URL requires "
                        + "(?tls=optional or ?tls=none allow a relay without it)"
                )
            }
        }

        if let credentials = configuration.credentials {
            guard isEncrypted || configuration.security == .none else {
                throw .transient("refusing to send the SMTP password to \(connection.server) without TLS: it does not offer STARTTLS")
            }
            try await authenticate(credentials, mechanisms: capabilities["AUTH"] ?? [], over: connection)
        }

        try expect(await connection.send("MAIL FROM:<\(sender.address)>"), 250, answering: "MAIL FROM", from: connection)
        try expect(await connection.send("RCPT TO:<\(recipient.address)>"), 250, 251, answering: "RCPT TO", from: connection)
        try expect(await connection.send("DATA"), 354, answering: "DATA", from: connection)
        try expect(await connection.send(Self.dotStuffed(document.text) + "."), 250, answering: "the message", from: connection)
        // Delivered: a failed QUIT must not make the outbox send the message twice.
        _ = try? await connection.send("QUIT")
    }

    /// `EHLO`, or `HELO` when the server rejects `EHLO`; the capabilities `EHLO` announced, by upper-cased keyword
    /// (`["AUTH": ["PLAIN", "LOGIN"], "STARTTLS": []]`).
    private func greet(_ connection: SMTPConnection) async throws(MailDeliveryError) -> [String: [String]] {
        let reply = try await connection.send("EHLO \(connection.clientName)")
        if reply.isPositive {
            return Self.capabilities(announcedIn: reply)
        }
        guard (500..<600).contains(reply.code) else { throw failure(reply, answering: "EHLO", from: connection) }
        try expect(await connection.send("HELO \(connection.clientName)"), 250, answering: "HELO", from: connection)
        return [:]
    }

    /// `AUTH PLAIN` when the server offers it, else `AUTH LOGIN`.
    private func authenticate(
        _ credentials: SMTPConfiguration.Credentials, mechanisms: [String], over connection: SMTPConnection
    ) async throws(MailDeliveryError) {
        func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        if mechanisms.contains("PLAIN") {
            let response = base64("\0\(credentials.user)\0\(credentials.password)")
            try expect(await connection.send("AUTH PLAIN \(response)"), 235, answering: "AUTH PLAIN", from: connection)
        } else if mechanisms.contains("LOGIN") {
            try expect(await connection.send("AUTH LOGIN"), 334, answering: "AUTH LOGIN", from: connection)
            try expect(await connection.send(base64(credentials.user)), 334, answering: "the AUTH LOGIN user", from: connection)
            try expect(await connection.send(base64(credentials.password)), 235, answering: "the AUTH LOGIN password", from: connection)
        } else {
            let offered = mechanisms.isEmpty ? "no AUTH" : "only AUTH \(mechanisms.joined(separator: " "))"
            throw .transient("\(connection.server) offers \(offered); FITBASE_SMTP_URL has credentials for AUTH PLAIN or LOGIN")
        }
    }

    private func expect(
        _ reply: SMTPReply, _ codes: Int..., answering command: String, from connection: SMTPConnection
    ) throws(MailDeliveryError) {
        guard codes.contains(reply.code) else { throw failure(reply, answering: command, from: connection) }
    }

    /// 5xx: permanent; anything else unexpected (4xx, or a code that does not fit the command): transient.
    private func failure(_ reply: SMTPReply, answering command: String, from connection: SMTPConnection) -> MailDeliveryError {
        let reason = "\(connection.server) answered \(command) with \(reply)"
        return (500..<600).contains(reply.code) ? .permanent(reason) : .transient(reason)
    }

    private func makeTLSContext() throws(MailDeliveryError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if !configuration.additionalTrustRoots.isEmpty {
            tls.additionalTrustRoots = [.certificates(configuration.additionalTrustRoots)]
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw .transient("could not set up TLS: \(error)")
        }
    }

    /// The keywords of an `EHLO` reply after its first line, with their parameters; the old `AUTH=LOGIN` form counts as
    /// `AUTH LOGIN`.
    static func capabilities(announcedIn reply: SMTPReply) -> [String: [String]] {
        var capabilities: [String: [String]] = [:]
        for line in reply.lines.dropFirst() {
            var words = line.uppercased().split(separator: " ").map(String.init)
            guard !words.isEmpty else { continue }
            var keyword = words.removeFirst()
            if keyword.hasPrefix("AUTH=") {
                words.insert(String(keyword.dropFirst("AUTH=".count)), at: 0)
                keyword = "AUTH"
            }
            capabilities[keyword, default: []] += words
        }
        return capabilities
    }

    /// `text` (CRLF lines, ending in CRLF) with a second `.` before each line that starts with one, so that no line of
    /// the message reads as the end of `DATA`.
    static func dotStuffed(_ text: String) -> String {
        (text.hasPrefix(".") ? "." : "") + text.replacingOccurrences(of: "\r\n.", with: "\r\n..")
    }
}
