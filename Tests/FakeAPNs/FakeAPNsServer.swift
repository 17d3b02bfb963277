import Crypto
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A stand-in for Apple's push gateway on a loopback port, for tests and benchmarks: HTTP/2 over TLS (ALPN `h2`) with
/// a certificate from a throw-away CA made at start (``certificateAuthorityPEM``).
///
/// It checks every request as Apple does and answers a wrong one as Apple would (`{"reason": "..."}` with 400, 403,
/// 404, 405 or 413), recording it among ``refusals``:
/// - `POST /3/device/<hex token>`;
/// - `authorization: bearer <JWT>` signed ES256 by the configured key, with its `kid` and the team as `iss`, and an
///   `iat` neither in the future nor older than an hour (`InvalidProviderToken`, `ExpiredProviderToken`);
/// - `apns-topic` the configured one, `apns-push-type` `alert` or `background`, `apns-priority` 5 or 10, `apns-id`
///   a UUID and `apns-expiration` a number when present, `apns-collapse-id` at most 64 bytes, no header twice;
/// - a JSON object body with an `aps` dictionary, at most 4,096 bytes.
///
/// A well-formed push is answered as scripted — by device token (``answer(_:forDeviceToken:)``), else the next ones in
/// turn (``answerNext(_:with:)``), else 200 with its `apns-id` — and the accepted ones are recorded (``accepted``). It
/// also counts the distinct provider tokens it saw and the TCP connections it accepted. It advertises
/// `SETTINGS_MAX_CONCURRENT_STREAMS` as ``Options/maximumConcurrentStreams`` (Apple's gateways allow about 1,000).
public final class FakeAPNsServer: Sendable {
    /// Apple's limit for a regular push's payload.
    public static let maximumPayloadBytes = 4_096

    /// Whom the fake expects.
    public struct Options: Sendable {
        public var teamID: String
        public var keyID: String
        /// The public half of the provider's APNs auth key.
        public var publicKey: P256.Signing.PublicKey
        /// The only `apns-topic` accepted.
        public var topic: String
        public var maximumConcurrentStreams: Int

