import FitBaseClient
import FitBaseCore
import Foundation
import Observation

/// The user's challenge group (seed 004): creating one, joining by invite link or code (preview first, then accept),
/// leaving, the members, and sharing an invitation.
@MainActor @Observable
public final class GroupsModel {
    /// The user's group (`nil`: in none — offer to create or join one).
    public private(set) var group: SocialGroup?
    /// Its members, admins first.
    public private(set) var members: [GroupMember] = []
    public private(set) var isLoading = false
    public private(set) var isWorking = false
    public private(set) var error: ScreenError?
    /// The create form's name.
    public var newGroupName = ""
    /// The join form's field: a code, or a link pasted.
    public var inviteText = ""
    /// The invitation being looked at before joining, and its code.
    public private(set) var preview: InvitationPreview?
    public private(set) var previewCode: String?
    /// The last invitation made, to share.
    public private(set) var invitation: GroupInvitation?
    /// The form's problems per field (`name`, `code`).
    public private(set) var fieldErrors: [String: String] = [:]

    private let groups: any GroupService
    private let analytics: any AnalyticsService
    private let parser: DeepLinkParser
    @ObservationIgnored private var loaded = false
    @ObservationIgnored private var previewSource: JoinSource = .code

    /// A model over the services of `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        groups = dependencies.groups
        analytics = dependencies.analytics
        parser = dependencies.deepLinks
    }

    /// Loaded, and in no group: show "create or join a group".
    public var isEmpty: Bool { loaded && group == nil }
    /// The user administers the group (may invite).
    public var isAdmin: Bool { group?.role == .admin }
    /// The text to share with an invitation.
    public var shareMessage: String? {
        guard let invitation, let group else { return nil }
        return "Join my group \(group.name) on FitBase: \(invitation.url.absoluteString)"
    }

    /// Loads the user's group and its members.
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            let current = try await groups.currentGroup()
            if let current {
                members = try await groups.members(groupID: current.id)
            } else {
                members = []
            }
            group = current
            loaded = true
            error = nil
        } catch {
            present(error)
        }
    }

    /// Creates a group named ``newGroupName`` with the user as admin.
    public func create(timeZone: TimeZone = .current) async {
        // Core's rules, as the server checks them (a name of 1–``GroupRules/maximumNameLength`` characters).
        let name: String
        do throws(InvalidFields) {
            name = try GroupRules.checked(name: newGroupName, timeZone: timeZone.identifier).name
        } catch {
            return refuse(Dictionary(error.errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first }))
        }
        await perform { () async throws(KitError) in
            let created = try await groups.createGroup(name: name, timeZone: timeZone.identifier)
            group = created
            members = try await groups.members(groupID: created.id)
            newGroupName = ""
            analytics.track(.groupCreated)
        }
    }

    /// Makes an invitation to share (admins only).
    public func createInvitation() async {
        guard let group else { return }
        await perform { () async throws(KitError) in
            invitation = try await groups.createInvitation(groupID: group.id)
        }
    }

    /// The user shared the invitation (the share sheet completed).
    public func didShareInvitation() {
        analytics.track(.inviteShared)
    }

    /// Previews the invitation typed or pasted in ``inviteText``.
    public func previewTypedInvite() async {
        guard let code = parser.inviteCode(from: inviteText) else { return refuse(["code": "Enter the invite code or paste the link."]) }
        await previewInvite(code: code, source: inviteText.contains("/") ? .link : .code)
    }

    /// Previews the invitation of `code` (an invite link the app was opened with, or a code typed).
    public func previewInvite(code: String, source: JoinSource = .link) async {
        await perform { () async throws(KitError) in
            preview = nil
            preview = try await groups.previewInvitation(code: code)
            previewCode = code
            previewSource = source
        }
    }

    /// Joins the group previewed.
    public func acceptInvite() async {
        guard let code = previewCode else { return }
        await perform { () async throws(KitError) in
            let joined = try await groups.join(code: code)
            group = joined
            members = try await groups.members(groupID: joined.id)
            preview = nil
            previewCode = nil
            inviteText = ""
            analytics.track(.groupJoined(previewSource))
        }
    }

    /// Turns the invitation previewed down.
    public func declineInvite() {
        preview = nil
        previewCode = nil
    }

    /// Leaves the group.
    public func leave() async {
        guard let group else { return }
        await perform { () async throws(KitError) in
            try await groups.leave(groupID: group.id)
            self.group = nil
            members = []
            invitation = nil
            analytics.track(.groupLeft)
        }
    }

    private func perform(_ operation: () async throws(KitError) -> Void) async {
        isWorking = true
        defer { isWorking = false }
        error = nil
        fieldErrors = [:]
        do throws(KitError) {
            try await operation()
            loaded = true
        } catch {
            present(error)
        }
    }

    private func refuse(_ fields: [String: String]) {
        fieldErrors = fields
        error = .invalid(fields)
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        fieldErrors = failure.fieldErrors
        analytics.track(.operationFailed(feature: .groups, reason: failure.kind))
    }
}
