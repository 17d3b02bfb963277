import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// Why a membership change was refused.
enum GroupMembershipError: Error, Equatable, ProblemConvertible {
    /// The group does not exist (any more).
    case noSuchGroup(GroupID)
    /// The user is in another group.
    case alreadyInGroup
    /// The group has ``GroupRules/maximumMembers`` members.
    case full
    /// The invite expired, was used up or revoked meanwhile.
    case inviteGone

    var problem: Problem {
        switch self {
        case .noSuchGroup(let id):
            Problem.notFound("No group \(id).")
        case .alreadyInGroup:
            Problem(.conflict, code: .alreadyInGroup, detail: "You are in a group already; leave it first (POST /v1/groups/{id}/leave).")
        case .full:
            Problem(.conflict, code: .groupFull, detail: "The group has \(GroupRules.maximumMembers) members, the most a group can have.")
        case .inviteGone:
            Problem.inviteGone
        }
    }
}

/// Membership changes of groups: each is one transaction holding the group's row, and each change's effects are
/// called here, in order, for every path that makes it (the REST handlers and account deletion).
///
/// * Joining: a use of the invite, the member row and count, then a notification to everyone already in the group.
/// * Leaving or removal: the member row (the admin role passes on, the last one out ends the group), the invites they
///   made stop working, then the member's entries leave the group's open challenges and the others are re-ranked.
struct GroupMembership: Sendable {
    let database: Database

    /// Creates a group with `user` as its admin; `alreadyInGroup` when they are in one.
    func create(name: String, timeZone: String, by user: UserID, now: Date) async throws -> StoredGroup {
        let group = StoredGroup(id: GroupID(), name: name, timeZone: timeZone, memberCount: 1, createdAt: now)
        do {
            try await database.transaction { db in
                if try await GroupStore.membership(of: user, on: db) != nil { throw GroupMembershipError.alreadyInGroup }
                try await GroupStore.insertGroup(group, admin: user, on: db)
            }
        } catch where Database.isUniqueViolation(error) {
            throw GroupMembershipError.alreadyInGroup  // a concurrent create or join by the same user won
        }
        return group
    }

    /// Adds `user` to the group through the invite `token`, spending one of its uses, and tells the members;
    /// `alreadyInGroup`, `full`, `inviteGone` (it expired, was used up or revoked meanwhile), or `noSuchGroup` when the
    /// group is gone. Joining the group one is in already changes nothing (and spends nothing).
    func join(_ user: UserID, group id: GroupID, invite token: String, now: Date) async throws -> StoredGroup {
        do {
            return try await database.transaction { db in
                guard var group = try await GroupStore.group(id, on: db, locking: true) else { throw GroupMembershipError.noSuchGroup(id) }
                if let current = try await GroupStore.membership(of: user, on: db) {
                    if current.group == id { return group }
                    throw GroupMembershipError.alreadyInGroup
                }
                guard group.memberCount < GroupRules.maximumMembers else { throw GroupMembershipError.full }
                guard try await GroupStore.spendInvite(token, of: id, now: now, on: db) != nil else { throw GroupMembershipError.inviteGone }
                try await GroupStore.addMember(user, to: &group, now: now, on: db)
                let name = try await ProfileStore.settings(of: user, on: db).displayName ?? "A new member"
                for member in try await GroupStore.members(of: id, on: db) where member.user != user {
                    try await NotificationStore.add(.newMember, to: member.user, group: id, about: user, message: "\(name) joined the group.", now: now, on: db)
                }
                return group
            }
        } catch where Database.isUniqueViolation(error) {
            throw GroupMembershipError.alreadyInGroup
        }
    }

    /// Removes `user` from the group (leaving, or removed by the admin); whether they were a member.
    func remove(_ user: UserID, from id: GroupID, now: Date) async throws -> Bool {
        try await database.transaction { db in try await Self.leave(user, from: id, now: now, on: db) }
    }

    /// Deletes the group: every member's membership (their current group) goes with it.
    func delete(_ id: GroupID, now: Date) async throws {
        try await database.transaction { db in try await GroupStore.deleteGroup(id, now: now, on: db) }
    }

    /// ``remove(_:from:now:)`` in the caller's transaction (account deletion uses it too). The invites the member made
    /// for the group stop working.
    @discardableResult
    static func leave(_ user: UserID, from id: GroupID, now: Date, on db: any SQLDatabase) async throws -> Bool {
        guard try await GroupStore.group(id, on: db, locking: true) != nil,
            try await GroupStore.deleteMember(user, from: id, now: now, on: db) != nil
        else { return false }
        try await GroupStore.revokeInvites(by: user, of: id, now: now, on: db)
        try await ChallengeScoring.memberLeft(user, group: id, now: now, on: db)
        return true
    }
}

extension Problem {
    /// One answer for every invite that cannot be used, so a token's fate is not told to whoever holds it.
    static let inviteGone = Problem.notFound("This invite does not exist, has expired, was used up or was revoked.")

    static let groupAdminOnly = Problem(.forbidden, code: .forbidden, detail: "Only the group's admin can do this.")
}
