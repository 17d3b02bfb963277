#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The seed's daily-recommendation prompt for a language model (seed 001 section 5), and the checks its answer must
/// pass before anyone sees it.
public enum RecommendationPrompt {
    /// Why a model's answer was refused (the caller then falls back to the rules).
    public enum AnswerError: Error, Equatable, CustomStringConvertible {
        case noJSONObject
        case malformedJSON(String)
        case unknownWorkout(String)
        case duplicateWorkout(String)
        case tooFewRecommendations(got: Int, wanted: Int)
        case emptyReason(String)

        public var description: String {
            switch self {
            case .noJSONObject: "the answer holds no JSON object"
            case .malformedJSON(let detail): "the answer's JSON does not have the expected shape: \(detail)"
            case .unknownWorkout(let id): "the answer names \(id), which is not a candidate"
            case .duplicateWorkout(let id): "the answer names \(id) twice"
            case .tooFewRecommendations(let got, let wanted): "the answer has \(got) recommendations, not \(wanted)"
            case .emptyReason(let id): "the answer gives no reason for \(id)"
            }
        }
    }

    /// The prompt, listing `candidates` as the available workouts.
    public static func daily(context: RecommendationContext, candidates: [CatalogWorkout]) -> String {
        func list(_ values: [String]) -> String { values.isEmpty ? "Not specified" : values.joined(separator: ", ") }
        let recent = context.recentWorkouts.sorted { $0.daysAgo < $1.daysAgo }.map { recent in
            "\(recent.type.rawValue) (\(recent.daysAgo == 0 ? "today" : recent.daysAgo == 1 ? "yesterday" : "\(recent.daysAgo) days ago"))"
        }
        let phase = context.phase.map { "\($0.rawValue) (Day \(context.cycleDay ?? 1) of cycle)" } ?? "Unknown (no cycle data)"
        let workouts = candidates.map { "- \($0.id): \($0.title) (\($0.type.rawValue), \($0.durationMinutes)min, \($0.intensity.rawValue))" }
        return """
            You are a supportive women's fitness coach for Strength Grace & Flow, a cycle-synced movement platform.

            ## User Context
            - Current Phase: \(phase)
            - Fitness Level: \(context.fitnessLevel?.rawValue ?? "Not specified")
            - Goals: \(list(context.goals.map(\.rawValue)))
            - Preferred Workout Types: \(list(context.preferredTypes.map(\.rawValue)))
            - Recent Workouts: \(list(recent))
            - Energy Level Today: \(context.energy?.rawValue ?? "Not specified")

            ## Available Workouts
            \(workouts.joined(separator: "\n"))

            ## Your Task
            Recommend \(min(RecommendationEngine.dailyCount, candidates.count)) workouts for today, ranked by how well they fit this user's current phase and needs. Use only workout ids from the list above.

            For each recommendation, explain briefly why it's a good fit for their current phase.

            Keep your tone warm, supportive, and grounded—never pushy or performative.

            Respond in JSON format only:
            {
              "recommendations": [
                {
                  "workoutId": "...",
                  "reason": "...",
                  "priority": 1
                }
              ],
              "phaseGuidance": "A brief, supportive message about movement during this phase",
              "alternativeIfLowEnergy": "workoutId for a gentler option"
            }
            """
    }

    /// The recommendations in a model's answer `text`, accepted only if every id is one of `candidates`, no id repeats,
    /// each has a reason and there are as many as asked for (the first three by priority are kept when there are
    /// more). A missing or empty `phaseGuidance` or `alternativeIfLowEnergy` takes the given fallback.
    public static func parse(
        _ text: String, candidates: [CatalogWorkout], fallbackGuidance: String, fallbackAlternative: CatalogWorkout?
    ) throws(AnswerError) -> DailyRecommendations {
        struct Answer: Decodable {
            struct Item: Decodable {
                let workoutId: String
                let reason: String?
                let priority: Int?
            }
            let recommendations: [Item]
            let phaseGuidance: String?
            let alternativeIfLowEnergy: String?
        }
        // Models sometimes wrap JSON in a Markdown fence or a sentence; take the outermost object.
        guard let open = text.firstIndex(of: "{"), let close = text.lastIndex(of: "}"), open < close else { throw .noJSONObject }
        let answer: Answer
        do {
            answer = try JSONDecoder().decode(Answer.self, from: Data(text[open...close].utf8))
        } catch {
            throw .malformedJSON(String(describing: error).prefix(200).description)
        }

        let byID = Dictionary(candidates.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func candidate(_ text: String) throws(AnswerError) -> CatalogWorkout {
            guard let id = WorkoutID(text.trimmingWhitespace), let workout = byID[id] else { throw .unknownWorkout(text) }
            return workout
        }
        let wanted = min(RecommendationEngine.dailyCount, candidates.count)
        let items = answer.recommendations.enumerated()
            .sorted { a, b in (a.element.priority ?? .max, a.offset) < (b.element.priority ?? .max, b.offset) }
            .map(\.element)
        var seen = Set<WorkoutID>()
        var recommendations: [Recommendation] = []
        for item in items {
            let workout = try candidate(item.workoutId)
            guard seen.insert(workout.id).inserted else { throw .duplicateWorkout(item.workoutId) }
            let reason = (item.reason ?? "").trimmingWhitespace
            guard !reason.isEmpty else { throw .emptyReason(item.workoutId) }
            if recommendations.count < wanted {
                recommendations.append(.init(workout: workout, reason: String(reason.prefix(500)), priority: recommendations.count + 1))
            }
        }
        guard recommendations.count == wanted, wanted > 0 else { throw .tooFewRecommendations(got: recommendations.count, wanted: wanted) }

        let guidance = (answer.phaseGuidance ?? "").trimmingWhitespace
        let alternative = (answer.alternativeIfLowEnergy ?? "").trimmingWhitespace
        return DailyRecommendations(
            recommendations: recommendations,
            phaseGuidance: guidance.isEmpty ? fallbackGuidance : String(guidance.prefix(1000)),
            alternativeIfLowEnergy: alternative.isEmpty ? fallbackAlternative : try candidate(alternative)
        )
    }
}
