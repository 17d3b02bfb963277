import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Entity tags and conditional GETs for the answers clients cache: the catalog, today's and the week's
/// recommendations, the subscription and the features it unlocks, the caller's remote config.
///
/// A `200` answer gets a strong `ETag` — the first 16 bytes of the SHA-256 of its body, base64url — with
/// `Cache-Control: private, no-cache` (any cache must ask again before reusing it, and a shared cache must not keep
/// it: the answer depends on who asks, e.g. a premium workout's video) and `Vary: Authorization`. A request whose
/// `If-None-Match` names the current tag (or `*`) is answered `304 Not Modified` with the tag and no body, so the
/// SDK's caches revalidate for a few bytes. The tag is computed from what would be sent, so it changes exactly when
/// the answer does — a catalog edit, a new entitlement, the next day's recommendations — with no version to keep in
/// step across instances.
struct ConditionalGetMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    /// Answers larger than this are sent without a tag rather than gathered in memory to hash.
    static let maximumTaggedBytes = 1 << 20

    /// The GET routes it wraps (contract path templates).
    static let paths: Set<String> = [
        "/v1/workouts", "/v1/workouts/featured", "/v1/workouts/phase/{phase}", "/v1/workouts/{workoutId}",
        "/v1/programs", "/v1/programs/{programId}",
        "/v1/recommendations/today", "/v1/recommendations/week",
        "/v1/subscription", "/v1/features",
        "/v1/config",
    ]

    static func applies(path: String, method: HTTPRequest.Method) -> Bool {
        method == .get && paths.contains(path)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard response.status == .ok, let length = response.body.contentLength, length <= Self.maximumTaggedBytes else { return response }
        let collector = BodyCollector(capacity: length)
        try await response.body.write(collector.writer)
        let body = collector.buffer.value
        let tag = Self.entityTag(body.readableBytesView)
        for field in Self.headers(tag: tag) { response.headers[field.name] = field.value }
        if Self.matches(request.headers[values: .ifNoneMatch], tag: tag) {
            var headers = response.headers
            headers[.contentType] = nil
            headers[.contentLength] = nil
            return Response(status: .notModified, headers: headers, body: ResponseBody())
        }
        response.body = ResponseBody(byteBuffer: body)
        return response
    }

    /// The fields of an answer tagged `tag`: the tag, `Cache-Control` and `Vary`.
    static func headers(tag: String) -> HTTPFields {
        [.eTag: tag, .cacheControl: "private, no-cache", .vary: "Authorization"]
    }

    /// `"<base64url of the first 16 bytes of SHA-256(body)>"`, quotes included (RFC 9110 §8.8.3).
    static func entityTag(_ body: some DataProtocol) -> String {
        "\"" + Data(SHA256.hash(data: body).prefix(16)).base64URLEncoded + "\""
    }

    /// Whether `If-None-Match` (possibly several fields, each a comma-separated list, weak tags allowed: the
    /// comparison is weak as RFC 9110 §13.1.2 asks) names `tag`, or is `*`.
    static func matches(_ fields: [String], tag: String) -> Bool {
        for field in fields {
            for candidate in field.split(separator: ",") {
                var candidate = candidate.trimmingCharacters(in: .whitespaces)
                if candidate == "*" { return true }
                if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
                if candidate == tag { return true }
            }
        }
        return false
    }
}

/// Gathers a response body written through ``ResponseBodyWriter`` into one buffer.
private struct BodyCollector {
    final class Box {
        var value: ByteBuffer
        init(_ value: ByteBuffer) { self.value = value }
    }

    let buffer: Box

    init(capacity: Int) {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(capacity)
        self.buffer = Box(buffer)
    }

    var writer: some ResponseBodyWriter { Writer(box: buffer) }

    private struct Writer: ResponseBodyWriter {
        let box: Box
        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            box.value.writeBuffer(&buffer)
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
