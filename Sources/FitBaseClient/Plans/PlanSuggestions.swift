import FitBaseAPI
import FitBaseCore

/// A week of a plan with each session adjusted from the user's recent training, as the server suggests it: per
/// session the `action` (progress, keep, reduce, swap), the workout and minutes to do and a `reason`, plus the
/// `summary` of the weeks it rests on.
public typealias PlanProgressionSuggestion = Components.Schemas.PlanProgression

extension FitBaseClient {
    /// The suggested sessions of week `week` of plan `planId` (by default, the week after the current one), the
    /// `advancedProgression` feature.
    ///
    /// ```swift
    /// do {
    ///     let next = try await fitbase.planProgression(planId: plan.id)
    ///     for session in next.sessions { print(session.day, session.action, session.suggestedDuration ?? 0, session.reason) }
    /// } catch .problem(let problem) where problem.code == .upgradeRequired {
    ///     showPaywall(for: problem.requiredTier)
    /// }
    /// ```
    ///
    /// Fails with `.problem`: `upgradeRequired` without the feature, `notFound` for a plan that is not the user's,
    /// `validationFailed` or `invalidRequest` naming `week` for a week the plan does not have.
    public func planProgression(planId: PlanID, week: Int? = nil) async throws(FitBaseError) -> PlanProgressionSuggestion {
        switch try await call({ try await self.api.getPlanProgression(path: .init(planId: planId.description), query: .init(week: week)) }) {
        case .ok(let ok): return try FitBaseError.decoding { try ok.body.json }
        case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
        case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
        case .code402(let response): throw .from(statusCode: 402, problem: try? response.body.applicationProblemJson)
        case .notFound(let response): throw .from(statusCode: 404, problem: try? response.body.applicationProblemJson)
        case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
        }
    }
}
