import FitBaseCore
import Foundation
import Testing

/// A synthetic catalog: every type at every intensity in three lengths, phases from the seed's tables, every third
/// workout premium, equipment varying.
enum SyntheticCatalog {
    static let workouts: [CatalogWorkout] = {
        var workouts: [CatalogWorkout] = []
        let kit: [[Equipment]] = [[.none], [.yogaMat], [.dumbbells, .yogaMat], [.resistanceBands], [.kettlebell]]
        for type in WorkoutType.allCases {
            for intensity in Intensity.allCases {
                for minutes in [15, 30, 50] {
                    let index = workouts.count
                    let phases = CyclePhase.allCases.filter {
                        $0.recommendedWorkoutTypes.contains(type) && $0.recommendedIntensity.steps(to: intensity) <= 1
                    }
                    workouts.append(CatalogWorkout(
                        id: WorkoutID(String(format: "00000000-0000-4000-8000-%012d", index))!,
                        title: "\(type.displayName) \(intensity.rawValue) \(minutes)", description: "Synthetic.", type: type,
                        durationMinutes: minutes, intensity: intensity, phases: phases, equipment: kit[index % kit.count],
                        thumbnailURL: "https://example.com/t.jpg", videoURL: "https://example.com/v.m3u8", instructorName: "Test",
                        tags: [], isFeatured: index % 7 == 0, isPremium: index % 3 == 0, targetAreas: [.fullBody], benefits: []
                    ))
                }
            }
        }
        return workouts
    }()
}

extension Intensity {
    func steps(to other: Intensity) -> Int {
        abs(Intensity.allCases.firstIndex(of: self)! - Intensity.allCases.firstIndex(of: other)!)
    }
}

