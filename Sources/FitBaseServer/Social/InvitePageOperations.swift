import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime

/// `/group/invite/{token}`: the page an invite link opens in a browser, for a friend without the app (with the app,
/// the universal link opens the app instead). It shows the group's name and who invited — nothing else of the group
/// — with an "Open in the app" link on the app's scheme and, when `FITBASE_APP_STORE_URL` is set, the App Store link.
///
/// Showing it never joins anything nor spends a use: mail scanners and link previews follow links. Every outcome is a
/// page (the account pages' layout and headers), and a token that works nowhere is never echoed.
protocol InvitePageOperations: FeatureOperations { var socialFeature: SocialFeature { get } }

extension InvitePageOperations {
    func getInvitePage(_ input: Operations.GetInvitePage.Input) async throws -> Operations.GetInvitePage.Output {
        let token = input.path.token
        let invite: GroupInvite
        switch try await socialFeature.groups.lookUpInvite(token, now: clock.now) {
        case .working(let working):
            invite = working
        case .ended:
            return .gone(.init(body: .html(try invitePage("message", [
                "title": "This invite has ended", "isError": true,
                "message": "The invite expired, was revoked or was used up. Ask whoever sent it for a new link.",
            ]))))
        case .unknown:
            return .notFound(.init(body: .html(try invitePage("message", [
                "title": "This invite link does not work", "isError": true,
                "message": "No invite has this link. Check that it was copied whole, or ask whoever sent it for a new one.",
            ]))))
        }
        guard let group = try await socialFeature.groups.group(invite.group) else {
            return .gone(.init(body: .html(try invitePage("message", [
                "title": "This invite has ended", "message": "The group no longer exists.", "isError": true,
            ]))))
        }
        // The inviter is a member while the invite works (leaving revokes their invites); "Member N" otherwise.
        let inviter = try await socialFeature.groups.members(of: group.id).first { $0.user == invite.createdBy }
        var values: [String: Any] = [
            "title": "Join \(group.name)", "groupName": group.name,
            "inviter": GroupStore.displayName(inviter?.displayName, of: invite.createdBy),
            "deepLink": "\(socialFeature.configuration.appScheme)://group/invite/\(token)",
        ]
        if let appStoreURL = socialFeature.configuration.appStoreURL { values["appStoreURL"] = appStoreURL }
        return .ok(.init(body: .html(try invitePage("invite", values))))
    }

    private func invitePage(_ name: String, _ values: [String: Any]) throws -> HTTPBody {
        HTTPBody(try socialFeature.composer.page(name, values))
    }
}
