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
        try await call {
            try await self.api.getPlanProgression(path: .init(planId: planId.description), query: .init(week: week)).ok.body.json
        }
    }
}