/// A small deterministic generator, so property tests explore many contexts reproducibly.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RecommendationEngineTests {
    let engine = RecommendationEngine()
    let catalog = SyntheticCatalog.workouts

    /// Many varied contexts, reproducibly.
    func contexts(count: Int, entitled: Bool) -> [RecommendationContext] {
        var random = SplitMix(state: 2026)
        return (0..<count).map { _ in
            let recent = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                let workout = catalog.randomElement(using: &random)!
                return RecentWorkout(workout: workout.id, type: workout.type, daysAgo: Int.random(in: 0...13, using: &random))
            }
            return RecommendationContext(
                phase: [nil, .menstrual, .follicular, .ovulatory, .luteal].randomElement(using: &random)!,
                cycleDay: Int.random(in: 1...35, using: &random), isLate: Bool.random(using: &random),
                fitnessLevel: [nil, .beginner, .intermediate, .advanced].randomElement(using: &random)!,
                goals: FitnessGoal.allCases.filter { _ in Bool.random(using: &random) },
                preferredTypes: WorkoutType.allCases.filter { _ in Int.random(in: 0..<4, using: &random) == 0 },
                recentWorkouts: recent, energy: [nil, .low, .medium, .high].randomElement(using: &random)!,
                equipment: Bool.random(using: &random) ? nil : Set(Equipment.allCases.filter { _ in Bool.random(using: &random) }),
                isEntitledToPremium: entitled
            )
        }
    }

    @Test func neverRecommendsPremiumToAFreeUser() {
        for context in contexts(count: 400, entitled: false) {
            let answer = engine.recommend(catalog, for: context)
            #expect(!answer.recommendations.contains { $0.workout.isPremium })
            #expect(answer.alternativeIfLowEnergy?.isPremium != true)
        }
        // Entitled users do get premium workouts: the filter is the entitlement, not the catalog.
        let entitled = contexts(count: 100, entitled: true).flatMap { engine.recommend(catalog, for: $0).recommendations }
        #expect(entitled.contains { $0.workout.isPremium })
    }

    @Test func givesThreeDistinctWorkoutsTheUserCanDo() {
        for context in contexts(count: 300, entitled: false) {
            let answer = engine.recommend(catalog, for: context)
            #expect(answer.recommendations.count == 3)
            #expect(Set(answer.recommendations.map(\.workout.id)).count == 3)
            #expect(answer.recommendations.map(\.priority) == [1, 2, 3])
            #expect(answer.recommendations.allSatisfy { !$0.reason.isEmpty && $0.reason.hasSuffix(".") })
            if let equipment = context.equipment {
                #expect(answer.recommendations.allSatisfy { $0.workout.canBeDone(with: equipment) })
                #expect(answer.alternativeIfLowEnergy.map { $0.canBeDone(with: equipment) } != false)
            }
        }
    }

    @Test func isDeterministicAndIgnoresCatalogOrder() {
        var random = SplitMix(state: 7)
        for context in contexts(count: 100, entitled: Bool.random(using: &random)) {
            let first = engine.recommend(catalog, for: context)
            #expect(engine.recommend(catalog, for: context) == first)
            #expect(engine.recommend(catalog.shuffled(using: &random), for: context) == first)
        }
    }

    @Test(arguments: CyclePhase.allCases)
    func followsThePhaseTables(_ phase: CyclePhase) throws {
        let context = RecommendationContext(phase: phase, cycleDay: 10, fitnessLevel: .intermediate, isEntitledToPremium: true)
        let answer = engine.recommend(catalog, for: context)
        let top = try #require(answer.recommendations.first)
        #expect(top.workout.intensity == phase.recommendedIntensity)
        #expect(phase.recommendedWorkoutTypes.contains(top.workout.type))
        #expect(top.reason.contains(phase.rawValue))
        for pick in answer.recommendations {
            #expect(pick.workout.intensity.steps(to: phase.recommendedIntensity) <= 1)
            #expect(phase.recommendedWorkoutTypes.contains(pick.workout.type) || pick.workout.phases.contains(phase))
        }
        #expect(answer.phaseGuidance.hasPrefix(phase.guidance))
        // Three different types when the catalog allows.
        #expect(Set(answer.recommendations.map(\.workout.type)).count == 3)
    }

    @Test func beginnersAndLatePeriodsStayBelowHighIntensity() {
        for context in [
            RecommendationContext(phase: .ovulatory, cycleDay: 14, fitnessLevel: .beginner, isEntitledToPremium: true),
            RecommendationContext(phase: .ovulatory, cycleDay: 14, fitnessLevel: nil, energy: .high, isEntitledToPremium: true),
            RecommendationContext(phase: .luteal, cycleDay: 33, isLate: true, fitnessLevel: .advanced, energy: .high, isEntitledToPremium: true),
        ] {
            #expect(engine.recommend(catalog, for: context).recommendations.first?.workout.intensity == .medium)
        }
        let advanced = RecommendationContext(phase: .ovulatory, cycleDay: 14, fitnessLevel: .advanced, isEntitledToPremium: true)
        #expect(engine.recommend(catalog, for: advanced).recommendations.first?.workout.intensity == .high)
    }

    @Test func lowEnergyMeansGentleAndShort() throws {
        for phase in CyclePhase.allCases {
            let context = RecommendationContext(phase: phase, cycleDay: 8, fitnessLevel: .advanced, energy: .low, isEntitledToPremium: true)
            let answer = engine.recommend(catalog, for: context)
            #expect(answer.recommendations.first?.workout.intensity == .low)
            #expect((answer.recommendations.first?.workout.durationMinutes ?? 99) <= 30)
            let alternative = try #require(answer.alternativeIfLowEnergy)
            #expect(alternative.intensity == .low)
            #expect(!answer.recommendations.contains { $0.workout.id == alternative.id })
        }
        // Without low energy the alternative is still the gentlest fitting option.
        let normal = engine.recommend(catalog, for: RecommendationContext(phase: .ovulatory, fitnessLevel: .advanced, isEntitledToPremium: false))
        #expect(normal.alternativeIfLowEnergy?.intensity == .low)
    }

    @Test func variesAgainstRecentDays() throws {
        let base = RecommendationContext(phase: .follicular, cycleDay: 8, fitnessLevel: .intermediate, isEntitledToPremium: true)
        let first = engine.recommend(catalog, for: base).recommendations
        let top = try #require(first.first).workout
        var next = base
        next.recentWorkouts = [RecentWorkout(workout: top.id, type: top.type, daysAgo: 1)]
        let after = engine.recommend(catalog, for: next).recommendations
        #expect(!after.contains { $0.workout.id == top.id })
        #expect(after.first?.workout.type != top.type)
        // A workout done a fortnight ago no longer counts against it.
        next.recentWorkouts = [RecentWorkout(workout: top.id, type: top.type, daysAgo: 14)]
        #expect(engine.recommend(catalog, for: next).recommendations.first?.workout.id == top.id)
    }

    @Test func aRefreshBringsOtherWorkouts() {
        for context in contexts(count: 50, entitled: false) {
            let first = Set(engine.recommend(catalog, for: context).recommendations.map(\.workout.id))
            var again = context
            again.alreadyShown = first
            let second = Set(engine.recommend(catalog, for: again).recommendations.map(\.workout.id))
            // On a low-energy day the gentle workouts come first, even if that means showing some again.
            let gentle = engine.eligible(catalog, for: context).filter { $0.intensity == .low }.count
            if context.energy != .low || gentle >= 6 || gentle < 3 {
                #expect(first.isDisjoint(with: second))
            } else {
                #expect(second.allSatisfy { id in catalog.first { $0.id == id }?.intensity == .low })
            }
        }
    }

    @Test func preferencesAndGoalsCountWhenThereIsNoPhase() {
        let context = RecommendationContext(fitnessLevel: .intermediate, goals: [.reduceStress], preferredTypes: [.yoga], isEntitledToPremium: true)
        let answer = engine.recommend(catalog, for: context)
        #expect(answer.recommendations.first?.workout.type == .yoga)
        #expect(answer.recommendations.first?.reason.contains("favourite") == true)
        #expect(answer.phaseGuidance.contains("Log a period"))
    }

    @Test func answersWithWhatThereIsWhenLittleFits() {
        let free = catalog.filter { !$0.isPremium && $0.canBeDone(with: []) }.prefix(2)
        let answer = engine.recommend(Array(free) + catalog.filter(\.isPremium), for: RecommendationContext(equipment: []))
        #expect(answer.recommendations.count == 2)
        #expect(engine.recommend([], for: RecommendationContext()).recommendations.isEmpty)
        #expect(engine.recommend([], for: RecommendationContext()).alternativeIfLowEnergy == nil)
    }
}

