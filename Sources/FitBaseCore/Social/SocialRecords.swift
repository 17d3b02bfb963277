#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A challenge group as one of its members sees it (the contract's `Group`): the one type of it from the API to the
/// app's screens. `role` is the reader's own role in it.
public struct SocialGroup: Sendable, Hashable, Identifiable, Codable {
    public var id: GroupID
    public var name: String
    /// The IANA time zone the group's weeks run in.
    public var timeZone: String
    public var memberCount: Int
    public var createdAt: Date
    /// The reader's role in the group.
    public var role: GroupRole

    /// A group from its parts.
    public init(id: GroupID, name: String, timeZone: String, memberCount: Int, createdAt: Date, role: GroupRole) {
        self.id = id
        self.name = name
        self.timeZone = timeZone
        self.memberCount = memberCount
        self.createdAt = createdAt
        self.role = role
    }

    /// Whether it has room for another member (``GroupRules/maximumMembers``).
    public var isFull: Bool { memberCount >= GroupRules.maximumMembers }
}

/// A member of a group as listed (the contract's `GroupMember`).
public struct GroupMember: Sendable, Hashable, Identifiable, Codable {
    public var user: UserID
    /// The name shown: the member's display name, or "Member N" when they have none (the server fills it in).
    public var displayName: String
    public var photoURL: String?
    public var role: GroupRole
    public var joinedAt: Date

    public var id: UserID { user }

    /// A member from its parts.
    public init(user: UserID, displayName: String, photoURL: String? = nil, role: GroupRole, joinedAt: Date) {
        self.user = user
        self.displayName = displayName
        self.photoURL = photoURL
        self.role = role
        self.joinedAt = joinedAt
    }

    /// Admins first, then by the time they joined: the order member lists are shown in.
    public static func listedBefore(_ lhs: GroupMember, _ rhs: GroupMember) -> Bool {
        (lhs.role == .admin ? 0 : 1, lhs.joinedAt) < (rhs.role == .admin ? 0 : 1, rhs.joinedAt)
    }

    private enum CodingKeys: String, CodingKey {
        case displayName, photoURL, role, joinedAt
        case user = "userId"
    }
}

/// One ranked row of a weekly challenge's leaderboard (the contract's `LeaderboardEntry`).
public struct LeaderboardEntry: Sendable, Hashable, Identifiable, Codable {
    public var user: UserID
    /// The member's name as it was when they scored ("Member N" when they had none).
    public var displayName: String
    public var photoURL: String?
    /// Workouts this week (check-ins) or consecutive days (streak).
    public var value: Int
    /// 1 is first; equal values share a rank (``LeaderboardRanker``).
    public var rank: Int
    /// When the member reached `value`.
    public var reachedAt: Date

    public var id: UserID { user }

    /// An entry from its parts.
    public init(user: UserID, displayName: String, photoURL: String? = nil, value: Int, rank: Int, reachedAt: Date) {
        self.user = user
        self.displayName = displayName
        self.photoURL = photoURL
        self.value = value
        self.rank = rank
        self.reachedAt = reachedAt
    }

    private enum CodingKeys: String, CodingKey {
        case displayName, photoURL, value, rank, reachedAt
        case user = "userId"
    }
}

/// One entry of a user's notification feed (the contract's `Notification`).
public struct FeedNotification: Sendable, Hashable, Identifiable, Codable {
    public var id: NotificationID
    public var kind: NotificationKind
    /// The group it is about, if any.
    public var group: GroupID?
    public var message: String
    public var isRead: Bool
    public var createdAt: Date

    /// A notification from its parts.
    public init(id: NotificationID, kind: NotificationKind, group: GroupID?, message: String, isRead: Bool, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.group = group
        self.message = message
        self.isRead = isRead
        self.createdAt = createdAt
    }

    private enum CodingKeys: String, CodingKey {
        case id, message, isRead, createdAt
        case kind = "type"
        case group = "groupId"
    }
}
