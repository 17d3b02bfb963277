/// The rules of ``PlanProgression`` for one session, in the order its documentation lists them.
struct SessionRules: Sendable {
    let history: ProgressionHistory
    let catalog: [WorkoutID: CatalogWorkout]
    let equipment: Set<Equipment>?

    /// Enough sessions were due in the window to adjust on.
    var hasEnoughHistory: Bool { history.due >= PlanProgression.minimumSessions }
    /// The week is a deload (a full-training block has at least one due session a week, so enough history).
    var isDeload: Bool { history.isHighStrainBlock }

    func session(_ workout: WorkoutID, day: Int, date: CalendarDay, phase: CyclePhase?) -> PlanProgression.Session {
        let planned = catalog[workout]
        let logged = history.logs.filter { $0.workout == workout }
        let duration = planned?.durationMinutes ?? ProgressionHistory.mean(logged.map(\.durationMinutes)).map { Int($0.rounded()) }
        func answer(_ action: PlanProgression.Action, _ minutes: Int?, _ reason: String, to chosen: WorkoutID? = nil) -> PlanProgression.Session {
            .init(
                day: day, date: date, phase: phase, plannedWorkout: workout, workout: chosen ?? workout, action: action, plannedDuration: duration,
                suggestedDuration: minutes, reason: reason
            )
        }
        guard let duration, duration > 0 else {
            return answer(.keep, nil, "This workout is no longer in the catalog and was never logged, so there is nothing to adjust: keep it as planned.")
        }
        let type = planned?.type ?? logged.first?.workoutType
        let typeName = type?.displayName ?? "workout"
        func shorter(_ percent: Int, _ why: String) -> PlanProgression.Session {
            let minutes = max(1, (duration * (100 - percent) + 99) / 100)
            return answer(.reduce, minutes, "\(why): the same workout \(percent) % shorter (\(duration) → \(minutes) min).")
        }
        /// A lighter workout of the same type, else `percent` shorter.
        func easier(_ percent: Int, _ why: String) -> PlanProgression.Session {
            guard let lighter = lighter(than: planned, duration: duration, phase: phase) else { return shorter(percent, why) }
            return answer(
                .swap, lighter.durationMinutes, "\(why): \(lighter.title) instead, a lighter \(typeName) session (\(lighter.durationMinutes) min).",
                to: lighter.id
            )
        }

        if isDeload {
            return shorter(PlanProgression.reducePercent, "Deload week after three weeks of full training")
        }
        if phase == .menstrual, planned.map({ $0.intensity > .low }) ?? true {
            return easier(PlanProgression.reducePercent, "Your period is predicted this day; honor lower energy with gentler movement")
        }
        if phase == .luteal, planned?.intensity == .high {
            return easier(PlanProgression.easePercent, "The luteal phase is predicted; steady work suits it better than peak intensity")
        }
        guard hasEnoughHistory else {
            return answer(
                .keep, duration,
                "Not enough history yet (\(history.due) of \(PlanProgression.minimumSessions) planned sessions to go on): keep it as planned."
            )
        }
        let completion = history.completionRate ?? 0
        let done = "\(history.done) of \(history.due) planned sessions done (\(PlanProgression.percent(completion)))"
        if completion < PlanProgression.reduceCompletion {
            return shorter(PlanProgression.reducePercent, "\(done) in the last weeks; a shorter session is easier to fit in")
        }
        if let energy = lowEnergy {
            return easier(PlanProgression.easePercent, energy)
        }
        let rating = rating(of: type)
        if let rating, rating.value <= PlanProgression.lowRating {
            return easier(PlanProgression.easePercent, "\(rating.label.prefix(1).uppercased() + rating.label.dropFirst()) averaged \(PlanProgression.oneDecimal(rating.value))/5")
        }
        guard completion >= PlanProgression.progressCompletion else {
            return answer(.keep, duration, "\(done); progression starts at \(PlanProgression.percent(PlanProgression.progressCompletion)): keep building consistency.")
        }
        guard history.ratings.count >= PlanProgression.minimumRatings, let rating else {
            return answer(
                .keep, duration,
                "\(done), but only \(history.ratings.count) rated; rate at least \(PlanProgression.minimumRatings) workouts to unlock progression."
            )
        }
        let ratedWell = "\(rating.label) averaged \(PlanProgression.oneDecimal(rating.value))/5"
        guard rating.value >= PlanProgression.progressRating else {
            return answer(.keep, duration, "\(done) and \(ratedWell); progression starts at \(PlanProgression.oneDecimal(PlanProgression.progressRating)): keep it as planned.")
        }
        if let phase, phase == .menstrual || phase == .luteal {
            return answer(.keep, duration, "\(done) and \(ratedWell), but the \(phase.rawValue) phase is predicted: hold steady this week.")
        }
        if let harder = harder(than: planned, duration: duration, phase: phase) {
            return answer(
                .progress, harder.durationMinutes, "\(done) and \(ratedWell): step up to \(harder.title), a harder \(typeName) session.", to: harder.id
            )
        }
        if let longer = longer(than: planned, duration: duration, phase: phase) {
            return answer(
                .progress, longer.durationMinutes,
                "\(done) and \(ratedWell): step up to \(longer.title), a longer \(typeName) session (\(longer.durationMinutes) min).", to: longer.id
            )
        }
        let minutes = min(600, duration * (100 + PlanProgression.progressPercent) / 100)
        guard minutes > duration else {
            return answer(.keep, duration, "\(done) and \(ratedWell), but a \(duration)-minute session is too short to lengthen by \(PlanProgression.progressPercent) %.")
        }
        return answer(
            .progress, minutes, "\(done) and \(ratedWell): add \(PlanProgression.progressPercent) % (\(duration) → \(minutes) min)."
        )
    }

