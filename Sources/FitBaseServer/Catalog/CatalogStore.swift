import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// What a catalog listing asks for. Every filter is optional; `equipment` keeps workouts the caller can do with
/// what they have.
struct WorkoutQuery: Sendable {
    var types: [WorkoutType] = []
    var intensity: Intensity?
    var phase: CyclePhase?
    var equipment: Set<Equipment>?
    var minDuration: Int?
    var maxDuration: Int?
    var targetArea: TargetArea?
    var featured: Bool?
    var premium: Bool?
    var text: String?
    var sort: WorkoutSort = .featured
}

/// Orders of a catalog listing; ties break on title, then id, so pages are stable.
enum WorkoutSort: String, Sendable, CaseIterable {
    case featured, newest, title, shortest, longest
}

/// SQL for the catalog. Reads are open to everyone (premium video URLs are the controller's business); writes come
/// from administrators and the catalog importer, each workout in its own rows, side tables and search index.
struct CatalogStore: Sendable {
    let database: Database
    /// The catalog in memory; every read below is answered from it.
    let cache: CatalogCache

    init(database: Database) {
        self.database = database
        self.cache = CatalogCache(database: database) { generation in
            try await database.withConnection { db in
                CatalogCache.Snapshot(
                    generation: generation, workouts: try await Self.allWorkouts(on: db), programs: try await Self.allPrograms(on: db)
                )
            }
        }
    }

    // MARK: Reading

    /// One page of workouts matching `query`, and whether more follow.
    func workouts(matching query: WorkoutQuery, offset: Int, limit: Int) async throws -> (workouts: [CatalogWorkout], hasMore: Bool) {
        let snapshot = try await cache.snapshot()
        var searched: Set<WorkoutID>?
        if let text = query.text, let search = SearchTerms(text) {
            searched = try await self.searched(search)
        }
        return snapshot.page(query, searched: searched, offset: offset, limit: limit)
    }

    func workout(_ id: WorkoutID) async throws -> CatalogWorkout? {
        try await cache.snapshot().workout(id)
    }

    /// The workouts of `ids` the catalog holds, from one snapshot (one generation check, however many ids).
    func workouts(_ ids: Set<WorkoutID>) async throws -> [WorkoutID: CatalogWorkout] {
        let snapshot = try await cache.snapshot()
        var found: [WorkoutID: CatalogWorkout] = [:]
        for id in ids {
            if let workout = snapshot.workout(id) { found[id] = workout }
        }
        return found
    }

    /// Every workout, in id order (what recommendations choose from).
    func allWorkouts() async throws -> [CatalogWorkout] {
        try await cache.snapshot().workouts
    }

    /// Programs by title.
    func programs() async throws -> [CatalogProgram] {
        try await cache.snapshot().programs
    }

    func program(_ id: ProgramID) async throws -> CatalogProgram? {
        try await cache.snapshot().programs.first { $0.id == id }
    }

    /// The workouts whose title, description, tags or instructor match every word (full-text search of the engine).
    private func searched(_ search: SearchTerms) async throws -> Set<WorkoutID> {
        let engine = database.engine
        return try await database.withConnection { db in
            let rows = try await (engine == .sqlite
                ? db.raw("SELECT workout_id AS id FROM workouts_fts WHERE workouts_fts MATCH \(bind: search.fts5)").all()
                : db.raw("SELECT id FROM workouts WHERE search @@ to_tsquery('english', \(bind: search.tsquery))").all())
            return Set(try rows.map { WorkoutID(rawValue: try $0.decode(column: "id", as: UUID.self)) })
        }
    }

    /// Every workout with its creation time, read for a snapshot.
    private static func allWorkouts(on db: any SQLDatabase) async throws -> [(workout: CatalogWorkout, createdAt: Date)] {
        let rows = try await db.select().columns(workoutColumns + ["created_at"]).from("workouts").all()
        let workouts = try await Self.workouts(from: rows[...], on: db)
        return try zip(workouts, rows).map { ($0, try $1.decode(column: "created_at", as: Date.self)) }
    }

    /// Every program, read for a snapshot.
    private static func allPrograms(on db: any SQLDatabase) async throws -> [CatalogProgram] {
        let rows = try await db.select().columns("id", "title", "description", "level", "is_premium").from("programs").all()
        return try await Self.programs(from: rows, on: db)
    }

    /// Whether the catalog holds no workout yet (the demo catalog is loaded then).
    func isEmpty() async throws -> Bool {
        try await database.withConnection { db in try await db.select().column("id").from("workouts").limit(1).first() == nil }
    }

    // MARK: Writing

    /// Creates or replaces `workout` (an admin's edit) in a transaction of its own.
    func save(_ workout: CatalogWorkout, now: Date) async throws {
        let engine = database.engine
        try await database.transaction { db in try await Self.upsert(workout, engine: engine, now: now, on: db) }
    }

