import AsyncHTTPClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import FitBaseServer

/// Server-Sent Events over a real socket: live leaderboard updates, replay after a disconnect, topic isolation.
@Suite struct EventStreamTests {
    /// One parsed event.
    struct Received: Sendable, Equatable {
        var id: String
        var type: String
        var data: String
    }

    /// Reads one SSE stream in the background.
    actor Subscriber {
        private(set) var events: [Received] = []
        private var task: Task<Void, Never>?

        func start(port: Int, token: String, lastEventID: String? = nil) {
            task = Task {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/events")
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
                do {
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
                    var pending = ""
                    for try await buffer in response.body {
                        pending += String(buffer: buffer)
                        while let end = pending.range(of: "\n\n") {
                            let block = String(pending[..<end.lowerBound])
                            pending = String(pending[end.upperBound...])
                            self.parse(block)
                        }
                    }
                } catch {}
            }
        }

        private func parse(_ block: String) {
            var event = Received(id: "", type: "message", data: "")
            for line in block.split(separator: "\n") {
                if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
                if line.hasPrefix("event: ") { event.type = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
            }
            if !event.id.isEmpty { events.append(event) }
        }

        func stop() {
            task?.cancel()
            task = nil
        }

        /// Waits (up to `seconds`) until `count` events satisfy `matching`.
        func waitFor(_ count: Int, seconds: Double = 10, matching: @Sendable (Received) -> Bool) async -> [Received] {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                let found = events.filter(matching)
                if found.count >= count { return found }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return events.filter(matching)
        }
    }

    @Test(arguments: TestEngines.all)
    func aSubscriberSeesLiveChangesAndReplaysWhatItMissed(engine: DatabaseEngine) async throws {
        try await Self.withLiveGroup(engine) { client, port, groupID, ana, bea, workout in
            let outsider = try await client.signUp()
            let anaStream = Subscriber()
            let outsiderStream = Subscriber()
            await anaStream.start(port: port, token: ana.accessToken)
            await outsiderStream.start(port: port, token: outsider.accessToken)
            try await Task.sleep(for: .milliseconds(300))

            try await ChallengeTests.log(client, bea, workout)
            let live = await anaStream.waitFor(1) { $0.type == "leaderboard" && $0.data.contains("\"checkIns\"") }
            #expect(live.count == 1)
            #expect(live.first?.data.contains(bea.id) == true)
            #expect(live.first?.data.contains(groupID) == false)  // the board, not the group, is named

            // Disconnected, Ana misses two changes; reconnecting with Last-Event-ID brings both.
            let lastSeen = try #require(await anaStream.events.last?.id)
            await anaStream.stop()
            try await ChallengeTests.log(client, bea, workout)
            try await ChallengeTests.log(client, bea, workout)
            let again = Subscriber()
            await again.start(port: port, token: ana.accessToken, lastEventID: lastSeen)
            let replayed = await again.waitFor(2) { $0.type == "leaderboard" && $0.data.contains("\"checkIns\"") }
            #expect(replayed.count == 2)
            #expect(replayed.map(\.data).last?.contains("\"value\":3") == true)
            let ids = replayed.compactMap { Int64($0.id) }
            #expect(ids == ids.sorted() && ids.first.map { $0 > Int64(lastSeen)! } == true)

            // Ana's own workout moves the board again, live on the new stream.
            try await ChallengeTests.log(client, ana, workout)
            #expect(await again.waitFor(3) { $0.type == "leaderboard" && $0.data.contains("\"checkIns\"") }.count == 3)

            // Someone outside the group never sees its events.
            #expect(await outsiderStream.events.filter { $0.type == "leaderboard" }.isEmpty)
            await again.stop()
            await outsiderStream.stop()
            #expect(try await client.json(.get, "/v1/events", token: ana.accessToken, headers: ["Last-Event-ID": "yesterday"]).status == .badRequest)
        }
    }
}

extension EventStreamTests {
    /// A live application with a group of Ana (its admin) and Bea and the catalog's fixture workout.
    static func withLiveGroup(
        _ engine: DatabaseEngine,
        _ test: @escaping @Sendable (any TestClientProtocol, Int, String, TestAccount, TestAccount, String) async throws -> Void
    ) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let app = try await buildApplication(configuration: .testing(testDatabase), logger: TestDatabase.logger)
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let (groupID, members, workout) = try await ChallengeTests.group(client, testDatabase, members: 2)
                try await test(client, port, groupID, members[0], members[1], workout)
            }
        }
    }
}

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
            try await Task.sleep(for: .milliseconds(500))
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
            try await Task.sleep(for: .milliseconds(500))
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

/// Sync nudges on the realtime stream.
@Suite struct SyncNudgeTests {
    @Test(arguments: TestEngines.all)
    func aWriteNudgesTheWritersOtherDevicesOncePerTransaction(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let app = try await buildApplication(configuration: .testing(testDatabase), logger: TestDatabase.logger)
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let (_, members, workout) = try await ChallengeTests.group(client, testDatabase, members: 2)
                let device = EventStreamTests.Subscriber()
                let other = EventStreamTests.Subscriber()
                await device.start(port: port, token: members[1].accessToken)
                await other.start(port: port, token: members[0].accessToken)
                try await Task.sleep(for: .milliseconds(300))
                try await ChallengeTests.log(client, members[1], workout)
                let nudges = await device.waitFor(1) { $0.type == "sync" && $0.data.contains("cursor") }
                #expect(nudges.count == 1)
                #expect(await other.waitFor(1) { $0.type == "leaderboard" }.isEmpty == false)
                #expect(await other.events.filter { $0.type == "sync" }.isEmpty)
                await device.stop()
                await other.stop()
            }
        }
    }
}

extension TestClientProtocol {
    /// ``json(_:_:body:token:)`` with extra headers.
    func json(_ method: HTTPRequest.Method, _ uri: String, token: String?, headers extra: [String: String]) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
        return try await execute(uri: uri, method: method, headers: headers, body: nil)
    }
}
