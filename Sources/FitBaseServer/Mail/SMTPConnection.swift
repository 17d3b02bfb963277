import NIOCore
import NIOPosix
import NIOSSL

/// One TCP connection to an SMTP server: writes command lines and waits, each time up to a deadline, for the reply.
///
/// Every error is `.transient`: a refused or lost connection, a late reply or a failed TLS handshake may go better on
/// the next try (after the operator fixed a certificate, say). What replies mean is ``SMTPMailer``'s business.
struct SMTPConnection: Sendable {
    private let channel: any Channel
    private let reader: NIOLoopBound<SMTPReplyReader>
    /// The configured host name or IP address, which the server's certificate must name.
    private let host: String
    /// `host:port`, for error messages.
    let server: String
    private let replyTimeout: TimeAmount

    /// Connects, with TLS from the first byte when `implicitTLS` is given.
    static func open(
        host: String, port: Int, implicitTLS: NIOSSLContext?, connectTimeout: TimeAmount, replyTimeout: TimeAmount,
        on group: any EventLoopGroup
    ) async throws(MailDeliveryError) -> SMTPConnection {
        let server = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        do {
            return try await ClientBootstrap(group: group).connectTimeout(connectTimeout).connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicitTLS { try channel.pipeline.syncOperations.addHandler(tlsHandler(implicitTLS, host: host)) }
                    let reader = SMTPReplyReader(eventLoop: channel.eventLoop)
                    try channel.pipeline.syncOperations.addHandler(reader)
                    return SMTPConnection(
                        channel: channel, reader: NIOLoopBound(reader, eventLoop: channel.eventLoop), host: host, server: server,
                        replyTimeout: replyTimeout
                    )
                }
            }
        } catch {
            throw .transient("could not connect to \(server): \(error)")
        }
    }

    /// `[192.0.2.1]` or `[IPv6:2001:db8::1]`: the address literal this client names itself by in `EHLO`.
    var clientName: String {
        guard let address = channel.localAddress, let ip = address.ipAddress else { return "[127.0.0.1]" }
        if case .v6 = address { return "[IPv6:\(ip)]" }
        return "[\(ip)]"
    }

    /// The next reply, without sending anything: the greeting.
    func reply() async throws(MailDeliveryError) -> SMTPReply {
        try await exchange(nil)
    }

    /// Sends `command` and CRLF, and returns the reply.
    func send(_ command: String) async throws(MailDeliveryError) -> SMTPReply {
        try await exchange(command + "\r\n")
    }

    /// Starts TLS on the connection after the server's `220` to `STARTTLS`: the handshake happens before the next
    /// command goes out, and a failed one fails that command.
    func startTLS(_ context: NIOSSLContext) async throws(MailDeliveryError) {
        let started = channel.eventLoop.submit { [reader, channel, host] in
            guard reader.value.hasNothingUnread else { return false }
            try channel.pipeline.syncOperations.addHandler(tlsHandler(context, host: host), position: .first)
            return true
        }
        do {
            guard try await started.get() else {
                throw MailDeliveryError.transient("\(server) sent data after agreeing to STARTTLS, before TLS began")
            }
        } catch let error as MailDeliveryError {
            throw error
        } catch {
            throw .transient("could not start TLS with \(server): \(error)")
        }
    }

    /// Closes the connection (with TLS, after a close-notify to the server).
    func close() async {
        try? await channel.close()
    }

    private func exchange(_ text: String?) async throws(MailDeliveryError) -> SMTPReply {
        let reply = channel.eventLoop.flatSubmit { [reader, channel, replyTimeout] in
            if let text {
                channel.writeAndFlush(channel.allocator.buffer(string: text)).whenFailure { error in
                    reader.value.fail(.network(error))
                }
            }
            return reader.value.nextReply(within: replyTimeout)
        }
        do {
            return try await reply.get()
        } catch SMTPReplyReader.Failure.timedOut {
            throw .transient("no reply from \(server) within \(Duration(replyTimeout))")
        } catch SMTPReplyReader.Failure.closed {
            throw .transient("\(server) closed the connection")
        } catch SMTPReplyReader.Failure.malformed(let what) {
            throw .transient("\(server) sent \(what), which is not SMTP")
        } catch SMTPReplyReader.Failure.network(let error) where Self.isTLSError(error) {
            throw .transient(
                "TLS with \(server) failed: \(error); its certificate must be valid for \(host) and chain to a trusted root "
                    + "(the system's, or one in FITBASE_SMTP_CA_FILE)"
            )
        } catch SMTPReplyReader.Failure.network(let error) {
            throw .transient("the connection to \(server) failed: \(error)")
        } catch {
            throw .transient("the connection to \(server) failed: \(error)")
        }
    }

    private static func isTLSError(_ error: any Error) -> Bool {
        error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError
    }
}

/// A TLS client handler that checks the server's certificate against `host`: its name (also sent as SNI), or for an
/// IP address, the address the connection went to.
private func tlsHandler(_ context: NIOSSLContext, host: String) throws -> NIOSSLClientHandler {
    let isIPAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
    return try NIOSSLClientHandler(context: context, serverHostname: isIPAddress ? nil : host)
}
