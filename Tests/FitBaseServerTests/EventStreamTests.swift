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
        /// Whether the stream is live: it sends its `retry:` once it has replayed what was asked and anything
        /// written from then on reaches it.
        private(set) var opened = false
        /// Whether the stream has ended (the server closed it, or the request failed).
        private(set) var finished = false
        private var task: Task<Void, Never>?

        private var generation = 0

        func start(port: Int, token: String, lastEventID: String? = nil) {
            (opened, finished) = (false, false)
            generation += 1
            let generation = self.generation
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
                            if block.hasPrefix("retry:"), generation == self.generation { self.opened = true }
                            self.parse(block)
                        }
                    }
                } catch {}
                if generation == self.generation { self.finished = true }
            }
        }

        /// Waits (up to `seconds`) until `condition` holds of the subscriber.
        func waitUntil(seconds: Double = 10, _ condition: @Sendable (isolated Subscriber) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if condition(self) { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return condition(self)
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
            #expect(await anaStream.waitUntil { $0.opened })
            #expect(await outsiderStream.waitUntil { $0.opened })

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

/// Streams are bounded: per account (a new one ends the account's oldest) and per instance (503 `busy`).
@Suite struct EventStreamLimitTests {
    @Test(arguments: TestEngines.all)
    func anAccountsOldestStreamEndsAndAFullInstanceRefusesMore(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(live: true, configure: {
            $0.social.maxStreamsPerUser = 2
            $0.social.maxStreams = 2
        })) { client, app in
            let port = try #require(client.port)
            let ana = try await client.signUp()
            let bea = try await client.signUp()
            let streams = [EventStreamTests.Subscriber(), EventStreamTests.Subscriber(), EventStreamTests.Subscriber()]
            for stream in streams {
                await stream.start(port: port, token: ana.accessToken)
                #expect(await stream.waitUntil { $0.opened })
            }
            // Ana's third stream ended her first; the other two stay open.
            #expect(await streams[0].waitUntil { $0.finished })
            let stillOpen = [await streams[1].finished, await streams[2].finished]
            #expect(stillOpen == [false, false])

            // The instance holds two streams: Bea is refused, with a time to come back.
            let refused = try await client.json(.get, "/v1/events", token: bea.accessToken)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers[.retryAfter] != nil)
            try expectProblem(refused, .busy)

            await streams[2].stop()
            await streams[1].stop()
        }
    }
}

/// Several instances on one PostgreSQL database hear each other's events as they commit.
@Suite struct CrossInstanceEventTests {
    /// An event committed through instance A reaches a stream on instance B. No stream reads the log on a timer, so only
    /// A's notification can bring it. When B's listening connection is killed, what A commits meanwhile arrives once B
    /// listens again, once each.
    @Test(.enabled(if: SharedKeysTests.postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func anEventCommittedOnOneInstanceReachesStreamsOnAnother() async throws {
        try await TestDatabase.with(.postgres, migrated: true) { testDatabase in
            let masterKey = SharedKeysTests.randomMasterKey()
            try await SharedKeysTests.withDataDirectories(1) { directories in
                try await withApp(on: testDatabase, options: .instance(testDatabase.dataDirectory, masterKey: masterKey, live: true)) { a, _ async throws in
                    try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey, live: true)) { b, _ async throws in
                        let portB = try #require(b.port)
                        let (_, members, workout) = try await ChallengeTests.group(a, testDatabase, members: 2)
                        let (ana, bea) = (members[0], members[1])
                        let isBoard: @Sendable (EventStreamTests.Received) -> Bool = { $0.type == "leaderboard" && $0.data.contains("\"checkIns\"") }
                        let stream = EventStreamTests.Subscriber()
                        await stream.start(port: portB, token: ana.accessToken)
                        #expect(await stream.waitUntil { $0.opened })

                        try await ChallengeTests.log(a, bea, workout)
                        #expect(await stream.waitFor(1, matching: isBoard).count == 1)

                        // Every instance's listening connection dies (B's among them); A then commits two more.
                        #expect(try await Self.terminateListeners(testDatabase) >= 2)
                        try await Task.sleep(for: .milliseconds(200))
                        try await ChallengeTests.log(a, bea, workout)
                        try await ChallengeTests.log(a, bea, workout)
                        let delivered = await stream.waitFor(3, matching: isBoard)
                        #expect(delivered.count == 3)
                        #expect(Set(delivered.map(\.id)).count == delivered.count)
                        #expect(delivered.last?.data.contains("\"value\":3") == true)
                        await stream.stop()
                    }
                }
            }
        }
    }

    /// Ends every connection of the test database that is listening for events; how many there were.
    static func terminateListeners(_ testDatabase: TestDatabase) async throws -> Int {
        let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
        do {
            let ended = try await database.withConnection { db in
                try await db.raw(
                    "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen%' AND pid <> pg_backend_pid()"
                ).all().count
            }
            try await database.shutdown()
            return ended
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}

extension EventStreamTests {
    /// A live application with a group of Ana (its admin) and Bea and the catalog's fixture workout.
    static func withLiveGroup(
        _ engine: DatabaseEngine,
        _ test: @escaping @Sendable (any TestClientProtocol, Int, String, TestAccount, TestAccount, String) async throws -> Void
    ) async throws {
        try await withApp(engine, options: .init(live: true)) { client, app in
            let port = try #require(client.port)
            let (groupID, members, workout) = try await ChallengeTests.group(client, app.testDatabase, members: 2)
            try await test(client, port, groupID, members[0], members[1], workout)
        }
    }
}
