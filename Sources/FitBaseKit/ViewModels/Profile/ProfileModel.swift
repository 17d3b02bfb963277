import FitBaseCore
import Foundation
import Observation

/// Profile and privacy (seeds 000, 001, 004): editing the profile, the share-workouts toggle, consents, exporting the
/// user's data to a file, deleting the account after signing in again, and signing out.
@MainActor @Observable
public final class ProfileModel {
    /// The saved profile (`nil` until loaded).
    public private(set) var profile: UserProfile?
    /// The edit form's answers (a copy of the saved profile's).
    public var draft = Profile()
    /// The consents in force, per kind.
    public private(set) var consents: [ConsentKind: ConsentRecord] = [:]
    public private(set) var isLoading = false
    public private(set) var isSaving = false
    public private(set) var error: ScreenError?
    /// The form's problems per field.
    public private(set) var fieldErrors: [String: String] = [:]
    /// The last export's file, to share (saved as it arrived, never held whole in memory).
    public private(set) var exportFileURL: URL?
    public private(set) var isExporting = false
    /// Deleting the account needs the user to prove who they are again: ask for the password (or Apple / Google).
    public private(set) var needsReauthentication = false
    public private(set) var isDeleting = false
    /// The account is deleted (the session is over).
    public private(set) var isAccountDeleted = false

    private let profiles: any ProfileService
    private let auth: any AuthService
    private let analytics: any AnalyticsService
    private let exportDirectory: URL

    /// A model over the services of `dependencies`, saving exports in `exportDirectory` (the temporary directory).
    public init(dependencies: FitBaseDependencies, exportDirectory: URL = FileManager.default.temporaryDirectory) {
        profiles = dependencies.profile
        auth = dependencies.auth
        analytics = dependencies.analytics
        self.exportDirectory = exportDirectory
    }

    /// Whether the user's workouts count on group leaderboards.
    public var sharesWorkoutData: Bool { profile?.profile.shareWorkoutData ?? true }
    /// The form differs from the saved profile.
    public var hasChanges: Bool { profile.map { $0.profile != draft } ?? false }
    /// Whether `kind` is granted.
    public func isGranted(_ kind: ConsentKind) -> Bool { consents[kind]?.granted ?? false }

    /// Loads the profile and the consents.
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            let loaded = try await profiles.profile()
            let records = try await profiles.consents()
            profile = loaded
            draft = loaded.profile
            consents = Dictionary(records.map { ($0.kind, $0) }, uniquingKeysWith: { _, last in last })
            error = nil
        } catch {
            present(error)
        }
    }

    /// The form's problems; empty when it may be saved.
    public func problems() -> [String: String] {
        var fields: [String: String] = [:]
        let name = DisplayNameRule.trimmed(draft.displayName ?? "")
        if name.isEmpty {
            fields["displayName"] = "Enter a name."
        } else if DisplayNameRule.isTooLong(name) {
            fields["displayName"] = "Use at most \(DisplayNameRule.maximumCharacters) characters."
        }
        if !Profile.cycleLengthRange.contains(draft.averageCycleLength) { fields["averageCycleLength"] = "Between 21 and 45 days." }
        if !Profile.periodLengthRange.contains(draft.averagePeriodLength) { fields["averagePeriodLength"] = "Between 2 and 10 days." }
        return fields
    }

    /// Saves the form.
    public func save() async {
        fieldErrors = problems()
        guard fieldErrors.isEmpty else {
            error = .invalid(fieldErrors)
            return
        }
        isSaving = true
        defer { isSaving = false }
        do throws(KitError) {
            let saved = try await profiles.saveProfile(draft)
            profile = saved
            draft = saved.profile
            error = nil
        } catch {
            present(error)
        }
    }

    /// Sets whether the user's workouts count on group leaderboards.
    public func setShareWorkoutData(_ share: Bool) async {
        do throws(KitError) {
            let saved = try await profiles.setShareWorkoutData(share)
            profile = saved
            draft.shareWorkoutData = saved.profile.shareWorkoutData
            error = nil
        } catch {
            present(error)
        }
    }

    /// Whether reminders may say what they are about on the lock screen (off: "You have a new reminder").
    public var showsSensitiveContent: Bool { profile?.profile.notificationPreferences.showSensitiveContent ?? false }

    /// Turns lock-screen text of reminders on or off (the server words the pushes it sends by it).
    public func setShowSensitiveContent(_ show: Bool) async {
        await setNotificationPreferences { $0.showSensitiveContent = show }
    }

    /// Changes the push settings with `change` and saves them at once (the rest of the saved profile stays; an
    /// unsaved edit in ``draft`` stays unsaved).
    public func setNotificationPreferences(_ change: (inout NotificationPreferences) -> Void) async {
        guard var saved = profile?.profile else { return }
        change(&saved.notificationPreferences)
        do throws(KitError) {
            let updated = try await profiles.saveProfile(saved)
            profile = updated
            draft.notificationPreferences = updated.profile.notificationPreferences
            error = nil
        } catch {
            present(error)
        }
    }

    /// Records an answer to `kind` in `version`.
    public func setConsent(_ kind: ConsentKind, granted: Bool, version: String = OnboardingModel.consentVersion) async {
        do throws(KitError) {
            consents[kind] = try await profiles.recordConsent(kind, version: version, granted: granted)
            error = nil
        } catch {
            present(error)
        }
    }

    /// Exports the user's data into a file to share, in the export directory.
    public func export() async {
        isExporting = true
        defer { isExporting = false }
        do throws(KitError) {
            exportFileURL = try await profiles.exportData(into: exportDirectory).fileURL
            error = nil
        } catch {
            present(error)
        }
    }

    /// Asks to delete the account: the screen then asks for the password (or Apple / Google) again.
    public func requestAccountDeletion() {
        needsReauthentication = true
        error = nil
    }

    /// Deletes the account after proving the user's identity again; the session ends.
    public func deleteAccount(_ reauthentication: Reauthentication) async {
        isDeleting = true
        defer { isDeleting = false }
        do throws(KitError) {
            try await profiles.deleteAccount(reauthentication)
            isAccountDeleted = true
            needsReauthentication = false
            error = nil
            analytics.track(.accountDeleted)
        } catch {
            present(error)
            needsReauthentication = true
        }
    }

    /// Signs out.
    public func signOut() async {
        await auth.signOut()
        analytics.track(.signedOut)
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        fieldErrors = failure.fieldErrors
        analytics.track(.operationFailed(feature: .profile, reason: failure.kind))
    }
}
