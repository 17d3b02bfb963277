import FitBaseCore
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// What ``MediaLinkChannelHandler`` needs to answer a media link by itself: the links' key, the store, the clock, and
/// what the router's middleware would add to the answer (the request limits, the request id, the log line, the
/// metrics).
struct MediaLinkAnswerer: Sendable {
    let links: MediaLinks
    let storage: LocalMediaStorage
    let clock: ServerClock
    /// `nil` when request limits are off.
    let limiter: RequestRateLimiter?
    let trustedProxies: [AddressRange]
    let proxyWarning: UntrustedProxyWarning
    let logger: Logger
    /// The route's recorder; `nil` when metrics are off.
    let metrics: ServerMetrics.RouteRecorder?
    /// Counts the answers (``ServerMetrics/mediaLinksAnsweredAhead``).
    let counts: ServerMetrics
    /// The `Server` field of every answer.
    let serverName: String

    private static let prefix = Array("/v1/media/".utf8)

    /// A media link request this handler answers.
    struct LinkRequest {
        let head: HTTPRequest
        /// The request's `Range`, `X-Forwarded-For` and `X-Request-ID` (read in the one pass over its fields).
        let range: String?
        let forwardedFor: String?
        let requestID: String?
        let key: MediaKey
        let expiry: Date
        let now: Date
        let started: ContinuousClock.Instant
    }

    /// A link checked on a connection: a player asks for one link's ranges again and again, and the same token, byte
    /// for byte, needs no second signature check (its expiry is still checked each time).
    struct CheckedLink {
        let token: Substring
        let key: MediaKey
        let expiry: Date
    }

    /// `head` as a request answered here: a `GET` of a media link that checks out now, with no bearer token (the
    /// router names the caller then: the limits count per user) and no `Connection` field (the router closes the
    /// connection after the answer). `nil` for any other request. `checked` is the connection's last link that checked
    /// out, and becomes this one's.
    func linkRequest(_ head: HTTPRequest, checked: inout CheckedLink?) -> LinkRequest? {
        guard head.method == .get, let path = head.path, path.utf8.starts(with: Self.prefix) else { return nil }
        // The fields read in one pass (each lookup by name is a pass of its own).
        var range: String?
        var forwardedFor: String?
        var requestID: String?
        var repeated = false
        for field in head.headerFields {
            switch field.name {
            case .authorization, .connection: return nil
            case .range: (repeated, range) = (repeated || range != nil, field.value)
            case .xForwardedFor: (repeated, forwardedFor) = (repeated || forwardedFor != nil, field.value)
            case .requestID: (repeated, requestID) = (repeated || requestID != nil, field.value)
            default: break
            }
        }
        if repeated {
            // Given twice: their values joined, as the router reads them.
            (range, forwardedFor, requestID) = (head.headerFields[.range], head.headerFields[.xForwardedFor], head.headerFields[.requestID])
        }
        let token = path.dropFirst(Self.prefix.count)
        // One segment, as the router's `{token}` matches it, with nothing it would decode.
        guard !token.isEmpty, !token.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") })
        else { return nil }
        let now = clock.now
        let key: MediaKey
        let expiry: Date
        if let last = checked, last.token == token {
            guard last.expiry > now else { return nil }
            (key, expiry) = (last.key, last.expiry)
        } else {
            guard let (checkedKey, checkedExpiry) = try? links.key(of: token, now: now) else { return nil }
            (key, expiry) = (checkedKey, checkedExpiry)
            checked = CheckedLink(token: token, key: key, expiry: expiry)
        }
        return LinkRequest(
            head: head, range: range, forwardedFor: forwardedFor, requestID: requestID, key: key, expiry: expiry, now: now, started: .now
        )
    }
}

extension ServerOperations {
    /// The answerer of media links ahead of the router, when media are kept in the data directory (links to an S3
    /// store are the store's own).
    func mediaLinkAnswerer(
        limiter: RequestRateLimiter?, logger: Logger, metrics: ServerMetrics.RouteRecorder?, counts: ServerMetrics, serverName: String
    ) -> MediaLinkAnswerer? {
        guard let storage = mediaFeature.storage as? LocalMediaStorage else { return nil }
        let authentication = accountsFeature.authentication
        return MediaLinkAnswerer(
            links: mediaFeature.links, storage: storage, clock: clock, limiter: limiter, trustedProxies: authentication.trustedProxies,
            proxyWarning: authentication.proxyWarning, logger: logger, metrics: metrics, counts: counts,
            serverName: serverName
        )
    }
}

