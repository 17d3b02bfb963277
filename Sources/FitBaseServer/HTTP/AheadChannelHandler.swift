import FitBaseCore
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// A request an ``AheadRoute`` takes: what it read from the head, and the head itself, which goes on to the router if
/// the route cannot answer after all.
protocol AheadRequest {
    var head: HTTPRequest { get }
}

/// A route some of whose requests are answered on the connection's event loop, ahead of the router and its tasks
/// (``AheadChannelHandler``): the plain case of a route called many times a second, whose answer is at hand without
/// waiting on anything (a media file's range, a workout from the catalog in memory). Whatever the route does not take
/// — a request it does not fully understand, an answer it would have to wait for — goes to the router unchanged, which
/// answers it with its problems and fields; so the router stays the one definition of the route, and the answer here
/// is the router's, field for field.
protocol AheadRoute: Sendable {
    associatedtype Taken: AheadRequest
    /// What the route remembers on one connection.
    associatedtype Memory

    func makeMemory() -> Memory
    /// `head` as a request answered here (its end still to be read); `nil` for the router's.
    func take(_ head: HTTPRequest, memory: inout Memory) -> Taken?
    /// Writes the answer to `taken` and returns true; or writes nothing and returns false: the router answers it.
    func answer(_ taken: Taken, context: ChannelHandlerContext, answering: inout AheadAnswering) -> Bool
}

/// What every answer made ahead of the router carries that the router's middleware would have added: the request
/// limits, the request id, `Date`, `Server`, one log line and the route's metrics.
struct AheadAnswerFields: Sendable {
    /// `nil` when request limits are off.
    let limiter: RequestRateLimiter?
    let trustedProxies: [AddressRange]
    let proxyWarning: UntrustedProxyWarning
    let logger: Logger
    /// The `Server` field of every answer.
    let serverName: String
}

/// ``AheadAnswerFields`` on one connection (the `Date` field is made once a second there).
struct AheadAnswering {
    let fields: AheadAnswerFields
    private var dates = HTTPDateField()

    init(_ fields: AheadAnswerFields) {
        self.fields = fields
    }

    /// The limits' fields for a read from the connection's peer (`forwardedFor` its `X-Forwarded-For`), counted; `nil`
    /// when the caller is over the limit (nothing is answered here then: the router refuses it, with its problem).
    func admitRead(peer: SocketAddress?, forwardedFor: String?) -> HTTPFields? {
        guard let limiter = fields.limiter else { return [:] }
        if fields.trustedProxies.isEmpty { fields.proxyWarning.check(peer: peer) }
        let address = ClientAddress.resolve(peer: peer, forwardedFor: forwardedFor, trusted: fields.trustedProxies)
        guard let reading = limiter.admit(.reads, user: nil, address: address.map(ClientAddress.bucket(of:))) else { return [:] }
        return reading.allowed ? RateLimitMiddleware.headers(reading) : nil
    }

    /// Appends the request's id (and the client's, when acceptable), `Date` and `Server` to `headers`, as the router's
    /// middleware and server do; the two ids.
    mutating func finish(_ headers: inout HTTPFields, clientRequestID: String?) -> (id: String, client: String?) {
        let id = UUID.random().lowercasedString
        headers.append(HTTPField(name: .requestID, value: id))
        let client = clientRequestID.flatMap(RequestIDMiddleware.acceptable)
        if let client { headers.append(HTTPField(name: .clientRequestID, value: client)) }
        headers.append(HTTPField(name: .date, value: dates.now()))
        headers.append(HTTPField(name: .server, value: fields.serverName))
        return (id, client)
    }

    /// The route's metrics and the request's log line, as the router's middleware records them.
    func record(
        _ head: HTTPRequest, status: HTTPResponse.Status, started: ContinuousClock.Instant, ids: (id: String, client: String?),
        metrics: ServerMetrics.RouteRecorder?
    ) {
        let elapsed = ContinuousClock.now - started
        metrics?.record(status: status.code, duration: elapsed)
        guard fields.logger.logLevel <= .info else { return }
        var metadata = RequestLogMiddleware.metadata(method: head.method, path: head.path ?? "", status: status.code, elapsed: elapsed)
        metadata["request_id"] = .string(ids.id)
        if let client = ids.client { metadata["client_request_id"] = .string(client) }
        fields.logger.info("request", metadata: metadata)
    }
}

/// Answers the requests an ``AheadRoute`` takes on the connection's event loop, ahead of the router.
///
/// It sits after Hummingbird's connection state handler (which then counts its requests, closes idle connections and
/// drains on shutdown as for any other), so its parts are HTTP types. Order is kept: a request is taken here only when
/// every request handed on before it has been answered, and it is answered as soon as its end is read (its body is
/// dropped). Several of these may follow one another: each counts the answers of those after it as the router's.
final class AheadChannelHandler<Route: AheadRoute>: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let route: Route
    private var memory: Route.Memory
    private var answering: AheadAnswering
    /// The request taken here whose end is still to be read.
    private var reading: Route.Taken?
    /// Requests handed on whose answer has not ended yet.
    private var handedOn = 0

    init(route: Route, fields: AheadAnswerFields) {
        self.route = route
        self.memory = route.makeMemory()
        self.answering = AheadAnswering(fields)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if let request = reading {
            guard case .end = part else { return }
            reading = nil
            if !route.answer(request, context: context, answering: &answering) {
                handedOn += 1
                context.fireChannelRead(wrapInboundOut(.head(request.head)))
                context.fireChannelRead(wrapInboundOut(.end(nil)))
            }
            return
        }
        if case .head(let head) = part {
            if handedOn == 0, let request = route.take(head, memory: &memory) {
                reading = request
                return
            }
            handedOn += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { handedOn = max(0, handedOn - 1) }
        context.write(data, promise: promise)
    }
}

/// One pass over a request's fields for a route answered ahead: the fields it needs, and whether it must go to the
/// router instead (a bearer token: the router names the caller and the limits count per user; `Connection`: the router
/// closes the connection after the answer; a body the router would measure against the limit).
struct AheadRequestFields {
    var range: String?
    var forwardedFor: String?
    var requestID: String?
    var ifNoneMatch: String?
    var accept: String?

    /// `nil` when `head` is the router's to answer.
    init?(_ head: HTTPRequest) {
        var repeated = false
        for field in head.headerFields {
            switch field.name {
            case .authorization, .connection, .contentLength, .transferEncoding: return nil
            case .range: (repeated, range) = (repeated || range != nil, field.value)
            case .xForwardedFor: (repeated, forwardedFor) = (repeated || forwardedFor != nil, field.value)
            case .requestID: (repeated, requestID) = (repeated || requestID != nil, field.value)
            case .ifNoneMatch: (repeated, ifNoneMatch) = (repeated || ifNoneMatch != nil, field.value)
            case .accept: (repeated, accept) = (repeated || accept != nil, field.value)
            default: break
            }
        }
        if repeated {
            // Given twice: their values joined, as the router reads them.
            let fields = head.headerFields
            (range, forwardedFor, requestID, ifNoneMatch, accept) =
                (fields[.range], fields[.xForwardedFor], fields[.requestID], fields[.ifNoneMatch], fields[.accept])
        }
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
