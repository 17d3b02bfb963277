import FitBaseCore
import FitBaseAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Liveness, readiness and the contract: the endpoints operators and load balancers call.
struct ServiceStatusController: Sendable {
    let database: Database
    let openAPIDocument: Data

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    /// `/healthz` written once: load balancers call it constantly, and its answer never changes.
    static let healthBody = ByteBuffer(string: #"{"status":"ok"}"#)

    /// The routes answered without the generated server.
    static var routes: [DirectRoute] {
        [DirectRoute(method: .get, path: "/healthz") { request, _ in DirectRoute.acceptsJSON(request) ? DirectRoute.json(healthBody) : nil }]
    }

    /// Ready when the database answers a trivial query. A probe's own timeout bounds how long it waits.
    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        do {
            try await database.ping()
        } catch {
            throw Problem(
                .serviceUnavailable, code: .databaseUnavailable,
                detail: "The database (\(database.engine.rawValue)) did not answer."
            )
        }
        let engine: Components.Schemas.ReadinessStatus.DatabasePayload = database.engine == .sqlite ? .sqlite : .postgres
        return .ok(.init(body: .json(.init(status: .ready, database: engine))))
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .yaml(HTTPBody(openAPIDocument))))
    }
}
