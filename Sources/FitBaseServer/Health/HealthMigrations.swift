import FitBaseCore
import Foundation
import SQLKit

/// `health_samples`: one row per HealthKit sample. The id (HealthKit's UUID), owner, type and time bounds are in
/// clear for indexing; everything else is one AES-256-GCM ciphertext under the owner's data key (`key_id` names it).
struct CreateHealthSamples: Migration {
    let name = "2026-11-22.health.samples"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "health_samples")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("type", type: .text, .notNull)
            .column("start_at", type: engine.instant, .notNull)
            .column("end_at", type: engine.instant)
            .column("key_id", type: .text, .notNull)
            .column("sealed", type: engine.bytes, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "health_samples_user_type_start").on("health_samples")
            .column("user_id").column("type").column("start_at").run()
    }
}

/// `health_audit_log`: every read, write, delete, export and sync of health data, hash-chained. It has no foreign
/// key: entries outlive the account they name (they hold its id and counts, never health values). Replaced by the
/// per-user chains of ``ChainAuditPerUser``.
struct CreateHealthAuditLog: Migration {
    let name = "2026-11-22.health.audit"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "health_audit_log")
            .column("seq", type: .bigint, .primaryKey(autoIncrement: false))
            .column("at", type: engine.instant, .notNull)
            .column("actor_id", type: engine.uuid)
            .column("subject_id", type: engine.uuid, .notNull)
            .column("action", type: .text, .notNull)
            .column("resource", type: .text, .notNull)
            .column("count", type: .int, .notNull)
            .column("request_id", type: .text)
            .column("outcome", type: .text, .notNull)
            .column("prev_hash", type: .text, .notNull)
            .column("hash", type: .text, .notNull)
            .run()
        try await database.create(index: "health_audit_log_subject").on("health_audit_log").column("subject_id").column("seq").run()
    }
}

/// `health_rollups`: per user, type and 15-minute slot, the totals of the samples that count by their start
/// (``HealthSlotTotals``), sealed under the user's data key like the samples themselves. A summary over a year of
/// minute-level heart rate reads ~35,000 of these instead of 525,600 samples.
///
/// `health_rollups_pending`: users whose samples were stored before rollups existed; their rollups are built from the
/// samples on their next summary.
struct CreateHealthRollups: Migration {
    let name = "2026-11-23.health.rollups"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "health_rollups")
            .ownerColumn(engine)
            .column("type", type: .text, .notNull)
            .column("slot", type: .bigint, .notNull)
            .column("key_id", type: .text, .notNull)
            .column("sealed", type: engine.bytes, .notNull)
            .column("stale", type: engine.boolean, .notNull)
            .primaryKey("user_id", "type", "slot")
            .run()
        try await database.create(table: "health_rollups_pending")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .run()
        try await database.raw("INSERT INTO health_rollups_pending (user_id) SELECT DISTINCT user_id FROM health_samples").run()
    }
}

