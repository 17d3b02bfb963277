import AsyncHTTPClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import SQLKit
import Testing

@testable import FitBaseServer

/// Group events are for members from the moment they joined: the replay a new (or returning) member can ask for with
/// `Last-Event-ID` stops at their joining.
@Suite struct GroupReplayTests {
    static func invite(_ client: any TestClientProtocol, _ groupID: String, by admin: TestAccount) async throws -> String {
        try #require(try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: admin.accessToken))["token"] as? String)
    }

    @Test(arguments: TestEngines.all)
    func aMemberReplaysNothingFromBeforeTheyJoinedNorFromWhileTheyWereAway(engine: DatabaseEngine) async throws {
        try await EventStreamTests.withLiveGroup(engine) { client, port, groupID, ana, bea, workout in
            for _ in 0..<3 { try await ChallengeTests.log(client, bea, workout) }  // the group's history before Carl

            let carl = try await client.signUp()
            try #require(try await client.json(.post, "/v1/invites/\(try await Self.invite(client, groupID, by: ana))/accept", token: carl.accessToken).status == .ok)
            let first = EventStreamTests.Subscriber()
            await first.start(port: port, token: carl.accessToken, lastEventID: "0")
            #expect(await first.waitUntil { $0.opened })
            try await ChallengeTests.log(client, bea, workout)  // after Carl joined: his to see
            _ = await first.waitFor(1) { $0.type == "leaderboard" }
            try await Task.sleep(for: .milliseconds(300))
            let seen = await first.events.filter { $0.type == "leaderboard" }
            // The check-ins board of that one workout (the streak did not move), nothing older.
            #expect(seen.map { $0.data.contains("\"checkIns\"") && $0.data.contains("\"value\":4") } == [true])
            await first.stop()

            // Carl leaves; the group goes on without him; he comes back and asks for everything again.
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/leave", token: carl.accessToken).status == .noContent)
            try await ChallengeTests.log(client, bea, workout)
            try await Task.sleep(for: .milliseconds(20))
            try #require(try await client.json(.post, "/v1/invites/\(try await Self.invite(client, groupID, by: ana))/accept", token: carl.accessToken).status == .ok)
            let again = EventStreamTests.Subscriber()
            await again.start(port: port, token: carl.accessToken, lastEventID: "0")
            #expect(await again.waitUntil { $0.opened })
            try await ChallengeTests.log(client, ana, workout)
            _ = await again.waitFor(2) { $0.type == "leaderboard" }
            try await Task.sleep(for: .milliseconds(300))
            let back = await again.events.filter { $0.type == "leaderboard" }
            #expect(back.count == 2)  // Ana's workout on both boards; not the one Bea logged while Carl was away
            #expect(back.allSatisfy { $0.data.contains(ana.id) })
            await again.stop()
        }
    }
}

/// The replay stops at the joining's event, not its instant: an event written before the joining by an instance whose
/// clock runs ahead is still history.
@Suite struct JoinReplayByEventIDTests {
    @Test(arguments: TestEngines.all)
    func anEventFromBeforeTheJoiningStaysHistoryWhateverItsClock(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(live: true)) { client, app in
            let port = try #require(client.port)
            let (groupID, members, workout) = try await ChallengeTests.group(client, app.testDatabase, members: 2)
            let (ana, bea) = (members[0], members[1])
            try await ChallengeTests.log(client, bea, workout)  // before Carl: the group's history
            // That board was written by an instance whose clock runs ten minutes ahead.
            try await app.database.transaction { db in
                try await db.update("events").set("created_at", to: Date.storageNow.addingTimeInterval(600)).where("type", .equal, "leaderboard").run()
            }
            let carl = try await client.signUp()
            try #require(try await client.json(
                .post, "/v1/invites/\(try await GroupReplayTests.invite(client, groupID, by: ana))/accept", token: carl.accessToken
            ).status == .ok)
            let stream = EventStreamTests.Subscriber()
            await stream.start(port: port, token: carl.accessToken, lastEventID: "0")
            #expect(await stream.waitUntil { $0.opened })
            try await ChallengeTests.log(client, ana, workout)  // after Carl joined
            _ = await stream.waitFor(2) { $0.type == "leaderboard" }
            try await Task.sleep(for: .milliseconds(300))
            // Ana's workout on both boards (check-ins and streak); not Bea's two boards from before Carl joined.
            let seen = await stream.events.filter { $0.type == "leaderboard" }
            #expect(seen.count == 2)
            await stream.stop()
        }
    }
}
