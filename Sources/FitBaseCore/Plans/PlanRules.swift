/// A training plan as its writer sent it (REST body or pushed mutation), before any rule is checked.
public struct PlanDraft: Sendable, Equatable {
    /// A week of the plan, as sent.
    public struct Week: Sendable, Equatable {
        /// Its number, 1, 2, 3… in order.
        public var week: Int
        /// Its days, in the order sent.
        public var days: [Day]

        /// A week from its fields.
        public init(week: Int, days: [Day]) {
            self.week = week
            self.days = days
        }
    }

    /// A day of a week, as sent.
    public struct Day: Sendable, Equatable {
        /// 1 = Monday … 7 = Sunday.
        public var day: Int
        /// The catalog workouts to do, as sent (UUIDs when valid).
        public var workoutIds: [String]

        /// A day from its fields.
        public init(day: Int, workoutIds: [String]) {
            self.day = day
            self.workoutIds = workoutIds
        }
    }

    /// 1–200 characters once trimmed.
    public var name: String
    /// Free text.
    public var notes: String?
    /// `YYYY-MM-DD` when valid.
    public var startDate: String
    /// `YYYY-MM-DD` when valid.
    public var endDate: String?
    /// 1–7.
    public var daysPerWeek: Int
    /// `false` when not sent.
    public var isCompleted: Bool?
    /// The schedule, week by week.
    public var weeklyWorkouts: [Week]

    /// A draft from the input's fields.
    public init(
        name: String, notes: String? = nil, startDate: String, endDate: String? = nil, daysPerWeek: Int, isCompleted: Bool? = nil,
        weeklyWorkouts: [Week]
    ) {
        self.name = name
        self.notes = notes
        self.startDate = startDate
        self.endDate = endDate
        self.daysPerWeek = daysPerWeek
        self.isCompleted = isCompleted
        self.weeklyWorkouts = weeklyWorkouts
    }

    /// The workouts to look up in the catalog, in the order the plan names them: every reference that is a workout
    /// id (the others break a rule whatever the catalog holds).
    public var workoutIDs: [WorkoutID] {
        weeklyWorkouts.flatMap { $0.days.flatMap { $0.workoutIds.compactMap(WorkoutID.init) } }
    }
}

/// The rules of a training plan: a name of 1–200 characters, dates written `YYYY-MM-DD` with the end not before the
/// start, 1–7 days a week, weeks numbered from 1 in order, days 1 (Monday) to 7 (Sunday), and only workouts of the
/// catalog.
public enum PlanRules {
    /// The most weeks a plan may have (a year).
    public static let maximumWeeks = 52
    /// Plans every tier may keep; keeping more is the `customPlans` feature (docs/billing.md: a *second* plan
    /// needs it).
    public static let plansWithoutCustomPlans = 1

    /// Whether one more plan, for someone who keeps `count`, needs the `customPlans` feature.
    public static func anotherPlanNeedsCustomPlans(keeping count: Int) -> Bool {
        count >= plansWithoutCustomPlans
    }
    /// The most entries of one week's `days` (one per weekday).
    public static let maximumDaysPerWeek = 7
    /// The most workouts one day may name.
    public static let maximumWorkoutsPerDay = 10

    /// Whether the draft's schedule is within the size limits: checked before anything else, so a huge document is
    /// refused before its workouts are looked up. Throws the first limit broken per level, by its path.
    public static func checkSize(_ draft: PlanDraft) throws(InvalidFields) {
        var errors: [FieldError] = []
        if draft.weeklyWorkouts.count > maximumWeeks {
            errors.append(.init(field: "weeklyWorkouts", message: "must have at most \(maximumWeeks) weeks"))
        }
        for (weekIndex, week) in draft.weeklyWorkouts.prefix(maximumWeeks).enumerated() {
            if week.days.count > maximumDaysPerWeek {
                errors.append(.init(field: "weeklyWorkouts[\(weekIndex)].days", message: "must have at most \(maximumDaysPerWeek) days"))
            }
            for (dayIndex, day) in week.days.prefix(maximumDaysPerWeek).enumerated() where day.workoutIds.count > maximumWorkoutsPerDay {
                errors.append(.init(
                    field: "weeklyWorkouts[\(weekIndex)].days[\(dayIndex)].workoutIds", message: "must name at most \(maximumWorkoutsPerDay) workouts"
                ))
            }
        }
        guard errors.isEmpty else { throw InvalidFields(errors) }
    }