/// Health samples carry their own feed entries (``SyncFeed/rowFeeds``): `seq`, `version` and `updated_at` columns,
/// unique by (`user_id`, `seq`). Each stored sample's live `sync_changes` row moves onto the sample; tombstones stay.
struct MoveHealthSampleFeedEntries: Migration {
    let name = "2026-11-24.health.feed-entries-on-rows"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.raw(#"ALTER TABLE "health_samples" ADD COLUMN "seq" BIGINT NOT NULL DEFAULT 0"#).run()
        try await database.raw(#"ALTER TABLE "health_samples" ADD COLUMN "version" BIGINT NOT NULL DEFAULT 1"#).run()
        try await database.alter(table: "health_samples").column("updated_at", type: engine.instant).run()
        try await database.update("health_samples").set(SQLIdentifier("updated_at"), to: SQLIdentifier("created_at")).run()
        // Feed record ids are lower-case UUIDs; SQLite keeps UUID columns as upper-case text.
        let recordID = engine == .postgres ? #""health_samples"."id"::text"# : #"lower("health_samples"."id")"#
        try await database.raw("""
            UPDATE "health_samples" SET "seq" = "c"."seq", "version" = "c"."version", "updated_at" = "c"."updated_at"
            FROM "sync_changes" AS "c"
            WHERE "c"."user_id" = "health_samples"."user_id" AND "c"."collection" = \(bind: SyncCollection.healthSamples.rawValue)
            AND "c"."record_id" = \(unsafeRaw: recordID) AND "c"."deleted" = \(bind: false)
            """).run()
        // A sample without a live entry (none is expected) gets one now, so every stored sample is in the feed.
        let orphans = try await database.select().columns("user_id", "id").from("health_samples").where("seq", .equal, 0)
            .orderBy("user_id").orderBy("start_at").all()
        for (user, rows) in Dictionary(grouping: try orphans.map { (try $0.decode(column: "user_id", as: UUID.self), try $0.decode(column: "id", as: UUID.self)) }, by: \.0) {
            var seq = try await SyncFeed.reserve(rows.count, of: UserID(rawValue: user), on: database)
            for (_, id) in rows {
                try await database.update("health_samples").set("seq", to: seq).where("id", .equal, id).run()
                seq += 1
            }
        }
        try await database.delete(from: "sync_changes").where("collection", .equal, SyncCollection.healthSamples.rawValue)
            .where("deleted", .equal, false).run()
        try await database.create(index: "health_samples_user_seq").unique().on("health_samples").column("user_id").column("seq").run()
    }
}

/// One chain per user instead of one for the server (appends of different users no longer wait for each other):
/// `audit_entries` keyed by (subject, seq), `audit_heads` holding each chain's last link (its row is what appends
/// of one user take turns on) and `audit_digests`, the chains' heads signed with the audit key (``AuditDigests``).
/// The single chain of earlier versions is checked, then re-chained per user; one found broken is not re-signed but
/// kept as `health_audit_log_legacy`, which `fitbase audit verify` then reports.
struct ChainAuditPerUser: Migration {
    let name = "2026-11-24.audit.per-user-chains"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "audit_entries")
            .column("subject_id", type: engine.uuid, .notNull)
            .column("seq", type: .bigint, .notNull)
            .column("at", type: engine.instant, .notNull)
            .column("actor_id", type: engine.uuid)
            .column("action", type: .text, .notNull)
            .column("resource", type: .text, .notNull)
            .column("count", type: .int, .notNull)
            .column("request_id", type: .text)
            .column("client_request_id", type: .text)
            .column("outcome", type: .text, .notNull)
            .column("prev_hash", type: .text, .notNull)
            .column("hash", type: .text, .notNull)
            .primaryKey("subject_id", "seq")
            .run()
        try await database.create(table: "audit_heads")
            .column("subject_id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("seq", type: .bigint, .notNull)
            .column("hash", type: .text, .notNull)
            .column("digested_seq", type: .bigint, .notNull)
            .run()
        try await database.create(table: "audit_digests")
            .column("subject_id", type: engine.uuid, .notNull)
            .column("seq", type: .bigint, .notNull)
            .column("hash", type: .text, .notNull)
            .column("at", type: engine.instant, .notNull)
            .column("key_id", type: .text, .notNull)
            .column("mac", type: .text, .notNull)
            .primaryKey("subject_id", "seq")
            .run()

        let rows = try await database.select().columns(AuditLog.legacyColumns).from("health_audit_log").orderBy("seq").all()
        let legacy = try rows.map(AuditLog.legacyEntry)
        if AuditChain.firstLegacyBreak(in: legacy) != nil {
            try await database.drop(index: "health_audit_log_subject").run()
            try await database.raw("ALTER TABLE health_audit_log RENAME TO health_audit_log_legacy").run()
            if engine == .postgres { try await database.raw("ALTER INDEX health_audit_log_pkey RENAME TO health_audit_log_legacy_pkey").run() }
            return
        }
        var heads: [UUID: (seq: Int64, hash: String)] = [:]
        for old in legacy {
            let head = heads[old.subjectID] ?? (0, AuditChain.genesis)
            var entry = old
            entry.seq = head.seq + 1
            entry.prevHash = head.hash
            entry.hash = AuditChain.hash(of: entry)
            try await AuditLog.insert(entry, on: database)
            heads[entry.subjectID] = (entry.seq, entry.hash)
        }
        for (subject, head) in heads {
            try await database.insert(into: "audit_heads").columns("subject_id", "seq", "hash", "digested_seq")
                .values(SQLBind(subject), SQLBind(head.seq), SQLBind(head.hash), SQLBind(Int64(0))).run()
        }
        try await database.drop(table: "health_audit_log").run()
    }
}

/// `health_sample_counts`: each account's number of stored health samples, counted from the rows already there.
struct CreateHealthSampleCounts: Migration {
    let name = "2026-11-25.health.create-health-sample-counts"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "health_sample_counts")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("count", type: .bigint, .notNull)
            .run()
        try await database.raw("INSERT INTO health_sample_counts (user_id, count) SELECT user_id, COUNT(*) FROM health_samples GROUP BY user_id").run()
    }
}

