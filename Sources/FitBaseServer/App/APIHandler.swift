import FitBaseAPI

/// The generated `APIProtocol`, answered by forwarding each operation to its feature's controller.
struct APIHandler: APIProtocol {
    let serviceStatus: ServiceStatusController

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        try await serviceStatus.getHealth(input)
    }

    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        try await serviceStatus.getReadiness(input)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        try await serviceStatus.getOpenAPIDocument(input)
    }
}
