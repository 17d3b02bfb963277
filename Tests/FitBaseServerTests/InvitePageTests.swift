import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// `/group/invite/{token}`: the page an invite link opens in a browser without the app, on every engine.
@Suite struct InvitePageTests {
    /// Text a member chose, as an attacker would choose it.
    static let hostileName = #"<script>alert("x")</script> & 'Ana'"#
    static let hostileGroup = #"<img src=x onerror=alert(1)> "Crew""#

    /// A group named `name` by an account shown as `displayName`, and an invite of it (`maxUses` when given).
    static func invitation(
        _ client: any TestClientProtocol, groupName: String = hostileGroup, displayName: String? = hostileName, maxUses: Int? = nil
    ) async throws -> (admin: TestAccount, groupID: String, token: String) {
        let admin = try await client.signUp()
        if let displayName {
            #expect(try await client.json(.patch, "/v1/me", body: ["displayName": displayName], token: admin.accessToken).status == .ok)
        }
        let groupID = try #require(try json(try await GroupTests.create(client, admin, groupName))["id"] as? String)
        var body: [String: Any] = [:]
        if let maxUses { body["maxUses"] = maxUses }
        let invite = try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", body: body.isEmpty ? nil : body, token: admin.accessToken))
        return (admin, groupID, try #require(invite["token"] as? String))
    }

    static func page(_ client: any TestClientProtocol, _ token: String, method: HTTPRequest.Method = .get) async throws -> TestResponse {
        try await client.execute(uri: "/group/invite/\(token)", method: method)
    }

    /// The headers of the `/auth/` pages, on an HTML answer.
    static func expectPageHeaders(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.headers[.contentType] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        #expect(response.headers[.cacheControl] == "no-store", sourceLocation: sourceLocation)
        #expect(response.headers[.referrerPolicy] == "no-referrer", sourceLocation: sourceLocation)
        #expect(response.headers[.xFrameOptions] == "DENY", sourceLocation: sourceLocation)
        #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none';") == true, sourceLocation: sourceLocation)
    }

    @Test(arguments: TestEngines.all)
    func thePageNamesTheGroupAndTheInviterEscapedAndNothingElse(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let (admin, groupID, token) = try await Self.invitation(client)
            let member = try await client.signUp()
            #expect(try await client.json(.patch, "/v1/me", body: ["displayName": "Secret Member"], token: member.accessToken).status == .ok)
            #expect(try await client.json(.post, "/v1/invites/\(token)/accept", token: member.accessToken).status == .ok)

            let page = try await Self.page(client, token)
            #expect(page.status == .ok)
            Self.expectPageHeaders(page)
            let html = String(buffer: page.body)
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt; &quot;Crew&quot;"))
            #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Ana&#39; invited you"))
            #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("onerror=alert(1)>"))
            #expect(html.contains(#"href="fitbase://group/invite/\#(token)""#))
            #expect(html.contains("Open in the app"))
            // No App Store link without FITBASE_APP_STORE_URL; nothing of the group beyond its name and the inviter.
            #expect(!html.contains("App Store"))
            for secret in [groupID, admin.id, admin.email, member.id, member.email, "Secret Member", "UTC", "2 members"] {
                #expect(!html.contains(secret), "the page shows \(secret)")
            }

            // HEAD answers alike without a body; nothing but GET and HEAD.
            let head = try await Self.page(client, token, method: .head)
            #expect(head.status == .ok && head.body.readableBytes == 0)
            Self.expectPageHeaders(head)
            #expect(try await Self.page(client, token, method: .post).status == .methodNotAllowed)
        }
    }

