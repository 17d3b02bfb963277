import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// The caller's workout history and statistics. Logs are reachable only by their owner.
struct HistoryController: Sendable {
    let history: HistoryStore
    let catalog: CatalogStore
    let profiles: ProfileStore
    let cycle: CycleReckoner
    let entitlements: EntitlementService

    func logWorkout(_ input: Operations.LogWorkout.Input) async throws -> Operations.LogWorkout.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let log = try await validated(body, id: WorkoutLogID(), user: caller.user)
        try await history.insert(log, of: caller.user, now: .storageNow)
        return .created(.init(body: .json(Self.wire(log))))
    }

    func listHistory(_ input: Operations.ListHistory.Input) async throws -> Operations.ListHistory.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        func day(_ text: String?, _ field: String) throws(Problem) -> CalendarDay? {
            guard let text else { return nil }
            guard let day = CalendarDay(text) else {
                throw Problem.invalidRequest("\(field) must be a date written YYYY-MM-DD.", fieldErrors: [.init(field: field, message: "must be a date written YYYY-MM-DD")])
            }
            return day
        }
        let logs = try await history.logs(
            of: caller.user, from: try day(input.query.from, "from"), to: try day(input.query.to, "to"), offset: offset, limit: limit + 1
        )
        return .ok(.init(body: .json(.init(
            items: logs.prefix(limit).map(Self.wire),
            nextCursor: logs.count > limit ? PageRequest.cursor(offset: offset + limit) : nil
        ))))
    }

    func deleteWorkoutLog(_ input: Operations.DeleteWorkoutLog.Input) async throws -> Operations.DeleteWorkoutLog.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = WorkoutLogID(input.path.logId), try await history.delete(id, of: caller.user, now: .storageNow).deleted else {
            throw Problem.notFound("No workout log \(input.path.logId) of yours.")
        }
        return .noContent(.init())
    }

    func getHistoryStats(_ input: Operations.GetHistoryStats.Input) async throws -> Operations.GetHistoryStats.Output {
        let caller = try RequestScope.requireCaller()
        let detailed = input.query.detail == .full
        if detailed { try await entitlements.require(.analytics, caller: caller, doing: "Detailed statistics") }
        let logs = try await history.allLogs(of: caller.user)
        let today = LocalCalendar.today(in: try await profiles.profile(of: caller.user).timeZone)
        let days = Set(logs.map(\.localDate))
        let thisWeek = WorkoutStreaks.weekStart(of: today)
        let basic = Components.Schemas.HistoryStats(
            totalWorkouts: logs.count,
            totalMinutes: logs.reduce(0) { $0 + $1.durationMinutes },
            currentStreak: WorkoutStreaks.current(days: days, today: today),
            longestStreak: WorkoutStreaks.longest(days: days),
            thisWeek: logs.filter { $0.localDate >= thisWeek && $0.localDate <= today }.count
        )
        guard detailed else { return .ok(.init(body: .json(basic))) }
        let weeks = (0..<12).map { thisWeek.adding(days: -7 * (11 - $0)) }
        let weekly = weeks.map { start in
            let inWeek = logs.filter { (start...start.adding(days: 6)).contains($0.localDate) }
            return Components.Schemas.HistoryStats.WeeklyPayloadPayload(
                weekStart: start.description, workouts: inWeek.count, minutes: inWeek.reduce(0) { $0 + $1.durationMinutes }
            )
        }
        var energy: [String: [Int]] = [:]
        for log in logs {
            if let phase = log.cyclePhase, let before = log.energyBefore, let after = log.energyAfter {
                energy[phase.rawValue, default: []].append(after - before)
            }
        }
        var stats = basic
        stats.byType = .init(additionalProperties: Dictionary(grouping: logs, by: \.workoutType.rawValue).mapValues(\.count))
        stats.byPhase = .init(additionalProperties: Dictionary(grouping: logs.filter { $0.cyclePhase != nil }, by: { $0.cyclePhase?.rawValue ?? "" }).mapValues(\.count))
        stats.weekly = weekly
        stats.energyChangeByPhase = .init(additionalProperties: energy.mapValues { Double($0.reduce(0, +)) / Double($0.count) })
        return .ok(.init(body: .json(stats)))
    }

    // MARK: Helpers

    /// The log a `WorkoutLogInput` describes, with the workout's type and title, the local day in the user's time zone
    /// and the cycle position on that day fixed; every invalid field is reported at once. A caller validating many
    /// logs passes the profile, periods and catalog lookup it has read once.
    func validated(
        _ body: Components.Schemas.WorkoutLogInput, id: WorkoutLogID, user: UserID, profile: Profile? = nil, periods: [LoggedPeriod]? = nil,
        workouts: CatalogLookup? = nil
    ) async throws -> WorkoutLog {
        let workouts = workouts ?? CatalogLookup(store: catalog)
        var errors: [Problem.FieldError] = []
        let workout = try await WorkoutID(body.workoutId).asyncMap { try await workouts.workout($0) } ?? nil
        if workout == nil { errors.append(.init(field: "workoutId", message: "is not a workout of the catalog")) }
        if body.completedAt > Date.now.addingTimeInterval(300) { errors.append(.init(field: "completedAt", message: "must not be in the future")) }
        if !(1...600).contains(body.duration) { errors.append(.init(field: "duration", message: "must be between 1 and 600 minutes")) }
        for (field, value) in [("rating", body.rating), ("energyBefore", body.energyBefore), ("energyAfter", body.energyAfter)] {
            if let value, !(1...5).contains(value) { errors.append(.init(field: field, message: "must be between 1 and 5")) }
        }
        if let notes = body.notes, notes.count > 1000 { errors.append(.init(field: "notes", message: "must be at most 1000 characters")) }
        guard let workout, errors.isEmpty else { throw Problem.validationFailed(errors) }

        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        let localDate = LocalCalendar.day(of: body.completedAt, in: profile.timeZone)
        let position = try await cycle.prediction(for: user, on: localDate, profile: profile, periods: periods)?.today
        return WorkoutLog(
            id: id, workout: workout.id, workoutType: workout.type, workoutTitle: workout.title,
            completedAt: body.completedAt, localDate: localDate, durationMinutes: body.duration, rating: body.rating,
            energyBefore: body.energyBefore, energyAfter: body.energyAfter, notes: body.notes,
            cyclePhase: position?.phase, cycleDay: position?.cycleDay
        )
    }

    static func wire(_ log: WorkoutLog) -> Components.Schemas.WorkoutLog {
        .init(
            id: log.id.description, workoutId: log.workout.description, workoutType: .init(rawValue: log.workoutType.rawValue) ?? .strength,
            workoutTitle: log.workoutTitle, completedAt: log.completedAt, localDate: log.localDate.description,
            duration: log.durationMinutes, rating: log.rating, energyBefore: log.energyBefore, energyAfter: log.energyAfter,
            notes: log.notes, cyclePhase: log.cyclePhase.flatMap { .init(rawValue: $0.rawValue) }, cycleDay: log.cycleDay
        )
    }
}

extension Optional {
    /// `map` for an async transform.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
