import FitBaseCore
import Foundation
import Testing

/// Progressive plan suggestions from a plan, logs, a catalog and predicted phases alone.
@Suite struct PlanProgressionTests {
    static func workout(
        _ number: UInt8, _ title: String, _ type: WorkoutType, _ minutes: Int, _ intensity: Intensity, _ phases: [CyclePhase],
        equipment: [Equipment] = [.none]
    ) -> CatalogWorkout {
        CatalogWorkout(
            id: WorkoutID(rawValue: UUID(uuid: (number, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, number))), title: title,
            description: "", type: type, durationMinutes: minutes, intensity: intensity, phases: phases, equipment: equipment,
            thumbnailURL: "", videoURL: "", instructorName: "", tags: [], isFeatured: false, isPremium: false, targetAreas: [], benefits: []
        )
    }

    static let strength = workout(1, "Dumbbell Foundations", .strength, 30, .medium, [.follicular, .luteal])
    static let strengthHarder = workout(2, "Heavy Full-Body", .strength, 30, .high, [.follicular, .ovulatory], equipment: [.kettlebell])
    static let strengthLighter = workout(3, "Light & Easy Strength", .strength, 25, .low, [.menstrual, .luteal])
    static let strengthLong = workout(4, "Posterior Chain Builder", .strength, 45, .medium, [.follicular])
    static let yoga = workout(5, "Yoga for Lower Back", .yoga, 30, .low, [.menstrual, .luteal])
    static let yogaLonger = workout(6, "Luteal Calm Flow", .yoga, 33, .low, [.luteal])
    static let hiit = workout(7, "Tabata Legs", .hiitStrength, 20, .high, [.ovulatory])
    static let hiitShort = workout(8, "Low-Impact HIIT", .hiitStrength, 10, .medium, [.follicular])
    static let catalog = [strength, strengthHarder, strengthLighter, strengthLong, yoga, yogaLonger, hiit, hiitShort]

    /// Monday 2026-03-02: week 1 runs 03-02…03-08, week 2 03-09…, week 3 03-16…, week 4 03-23…, week 5 03-30….
    static let start = CalendarDay(year: 2026, month: 3, day: 2)!
    /// Six weeks of strength on Monday, yoga on Wednesday and HIIT on Friday.
    static let schedule = (1...6).map { week in
        TrainingPlan.Week(week: week, days: [
            .init(day: 1, workouts: [strength.id]), .init(day: 3, workouts: [yoga.id]), .init(day: 5, workouts: [hiit.id]),
        ])
    }

    static func monday(ofWeek week: Int) -> CalendarDay { start.adding(days: 7 * (week - 1)) }

    static func log(
        _ workout: CatalogWorkout, on day: CalendarDay, minutes: Int? = nil, rating: Int? = nil, energy: Int? = nil, after: Int? = nil
    ) -> WorkoutLog {
        WorkoutLog(
            id: WorkoutLogID(), workout: workout.id, workoutType: workout.type, workoutTitle: workout.title,
            completedAt: Date(timeIntervalSince1970: Double(day.daysSince1970) * 86_400 + 36_000), localDate: day,
            durationMinutes: minutes ?? workout.durationMinutes, rating: rating, energyBefore: energy, energyAfter: after, notes: nil,
            cyclePhase: nil, cycleDay: nil
        )
    }

    /// Every session of `weeks` done on its day, each lasting `share` percent of the workout.
    static func done(weeks: ClosedRange<Int>, rating: Int? = 5, energy: Int? = 4, share: Int = 100) -> [WorkoutLog] {
        weeks.flatMap { week in
            [(strength, 0), (yoga, 2), (hiit, 4)].map { workout, offset in
                log(workout, on: monday(ofWeek: week).adding(days: offset), minutes: workout.durationMinutes * share / 100, rating: rating, energy: energy)
            }
        }
    }

    static func suggest(
        week: Int, today: CalendarDay? = nil, logs: [WorkoutLog], phases: [Int: CyclePhase] = [:], schedule: [TrainingPlan.Week] = schedule,
        catalog: [CatalogWorkout] = catalog, equipment: Set<Equipment>? = nil
    ) throws -> PlanProgression.Suggestion {
        try PlanProgression.suggestion(.init(
            planStart: start, schedule: schedule, week: week, today: today ?? monday(ofWeek: week), logs: logs, catalog: catalog,
            phases: phases, equipment: equipment
        ))
    }

