import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
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
        try await withApp(engine, billing: .init()) { client, _ in
            let ana = try await client.signUp()
            let created = try await Self.create(client, ana, timeZone: "Asia/Kathmandu")
            #expect(created.status == .created)
            let group = try json(created)
            let groupID = try #require(group["id"] as? String)
            #expect(group["role"] as? String == "admin" && group["memberCount"] as? Int == 1 && group["timeZone"] as? String == "Asia/Kathmandu")
            let second = try await Self.create(client, ana, "Another")
            #expect(second.status == .conflict)
            #expect(try json(second)["code"] as? String == "already_in_group")
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
        try await TestDatabase.with(.sqlite) { database in
            var configuration = ServerConfiguration.testing(database)
            configuration.social = SocialConfiguration(appScheme: "fittoday", appleAppIDs: ["ABCDE12345.com.fittoday.app"])
            let app = try await buildApplication(configuration: configuration, logger: TestDatabase.logger)
            try await app.test(.router) { client in
                let association = try json(try await client.json(.get, "/.well-known/apple-app-site-association"))
                let details = try #require((association["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
                #expect(details.first?["appIDs"] as? [String] == ["ABCDE12345.com.fittoday.app"])
                #expect((details.first?["components"] as? [[String: String]])?.first?["/"] == "/group/invite/*")
                let account = try await client.signUp()
                let groupID = try #require(try json(try await Self.create(client, account))["id"] as? String)
                #expect(try await Self.invite(client, account, groupID)["deepLink"] as? String != nil)
                #expect((try await Self.invite(client, account, groupID)["deepLink"] as? String)?.hasPrefix("fittoday://group/invite/") == true)
            }
        }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_APPLE_APP_IDS": "nodot"]) }
    }
}
