import Crypto
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// A group's row (Core's `SocialGroup` is a group as one member reads it, with their role: ``GroupWire`` makes it).
struct StoredGroup: Sendable, Equatable {
    var id: GroupID
    var name: String
    var timeZone: String
    var memberCount: Int
    var createdAt: Date
}

/// A member's row as listed (its display name may be absent; Core's `GroupMember` shows "Member N" instead).
struct StoredMember: Sendable, Equatable {
    var user: UserID
    var role: GroupRole
    var displayName: String?
    var photoURL: String?
    var joinedAt: Date
}

/// SQL for groups, members and invites. Membership rows change only inside ``GroupMembership``'s transactions, which
/// hold the group's row, so `member_count` and the 10-member limit stay exact under concurrent joins. Each change of a
/// user's group writes a `membership` event with it, which moves their open streams to the new group's topic.
struct GroupStore: Sendable {
    let database: Database
    /// How long an invite works unless its creator asks for less (or more, up to ``maximumInviteLifetime``).
    static let inviteLifetime: TimeInterval = 7 * 86_400
    static let maximumInviteLifetime: TimeInterval = 30 * 86_400
    /// The most joins one invite may allow (a group holds ``GroupRules/maximumMembers``; an invite may outlive members who left).
    static let maximumInviteUses = 100
    /// The most working invites a group holds (so no member can fill the table, or the admin's list, with them).
    static let maximumLiveInvites = 50

    // MARK: Reading

    func group(_ id: GroupID) async throws -> StoredGroup? {
        try await database.withConnection { db in try await Self.group(id, on: db) }
    }

    static func group(_ id: GroupID, on db: any SQLDatabase, locking: Bool = false) async throws -> StoredGroup? {
        var query = db.select().columns("id", "name", "time_zone", "member_count", "created_at").from("groups").where("id", .equal, id.rawValue)
        if locking { query = query.for(.update) }
        return try await query.first().map { row in
            StoredGroup(
                id: GroupID(rawValue: try row.decode(column: "id", as: UUID.self)), name: try row.decode(column: "name", as: String.self),
                timeZone: try row.decode(column: "time_zone", as: String.self), memberCount: try row.decode(column: "member_count", as: Int.self),
                createdAt: try row.decode(column: "created_at", as: Date.self)
            )
        }
    }

    /// The user's group and role, if any.
    func membership(of user: UserID) async throws -> GroupMembershipRecord? {
        try await database.withConnection { db in try await Self.membership(of: user, on: db) }
    }