    static func actions(_ suggestion: PlanProgression.Suggestion) -> [PlanProgression.Action] { suggestion.sessions.map(\.action) }
    static func minutes(_ suggestion: PlanProgression.Suggestion) -> [Int?] { suggestion.sessions.map(\.suggestedDuration) }

    // MARK: Little or no data

    @Test func theFirstWeekHasNoHistoryAndIsKeptAsPlanned() throws {
        let suggestion = try Self.suggest(week: 1, logs: [])
        #expect(suggestion.startDate == Self.start && suggestion.endDate == Self.start.adding(days: 6))
        #expect(suggestion.sessions.map(\.day) == [1, 3, 5])
        #expect(suggestion.sessions.map(\.date) == [Self.start, Self.start.adding(days: 2), Self.start.adding(days: 4)])
        #expect(Self.actions(suggestion) == [.keep, .keep, .keep])
        #expect(suggestion.sessions.map(\.workout) == [Self.strength.id, Self.yoga.id, Self.hiit.id])
        #expect(Self.minutes(suggestion) == [30, 30, 20])
        #expect(suggestion.sessions.allSatisfy { $0.reason.hasPrefix("Not enough history yet (0 of 3") })
        let summary = suggestion.summary
        #expect(summary.weeks.isEmpty && summary.plannedSessions == 0 && summary.completionRate == nil)
        #expect(summary.averageRating == nil && summary.averageEnergyBefore == nil && summary.energyTrend == nil)
        #expect(!summary.hasEnoughHistory && !summary.isDeload)
        #expect(summary.from == Self.start.adding(days: -21) && summary.to == Self.start.adding(days: -1))
    }

    @Test func logsBeforeThePlanCountForRatingsButNotForCompletion() throws {
        let before = [Self.log(Self.yoga, on: Self.start.adding(days: -3), rating: 5, energy: 3)]
        let summary = try Self.suggest(week: 1, logs: before).summary
        #expect(summary.loggedWorkouts == 1 && summary.averageRating == 5 && summary.averageEnergyBefore == 3)
        #expect(summary.plannedSessions == 0 && summary.completionRate == nil)
    }

    @Test func noProgressionOrReductionFromTooLittleData() throws {
        // Friday of week 1: Monday's and Wednesday's sessions are due (Friday is still open) — two, under the minimum.
        let friday = Self.monday(ofWeek: 1).adding(days: 4)
        let two = try Self.suggest(week: 2, today: friday, logs: [])
        #expect(two.summary.plannedSessions == 2 && !two.summary.hasEnoughHistory)
        #expect(Self.actions(two) == [.keep, .keep, .keep])
        // Saturday: the third is due, all three skipped.
        let three = try Self.suggest(week: 2, today: friday.adding(days: 1), logs: [])
        #expect(three.summary.plannedSessions == 3 && three.summary.hasEnoughHistory)
        #expect(Self.actions(three) == [.reduce, .reduce, .reduce])
        // A session done early counts as due.
        let early = try Self.suggest(week: 2, today: friday, logs: [Self.log(Self.hiit, on: friday)])
        #expect(early.summary.plannedSessions == 3 && early.summary.completedSessions == 1)
    }

    @Test func aWeekFarAheadHasNothingDueYet() throws {
        let suggestion = try Self.suggest(week: 6, today: Self.monday(ofWeek: 1), logs: [])
        #expect(suggestion.summary.weeks == [3, 4, 5] && suggestion.summary.plannedSessions == 0)
        #expect(Self.actions(suggestion) == [.keep, .keep, .keep])
    }

    // MARK: Completion

    @Test func allSkippedShortensEverySessionByTheMaximum() throws {
        let suggestion = try Self.suggest(week: 3, logs: [])
        #expect(suggestion.summary.plannedSessions == 6 && suggestion.summary.completedSessions == 0 && suggestion.summary.completionRate == 0)
        #expect(Self.actions(suggestion) == [.reduce, .reduce, .reduce])
        #expect(Self.minutes(suggestion) == [24, 24, 16])
        #expect(suggestion.sessions.map(\.workout) == [Self.strength.id, Self.yoga.id, Self.hiit.id])
        #expect(suggestion.sessions[0].reason == "0 of 6 planned sessions done (0 %) in the last weeks; a shorter session is easier to fit in: the same workout 20 % shorter (30 → 24 min).")
    }

