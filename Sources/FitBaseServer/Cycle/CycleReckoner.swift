import FitBaseCore
import Foundation

/// Where a user stood in their cycle on a given day, from their logged periods (or the profile's last period date) and
/// fertility signals (a detected ovulation moves the next start and the phases).
struct CycleReckoner: Sendable {
    let store: CycleStore
    let signals: CycleSignalStore
    let profiles: ProfileStore

    /// The prediction as of `day` (periods and signals logged after it are ignored); `nil` without any cycle data. Pass
    /// the profile, the user's periods and signals when already read.
    func prediction(
        for user: UserID, on day: CalendarDay, profile: Profile? = nil, periods logged: [Period]? = nil, signals observed: [FertilitySignal]? = nil
    ) async throws -> CyclePredictor.Prediction? {
        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        let logged = if let logged { logged } else { try await store.periods(of: user) }
        let periods = CycleReckoning.periods(logged: logged, profile: profile, on: day)
        // Without a period there is no prediction, whatever the signals say: they are not read.
        guard !periods.isEmpty else { return nil }
        let observed = if let observed { observed } else { try await signals.signals(of: user) }
        return CycleReckoning.prediction(periods: periods, signals: observed, profile: profile, on: day)
    }
}
