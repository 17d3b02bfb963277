import FitBaseAPI
import FitBaseCore
import Foundation

/// How groups cross the wire: Core's values to the contract's types and back. The one place they are mapped; controllers,
/// collections and owners all call these.
enum GroupWire {
    static func wire(_ group: SocialGroup, role: GroupRole) -> Components.Schemas.Group {
        .init(
            id: group.id.description, name: group.name, timeZone: group.timeZone, memberCount: group.memberCount,
            createdAt: group.createdAt, role: .init(rawValue: role.rawValue) ?? .member
        )
    }

    static func wire(_ member: GroupMember) -> Components.Schemas.GroupMember {
        .init(
            userId: member.user.description, displayName: GroupStore.displayName(member.displayName, of: member.user), photoURL: member.photoURL,
            role: .init(rawValue: member.role.rawValue) ?? .member, joinedAt: member.joinedAt
        )
    }
}