    @Test func aSessionIsDoneByALogOfItsWorkoutAnywhereInItsWeekOnce() throws {
        let week1 = Self.monday(ofWeek: 1)
        let logs = [
            Self.log(Self.strength, on: week1.adding(days: 6)),  // Sunday instead of Monday: done.
            Self.log(Self.strength, on: week1.adding(days: 6)),  // Twice: still one session.
            Self.log(Self.strengthLong, on: week1.adding(days: 2)),  // Not the planned yoga.
            Self.log(Self.yoga, on: Self.monday(ofWeek: 2)),  // Week 2's yoga, done on Monday.
            Self.log(Self.hiit, on: Self.monday(ofWeek: 3)),  // In the suggested week: outside the window.
        ]
        let summary = try Self.suggest(week: 3, logs: logs).summary
        #expect(summary.weeks == [1, 2])
        #expect(summary.plannedSessions == 6 && summary.completedSessions == 2)
        #expect(summary.loggedWorkouts == 4)
    }

    @Test func completionBoundaries() throws {
        // Yoga five days a week: two weeks give ten due sessions.
        let schedule = (1...3).map { TrainingPlan.Week(week: $0, days: (1...5).map { .init(day: $0, workouts: [Self.yoga.id]) }) }
        func logs(_ count: Int, rating: Int = 4) -> [WorkoutLog] {
            (0..<count).map { Self.log(Self.yoga, on: Self.monday(ofWeek: 1 + $0 / 5).adding(days: $0 % 5), rating: rating, energy: 3) }
        }
        // 9 of 10 (exactly 90 %) rated exactly 4.0: progress to the longer yoga.
        let ninety = try Self.suggest(week: 3, logs: logs(9), schedule: schedule)
        #expect(ninety.summary.completionRate == 0.9 && ninety.summary.averageRating == 4)
        #expect(Self.actions(ninety) == Array(repeating: .progress, count: 5))
        #expect(ninety.sessions.allSatisfy { $0.workout == Self.yogaLonger.id && $0.suggestedDuration == 33 })
        // 8 of 10: kept, saying what progression needs.
        let eighty = try Self.suggest(week: 3, logs: logs(8), schedule: schedule)
        #expect(Self.actions(eighty) == Array(repeating: .keep, count: 5))
        #expect(eighty.sessions[0].reason == "8 of 10 planned sessions done (80 %); progression starts at 90 %: keep building consistency.")
        // 5 of 10 (exactly 50 %) is not yet reduced; 4 of 10 is.
        #expect(Self.actions(try Self.suggest(week: 3, logs: logs(5), schedule: schedule)) == Array(repeating: .keep, count: 5))
        #expect(Self.actions(try Self.suggest(week: 3, logs: logs(4), schedule: schedule)) == Array(repeating: .reduce, count: 5))
        // Rated 3.9 on average: kept.
        let almost = try Self.suggest(week: 3, logs: logs(9).enumerated().map { var log = $0.element; log.rating = $0.offset == 0 ? 3 : 4; return log }, schedule: schedule)
        #expect(almost.summary.averageRating.map { ($0 * 9).rounded() } == 35)
        #expect(Self.actions(almost) == Array(repeating: .keep, count: 5))
        #expect(almost.sessions[0].reason.contains("progression starts at 4.0"))
    }

    // MARK: Progression and deload

    @Test func allCompletedWithHighRatingsProgressesEachSession() throws {
        let suggestion = try Self.suggest(week: 3, logs: Self.done(weeks: 1...2))
        #expect(suggestion.summary.completionRate == 1 && suggestion.summary.averageRating == 5 && suggestion.summary.averageEnergyBefore == 4)
        #expect(!suggestion.summary.isDeload)
        #expect(Self.actions(suggestion) == [.progress, .progress, .progress])
        // Strength: a harder one of the same length; yoga: a longer one of the same intensity; HIIT (already high,
        // nothing longer within 20 %): the same workout 10 % longer.
        #expect(suggestion.sessions.map(\.workout) == [Self.strengthHarder.id, Self.yogaLonger.id, Self.hiit.id])
        #expect(Self.minutes(suggestion) == [30, 33, 22])
        #expect(suggestion.sessions[0].reason == "6 of 6 planned sessions done (100 %) and your Strength sessions averaged 5.0/5: step up to Heavy Full-Body, a harder Strength session.")
        #expect(suggestion.sessions[2].reason.hasSuffix("add 10 % (20 → 22 min)."))
        #expect(suggestion.summary.note == "6 of 6 planned sessions done (100 %): 3 to progress.")
    }

