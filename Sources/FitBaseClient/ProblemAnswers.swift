import FitBaseAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The one place an answer becomes a ``FitBaseError``: every status from 400 up leaves the generated client as a
/// thrown error — the server's problem when it sent one, else ``FitBaseError/unexpectedResponse(statusCode:)`` — so a
/// call reads only its success (`try await api.getMe().ok.body.json`) and no call site maps statuses again.
///
/// It is the outermost middleware: the session's refresh-and-retry on 401 runs inside it and sees the raw answer.
struct ProblemAnswers: ClientMiddleware {
    /// The most of a refused answer's body read for its problem; a problem document is a few hundred bytes.
    static let problemLimit = 64 << 10

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, answer) }
        let data: Data? = if let answer { try? await Data(collecting: answer, upTo: Self.problemLimit) } else { nil }
        throw FitBaseError.answer(response, body: data)
    }
}

extension FitBaseError {
    /// What a refused answer means: the problem in `body` (with the answer's `Retry-After`), or an answer the contract
    /// does not describe. Used for every answer, generated or read by hand (a sync page, a push).
    package static func answer(_ response: HTTPResponse, body: Data?) -> FitBaseError {
        guard let body, let wire = try? JSONDecoder().decode(Components.Schemas.Problem.self, from: body) else {
            return .unexpectedResponse(statusCode: response.status.code)
        }
        var problem = APIProblem(wire)
        problem.retryAfterSeconds = response.headerFields[.retryAfter].flatMap { Int($0) }
        return .problem(problem)
    }
}
