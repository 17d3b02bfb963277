import Foundation
import HTTPTypes
import Hummingbird

/// Counts every answered request of one route and times it, labelled with the route's `operationId`.
///
/// ``RoutingTransport`` wraps each route in one of these (outside its scoped middleware, so a request refused by a rate
/// limit is counted too), which is how the label is known without matching the path again. A thrown error is counted
/// with the status it becomes.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let recorder: ServerMetrics.RouteRecorder

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            recorder.record(status: response.status.code, duration: ContinuousClock.now - start)
            return response
        } catch {
            recorder.record(status: ProblemMapping.problem(for: error)?.status.code ?? 500, duration: ContinuousClock.now - start)
            throw error
        }
    }
}

/// The contract's `operationId` of each route, read from openapi.yaml's `paths` as the generator reads them: a path
/// (indented two spaces), a method under it (four), its `operationId` (six).
struct OperationNames: Sendable {
    private let names: [String: String]

    init(document: Data) {
        var names: [String: String] = [:]
        var path: String?
        var method: String?
        var inPaths = false
        for line in String(decoding: document, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") {
                inPaths = line.hasPrefix("paths:")
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
                method = nil
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
            } else if let path, let method, line.hasPrefix("      operationId:") {
                names[Self.key(method, path)] = line.dropFirst("      operationId:".count).trimmingCharacters(in: .whitespaces)
            }
        }
        self.names = names
    }

    /// The `operationId` of `method` on `path` (the contract's template); the method and path themselves for a route
    /// the contract does not name.
    func name(_ method: HTTPRequest.Method, _ path: String) -> String {
        names[Self.key(method.rawValue, path)] ?? "\(method.rawValue) \(path)"
    }

    private static func key(_ method: String, _ path: String) -> String { "\(method) \(path)" }
}
