/// Progressive plan suggestions (the `advancedProgression` feature): a plan week's sessions adjusted from what the
/// weeks before it show — completion, ratings and energy (``ProgressionHistory``) — and the cycle phase predicted for
/// each day. Deterministic: the same input always gives the same suggestion, and every session says why.
///
/// Each session gets the first rule that applies:
/// 1. A workout with no known duration (gone from the catalog, never logged) is kept: there is nothing to adjust.
/// 2. **Deload** after a block of full training (``ProgressionHistory/isHighStrainBlock``): 20 % shorter.
/// 3. **Menstrual** day, workout above low intensity: swapped for a lighter one of the same type, else 20 % shorter.
/// 4. **Luteal** day, high-intensity workout: swapped for a lighter one of the same type, else 10 % shorter.
/// 5. Fewer than ``minimumSessions`` sessions due in the window: kept — no progression from too little data.
/// 6. Under 50 % of the due sessions done: 20 % shorter.
/// 7. **Low energy** (a mean of 2 or less before workouts, or a drop of a whole point in the latest week): a lighter
///    workout of the same type, else 10 % shorter.
/// 8. **Low ratings** (2.5 or less, of the workout's type when two of them are rated): the same as low energy.
/// 9. **Progress** when at least 90 % was done and at least ``minimumRatings`` ratings average 4 or more: a harder
///    workout of the same type (one intensity step up, not longer), else a longer one of the same intensity, else
///    10 % longer — unless the day is menstrual or luteal, when it is kept.
/// 10. Otherwise kept, saying what progression still needs.
///
/// Whatever the rule, a suggested duration is within ±``maximumChangePercent`` % of the planned one: swaps and
/// variants are chosen only among workouts whose length fits.
public enum PlanProgression {
    /// Calendar weeks before the suggested one that are looked at.
    public static let windowWeeks = 3
    /// Planned sessions due in the window before any adjustment that rests on history.
    public static let minimumSessions = 3
    /// Rated logs in the window before progressing.
    public static let minimumRatings = 3
    /// The share of due sessions done that progression needs (and each week of a full-training block).
    public static let progressCompletion = 0.9
    /// Under this share of due sessions done, sessions get shorter.
    public static let reduceCompletion = 0.5
    /// The mean rating progression needs.
    public static let progressRating = 4.0
    /// A mean rating at or under this eases the workout.
    public static let lowRating = 2.5
    /// A mean energy before workouts at or under this eases the workout.
    public static let lowEnergy = 2.0
    /// A drop of the latest week's energy by this much (or more) eases the workout.
    public static let energyDrop = 1.0
    /// A week of a block with less load than this share of the heaviest one was already light.
    public static let lightWeekShare = 0.85
    /// The most a suggested duration differs from the planned one, in percent.
    public static let maximumChangePercent = 20
    /// How much longer a progressed workout gets, in percent.
    public static let progressPercent = 10
    /// How much shorter a deload, a menstrual day or a low completion makes a workout, in percent.
    public static let reducePercent = 20
    /// How much shorter low energy, low ratings or a luteal day make a workout, in percent.
    public static let easePercent = 10

    /// What to do with a planned session.
    public enum Action: String, Sendable, Codable, CaseIterable {
        /// A harder or longer workout of the same type, or the planned one for longer.
        case progress
        /// The session as planned.
        case keep
        /// The planned workout, shorter.
        case reduce
        /// A lighter workout of the same type instead.
        case swap
    }

    /// How energy before workouts moved in the latest week of the window.
    public enum EnergyTrend: String, Sendable, Codable, CaseIterable {
        case falling, steady, rising
    }

