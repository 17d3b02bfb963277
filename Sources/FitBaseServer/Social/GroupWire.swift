import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of groups: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum GroupWire {
    static func wire(_ group: StoredGroup, role: GroupRole) -> Components.Schemas.Group {
        .init(
            id: group.id.description, name: group.name, timeZone: group.timeZone, memberCount: group.memberCount,
            createdAt: group.createdAt, role: role
        )
    }

    static func wire(_ member: StoredMember) -> Components.Schemas.GroupMember {
        .init(
            userId: member.user.description, displayName: GroupStore.displayName(member.displayName, of: member.user), photoURL: member.photoURL,
            role: member.role, joinedAt: member.joinedAt
        )
    }
}