    /// Why energy calls for an easier week, when it does.
    private var lowEnergy: String? {
        if history.energyTrend == .falling, let shift = history.energyShift {
            return "Your energy before workouts dropped from \(PlanProgression.oneDecimal(shift.earlier)) to \(PlanProgression.oneDecimal(shift.latest))/5 in the latest week"
        }
        if let energy = history.averageEnergyBefore, energy <= PlanProgression.lowEnergy {
            return "Your energy before workouts averaged \(PlanProgression.oneDecimal(energy))/5"
        }
        return nil
    }

    /// The mean rating that applies to a workout of `type` (its type's when two are rated, else every log's when two
    /// are), with how to name it.
    private func rating(of type: WorkoutType?) -> (value: Double, label: String)? {
        if let type, let rating = history.averageRating(of: type), rating.ofType {
            return (rating.value, "your \(type.displayName) sessions")
        }
        guard history.ratings.count >= 2, let overall = history.averageRating else { return nil }
        return (overall, "your workouts")
    }

    // MARK: Candidates

    /// Workouts of the planned one's type the user can do, other than it, whose length is `lower`–`upper` percent
    /// of `duration`.
    private func candidates(for planned: CatalogWorkout?, duration: Int, lower: Int, upper: Int, strictlyLonger: Bool = false) -> [CatalogWorkout] {
        guard let planned else { return [] }
        return catalog.values.filter { candidate in
            candidate.id != planned.id && candidate.type == planned.type
                && candidate.durationMinutes * 100 >= duration * lower && candidate.durationMinutes * 100 <= duration * upper
                && (!strictlyLonger || candidate.durationMinutes > duration)
                && (equipment.map { candidate.canBeDone(with: $0) } ?? true)
        }
    }

    /// The best lighter workout: suited to the phase, the smallest step down in intensity, the longest, then by id.
    private func lighter(than planned: CatalogWorkout?, duration: Int, phase: CyclePhase?) -> CatalogWorkout? {
        guard let planned else { return nil }
        return candidates(for: planned, duration: duration, lower: 100 - PlanProgression.maximumChangePercent, upper: 100)
            .filter { $0.intensity < planned.intensity }
            .min { a, b in
                (suits(a, phase), a.intensity, a.durationMinutes, b.id.description) > (suits(b, phase), b.intensity, b.durationMinutes, a.id.description)
            }
    }

    /// The best harder workout: one intensity step up, not longer; suited to the phase, the longest, then by id.
    private func harder(than planned: CatalogWorkout?, duration: Int, phase: CyclePhase?) -> CatalogWorkout? {
        guard let planned, planned.intensity < .high else { return nil }
        return candidates(for: planned, duration: duration, lower: 100 - PlanProgression.maximumChangePercent, upper: 100)
            .filter { $0.intensity == planned.intensity.stepUp }
            .min { a, b in (suits(a, phase), a.durationMinutes, b.id.description) > (suits(b, phase), b.durationMinutes, a.id.description) }
    }

    /// The best longer workout of the same intensity: the shortest step up, suited to the phase, then by id.
    private func longer(than planned: CatalogWorkout?, duration: Int, phase: CyclePhase?) -> CatalogWorkout? {
        guard let planned else { return nil }
        return candidates(for: planned, duration: duration, lower: 100, upper: 100 + PlanProgression.maximumChangePercent, strictlyLonger: true)
            .filter { $0.intensity == planned.intensity }
            .min { a, b in (a.durationMinutes, suits(b, phase), a.id.description) < (b.durationMinutes, suits(a, phase), b.id.description) }
    }

    /// 1 when `workout` lists `phase`, else 0.
    private func suits(_ workout: CatalogWorkout, _ phase: CyclePhase?) -> Int {
        phase.map { workout.phases.contains($0) ? 1 : 0 } ?? 0
    }
}
