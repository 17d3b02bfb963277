import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// The caller's workout history and statistics. Logs are reachable only by their owner.
protocol HistoryOperations: FeatureOperations { var historyFeature: HistoryFeature { get } }

extension HistoryOperations {
    func logWorkout(_ input: Operations.LogWorkout.Input) async throws -> Operations.LogWorkout.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        let log = try await historyFeature.collection.validated(body, id: ids.make(), user: caller.user, now: now)
        try await historyFeature.collection.save(log, of: caller.user, now: now)
        return .created(.init(body: .json(HistoryWire.wire(log))))
    }

    func listHistory(_ input: Operations.ListHistory.Input) async throws -> Operations.ListHistory.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let page = try await historyPage(of: caller.user, from: try CalendarDay.query(input.query.from, field: "from"), to: try CalendarDay.query(input.query.to, field: "to"), offset: offset, limit: limit)
        return .ok(.init(body: .json(.init(items: page.logs.map(HistoryWire.wire), nextCursor: page.nextCursor))))
    }

    /// One page of the user's logs, newest first, with the cursor of the next (the read audited): for the generated
    /// handler and the direct route (``historyRoutes``) alike.
    func historyPage(of user: UserID, from: CalendarDay?, to: CalendarDay?, offset: Int, limit: Int) async throws -> (logs: ArraySlice<WorkoutLog>, nextCursor: String?) {
        let logs = try await historyFeature.history.logs(of: user, from: from, to: to, offset: offset, limit: limit + 1)
        try await historyFeature.collection.audited(read: min(logs.count, limit), of: user)
        return (logs.prefix(limit), logs.count > limit ? PageRequest.cursor(offset: offset + limit) : nil)
    }

    func deleteWorkoutLog(_ input: Operations.DeleteWorkoutLog.Input) async throws -> Operations.DeleteWorkoutLog.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = WorkoutLogID(input.path.logId), try await historyFeature.collection.delete(id, of: caller.user, now: clock.now) else {
            throw Problem.notFound("No workout log \(input.path.logId) of yours.")
        }
        return .noContent(.init())
    }

    func getHistoryStats(_ input: Operations.GetHistoryStats.Input) async throws -> Operations.GetHistoryStats.Output {
        let caller = try RequestScope.requireCaller()
        let detailed = input.query.detail == .full
        if detailed { try await historyFeature.entitlements.require(HistoryStatistics.detailFeature, caller: caller, doing: "Detailed statistics") }
        let logs = try await historyFeature.history.allLogs(of: caller.user)
        try await historyFeature.collection.audited(read: logs.count, of: caller.user)
        let today = LocalCalendar.day(of: clock.now, in: try await historyFeature.collection.profiles.profile(of: caller.user).timeZone)
        let statistics = HistoryStatistics(logs: logs, today: today, detailed: detailed)
        let basic = Components.Schemas.HistoryStats(
            totalWorkouts: statistics.totalWorkouts, totalMinutes: statistics.totalMinutes, currentStreak: statistics.currentStreak,
            longestStreak: statistics.longestStreak, thisWeek: statistics.thisWeek
        )
        guard detailed else { return .ok(.init(body: .json(basic))) }
        var stats = basic
        stats.byType = .init(additionalProperties: Dictionary(uniqueKeysWithValues: statistics.byType.map { ($0.key.rawValue, $0.value) }))
        stats.byPhase = .init(additionalProperties: Dictionary(uniqueKeysWithValues: statistics.byPhase.map { ($0.key.rawValue, $0.value) }))
        stats.weekly = statistics.weekly.map { .init(weekStart: $0.start.description, workouts: $0.workouts, minutes: $0.minutes) }
        stats.energyChangeByPhase = .init(additionalProperties: Dictionary(uniqueKeysWithValues: statistics.energyChangeByPhase.map { ($0.key.rawValue, $0.value) }))
        return .ok(.init(body: .json(stats)))
    }

    // MARK: Helpers

}
