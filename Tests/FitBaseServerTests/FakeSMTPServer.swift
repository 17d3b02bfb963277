import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import Synchronization
import X509

@testable import FitBaseServer

/// An SMTP server on a loopback port for tests: `EHLO` with capabilities, `STARTTLS` or implicit TLS with a certificate
/// from ``SMTPTestCertificates``, `AUTH PLAIN` and `AUTH LOGIN` against one user, `MAIL`, `RCPT` and `DATA`. It records
/// each command and each message, and can be told to answer a step with a given reply, drop the connection there, or
/// say nothing.
final class FakeSMTPServer: Sendable {
    /// A point of the conversation where the server can misbehave.
    enum Step: Sendable, Hashable {
        case greeting, ehlo, startTLS, auth, mailFrom, rcptTo, data
        /// The reply after the message's final `.`.
        case message
    }

    /// How the server misbehaves at a step.
    enum Fault: Sendable {
        /// Answers with this line (`451 4.3.0 Try again later`); after a `421` it also closes the connection.
        case reply(String)
        /// Closes the connection without a word.
        case disconnect
        /// Never answers.
        case silence
    }

    enum TLSMode: Sendable {
        case none
        /// Offers `STARTTLS` until it is used.
        case startTLS(NIOSSLContext)
        /// TLS from the first byte.
        case implicit(NIOSSLContext)
    }

    struct Options: Sendable {
        var tls: TLSMode = .none
        /// Offered after `AUTH` in the `EHLO` reply, with or without TLS; none: no `AUTH`.
        var authMechanisms: [String] = []
        var user = "mailer"
        var password = "correct horse"
        var faults: [Step: Fault] = [:]
    }

    /// One message as received.
    struct Received: Sendable {
        var mailFrom: String
        var recipients: [String]
        /// The lines after `DATA` as sent, dot-stuffed, up to the final `.`.
        var wireLines: [String]
        /// The message with dot-stuffing undone, lines ending in CRLF.
        var content: String
        var wasEncrypted: Bool
        var authenticatedUser: String?
    }

    let port: Int
    private let channel: any Channel
    fileprivate let state = Mutex<(commands: [String], messages: [Received])>(([], []))

    /// Every command received, in order; `AUTH` lines without their credentials.
    var commands: [String] { state.withLock { $0.commands } }
    var messages: [Received] { state.withLock { $0.messages } }

    /// Starts a server on 127.0.0.1 at a free port.
    static func start(_ options: Options = Options()) async throws -> FakeSMTPServer {
        let recorder = Recorder()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    var isEncrypted = false
                    if case .implicit(let context) = options.tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                        isEncrypted = true
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        FakeSMTPSession(options: options, recorder: recorder, isEncrypted: isEncrypted)
                    )
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        let server = FakeSMTPServer(port: channel.localAddress!.port!, channel: channel)
        recorder.server.withLock { $0 = server }
        return server
    }

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    /// Stops listening; open connections end with the test.
    func stop() async throws {
        try await channel.close()
    }

    /// Passes what sessions record to the server, which exists only after the bootstrap bound.
    fileprivate final class Recorder: Sendable {
        let server = Mutex<FakeSMTPServer?>(nil)

        func command(_ line: String) {
            server.withLock { $0 }?.state.withLock { $0.commands.append(line) }
        }

        func message(_ message: Received) {
            server.withLock { $0 }?.state.withLock { $0.messages.append(message) }
        }
    }
}

