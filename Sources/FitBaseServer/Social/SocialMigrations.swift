import FitBaseCore
import SQLKit

/// `groups` (one admin, at most 10 members, an IANA time zone for its weeks), `group_members` (a user is in at most
/// one group: the user id is the key) and `group_invites` (revocable tokens, stored as SHA-256 only).
struct CreateGroups: Migration {
    let name = "2026-11-22.social.groups"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "groups")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("name", type: .text, .notNull)
            .column("time_zone", type: .text, .notNull)
            .column("created_by", type: engine.uuid)
            .column("member_count", type: .int, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(table: "group_members")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("group_id", type: engine.uuid, .notNull, .references("groups", "id", onDelete: .cascade))
            .column("role", type: .text, .notNull)
            .column("joined_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "group_members_group").on("group_members").column("group_id").column("joined_at").run()
        try await database.create(table: "group_invites")
            .column("token_hash", type: .text, .primaryKey(autoIncrement: false))
            .column("group_id", type: engine.uuid, .notNull, .references("groups", "id", onDelete: .cascade))
            .column("created_by", type: engine.uuid, .notNull, .references("users", "id", onDelete: .cascade))
            .column("created_at", type: engine.instant, .notNull)
            .column("revoked_at", type: engine.instant)
            .run()
    }
}
