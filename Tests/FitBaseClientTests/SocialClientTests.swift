import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// The SDK's realtime view of a group against a live server.
@Suite struct SocialClientTests {
    @Test(arguments: TestEngines.all)
    func aLeaderboardObservedOnOneDeviceFollowsAnotherMembersWorkouts(engine: DatabaseEngine) async throws {
        try await SyncEngineTests.withServer(engine) { server, _, workout in
            let ana = FitBaseClient(serverURL: server)
            let bea = FitBaseClient(serverURL: server)
            try await ana.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            try await bea.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            let group = try await ana.api.createGroup(body: .json(.init(name: "Crew"))).created.body.json
            let invite = try await ana.api.createGroupInvite(path: .init(groupId: group.id)).created.body.json
            _ = try await bea.api.acceptInvite(path: .init(token: invite.token)).ok.body.json

            var boards = ana.observeLeaderboard(groupId: try #require(GroupID(group.id)), type: .checkIns).makeAsyncIterator()
            let first = try #require(try await boards.next())
            #expect(first.entries.isEmpty && first.challenge._type == .checkIns)
            try await Task.sleep(for: .milliseconds(300))  // the stream is connected

            let logged = try await bea.api.logWorkout(body: .json(.init(workoutId: workout.id, completedAt: Date.now.addingTimeInterval(-60), duration: 25)))
            _ = try logged.created.body.json
            let beaID = try #require(await bea.currentUserID())
            let updated = try #require(try await boards.next())
            #expect(updated.entries.map(\.userId) == [beaID.description] && updated.entries.first?.value == 1 && updated.entries.first?.rank == 1)
            #expect(updated.currentUserEntry == nil)

            // The raw stream names the change and resumes after a given id.
            var events = ana.events(resumingAfter: "0").makeAsyncIterator()
            let replayed = try #require(try await events.next())
            #expect(replayed.kind == .leaderboard(challengeID: try #require(ChallengeID(updated.challenge.id)), type: .checkIns) || {
                if case .notification = replayed.kind { return true } else { return false }
            }())
        }
    }

    /// When the session ends on the server, the streams end by throwing a typed error instead of retrying for ever.
    @Test(arguments: TestEngines.all)
    func aStreamEndsWithATypedErrorWhenTheSessionEnds(engine: DatabaseEngine) async throws {
        try await SyncEngineTests.withServer(engine) { server, _, _ in
            let ana = FitBaseClient(serverURL: server)
            try await ana.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            let group = try await ana.api.createGroup(body: .json(.init(name: "Crew"))).created.body.json
            var boards = ana.observeLeaderboard(groupId: try #require(GroupID(group.id)), type: .streak).makeAsyncIterator()
            #expect(try await boards.next()?.challenge._type == .streak)
            try await Task.sleep(for: .milliseconds(300))  // the stream is connected
            // The session ends on the server (this device's tokens stay): the stream is closed, and connecting again
            // finds no session to refresh.
            _ = try await ana.api.signOut().noContent
            do {
                while try await boards.next() != nil {}
                Issue.record("the stream ended without an error")
            } catch let error as FitBaseError {
                if case .transport = error { Issue.record("a transport error, which would be retried: \(error)") }
            }
        }
    }
}
