import FitBaseCore
import Foundation

/// The signed-in user's account as the profile and settings screens show it.
public struct UserProfile: Sendable, Equatable {
    /// The user's id.
    public var id: UserID
    /// The e-mail address, when the account has one.
    public var email: String?
    /// Whether the address is proven.
    public var emailVerified: Bool
    /// The onboarding answers and preferences, including the privacy toggle ``Profile/shareWorkoutData``.
    public var profile: Profile
    /// Whether every onboarding step has an answer.
    public var onboardingCompleted: Bool { profile.onboardingCompleted }

    /// Makes a profile value.
    public init(id: UserID, email: String?, emailVerified: Bool, profile: Profile) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.profile = profile
    }
}

/// The user's data as a GDPR export: a JSON file the app saved, to share.
public struct AccountExport: Sendable, Equatable {
    /// Where the document was saved.
    public var fileURL: URL
    /// Its size.
    public var bytes: Int64
    /// When it was saved.
    public var savedAt: Date

    /// Makes an export value.
    public init(fileURL: URL, bytes: Int64, savedAt: Date) {
        self.fileURL = fileURL
        self.bytes = bytes
        self.savedAt = savedAt
    }

    /// The file name of an export saved at `date`: `fitbase-export-2026-03-02.json` (the day in UTC).
    public static func fileName(savedAt date: Date) -> String {
        "fitbase-export-\(InternetDateTime.string(from: date).prefix(10)).json"
    }
}

/// How the user proves who they are again before a destructive action (deleting the account needs a sign-in within the
/// last few minutes).
public enum Reauthentication: Sendable, Equatable {
    /// The account's password (signs in again with the account's address).
    case password(String)
    /// A fresh Sign in with Apple credential.
    case apple(AppleCredential)
    /// A fresh Google ID token.
    case google(idToken: String, nonce: String?)
}

/// One entry of the user's audit log: who read, wrote, deleted, exported or synced their health and cycle data.
/// The action, resource and outcome are `nil` when a newer server names one this version does not know (the raw
/// text stays in ``rawAction`` and ``rawResource``).
public struct AuditRecord: Sendable, Equatable, Identifiable {
    /// The entry's place in the user's chain, from 1.
    public var sequence: Int64
    public var at: Date
    /// Who acted (the user, or an operator); `nil` for the system.
    public var actor: UserID?
    public var action: AuditAction?
    public var rawAction: String
    public var resource: AuditResource?
    public var rawResource: String
    /// How many records, buckets or refusals.
    public var count: Int
    public var outcome: AuditOutcome?

    public var id: Int64 { sequence }

    /// Makes an entry.
    public init(sequence: Int64, at: Date, actor: UserID?, rawAction: String, rawResource: String, count: Int, outcome: AuditOutcome?) {
        self.sequence = sequence
        self.at = at
        self.actor = actor
        self.rawAction = rawAction
        self.action = AuditAction(rawValue: rawAction)
        self.rawResource = rawResource
        self.resource = AuditResource(rawValue: rawResource)
        self.count = count
        self.outcome = outcome
    }
}

/// The profile, onboarding answers and privacy: the share-workout toggle, consents, export and account deletion
/// (seeds 000 and 001).
public protocol ProfileService: Sendable {
    /// The signed-in user's profile.
    func profile() async throws(KitError) -> UserProfile
    /// Saves the profile's answers and preferences; returns the profile as saved.
    func saveProfile(_ profile: Profile) async throws(KitError) -> UserProfile
    /// Whether the user's workouts count on group leaderboards.
    func setShareWorkoutData(_ share: Bool) async throws(KitError) -> UserProfile
    /// The consents in force, one per kind answered.
    func consents() async throws(KitError) -> [ConsentRecord]
    /// Records an answer to `kind` in `version`.
    func recordConsent(_ kind: ConsentKind, version: String, granted: Bool) async throws(KitError) -> ConsentRecord
    /// Everything the server keeps about the user, as one JSON document saved in `directory` as it arrives (never
    /// whole in memory) under ``AccountExport/fileName(savedAt:)``.
    func exportData(into directory: URL) async throws(KitError) -> AccountExport
    /// Changes the password; other devices are signed out.
    func changePassword(current: String, new: String) async throws(KitError)
    /// Deletes the account after proving the user's identity again, then erases the device's data and signs out.
    func deleteAccount(_ reauthentication: Reauthentication) async throws(KitError)
    /// The devices signed in to the account, most recent first.
    func sessions() async throws(KitError) -> [SignedInSession]
    /// Signs another device out (its session ends; its next request finds itself signed out).
    func endSession(id: SessionID) async throws(KitError)
    /// A page of the user's audit log, newest first.
    func auditLog(page: PageRequest) async throws(KitError) -> Page<AuditRecord>
}