/// `audit_checkpoints` (signed statements of every chain's head, see ``AuditCheckpoint``) and `audit_digests.prev_mac`
/// (each digest's link to the one before it).
struct AddAuditCheckpoints: Migration {
    let name = "2026-11-25.audit.checkpoints-and-chained-digests"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "audit_digests").column("prev_mac", type: .text).run()
        try await database.create(table: "audit_checkpoints")
            .column("at", type: engine.instant, .primaryKey(autoIncrement: false))
            .column("document", type: engine.bytes, .notNull)
            .run()
    }
}

/// SQLite: an entry appended at its chain's head position moves the head's hash itself (a trigger), so an append is
/// two statements (claim the position, insert the entry) instead of three. PostgreSQL already inserts the entry and
/// sets the hash in one statement (``AuditLog``). Only the entry at the head's position moves it: of a run of entries
/// inserted at once, the last.
struct MoveAuditHeadsWithTheirEntries: Migration {
    let name = "2026-11-27.audit.heads-move-with-entries"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard engine == .sqlite else { return }
        try await database.raw(
            """
            CREATE TRIGGER "audit_entries_move_head" AFTER INSERT ON "audit_entries" BEGIN
            UPDATE "audit_heads" SET "hash" = NEW."hash" WHERE "subject_id" = NEW."subject_id" AND "seq" = NEW."seq"; END
            """
        ).run()
    }
}

/// PostgreSQL: a chain's head keeps the hash its last entry followed (`prev_hash`), so one statement can move the head,
/// chain the new entry from the head's own hash and insert the entry with both hashes (``AuditLog``): an append in one
/// round trip instead of two, with no read of the head by the instance first. Heads written before keep `NULL` until
/// their next append; nothing reads the column but that statement's `RETURNING`.
struct AddAuditHeadPreviousHash: Migration {
    let name = "2026-12-07.audit.head-previous-hash"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard engine == .postgres else { return }
        try await database.alter(table: "audit_heads").column("prev_hash", type: .text).run()
    }
}

/// PostgreSQL: `fitbase_audit_append(…)` appends a batch of entries of any chains in one statement, each chained from
/// its head exactly as ``AuditLog``'s one-entry statement chains it (the head moves one position on and takes the hash
/// of its own last hash and the entry's canonical JSON parts; the entry keeps both hashes), in the order given (the
/// callers' head order). One round trip for the reads of many users that one audit commit carries, where a statement
/// per chain made the instance's audit writer the limit of every audited read. Arguments: one array per column.
struct AddAuditAppendFunction: Migration {
    let name = "2026-12-07.audit.append-function"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard engine == .postgres else { return }
        let genesis = "'\(AuditChain.genesis)'"
        func hash(previous: String, seq: String) -> String {
            "encode(sha256(convert_to(\(previous), 'UTF8') || befores[i] || convert_to(\(previous), 'UTF8') || betweens[i] || convert_to(\(seq), 'UTF8') || afters[i]), 'hex')"
        }
        try await database.raw(
            """
            CREATE OR REPLACE FUNCTION "fitbase_audit_append"(
                subjects uuid[], befores bytea[], betweens bytea[], afters bytea[], ats timestamptz[], actors uuid[], actions text[],
                resources text[], counts bigint[], request_ids text[], client_request_ids text[], outcomes text[]
            ) RETURNS void LANGUAGE plpgsql AS $fn$
            DECLARE
                i integer;
                head record;
            BEGIN
                FOR i IN 1 .. coalesce(array_length(subjects, 1), 0) LOOP
                    INSERT INTO "audit_heads" AS h ("subject_id", "seq", "hash", "prev_hash", "digested_seq")
                    VALUES (subjects[i], 1, \(unsafeRaw: hash(previous: genesis, seq: "'1'")), \(unsafeRaw: genesis), 0)
                    ON CONFLICT ("subject_id") DO UPDATE SET "seq" = h."seq" + 1, "prev_hash" = h."hash",
                        "hash" = \(unsafeRaw: hash(previous: #"h."hash""#, seq: #"(h."seq" + 1)::text"#))
                    RETURNING h."seq", h."prev_hash", h."hash" INTO head;
                    INSERT INTO "audit_entries" ("subject_id", "seq", "at", "actor_id", "action", "resource", "count", "request_id",
                        "client_request_id", "outcome", "prev_hash", "hash")
                    VALUES (subjects[i], head."seq", ats[i], actors[i], actions[i], resources[i], counts[i], request_ids[i],
                        client_request_ids[i], outcomes[i], head."prev_hash", head."hash");
                END LOOP;
            END
            $fn$
            """
        ).run()
    }
}
