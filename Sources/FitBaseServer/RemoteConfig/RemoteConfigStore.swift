import FitBaseCore
import Foundation
import SQLKit
import Synchronization

/// Remote config flags (`remote_config_flags`) and testers' overrides (`remote_config_overrides`).
///
/// Every instance keeps all flags in memory under the `remote-config` generation (``CacheGenerations``): each change
/// bumps it in its transaction, so the next `GET /v1/config` on any instance loads the flags again (PostgreSQL: exact
/// across instances; SQLite: a change by another process, the `fitbase config` CLI, within a second).
struct RemoteConfigStore: Sendable {
    let database: Database
    private let cache: Cache

    init(database: Database) {
        self.database = database
        self.cache = Cache(database: database)
    }

    /// Every flag, by key, as the database holds it now.
    func flags() async throws -> [ConfigFlag] {
        try await cache.flags()
    }

    /// The flag with `key`, as the database holds it now.
    func flag(_ key: String) async throws -> ConfigFlag? {
        try await flags().first { $0.key == key }
    }

    /// When each flag last changed and who changed it (the console and `fitbase config list` show it).
    func changes() async throws -> [String: (at: Date, by: UserID)] {
        try await database.withConnection { db in
            var changes: [String: (at: Date, by: UserID)] = [:]
            for row in try await db.select().columns("key", "updated_at", "updated_by").from("remote_config_flags").all() {
                changes[try row.decode(column: "key", as: String.self)] = (
                    try row.decode(column: "updated_at", as: Date.self), UserID(rawValue: try row.decode(column: "updated_by", as: UUID.self))
                )
            }
            return changes
        }
    }

    // MARK: Writing (in the caller's transaction, which records who did it)

    /// Inserts or replaces `flag` without touching its overrides (``RemoteConfigRules`` refuses a flag whose testers'
    /// values are of another kind, so a kind changes only once they are removed); bumps the generation.
    static func save(_ flag: ConfigFlag, by admin: UserID, now: Date, on db: any SQLDatabase) async throws {
        let conditions = flag.conditions
        try await db.insert(into: "remote_config_flags")
            .columns(
                "key", "kind", "value", "default_value", "rollout_basis_points", "tiers", "app_versions", "platforms", "locales", "summary",
                "is_public", "updated_at", "updated_by"
            )
            .values(
                SQLBind(flag.key), SQLBind(flag.kind.rawValue), SQLBind(flag.value.description), SQLBind(flag.defaultValue.description),
                SQLBind(flag.rolloutBasisPoints), SQLBind(conditions.tiers.map(\.rawValue).sorted().joined(separator: ",")),
                SQLBind(conditions.appVersions?.description), SQLBind(conditions.platforms.map(\.rawValue).sorted().joined(separator: ",")),
                SQLBind(conditions.locales.joined(separator: ",")), SQLBind(flag.summary), SQLBind(flag.isPublic), SQLBind(now),
                SQLBind(admin.rawValue)
            )
            .onConflict(with: ["key"]) { update in
                update.set(excludedValueOf: "kind").set(excludedValueOf: "value").set(excludedValueOf: "default_value")
                    .set(excludedValueOf: "rollout_basis_points").set(excludedValueOf: "tiers").set(excludedValueOf: "app_versions")
                    .set(excludedValueOf: "platforms").set(excludedValueOf: "locales").set(excludedValueOf: "summary")
                    .set(excludedValueOf: "is_public").set(excludedValueOf: "updated_at").set(excludedValueOf: "updated_by")
            }
            .run()
        try await CacheGenerations.bump(.remoteConfig, on: db)
    }

