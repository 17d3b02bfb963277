import FitBaseCore
import Foundation

/// Progressive suggestions for a week of one of the caller's plans (the `advancedProgression` feature): gathers the
/// plan, the caller's logs of the weeks before (through ``HistoryStore`` only), the catalog and the predicted phases,
/// and lets ``PlanProgression`` decide.
struct PlanProgressionService: Sendable {
    /// The most logs of the window read (the newest); far more than three weeks of training hold.
    static let maximumLogs = 2_000
    private static let logPage = 500

    let plans: PlanStore
    let history: HistoryStore
    let catalog: CatalogStore
    let profiles: ProfileStore
    let cycle: CycleReckoner
    let entitlements: EntitlementService
    /// The logs' private fields (energy) are read: audited like any other read of them.
    let audit: AuditLog

    /// The suggestion for week `requested` of plan `id` (by default the week after the one holding the caller's
    /// today); `nil` when the caller has no such plan, whatever their tier. Throws 402 without the feature and 400
    /// naming `week` for a week the plan does not have. The caller's today is the day `now` falls on in their zone.
    func suggestion(for id: PlanID, week requested: Int?, caller: Caller, now: Date) async throws -> PlanProgression.Suggestion? {
        guard let plan = try await plans.plan(id, of: caller.user)?.plan else { return nil }
        try await entitlements.require(.advancedProgression, caller: caller, doing: "Progressive plan suggestions")
        let profile = try await profiles.profile(of: caller.user)
        let today = LocalCalendar.day(of: now, in: profile.timeZone)
        let week = try PlanProgression.week(requested, planStart: plan.startDate, weekCount: plan.weeklyWorkouts.count, today: today)
        let monday = PlanProgression.firstDay(ofWeek: week, planStart: plan.startDate)
        let logs = try await logs(of: caller.user, from: monday.adding(days: -7 * PlanProgression.windowWeeks), to: monday.adding(days: -1))
        if !logs.isEmpty {
            try await audit.append(AuditEvent(actor: caller.user, subject: caller.user, action: .read, resource: WorkoutLogsCollection.resource, count: logs.count))
        }
        return try PlanProgression.suggestion(.init(
            plan: plan, week: week, today: today, logs: logs, catalog: try await catalog.allWorkouts(),
            isEntitledToPremium: try await entitlements.isEntitled(caller),
            prediction: try await cycle.prediction(for: caller.user, on: today, profile: profile), equipment: profile.availableEquipment.map(Set.init)
        ))
    }

    /// The caller's logs between `from` and `to`, newest first, at most ``maximumLogs``.
    private func logs(of user: UserID, from: CalendarDay, to: CalendarDay) async throws -> [WorkoutLog] {
        var logs: [WorkoutLog] = []
        while logs.count < Self.maximumLogs {
            let page = try await history.logs(of: user, from: from, to: to, offset: logs.count, limit: Self.logPage)
            logs += page
            if page.count < Self.logPage { break }
        }
        return Array(logs.prefix(Self.maximumLogs))
    }
}
