import FitBaseCore
import FitBaseAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A failure the client should see, rendered as RFC 9457 `application/problem+json` with a stable `code`.
///
/// Controllers throw these; ``ProblemMiddleware`` turns them (and every other error) into responses.
package struct Problem: Error, Sendable, Equatable {
    package var status: HTTPResponse.Status
    /// Stable, snake_case identifier clients switch on.
    package var code: ProblemCode
    /// Short summary of the problem type.
    package var title: String
    /// Explanation of this occurrence; never internals such as SQL or stack traces.
    package var detail: String?
    /// Offending fields, for validation problems.
    package var fieldErrors: [FieldError]
    /// Extra response headers, e.g. `Allow` or `Retry-After`.
    package var headers: HTTPFields
    /// For 402 `upgrade_required`: the lowest tier that unlocks what was asked for.
    package var requiredTier: String?

    package struct FieldError: Sendable, Equatable {
        package var field: String
        package var message: String

        package init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    package init(
        _ status: HTTPResponse.Status, code: ProblemCode, title: String? = nil, detail: String? = nil,
        fieldErrors: [FieldError] = [], headers: HTTPFields = [:], requiredTier: String? = nil
    ) {
        self.status = status
        self.code = code
        self.title = title ?? status.reasonPhrase
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.headers = headers
        self.requiredTier = requiredTier
    }

    /// The `type` URI of this problem.
    package var typeURI: String { "urn:fitbase:problem:\(code.rawValue)" }

    /// Renders the problem for a request.
    func response(instance: String, requestID: String?) -> Response {
        let body = wire(instance: instance, requestID: requestID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        let data = (try? encoder.encode(body)) ?? Data(#"{"code":"internal_error","status":500}"#.utf8)
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension Problem {
    /// The problem as the contract's `Problem` schema.
    func wire(instance: String, requestID: String? = nil) -> Components.Schemas.Problem {
        Components.Schemas.Problem(
            _type: typeURI,
            title: title,
            status: status.code,
            detail: detail,
            code: .init(value1: code, value2: code.rawValue),
            instance: instance,
            requestId: requestID,
            errors: fieldErrors.isEmpty ? nil : fieldErrors.map { .init(field: $0.field, message: $0.message) },
            requiredTier: requiredTier.map { .init(value1: .init(rawValue: $0), value2: $0) }
        )
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(.notFound, code: .notFound, detail: detail)
    }

    static func methodNotAllowed(_ method: HTTPRequest.Method, path: String, allowed: [HTTPRequest.Method]) -> Problem {
        var headers = HTTPFields()
        headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        return Problem(
            .methodNotAllowed, code: .methodNotAllowed,
            detail: "\(method.rawValue) is not allowed on \(path); allowed: \(allowed.map(\.rawValue).joined(separator: ", ")).",
            headers: headers
        )
    }

    static func payloadTooLarge(limit: Int) -> Problem {
        Problem(
            .contentTooLarge, code: .payloadTooLarge,
            detail: "The request body exceeds the limit of \(limit) bytes."
        )
    }

    static func malformedJSON(_ detail: String) -> Problem {
        Problem(.badRequest, code: .malformedJson, title: "Malformed JSON", detail: detail)
    }

    static func invalidRequest(_ detail: String, fieldErrors: [FieldError] = []) -> Problem {
        Problem(.badRequest, code: .invalidRequest, title: "Invalid request", detail: detail, fieldErrors: fieldErrors)
    }

    /// 401 with a `WWW-Authenticate: Bearer` challenge.
    static func unauthenticated(_ code: ProblemCode, _ detail: String) -> Problem {
        Problem(.unauthorized, code: code, title: "Unauthorized", detail: detail, headers: [.wwwAuthenticate: "Bearer"])
    }

    /// A batch over its limit: `field` names the list, `noun` its items ("samples"), `request` the request ("An upload").
    static func batchTooLarge(_ field: String, maximum: Int, noun: String, request: String) -> Problem {
        invalidRequest(
            "\(request) takes at most \(maximum) \(noun); send the rest in another.",
            fieldErrors: [.init(field: field, message: "must have at most \(maximum) items")]
        )
    }

    static func validationFailed(_ fieldErrors: [FieldError]) -> Problem {
        Problem(
            .badRequest, code: .validationFailed, title: "Validation failed",
            detail: fieldErrors.map { "\($0.field) \($0.message)" }.joined(separator: "; "), fieldErrors: fieldErrors
        )
    }

    static let internalError = Problem(
        .internalServerError, code: .internalError,
        detail: "The server failed to handle the request. Quote the request id when reporting this."
    )
}

/// A `Problem` that escapes the router's middleware (thrown by a route outside ``ProblemMiddleware``) still renders as
/// `application/problem+json`, and any Hummingbird code that asks an error for its status sees the problem's.
extension Problem: HTTPResponseError {
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        response(instance: request.uri.path, requestID: (context as? FitBaseRequestContext)?.requestID)
    }
}
