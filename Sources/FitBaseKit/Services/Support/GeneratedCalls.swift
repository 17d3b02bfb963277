import FitBaseAPI
import FitBaseClient

extension FitBaseClient {
    /// Runs a generated operation for a live service: `read` gets the generated client and returns the success it
    /// reads (`try await $0.getCurrentGroup().ok.body.json`); a refusal (one mapping, ``ProblemAnswers``), a lost
    /// connection or an answer of another shape comes out as a ``KitError`` (`cancelled` when the task is).
    func kitCall<Output: Sendable>(_ read: @Sendable (Client) async throws -> Output) async throws(KitError) -> Output {
        try await kit { () async throws(FitBaseError) in try await call { try await read(self.api) } }
    }

    /// ``kitCall(_:)`` reading the generated answer as Core's `Record` of the same JSON (``ContractJSON/record(_:from:)``).
    func kitCall<Record: Decodable, Answer: Encodable & Sendable>(
        _ type: Record.Type, _ read: @Sendable (Client) async throws -> Answer
    ) async throws(KitError) -> Record {
        try await kit { () async throws(FitBaseError) in try ContractJSON.record(type, from: try await call { try await read(self.api) }) }
    }
}