    /// Everything a suggestion depends on.
    public struct Input: Sendable, Equatable {
        /// The plan's first day; its week 1 is the Monday-to-Sunday week holding it.
        public var planStart: CalendarDay
        /// The plan's schedule.
        public var schedule: [TrainingPlan.Week]
        /// The plan week to suggest (1-based).
        public var week: Int
        /// The user's local day.
        public var today: CalendarDay
        /// The user's workout logs (at least those of the window; others are ignored).
        public var logs: [WorkoutLog]
        /// The catalog workouts the user may do: the planned ones and the candidates for swaps and variants.
        public var catalog: [CatalogWorkout]
        /// The cycle phase predicted for each day (1 = Monday … 7 = Sunday) of the suggested week, when known.
        public var phases: [Int: CyclePhase]
        /// The equipment the user has; `nil` when not said (every workout is then a candidate).
        public var equipment: Set<Equipment>?

        /// An input from its fields.
        public init(
            planStart: CalendarDay, schedule: [TrainingPlan.Week], week: Int, today: CalendarDay, logs: [WorkoutLog],
            catalog: [CatalogWorkout] = [], phases: [Int: CyclePhase] = [:], equipment: Set<Equipment>? = nil
        ) {
            self.planStart = planStart
            self.schedule = schedule
            self.week = week
            self.today = today
            self.logs = logs
            self.catalog = catalog
            self.phases = phases
            self.equipment = equipment
        }
    }

    /// One planned session of the suggested week (the contract's `ProgressionSession`).
    public struct Session: Sendable, Equatable, Codable {
        /// 1 = Monday … 7 = Sunday.
        public let day: Int
        /// The day's date.
        public let date: CalendarDay
        /// The predicted phase of the day, when known.
        public let phase: CyclePhase?
        /// The workout the plan names.
        public let plannedWorkout: WorkoutID
        /// The workout to do: the planned one unless swapped or progressed to a variant.
        public let workout: WorkoutID
        /// What the suggestion does.
        public let action: Action
        /// The planned workout's length in minutes, when known.
        public let plannedDuration: Int?
        /// Minutes to train, when known.
        public let suggestedDuration: Int?
        /// Why, in a sentence for the user.
        public let reason: String

        /// A session from its fields (as the server answers it).
        public init(
            day: Int, date: CalendarDay, phase: CyclePhase?, plannedWorkout: WorkoutID, workout: WorkoutID, action: Action, plannedDuration: Int?,
            suggestedDuration: Int?, reason: String
        ) {
            self.day = day
            self.date = date
            self.phase = phase
            self.plannedWorkout = plannedWorkout
            self.workout = workout
            self.action = action
            self.plannedDuration = plannedDuration
            self.suggestedDuration = suggestedDuration
            self.reason = reason
        }

        private enum CodingKeys: String, CodingKey {
            case day, date, phase, action, plannedDuration, suggestedDuration, reason
            case plannedWorkout = "plannedWorkoutId"
            case workout = "workoutId"
        }
    }

    /// The facts the suggestion rests on (the contract's `ProgressionSummary`).
    public struct Summary: Sendable, Equatable, Codable {
        /// The window's first day.
        public let from: CalendarDay
        /// The window's last day.
        public let to: CalendarDay
        /// The plan weeks of the window.
        public let weeks: [Int]
        /// Planned sessions due in the window.
        public let plannedSessions: Int
        /// Of those, the ones done.
        public let completedSessions: Int
        /// Done ÷ due; `nil` when nothing was due.
        public let completionRate: Double?
        /// Logs in the window, planned or not.
        public let loggedWorkouts: Int
        /// Logs with a rating.
        public let ratedWorkouts: Int
        /// Their mean rating.
        public let averageRating: Double?
        /// Mean energy before workouts.
        public let averageEnergyBefore: Double?
        /// Mean energy after workouts.
        public let averageEnergyAfter: Double?
        /// How energy moved in the latest week.
        public let energyTrend: EnergyTrend?
        /// Whether the week is a deload.
        public let isDeload: Bool
        /// Whether there was enough history to adjust on (``minimumSessions``).
        public let hasEnoughHistory: Bool
        /// The week in a sentence.
        public let note: String

