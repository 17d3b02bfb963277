import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// A plan as stored: the plan, and the version and times the server keeps beside it (the feed's version of its last
/// write, its first and last write).
struct StoredPlan: Sendable, Equatable {
    var plan: TrainingPlan
    var version: Int
    var createdAt: Date
    var updatedAt: Date
}

/// SQL for `training_plans`, always scoped to one user. Writes go through ``PlansCollection``.
struct PlanStore: Sendable {
    let database: Database

    func plans(of user: UserID, offset: Int, limit: Int) async throws -> [StoredPlan] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("user_id", .equal, user.rawValue)
                .orderBy("start_date", .descending).orderBy("id").offset(offset).limit(limit).all().map(Self.plan)
        }
    }

    func plan(_ id: PlanID, of user: UserID) async throws -> StoredPlan? {
        try await database.withConnection { db in
            try await Self.select(on: db).where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue).first().map(Self.plan)
        }
    }

    /// Plans of `user` with these ids (for the change feed).
    static func plans(_ ids: [PlanID], of user: UserID, on db: any SQLDatabase) async throws -> [StoredPlan] {
        guard !ids.isEmpty else { return [] }
        return try await select(on: db).where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all().map(plan)
    }

    /// Writes the row of `plan` of `user` whole, keeping `createdAt` of a plan that exists; returns the stored
    /// `createdAt`. Only ``PlanWrite`` calls it: it enters the change into the feed. The row is replaced only when it
    /// is the user's (decided by the statement itself, so a concurrent first write of the same id by another user
    /// cannot be overwritten): another user's id is `id_taken`, with nothing written.
    static func upsert(_ stored: StoredPlan, of user: UserID, on db: any SQLDatabase) async throws -> Date {
        try await upsertPlan.upsert(binds(stored, of: user), on: db).decode(column: "created_at", as: Date.self)
    }

    /// ``upsert(_:of:on:)`` for a writer that does not need `createdAt` back (a push): in a push, written with the
    /// push's next statement (``OwnedRowUpsert``).
    static func write(_ stored: StoredPlan, of user: UserID, on db: any SQLDatabase) async throws {
        try await upsertPlan.upsertSoon(stored.plan.id.rawValue, binds(stored, of: user), on: db)
    }

    private static func binds(_ stored: StoredPlan, of user: UserID) throws -> [any Encodable & Sendable] {
        let plan = stored.plan
        return [
            plan.id.rawValue, plan.name, plan.notes, plan.startDate.description, plan.endDate?.description, plan.daysPerWeek,
            plan.isCompleted, try jsonText(plan.weeklyWorkouts), stored.version, stored.createdAt, stored.updatedAt, user.rawValue,
        ]
    }

    private static let upsertPlan = OwnedRowUpsert(
        table: "training_plans", columns: columns + ["user_id"], updating: columns.filter { $0 != "id" && $0 != "created_at" },
        returning: ["created_at"]
    )

    /// Deletes the row of the plan if it is the user's, nothing else (``PlansCollection/delete(_:_:on:)`` is the
    /// delete with its feed entry); whether it was there.
    static func deleteRow(_ id: PlanID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        !(try await db.delete(from: "training_plans").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .returning("id").all()).isEmpty
    }

    /// Whether `user` has a plan `id`.
    static func exists(_ id: PlanID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        try await db.select().column("id").from("training_plans").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .first() != nil
    }

    /// How many plans `user` keeps.
    static func count(of user: UserID, on db: any SQLDatabase) async throws -> Int {
        try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "count").from("training_plans")
            .where("user_id", .equal, user.rawValue).first()?.decode(column: "count", as: Int.self) ?? 0
    }

    static let columns = [
        "id", "name", "notes", "start_date", "end_date", "days_per_week", "is_completed", "weekly_workouts", "version",
        "created_at", "updated_at",
    ]

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(columns).from("training_plans")
    }

    static func plan(_ row: any SQLRow) throws -> StoredPlan {
        StoredPlan(
            plan: TrainingPlan(
                id: PlanID(rawValue: try row.decode(column: "id", as: UUID.self)),
                name: try row.decode(column: "name", as: String.self),
                notes: try row.decode(column: "notes", as: String?.self),
                startDate: CalendarDay(try row.decode(column: "start_date", as: String.self)) ?? CalendarDay(daysSince1970: 0),
                endDate: try row.decode(column: "end_date", as: String?.self).flatMap(CalendarDay.init),
                daysPerWeek: try row.decode(column: "days_per_week", as: Int.self),
                isCompleted: try row.decode(column: "is_completed", as: Bool.self),
                weeklyWorkouts: try row.decodeJSON(column: "weekly_workouts", as: [TrainingPlan.Week].self)
            ),
            version: try row.decode(column: "version", as: Int.self),
            createdAt: try row.decode(column: "created_at", as: Date.self),
            updatedAt: try row.decode(column: "updated_at", as: Date.self)
        )
    }
}

/// Training plans in the account export and deletion.
struct TrainingPlansOwner: InMemoryAccountDataOwner {
    let section = "trainingPlans"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let columns = ["name", "notes", "start_date", "end_date", "days_per_week", "is_completed", "weekly_workouts"]
        return try await exportRows(of: user, columns, from: "training_plans", orderBy: "start_date", on: db) { row in
            [
                "name": try row.decode(column: "name", as: String.self),
                "notes": try row.decode(column: "notes", as: String?.self),
                "startDate": try row.decode(column: "start_date", as: String.self),
                "endDate": try row.decode(column: "end_date", as: String?.self),
                "daysPerWeek": try row.decode(column: "days_per_week", as: Int.self),
                "isCompleted": try row.decode(column: "is_completed", as: Bool.self),
                "weeklyWorkouts": try row.decodeJSON(column: "weekly_workouts", as: [TrainingPlan.Week].self)
                    .map { week in ["week": week.week, "days": week.days.map { ["day": $0.day, "workoutIds": $0.workouts.map(\.description)] as [String: any Sendable] }] as [String: any Sendable] },
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "training_plans").where("user_id", .equal, user.rawValue).run()
    }
}
