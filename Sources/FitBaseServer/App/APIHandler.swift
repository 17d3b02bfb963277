import FitBaseAPI

/// The generated `APIProtocol`, answered by forwarding each operation to its feature's controller.
struct APIHandler: APIProtocol {
    let serviceStatus: ServiceStatusController
    let accounts: AccountsController

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        try await serviceStatus.getHealth(input)
    }

    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        try await serviceStatus.getReadiness(input)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        try await serviceStatus.getOpenAPIDocument(input)
    }

    // MARK: Accounts

    func getJWKS(_ input: Operations.GetJWKS.Input) async throws -> Operations.GetJWKS.Output {
        try await accounts.getJWKS(input)
    }

    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        try await accounts.signUp(input)
    }

    func signIn(_ input: Operations.SignIn.Input) async throws -> Operations.SignIn.Output {
        try await accounts.signIn(input)
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        try await accounts.refreshSession(input)
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        try await accounts.signOut(input)
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        try await accounts.getMe(input)
    }

    func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output {
        try await accounts.listSessions(input)
    }

    func deleteSession(_ input: Operations.DeleteSession.Input) async throws -> Operations.DeleteSession.Output {
        try await accounts.deleteSession(input)
    }
}
