import FitBaseCore
import FitBaseAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Liveness, readiness and the contract: the endpoints operators and load balancers call.
protocol ServiceStatusOperations: FeatureOperations { var statusFeature: ServiceStatusFeature { get } }

extension ServiceStatusOperations {
    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    /// The routes answered without the generated server.
    var statusRoutes: [DirectRoute] {
        [DirectRoute(method: .get, path: "/healthz") { request, _ in DirectRoute.acceptsJSON(request) ? DirectRoute.json(healthBody) : nil }]
    }

    /// Ready when the database answers a trivial query. A probe's own timeout bounds how long it waits.
    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        do {
            try await statusFeature.database.ping()
        } catch {
            throw Problem(
                .serviceUnavailable, code: .databaseUnavailable,
                detail: "The database (\(statusFeature.database.engine.rawValue)) did not answer."
            )
        }
        let engine: Components.Schemas.ReadinessStatus.DatabasePayload = statusFeature.database.engine == .sqlite ? .sqlite : .postgres
        return .ok(.init(body: .json(.init(status: .ready, database: engine))))
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .yaml(HTTPBody(statusFeature.openAPIDocument))))
    }
}

/// `/healthz` written once: load balancers call it constantly, and its answer never changes.
private let healthBody = ByteBuffer(string: #"{"status":"ok"}"#)