    /// Sets `user`'s value of the flag `key` (`nil`: removes it); bumps the generation.
    static func setOverride(_ key: String, user: UserID, value: ConfigValue?, by admin: UserID, now: Date, on db: any SQLDatabase) async throws {
        if let value {
            try await db.insert(into: "remote_config_overrides").columns("flag_key", "user_id", "value", "updated_at")
                .values(SQLBind(key), SQLBind(user.rawValue), SQLBind(value.description), SQLBind(now))
                .onConflict(with: ["flag_key", "user_id"]) { $0.set(excludedValueOf: "value").set(excludedValueOf: "updated_at") }
                .run()
        } else {
            try await db.delete(from: "remote_config_overrides").where("flag_key", .equal, key).where("user_id", .equal, user.rawValue).run()
        }
        try await db.update("remote_config_flags").set("updated_at", to: SQLBind(now)).set("updated_by", to: SQLBind(admin.rawValue))
            .where("key", .equal, key).run()
        try await CacheGenerations.bump(.remoteConfig, on: db)
    }

    /// Deletes the flag `key` and its overrides; whether there was one. Bumps the generation.
    static func delete(_ key: String, on db: any SQLDatabase) async throws -> Bool {
        try await db.delete(from: "remote_config_overrides").where("flag_key", .equal, key).run()
        let deleted = try await db.delete(from: "remote_config_flags").where("key", .equal, key).returning("key").all().count
        try await CacheGenerations.bump(.remoteConfig, on: db)
        return deleted > 0
    }

    /// Every flag with its overrides, read on `db`.
    static func load(on db: any SQLDatabase) async throws -> [ConfigFlag] {
        var overrides: [String: [UserID: String]] = [:]
        for row in try await db.select().columns("flag_key", "user_id", "value").from("remote_config_overrides").all() {
            overrides[try row.decode(column: "flag_key", as: String.self), default: [:]][UserID(rawValue: try row.decode(column: "user_id", as: UUID.self))] =
                try row.decode(column: "value", as: String.self)
        }
        return try await db.select()
            .columns(
                "key", "kind", "value", "default_value", "rollout_basis_points", "tiers", "app_versions", "platforms", "locales", "summary",
                "is_public")
            .from("remote_config_flags").orderBy("key").all()
            .compactMap { row -> ConfigFlag? in
                let key = try row.decode(column: "key", as: String.self)
                // Rows are written only from checked flags; one that no longer reads (a kind of a later build) is skipped.
                guard let kind = ConfigValueKind(rawValue: try row.decode(column: "kind", as: String.self)),
                    let value = ConfigValue.parse(try row.decode(column: "value", as: String.self), as: kind),
                    let defaultValue = ConfigValue.parse(try row.decode(column: "default_value", as: String.self), as: kind)
                else { return nil }
                let list = { (column: String) throws -> [String] in
                    try row.decode(column: column, as: String.self).split(separator: ",").map(String.init)
                }
                let conditions = ConfigConditions(
                    tiers: Set(try list("tiers").compactMap(SubscriptionTier.init(rawValue:))),
                    appVersions: try row.decode(column: "app_versions", as: String?.self).flatMap(VersionRange.init),
                    platforms: Set(try list("platforms").compactMap(ConfigPlatform.init(rawValue:))), locales: try list("locales")
                )
                return ConfigFlag(
                    key: key, value: value, defaultValue: defaultValue,
                    rolloutBasisPoints: try row.decode(column: "rollout_basis_points", as: Int.self), conditions: conditions,
                    overrides: (overrides[key] ?? [:]).compactMapValues { ConfigValue.parse($0, as: kind) },
                    summary: try row.decode(column: "summary", as: String.self), isPublic: try row.decode(column: "is_public", as: Bool.self)
                )
            }
    }

    /// The flags as this instance holds them, under the generation they were read at.
    final class Cache: Sendable {
        private let database: Database
        private let state = Mutex<(generation: Int64, flags: [ConfigFlag])?>(nil)

        init(database: Database) {
            self.database = database
        }

        func flags() async throws -> [ConfigFlag] {
            // The generation is taken before the rows are read: rows newer than it are kept under it at worst, never
            // older rows under a newer generation.
            let generation = try await database.generations.current(.remoteConfig, on: database)
            if let kept = state.withLock({ $0 }), kept.generation >= generation { return kept.flags }
            let flags = try await database.withConnection { db in try await RemoteConfigStore.load(on: db) }
            state.withLock { state in
                if state.map({ $0.generation < generation }) ?? true { state = (generation, flags) }
            }
            return flags
        }
    }
}