    @Test func equipmentTheUserLacksRulesOutAVariant() throws {
        let suggestion = try Self.suggest(week: 3, logs: Self.done(weeks: 1...2), equipment: [.dumbbells])
        // The harder strength needs a kettlebell; the 45-minute one is more than 20 % longer: 10 % longer instead.
        #expect(suggestion.sessions[0].workout == Self.strength.id && suggestion.sessions[0].suggestedDuration == 33)
    }

    @Test func threeWeeksOfFullTrainingCallForADeload() throws {
        let suggestion = try Self.suggest(week: 4, logs: Self.done(weeks: 1...3))
        #expect(suggestion.summary.isDeload && suggestion.summary.weeks == [1, 2, 3])
        #expect(Self.actions(suggestion) == [.reduce, .reduce, .reduce])
        #expect(Self.minutes(suggestion) == [24, 24, 16])
        #expect(suggestion.sessions[0].reason.hasPrefix("Deload week after three weeks of full training"))
        #expect(suggestion.summary.note.hasPrefix("Deload week"))
        // The deload week done as suggested is light, so the block is broken and progression resumes.
        let after = try Self.suggest(week: 5, logs: Self.done(weeks: 1...3) + Self.done(weeks: 4...4, share: 80))
        #expect(!after.summary.isDeload)
        #expect(Self.actions(after) == [.progress, .progress, .progress])
        // A block needs every week over: suggesting week 4 on Sunday of week 3 is no deload yet.
        let early = try Self.suggest(week: 4, today: Self.monday(ofWeek: 3).adding(days: 6), logs: Self.done(weeks: 1...3))
        #expect(!early.summary.isDeload)
    }

    @Test func aSkippedWeekBreaksTheBlock() throws {
        let suggestion = try Self.suggest(week: 4, logs: Self.done(weeks: 1...1) + Self.done(weeks: 3...3))
        #expect(!suggestion.summary.isDeload)
        #expect(Self.actions(suggestion) == [.keep, .keep, .keep])
    }

    // MARK: Energy and ratings

    @Test func aFallingEnergyTrendEasesEverySession() throws {
        let logs = Self.done(weeks: 1...1, energy: 4) + Self.done(weeks: 2...2, energy: 2)
        let suggestion = try Self.suggest(week: 3, logs: logs)
        #expect(suggestion.summary.energyTrend == .falling && suggestion.summary.averageEnergyBefore == 3)
        // Strength: the lighter strength (25 of 30 min is within 20 %); yoga is already low, HIIT's lighter one too
        // short: 10 % shorter.
        #expect(Self.actions(suggestion) == [.swap, .reduce, .reduce])
        #expect(suggestion.sessions.map(\.workout) == [Self.strengthLighter.id, Self.yoga.id, Self.hiit.id])
        #expect(Self.minutes(suggestion) == [25, 27, 18])
        #expect(suggestion.sessions[0].reason == "Your energy before workouts dropped from 4.0 to 2.0/5 in the latest week: Light & Easy Strength instead, a lighter Strength session (25 min).")
    }

    @Test func lowEnergyBoundary() throws {
        let low = try Self.suggest(week: 3, logs: Self.done(weeks: 1...2, energy: 2))
        #expect(low.summary.energyTrend == .steady)
        #expect(Self.actions(low) == [.swap, .reduce, .reduce])
        #expect(low.sessions[1].reason.hasPrefix("Your energy before workouts averaged 2.0/5"))
        var logs = Self.done(weeks: 1...2, energy: 2)
        logs[0].energyBefore = 3  // 13 / 6 ≈ 2.2: not low.
        #expect(Self.actions(try Self.suggest(week: 3, logs: logs)) == [.progress, .progress, .progress])
        let rising = try Self.suggest(week: 3, logs: Self.done(weeks: 1...1, energy: 2) + Self.done(weeks: 2...2, energy: 4))
        #expect(rising.summary.energyTrend == .rising && rising.summary.averageEnergyBefore == 3)
    }

