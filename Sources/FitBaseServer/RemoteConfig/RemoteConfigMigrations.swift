import SQLKit

/// `remote_config_flags` and `remote_config_overrides` (see ``RemoteConfigStore``), and the `remote-config` row of
/// `cache_generations` every change bumps.
struct CreateRemoteConfig: Migration {
    let name = "2026-11-26.remote-config.create-flags"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "remote_config_flags")
            .column("key", type: .text, .primaryKey(autoIncrement: false))
            .column("kind", type: .text, .notNull)
            .column("value", type: .text, .notNull)
            .column("default_value", type: .text, .notNull)
            .column("rollout_basis_points", type: .int, .notNull)
            .column("tiers", type: .text, .notNull)  // comma-separated, empty: every tier
            .column("app_versions", type: .text)  // a VersionRange, canonical
            .column("platforms", type: .text, .notNull)
            .column("locales", type: .text, .notNull)
            .column("summary", type: .text, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .column("updated_by", type: engine.uuid, .notNull)  // no foreign key: the flag outlives its editor
            .run()
        try await database.create(table: "remote_config_overrides")
            .column("flag_key", type: .text, .notNull, .references("remote_config_flags", "key", onDelete: .cascade))
            .ownerColumn(engine)
            .column("value", type: .text, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .primaryKey("flag_key", "user_id")
            .run()
        try await database.create(index: "remote_config_overrides_user").on("remote_config_overrides").column("user_id").run()
        // A database created by this build has the row already (CreateCacheGenerations inserts every kind).
        try await database.insert(into: "cache_generations").columns("name", "generation")
            .values(SQLBind(CachedData.remoteConfig.rawValue), SQLBind(0))
            .ignoringConflicts(with: ["name"]).run()
    }
}

/// `remote_config_flags.is_public`: whether callers who are not signed in get the flag (``ConfigFlag/isPublic``). Every
/// flag saved before is not: an anonymous answer names no flag until an operator says so.
struct AddRemoteConfigPublic: Migration {
    let name = "2026-11-28.remote-config.add-public"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "remote_config_flags")
            .column("is_public", type: engine.boolean, .notNull, .default(SQLRaw(engine == .postgres ? "false" : "0")))
            .run()
    }
}
