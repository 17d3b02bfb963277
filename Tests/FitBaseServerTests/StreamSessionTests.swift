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

/// A stream lives as long as its session and its access token.
@Suite struct StreamSessionTests {
    @Test(arguments: TestEngines.all)
    func aStreamEndsWithItsSession(engine: DatabaseEngine) async throws {
        try await EventStreamTests.withLiveGroup(engine) { client, port, groupID, ana, bea, workout in
            let phone = try await client.signIn(ana, device: "phone")
            let tablet = try await client.signIn(ana, device: "tablet")
            let streams = (laptop: EventStreamTests.Subscriber(), phone: EventStreamTests.Subscriber(), tablet: EventStreamTests.Subscriber())
            await streams.laptop.start(port: port, token: ana.accessToken)
            await streams.phone.start(port: port, token: phone.accessToken)
            await streams.tablet.start(port: port, token: tablet.accessToken)
            for stream in [streams.laptop, streams.phone, streams.tablet] { #expect(await stream.waitUntil { $0.opened }) }

            // Revoking the phone's session (from the laptop) ends the phone's stream only.
            let phoneSession = try AccessMatrixTests.sessionID(of: phone)
            #expect(try await client.json(.delete, "/v1/me/sessions/\(phoneSession)", token: ana.accessToken).status == .noContent)
            #expect(await streams.phone.waitUntil { $0.finished })
            // A refresh token presented twice ends its session: the tablet's stream with it.
            #expect(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": tablet.refreshToken]).status == .ok)
            #expect(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": tablet.refreshToken]).status == .unauthorized)
            #expect(await streams.tablet.waitUntil { $0.finished })
            // The laptop is still told what happens; then it signs out and its stream ends.
            try await ChallengeTests.log(client, bea, workout)
            #expect(await streams.laptop.waitFor(1) { $0.type == "leaderboard" }.isEmpty == false)
            #expect(await streams.laptop.finished == false)
            #expect(try await client.json(.post, "/v1/auth/signout", token: ana.accessToken).status == .noContent)
            #expect(await streams.laptop.waitUntil { $0.finished })
            // Control events never reach a client.
            #expect(await streams.laptop.events.allSatisfy { !EventLog.controlTypes.contains($0.type) })

            // Deleting an account ends its streams and takes the events naming it along.
            let beas = EventStreamTests.Subscriber()
            await beas.start(port: port, token: bea.accessToken, lastEventID: "0")
            #expect(await beas.waitFor(1) { $0.type == "leaderboard" }.isEmpty == false)
            #expect(try await client.json(.delete, "/v1/me", token: bea.accessToken).status == .noContent)
            #expect(await beas.waitUntil { $0.finished })
            let carl = try await client.signUp()
            let token = try await GroupReplayTests.invite(client, groupID, by: try await client.signIn(ana))
            try #require(try await client.json(.post, "/v1/invites/\(token)/accept", token: carl.accessToken).status == .ok)
            let replay = EventStreamTests.Subscriber()
            await replay.start(port: port, token: carl.accessToken, lastEventID: "0")
            #expect(await replay.waitUntil { $0.opened })
            try await Task.sleep(for: .milliseconds(300))
            #expect(await replay.events.allSatisfy { !$0.data.contains(bea.id) })
            await replay.stop()
        }
    }

    @Test func aStreamEndsWhenItsTokenExpires() async throws {
        let (body, output) = AsyncStream<ByteBuffer>.makeStream()
        let now = Date.now
        let subscriber = EventSubscriber(user: UserID(), session: SessionID(), expiresAt: now.addingTimeInterval(30), resumingAfter: 0, output: output)
        subscriber.tick(now: now, clock: .now + .seconds(16))  // quiet for longer than the heartbeat: a keep-alive
        subscriber.tick(now: now.addingTimeInterval(31), clock: .now)  // past the token's expiry: the end
        var received = ""
        for await chunk in body { received += String(buffer: chunk) }
        #expect(received == ": keep-alive\n\n")
    }
}

/// Sync nudges on the realtime stream.
@Suite struct SyncNudgeTests {
    @Test(arguments: TestEngines.all)
    func aWriteNudgesTheWritersOtherDevicesOncePerTransaction(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(live: true)) { client, app in
            let port = try #require(client.port)
            let (_, members, workout) = try await ChallengeTests.group(client, app.testDatabase, members: 2)
            let device = EventStreamTests.Subscriber()
            let other = EventStreamTests.Subscriber()
            await device.start(port: port, token: members[1].accessToken)
            await other.start(port: port, token: members[0].accessToken)
            #expect(await device.waitUntil { $0.opened })
            #expect(await other.waitUntil { $0.opened })
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

extension TestClientProtocol {
    /// ``json(_:_:body:token:)`` with extra headers.
    func json(_ method: HTTPRequest.Method, _ uri: String, token: String?, headers extra: [String: String]) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
        return try await execute(uri: uri, method: method, headers: headers, body: nil)
    }
}

/// Streams cannot be told to skip what comes, and end with their session even when its event never arrives.
@Suite struct EventStreamBoundsTests {
    @Test(arguments: TestEngines.all)
    func aStreamResumesOnlyFromEventsThatExistAndEndsWithItsSession(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(live: true, configure: { $0.streamSessionCheck = .milliseconds(300) })) { client, app in
            let port = try #require(client.port)
            let ana = try await client.signUp()
            // An id past the newest event would have the stream ignore everything until the ids caught up with it.
            let ahead = try await client.json(.get, "/v1/events", token: ana.accessToken, headers: ["Last-Event-ID": "9000000000"])
            #expect(ahead.status == .badRequest)
            try expectProblem(ahead, .invalidRequest)
            // A session ended by a hand-edited row (no event in the log): the stream ends at the next check.
            let stream = EventStreamTests.Subscriber()
            await stream.start(port: port, token: ana.accessToken)
            #expect(await stream.waitUntil { $0.opened })
            try await app.database.transaction { db in
                try await db.update("sessions").set("revoked_at", to: Date.storageNow).where("user_id", .equal, try #require(UUID(uuidString: ana.id))).run()
            }
            #expect(await stream.waitUntil { $0.finished })
            await stream.stop()
        }
    }
}
