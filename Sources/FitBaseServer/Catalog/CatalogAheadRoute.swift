import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// `GET /v1/workouts/{workoutId}` and `GET /v1/workouts` answered on the connection's event loop, ahead of the router
/// (``AheadChannelHandler``), for a caller without an account when the answer is in memory
/// (``CatalogResponses/answerAtHand(path:)``): while the instance may trust its catalog generation (``CacheGenerations``),
/// the catalog browsing every app does on launch costs no task and no trip through the router. Everything else — a
/// signed-in caller, a premium workout, a listing the direct route would not answer, a generation to read again, an
/// answer too large to tag, a caller over the limit — is the router's, unchanged.
///
/// The answer is the router's, field for field: the body the direct route writes, the conditional GET's tag and
/// fields (and `304 Not Modified` when `If-None-Match` names the tag), the limits' fields, a request id, `Date`,
/// `Server`, one log line and the route's metrics.
struct CatalogAheadRoute: AheadRoute {
    let responses: CatalogResponses
    /// The two routes' recorders; `nil` when metrics are off.
    let workoutMetrics: ServerMetrics.RouteRecorder?
    let pageMetrics: ServerMetrics.RouteRecorder?
    /// Counts the answers (``ServerMetrics/catalogAnsweredAhead``).
    let counts: ServerMetrics

    struct CatalogRequest: AheadRequest {
        let head: HTTPRequest
        let route: CatalogResponses.Route
        let body: ByteBuffer
        let tag: String
        let notModified: Bool
        let forwardedFor: String?
        let requestID: String?
        let started: ContinuousClock.Instant
    }

    func makeMemory() {}

    func take(_ head: HTTPRequest, memory: inout Void) -> CatalogRequest? {
        guard head.method == .get, let path = head.path, let fields = AheadRequestFields(head),
            DirectRoute.acceptsJSON(values: fields.accept.map { [$0] } ?? []),
            let (route, body, knownTag) = responses.answerAtHand(path: path),
            body.readableBytes <= ConditionalGetMiddleware.maximumTaggedBytes
        else { return nil }
        let tag = knownTag ?? ConditionalGetMiddleware.entityTag(body.readableBytesView)
        return CatalogRequest(
            head: head, route: route, body: body, tag: tag,
            notModified: fields.ifNoneMatch.map { ConditionalGetMiddleware.matches([$0], tag: tag) } ?? false,
            forwardedFor: fields.forwardedFor, requestID: fields.requestID, started: .now
        )
    }

    func answer(_ request: CatalogRequest, context: ChannelHandlerContext, answering: inout AheadAnswering) -> Bool {
        guard let limits = answering.admitRead(peer: context.channel.remoteAddress, forwardedFor: request.forwardedFor) else { return false }
        let status: HTTPResponse.Status = request.notModified ? .notModified : .ok
        var fields = HTTPFields()
        if !request.notModified {
            fields.append(HTTPField(name: .contentType, value: "application/json; charset=utf-8"))
            fields.append(HTTPField(name: .contentLength, value: String(request.body.readableBytes)))
        }
        fields.append(contentsOf: ConditionalGetMiddleware.headers(tag: request.tag))
        fields.append(contentsOf: limits)
        let ids = answering.finish(&fields, clientRequestID: request.requestID)
        context.write(NIOAny(HTTPResponsePart.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        if !request.notModified { context.write(NIOAny(HTTPResponsePart.body(request.body)), promise: nil) }
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: nil)
        answering.record(request.head, status: status, started: request.started, ids: ids, metrics: request.route == .workout ? workoutMetrics : pageMetrics)
        counts.catalogAnsweredAhead.add(1, ordering: .relaxed)
        return true
    }
}

extension ServerOperations {
    /// The catalog answered ahead of the router.
    func catalogAheadRoute(workoutMetrics: ServerMetrics.RouteRecorder?, pageMetrics: ServerMetrics.RouteRecorder?, counts: ServerMetrics)
        -> CatalogAheadRoute
    {
        CatalogAheadRoute(responses: catalogFeature.responses, workoutMetrics: workoutMetrics, pageMetrics: pageMetrics, counts: counts)
    }
}