        public init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, topic: String, maximumConcurrentStreams: Int = 1_000) {
            self.teamID = teamID
            self.keyID = keyID
            self.publicKey = publicKey
            self.topic = topic
            self.maximumConcurrentStreams = maximumConcurrentStreams
        }
    }

    /// How the fake answers a well-formed push.
    public enum Answer: Sendable, Equatable {
        /// 200 with the request's `apns-id` (or a new one).
        case accept
        /// 400 `BadDeviceToken`.
        case badDeviceToken
        /// 410 `Unregistered` with `timestamp`: `since` in milliseconds since 1970.
        case unregistered(since: Date)
        /// 429 `TooManyRequests`, with `Retry-After` (seconds) when given.
        case tooManyRequests(retryAfter: Int?)
        /// 500 `InternalServerError`.
        case internalServerError
        /// 403 `ExpiredProviderToken`, whatever the token.
        case expiredProviderToken
        /// Any status and reason (`413 PayloadTooLarge`, `403 InvalidProviderToken` …).
        case refuse(status: Int, reason: String)
    }

    /// A push the fake accepted.
    public struct Push: Sendable {
        public let deviceToken: String
        /// The request's headers, names lower-cased (`authorization`, `apns-topic` …).
        public let headers: [String: String]
        public let payload: Data
        /// The `apns-id` it was answered with.
        public let apnsID: String

        /// The provider token it carried.
        public var providerToken: String? {
            headers["authorization"].map { String($0.dropFirst("bearer ".count)) }
        }
    }

    /// A request the fake refused, by its checks or by script.
    public struct Refusal: Sendable {
        public let status: Int
        public let reason: String
        public let deviceToken: String?
        public let headers: [String: String]
        public let payload: Data
    }

    public let port: Int
    /// The throw-away CA the server's certificate chains to, in PEM.
    public let certificateAuthorityPEM: String
    private let gateway: FakeAPNsGateway
    private let channel: any Channel

    /// `https://127.0.0.1:<port>`.
    public var url: String { "https://127.0.0.1:\(port)" }

    /// Starts a server at `host` on `port` (0: a free one).
    public static func start(_ options: Options, host: String = "127.0.0.1", port: Int = 0) async throws -> FakeAPNsServer {
        let certificates = try FakeAPNsCertificates()
        let gateway = FakeAPNsGateway(options: options)
        let tls = certificates.serverContext
        let settings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: options.maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
        ]
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    gateway.connectionAccepted()
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.initialSettings = settings
                    _ = try pipeline.configureHTTP2Pipeline(mode: .server, connectionConfiguration: connection, streamConfiguration: .init()) {
                        stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(FakeAPNsStreamHandler(gateway: gateway))
                        }
                    }
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        guard let boundPort = channel.localAddress?.port else {
            try? await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        return FakeAPNsServer(port: boundPort, certificateAuthorityPEM: certificates.authorityPEM, gateway: gateway, channel: channel)
    }

    private init(port: Int, certificateAuthorityPEM: String, gateway: FakeAPNsGateway, channel: any Channel) {
        self.port = port
        self.certificateAuthorityPEM = certificateAuthorityPEM
        self.gateway = gateway
        self.channel = channel
    }

    /// Stops listening; open connections end with the process or when their clients close them.
    public func stop() async throws {
        try await channel.close()
    }

    // MARK: Scripting

    /// Answers every well-formed push to `deviceToken` with `answer` from now on.
    public func answer(_ answer: Answer, forDeviceToken deviceToken: String) {
        gateway.state.withLock { $0.byDeviceToken[deviceToken] = answer }
    }

    /// Answers the next `count` well-formed pushes (to tokens without their own answer) with `answer`, after those
    /// already scripted.
    public func answerNext(_ count: Int, with answer: Answer) {
        gateway.state.withLock { $0.next += Array(repeating: answer, count: count) }
    }

    /// Calls every provider token seen so far expired (403 `ExpiredProviderToken`), as Apple does for one issued before
    /// some date; tokens first seen later are judged as usual.
    public func expireProviderTokensSeen() {
        gateway.state.withLock { $0.expiredTokens.formUnion($0.providerTokens) }
    }

    // MARK: Observing

    /// The pushes answered 200, in the order they were answered.
    public var accepted: [Push] { gateway.state.withLock { $0.accepted } }
    /// How many pushes were answered 200.
    public var acceptedCount: Int { gateway.state.withLock { $0.accepted.count } }
    /// The requests answered otherwise, in order.
    public var refusals: [Refusal] { gateway.state.withLock { $0.refusals } }
    /// How many distinct provider tokens (JWTs) requests carried, valid or not.
    public var distinctProviderTokens: Int { gateway.state.withLock { $0.providerTokens.count } }
    /// How many TCP connections the server accepted.
    public var connectionsAccepted: Int { gateway.state.withLock { $0.connections } }

    /// Waits until `count` pushes were answered 200 or `timeout` passed; `true` in the first case.
    public func waitUntilAccepted(_ count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while acceptedCount < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}

/// One HTTP/2 stream of a ``FakeAPNsServer`` connection, seen as an HTTP/1 exchange: assembles the request, asks the
/// gateway, writes its answer.
private final class FakeAPNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// More than this is not kept: the push is too large either way.
    private static let bodyLimit = 64 * 1024

    private let gateway: FakeAPNsGateway
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var bodyTruncated = false

    init(gateway: FakeAPNsGateway) {
        self.gateway = gateway
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var part):
            if body.readableBytes + part.readableBytes <= Self.bodyLimit {
                body.writeBuffer(&part)
            } else {
                bodyTruncated = true
            }
        case .end:
            guard let head else {
                context.close(promise: nil)
                return
            }
            let response = gateway.answer(
                .init(
                    method: head.method, path: head.uri, headers: head.headers, body: Data(buffer: body), bodyTruncated: bodyTruncated
                )
            )
            let responseHead = HTTPResponseHead(
                version: .init(major: 2, minor: 0), status: .init(statusCode: response.status), headers: HTTPHeaders(response.headers)
            )
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
