import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The SDK's session observation, account deletion, sync on server events, reachability reports and offline expiry of
/// the cached entitlement, against a live server.
@Suite struct ClientAdditionsTests {
    @Test func sessionStatesFollowSignInSignOutAndDeletion() async throws {
        try await SyncEngineTests.withServer(.sqlite) { server, _, _ in
            let client = FitBaseClient(serverURL: server)
            var states = await client.sessionStates().makeAsyncIterator()
            #expect(await states.next() == .signedOut(.notSignedIn))
            let user = try await client.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            #expect(await states.next() == .signedIn(userID: user.id))
            try await client.signOut()
            #expect(await states.next() == .signedOut(.signedOut))
            let email = SyncEngineTests.email()
            let second = try await client.signUp(email: email, password: SyncEngineTests.password)
            #expect(await states.next() == .signedIn(userID: second.id))
            try await client.deleteAccount()
            #expect(await states.next() == .signedOut(.accountDeleted))
            await #expect(throws: FitBaseError.self) { try await client.signIn(email: email, password: SyncEngineTests.password) }
        }
    }

    @Test func theEngineFollowsSyncEvents() async throws {
        try await SyncEngineTests.withServer(.sqlite) { server, _, _ in
            let email = SyncEngineTests.email()
            let phone = try SyncEngineTests.Device(server)
            let tablet = try SyncEngineTests.Device(server)
            try await phone.client.signUp(email: email, password: SyncEngineTests.password)
            try await tablet.client.signIn(email: email, password: SyncEngineTests.password)
            try await tablet.engine.syncNow()
            await tablet.engine.follow(serverEvents: true)
            try await Task.sleep(for: .milliseconds(300))

            let first = SyncEngineTests.plan("Announced")
            try await phone.engine.plans.save(first)
            try await phone.engine.syncNow()
            #expect(await eventually { try await tablet.engine.plans.get(first.id) != nil }, "no pull on the sync event")

            await tablet.engine.stop()
        }
    }

    /// A started engine (periodic sync far off, no server events) pulls what another device wrote while the network
    /// was away as soon as reachability reports it back, and pushes what it queued meanwhile. (Workout logs: a free
    /// account keeps one plan, so further plans would be refused.)
    @Test func theEnginePullsWhenTheNetworkComesBack() async throws {
        try await SyncEngineTests.withServer(.sqlite) { server, _, workout in
            let email = SyncEngineTests.email()
            let phone = try SyncEngineTests.Device(server)
            let tablet = try SyncEngineTests.Device(server)
            try await phone.client.signUp(email: email, password: SyncEngineTests.password)
            try await tablet.client.signIn(email: email, password: SyncEngineTests.password)
            let network = ManualReachability(reachable: true)
            await tablet.engine.start()
            await tablet.engine.follow(serverEvents: false, reachability: network)
            #expect(await eventually { await tablet.engine.status.lastSyncedAt != nil }, "no first sync")
            let logs = { try await tablet.engine.history.history().count }

            // The tablet loses the network and its own log fails to sync; meanwhile the phone logs one.
            network.setReachable(false)
            tablet.network.offline = true
            try await tablet.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-7200), duration: 20)
            try await phone.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-3600), duration: 30)
            try await phone.engine.syncNow()
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await logs() == 1)
            #expect(await tablet.engine.status.pendingCount == 1)
            tablet.network.offline = false
            network.setReachable(true)
            #expect(await eventually { try await logs() == 2 }, "no pull when the network came back")
            #expect(await eventually { await tablet.engine.status.pendingCount == 0 }, "no push when the network came back")

            // Again, after a flap that ends reachable: every return pulls.
            try await phone.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-600), duration: 40)
            try await phone.engine.syncNow()
            network.setReachable(false)
            network.setReachable(true)
            #expect(await eventually { try await logs() == 3 }, "no pull after the second return")
            await tablet.engine.stop()
        }
    }

    @Test func manualReachabilityReportsEveryChange() async {
        let network = ManualReachability(reachable: true)
        var updates = network.updates().makeAsyncIterator()
        network.setReachable(false)
        network.setReachable(true)
        #expect(await updates.next() == true)
        #expect(await updates.next() == false)
        #expect(await updates.next() == true)
        #expect(network.isReachable)
    }

    @Test func aCachedEntitlementPastItsExpiryGrantsNothing() {
        let now = Date()
        let active = Entitlement(tier: .premium, status: .active, expiresAt: now.addingTimeInterval(60), willRenew: true, source: .appStore)
        #expect(active.effective(at: now) == active)
        let lapsed = active.effective(at: now.addingTimeInterval(61))
        #expect(lapsed.tier == .free && lapsed.status == .expired)
        let grace = Entitlement(tier: .pro, status: .gracePeriod, expiresAt: now, willRenew: true, source: .appStore)
        #expect(grace.effective(at: now.addingTimeInterval(86_400)).tier == .pro)
        #expect(grace.effective(at: now.addingTimeInterval(17 * 86_400)).tier == .free)
        #expect(Entitlement.free.effective(at: now) == .free)
        let snapshot = Entitlements.Snapshot(
            entitlement: active, features: [.premiumContent: .init(allowed: true, requiredTier: .premium), .basicPlans: .init(allowed: true, requiredTier: .free)],
            fetchedAt: now, userID: UserID())
        let expired = snapshot.effective(at: now.addingTimeInterval(120))
        #expect(expired.features[.premiumContent]?.allowed == false && expired.features[.basicPlans]?.allowed == true)
    }
}
