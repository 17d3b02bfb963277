import FitBaseAPI
import FitBaseCore
import Foundation
import Logging

/// Today's and the week's recommendations for the signed-in user, from the rules or the configured language model.
protocol RecommendationOperations: FeatureOperations { var recommendationsFeature: RecommendationsFeature { get } }

extension RecommendationOperations {
    private var catalog: CatalogStore { recommendationsFeature.catalog }
    private var model: (any LanguageModel)? { recommendationsFeature.model }

    func getTodayRecommendations(_ input: Operations.GetTodayRecommendations.Input) async throws -> Operations.GetTodayRecommendations.Output {
        let caller = try RequestScope.requireCaller()
        let inputs = try await gather(for: caller, energy: input.query.energy)
        // Today's answer for these very inputs (this energy level included), if one was made: no second model call.
        if let kept = try await recommendationsFeature.store.kept(for: caller.user, on: inputs.today, fingerprint: inputs.fingerprint), let answer = restore(kept.answer, inputs) {
            return .ok(.init(body: .json(wire(answer, kept: kept, inputs))))
        }
        let (answer, kept) = try await generate(inputs, for: caller.user, generation: 0, alreadyShown: [])
        return .ok(.init(body: .json(wire(answer, kept: kept, inputs))))
    }

    func refreshRecommendations(_ input: Operations.RefreshRecommendations.Input) async throws -> Operations.RefreshRecommendations.Output {
        let caller = try RequestScope.requireCaller()
        let inputs = try await gather(for: caller, energy: input.query.energy)
        let previous = try await recommendationsFeature.store.kept(for: caller.user).flatMap { $0.localDate == inputs.today ? $0 : nil }
        let shown = Set((previous?.answer.items ?? []).compactMap { WorkoutID($0.workoutId) })
        let (answer, kept) = try await generate(inputs, for: caller.user, generation: (previous?.generation ?? -1) + 1, alreadyShown: shown)
        return .ok(.init(body: .json(wire(answer, kept: kept, inputs))))
    }

    func getWeekRecommendations(_ input: Operations.GetWeekRecommendations.Input) async throws -> Operations.GetWeekRecommendations.Output {
        let caller = try RequestScope.requireCaller()
        let inputs = try await gather(for: caller, energy: nil)
        let positions = (0..<7).map { offset in inputs.prediction?.position(on: inputs.today.adding(days: offset)) }
        let days = WeekPlanner(engine: recommendationsFeature.engine).plan(inputs.catalog, from: inputs.today, positions: positions, context: inputs.context)
        return .ok(.init(body: .json(.init(
            startDate: inputs.today.description,
            source: .rules,
            days: days.map { day in
                .init(
                    date: day.date.description, phase: day.position?.phase, cycleDay: day.position?.cycleDay,
                    predicted: day.date != inputs.today, isRestDay: day.isRestDay, note: day.note,
                    workout: day.recommendation.map { CatalogWire.wire($0.workout, entitled: inputs.context.isEntitledToPremium) }
                )
            }
        ))))
    }

    // MARK: Inputs

    typealias Inputs = RecommendationInputs

    private func gather(for caller: Caller, energy: EnergyLevel?) async throws -> Inputs {
        let profile = try await recommendationsFeature.profiles.profile(of: caller.user)
        let today = LocalCalendar.day(of: clock.now, in: profile.timeZone)
        let prediction = try await recommendationsFeature.cycle.prediction(for: caller.user, on: today, profile: profile)
        let logs = try await recommendationsFeature.history.logs(of: caller.user, from: today.adding(days: -RecommendationsFeature.recentDays), to: today, offset: 0, limit: 500)
        let position = prediction?.today
        let context = RecommendationContext(
            phase: position?.phase, cycleDay: position?.cycleDay, isLate: position?.isLate ?? false,
            fitnessLevel: profile.fitnessLevel, goals: profile.goals, preferredTypes: profile.preferredWorkoutTypes,
            recentWorkouts: logs.map { RecentWorkout(workout: $0.workout, type: $0.workoutType, daysAgo: $0.localDate.days(until: today)) },
            energy: energy, equipment: profile.availableEquipment.map(Set.init),
            isEntitledToPremium: try await recommendationsFeature.premiumAccess.isEntitled(caller)
        )
        return Inputs(
            today: today, prediction: prediction, context: context, catalog: try await catalog.allWorkouts(),
            fingerprint: sha256Hex(context.canonicalDescription)
        )
    }

    // MARK: Answers

