#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An invitation the group's admin shares, as it is made (the contract's `GroupInvite`): the only time its code is
/// shown.
public struct GroupInvitation: Sendable, Hashable, Identifiable, Codable {
    public var id: InviteID
    /// The invite code (the token in the links); shown only when the invitation is made.
    public var code: String
    /// The universal link (`https://…/group/invite/<code>`) to share.
    public var url: URL
    /// The app-scheme link (`fitbase://group/invite/<code>`).
    public var deepLink: URL
    /// When it was made.
    public var createdAt: Date
    /// When it stops working.
    public var expiresAt: Date
    /// How many people may join with it; `nil`: any number until it expires.
    public var maxUses: Int?
    /// How many people have joined with it.
    public var useCount: Int

    /// An invitation from its parts.
    public init(
        id: InviteID, code: String, url: URL, deepLink: URL, createdAt: Date, expiresAt: Date, maxUses: Int?, useCount: Int
    ) {
        self.id = id
        self.code = code
        self.url = url
        self.deepLink = deepLink
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.useCount = useCount
    }

    private enum CodingKeys: String, CodingKey {
        case id, url, deepLink, createdAt, expiresAt, maxUses, useCount
        case code = "token"
    }

    /// Reads the contract's JSON; a link that is not a URL does not read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(InviteID.self, forKey: .id)
        code = try container.decode(String.self, forKey: .code)
        url = try Self.link(container, .url)
        deepLink = try Self.link(container, .deepLink)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        expiresAt = try container.decode(Date.self, forKey: .expiresAt)
        maxUses = try container.decodeIfPresent(Int.self, forKey: .maxUses)
        useCount = try container.decode(Int.self, forKey: .useCount)
    }

    /// Writes the contract's JSON, links as their text whatever the encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(code, forKey: .code)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encode(deepLink.absoluteString, forKey: .deepLink)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(maxUses, forKey: .maxUses)
        try container.encode(useCount, forKey: .useCount)
    }

    private static func link(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> URL {
        guard let url = URL(string: try container.decode(String.self, forKey: key)) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "is not a URL")
        }
        return url
    }
}

/// A working invitation as the group's admin lists it (the contract's `GroupInviteInfo`): who made it and how it is
/// used, never its code.
public struct InvitationInfo: Sendable, Hashable, Identifiable, Codable {
    public var id: InviteID
    /// The member who made it.
    public var createdBy: UserID
    /// When it was made.
    public var createdAt: Date
    /// When it stops working.
    public var expiresAt: Date
    /// How many people may join with it; `nil`: any number until it expires.
    public var maxUses: Int?
    /// How many people have joined with it.
    public var useCount: Int

    /// An invitation's description from its parts.
    public init(id: InviteID, createdBy: UserID, createdAt: Date, expiresAt: Date, maxUses: Int?, useCount: Int) {
        self.id = id
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.useCount = useCount
    }
}

/// What an invitation leads to, before joining (the contract's `InvitePreview`).
public struct InvitationPreview: Sendable, Hashable, Codable {
    /// The group it joins.
    public var groupID: GroupID
    public var groupName: String
    public var memberCount: Int
    /// The group has no room for another member (``GroupRules/maximumMembers``).
    public var isFull: Bool

    /// A preview from its parts.
    public init(groupID: GroupID, groupName: String, memberCount: Int, isFull: Bool) {
        self.groupID = groupID
        self.groupName = groupName
        self.memberCount = memberCount
        self.isFull = isFull
    }

    private enum CodingKeys: String, CodingKey {
        case groupName, memberCount, isFull
        case groupID = "groupId"
    }
}