    // MARK: Writing (inside the caller's transaction)

    /// Creates or replaces `workout`, keeping its creation time when it existed.
    static func upsert(_ workout: CatalogWorkout, engine: DatabaseEngine, now: Date, on db: any SQLDatabase) async throws {
        let id = workout.id.rawValue
        let values: [any Encodable & Sendable] = [
            id, workout.title, workout.description, workout.type.rawValue, workout.durationMinutes, workout.intensity.rawValue,
            workout.thumbnailURL, workout.videoURL, workout.instructorName, try jsonText(workout.tags), workout.isFeatured,
            workout.isPremium, try jsonText(workout.benefits), now, now,
        ]
        let updated = [
            "title", "description", "type", "duration_minutes", "intensity", "thumbnail_url", "video_url", "instructor_name",
            "tags", "is_featured", "is_premium", "benefits", "updated_at",
        ]
        try await CacheGenerations.bump(.catalog, on: db)
        try await db.insert(into: "workouts").columns(workoutColumns + ["created_at", "updated_at"]).values(values.map { SQLBind($0) })
            .onConflict(with: ["id"]) { conflict in updated.reduce(conflict) { $0.set(excludedValueOf: $1) } }
            .run()
        for (table, column, items) in [
            ("workout_phases", "phase", workout.phases.map(\.rawValue)),
            ("workout_equipment", "equipment", workout.equipment.map(\.rawValue)),
            ("workout_target_areas", "target_area", workout.targetAreas.map(\.rawValue)),
        ] {
            try await db.delete(from: table).where("workout_id", .equal, id).run()
            for item in Set(items) {
                try await db.insert(into: table).columns("workout_id", column).values(SQLBind(id), SQLBind(item)).run()
            }
        }
        if engine == .sqlite {
            try await db.delete(from: "workouts_fts").where("workout_id", .equal, id).run()
            try await db.insert(into: "workouts_fts").columns("workout_id", "title", "description", "tags", "instructor_name")
                .values(SQLBind(id), SQLBind(workout.title), SQLBind(workout.description), SQLBind(workout.tags.joined(separator: " ")), SQLBind(workout.instructorName))
                .run()
        }
    }

    /// A workout cannot be deleted while a program lists it.
    struct WorkoutInUse: Error, ProblemConvertible {
        var problem: Problem { Problem(.conflict, code: .workoutInUse, detail: "A program includes this workout; remove it from the program first.") }
    }

    /// Whether the catalog holds workout `id`; with `locking`, its row stays locked to the caller's transaction
    /// (`FOR UPDATE` on PostgreSQL; SQLite's single writer serialises anyway).
    static func contains(_ id: WorkoutID, locking: Bool = false, on db: any SQLDatabase) async throws -> Bool {
        let query = db.select().column("id").from("workouts").where("id", .equal, id.rawValue)
        return try await (locking ? query.for(.update) : query).first() != nil
    }

    /// Deletes a workout and tells `deletions`' listeners, in the caller's transaction; `false` when there is none.
    /// ``WorkoutInUse`` (409 `workout_in_use`) while a program lists it.
    static func delete(
        _ id: WorkoutID, engine: DatabaseEngine, deletions: WorkoutDeletions, now: Date, on db: any SQLDatabase
    ) async throws -> Bool {
        if try await db.select().column("program_id").from("program_workouts").where("workout_id", .equal, id.rawValue).first() != nil {
            throw WorkoutInUse()
        }
        try await CacheGenerations.bump(.catalog, on: db)
        if engine == .sqlite { try await db.delete(from: "workouts_fts").where("workout_id", .equal, id.rawValue).run() }
        guard !(try await db.delete(from: "workouts").where("id", .equal, id.rawValue).returning("id").all()).isEmpty else { return false }
        try await deletions.deleted(id, now: now, on: db)
        return true
    }

    /// Creates or replaces `program` and its week-by-week workout list.
    static func upsert(_ program: CatalogProgram, now: Date, on db: any SQLDatabase) async throws {
        let id = program.id.rawValue
        try await CacheGenerations.bump(.catalog, on: db)
        try await db.insert(into: "programs").columns("id", "title", "description", "level", "is_premium", "created_at", "updated_at")
            .values(
                SQLBind(id), SQLBind(program.title), SQLBind(program.description), SQLBind(program.level.rawValue),
                SQLBind(program.isPremium), SQLBind(now), SQLBind(now)
            )
            .onConflict(with: ["id"]) { conflict in
                ["title", "description", "level", "is_premium", "updated_at"].reduce(conflict) { $0.set(excludedValueOf: $1) }
            }
            .run()
        try await db.delete(from: "program_workouts").where("program_id", .equal, id).run()
        for (week, workouts) in program.weeks.enumerated() {
            for (position, workout) in workouts.enumerated() {
                try await db.insert(into: "program_workouts").columns("program_id", "week", "position", "workout_id")
                    .values(SQLBind(id), SQLBind(week + 1), SQLBind(position), SQLBind(workout.rawValue)).run()
            }
        }
    }

