/// One day of a recommended week.
public struct PlannedDay: Sendable, Equatable {
    public let date: CalendarDay
    /// Where the day falls in the cycle (`nil` without cycle data).
    public let position: PhasePosition?
    /// The day's workout; `nil` on a rest day.
    public let recommendation: Recommendation?
    /// Why the day is a training or a rest day.
    public let note: String

    public var isRestDay: Bool { recommendation == nil }
}

/// Lays out seven days from the predicted phases: training days by fitness level, rest days where energy is lowest.
///
/// A beginner trains 3 days (never two in a row), intermediate 4 (at most 2 in a row), advanced 5 (at most 3);
/// without a level, 3. Days are chosen by how well the phase supports training — ovulatory and follicular first,
/// then luteal, the last three luteal days and the period after that, the heaviest first two period days last — then
/// by date, counting workouts of the last three days toward the run. Each training day gets the best workout of
/// ``RecommendationEngine`` for that day's phase, with the week's earlier picks counted as recent so the week varies.
public struct WeekPlanner: Sendable {
    public let engine: RecommendationEngine

    public init(engine: RecommendationEngine = .init()) {
        self.engine = engine
    }

    /// The plan for the days starting `start`, one per entry of `positions` (seven for a week).
    public func plan(
        _ catalog: [CatalogWorkout], from start: CalendarDay, positions: [PhasePosition?], context base: RecommendationContext
    ) -> [PlannedDay] {
        let level = base.fitnessLevel ?? .beginner
        let training = trainingDays(positions: positions, level: level, recent: base.recentWorkouts)
        var planned: [RecentWorkout] = []
        return positions.enumerated().map { offset, position in
            let date = start.adding(days: offset)
            guard training.contains(offset) else {
                let note = position?.phase == .menstrual
                    ? "Rest day. Your body is doing a lot this phase; a walk or a gentle stretch is plenty."
                    : "Rest day. Recovery is when training turns into strength."
                return PlannedDay(date: date, position: position, recommendation: nil, note: note)
            }
            var context = base
            context.phase = position?.phase
            context.cycleDay = position?.cycleDay
            context.isLate = position?.isLate ?? false
            context.energy = offset == 0 ? base.energy : nil
            context.alreadyShown = []
            context.recentWorkouts = base.recentWorkouts.map { .init(workout: $0.workout, type: $0.type, daysAgo: $0.daysAgo + offset) }
                + planned.map { .init(workout: $0.workout, type: $0.type, daysAgo: offset - $0.daysAgo) }
            guard let pick = engine.recommend(catalog, for: context).recommendations.first else {
                return PlannedDay(date: date, position: position, recommendation: nil, note: "Rest day. Nothing in the catalog fits this day.")
            }
            // `daysAgo` of a planned pick holds its offset until it is turned into "days before" above.
            planned.append(.init(workout: pick.workout.id, type: pick.workout.type, daysAgo: offset))
            return PlannedDay(date: date, position: position, recommendation: pick, note: pick.reason)
        }
    }

    /// The offsets to train on.
    func trainingDays(positions: [PhasePosition?], level: FitnessLevel, recent: [RecentWorkout]) -> Set<Int> {
        let wanted = min(level.trainingDaysPerWeek, positions.count)
        let trainedBefore = Set(recent.filter { (1...3).contains($0.daysAgo) }.map { -$0.daysAgo })
        func suitability(_ position: PhasePosition?) -> Int {
            guard let position else { return 2 }
            switch position.phase {
            case .menstrual: return position.cycleDay <= 2 ? 0 : 1
            case .luteal: return position.isLate || position.daysUntilNextPhase <= 3 ? 1 : 2
            case .follicular, .ovulatory: return 3
            }
        }
        func run(through day: Int, in chosen: Set<Int>) -> Int {
            let trained = chosen.union(trainedBefore).union([day])
            var first = day
            while trained.contains(first - 1) { first -= 1 }
            var last = day
            while trained.contains(last + 1) { last += 1 }
            return last - first + 1
        }
        let order = positions.indices.sorted { a, b in
            let (sa, sb) = (suitability(positions[a]), suitability(positions[b]))
            return sa != sb ? sa > sb : a < b
        }
        var chosen = Set<Int>()
        for day in order where chosen.count < wanted && run(through: day, in: chosen) <= level.longestTrainingRun {
            chosen.insert(day)
        }
        for day in order where chosen.count < wanted { chosen.insert(day) }
        return chosen
    }
}