/// One client connection of ``FakeSMTPServer``.
private final class FakeSMTPSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Reading {
        case commands
        case authLoginUser
        case authLoginPassword(user: String)
        case data(lines: [String])
    }

    private let options: FakeSMTPServer.Options
    private let recorder: FakeSMTPServer.Recorder
    private var isEncrypted: Bool
    private var unread = ByteBuffer()
    private var reading = Reading.commands
    private var user: String?
    private var mailFrom: String?
    private var recipients: [String] = []

    init(options: FakeSMTPServer.Options, recorder: FakeSMTPServer.Recorder, isEncrypted: Bool) {
        self.options = options
        self.recorder = recorder
        self.isEncrypted = isEncrypted
    }

    func channelActive(context: ChannelHandlerContext) {
        respond(at: .greeting, context: context) { "220 fake.test ESMTP ready" }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        unread.writeBuffer(&bytes)
        while context.channel.isActive, let newline = unread.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            var line = unread.readString(length: newline - unread.readerIndex)!
            unread.moveReaderIndex(forwardBy: 1)
            if line.hasSuffix("\r") { line.removeLast() }
            handle(line, context: context)
        }
        unread.discardReadBytes()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func handle(_ line: String, context: ChannelHandlerContext) {
        switch reading {
        case .data(var lines):
            guard line == "." else {
                lines.append(line)
                reading = .data(lines: lines)
                return
            }
            reading = .commands
            let content = lines.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }.map { $0 + "\r\n" }.joined()
            respond(at: .message, context: context) {
                recorder.message(
                    .init(
                        mailFrom: mailFrom ?? "", recipients: recipients, wireLines: lines, content: content, wasEncrypted: isEncrypted,
                        authenticatedUser: user
                    )
                )
                return "250 2.0.0 queued"
            }
        case .authLoginUser:
            reading = .authLoginPassword(user: Self.decodeBase64(line))
            write("334 UGFzc3dvcmQ6", context: context)
        case .authLoginPassword(let user):
            reading = .commands
            write(authenticate(user: user, password: Self.decodeBase64(line)), context: context)
        case .commands:
            command(line, context: context)
        }
    }

    private func command(_ line: String, context: ChannelHandlerContext) {
        let verb = line.prefix(while: { $0 != " " }).uppercased()
        recorder.command(verb == "AUTH" ? line.split(separator: " ").prefix(2).joined(separator: " ") : line)
        switch verb {
        case "EHLO":
            respond(at: .ehlo, context: context) {
                var lines = ["fake.test greets you"]
                if case .startTLS = options.tls, !isEncrypted { lines.append("STARTTLS") }
                if !options.authMechanisms.isEmpty { lines.append("AUTH " + options.authMechanisms.joined(separator: " ")) }
                lines.append("8BITMIME")
                return lines.enumerated().map { "250\($0.offset == lines.count - 1 ? " " : "-")\($0.element)" }
                    .joined(separator: "\r\n")
            }
        case "HELO":
            write("250 fake.test", context: context)
        case "STARTTLS":
            respond(at: .startTLS, context: context) {
                guard case .startTLS = options.tls, !isEncrypted else { return "502 5.5.1 STARTTLS not available" }
                return "220 2.0.0 Ready to start TLS"
            }
            if case .startTLS(let tls) = options.tls, !isEncrypted, options.faults[.startTLS] == nil {
                try! context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
                isEncrypted = true
                user = nil
            }
        case "AUTH":
            respond(at: .auth, context: context) {
                let words = line.split(separator: " ").map(String.init)
                guard words.count >= 2, options.authMechanisms.contains(words[1].uppercased()) else {
                    return "504 5.5.4 mechanism not supported"
                }
                if words[1].uppercased() == "LOGIN" {
                    reading = .authLoginUser
                    return "334 VXNlcm5hbWU6"
                }
                guard words.count == 3 else { return "501 5.5.2 initial response required" }
                let fields = Self.decodeBase64(words[2]).split(separator: "\0", omittingEmptySubsequences: false)
                guard fields.count == 3 else { return "501 5.5.2 malformed PLAIN response" }
                return authenticate(user: String(fields[1]), password: String(fields[2]))
            }
        case "MAIL":
            respond(at: .mailFrom, context: context) {
                mailFrom = Self.path(in: line)
                recipients = []
                return "250 2.1.0 sender ok"
            }
        case "RCPT":
            respond(at: .rcptTo, context: context) {
                recipients.append(Self.path(in: line))
                return "250 2.1.5 recipient ok"
            }
        case "DATA":
            respond(at: .data, context: context) {
                reading = .data(lines: [])
                return "354 end data with <CR><LF>.<CR><LF>"
            }
        case "QUIT":
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: "221 2.0.0 bye\r\n"))).assumeIsolated()
                .whenComplete { _ in context.close(promise: nil) }
        default:
            write("500 5.5.2 command not recognized", context: context)
        }
    }

    /// Answers `step` with its fault if one is set, else with `reply()`.
    private func respond(at step: FakeSMTPServer.Step, context: ChannelHandlerContext, _ reply: () -> String) {
        switch options.faults[step] {
        case .reply(let line)?:
            write(line, context: context)
            if line.hasPrefix("421") { context.close(promise: nil) }
        case .disconnect?:
            context.close(promise: nil)
        case .silence?:
            break
        case nil:
            write(reply(), context: context)
        }
    }

    private func authenticate(user: String, password: String) -> String {
        guard user == options.user, password == options.password else { return "535 5.7.8 authentication credentials invalid" }
        self.user = user
        return "235 2.7.0 authentication successful"
    }

    private func write(_ reply: String, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: reply + "\r\n")), promise: nil)
    }

    /// `bob@example.com` from `RCPT TO:<bob@example.com>`.
    private static func path(in line: String) -> String {
        guard let open = line.firstIndex(of: "<"), let close = line.lastIndex(of: ">"), open < close else { return "" }
        return String(line[line.index(after: open)..<close])
    }

    private static func decodeBase64(_ text: String) -> String {
        Data(base64Encoded: text).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

/// A throw-away certificate authority (P-256) and server certificates it signs, for TLS between ``SMTPMailer`` and
/// ``FakeSMTPServer``.
struct SMTPTestCertificates: Sendable {
    let rootCertificate: Certificate
    private let rootKey: P256.Signing.PrivateKey
    private let rootName: DistinguishedName

    init() throws {
        rootKey = P256.Signing.PrivateKey()
        rootName = try DistinguishedName { CommonName("FitBase Test Mail CA"); OrganizationName("FitBase Tests") }
        rootCertificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(rootKey.publicKey),
            notValidBefore: Date().addingTimeInterval(-86_400), notValidAfter: Date().addingTimeInterval(86_400),
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
    }

    /// The root in PEM, as in a `FITBASE_SMTP_CA_FILE`.
    var rootPEM: String {
        get throws { try rootCertificate.serializeAsPEM().pemString }
    }

    /// The root for ``SMTPConfiguration/additionalTrustRoots``.
    var trustRoot: NIOSSLCertificate {
        get throws { try NIOSSLCertificate(bytes: Array(rootPEM.utf8), format: .pem) }
    }

    /// A TLS server context with a certificate for `hostNames` (and 127.0.0.1 unless `namesLoopbackAddress` is
    /// `false`), signed by this authority.
    func serverContext(hostNames: [String] = ["localhost"], namesLoopbackAddress: Bool = true) throws -> NIOSSLContext {
        let key = P256.Signing.PrivateKey()
        let loopback = GeneralName.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))
        let names = hostNames.map { GeneralName.dnsName($0) } + (namesLoopbackAddress ? [loopback] : [])
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3_600), notValidAfter: Date().addingTimeInterval(86_400),
            issuer: rootName, subject: try DistinguishedName { CommonName(hostNames.first ?? "127.0.0.1") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        )
        return try NIOSSLContext(configuration: configuration)
    }
}