    @Test func missingRatingsHoldProgressionBack() throws {
        let unrated = try Self.suggest(week: 3, logs: Self.done(weeks: 1...2, rating: nil))
        #expect(unrated.summary.averageRating == nil && unrated.summary.ratedWorkouts == 0)
        #expect(Self.actions(unrated) == [.keep, .keep, .keep])
        #expect(unrated.sessions[0].reason.contains("only 0 rated; rate at least 3 workouts"))
        var twoRated = Self.done(weeks: 1...2, rating: nil)
        twoRated[0].rating = 5
        twoRated[3].rating = 5
        #expect(Self.actions(try Self.suggest(week: 3, logs: twoRated)) == [.keep, .keep, .keep])
        twoRated[1].rating = 5
        #expect(Self.actions(try Self.suggest(week: 3, logs: twoRated)) == [.progress, .progress, .progress])
        // No energy readings at all does not stop progression.
        #expect(Self.actions(try Self.suggest(week: 3, logs: Self.done(weeks: 1...2, energy: nil))) == [.progress, .progress, .progress])
    }

    @Test func lowRatingsOfATypeEaseThatTypeOnly() throws {
        var logs = Self.done(weeks: 1...2)
        for index in logs.indices where logs[index].workoutType == .hiitStrength { logs[index].rating = 2 }
        let suggestion = try Self.suggest(week: 3, logs: logs)
        #expect(Self.actions(suggestion) == [.progress, .progress, .reduce])
        #expect(suggestion.sessions[2].reason == "Your HIIT Strength sessions averaged 2.0/5: the same workout 10 % shorter (20 → 18 min).")
        // Exactly 2.5 eases; just above does not.
        for index in logs.indices where logs[index].workoutType == .hiitStrength { logs[index].rating = index < 3 ? 2 : 3 }
        #expect(try Self.suggest(week: 3, logs: logs).sessions[2].action == .reduce)
        for index in logs.indices where logs[index].workoutType == .hiitStrength { logs[index].rating = 3 }
        #expect(try Self.suggest(week: 3, logs: logs).sessions[2].action == .keep)
    }

    // MARK: Cycle phases

    @Test func theMenstrualPhaseEasesAnythingAboveLowIntensityEvenWithoutHistory() throws {
        let suggestion = try Self.suggest(week: 1, logs: [], phases: [1: .menstrual, 3: .menstrual, 5: .menstrual])
        #expect(Self.actions(suggestion) == [.swap, .keep, .reduce])
        #expect(suggestion.sessions.map(\.workout) == [Self.strengthLighter.id, Self.yoga.id, Self.hiit.id])
        #expect(Self.minutes(suggestion) == [25, 30, 16])
        #expect(suggestion.sessions.map(\.phase) == [.menstrual, .menstrual, .menstrual])
        #expect(suggestion.sessions[0].reason.hasPrefix("Your period is predicted this day"))
    }

    @Test func theLutealPhaseHoldsProgressionAndEasesHighIntensity() throws {
        let suggestion = try Self.suggest(week: 3, logs: Self.done(weeks: 1...2), phases: [1: .luteal, 3: .follicular, 5: .luteal])
        #expect(Self.actions(suggestion) == [.keep, .progress, .reduce])
        #expect(Self.minutes(suggestion) == [30, 33, 18])
        #expect(suggestion.sessions[0].reason.hasSuffix("but the luteal phase is predicted: hold steady this week."))
        // Ovulatory and follicular days progress as usual.
        let peak = try Self.suggest(week: 3, logs: Self.done(weeks: 1...2), phases: [1: .ovulatory, 3: .ovulatory, 5: .ovulatory])
        #expect(Self.actions(peak) == [.progress, .progress, .progress])
    }

    // MARK: Inputs

