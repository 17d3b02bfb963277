/// The tag of ``GroupID``: a social group.
public enum SocialGroupTag {}
/// The tag of ``ChallengeID``: one weekly challenge of a group.
public enum ChallengeTag {}
/// The tag of ``NotificationID``: one entry of a user's notification feed.
public enum NotificationTag {}

/// Identifies a group.
public typealias GroupID = Identifier<SocialGroupTag>
/// Identifies a weekly challenge.
public typealias ChallengeID = Identifier<ChallengeTag>
/// Identifies a notification.
public typealias NotificationID = Identifier<NotificationTag>

/// The tag of ``InviteID``: one invite to a group.
public enum GroupInviteTag {}
/// Identifies an invite (its metadata; the token that joins is another, secret value).
public typealias InviteID = Identifier<GroupInviteTag>
