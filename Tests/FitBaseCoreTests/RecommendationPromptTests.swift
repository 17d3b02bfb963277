import FitBaseCore
import Foundation
import Testing

@Suite struct RecommendationPromptTests {
    let candidates = Array(SyntheticCatalog.workouts.filter { !$0.isPremium }.prefix(5))
    let context = RecommendationContext(
        phase: .luteal, cycleDay: 20, fitnessLevel: .intermediate, goals: [.buildStrength, .reduceStress], preferredTypes: [.pilates],
        recentWorkouts: [RecentWorkout(workout: SyntheticCatalog.workouts[0].id, type: .strength, daysAgo: 1)], energy: .low
    )

    func answer(_ ids: [String], alternative: String? = nil, guidance: String? = "Steady and grounded today.") -> String {
        let items = ids.enumerated().map { #"{"workoutId": "\#($1)", "reason": "Reason \#($0 + 1)", "priority": \#($0 + 1)}"# }
        var fields = [#""recommendations": [\#(items.joined(separator: ", "))]"#]
        if let guidance { fields.append(#""phaseGuidance": "\#(guidance)""#) }
        if let alternative { fields.append(#""alternativeIfLowEnergy": "\#(alternative)""#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    func parse(_ text: String) throws(RecommendationPrompt.AnswerError) -> DailyRecommendations {
        try RecommendationPrompt.parse(text, candidates: candidates, fallbackGuidance: "fallback", fallbackAlternative: candidates[4])
    }

    @Test func promptFollowsTheSeed() {
        let prompt = RecommendationPrompt.daily(context: context, candidates: candidates)
        #expect(prompt.contains("- Current Phase: luteal (Day 20 of cycle)"))
        #expect(prompt.contains("- Fitness Level: intermediate"))
        #expect(prompt.contains("- Goals: buildStrength, reduceStress"))
        #expect(prompt.contains("- Preferred Workout Types: pilates"))
        #expect(prompt.contains("- Recent Workouts: strength (yesterday)"))
        #expect(prompt.contains("- Energy Level Today: low"))
        for workout in candidates {
            #expect(prompt.contains("- \(workout.id): \(workout.title) (\(workout.type.rawValue), \(workout.durationMinutes)min, \(workout.intensity.rawValue))"))
        }
        #expect(prompt.contains("Recommend 3 workouts for today"))
        #expect(prompt.contains(#""alternativeIfLowEnergy": "workoutId for a gentler option""#))
    }

    @Test func acceptsAGoodAnswer() throws {
        let ids = candidates.prefix(3).map(\.id.description)
        let parsed = try parse(answer(ids, alternative: candidates[3].id.description))
        #expect(parsed.recommendations.map(\.workout.id.description) == ids)
        #expect(parsed.recommendations.map(\.reason) == ["Reason 1", "Reason 2", "Reason 3"])
        #expect(parsed.phaseGuidance == "Steady and grounded today.")
        #expect(parsed.alternativeIfLowEnergy == candidates[3])
    }

    @Test func findsTheJSONInsideAFenceAndOrdersByPriority() throws {
        let ids = candidates.prefix(4).map(\.id.description)
        let fenced = "Here you go:\n```json\n" + answer(ids).replacingOccurrences(of: #""priority": 1"#, with: #""priority": 9"#) + "\n```"
        let parsed = try parse(fenced)
        #expect(parsed.recommendations.map(\.workout.id.description) == [ids[1], ids[2], ids[3]])
        #expect(parsed.recommendations.map(\.priority) == [1, 2, 3])
        #expect(parsed.alternativeIfLowEnergy == candidates[4])  // fallback
    }

    @Test func refusesIdsThatAreNotCandidates() {
        let outsider = SyntheticCatalog.workouts.first(where: \.isPremium)!.id.description
        #expect(throws: RecommendationPrompt.AnswerError.unknownWorkout(outsider)) {
            try parse(answer([candidates[0].id.description, outsider, candidates[1].id.description]))
        }
        #expect(throws: RecommendationPrompt.AnswerError.unknownWorkout("w-123")) {
            try parse(answer(["w-123"] + candidates.prefix(2).map(\.id.description)))
        }
        #expect(throws: RecommendationPrompt.AnswerError.unknownWorkout(outsider)) {
            try parse(answer(candidates.prefix(3).map(\.id.description), alternative: outsider))
        }
    }

    @Test func refusesMalformedOrIncompleteAnswers() {
        #expect(throws: RecommendationPrompt.AnswerError.noJSONObject) { try parse("I recommend yoga today.") }
        #expect(throws: (any Error).self) { try parse(#"{"recommendations": "yoga"}"#) }
        #expect(throws: (any Error).self) { try parse(#"{"recommendations": [{"workoutId": 3}]"#) }
        #expect(throws: RecommendationPrompt.AnswerError.tooFewRecommendations(got: 2, wanted: 3)) {
            try parse(answer(candidates.prefix(2).map(\.id.description)))
        }
        let twice = candidates[0].id.description
        #expect(throws: RecommendationPrompt.AnswerError.duplicateWorkout(twice)) {
            try parse(answer([twice, twice, candidates[1].id.description]))
        }
        let noReason = answer(candidates.prefix(3).map(\.id.description)).replacingOccurrences(of: "Reason 2", with: "  ")
        #expect(throws: RecommendationPrompt.AnswerError.emptyReason(candidates[1].id.description)) { try parse(noReason) }
    }

    @Test func missingGuidanceFallsBack() throws {
        let parsed = try parse(answer(candidates.prefix(3).map(\.id.description), guidance: nil))
        #expect(parsed.phaseGuidance == "fallback")
    }
}