    private static let selectMembership = StoredStatement(#"SELECT "group_id", "role", "joined_at", "joined_event_id" FROM "group_members" WHERE "user_id" = ?"#)

    /// The user's group and role, when they joined, and the id of the event their joining wrote (`nil` for members from
    /// before those ids were kept).
    static func membership(of user: UserID, on db: any SQLDatabase) async throws -> GroupMembershipRecord? {
        try await selectMembership(user.rawValue).first(on: db).map { row in
            GroupMembershipRecord(
                group: GroupID(rawValue: try row.decode(column: "group_id", as: UUID.self)),
                role: GroupRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .member,
                joinedAt: try row.decode(column: "joined_at", as: Date.self), joinedEventID: try row.decode(column: "joined_event_id", as: Int64?.self)
            )
        }
    }

    /// Members, earliest first, with their display names.
    static func members(of group: GroupID, on db: any SQLDatabase) async throws -> [StoredMember] {
        try await db.select()
            .columns(
                SQLColumn("user_id", table: "group_members"), SQLColumn("role", table: "group_members"), SQLColumn("joined_at", table: "group_members"),
                SQLColumn("display_name", table: "users"), SQLColumn("photo_url", table: "users")
            )
            .from("group_members").join("users", on: SQLColumn("id", table: "users"), .equal, SQLColumn("user_id", table: "group_members"))
            .where(SQLColumn("group_id", table: "group_members"), .equal, SQLBind(group.rawValue))
            .orderBy(SQLColumn("joined_at", table: "group_members")).orderBy(SQLColumn("user_id", table: "group_members")).all()
            .map { row in
                StoredMember(
                    user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)),
                    role: GroupRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .member,
                    displayName: try row.decode(column: "display_name", as: String?.self), photoURL: try row.decode(column: "photo_url", as: String?.self),
                    joinedAt: try row.decode(column: "joined_at", as: Date.self)
                )
            }
    }

    func members(of group: GroupID) async throws -> [StoredMember] {
        try await database.withConnection { db in try await Self.members(of: group, on: db) }
    }

    /// The name a member is shown by: their display name, or "Member N" when they have none (N from their id, so it
    /// is the same on every board and list and says nothing about them).
    static func displayName(_ name: String?, of user: UserID) -> String {
        if let name, !name.isEmpty { return name }
        let bytes = user.rawValue.uuid
        return "Member \((Int(bytes.0) << 8 | Int(bytes.1)) % 9_000 + 1_000)"
    }

    // MARK: Membership rows

    /// Inserts a group of one, `user` its admin. The caller's transaction; effects are ``GroupMembership``'s.
    static func insertGroup(_ group: StoredGroup, admin user: UserID, on db: any SQLDatabase) async throws {
        try await db.insert(into: "groups").columns("id", "name", "time_zone", "created_by", "member_count", "created_at")
            .values(SQLBind(group.id.rawValue), SQLBind(group.name), SQLBind(group.timeZone), SQLBind(user.rawValue), SQLBind(1), SQLBind(group.createdAt)).run()
        try await insertMember(user, into: group.id, role: .admin, now: group.createdAt, on: db)
    }

    /// Adds `user` as a member of `group`, whose row the caller holds, and counts them.
    static func addMember(_ user: UserID, to group: inout StoredGroup, now: Date, on db: any SQLDatabase) async throws {
        try await insertMember(user, into: group.id, role: .member, now: now, on: db)
        group.memberCount += 1
        try await db.update("groups").set("member_count", to: group.memberCount).where("id", .equal, group.id.rawValue).run()
    }

    /// Deletes `user`'s membership row of the group, whose row the caller holds: the admin role passes to the
    /// longest-standing member and the count follows; the last member out deletes the group. Returns the members left,
    /// or `nil` when `user` was not a member.
    static func deleteMember(_ user: UserID, from id: GroupID, now: Date, on db: any SQLDatabase) async throws -> [StoredMember]? {
        let removed = try await db.delete(from: "group_members").where("user_id", .equal, user.rawValue).where("group_id", .equal, id.rawValue)
            .returning("role").all()
        guard let role = try removed.first?.decode(column: "role", as: String.self) else { return nil }
        try await EventLog.membershipChanged(of: user, to: nil, now: now, on: db)
        let remaining = try await members(of: id, on: db)
        if remaining.isEmpty {
            try await db.delete(from: "groups").where("id", .equal, id.rawValue).run()
            return remaining
        }
        if role == GroupRole.admin.rawValue, !remaining.contains(where: { $0.role == .admin }), let heir = remaining.first {
            try await db.update("group_members").set("role", to: GroupRole.admin.rawValue).where("user_id", .equal, heir.user.rawValue).run()
        }
        try await db.update("groups").set("member_count", to: remaining.count).where("id", .equal, id.rawValue).run()
        return remaining
    }

    /// Deletes the group row: every member's membership (their current group) goes with it.
    static func deleteGroup(_ id: GroupID, now: Date, on db: any SQLDatabase) async throws {
        for member in try await members(of: id, on: db) { try await EventLog.membershipChanged(of: member.user, to: nil, now: now, on: db) }
        try await db.delete(from: "groups").where("id", .equal, id.rawValue).run()
    }

    private static func insertMember(_ user: UserID, into group: GroupID, role: GroupRole, now: Date, on db: any SQLDatabase) async throws {
        let joinedEvent = try await EventLog.membershipChanged(of: user, to: group, now: now, on: db)
        try await db.insert(into: "group_members").columns("user_id", "group_id", "role", "joined_at", "joined_event_id")
            .values(SQLBind(user.rawValue), SQLBind(group.rawValue), SQLBind(role.rawValue), SQLBind(now), SQLBind(joinedEvent)).run()
    }

    // MARK: Invites

    /// A new invite token (256 bits, base64url); only its SHA-256 is stored. It works until `expiresAt`, for at most
    /// `maxUses` joins when given, and until it is revoked (by its creator or the admin, or because its creator left
    /// the group).
    func createInvite(for group: GroupID, by user: UserID, expiresAt: Date, maxUses: Int?, now: Date) async throws -> (token: String, invite: GroupInvite) {
        let token = randomToken()
        let invite = GroupInvite(id: InviteID(), group: group, createdBy: user, createdAt: now, expiresAt: expiresAt, maxUses: maxUses, useCount: 0)
        try await database.transaction { db in
            // The group's row is held, so concurrent invites are counted one after the other.
            guard try await Self.group(group, on: db, locking: true) != nil else { throw GroupMembershipError.noSuchGroup(group) }
            let live = try await Self.live(db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("group_invites")
                .where("group_id", .equal, group.rawValue), now: now).first()?.decode(column: "n", as: Int.self) ?? 0
            guard live < Self.maximumLiveInvites else {
                throw Problem(
                    .conflict, code: .tooManyInvites,
                    detail: "The group has \(Self.maximumLiveInvites) working invites, the most it may; revoke some or let them expire."
                )
            }
            try await db.insert(into: "group_invites").columns("token_hash", "id", "group_id", "created_by", "created_at", "expires_at", "max_uses", "use_count")
                .values(
                    SQLBind(sha256Hex(token)), SQLBind(invite.id.rawValue), SQLBind(group.rawValue), SQLBind(user.rawValue), SQLBind(now),
                    SQLBind(expiresAt), SQLBind(maxUses), SQLBind(0)
                ).run()
        }
        return (token, invite)
    }

    /// The working invites, with the columns ``invite(_:)`` reads.
    private static func liveInvites(on db: any SQLDatabase, now: Date) -> SQLSelectBuilder {
        live(db.select().columns("id", "group_id", "created_by", "created_at", "expires_at", "max_uses", "use_count").from("group_invites"), now: now)
    }

    /// The invite a token names while it works: not revoked, not expired, not used up.
    func invite(_ token: String, now: Date) async throws -> GroupInvite? {
        try await database.withConnection { db in
            try await Self.liveInvites(on: db, now: now).where("token_hash", .equal, sha256Hex(token)).first().map(Self.invite)
        }
    }

    /// What a token names, for the invite page: a working invite, one that ended, or none ever.
    enum InviteLookup: Sendable, Equatable {
        case working(GroupInvite)
        /// It expired, was revoked or was used up (or its group is gone).
        case ended
        /// No invite ever had this token.
        case unknown
    }

    /// ``invite(_:now:)``, telling an invite that ended from a token that never named one.
    func lookUpInvite(_ token: String, now: Date) async throws -> InviteLookup {
        if let invite = try await invite(token, now: now) { return .working(invite) }
        let known = try await database.withConnection { db in
            try await db.select().column("group_id").from("group_invites").where("token_hash", .equal, sha256Hex(token)).first()
        }
        return known == nil ? .unknown : .ended
    }

    /// The group's working invite `id`, if it is one.
    func invite(_ id: InviteID, of group: GroupID, now: Date) async throws -> GroupInvite? {
        try await database.withConnection { db in
            try await Self.liveInvites(on: db, now: now).where("id", .equal, id.rawValue).where("group_id", .equal, group.rawValue)
                .first().map(Self.invite)
        }
    }

    /// The group's working invites, newest first: metadata only (tokens are never stored).
    func invites(of group: GroupID, now: Date) async throws -> [GroupInvite] {
        try await database.withConnection { db in
            try await Self.liveInvites(on: db, now: now).where("group_id", .equal, group.rawValue)
                .orderBy("created_at", .descending).orderBy("id").all().map(Self.invite)
        }
    }

    /// Revokes the invite a token names (whether it still works or not).
    func revokeInvite(_ token: String, now: Date) async throws {
        try await database.transaction { db in
            try await db.update("group_invites").set("revoked_at", to: now).where("token_hash", .equal, sha256Hex(token))
                .where("revoked_at", .is, SQLLiteral.null).run()
        }
    }

    /// Revokes the group's invite `id`; whether it was one of the group's working invites.
    func revokeInvite(_ id: InviteID, of group: GroupID, now: Date) async throws -> Bool {
        try await database.transaction { db in
            try await Self.live(db.update("group_invites").set("revoked_at", to: now).where("id", .equal, id.rawValue).where("group_id", .equal, group.rawValue), now: now)
                .returning("id").all().isEmpty == false
        }
    }

    /// Spends one use of the invite a token names, in the caller's transaction (which holds the group's row); `nil` when
    /// the invite does not work (revoked, expired, used up, or of another group).
    static func spendInvite(_ token: String, of group: GroupID, now: Date, on db: any SQLDatabase) async throws -> InviteID? {
        try await live(
            db.update("group_invites").set("use_count", to: SQLBinaryExpression(SQLIdentifier("use_count"), .add, SQLLiteral.numeric("1")))
                .where("token_hash", .equal, sha256Hex(token)).where("group_id", .equal, group.rawValue),
            now: now
        ).returning("id").first().map { InviteID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
    }

    /// Revokes every invite `user` made for the group: they left it or were removed. The caller's transaction.
    static func revokeInvites(by user: UserID, of group: GroupID, now: Date, on db: any SQLDatabase) async throws {
        try await db.update("group_invites").set("revoked_at", to: now).where("created_by", .equal, user.rawValue)
            .where("group_id", .equal, group.rawValue).where("revoked_at", .is, SQLLiteral.null).run()
    }

    /// Narrows a query to working invites: not revoked, not expired, not used up.
    private static func live<Query: SQLPredicateBuilder>(_ query: Query, now: Date) -> Query {
        query.where("revoked_at", .is, SQLLiteral.null).where("expires_at", .greaterThan, SQLBind(now))
            .where { uses in uses.where("max_uses", .is, SQLLiteral.null).orWhere(SQLIdentifier("use_count"), .lessThan, SQLIdentifier("max_uses")) }
    }

    private static func invite(_ row: any SQLRow) throws -> GroupInvite {
        GroupInvite(
            id: InviteID(rawValue: try row.decode(column: "id", as: UUID.self)), group: GroupID(rawValue: try row.decode(column: "group_id", as: UUID.self)),
            createdBy: UserID(rawValue: try row.decode(column: "created_by", as: UUID.self)), createdAt: try row.decode(column: "created_at", as: Date.self),
            expiresAt: try row.decode(column: "expires_at", as: Date.self), maxUses: try row.decode(column: "max_uses", as: Int?.self),
            useCount: try row.decode(column: "use_count", as: Int.self)
        )
    }
}