    /// The plan `id` the draft describes once every rule passed (the name trimmed, the dates parsed, the workout ids
    /// canonical), given `catalog` — those of the draft's ``PlanDraft/workoutIDs`` the catalog holds; throws
    /// every broken rule at once: the plan's own fields first (``fieldErrors(_:)``), then each workout reference not in
    /// the catalog, by its path (`weeklyWorkouts[0].days[1].workoutIds[2]`).
    public static func checked(_ draft: PlanDraft, id: PlanID, inCatalog catalog: Set<WorkoutID>) throws(InvalidFields) -> TrainingPlan {
        var errors = fieldErrors(draft)
        for (weekIndex, week) in draft.weeklyWorkouts.enumerated() {
            for (dayIndex, day) in week.days.enumerated() {
                for (index, reference) in day.workoutIds.enumerated() {
                    if let workout = WorkoutID(reference), catalog.contains(workout) { continue }
                    errors.append(.init(field: "weeklyWorkouts[\(weekIndex)].days[\(dayIndex)].workoutIds[\(index)]", message: "is not a workout of the catalog"))
                }
            }
        }
        guard let start = CalendarDay(draft.startDate), errors.isEmpty else { throw InvalidFields(errors) }
        return TrainingPlan(
            id: id, name: draft.name.trimmingScalars(where: \.isWhitespaceOrNewline), notes: draft.notes, startDate: start,
            endDate: draft.endDate.flatMap(CalendarDay.init), daysPerWeek: draft.daysPerWeek, isCompleted: draft.isCompleted ?? false,
            weeklyWorkouts: draft.weeklyWorkouts.map { week in
                .init(week: week.week, days: week.days.map { .init(day: $0.day, workouts: $0.workoutIds.compactMap(WorkoutID.init)) })
            }
        )
    }

    /// Every broken rule of the plan's own fields — name, dates, days a week, week numbers, weekdays — without the
    /// catalog: what an app's plan editor checks before saving.
    public static func fieldErrors(_ draft: PlanDraft) -> [FieldError] {
        var errors: [FieldError] = []
        let name = draft.name.trimmingScalars(where: \.isWhitespaceOrNewline)
        if name.isEmpty || name.count > 200 { errors.append(.init(field: "name", message: "must be 1–200 characters")) }
        let start = CalendarDay(draft.startDate)
        if start == nil { errors.append(.init(field: "startDate", message: "must be a date written YYYY-MM-DD")) }
        let end = draft.endDate.flatMap(CalendarDay.init)
        if draft.endDate != nil && end == nil { errors.append(.init(field: "endDate", message: "must be a date written YYYY-MM-DD")) }
        if let start, let end, end < start { errors.append(.init(field: "endDate", message: "must not be before startDate")) }
        if !(1...7).contains(draft.daysPerWeek) { errors.append(.init(field: "daysPerWeek", message: "must be between 1 and 7")) }
        for (weekIndex, week) in draft.weeklyWorkouts.enumerated() {
            if week.week != weekIndex + 1 {
                errors.append(.init(field: "weeklyWorkouts[\(weekIndex)].week", message: "must be \(weekIndex + 1): weeks are numbered from 1 in order"))
            }
            for (dayIndex, day) in week.days.enumerated() where !(1...7).contains(day.day) {
                errors.append(.init(field: "weeklyWorkouts[\(weekIndex)].days[\(dayIndex)].day", message: "must be 1 (Monday) to 7 (Sunday)"))
            }
        }
        return errors
    }
}