/// `GET /v1/media/{token}` answered on the connection's event loop, ahead of the router, in the case a seeking player
/// repeats many times a minute: a link that checks out, a file in the data directory, the range it asks for within it.
/// The file is opened and measured right there (an `open` and an `fstat`, as nginx does), and its bytes go out through
/// the kernel (``FileRegionResponses``). Any other request, and a media request whose file is gone, whose range starts
/// past the end or whose caller is over the limit, goes on to the router unchanged, which answers it (its problem, its
/// 404, its 416, its 429). The answer here carries what the router's would: the same status and fields
/// (``OpenedMedia``), the limits' fields, a request id, one log line and the route's metrics.
///
/// It sits after Hummingbird's connection state handler (which then counts its requests, closes idle connections and
/// drains on shutdown as for any other), so its parts are HTTP types. Order is kept: a request is answered here only
/// when every request handed to the router before it has been answered, and it is answered as soon as it is read.
final class MediaLinkChannelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answerer: MediaLinkAnswerer
    private let files: FileRegionResponses.FileRegionHandler

    /// The request answered here whose end is still to be read (its body is dropped).
    private var reading: MediaLinkAnswerer.LinkRequest?
    /// Requests handed to the router whose answer has not ended yet.
    private var routerAnswers = 0
    private var dates = HTTPDateField()
    private var checkedLink: MediaLinkAnswerer.CheckedLink?

    init(answerer: MediaLinkAnswerer, files: FileRegionResponses.FileRegionHandler) {
        self.answerer = answerer
        self.files = files
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if let request = reading {
            guard case .end = part else { return }
            reading = nil
            respond(to: request, context: context)
            return
        }
        if case .head(let head) = part {
            if routerAnswers == 0, let request = answerer.linkRequest(head, checked: &checkedLink) {
                reading = request
                return
            }
            routerAnswers += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routerAnswers = max(0, routerAnswers - 1) }
        context.write(data, promise: promise)
    }

    private func respond(to request: MediaLinkAnswerer.LinkRequest, context: ChannelHandlerContext) {
        let range = request.range.flatMap(MediaByteRange.init(header:))
        if let content = try? answerer.storage.getBlocking(request.key, range: range),
            answer(request, content: content, ranged: range != nil, context: context)
        {
            return
        }
        // Gone, a range past the end, a failed open or over the limit: the router answers as it would have.
        routerAnswers += 1
        context.fireChannelRead(wrapInboundOut(.head(request.head)))
        context.fireChannelRead(wrapInboundOut(.end(nil)))
    }

    /// Writes the answer to `request`; false (nothing written) when the caller is over the limit.
    private func answer(_ request: MediaLinkAnswerer.LinkRequest, content: MediaContent, ranged: Bool, context: ChannelHandlerContext) -> Bool {
        let opened = OpenedMedia(content: content, ranged: ranged, expiry: request.expiry, now: request.now)
        var fields = opened.headers
        // Appended: none of these is among the fields above (a set by name would look for it first).
        fields.append(HTTPField(name: .contentLength, value: String(content.range.map { $0.count } ?? 0)))
        if let limiter = answerer.limiter {
            let peer = context.channel.remoteAddress
            if answerer.trustedProxies.isEmpty { answerer.proxyWarning.check(peer: peer) }
            let address = ClientAddress.resolve(peer: peer, forwardedFor: request.forwardedFor, trusted: answerer.trustedProxies)
            if let reading = limiter.admit(.reads, user: nil, address: address.map(ClientAddress.bucket(of:))) {
                guard reading.allowed else { return false }
                fields.append(contentsOf: RateLimitMiddleware.headers(reading))
            }
        }
        // Taken from the content only now that it is sent: a content dropped before this closes its file.
        let descriptor = content.range == nil ? nil : content.localFile?.opened.take()
        guard content.range == nil || descriptor != nil else { return false }
        let id = UUID.random().lowercasedString
        fields.append(HTTPField(name: .requestID, value: id))
        let client = request.requestID.flatMap(RequestIDMiddleware.acceptable)
        if let client { fields.append(HTTPField(name: .clientRequestID, value: client)) }
        fields.append(HTTPField(name: .date, value: dates.now()))
        fields.append(HTTPField(name: .server, value: answerer.serverName))
        let status = opened.status
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        if let bytes = content.range, let descriptor {
            // A file region counts toward the connection's write buffer: a range over its high water mark (64 KiB)
            // would make the connection unwritable and writable again around each answer, a change told to every
            // handler and to the router's writer. The mark is raised over the range while it is written and flushed
            // (which sends it whole, unless the peer is slow), and put back after: whatever is still buffered then
            // counts again for the next write.
            let options = context.channel.syncOptions
            let waterMark = try? options?.getOption(ChannelOptions.writeBufferWaterMark)
            if let waterMark, Int64(waterMark.high) <= Int64(bytes.count) {
                let raised = Int(clamping: Int64(bytes.count) + Int64(waterMark.high))
                try? options?.setOption(ChannelOptions.writeBufferWaterMark, value: .init(low: waterMark.low, high: raised))
            }
            context.write(wrapOutboundOut(.body(files.hold(descriptor, bytes: bytes).marker)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            if let waterMark { try? options?.setOption(ChannelOptions.writeBufferWaterMark, value: waterMark) }
        } else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        let elapsed = ContinuousClock.now - request.started
        answerer.metrics?.record(status: status.code, duration: elapsed)
        answerer.counts.mediaLinksAnsweredAhead.add(1, ordering: .relaxed)
        if answerer.logger.logLevel <= .info {
            var metadata = RequestLogMiddleware.metadata(method: .get, path: request.head.path ?? "", status: status.code, elapsed: elapsed)
            metadata["request_id"] = .string(id)
            if let client { metadata["client_request_id"] = .string(client) }
            answerer.logger.info("request", metadata: metadata)
        }
        return true
    }
}

/// RFC 9110's `Date` field value (`Thu, 26 Nov 2026 20:07:57 GMT`), made once a second.
struct HTTPDateField {
    private var second = -1
    private var value = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    mutating func now() -> String {
        var seconds = time(nil)
        guard seconds != second else { return value }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        second = seconds
        value = Self.format(parts)
        return value
    }

    static func format(_ parts: tm) -> String {
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : String(n) }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
