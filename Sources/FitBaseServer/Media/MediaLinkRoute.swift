import FitBaseCore
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// `GET /v1/media/{token}` answered on the connection's event loop, ahead of the router (``AheadChannelHandler``), in
/// the case a seeking player repeats many times a minute: a link that checks out, a file in the data directory, the
/// range it asks for within it. The file is opened and measured right there (an `open` and an `fstat`, as nginx does),
/// and its bytes go out through the kernel (``FileRegionResponses``). Any other request, and a media request whose
/// file is gone, whose range starts past the end or whose caller is over the limit, goes on to the router unchanged,
/// which answers it (its problem, its 404, its 416, its 429). The answer here carries what the router's would: the same
/// status and fields (``OpenedMedia``), the limits' fields, a request id, one log line and the route's metrics.
struct MediaLinkRoute: AheadRoute {
    let links: MediaLinks
    let storage: LocalMediaStorage
    let clock: ServerClock
    /// Where a range's file becomes a file region for NIO's encoder.
    let files: FileRegionResponses.FileRegionHandler
    /// The route's recorder; `nil` when metrics are off.
    let metrics: ServerMetrics.RouteRecorder?
    /// Counts the answers (``ServerMetrics/mediaLinksAnsweredAhead``).
    let counts: ServerMetrics

    private static let prefix = Array("/v1/media/".utf8)

    /// A media link request answered here.
    struct LinkRequest: AheadRequest {
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

    /// The connection's last link that checked out.
    func makeMemory() -> CheckedLink? { nil }

    /// `head` as a request answered here: a `GET` of a media link that checks out now, sent as ``AheadRequestFields``
    /// allows. `checked` is the connection's last link that checked out, and becomes this one's.
    func take(_ head: HTTPRequest, memory checked: inout CheckedLink?) -> LinkRequest? {
        guard head.method == .get, let path = head.path, path.utf8.starts(with: Self.prefix), let fields = AheadRequestFields(head) else { return nil }
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
            head: head, range: fields.range, forwardedFor: fields.forwardedFor, requestID: fields.requestID, key: key, expiry: expiry, now: now,
            started: .now
        )
    }

    /// Opens the file and writes the answer; false (nothing written) when the file is gone, the range starts past its
    /// end, the open fails or the caller is over the limit: the router answers then, as it would have.
    func answer(_ request: LinkRequest, context: ChannelHandlerContext, answering: inout AheadAnswering) -> Bool {
        let range = request.range.flatMap(MediaByteRange.init(header:))
        guard let content = try? storage.getBlocking(request.key, range: range) else { return false }
        let opened = OpenedMedia(content: content, ranged: range != nil, expiry: request.expiry, now: request.now)
        var fields = opened.headers
        // Appended: none of these is among the fields above (a set by name would look for it first).
        fields.append(HTTPField(name: .contentLength, value: String(content.range.map { $0.count } ?? 0)))
        guard let limits = answering.admitRead(peer: context.channel.remoteAddress, forwardedFor: request.forwardedFor) else { return false }
        fields.append(contentsOf: limits)
        // Taken from the content only now that it is sent: a content dropped before this closes its file.
        let descriptor = content.range == nil ? nil : content.localFile?.opened.take()
        guard content.range == nil || descriptor != nil else { return false }
        let ids = answering.finish(&fields, clientRequestID: request.requestID)
        let status = opened.status
        context.write(NIOAny(HTTPResponsePart.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
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
            context.write(NIOAny(HTTPResponsePart.body(files.hold(descriptor, bytes: bytes).marker)), promise: nil)
            context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: nil)
            if let waterMark { try? options?.setOption(ChannelOptions.writeBufferWaterMark, value: waterMark) }
        } else {
            context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: nil)
        }
        answering.record(request.head, status: status, started: request.started, ids: ids, metrics: metrics)
        counts.mediaLinksAnsweredAhead.add(1, ordering: .relaxed)
        return true
    }
}

extension ServerOperations {
    /// Media links answered ahead of the router, when media are kept in the data directory (links to an S3 store are
    /// the store's own).
    func mediaLinkRoute(
        metrics: ServerMetrics.RouteRecorder?, counts: ServerMetrics
    ) -> (@Sendable (FileRegionResponses.FileRegionHandler) -> MediaLinkRoute)? {
        guard let storage = mediaFeature.storage as? LocalMediaStorage else { return nil }
        let (links, clock) = (mediaFeature.links, clock)
        return { files in MediaLinkRoute(links: links, storage: storage, clock: clock, files: files, metrics: metrics, counts: counts) }
    }

    /// What answers made ahead of the router carry of the router's middleware.
    func aheadAnswerFields(limiter: RequestRateLimiter?, logger: Logger, serverName: String) -> AheadAnswerFields {
        let authentication = accountsFeature.authentication
        return AheadAnswerFields(
            limiter: limiter, trustedProxies: authentication.trustedProxies, proxyWarning: authentication.proxyWarning, logger: logger,
            serverName: serverName
        )
    }
}
