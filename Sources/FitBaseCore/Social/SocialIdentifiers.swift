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
