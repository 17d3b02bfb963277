import FitBaseAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends `If-None-Match` as RFC 9110 writes entity tags. The generated client encodes a header parameter like a URI
/// component, so the tag `"abc"` would leave as `%22abc%22`, which names no tag and makes every revalidation a full
/// download; this puts the characters back before the request goes out.
struct EntityTagHeaders: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let tags = request.headerFields[.ifNoneMatch], tags.contains("%"), let decoded = tags.removingPercentEncoding {
            request.headerFields[.ifNoneMatch] = decoded
        }
        return try await next(request, body, baseURL)
    }
}
