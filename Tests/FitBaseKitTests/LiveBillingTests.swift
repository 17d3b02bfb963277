import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

/// The entitlement is current from launch (issue 34, item 1) and the store's transactions reach the server before
/// they are finished (item 8): the live container against a real server on a socket, no paywall screen opened.
@Suite struct LiveBillingTests {
    @Test func aFreshInstallKnowsThePaidTierAfterSignInWithoutAPaywall() async throws {
        try await LiveDevice.withServer { server, database in
            let phone = try LiveDevice(server: server)
            defer { phone.remove() }
            let user = try await phone.signUp()
            try await database.grant(.premium, toUser: user.id.description)

            let tablet = try LiveDevice(server: server)
            defer { tablet.remove() }
            let billing = tablet.dependencies.billing
            #expect(await billing.requiresUpgrade(for: .premiumContent) == .premium)
            await #expect(throws: KitError.offline) { try await billing.entitlement(policy: .cacheOnly) }
            _ = try await tablet.dependencies.auth.signIn(email: try #require(user.email), password: LiveDevice.password)
            #expect(await billing.requiresUpgrade(for: .premiumContent) == nil)
            #expect(await billing.requiresUpgrade(for: .advancedProgression) == nil)
            let cached = try await billing.entitlement(policy: .cacheOnly)
            #expect(cached.value.entitlement.tier == .premium && cached.value.entitlement.source == .promotional)
            #expect(tablet.network.count("getSubscription") == 1 && tablet.network.count("getFeatures") == 1)
        }
    }

    @Test func aLaunchAnswersFromTheCachedEntitlementAndRevalidatesItWithA304() async throws {
        try await LiveDevice.withServer { server, database in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let user = try await device.signUp()
            try await database.grant(.pro, toUser: user.id.description)
            #expect(try await device.dependencies.billing.entitlement(policy: .revalidate).value.entitlement.tier == .pro)

            let relaunched = try device.relaunch()
            let billing = relaunched.dependencies.billing
            // From the cache file at once, whatever the network is doing.
            #expect(try await billing.entitlement(policy: .cacheOnly).value.entitlement.tier == .pro)
            #expect(await billing.requiresUpgrade(for: .customPlans) == nil)
            // Then asked again with the cached ETags: unchanged, both answers are 304s.
            #expect(await FitBaseTestSupport.eventually { relaunched.network.statuses("getSubscription") == [304] && relaunched.network.statuses("getFeatures") == [304] })
            #expect(await billing.requiresUpgrade(for: .customPlans) == nil)
            #expect(await billing.requiresUpgrade(for: .premiumContent) == .premium)
        }
    }

    @Test func aPurchaseOnAnotherDeviceReachesThisOneThroughTheSubscriptionEvent() async throws {
        try await LiveDevice.withServer(billing: LiveDevice.storeKitTesting) { server, _ in
            let phone = try LiveDevice(server: server)
            defer { phone.remove() }
            let user = try await phone.signUp()
            let tablet = try LiveDevice(server: server)
            defer { tablet.remove() }
            _ = try await tablet.dependencies.auth.signIn(email: try #require(user.email), password: LiveDevice.password)
            var updates = await phone.dependencies.billing.entitlementUpdates().makeAsyncIterator()
            #expect(await updates.next()?.entitlement.tier == .free)
            // The phone's event stream is open (the server registers a stream before it answers).
            #expect(await FitBaseTestSupport.eventually { phone.network.statuses("streamEvents").contains(200) })
            let subscriptionReads = phone.network.count("getSubscription")

            await tablet.store.set(.purchased(try XcodeTransactions.transaction("com.train.premium.monthly", for: user.id)))
            guard case .purchased(let bought) = try await tablet.dependencies.billing.purchase(productID: "com.train.premium.monthly") else {
                Issue.record("the tablet's purchase did not go through")
                return
            }
            #expect(bought.entitlement.tier == .premium)

            #expect(await updates.next()?.entitlement.tier == .premium)
            #expect(await phone.dependencies.billing.requiresUpgrade(for: .premiumContent) == nil)
            #expect(phone.network.count("getSubscription") == subscriptionReads + 1)
        }
    }

    @Test func comingToTheForegroundRevalidatesTheEntitlement() async throws {
        try await LiveDevice.withServer { @MainActor server, database in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let user = try await device.signUp()
            let app = AppModel(dependencies: device.dependencies)
            await app.start()
            defer { app.stop() }
            let reads = device.network.count("getSubscription")
            try await database.grant(.premium, toUser: user.id.description)
            #expect(await device.dependencies.billing.requiresUpgrade(for: .premiumContent) == .premium)
            await app.becameActive()
            #expect(device.network.count("getSubscription") == reads + 1)
            #expect(await device.dependencies.billing.requiresUpgrade(for: .premiumContent) == nil)

            await device.dependencies.auth.signOut()
            await app.becameActive()
            #expect(device.network.count("getSubscription") == reads + 1)
        }
    }

    @Test func theStoresTransactionsAreFinishedOnlyOnceTheServerTookThem() async throws {
        try await LiveDevice.withServer(billing: LiveDevice.storeKitTesting) { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let user = try await device.signUp()
            let billing = device.dependencies.billing

            // Bought: sent, then finished.
            let bought = try XcodeTransactions.transaction("com.train.pro.monthly", for: user.id)
            await device.store.set(.purchased(bought))
            guard case .purchased(let pro) = try await billing.purchase(productID: "com.train.pro.monthly") else {
                Issue.record("the purchase did not go through")
                return
            }
            #expect(pro.entitlement.tier == .pro)
            #expect(await device.store.finished == [bought.id])
            #expect(await device.store.unfinished.isEmpty)
            #expect(await billing.requiresUpgrade(for: .customPlans) == nil)

            // Delivered while offline (an Ask to Buy approval): the server did not get it, so it stays unfinished…
            device.network.offline = true
            let approved = try XcodeTransactions.transaction("com.train.premium.monthly", for: user.id)
            await device.store.deliver(approved)
            #expect(await FitBaseTestSupport.eventually { device.network.count("submitAppStoreTransaction") >= 2 })
            #expect(await device.store.unfinished == [approved])
            #expect(await device.store.finished == [bought.id])
            #expect(await billing.requiresUpgrade(for: .premiumContent) == .premium)
            // …and the next refresh (the foreground) sends it, and finishes it.
            device.network.offline = false
            await billing.refreshEntitlement()
            #expect(await device.store.finished == [bought.id, approved.id])
            #expect(await device.store.unfinished.isEmpty)
            #expect(await billing.requiresUpgrade(for: .premiumContent) == nil)

            // Delivered online (a renewal): taken as it arrives.
            let renewal = try XcodeTransactions.transaction("com.train.premium.monthly", for: user.id, originalID: approved.id)
            await device.store.deliver(renewal)
            #expect(await FitBaseTestSupport.eventually { await device.store.finished.count == 3 })
            #expect(await device.store.unfinished.isEmpty)

            // One the server refuses (bought for another account) stays unfinished, for that account to take.
            let someoneElses = try XcodeTransactions.transaction("com.train.pro.monthly", for: UserID())
            await device.store.deliver(someoneElses)
            #expect(await FitBaseTestSupport.eventually { device.network.statuses("submitAppStoreTransaction").last == 403 })
            #expect(await device.store.unfinished == [someoneElses])
        }
    }

    @Test func aTransactionDeliveredWhileSignedOutIsSentAtTheNextSignIn() async throws {
        try await LiveDevice.withServer(billing: LiveDevice.storeKitTesting) { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let user = try await device.signUp()
            await device.dependencies.auth.signOut()
            let renewal = try XcodeTransactions.transaction("com.train.premium.monthly", for: user.id)
            await device.store.deliver(renewal)
            #expect(await device.store.unfinished == [renewal])
            #expect(device.network.count("submitAppStoreTransaction") == 0)

            _ = try await device.dependencies.auth.signIn(email: try #require(user.email), password: LiveDevice.password)
            #expect(await device.store.finished == [renewal.id])
            #expect(await device.store.unfinished.isEmpty)
            #expect(await device.dependencies.billing.requiresUpgrade(for: .premiumContent) == nil)
        }
    }
}