    /// A new answer, from the model when one is configured and its reply passes every check, from the rules
    /// otherwise; kept for the day.
    private func generate(
        _ inputs: Inputs, for user: UserID, generation: Int, alreadyShown: Set<WorkoutID>
    ) async throws -> (DailyRecommendations, KeptRecommendations) {
        var context = inputs.context
        context.alreadyShown = alreadyShown
        let rules = recommendationsFeature.engine.recommend(inputs.catalog, for: context)
        var answer = rules
        var source = RecommendationSource.rules
        if let model, try await modelQuotaAllows(user, premium: context.isEntitledToPremium) {
            let ranked = recommendationsFeature.engine.ranked(inputs.catalog, for: context).map(\.workout)
            let unseen = ranked.filter { !alreadyShown.contains($0.id) }
            let candidates = Array((unseen.count >= RecommendationEngine.dailyCount ? unseen : ranked).prefix(RecommendationsFeature.modelCandidates))
            do {
                let reply = try await model.complete(RecommendationPrompt.daily(context: context, candidates: candidates))
                answer = try RecommendationPrompt.parse(
                    reply, candidates: candidates, fallbackGuidance: rules.phaseGuidance, fallbackAlternative: rules.alternativeIfLowEnergy
                )
                source = .llm
            } catch {
                recommendationsFeature.logger.warning("language model answer not used; answering from the rules", metadata: ["reason": "\(error)"])
            }
        }
        let kept = KeptRecommendations(
            localDate: inputs.today, fingerprint: inputs.fingerprint, source: source, generation: generation,
            answer: .init(
                items: answer.recommendations.map { .init(workoutId: $0.workout.id.description, reason: $0.reason) },
                phaseGuidance: answer.phaseGuidance, alternativeIfLowEnergy: answer.alternativeIfLowEnergy?.id.description
            ),
            generatedAt: clock.now
        )
        try await recommendationsFeature.store.keep(kept, for: user)
        return (answer, kept)
    }

    /// Whether `user` may have an answer from the model now: only a verified account (an address proven by a link, or
    /// an account a provider made: a sign-up with a made-up address costs the operator nothing), counted against the
    /// account's daily quota and then the deployment's daily budget (in the database: every instance counts alike).
    /// `false` sends the request to the rules.
    private func modelQuotaAllows(_ user: UserID, premium: Bool) async throws -> Bool {
        let refusal = try await recommendationsFeature.store.modelCallRefusal(
            for: user, callsPerDay: premium ? recommendationsFeature.modelCallsPerDay.premium : recommendationsFeature.modelCallsPerDay.free, budgetPerDay: recommendationsFeature.modelBudgetPerDay,
            now: clock.now
        )
        if let refusal { recommendationsFeature.logger.info("not asking the language model; answering from the rules", metadata: ["reason": "\(refusal)"]) }
        return refusal == nil
    }

    /// A kept answer with today's catalog; `nil` when one of its workouts is gone or no longer allowed.
    private func restore(_ answer: KeptRecommendations.Answer, _ inputs: Inputs) -> DailyRecommendations? {
        let allowed = Dictionary(recommendationsFeature.engine.eligible(inputs.catalog, for: inputs.context).map { ($0.id.description, $0) }, uniquingKeysWith: { a, _ in a })
        var recommendations: [Recommendation] = []
        for item in answer.items {
            guard let workout = allowed[item.workoutId] else { return nil }
            recommendations.append(.init(workout: workout, reason: item.reason, priority: recommendations.count + 1))
        }
        var alternative: CatalogWorkout?
        if let id = answer.alternativeIfLowEnergy {
            guard let workout = allowed[id] else { return nil }
            alternative = workout
        }
        return DailyRecommendations(recommendations: recommendations, phaseGuidance: answer.phaseGuidance, alternativeIfLowEnergy: alternative)
    }

    private func wire(_ answer: DailyRecommendations, kept: KeptRecommendations, _ inputs: Inputs) -> Components.Schemas.DailyRecommendations {
        let entitled = inputs.context.isEntitledToPremium
        return .init(
            date: kept.localDate.description, source: kept.source == .llm ? .llm : .rules, generatedAt: kept.generatedAt,
            phase: inputs.context.phase, cycleDay: inputs.context.cycleDay,
            energy: inputs.context.energy,
            recommendations: answer.recommendations.map {
                .init(priority: $0.priority, reason: $0.reason, workout: CatalogWire.wire($0.workout, entitled: entitled))
            },
            phaseGuidance: answer.phaseGuidance,
            alternativeIfLowEnergy: answer.alternativeIfLowEnergy.map { CatalogWire.wire($0, entitled: entitled) }
        )
    }
}

/// Everything an answer depends on, read once per request.
struct RecommendationInputs {
    let today: CalendarDay
    let prediction: CyclePredictor.Prediction?
    let context: RecommendationContext
    let catalog: [CatalogWorkout]
    /// The SHA-256 of the context: a kept answer is reused only while it is unchanged.
    let fingerprint: String
}
