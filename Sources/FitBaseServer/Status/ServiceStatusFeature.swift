import FitBaseAPI
import Foundation

/// Liveness, readiness and the contract document.
struct ServiceStatusFeature: ServerFeature {
    let database: Database
    let openAPIDocument: Data

    init(_ foundation: ServerFoundation) throws {
        database = foundation.database
        openAPIDocument = try OpenAPIDocument.load()
    }
}
