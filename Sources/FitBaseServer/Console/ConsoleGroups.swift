import FitBaseCore
import Foundation
import Hummingbird
import SQLKit

/// The Groups pages: every group, one group's members, removing a member and ending a group — through
/// ``GroupMembership``'s own steps (invites they made stop, their challenge entries leave, the others are re-ranked).
extension ConsoleFeature {
    func groups(_ admin: ConsoleAdmin) async throws -> Response {
        let rows = try await database.withConnection { db in
            try await db.select().columns("id", "name", "time_zone", "member_count", "created_at").from("groups")
                .orderBy("created_at", .descending).limit(200).all().map { row -> [String: String] in
                    [
                        "id": try row.decode(column: "id", as: UUID.self).uuidString.lowercased(), "name": try row.decode(column: "name", as: String.self),
                        "timeZone": try row.decode(column: "time_zone", as: String.self), "members": String(try row.decode(column: "member_count", as: Int.self)),
                        "created": consoleTime(try row.decode(column: "created_at", as: Date.self)),
                    ]
                }
        }
        return try renderer.page("groups", title: "Groups", section: "/console/groups", admin: admin, ["groups": rows, "count": rows.count])
    }

    func group(_ request: Request, _ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let id = try Self.groupID(context)
        guard let group = try await social.groups.group(id) else { throw Problem.notFound("No group \(id); it may have ended.") }
        let members = try await social.groups.members(of: id)
        var values: [String: Any] = [
            "id": id.description, "name": group.name, "timeZone": group.timeZone, "memberCount": group.memberCount,
            "created": consoleTime(group.createdAt),
            "members": members.map { member -> [String: Any] in
                [
                    "user": member.user.description, "name": GroupStore.displayName(member.displayName, of: member.user),
                    "role": member.role.rawValue, "joined": consoleTime(member.joinedAt),
                ]
            },
        ]
        if let removed = request.uri.queryParameters.get("removed").flatMap(UserID.init) { values["notice"] = "Removed \(removed) from the group." }
        return try renderer.page("group", title: group.name, section: "/console/groups", admin: admin, values)
    }

    func removeMember(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let id = try Self.groupID(context)
        let user = try Self.userID(context)
        let now = clock.now
        let removed = try await database.transaction { db in
            guard try await GroupMembership.leave(user, from: id, now: now, on: db) else { return false }
            try await OperatorAuditTrail.record(.memberRemoved, by: admin, target: "group", id.description, detail: "user \(user)", now: now, on: db)
            return true
        }
        guard removed else { throw Problem.notFound("That account is not a member of this group.") }
        if try await social.groups.group(id) == nil {
            return try renderer.page("message", title: "Group ended", section: "/console/groups", admin: admin, [
                "message": "The last member was removed, so the group ended.", "back": "/console/groups",
            ])
        }
        return ConsoleRenderer.redirect("/console/groups/\(id)?removed=\(user)")
    }

    func endGroup(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let id = try Self.groupID(context)
        let now = clock.now
        let ended = try await database.transaction { db in
            guard let group = try await GroupStore.group(id, on: db, locking: true) else { return false }
            try await GroupStore.deleteGroup(id, now: now, on: db)
            try await OperatorAuditTrail.record(.groupEnded, by: admin, target: "group", id.description, detail: group.name, now: now, on: db)
            return true
        }
        guard ended else { throw Problem.notFound("No group \(id); it may have ended.") }
        return try renderer.page("message", title: "Group ended", section: "/console/groups", admin: admin, [
            "message": "The group ended; its members are in no group now.", "back": "/console/groups",
        ])
    }

    static func groupID(_ context: FitBaseRequestContext) throws(Problem) -> GroupID {
        guard let id = GroupID(parameter("group", context)) else { throw Problem.notFound("No group \(parameter("group", context)).") }
        return id
    }
}
