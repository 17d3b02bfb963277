import FitBaseCore
import Foundation
import NIOCore
import SQLKit
import Synchronization

/// Who an event is for: a user (their notifications and sync nudges), a group (its leaderboards) or a session (its
/// end, which closes its streams).
enum EventTopic: Hashable, Sendable {
    case user(UserID)
    case group(GroupID)
    case session(SessionID)

    /// The topic as stored: `user:<id>`, `group:<id>` or `session:<id>`.
    var name: String {
        switch self {
        case .user(let user): "user:\(user)"
        case .group(let group): "group:\(group)"
        case .session(let session): "session:\(session)"
        }
    }

    /// The topic a stored name names; `nil` for anything else.
    init?(named name: String) {
        let parts = name.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let id = String(parts[1])
        switch parts[0] {
        case "user": guard let user = UserID(id) else { return nil }; self = .user(user)
        case "group": guard let group = GroupID(id) else { return nil }; self = .group(group)
        case "session": guard let session = SessionID(id) else { return nil }; self = .session(session)
        default: return nil
        }
    }
}

/// A topic a subscriber may read, and from when: a group's events only from the moment the member joined, so a new
/// member (or one who left and came back) never replays what the group said before.
struct EventSubscription: Sendable, Equatable {
    var topic: EventTopic
    /// Events created before this instant are not for the subscriber; `nil`: all of the topic's events. (Memberships
    /// from before join event ids were kept; ``afterEventID`` otherwise.)
    var since: Date?
    /// Events up to this id are not for the subscriber (the event of their joining: ids order events across instances,
    /// clocks need not agree).
    var afterEventID: Int64? = nil
}

/// One event as stored and streamed.
struct RealtimeEvent: Sendable, Equatable {
    let id: Int64
    let topic: String
    let type: String
    /// A JSON document.
    let data: String
    /// The event as a stream sends it (`id:`, `event:`, `data:`), made once and shared by every stream it goes to.
    let frame: ByteBuffer

    init(id: Int64, topic: String, type: String, data: String) {
        (self.id, self.topic, self.type, self.data) = (id, topic, type, data)
        frame = ByteBuffer(string: "id: \(id)\nevent: \(type)\ndata: \(data)\n\n")
    }

    /// An event as read from `events` (`id`, `topic`, `type`, `data`).
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: Int64.self), topic: try row.decode(column: "topic", as: String.self),
            type: try row.decode(column: "type", as: String.self), data: try row.decode(column: "data", as: String.self)
        )
    }
}

/// Appends and reads events. Events on PostgreSQL get their ids under a transaction-level advisory lock held to the
/// commit, so events commit in id order and a subscriber reading "after id N" can never miss one that commits late
/// with a smaller id; the lock is taken at commit (``PublishEventsAtCommit``).
enum EventLog {
    /// How long events are kept for replay (`Last-Event-ID`).
    static let retention: TimeInterval = 48 * 3600

    /// Event data as JSON: one encoder, shared by every event, instead of one made per event.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private static let insertEvent = StoredStatement(#"INSERT INTO "events" ("topic", "type", "data", "created_at") VALUES (?, ?, ?, ?) RETURNING "id""#)

    /// Appends an event in the transaction of its cause. Once it commits, the streams that may want it are woken: on
    /// SQLite this instance's (an after-commit hook); on PostgreSQL every instance's, this one included, by `NOTIFY`,
    /// delivered at commit to each instance's ``EventListenerService`` (one notification per transaction, however many
    /// events it wrote).
    ///
    /// On PostgreSQL the event waits in `events_pending` (unlogged, seen by its own transaction only) and is given its
    /// id at commit, by a deferred trigger that takes the deployment's event lock, moves the transaction's pending
    /// events into `events` in the order they were appended and notifies (``PublishEventsAtCommit``): events still
    /// commit in id order, and the lock every event-writing transaction waits for is held for the commit alone,
    /// never across a round trip to an instance (a busy or CPU-throttled one made every writer of the deployment wait).
    /// `now` is the event's creation time (the retention purge reads it).
    static func append(topic: EventTopic, type: String, data: some Encodable, now: Date, on db: any SQLDatabase) async throws {
        let text = try Self.json(data)
        if db.dialect.name == "postgresql" {
            try await insertPending(topic.name, type, text, now).run(on: db)
            return
        }
        try await insertSQLite(topic: topic, type: type, text: text, now: now, on: db)
    }

