import SQLKit

/// `events`: what realtime subscribers are told, each with a durable, increasing id, written in the transaction of
/// its cause (an outbox). Topics are `group:<id>` (its leaderboards) and `user:<id>` (their notifications).
struct CreateEvents: Migration {
    let name = "2026-11-22.realtime.events"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "events")
            .column("id", type: engine == .postgres ? .bigint : .int, .primaryKey(autoIncrement: true))
            .column("topic", type: .text, .notNull)
            .column("type", type: .text, .notNull)
            .column("data", type: .text, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "events_topic").on("events").column("topic").column("id").run()
    }
}

/// PostgreSQL: events get their ids at commit. An event is written to `events_pending` (unlogged: its rows never
/// outlive their transaction, so a crash loses nothing that was committed) and a deferred constraint trigger, run at
/// the transaction's commit, takes the deployment's event lock, moves the transaction's pending events into `events`
/// in the order they were written (``EventLog/append(topic:type:data:now:on:)``) and notifies the instances' listeners.
///
/// The lock orders events across instances (ids commit in order, so "after id N" never misses one). Taken by the
/// instance in the event's statement, it was held from that statement through the client's `COMMIT` — a round trip to
/// the instance, which under load, or throttled by a CPU quota, kept every event-writing transaction of the deployment
/// waiting (scale-out stopped at 1.6× with three instances). Taken by the trigger, it is held for the commit alone.
///
/// Only a transaction's own pending rows are ever visible to it: the trigger deletes them before their commit, and
/// other transactions' rows are uncommitted. So "every row of `events_pending`" is "this transaction's".
struct PublishEventsAtCommit: Migration {
    let name = "2026-12-07.realtime.events-published-at-commit"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard engine == .postgres else { return }
        try await database.raw(
            """
            CREATE UNLOGGED TABLE "events_pending" (
                "position" bigint GENERATED ALWAYS AS IDENTITY,
                "topic" text NOT NULL, "type" text NOT NULL, "data" text NOT NULL, "created_at" timestamptz NOT NULL
            )
            """
        ).run()
        try await database.raw(
            """
            CREATE FUNCTION "fitbase_publish_pending_events"() RETURNS void LANGUAGE plpgsql AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM "events_pending") THEN
                    PERFORM pg_advisory_xact_lock(\(unsafeRaw: String(EventLog.lockKey)));
                    WITH "moved" AS (DELETE FROM "events_pending" RETURNING "position", "topic", "type", "data", "created_at")
                    INSERT INTO "events" ("topic", "type", "data", "created_at")
                        SELECT "topic", "type", "data", "created_at" FROM "moved" ORDER BY "position";
                    PERFORM pg_notify('\(unsafeRaw: EventLog.channel)', '');
                END IF;
            END $$
            """
        ).run()
        try await database.raw(
            """
            CREATE FUNCTION "fitbase_events_pending_publish"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM "fitbase_publish_pending_events"();
                RETURN NULL;
            END $$
            """
        ).run()
        try await database.raw(
            """
            CREATE CONSTRAINT TRIGGER "events_pending_publish" AFTER INSERT ON "events_pending"
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "fitbase_events_pending_publish"()
            """
        ).run()
    }
}

/// PostgreSQL: each pending event is published by its own row's trigger, found by its position (now the key), instead
/// of every trigger call looking through the whole `events_pending` table. Every event-writing transaction inserts a
/// row there and deletes it at commit, so between two vacuums the table is mostly dead rows, and reading it whole cost
/// each commit ~0.5 ms while holding the event lock. A row already moved by ``EventLog/appendNow(topic:type:data:now:on:)``
/// (which publishes its transaction's pending events at once) is not there any more: its trigger inserts nothing.
/// Deferred row triggers fire in the order their rows were inserted, so a transaction's events keep their order.
struct PublishEachPendingEventByPosition: Migration {
    let name = "2026-12-07.realtime.publish-each-pending-event-by-position"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard engine == .postgres else { return }
        try await database.raw(#"ALTER TABLE "events_pending" ADD PRIMARY KEY ("position")"#).run()
        try await database.raw(
            """
            CREATE OR REPLACE FUNCTION "fitbase_events_pending_publish"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(\(unsafeRaw: String(EventLog.lockKey)));
                WITH "moved" AS (DELETE FROM "events_pending" WHERE "position" = NEW."position" RETURNING "topic", "type", "data", "created_at")
                INSERT INTO "events" ("topic", "type", "data", "created_at") SELECT "topic", "type", "data", "created_at" FROM "moved";
                IF FOUND THEN
                    PERFORM pg_notify('\(unsafeRaw: EventLog.channel)', '');
                END IF;
                RETURN NULL;
            END $$
            """
        ).run()
    }
}
