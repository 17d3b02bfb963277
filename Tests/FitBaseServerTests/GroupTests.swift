import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Groups and invites over HTTP (the seed's manual checklist for groups), on every engine.
@Suite struct GroupTests {
    static func create(_ client: any TestClientProtocol, _ account: TestAccount, _ name: String = "Morning Crew", timeZone: String? = nil) async throws -> TestResponse {
        var body: [String: Any] = ["name": name]
        if let timeZone { body["timeZone"] = timeZone }
        return try await client.json(.post, "/v1/groups", body: body, token: account.accessToken)
    }

    static func invite(_ client: any TestClientProtocol, _ account: TestAccount, _ groupID: String) async throws -> [String: Any] {
        try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: account.accessToken))
    }

    @Test(arguments: TestEngines.all)
    func groupsFollowTheSeedsChecklist(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(billing: .init())) { client, _ in
            let ana = try await client.signUp()
            let created = try await Self.create(client, ana, timeZone: "Asia/Kathmandu")
            #expect(created.status == .created)
            let group = try json(created)
            let groupID = try #require(group["id"] as? String)
            #expect(group["role"] as? String == "admin" && group["memberCount"] as? Int == 1 && group["timeZone"] as? String == "Asia/Kathmandu")
            let second = try await Self.create(client, ana, "Another")
            #expect(second.status == .conflict)
            try expectProblem(second, .alreadyInGroup)
            #expect(try await Self.create(client, try await client.signUp(), timeZone: "Mars/Olympus").status == .badRequest)

            let invite = try await Self.invite(client, ana, groupID)
            let token = try #require(invite["token"] as? String)
            #expect(token.count >= 22)  // ≥ 128 bits of base64url
            let inviteURL = invite["url"] as? String
            #expect(inviteURL == "http://127.0.0.1:0/group/invite/\(token)")
            let deepLink = invite["deepLink"] as? String
            #expect(deepLink == "fitbase://group/invite/\(token)")

            let bea = try await client.signUp()
            let preview = try json(try await client.json(.get, "/v1/invites/\(token)", token: bea.accessToken))
            #expect(preview["groupName"] as? String == "Morning Crew" && preview["memberCount"] as? Int == 1 && preview["isFull"] as? Bool == false)
            #expect(try await client.json(.get, "/v1/invites/\(token)").status == .unauthorized)
            let joined = try json(try await client.json(.post, "/v1/invites/\(token)/accept", token: bea.accessToken))
            #expect(joined["memberCount"] as? Int == 2 && joined["role"] as? String == "member")
            let members = try #require(try json(try await client.json(.get, "/v1/groups/\(groupID)/members", token: bea.accessToken))["items"] as? [[String: Any]])
            #expect(members.map { $0["userId"] as? String } == [ana.id, bea.id])
            #expect(try await client.json(.get, "/v1/groups/\(groupID)", token: try await client.signUp().accessToken).status == .notFound)

            // Bea's own group first: she must leave this one to make it.
            #expect(try await Self.create(client, bea).status == .conflict)
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/leave", token: bea.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/groups/\(groupID)", token: bea.accessToken).status == .notFound)
            #expect(try json(try await client.json(.get, "/v1/groups/\(groupID)", token: ana.accessToken))["memberCount"] as? Int == 1)

            // A revoked invite stops working.
            #expect(try await client.json(.delete, "/v1/invites/\(token)", token: ana.accessToken).status == .noContent)
            #expect(try await client.json(.post, "/v1/invites/\(token)/accept", token: bea.accessToken).status == .notFound)

            // The admin leaving hands the role on; the last one out ends the group.
            let fresh = try #require(try await Self.invite(client, ana, groupID)["token"] as? String)
            _ = try await client.json(.post, "/v1/invites/\(fresh)/accept", token: bea.accessToken)
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/leave", token: ana.accessToken).status == .noContent)
            #expect(try json(try await client.json(.get, "/v1/groups/\(groupID)", token: bea.accessToken))["role"] as? String == "admin")
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/leave", token: bea.accessToken).status == .noContent)
            #expect(try await client.json(.post, "/v1/invites/\(fresh)/accept", token: ana.accessToken).status == .notFound)
        }
    }

    @Test(arguments: TestEngines.all)
    func aGroupHoldsTenMembersEvenWhenTwelveJoinAtOnce(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let admin = try await client.signUp()
            let groupID = try #require(try json(try await Self.create(client, admin))["id"] as? String)
            let token = try #require(try await Self.invite(client, admin, groupID)["token"] as? String)
            var joiners: [TestAccount] = []
            for _ in 0..<12 { joiners.append(try await client.signUp()) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for joiner in joiners {
                    group.addTask { try await client.json(.post, "/v1/invites/\(token)/accept", token: joiner.accessToken).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.count { $0 == .ok } == 9 && statuses.count { $0 == .conflict } == 3)
            let group = try json(try await client.json(.get, "/v1/groups/\(groupID)", token: admin.accessToken))
            #expect(group["memberCount"] as? Int == 10)
            let members = try json(try await client.json(.get, "/v1/groups/\(groupID)/members", token: admin.accessToken))["items"] as? [Any]
            #expect(members?.count == 10)
            #expect(try json(try await client.json(.get, "/v1/invites/\(token)", token: joiners[0].accessToken))["isFull"] as? Bool == true)

            // Deleting the group frees every member: each can make a group of their own again.
            let member = try #require(joiners.first { _ in true })
            #expect(try await client.json(.delete, "/v1/groups/\(groupID)", token: member.accessToken).status != .noContent)
            #expect(try await client.json(.delete, "/v1/groups/\(groupID)", token: admin.accessToken).status == .noContent)
            for joiner in joiners.prefix(3) { #expect(try await Self.create(client, joiner).status == .created) }
        }
    }

    @Test func universalLinksNameTheConfiguredApps() async throws {
        try await withApp(.sqlite, options: .init(configure: { $0.social = SocialConfiguration(appScheme: "fittoday", appleAppIDs: ["ABCDE12345.com.fittoday.app"]) })) { client, app in
            let association = try json(try await client.json(.get, "/.well-known/apple-app-site-association"))
            let details = try #require((association["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
            #expect(details.first?["appIDs"] as? [String] == ["ABCDE12345.com.fittoday.app"])
            #expect((details.first?["components"] as? [[String: String]])?.first?["/"] == "/group/invite/*")
            let account = try await client.signUp()
            let groupID = try #require(try json(try await Self.create(client, account))["id"] as? String)
            #expect(try await Self.invite(client, account, groupID)["deepLink"] as? String != nil)
            #expect((try await Self.invite(client, account, groupID)["deepLink"] as? String)?.hasPrefix("fittoday://group/invite/") == true)
        }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_APPLE_APP_IDS": "nodot"]) }
    }
    @Test(arguments: TestEngines.all)
    func invitesExpireRunOutAndEndWithTheirCreator(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let ana = try await client.signUp()
            let groupID = try #require(try json(try await Self.create(client, ana))["id"] as? String)
            let invites = "/v1/groups/\(groupID)/invites"

            // Bad limits are named.
            let inPast = try await client.json(.post, invites, body: ["expiresAt": Date.now.addingTimeInterval(-60).formatted(.iso8601)], token: ana.accessToken)
            #expect(inPast.status == .badRequest && String(buffer: inPast.body).contains("expiresAt"))
            let tooFar = try await client.json(.post, invites, body: ["expiresAt": Date.now.addingTimeInterval(31 * 86_400).formatted(.iso8601)], token: ana.accessToken)
            #expect(tooFar.status == .badRequest && String(buffer: tooFar.body).contains("expiresAt"))
            let noUses = try await client.json(.post, invites, body: ["maxUses": 0], token: ana.accessToken)
            #expect(noUses.status == .badRequest && String(buffer: noUses.body).contains("maxUses"))

            // The default lasts 7 days.
            let standard = try json(try await client.json(.post, invites, token: ana.accessToken))
            let expiresAt = try #require((standard["expiresAt"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            #expect(abs(expiresAt.timeIntervalSinceNow - 7 * 86_400) < 120)
            #expect(standard["useCount"] as? Int == 0 && standard["maxUses"] == nil)

            // Two uses: a member accepting again spends none; the third person is refused.
            let twice = try json(try await client.json(.post, invites, body: ["maxUses": 2], token: ana.accessToken))
            let twiceToken = try #require(twice["token"] as? String)
            let bea = try await client.signUp(), carl = try await client.signUp(), dan = try await client.signUp()
            #expect(try await client.json(.post, "/v1/invites/\(twiceToken)/accept", token: bea.accessToken).status == .ok)
            #expect(try await client.json(.post, "/v1/invites/\(twiceToken)/accept", token: bea.accessToken).status == .ok)
            #expect(try await client.json(.post, "/v1/invites/\(twiceToken)/accept", token: carl.accessToken).status == .ok)
            #expect(try await client.json(.get, "/v1/invites/\(twiceToken)", token: dan.accessToken).status == .notFound)
            #expect(try await client.json(.post, "/v1/invites/\(twiceToken)/accept", token: dan.accessToken).status == .notFound)

            // An invite past its expiry stops working (its hour is moved to the past).
            let brief = try json(try await client.json(.post, invites, body: ["expiresAt": Date.now.addingTimeInterval(3_600).formatted(.iso8601)], token: ana.accessToken))
            let briefToken = try #require(brief["token"] as? String)
            #expect(try await client.json(.get, "/v1/invites/\(briefToken)", token: dan.accessToken).status == .ok)
            let briefID = try #require((brief["id"] as? String).flatMap(UUID.init(uuidString:)))
            let storage = app.database
            try await storage.transaction { db in
                try await db.update("group_invites").set("expires_at", to: Date.now.addingTimeInterval(-1)).where("id", .equal, briefID).run()
            }
            #expect(try await client.json(.get, "/v1/invites/\(briefToken)", token: dan.accessToken).status == .notFound)
            #expect(try await client.json(.post, "/v1/invites/\(briefToken)/accept", token: dan.accessToken).status == .notFound)

            // The admin lists working invites, metadata only; members may not.
            let beas = try json(try await client.json(.post, invites, token: bea.accessToken))
            let beasToken = try #require(beas["token"] as? String)
            let listed = try #require(try json(try await client.json(.get, invites, token: ana.accessToken))["items"] as? [[String: Any]])
            #expect(Set(listed.compactMap { $0["id"] as? String }) == Set([standard["id"], beas["id"]].compactMap { $0 as? String }))
            #expect(listed.allSatisfy { $0["token"] == nil })
            #expect(listed.first { $0["id"] as? String == beas["id"] as? String }?["createdBy"] as? String == bea.id)
            #expect(try await client.json(.get, invites, token: bea.accessToken).status == .forbidden)
            #expect(try await client.json(.get, invites, token: dan.accessToken).status == .notFound)

            // Removing Bea ends the invites she made.
            #expect(try await client.json(.delete, "/v1/groups/\(groupID)/members/\(bea.id)", token: ana.accessToken).status == .noContent)
            #expect(try await client.json(.post, "/v1/invites/\(beasToken)/accept", token: dan.accessToken).status == .notFound)
            let afterRemoval = try #require(try json(try await client.json(.get, invites, token: ana.accessToken))["items"] as? [[String: Any]])
            #expect(afterRemoval.map { $0["id"] as? String } == [standard["id"] as? String])

            // Revoking by id: a member only their own, the admin any.
            let carls = try json(try await client.json(.post, invites, token: carl.accessToken))
            let standardID = try #require(standard["id"] as? String)
            #expect(try await client.json(.delete, "\(invites)/\(standardID)", token: carl.accessToken).status == .forbidden)
            #expect(try await client.json(.delete, "\(invites)/\(standardID)", token: dan.accessToken).status == .notFound)
            #expect(try await client.json(.delete, "\(invites)/\(standardID)", token: ana.accessToken).status == .noContent)
            #expect(try await client.json(.post, "/v1/invites/\(try #require(standard["token"] as? String))/accept", token: dan.accessToken).status == .notFound)
            #expect(try await client.json(.delete, "\(invites)/\(try #require(carls["id"] as? String))", token: carl.accessToken).status == .noContent)
            #expect(try await client.json(.delete, "\(invites)/\(standardID)", token: ana.accessToken).status == .notFound)
        }
    }

    /// A member cannot fill the group with invites: 50 working ones at most; a revoked one frees its place.
    @Test(arguments: TestEngines.all)
    func aGroupHoldsAtMostFiftyWorkingInvites(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let ana = try await client.signUp()
            let groupID = try #require(try json(try await Self.create(client, ana))["id"] as? String)
            var first: String?
            for _ in 0..<GroupStore.maximumLiveInvites {
                let made = try await client.json(.post, "/v1/groups/\(groupID)/invites", token: ana.accessToken)
                try #require(made.status == .created)
                if first == nil { first = try json(made)["id"] as? String }
            }
            let refused = try await client.json(.post, "/v1/groups/\(groupID)/invites", token: ana.accessToken)
            #expect(refused.status == .conflict)
            try expectProblem(refused, .tooManyInvites)
            #expect(try await client.json(.delete, "/v1/groups/\(groupID)/invites/\(try #require(first))", token: ana.accessToken).status == .noContent)
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: ana.accessToken).status == .created)
            let listed = try json(try await client.json(.get, "/v1/groups/\(groupID)/invites", token: ana.accessToken))["items"] as? [Any]
            #expect(listed?.count == GroupStore.maximumLiveInvites)
        }
    }

    @Test(arguments: TestEngines.all)
    func anAppFindsItsGroupAgain(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let ana = try await client.signUp()
            #expect(try await client.json(.get, "/v1/groups/current", token: ana.accessToken).status == .notFound)
            #expect(try json(try await client.json(.get, "/v1/me", token: ana.accessToken))["currentGroupId"] == nil)
            #expect(try await client.json(.get, "/v1/groups/current").status == .unauthorized)
            let groupID = try #require(try json(try await Self.create(client, ana))["id"] as? String)
            let current = try json(try await client.json(.get, "/v1/groups/current", token: ana.accessToken))
            #expect(current["id"] as? String == groupID && current["role"] as? String == "admin")
            #expect(try json(try await client.json(.get, "/v1/me", token: ana.accessToken))["currentGroupId"] as? String == groupID)
            // A new sign-in (a reinstall) says it too.
            let again = try json(try await client.json(.post, "/v1/auth/signin", body: ["email": ana.email, "password": ana.password]))
            #expect((again["user"] as? [String: Any])?["currentGroupId"] as? String == groupID)
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/leave", token: ana.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/groups/current", token: ana.accessToken).status == .notFound)
            #expect(try json(try await client.json(.get, "/v1/me", token: ana.accessToken))["currentGroupId"] == nil)
        }
    }

    @Test func inviteTokensStayOutOfTheRequestLog() {
        #expect(RequestLogMiddleware.loggable("/v1/invites/abcDEF_123/accept") == "/v1/invites/…/accept")
        #expect(RequestLogMiddleware.loggable("/v1/invites/abcDEF_123") == "/v1/invites/…")
        #expect(RequestLogMiddleware.loggable("/group/invite/abcDEF_123") == "/group/invite/…")
        #expect(RequestLogMiddleware.loggable("/v1/groups/current") == "/v1/groups/current")
    }
}