        /// A summary from its fields (as the server answers it).
        public init(
            from: CalendarDay, to: CalendarDay, weeks: [Int], plannedSessions: Int, completedSessions: Int, completionRate: Double?,
            loggedWorkouts: Int, ratedWorkouts: Int, averageRating: Double?, averageEnergyBefore: Double?, averageEnergyAfter: Double?,
            energyTrend: EnergyTrend?, isDeload: Bool, hasEnoughHistory: Bool, note: String
        ) {
            self.from = from
            self.to = to
            self.weeks = weeks
            self.plannedSessions = plannedSessions
            self.completedSessions = completedSessions
            self.completionRate = completionRate
            self.loggedWorkouts = loggedWorkouts
            self.ratedWorkouts = ratedWorkouts
            self.averageRating = averageRating
            self.averageEnergyBefore = averageEnergyBefore
            self.averageEnergyAfter = averageEnergyAfter
            self.energyTrend = energyTrend
            self.isDeload = isDeload
            self.hasEnoughHistory = hasEnoughHistory
            self.note = note
        }

        private enum CodingKeys: String, CodingKey {
            case weeks, plannedSessions, completedSessions, completionRate, loggedWorkouts, ratedWorkouts, averageRating
            case averageEnergyBefore, averageEnergyAfter, energyTrend, note
            case from = "fromDate"
            case to = "toDate"
            case isDeload = "deload"
            case hasEnoughHistory = "enoughHistory"
        }
    }

    /// The suggested week (the contract's `PlanProgression`, without the plan's id the caller asked with).
    public struct Suggestion: Sendable, Equatable, Codable {
        /// The plan week.
        public let week: Int
        /// Its Monday.
        public let startDate: CalendarDay
        /// Its Sunday.
        public let endDate: CalendarDay
        /// Its sessions, by day, in the plan's order.
        public let sessions: [Session]
        public let summary: Summary

        /// A suggestion from its fields (as the server answers it).
        public init(week: Int, startDate: CalendarDay, endDate: CalendarDay, sessions: [Session], summary: Summary) {
            self.week = week
            self.startDate = startDate
            self.endDate = endDate
            self.sessions = sessions
            self.summary = summary
        }
    }

    /// The Monday starting plan week `week` of a plan whose first day is `planStart`.
    public static func firstDay(ofWeek week: Int, planStart: CalendarDay) -> CalendarDay {
        WorkoutStreaks.weekStart(of: planStart).adding(days: 7 * (week - 1))
    }

    /// The plan week after the one holding `today` (week 1 before the plan starts); `nil` once the last week has begun.
    public static func upcomingWeek(planStart: CalendarDay, weekCount: Int, today: CalendarDay) -> Int? {
        let sinceStart = firstDay(ofWeek: 1, planStart: planStart).days(until: today)
        let next = sinceStart < 0 ? 1 : sinceStart / 7 + 2
        return next <= weekCount ? next : nil
    }

    /// Throws naming `week` unless a plan of `weekCount` weeks has week `week`.
    public static func check(week: Int, weekCount: Int) throws(InvalidFields) {
        guard week < 1 || week > weekCount else { return }
        let message = weekCount == 0 ? "cannot be suggested: the plan has no weeks" : "must be between 1 and \(weekCount), the plan's weeks"
        throw InvalidFields([.init(field: "week", message: message)])
    }

    /// The week to suggest: `requested` when named, else the week after the one holding `today` (week 1 before the plan
    /// starts, and for a plan with no weeks). Throws naming `week` when it is not a week of the plan, or when none is
    /// named once the last week has begun.
    public static func week(_ requested: Int?, planStart: CalendarDay, weekCount: Int, today: CalendarDay) throws(InvalidFields) -> Int {
        guard let week = requested ?? upcomingWeek(planStart: planStart, weekCount: weekCount, today: today) ?? (weekCount == 0 ? 1 : nil) else {
            throw InvalidFields([.init(field: "week", message: "is required once the plan's last week (\(weekCount)) has begun")])
        }
        try check(week: week, weekCount: weekCount)
        return week
    }

