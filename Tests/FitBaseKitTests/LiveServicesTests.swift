import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The live services against a real server on a socket: success, failure, offline (a transport that fails) and the
/// cache-first reads.
@Suite struct LiveServicesTests {
    @Test func accountsSignUpProfileConsentsExportAndSignOut() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let services = device.dependencies
            #expect(await services.auth.currentState() == .signedOut(.notSignedIn))
            var states = await services.auth.stateUpdates().makeAsyncIterator()
            #expect(await states.next() == .signedOut(.notSignedIn))
            let user = try await device.signUp()
            #expect(await states.next() == .signedIn(userID: user.id))
            #expect(await services.auth.currentState() == .signedIn(userID: user.id))

            var profile = try await services.profile.profile()
            #expect(profile.id == user.id && profile.profile.displayName == "Kit")
            profile.profile.fitnessLevel = .advanced
            profile.profile.averageCycleLength = 30
            let saved = try await services.profile.saveProfile(profile.profile)
            #expect(saved.profile.fitnessLevel == .advanced && saved.profile.averageCycleLength == 30)
            #expect(try await services.profile.setShareWorkoutData(false).profile.shareWorkoutData == false)
            // The push settings are part of the profile both ways (they were dropped on the way in and out).
            profile.profile.notificationPreferences.rankChange = false
            profile.profile.notificationPreferences.quietHoursStart = "22:00"
            profile.profile.notificationPreferences.quietHoursEnd = "07:00"
            let withPreferences = try await services.profile.saveProfile(profile.profile).profile.notificationPreferences
            #expect(withPreferences == profile.profile.notificationPreferences)
            #expect(try await services.profile.profile().profile.notificationPreferences == profile.profile.notificationPreferences)
            let pushes = FitBaseClient(serverURL: server)
            try await pushes.signIn(email: try #require(user.email), password: LiveDevice.password)
            #expect(try await pushes.notificationPreferences().preferences == profile.profile.notificationPreferences)
            profile.profile.averageCycleLength = 99
            let invalid = await #expect(throws: KitError.self) { try await services.profile.saveProfile(profile.profile) }
            #expect(invalid?.kind == .invalidInput)

            let consent = try await services.profile.recordConsent(.healthData, version: "2026-01", granted: true)
            #expect(consent.granted && consent.kind == .healthData)
            #expect(try await services.profile.consents().map(\.kind).contains(.healthData))
            let export = try await services.profile.exportData(into: device.directory)
            #expect(String(decoding: try Data(contentsOf: export.fileURL), as: UTF8.self).contains(user.id.description))
            #expect(export.fileURL.lastPathComponent.hasPrefix("fitbase-export-") && export.bytes > 0)

            let wrong = await #expect(throws: KitError.self) { try await services.profile.changePassword(current: "not it at all", new: "another good password") }
            #expect(wrong?.kind == .invalidCredentials)

            await services.auth.signOut()
            #expect(await states.next() == .signedOut(.signedOut))
            let signedOut = await #expect(throws: KitError.self) { try await services.profile.profile() }
            #expect(signedOut?.kind == .notSignedIn)
            // Signing up and out are the screens' events (one source per event): the services report none of them.
            #expect(device.analytics.events.isEmpty)
        }
    }

    @Test func signInFailuresAreTypedAndOfflineIsOffline() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            _ = try await device.signUp()
            await device.dependencies.auth.signOut()
            let profileEmail = "kit-missing@example.com"
            let wrong = await #expect(throws: KitError.self) { try await device.dependencies.auth.signIn(email: profileEmail, password: "wrong password here") }
            #expect(wrong?.kind == .invalidCredentials)
            device.network.offline = true
            let offline = await #expect(throws: KitError.self) { try await device.dependencies.auth.signIn(email: profileEmail, password: "x") }
            #expect(offline?.kind == .offline && offline?.isRetryable == true)
            device.network.offline = false
            try await device.dependencies.auth.requestPasswordReset(email: profileEmail)
            let badToken = await #expect(throws: KitError.self) { try await device.dependencies.auth.resetPassword(token: "nope", newPassword: "a new password") }
            #expect(badToken?.kind == .invalidInput)
            let badVerify = await #expect(throws: KitError.self) { try await device.dependencies.auth.verifyEmail(token: "nope") }
            #expect(badVerify?.kind == .invalidInput)
        }
    }

    @Test func theServerEndingTheSessionIsObserved() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let email = "ended-\(UUID().uuidString.prefix(8))@example.com"
            let user = try await device.dependencies.auth.signUp(email: email, password: LiveDevice.password, displayName: nil)
            var states = await device.dependencies.auth.stateUpdates().makeAsyncIterator()
            #expect(await states.next() == .signedIn(userID: user.id))
            // Another device changes the password: every other session ends.
            let other = FitBaseClient(serverURL: server)
            try await other.signIn(email: email, password: LiveDevice.password)
            try await other.changePassword(current: LiveDevice.password, new: "a brand new password")
            let ended = await #expect(throws: KitError.self) { try await device.dependencies.profile.profile() }
            #expect(ended?.kind == .notSignedIn)
            #expect(await states.next() == .signedOut(.sessionEnded))
        }
    }

    @Test func deletingTheAccountReauthenticatesErasesTheDeviceAndSignsOut() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            _ = try await device.dependencies.cycle.logPeriod(Period(start: CalendarDay(Date(), in: .gmt).adding(days: -3), notes: "MARKER-DELETE-NOTE"))
            #expect(try await device.dependencies.cycle.periods().count == 1)
            let wrong = await #expect(throws: KitError.self) { try await device.dependencies.profile.deleteAccount(.password("not the password")) }
            #expect(wrong?.kind == .invalidCredentials)
            var states = await device.dependencies.auth.stateUpdates().makeAsyncIterator()
            _ = await states.next()
            try await device.dependencies.profile.deleteAccount(.password(LiveDevice.password))
            #expect(await states.next() == .signedOut(.accountDeleted))
            #expect(try await device.dependencies.cycle.periods().isEmpty)
            #expect(try !device.storeBytes().contains(Data("MARKER-DELETE-NOTE".utf8)))
        }
    }

    @Test func theCatalogIsCacheFirstAndOpensOffline() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let catalog = device.dependencies.catalog
            let first = try await catalog.workouts(matching: .all, page: .first(3), policy: .cacheFirst)
            #expect(first.source == .server && first.value.items.count == 3 && first.value.hasMore)
            let requests = device.network.count("listWorkouts")
            let again = try await catalog.workouts(matching: .all, page: .first(3), policy: .cacheFirst)
            #expect(again.source == .cache && again.value == first.value && device.network.count("listWorkouts") == requests)
            let next = try await catalog.workouts(matching: .all, page: PageRequest(cursor: first.value.nextCursor, limit: 3), policy: .cacheFirst)
            #expect(Set(next.value.items.map(\.id)).isDisjoint(with: first.value.items.map(\.id)))
            let yoga = try await catalog.workouts(matching: WorkoutFilter(types: [.yoga], search: nil, sort: .shortest), page: .first(50), policy: .revalidate)
            #expect(yoga.value.items.allSatisfy { $0.type == .yoga })
            #expect(yoga.value.items.map(\.durationMinutes) == yoga.value.items.map(\.durationMinutes).sorted())
            let featured = try await catalog.featured(policy: .cacheFirst)
            #expect(featured.value.allSatisfy { $0.isFeatured })
            let premium = try #require(try await catalog.workouts(matching: WorkoutFilter(premium: true), page: .first(1), policy: .cacheFirst).value.items.first)
            let detail = try await catalog.workout(id: premium.id, policy: .cacheFirst)
            #expect(detail.value.isVideoLocked && detail.value.requiredTier == .premium && detail.value.workout.videoURL.isEmpty)
            let missing = await #expect(throws: KitError.self) { try await catalog.workout(id: WorkoutID(), policy: .cacheFirst) }
            #expect(missing?.kind == .notFound)

            device.network.offline = true
            device.clock.advance(by: .seconds(7 * 3_600))
            let stale = try await catalog.workouts(matching: .all, page: .first(3), policy: .cacheFirst)
            #expect(stale.source == .staleCache && stale.isStale && stale.value == first.value)
            #expect(try await catalog.featured(policy: .cacheOnly).source == .staleCache)
            let never = await #expect(throws: KitError.self) {
                try await catalog.workouts(matching: WorkoutFilter(search: "never asked"), page: .first(), policy: .cacheFirst)
            }
            #expect(never?.kind == .offline)
            let cacheOnly = await #expect(throws: KitError.self) {
                try await catalog.workouts(matching: WorkoutFilter(search: "never asked"), page: .first(), policy: .cacheOnly)
            }
            #expect(cacheOnly?.kind == .offline)
        }
    }

    @Test func recommendationsAreCachedPerDayAndEnergy() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let today = try await device.dependencies.recommendations.today(energy: .low, policy: .cacheFirst)
            #expect(today.source == .server && !today.value.workouts.isEmpty && today.value.energy == .low)
            #expect(try await device.dependencies.recommendations.today(energy: .low, policy: .cacheFirst).source == .cache)
            let refreshed = try await device.dependencies.recommendations.refresh(energy: .high)
            #expect(refreshed.energy == .high)
            device.network.offline = true
            #expect(try await device.dependencies.recommendations.today(energy: .high, policy: .revalidate).source == .staleCache)
            let offline = await #expect(throws: KitError.self) { try await device.dependencies.recommendations.refresh(energy: nil) }
            #expect(offline?.kind == .offline)
        }
    }

    @Test func cycleHistoryAndPlansWorkOfflineAndSync() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let services = device.dependencies
            _ = try await services.profile.recordConsent(.analytics, version: "1", granted: true)
            let workout = try #require(try await services.catalog.workouts(matching: .all, page: .first(1), policy: .cacheFirst).value.items.first)
            _ = try await services.catalog.workout(id: workout.id, policy: .cacheFirst)  // its screen was opened: on the device now
            _ = try await services.catalog.workout(id: workout.id, policy: .cacheFirst)
            device.network.offline = true
            let today = CalendarDay(device.clock.now, in: .gmt)
            let period = try await services.cycle.logPeriod(Period(start: today.adding(days: -4), end: today.adding(days: -1), flow: .medium))
            let current = try #require(try await services.cycle.current())
            #expect(current.cycleDay == 5)
            #expect(try await services.cycle.forecast() != nil)
            let (year, month, _) = today.components
            #expect(try await services.cycle.month(year: year, month: month).days.contains { $0.isToday && $0.phase != nil })
            let conflict = await #expect(throws: KitError.self) { try await services.cycle.logPeriod(Period(start: today.adding(days: -4))) }
            #expect(conflict?.kind == .conflict)
            let future = await #expect(throws: KitError.self) { try await services.cycle.logPeriod(Period(start: today.adding(days: 2))) }
            #expect(future?.fieldErrors["startDate"] != nil)
            var moved = period
            moved.flow = .light
            #expect(try await services.cycle.updatePeriod(moved).flow == .light)

            let logged = try await services.history.log(WorkoutCompletion(
                workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 25, rating: 4, energyBefore: 2, energyAfter: 4))
            #expect(logged.isPendingSync && logged.log.workoutTitle == workout.title)
            let bad = await #expect(throws: KitError.self) {
                try await services.history.log(WorkoutCompletion(workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 0))
            }
            #expect(bad?.fieldErrors["duration"] != nil)
            #expect(try await services.history.stats().totalWorkouts == 1)
            // The chart is the `analytics` feature: a free account gets the totals only (LiveCycleTodayTests).
            #expect(try await services.history.stats().byType.isEmpty)

            let plan = TrainingPlan(name: "Offline plan", startDate: today, daysPerWeek: 3)
            _ = try await services.plans.save(plan)
            #expect(try await services.plans.plan(id: plan.id)?.name == "Offline plan")
            var statuses = await services.plans.syncStatus().makeAsyncIterator()
            _ = await statuses.next()
            let offline = await #expect(throws: KitError.self) { try await services.plans.syncNow() }
            #expect(offline?.kind == .offline)

            device.network.offline = false
            try await services.plans.syncNow()
            #expect(try await services.history.history().first?.isPendingSync == false)
            #expect(try await services.plans.plans().map(\.id) == [plan.id])
            try await services.plans.delete(id: plan.id)
            try await services.history.deleteLog(id: logged.id)
            try await services.cycle.deletePeriod(id: period.id)
            try await services.plans.syncNow()
            #expect(try await services.plans.plans().isEmpty)
            #expect(try await services.history.history().isEmpty)
            #expect(try await services.cycle.periods().isEmpty)
            let unknown = await #expect(throws: KitError.self) {
                try await services.history.log(WorkoutCompletion(workoutID: WorkoutID(), completedAt: device.clock.now, durationMinutes: 10))
            }
            #expect(unknown?.kind == .invalidInput)
            // The services report the sync of the log; completing and failing a workout are the screen's events.
            for _ in 0..<100 where !device.analytics.events.contains(.workoutSynced(succeeded: true)) { try await Task.sleep(for: .milliseconds(50)) }
            #expect(device.analytics.events.filter { $0 == .workoutSynced(succeeded: true) }.count == 1)
            // Logging a period, completing and failing a workout are the screens' events.
            #expect(device.analytics.events == [.workoutSynced(succeeded: true)])
        }
    }

    @Test func aLogTheServerRefusesIsReportedAsNotSynced() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let services = device.dependencies
            _ = try await services.profile.recordConsent(.analytics, version: "1", granted: true)
            let workout = try #require(try await services.catalog.workouts(matching: .all, page: .first(1), policy: .cacheFirst).value.items.first)
            _ = try await services.catalog.workout(id: workout.id, policy: .cacheFirst)  // its screen was opened: on the device now
            // A workout never seen cannot be logged offline: the log needs its type and title.
            device.network.offline = true
            let unseen = await #expect(throws: KitError.self) {
                try await services.history.log(WorkoutCompletion(workoutID: WorkoutID(), completedAt: device.clock.now, durationMinutes: 20))
            }
            #expect(unseen?.kind == .offline)
            // The device's clock runs an hour ahead: it takes the log, the server finds it in the future and refuses it.
            device.clock.advance(by: .seconds(3_600))
            let logged = try await services.history.log(WorkoutCompletion(workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 20))
            #expect(logged.isPendingSync && logged.log.workoutTitle == workout.title && logged.log.workoutType == workout.type)
            device.network.offline = false
            try await services.plans.syncNow()
            let synced = { device.analytics.events.filter { if case .workoutSynced = $0 { true } else { false } } }
            for _ in 0..<100 where synced().isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            #expect(synced() == [.workoutSynced(succeeded: false)])
        }
    }

    @Test func entitlementIsCachedHonoursExpiryOfflineAndPaywallsReadTheTier() async throws {
        try await LiveDevice.withServer { server, database in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let user = try await device.signUp()
            let billing = device.dependencies.billing
            #expect(await billing.requiresUpgrade(for: .customPlans) == .pro)
            // Signing up refreshed the entitlement: it is cached before any screen asks.
            let free = try await billing.entitlement(policy: .cacheFirst)
            #expect(free.source == .cache && free.value.entitlement.tier == .free)
            #expect(try await billing.entitlement(policy: .revalidate).source == .server)
            let offers = try await billing.offers()
            #expect(offers.map(\.tier) == [.free, .pro, .premium] && offers.last?.products.first?.displayName == "Store com.train.premium.monthly")

            try await database.grant(.premium, toUser: user.id.description)
            let premium = try await billing.entitlement(policy: .revalidate)
            #expect(premium.value.entitlement.tier == .premium && premium.value.isAllowed(.premiumContent))
            #expect(await billing.requiresUpgrade(for: .premiumContent) == nil)

            device.network.offline = true
            #expect(try await billing.entitlement(policy: .revalidate).source == .staleCache)
            device.clock.advance(by: .seconds(31 * 86_400))
            let expired = try await billing.entitlement(policy: .cacheFirst)
            #expect(expired.isStale && expired.value.entitlement.tier == .free && expired.value.entitlement.status == .expired)
            #expect(await billing.requiresUpgrade(for: .premiumContent) == .premium)
            device.network.offline = false

            // A 402 carries the tier that unlocks the feature, through the SDK's problem into the app's error.
            let client = FitBaseClient(serverURL: server)
            try await client.signUp(email: "paywall-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password)
            let engine = SyncEngine(client: client, store: try LocalStore.inMemory())
            let plan = TrainingPlan(name: "Progress", startDate: CalendarDay(year: 2026, month: 11, day: 2)!, daysPerWeek: 3)
            try await engine.plans.save(plan)
            try await engine.syncNow()
            let problem = await #expect(throws: FitBaseError.self) { try await client.planProgression(planId: plan.id) }
            let paywall = KitError(try #require(problem))
            #expect(paywall.kind == .upgradeRequired && paywall.requiredTier == .premium && paywall.code == .upgradeRequired)
        }
    }

    /// The tier rules have one source. For every tier and feature the live Kit, the server's `/v1/features` and the
    /// Kit's fakes (Core's table, which the server uses unless its products file says otherwise) give one answer.
    @Test func everyFeatureAndTierGetOneAnswerFromTheKitTheServerAndTheFakes() async throws {
        try await LiveDevice.withServer { server, database in
            for tier in SubscriptionTier.allCases {
                let device = try LiveDevice(server: server)
                defer { device.remove() }
                let user = try await device.signUp()
                if tier != .free { try await database.grant(tier, toUser: user.id.description) }
                let kit = device.dependencies.billing
                #expect(try await kit.entitlement(policy: .revalidate).value.entitlement.tier == tier)
                let sdk = FitBaseClient(serverURL: server)
                try await sdk.signIn(email: try #require(user.email), password: LiveDevice.password)
                let served = try await Entitlements(client: sdk).refresh()
                let fake = FakeBillingService(entitlement: Entitlement(tier: tier, status: tier == .free ? .none : .active, expiresAt: nil, willRenew: false, source: nil))
                for feature in Feature.allCases {
                    let access = try #require(served.features[feature], "\(feature)")
                    let answer = access.allowed ? nil : access.requiredTier
                    #expect(await kit.requiresUpgrade(for: feature) == answer, "\(tier) \(feature): the live Kit")
                    #expect(await fake.requiresUpgrade(for: feature) == answer, "\(tier) \(feature): the fake")
                    #expect(access.allowed == TierFeatures.standard.allows(feature, for: tier), "\(tier) \(feature): Core's table")
                }
            }
        }
    }

    @Test func purchasesGoThroughTheStoreAndTheServer() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let billing = device.dependencies.billing
            await device.store.set(.cancelled)
            #expect(try await billing.purchase(productID: "com.train.premium.monthly") == .cancelled)
            await device.store.set(.pending)
            #expect(try await billing.purchase(productID: "com.train.premium.monthly") == .pending)
            await device.store.set(.purchased(StoreTransaction(id: "1", productID: "com.train.premium.monthly", signedTransaction: "not.a.jws")))
            let refused = await #expect(throws: KitError.self) { try await billing.purchase(productID: "com.train.premium.monthly") }
            #expect(refused != nil && refused?.kind != .offline)
            // The server did not take it: the store keeps it unfinished, to deliver it again.
            #expect(await device.store.unfinished.map(\.id) == ["1"])
            #expect(await device.store.finished.isEmpty)
            let restored = try await billing.restorePurchases()
            #expect(restored.entitlement.tier == .free)
        }
    }
}
