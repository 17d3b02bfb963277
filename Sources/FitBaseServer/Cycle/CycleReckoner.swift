import FitBaseCore
import Foundation

/// Where a user stood in their cycle on a given day, from their logged periods (or the profile's last period date).
struct CycleReckoner: Sendable {
    let store: CycleStore
    let profiles: ProfileStore

    /// The prediction as of `day` (periods logged after it are ignored); `nil` without any cycle data. Pass the
    /// profile and the user's periods when already read.
    func prediction(for user: UserID, on day: CalendarDay, profile: Profile? = nil, periods logged: [Period]? = nil) async throws -> CyclePredictor.Prediction? {
        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        let logged = if let logged { logged } else { try await store.periods(of: user) }
        var periods = logged.filter { $0.start <= day }.map { CyclePredictor.Period(start: $0.start, end: $0.end) }
        if periods.isEmpty, let last = profile.lastPeriodStartDate.flatMap(CalendarDay.init), last <= day { periods = [.init(start: last)] }
        return CyclePredictor(profileCycleLength: profile.averageCycleLength, profilePeriodLength: profile.averagePeriodLength)
            .predict(periods: periods, today: day)
    }
}