    @Test(arguments: TestEngines.all)
    func showingThePageNeverAcceptsNorSpendsTheInvite(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let (_, groupID, token) = try await Self.invitation(client, groupName: "Morning Crew", displayName: nil, maxUses: 1)
            // A signed-in reader (a mail scanner with a session, say) opening it three times joins nothing.
            let reader = try await client.signUp()
            for _ in 0..<3 {
                let page = try await client.execute(uri: "/group/invite/\(token)", method: .get, headers: [.authorization: "Bearer \(reader.accessToken)"])
                #expect(page.status == .ok)
                // An inviter without a display name is shown by the "Member N" name the boards use.
                #expect(String(buffer: page.body).contains(#/Member \d{4} invited you to join <strong>Morning Crew</strong>/#))
            }
            #expect(try await client.json(.get, "/v1/groups/current", token: reader.accessToken).status == .notFound)
            // The one use is still there for the friend it was meant for.
            let friend = try await client.signUp()
            let joined = try json(try await client.json(.post, "/v1/invites/\(token)/accept", token: friend.accessToken))
            #expect(joined["id"] as? String == groupID && joined["memberCount"] as? Int == 2)
            // Used up, the page says the invite ended.
            let ended = try await Self.page(client, token)
            #expect(ended.status == .gone)
            Self.expectPageHeaders(ended)
            #expect(String(buffer: ended.body).contains("This invite has ended"))
        }
    }

    @Test(arguments: TestEngines.all)
    func unknownExpiredAndRevokedInvitesGetAFriendlyPage(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            // Never an invite: 404, a page (not JSON), and the link's text is not echoed.
            let madeUp = "made-up-<b>token</b>"
            let unknown = try await Self.page(client, madeUp.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? madeUp)
            #expect(unknown.status == .notFound)
            Self.expectPageHeaders(unknown)
            let unknownHTML = String(buffer: unknown.body)
            #expect(unknownHTML.contains("This invite link does not work") && !unknownHTML.contains("token") && !unknownHTML.contains("<b>"))
            #expect(!unknownHTML.contains("\"code\""))

            // Revoked: 410.
            let (admin, _, revoked) = try await Self.invitation(client, groupName: "Evening Crew", displayName: "Ana")
            #expect(try await Self.page(client, revoked).status == .ok)
            #expect(try await client.json(.delete, "/v1/invites/\(revoked)", token: admin.accessToken).status == .noContent)
            let revokedPage = try await Self.page(client, revoked)
            #expect(revokedPage.status == .gone)
            Self.expectPageHeaders(revokedPage)
            #expect(!String(buffer: revokedPage.body).contains("Evening Crew"))

            // Expired: 410.
            let groupID = try #require(try json(try await client.json(.get, "/v1/groups/current", token: admin.accessToken))["id"] as? String)
            let fresh = try #require(try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: admin.accessToken))["token"] as? String)
            #expect(try await Self.page(client, fresh).status == .ok)
            try await app.database.transaction { db in
                try await db.update("group_invites").set("expires_at", to: Date.now.addingTimeInterval(-1)).run()
            }
            let expired = try await Self.page(client, fresh)
            #expect(expired.status == .gone)
            #expect(String(buffer: expired.body).contains("expired, was revoked or was used up"))
        }
    }

    @Test(arguments: TestEngines.all)
    func theAppStoreLinkAndTheSchemeComeFromTheConfiguration(engine: DatabaseEngine) async throws {
        let options = TestAppOptions(configure: { configuration in
            configuration.social = SocialConfiguration(appScheme: "fittoday", appStoreURL: "https://apps.apple.com/app/id1234567890?pt=1&ct=invite")
        })
        try await withApp(engine, options: options) { client, _ in
            let (_, _, token) = try await Self.invitation(client, groupName: "Crew", displayName: "Ana")
            let created = try await Self.page(client, token)
            let html = String(buffer: created.body)
            #expect(html.contains(#"href="fittoday://group/invite/\#(token)""#))
            #expect(html.contains(#"<a href="https://apps.apple.com/app/id1234567890?pt=1&amp;ct=invite">Get FitBase on the App Store</a>"#))
        }
    }

    @Test(arguments: TestEngines.all)
    func thePageIsRateLimitedByAddressLikeTheOtherPages(engine: DatabaseEngine) async throws {
        var limits = RateLimitConfiguration.testing
        limits.reads = .init(perUser: nil, perAddress: .init(3, per: 3600))
        try await withApp(engine, options: TestAppOptions(live: true, rateLimits: limits)) { client, _ in
            for _ in 0..<3 { #expect(try await Self.page(client, "no-such-invite-token").status == .notFound) }
            let refused = try await Self.page(client, "no-such-invite-token")
            try expectProblem(refused, .rateLimited)
            #expect(refused.headers[.retryAfter] != nil)
        }
    }

    @Test func theAppStoreURLIsAnHTTPSURL() throws {
        let environment = ["FITBASE_APP_STORE_URL": " https://apps.apple.com/app/id1 "]
        #expect(try ServerConfiguration.resolve(environment: environment).social.appStoreURL == "https://apps.apple.com/app/id1")
        #expect(try ServerConfiguration.resolve(environment: [:]).social.appStoreURL == nil)
        for bad in ["http://apps.apple.com/app/id1", "apps.apple.com/app/id1", "javascript:alert(1)"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ServerConfiguration.resolve(environment: ["FITBASE_APP_STORE_URL": bad]) }
        }
    }
}