    @Test func aWeekThePlanDoesNotHaveIsRefusedByName() {
        for week in [0, -1, 7] {
            #expect(throws: InvalidFields([.init(field: "week", message: "must be between 1 and 6, the plan's weeks")])) {
                try Self.suggest(week: week, logs: [])
            }
        }
        #expect(throws: InvalidFields([.init(field: "week", message: "cannot be suggested: the plan has no weeks")])) {
            try Self.suggest(week: 1, logs: [], schedule: [])
        }
    }

    @Test func aWorkoutGoneFromTheCatalogKeepsItsLoggedLengthOrNone() throws {
        let gone = Self.workout(9, "Retired", .barre, 40, .medium, [])
        let schedule = (1...3).map { TrainingPlan.Week(week: $0, days: [.init(day: 2, workouts: [gone.id, Self.yoga.id])]) }
        let neverLogged = try Self.suggest(week: 3, logs: [], schedule: schedule)
        #expect(neverLogged.sessions[0].action == .keep && neverLogged.sessions[0].plannedDuration == nil && neverLogged.sessions[0].suggestedDuration == nil)
        #expect(neverLogged.sessions[1].action == .reduce)  // 0 of 4 done.
        let logs = [Self.log(gone, on: Self.monday(ofWeek: 1).adding(days: 1), minutes: 40), Self.log(gone, on: Self.monday(ofWeek: 2).adding(days: 1), minutes: 30)]
        let logged = try Self.suggest(week: 3, logs: logs, schedule: schedule)
        #expect(logged.sessions[0].plannedDuration == 35)
        #expect(logged.sessions[0].action == .keep)  // 2 of 4 done (50 %): neither reduced nor progressed.
    }

    @Test func daysFollowThePlanOrderWithinAWeek() throws {
        let schedule = [TrainingPlan.Week(week: 1, days: [.init(day: 5, workouts: [Self.hiit.id]), .init(day: 2, workouts: [Self.yoga.id, Self.strength.id])])]
        let suggestion = try Self.suggest(week: 1, logs: [], schedule: schedule)
        #expect(suggestion.sessions.map(\.day) == [2, 2, 5])
        #expect(suggestion.sessions.map(\.plannedWorkout) == [Self.yoga.id, Self.strength.id, Self.hiit.id])
    }

    @Test func theUpcomingWeekFollowsToday() throws {
        let wednesday = try #require(CalendarDay("2026-03-04"))
        #expect(PlanProgression.upcomingWeek(planStart: wednesday, weekCount: 3, today: Self.start) == 2)  // Week 1 began Monday.
        #expect(PlanProgression.upcomingWeek(planStart: Self.start, weekCount: 3, today: Self.start.adding(days: -1)) == 1)
        #expect(PlanProgression.upcomingWeek(planStart: Self.start, weekCount: 3, today: Self.start.adding(days: -30)) == 1)
        #expect(PlanProgression.upcomingWeek(planStart: Self.start, weekCount: 3, today: Self.start.adding(days: 6)) == 2)
        #expect(PlanProgression.upcomingWeek(planStart: Self.start, weekCount: 3, today: Self.start.adding(days: 7)) == 3)
        #expect(PlanProgression.upcomingWeek(planStart: Self.start, weekCount: 3, today: Self.start.adding(days: 14)) == nil)
        #expect(PlanProgression.firstDay(ofWeek: 2, planStart: wednesday) == Self.start.adding(days: 7))
    }

    @Test func theWeekToSuggestIsTheNamedOneOrTheComingOne() throws {
        #expect(try PlanProgression.week(nil, planStart: Self.start, weekCount: 3, today: Self.start.adding(days: 2)) == 2)
        #expect(try PlanProgression.week(3, planStart: Self.start, weekCount: 3, today: Self.start.adding(days: 30)) == 3)
        #expect(throws: InvalidFields([.init(field: "week", message: "is required once the plan's last week (3) has begun")])) {
            try PlanProgression.week(nil, planStart: Self.start, weekCount: 3, today: Self.start.adding(days: 14))
        }
        #expect(throws: InvalidFields([.init(field: "week", message: "must be between 1 and 3, the plan's weeks")])) {
            try PlanProgression.week(4, planStart: Self.start, weekCount: 3, today: Self.start)
        }
        #expect(throws: InvalidFields([.init(field: "week", message: "cannot be suggested: the plan has no weeks")])) {
            try PlanProgression.week(nil, planStart: Self.start, weekCount: 0, today: Self.start)
        }
    }

    @Test func anInputForAPlanOffersOnlyWorkoutsTheUserMayWatchAndTheDaysPhases() throws {
        var premium = Self.strengthLighter
        premium.isPremium = true
        var plannedPremium = Self.yoga
        plannedPremium.isPremium = true
        let catalog = Self.catalog.filter { $0.id != Self.strengthLighter.id && $0.id != Self.yoga.id } + [premium, plannedPremium]
        let plan = TrainingPlan(name: "Block", startDate: Self.start.adding(days: 2), daysPerWeek: 3, weeklyWorkouts: Array(Self.schedule.prefix(3)))
        let free = PlanProgression.Input(
            plan: plan, week: 2, today: Self.start, logs: [], catalog: catalog, isEntitledToPremium: false, prediction: nil, equipment: nil)
        #expect(free.planStart == plan.startDate && free.schedule == plan.weeklyWorkouts && free.week == 2 && free.phases.isEmpty)
        #expect(!free.catalog.contains { $0.id == premium.id } && free.catalog.contains { $0.id == plannedPremium.id })
        let entitled = PlanProgression.Input(
            plan: plan, week: 2, today: Self.start, logs: [], catalog: catalog, isEntitledToPremium: true, prediction: nil, equipment: [.none])
        #expect(entitled.catalog == catalog && entitled.equipment == [.none])

        // A period that began on the plan's first Monday: week 2's days are cycle days 8 to 14.
        let prediction = try #require(CyclePredictor(profileCycleLength: 28, profilePeriodLength: 5).predict(
            periods: [CyclePredictor.Period(start: Self.start, end: Self.start.adding(days: 4))], today: Self.start.adding(days: 3)))
        let phased = PlanProgression.Input(
            plan: plan, week: 2, today: Self.start, logs: [], catalog: catalog, isEntitledToPremium: false, prediction: prediction, equipment: nil)
        #expect(phased.phases == Dictionary(uniqueKeysWithValues: (1...7).map { ($0, prediction.position(on: Self.monday(ofWeek: 2).adding(days: $0 - 1)).phase) }))
        #expect(phased.phases[1] == .follicular)
    }

    // MARK: Bounds

    /// Many generated histories: every suggestion is the same when asked twice, within ±20 % of the planned length,
    /// of the planned workout's type, and one of the catalog's.
    @Test func suggestionsAreDeterministicAndBounded() throws {
        var random = Generator(seed: 18)
        var actionsSeen: Set<PlanProgression.Action> = []
        for _ in 0..<300 {
            var logs: [WorkoutLog] = []
            for week in 1...4 {
                for (workout, offset) in [(Self.strength, 0), (Self.yoga, 2), (Self.hiit, 4)] where random.next(100) < 75 {
                    logs.append(Self.log(
                        workout, on: Self.monday(ofWeek: week).adding(days: offset), minutes: 5 + random.next(60),
                        rating: random.next(6) == 0 ? nil : 1 + random.next(5), energy: random.next(6) == 0 ? nil : 1 + random.next(5)
                    ))
                }
            }
            let phases = Dictionary(uniqueKeysWithValues: [1, 3, 5].compactMap { day in random.next(3) == 0 ? nil : (day, CyclePhase.allCases[random.next(4)]) })
            let week = 1 + random.next(6)
            let today = Self.monday(ofWeek: week).adding(days: random.next(3))
            let first = try Self.suggest(week: week, today: today, logs: logs, phases: phases)
            #expect(try Self.suggest(week: week, today: today, logs: logs.shuffled(using: &random), phases: phases) == first)
            let byID = Dictionary(uniqueKeysWithValues: Self.catalog.map { ($0.id, $0) })
            for session in first.sessions {
                actionsSeen.insert(session.action)
                let planned = try #require(session.plannedDuration), suggested = try #require(session.suggestedDuration)
                #expect(suggested * 100 >= planned * 80 && suggested * 100 <= planned * 120, "\(session)")
                #expect(byID[session.workout]?.type == byID[session.plannedWorkout]?.type)
                #expect((session.action == .swap || session.action == .progress) || session.workout == session.plannedWorkout)
                #expect(session.action != .keep || suggested == planned)
                #expect(!session.reason.isEmpty)
            }
        }
        #expect(actionsSeen == Set(PlanProgression.Action.allCases))
    }

    @Test func theSameInputGivesTheSameSuggestion() throws {
        let logs = Self.done(weeks: 1...3, energy: 3) + [Self.log(Self.strengthLong, on: Self.monday(ofWeek: 2).adding(days: 5), rating: 2)]
        let input = PlanProgression.Input(
            planStart: Self.start, schedule: Self.schedule, week: 4, today: Self.monday(ofWeek: 4), logs: logs, catalog: Self.catalog,
            phases: [1: .menstrual]
        )
        var reordered = input
        reordered.logs.reverse()
        reordered.catalog.reverse()
        #expect(try PlanProgression.suggestion(input) == PlanProgression.suggestion(reordered))
    }
}

/// A small deterministic generator (SplitMix64), so the bounds test explores the same histories every run.
struct Generator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