    /// ``append(topic:type:data:now:on:)`` for an event whose id its caller needs now (a membership's, where a member's
    /// replay of the group starts): on PostgreSQL the event lock is taken at once and held to the commit, the
    /// transaction's pending events are given their ids first, so the order of its events stays the order of its calls.
    @discardableResult
    static func appendNow(topic: EventTopic, type: String, data: some Encodable, now: Date, on db: any SQLDatabase) async throws -> Int64 {
        let text = try Self.json(data)
        guard db.dialect.name == "postgresql" else { return try await insertSQLite(topic: topic, type: type, text: text, now: now, on: db) }
        try await publishPending().run(on: db)
        // The lock (held already), the row and the notification in one round trip. The notification is heard by this
        // instance's listener too: waking its streams here as well would make each read twice.
        guard let row = try await lockInsertAndNotify(lockKey, topic.name, type, text, now).first(on: db) else { throw EventLogError.noEventID }
        return try row.decode(column: "id", as: Int64.self)
    }

    /// SQLite: the row, and this instance's streams woken once the transaction commits.
    @discardableResult
    private static func insertSQLite(topic: EventTopic, type: String, text: String, now: Date, on db: any SQLDatabase) async throws -> Int64 {
        guard let row = try await insertEvent(topic.name, type, text, now).first(on: db) else { throw EventLogError.noEventID }
        let id = try row.decode(column: "id", as: Int64.self)
        if let hooks = TransactionHooks.current, let hub = hooks.eventHub {
            hooks.afterCommit(key: "events") { hub.publish() }
        }
        return id
    }

    private static let insertPending = StoredStatement(
        postgresOnly: #"INSERT INTO "events_pending" ("topic", "type", "data", "created_at") VALUES ($1, $2, $3, $4)"#
    )