@Suite struct WeekPlannerTests {
    let planner = WeekPlanner()
    let start = CalendarDay("2026-11-23")!

    func positions(startingAt cycleDay: Int, length: Int = 28) -> [PhasePosition?] {
        (0..<7).map { CyclePhases.position(cycleDay: (cycleDay - 1 + $0) % length + 1, length: length, periodLength: 5) }
    }

    @Test(arguments: [(FitnessLevel.beginner, 3, 1), (.intermediate, 4, 2), (.advanced, 5, 3)])
    func trainingDaysFollowTheLevel(_ level: FitnessLevel, _ days: Int, _ longestRun: Int) throws {
        for cycleDay in 1...28 {
            let week = planner.plan(
                SyntheticCatalog.workouts, from: start, positions: positions(startingAt: cycleDay),
                context: RecommendationContext(fitnessLevel: level, isEntitledToPremium: false)
            )
            #expect(week.count == 7)
            #expect(week.filter { !$0.isRestDay }.count == days)
            var run = 0
            var longest = 0
            for day in week {
                run = day.isRestDay ? 0 : run + 1
                longest = max(longest, run)
            }
            #expect(longest <= longestRun)
            #expect(week.map(\.date) == (0..<7).map { start.adding(days: $0) })
            // Varied: no workout twice in a week, and each training day suits its own phase.
            let picks = week.compactMap(\.recommendation)
            #expect(Set(picks.map(\.workout.id)).count == picks.count)
            #expect(picks.allSatisfy { !$0.workout.isPremium })
            for day in week where !day.isRestDay {
                let phase = try #require(day.position?.phase)
                #expect(day.recommendation!.workout.intensity.steps(to: phase.recommendedIntensity) <= 1)
            }
        }
    }

    @Test func restFallsOnTheFirstPeriodDays() {
        // The week starts two days before the period: days 3 and 4 of the week are period days 1 and 2.
        let week = planner.plan(
            SyntheticCatalog.workouts, from: start, positions: positions(startingAt: 27),
            context: RecommendationContext(fitnessLevel: .intermediate, isEntitledToPremium: false)
        )
        #expect(week[2].position?.phase == .menstrual && week[2].position?.cycleDay == 1)
        #expect(week[2].isRestDay && week[3].isRestDay)
        #expect(week[2].note.contains("Rest day"))
    }

    @Test func yesterdaysWorkoutCountsTowardTheRun() {
        let recent = [RecentWorkout(workout: SyntheticCatalog.workouts[0].id, type: .strength, daysAgo: 1)]
        let week = planner.plan(
            SyntheticCatalog.workouts, from: start, positions: Array(repeating: nil, count: 7),
            context: RecommendationContext(fitnessLevel: .beginner, recentWorkouts: recent)
        )
        #expect(week[0].isRestDay)
        #expect(week.filter { !$0.isRestDay }.count == 3)
    }
}