    // MARK: Rows

    private static let workoutColumns = [
        "id", "title", "description", "type", "duration_minutes", "intensity", "thumbnail_url", "video_url",
        "instructor_name", "tags", "is_featured", "is_premium", "benefits",
    ]

    private static func selectWorkouts(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(workoutColumns).from("workouts")
    }

    /// Rows of `workouts` with their phases, equipment and target areas (three queries for the whole page).
    private static func workouts(from rows: ArraySlice<any SQLRow>, on db: any SQLDatabase) async throws -> [CatalogWorkout] {
        let ids = try rows.map { try $0.decode(column: "id", as: UUID.self) }
        guard !ids.isEmpty else { return [] }
        func sideValues(_ table: String, _ column: String) async throws -> [UUID: [String]] {
            let side = try await db.select().columns("workout_id", column).from(table).where("workout_id", .in, ids)
                .orderBy(column).all()
            var values: [UUID: [String]] = [:]
            for row in side {
                values[try row.decode(column: "workout_id", as: UUID.self), default: []].append(try row.decode(column: column, as: String.self))
            }
            return values
        }
        let phases = try await sideValues("workout_phases", "phase")
        let equipment = try await sideValues("workout_equipment", "equipment")
        let areas = try await sideValues("workout_target_areas", "target_area")
        return try zip(rows, ids).map { row, id in
            CatalogWorkout(
                id: WorkoutID(rawValue: id),
                title: try row.decode(column: "title", as: String.self),
                description: try row.decode(column: "description", as: String.self),
                type: WorkoutType(rawValue: try row.decode(column: "type", as: String.self)) ?? .strength,
                durationMinutes: try row.decode(column: "duration_minutes", as: Int.self),
                intensity: Intensity(rawValue: try row.decode(column: "intensity", as: String.self)) ?? .medium,
                phases: CyclePhase.allCases.filter { (phases[id] ?? []).contains($0.rawValue) },
                equipment: Equipment.allCases.filter { (equipment[id] ?? []).contains($0.rawValue) },
                thumbnailURL: try row.decode(column: "thumbnail_url", as: String.self),
                videoURL: try row.decode(column: "video_url", as: String.self),
                instructorName: try row.decode(column: "instructor_name", as: String.self),
                tags: try row.decodeJSON(column: "tags", as: [String].self),
                isFeatured: try row.decode(column: "is_featured", as: Bool.self),
                isPremium: try row.decode(column: "is_premium", as: Bool.self),
                targetAreas: TargetArea.allCases.filter { (areas[id] ?? []).contains($0.rawValue) },
                benefits: try row.decodeJSON(column: "benefits", as: [String].self)
            )
        }
    }

    private static func programs(from rows: [any SQLRow], on db: any SQLDatabase) async throws -> [CatalogProgram] {
        let ids = try rows.map { try $0.decode(column: "id", as: UUID.self) }
        guard !ids.isEmpty else { return [] }
        let entries = try await db.select().columns("program_id", "week", "workout_id").from("program_workouts")
            .where("program_id", .in, ids).orderBy("week").orderBy("position").all()
        var weeks: [UUID: [Int: [WorkoutID]]] = [:]
        for entry in entries {
            let program = try entry.decode(column: "program_id", as: UUID.self)
            let week = try entry.decode(column: "week", as: Int.self)
            weeks[program, default: [:]][week, default: []].append(WorkoutID(rawValue: try entry.decode(column: "workout_id", as: UUID.self)))
        }
        return try zip(rows, ids).map { row, id in
            let byWeek = weeks[id] ?? [:]
            return CatalogProgram(
                id: ProgramID(rawValue: id),
                title: try row.decode(column: "title", as: String.self),
                description: try row.decode(column: "description", as: String.self),
                level: FitnessLevel(rawValue: try row.decode(column: "level", as: String.self)) ?? .beginner,
                isPremium: try row.decode(column: "is_premium", as: Bool.self),
                weeks: byWeek.keys.sorted().map { byWeek[$0] ?? [] }
            )
        }
    }
}

/// Free text turned into safe search syntax: words only (letters and digits), prefix-matched, all required.
struct SearchTerms: Sendable {
    let words: [String]

    init?(_ text: String) {
        let words = text.lowercased().split { !$0.isLetter && !$0.isNumber }.prefix(8).map(String.init)
        guard !words.isEmpty else { return nil }
        self.words = words
    }

    /// SQLite FTS5: `"word"*` for each word (implicit AND).
    var fts5: String { words.map { "\"\($0)\"*" }.joined(separator: " ") }
    /// PostgreSQL: `word:* & word:*`.
    var tsquery: String { words.map { "\($0):*" }.joined(separator: " & ") }
}