    /// Gives the transaction's pending events their ids now (``PublishEventsAtCommit``), under the event lock.
    private static let publishPending = StoredStatement(postgresOnly: #"SELECT "fitbase_publish_pending_events"()"#)

    /// `data` as the event's JSON. An object of one plain string (a sync nudge's cursor: one with every write) is
    /// written here, as the encoder would write it; anything else by the encoder.
    private static func json(_ data: some Encodable) throws -> String {
        if let fields = data as? [String: String], fields.count == 1, let (key, value) = fields.first, key.isPlainJSONText, value.isPlainJSONText {
            return #"{"\#(key)":"\#(value)"}"#
        }
        return String(decoding: try encoder.encode(data), as: UTF8.self)
    }

    /// `pg_advisory_xact_lock`, the insert and `pg_notify` (PostgreSQL folds a transaction's identical notifications
    /// into one): the insert reads from the lock, so it runs once the lock is held. What ``PublishEventsAtCommit``'s
    /// trigger does at commit, for an event whose id is wanted before.
    private static let lockInsertAndNotify = StoredStatement(
        postgresOnly: #"WITH "lock" AS (SELECT pg_advisory_xact_lock($1)), "#
            + #""event" AS (INSERT INTO "events" ("topic", "type", "data", "created_at") SELECT $2, $3, $4, $5 FROM "lock" RETURNING "id") "#
            + #"SELECT "id", pg_notify('\#(channel)', '') AS "notified" FROM "event""#
    )

    /// The channel every instance listens on; notifications carry no payload (listeners read the log).
    static let channel = "fitbase_events"

    /// Events of the subscriptions after `id`, oldest first: of each topic, those created since the subscription's
    /// `since`.
    static func events(after id: Int64, for subscriptions: [EventSubscription], limit: Int, on db: any SQLDatabase) async throws -> [RealtimeEvent] {
        guard !subscriptions.isEmpty else { return [] }
        return try await db.select().columns("id", "topic", "type", "data").from("events")
            .where("id", .greaterThan, id)
            .where { readable in
                subscriptions.reduce(readable) { readable, subscription in
                    readable.orWhere { topic in
                        let named = topic.where("topic", .equal, subscription.topic.name)
                        if let first = subscription.afterEventID { return named.where("id", .greaterThan, SQLBind(first)) }
                        guard let since = subscription.since else { return named }
                        return named.where("created_at", .greaterThanOrEqual, SQLBind(since))
                    }
                }
            }
            .orderBy("id").limit(limit).all()
            .map(RealtimeEvent.init(row:))
    }

    /// Events of every topic after `id`, oldest first: what an instance's ``EventHub`` reads once for all its streams.
    static func events(after id: Int64, limit: Int, on db: any SQLDatabase) async throws -> [RealtimeEvent] {
        try await readAll(id, limit).all(on: db).map(RealtimeEvent.init(row:))
    }

    private static let readAll = StoredStatement(#"SELECT "id", "topic", "type", "data" FROM "events" WHERE "id" > ? ORDER BY "id" LIMIT ?"#)

    // MARK: Control events

    /// `membership` (topic `user:<id>`): the user's group changed (`{"groupId": …}` or `{"groupId": null}`). Streams
    /// follow it at once: their group topic changes as the event is read, in order with every other event.
    static let membership = "membership"
    /// `session_ended` (topic `session:<id>`, no data): the session ended; its streams close.
    static let sessionEnded = "session_ended"
    /// Events streams act on themselves and never send to clients.
    static let controlTypes: Set<String> = [membership, sessionEnded]

    struct MembershipChange: Codable, Sendable {
        var groupId: String?
    }

    /// Records that `user` is now in `group` (or in none): written with the membership row's change.
    /// Returns the change's event id: a member's replay of the group's events starts after it.
    @discardableResult
    static func membershipChanged(of user: UserID, to group: GroupID?, now: Date, on db: any SQLDatabase) async throws -> Int64 {
        try await appendNow(topic: .user(user), type: membership, data: MembershipChange(groupId: group?.description), now: now, on: db)
    }

    /// Records that sessions ended (signed out, revoked, reused, or the account deleted): written in the transaction
    /// that ends them, so every instance closes their streams once it commits. The events name only the sessions.
    static func sessionsEnded(_ sessions: [SessionID], now: Date, on db: any SQLDatabase) async throws {
        for session in sessions { try await append(topic: .session(session), type: sessionEnded, data: [String: String](), now: now, on: db) }
    }

    /// Deletes the events that name `user` (their own topic, and boards or notices naming them), with their account.
    static func purge(naming user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "events").where("topic", .equal, EventTopic.user(user).name)
            .orWhere("data", .like, "%\"\(user.description)\"%").run()
    }

    /// The newest id (0 when there is none): where a subscriber without `Last-Event-ID` starts.
    static func latestID(on db: any SQLDatabase) async throws -> Int64 {
        try await db.select().column("id").from("events").orderBy("id", .descending).limit(1).first()?.decode(column: "id", as: Int64.self) ?? 0
    }

    static func purge(before cutoff: Date, database: Database) async throws {
        try await database.transaction { db in try await db.delete(from: "events").where("created_at", .lessThan, cutoff).run() }
    }

    /// The deployment's event lock (`pg_advisory_xact_lock`): "fitevent".
    static let lockKey: Int64 = 0x6669_7465_7665_6e74
}

/// The log did not say which id it gave an event (a replay bound on it would then let a member see the group's past).
enum EventLogError: Error {
    case noEventID
}
