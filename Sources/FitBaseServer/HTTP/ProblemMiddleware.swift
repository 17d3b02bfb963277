import FitBaseCore
import Hummingbird
import Logging

/// Turns every error into an `application/problem+json` response: ``Problem``s as they are, request-shape errors from
/// the generated server as 400s naming the field, unmatched methods as 405, and anything unexpected as a logged 500
/// that reveals nothing about the server.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            var problem: Problem
            if let known = ProblemMapping.problem(for: error) {
                problem = known
            } else {
                context.logger.error("unhandled error", metadata: ["error": .string(String(reflecting: error))])
                problem = .internalError
            }
            if problem.status == .notFound, problem.code == .notFound, context.endpointPath == "NotFound" {
                let allowed = routes.allowedMethods(forPath: request.uri.path)
                problem = allowed.isEmpty
                    ? .notFound("No route matches \(request.uri.path).")
                    : .methodNotAllowed(request.method, path: request.uri.path, allowed: allowed)
            }
            return problem.response(instance: request.uri.path, requestID: context.requestID)
        }
    }
}