/// An invite's metadata (its token is shown once, at creation, and stored only as a hash).
struct GroupInvite: Sendable, Equatable {
    var id: InviteID
    var group: GroupID
    var createdBy: UserID
    var createdAt: Date
    var expiresAt: Date
    /// How many joins it allows; `nil`: any number until it expires.
    var maxUses: Int?
    var useCount: Int
}

/// Group membership in the account export and deletion: leaving on deletion hands the admin role on and keeps
/// `member_count` right (the row alone would cascade away without either).
struct GroupMembershipOwner: InMemoryAccountDataOwner {
    let section = "groupMembership"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        guard let membership = try await GroupStore.membership(of: user, on: db), let group = try await GroupStore.group(membership.group, on: db) else {
            return try OpenAPIValueContainer(unvalidatedValue: nil as (any Sendable)?)
        }
        return try OpenAPIValueContainer(unvalidatedValue: ["groupId": group.id.description, "groupName": group.name, "role": membership.role.rawValue] as [String: (any Sendable)?])
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        guard let membership = try await GroupStore.membership(of: user, on: db) else { return }
        try await GroupMembership.leave(user, from: membership.group, now: now, on: db)
    }
}

/// A user's place in their group: which, as what, and since when (the instant, and the id of the event their joining
/// wrote — `nil` for members from before those ids were kept).
struct GroupMembershipRecord: Sendable, Equatable {
    var group: GroupID
    var role: GroupRole
    var joinedAt: Date
    var joinedEventID: Int64?
}
