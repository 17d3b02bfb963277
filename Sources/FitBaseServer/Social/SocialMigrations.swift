import FitBaseCore
import Foundation
import SQLKit

/// `users.photo_url`: the picture group leaderboards show.
struct AddPhotoURL: Migration {
    let name = "2026-11-22.accounts.photo-url"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "users").column("photo_url", type: .text).run()
    }
}

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

/// `challenges` (one per group, type and week), `challenge_entries` (a member's value and rank, with their display
/// name denormalized as the seed does), `challenge_workouts` (which workout logs counted, once each per challenge, so
/// a re-sent or edited log never counts twice and a deleted one is taken back) and `notifications`.
struct CreateChallenges: Migration {
    let name = "2026-11-22.social.challenges"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "challenges")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("group_id", type: engine.uuid, .notNull, .references("groups", "id", onDelete: .cascade))
            .column("type", type: .text, .notNull)
            .column("week_start", type: .text, .notNull)
            .column("starts_at", type: engine.instant, .notNull)
            .column("ends_at", type: engine.instant, .notNull)
            .column("closed_at", type: engine.instant)
            .column("created_at", type: engine.instant, .notNull)
            .unique("group_id", "type", "week_start")
            .run()
        try await database.create(table: "challenge_entries")
            .column("challenge_id", type: engine.uuid, .notNull, .references("challenges", "id", onDelete: .cascade))
            .ownerColumn(engine)
            .column("value", type: .int, .notNull)
            .column("reached_at", type: engine.instant, .notNull)
            .column("rank", type: .int, .notNull)
            .column("display_name", type: .text)
            .column("photo_url", type: .text)
            .column("updated_at", type: engine.instant, .notNull)
            .primaryKey("challenge_id", "user_id")
            .run()
        try await database.create(table: "challenge_workouts")
            .column("challenge_id", type: engine.uuid, .notNull, .references("challenges", "id", onDelete: .cascade))
            .column("workout_log_id", type: engine.uuid, .notNull)
            .ownerColumn(engine)
            .column("local_date", type: .text, .notNull)
            .primaryKey("challenge_id", "workout_log_id")
            .run()
        try await database.create(index: "challenge_workouts_log").on("challenge_workouts").column("workout_log_id").run()
        try await database.create(table: "notifications")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("group_id", type: engine.uuid)
            .column("type", type: .text, .notNull)
            .column("message", type: .text, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .column("read_at", type: engine.instant)
            .column("expires_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "notifications_user").on("notifications").column("user_id").column("created_at").run()
    }
}

/// Invites that end: `group_invites.id` (how the admin names one without its token), `expires_at` (7 days after
/// creation for the invites made before this), `max_uses` (none: any number) and `use_count`.
struct AddInviteLimits: Migration {
    let name = "2026-11-24.social.invite-limits"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "group_invites").column("id", type: engine.uuid).run()
        try await database.alter(table: "group_invites").column("expires_at", type: engine.instant).run()
        try await database.alter(table: "group_invites").column("max_uses", type: .int).run()
        try await database.alter(table: "group_invites").column("use_count", type: .int, .notNull, .default(SQLLiteral.numeric("0"))).run()
        let existing = try await database.select().columns("token_hash", "created_at").from("group_invites").all()
        for row in existing {
            let createdAt = try row.decode(column: "created_at", as: Date.self)
            try await database.update("group_invites").set("id", to: UUID.random()).set("expires_at", to: createdAt.addingTimeInterval(GroupStore.inviteLifetime))
                .where("token_hash", .equal, try row.decode(column: "token_hash", as: String.self)).run()
        }
        try await database.create(index: "group_invites_id").unique().on("group_invites").column("id").run()
        try await database.create(index: "group_invites_group").on("group_invites").column("group_id").column("created_at").run()
    }
}

/// `group_members.joined_event_id`: the id of the event a member's joining wrote; their replay of the group's events
/// starts after it (ids order events whichever instance wrote them; the instances' clocks need not agree).
struct AddJoinedEventID: Migration {
    let name = "2026-11-25.social.add-joined-event-id"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.raw(#"ALTER TABLE "group_members" ADD COLUMN "joined_event_id" BIGINT"#).run()
    }
}
