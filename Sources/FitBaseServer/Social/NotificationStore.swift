import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// A notification as stored.
struct SocialNotification: Sendable, Equatable {
    var id: NotificationID
    var kind: NotificationKind
    var group: GroupID?
    var message: String
    var createdAt: Date
    var readAt: Date?
}

/// SQL for `notifications`: each lives 7 days; writers add them in the transaction of what caused them.
struct NotificationStore: Sendable {
    let database: Database
    static let lifetime: TimeInterval = 7 * 86_400

    /// Adds a notification, its realtime event (topic `user:<id>`) and its pushes to the user's devices (see
    /// ``PushQueue/notificationAdded(_:kind:to:group:message:now:on:)``): every notification is written here, so every
    /// one is pushed the same way. `about`: the member it names (its event carries their id, so the event goes when
    /// their account does).
    static func add(_ kind: NotificationKind, to user: UserID, group: GroupID?, about: UserID? = nil, message: String, now: Date, on db: any SQLDatabase) async throws {
        let id = NotificationID()
        try await db.insert(into: "notifications").columns("id", "user_id", "group_id", "type", "message", "created_at", "expires_at")
            .values(SQLBind(id.rawValue), SQLBind(user.rawValue), SQLBind(group?.rawValue), SQLBind(kind.rawValue), SQLBind(message), SQLBind(now), SQLBind(now.addingTimeInterval(lifetime)))
            .run()
        try await EventLog.append(
            topic: .user(user), type: "notification",
            data: ["id": id.description, "type": kind.rawValue, "groupId": group?.description, "memberId": about?.description, "message": message], now: now, on: db
        )
        try await PushQueue.notificationAdded(id, kind: kind, to: user, group: group, message: message, now: now, on: db)
    }

    /// A page of the user's live notifications, newest first, and how many are unread.
    func notifications(of user: UserID, now: Date, offset: Int, limit: Int) async throws -> (items: [SocialNotification], unread: Int) {
        try await database.withConnection { db in
            let rows = try await db.select().columns("id", "group_id", "type", "message", "created_at", "read_at").from("notifications")
                .where("user_id", .equal, user.rawValue).where("expires_at", .greaterThan, now)
                .orderBy("created_at", .descending).orderBy("id").offset(offset).limit(limit).all()
            let unread = try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("notifications")
                .where("user_id", .equal, user.rawValue).where("expires_at", .greaterThan, now).where("read_at", .is, SQLLiteral.null)
                .first()?.decode(column: "n", as: Int.self) ?? 0
            let items = try rows.map { row in
                SocialNotification(
                    id: NotificationID(rawValue: try row.decode(column: "id", as: UUID.self)),
                    kind: NotificationKind(rawValue: try row.decode(column: "type", as: String.self)) ?? .newMember,
                    group: try row.decode(column: "group_id", as: UUID?.self).map(GroupID.init(rawValue:)), message: try row.decode(column: "message", as: String.self),
                    createdAt: try row.decode(column: "created_at", as: Date.self), readAt: try row.decode(column: "read_at", as: Date?.self)
                )
            }
            return (items, unread)
        }
    }

    /// Marks one of the user's notifications read; whether it is theirs.
    func markRead(_ id: NotificationID, of user: UserID, now: Date) async throws -> Bool {
        try await database.transaction { db in
            guard try await db.select().column("id").from("notifications").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
                .where("expires_at", .greaterThan, now).first() != nil
            else { return false }
            try await db.update("notifications").set("read_at", to: now).where("id", .equal, id.rawValue).where("read_at", .is, SQLLiteral.null).run()
            return true
        }
    }

    func markAllRead(of user: UserID, now: Date) async throws {
        try await database.transaction { db in
            try await db.update("notifications").set("read_at", to: now).where("user_id", .equal, user.rawValue).where("read_at", .is, SQLLiteral.null).run()
        }
    }
}

/// Notifications in the account export (deletion cascades with the account).
struct NotificationsOwner: InMemoryAccountDataOwner {
    let section = "notifications"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        try await exportRows(of: user, ["type", "message", "created_at", "read_at"], from: "notifications", orderBy: "created_at", on: db) { row in
            [
                "type": try row.decode(column: "type", as: String.self), "message": try row.decode(column: "message", as: String.self),
                "createdAt": try row.decode(column: "created_at", as: Date.self).formatted(.iso8601),
                "readAt": try row.decode(column: "read_at", as: Date?.self)?.formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "notifications").where("user_id", .equal, user.rawValue).run()
        try await db.delete(from: "events").where("topic", .equal, EventTopic.user(user).name).run()
    }
}
