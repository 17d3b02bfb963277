/// Where a user stands in their cycle on a day, from what they logged and what their profile says: the one rule
/// behind the server's cycle and recommendation answers and the SDK's cycle screen, so Today and Cycle show one phase.
///
/// Logged periods started by the day come first; while there is none, the profile's last period start (the
/// onboarding's answer) stands for one, when it is not after the day. The profile's average cycle and period lengths
/// carry the prediction until the user's own cycles do (``CyclePredictor``).
public enum CycleReckoning {
    /// The periods a prediction as of `day` rests on: the `logged` ones started by then, or — while none is — the
    /// profile's last period start when it is not after `day`; empty without either.
    public static func periods(logged: [Period], profile: Profile, on day: CalendarDay) -> [CyclePredictor.Period] {
        let started = logged.filter { $0.start <= day }.map { CyclePredictor.Period(start: $0.start, end: $0.end) }
        guard started.isEmpty else { return started }
        guard let last = profile.lastPeriodStartDate.flatMap(CalendarDay.init), last <= day else { return [] }
        return [CyclePredictor.Period(start: last)]
    }

    /// The prediction as of `day` from the ``periods(logged:profile:on:)`` and the `signals` observed by then, with
    /// the profile's average lengths; `nil` without any period.
    public static func prediction(
        logged: [Period], signals: [FertilitySignal], profile: Profile, on day: CalendarDay
    ) -> CyclePredictor.Prediction? {
        prediction(periods: periods(logged: logged, profile: profile, on: day), signals: signals, profile: profile, on: day)
    }

    /// The prediction as of `day` from `periods` already chosen by ``periods(logged:profile:on:)``.
    public static func prediction(
        periods: [CyclePredictor.Period], signals: [FertilitySignal], profile: Profile, on day: CalendarDay
    ) -> CyclePredictor.Prediction? {
        CyclePredictor(profileCycleLength: profile.averageCycleLength, profilePeriodLength: profile.averagePeriodLength)
            .predict(periods: periods, signals: signals.filter { $0.date <= day }, today: day)
    }
}
