import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// Workout history in the account export and deletion.
struct WorkoutLogsOwner: InMemoryAccountDataOwner {
    let store: HistoryStore
    let audit: AuditLog
    let section = "workoutHistory"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let rows = try await HistoryStore.select(on: db).where("user_id", .equal, user.rawValue).orderBy("completed_at").all()
        let opened = try await store.open(rows, of: user)
        if !opened.isEmpty {
            try await audit.append(AuditEvent(actor: user, subject: user, action: .export, resource: WorkoutLogsCollection.resource, count: opened.count))
        }
        return try .exportList(opened) { log in
            [
                "workoutId": log.workout.description,
                "workoutTitle": log.workoutTitle,
                "completedAt": log.completedAt.formatted(.iso8601),
                "durationMinutes": log.durationMinutes,
                "rating": log.rating,
                "energyBefore": log.energyBefore,
                "energyAfter": log.energyAfter,
                "notes": log.notes,
                "cyclePhase": log.cyclePhase?.rawValue,
                "cycleDay": log.cycleDay,
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "workout_logs").where("user_id", .equal, user.rawValue).run()
    }
}
