/// The tag of ``UserID``: a FitBase account.
public enum User {}
/// The tag of ``SessionID``: one signed-in device of an account.
public enum Session {}

/// Identifies an account.
public typealias UserID = Identifier<User>
/// Identifies a session (a sign-in on one device and the refresh tokens rotated from it).
public typealias SessionID = Identifier<Session>

/// What an account may do beyond its own data.
public enum Role: String, Sendable, Codable, CaseIterable {
    /// Every account.
    case user
    /// Manages the catalog and other shared data.
    case admin
}