    /// The suggestion for `input`; throws naming `week` when the plan has no such week.
    public static func suggestion(_ input: Input) throws(InvalidFields) -> Suggestion {
        try check(week: input.week, weekCount: input.schedule.count)
        let catalog = Dictionary(input.catalog.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let history = ProgressionHistory(
            week: input.week, planStart: input.planStart, schedule: input.schedule, logs: input.logs, catalog: catalog, today: input.today
        )
        let rules = SessionRules(history: history, catalog: catalog, equipment: input.equipment)
        let monday = firstDay(ofWeek: input.week, planStart: input.planStart)
        let sessions = input.schedule[input.week - 1].days.enumerated().sorted { ($0.element.day, $0.offset) < ($1.element.day, $1.offset) }
            .flatMap { _, day in
                day.workouts.map { workout in
                    rules.session(workout, day: day.day, date: monday.adding(days: day.day - 1), phase: input.phases[day.day])
                }
            }
        return Suggestion(
            week: input.week, startDate: monday, endDate: monday.adding(days: 6), sessions: sessions,
            summary: Summary(
                from: history.firstDay, to: history.lastDay, weeks: history.weeks.map(\.week), plannedSessions: history.due,
                completedSessions: history.done, completionRate: history.completionRate, loggedWorkouts: history.logs.count,
                ratedWorkouts: history.ratings.count, averageRating: history.averageRating,
                averageEnergyBefore: history.averageEnergyBefore, averageEnergyAfter: history.averageEnergyAfter,
                energyTrend: history.energyTrend, isDeload: rules.isDeload, hasEnoughHistory: rules.hasEnoughHistory,
                note: note(history: history, rules: rules, sessions: sessions)
            )
        )
    }

    private static func note(history: ProgressionHistory, rules: SessionRules, sessions: [Session]) -> String {
        if rules.isDeload { return "Deload week: after three weeks of full training, a lighter week lets your body absorb the work." }
        guard rules.hasEnoughHistory else {
            return "Not enough history yet (\(history.due) of \(minimumSessions) planned sessions): the week stays as planned, apart from cycle-phase adjustments."
        }
        let counts = Dictionary(grouping: sessions, by: \.action).mapValues(\.count)
        let parts: [String] = [
            counts[.progress].map { "\($0) to progress" }, counts[.keep].map { "\($0) as planned" },
            counts[.reduce].map { "\($0) shorter" }, counts[.swap].map { "\($0) swapped for lighter workouts" },
        ].compactMap { $0 }
        let done = "\(history.done) of \(history.due) planned sessions done (\(percent(history.completionRate ?? 0)))"
        return parts.isEmpty ? "\(done); the week has no sessions." : "\(done): \(parts.joined(separator: ", "))."
    }

    /// `0.857` → `86 %`.
    static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }

    /// `3.25` → `3.3`.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}

extension PlanProgression.Input {
    /// The input for week `week` of `plan` as the user sees it: swaps and variants only among the workouts of `catalog`
    /// they may watch (premium ones with `isEntitledToPremium`; the week's planned ones whatever they are), and each
    /// day's phase from `prediction` (none without cycle data). `week` must be a week of the plan (see
    /// ``PlanProgression/week(_:planStart:weekCount:today:)``).
    public init(
        plan: TrainingPlan, week: Int, today: CalendarDay, logs: [WorkoutLog], catalog: [CatalogWorkout], isEntitledToPremium: Bool,
        prediction: CyclePredictor.Prediction?, equipment: Set<Equipment>?
    ) {
        let schedule = plan.weeklyWorkouts
        let planned = Set(schedule.indices.contains(week - 1) ? schedule[week - 1].days.flatMap(\.workouts) : [])
        let monday = PlanProgression.firstDay(ofWeek: week, planStart: plan.startDate)
        let phases = Dictionary(uniqueKeysWithValues: (1...7).compactMap { day in
            prediction.map { (day, $0.position(on: monday.adding(days: day - 1)).phase) }
        })
        self.init(
            planStart: plan.startDate, schedule: schedule, week: week, today: today, logs: logs,
            catalog: catalog.filter { isEntitledToPremium || !$0.isPremium || planned.contains($0.id) }, phases: phases, equipment: equipment
        )
    }
}
