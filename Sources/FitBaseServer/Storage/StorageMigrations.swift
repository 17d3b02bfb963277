import SQLKit

/// `cache_generations`: one row per kind of cached data.
struct CreateCacheGenerations: Migration {
    let name = "2026-11-23.storage.create-cache-generations"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "cache_generations")
            .column("name", type: .text, .primaryKey(autoIncrement: false))
            .column("generation", type: .bigint, .notNull)
            .run()
        for data in CachedData.allCases {
            try await database.insert(into: "cache_generations").columns("name", "generation").values(SQLBind(data.rawValue), SQLBind(0)).run()
        }
    }
}
