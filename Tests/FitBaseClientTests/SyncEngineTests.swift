import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OpenAPIRuntime
import Synchronization
import Testing

@testable import FitBaseServer

/// The SDK's offline-first sync against a live server on a real socket, on every engine.
@Suite struct SyncEngineTests {
    // MARK: Harness

    /// A transport that can be switched off (no network) or lose the answer to the next push after the server has
    /// handled it (the connection dropped on the way back).
    final class Network: ClientTransport, Sendable {
        struct Offline: Error {}
        struct AnswerLost: Error {}

        private let base = FitBaseClient.defaultTransport()
        private let state = Mutex((offline: false, loseNextPushAnswer: false))

        var offline: Bool {
            get { state.withLock { $0.offline } }
            set { state.withLock { $0.offline = newValue } }
        }

        func loseNextPushAnswer() { state.withLock { $0.loseNextPushAnswer = true } }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            if offline { throw Offline() }
            let answer = try await base.send(request, body: body, baseURL: baseURL, operationID: operationID)
            let lose = operationID == "pushSyncMutations" && state.withLock { state in
                defer { state.loseNextPushAnswer = false }
                return state.loseNextPushAnswer
            }
            if lose { throw AnswerLost() }
            return answer
        }
    }

    /// One device: its own network, token store and local store (in a file when `directory` is given), and its own
    /// clock, `clockOffset` seconds from the machine's.
    struct Device {
        let network = Network()
        let client: FitBaseClient
        let engine: SyncEngine

        init(_ server: URL, directory: URL? = nil, clockOffset: TimeInterval = 0) throws {
            let tokens: any TokenStore = directory.map { FileTokenStore(fileURL: $0.appendingPathComponent("session.json")) } ?? InMemoryTokenStore()
            client = FitBaseClient(serverURL: server, tokenStore: tokens, transport: network)
            let store = try directory.map { try LocalStore(path: $0.appendingPathComponent("fitbase.sqlite").path) } ?? LocalStore.inMemory()
            var configuration = SyncEngine.Configuration()
            configuration.clock = { Date.now.addingTimeInterval(clockOffset) }
            engine = SyncEngine(client: client, store: store, configuration: configuration)
        }
    }

    static let password = "correct horse battery"

    /// A live server with the demo catalog; `body` gets its URL, its database and a workout of its catalog.
    static func withServer(_ engine: DatabaseEngine, _ body: @escaping @Sendable (URL, TestDatabase, Components.Schemas.Workout) async throws -> Void) async throws {
        try await withLiveApp(engine, demoCatalog: true) { server, database in
            let workouts = try await FitBaseClient(serverURL: server).api.listWorkouts(query: .init(limit: 2)).ok.body.json.items
            try await body(server, database, try #require(workouts.first))
        }
    }

    static func email() -> String { "device-\(UUID().uuidString.prefix(8))@example.com" }

    static func plan(_ name: String, id: PlanID = PlanID()) -> TrainingPlan {
        TrainingPlan(id: id, name: name, startDate: CalendarDay(year: 2026, month: 11, day: 2)!, daysPerWeek: 3)
    }

    // MARK: Tests

    @Test(arguments: TestEngines.all)
    func twoDevicesEditOfflineAndConverge(engine: DatabaseEngine) async throws {
        try await Self.withServer(engine) { server, _, workout in
            let email = Self.email()
            // The phone's clock is two seconds behind: its edit is the earlier one, without the test waiting.
            let phone = try Device(server, clockOffset: -2)
            let watch = try Device(server)
            try await phone.client.signUp(email: email, password: Self.password)
            try await watch.client.signIn(email: email, password: Self.password)

            let shared = Self.plan("Base")
            try await phone.engine.plans.save(shared)
            try await phone.engine.syncNow()
            try await watch.engine.syncNow()
            #expect(try await watch.engine.plans.get(shared.id) == shared)

            // Both offline: each edits the plan and logs a workout; the watch's edit is the later one.
            phone.network.offline = true
            watch.network.offline = true
            try await phone.engine.plans.save(Self.plan("Phone edit", id: shared.id))
            try await phone.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-3600), duration: 30)
            try await watch.engine.plans.save(Self.plan("Watch edit", id: shared.id))
            try await watch.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-600), duration: 45)
            await #expect(throws: FitBaseError.self) { try await phone.engine.syncNow() }
            #expect(await phone.engine.status.state == .offline)
            #expect(await phone.engine.status.pendingCount == 2)

            phone.network.offline = false
            watch.network.offline = false
            try await phone.engine.syncNow()
            try await watch.engine.syncNow()
            try await phone.engine.syncNow()

            // Same state on both devices: the later plan edit wins, both logs survive.
            let phonePlans = try await phone.engine.plans.plans()
            #expect(phonePlans == (try await watch.engine.plans.plans()))
            #expect(phonePlans.map(\.name) == ["Watch edit"])
            let phoneLogs = try await phone.engine.history.history()
            #expect(phoneLogs.count == 2)
            #expect(phoneLogs == (try await watch.engine.history.history()))
            // The server fixed what it decides once the logs reached it: the catalog's title and type, the day in the
            // user's time zone (UTC: none set).
            #expect(phoneLogs.allSatisfy { $0.workoutTitle == workout.title && $0.workoutType == workout._type })
            #expect(phoneLogs.allSatisfy { $0.localDate == CalendarDay($0.completedAt, in: .gmt) })
            #expect(await phone.engine.status.pendingCount == 0)
            #expect(await watch.engine.status.state == .idle)
        }
    }

    /// A session the server ends — here a password changed on another device — erases the device's store and destroys
    /// its key, as a sign-out does: what the phone kept of the user is gone even before anyone signs in there again.
    @Test(arguments: TestEngines.all)
    func aSessionTheServerEndsLeavesNothingOnTheDevice(engine: DatabaseEngine) async throws {
        try await Self.withServer(engine) { server, _, _ in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-ended-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let keyFile = directory.appendingPathComponent("store.key")
            let phone = FitBaseClient(serverURL: server)
            let store = try LocalStore(path: directory.appendingPathComponent("fitbase.sqlite").path, keyProvider: FileKeyProvider(fileURL: keyFile))
            let engine = SyncEngine(client: phone, store: store)
            let email = Self.email()
            try await phone.signUp(email: email, password: Self.password)
            await engine.start()
            try await engine.plans.save(Self.plan("Mine"))
            try await engine.syncNow()
            #expect(FileManager.default.fileExists(atPath: keyFile.path))

            let tablet = FitBaseClient(serverURL: server)
            try await tablet.signIn(email: email, password: Self.password)
            try await tablet.changePassword(current: Self.password, new: "a brand new passphrase")
            // The phone's next request finds its session ended (its refresh is refused).
            await #expect(throws: FitBaseError.self) { try await engine.syncNow() }
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while FileManager.default.fileExists(atPath: keyFile.path), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(!FileManager.default.fileExists(atPath: keyFile.path))
            #expect(try await engine.plans.plans().isEmpty)
            await engine.stop()
        }
    }

    @Test(arguments: TestEngines.all)
    func aRestartMidQueueLosesNothingAndDoublesNothing(engine: DatabaseEngine) async throws {
        try await Self.withServer(engine) { server, _, workout in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-device-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let email = Self.email()
            let before = try Device(server, directory: directory)
            try await before.client.signUp(email: email, password: Self.password)
            let start = try #require(CalendarDay(Calendar(identifier: .gregorian).date(byAdding: .day, value: -3, to: .now)!.formatted(.iso8601.year().month().day())))
            try await before.engine.plans.save(Self.plan("Queued"))
            try await before.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-7200), duration: 20)
            try await before.engine.cycle.save(Period(start: start, flow: .light))
            // The server applies the push but the answer never arrives; then the app is killed.
            before.network.loseNextPushAnswer()
            await #expect(throws: FitBaseError.self) { try await before.engine.syncNow() }

            let after = try Device(server, directory: directory)
            #expect(await after.client.currentUserID() != nil)
            #expect(try await after.engine.store.pendingCount() == 3)
            try await after.engine.syncNow()
            #expect(try await after.engine.store.pendingCount() == 0)
            #expect(try await after.engine.plans.plans().map(\.name) == ["Queued"])
            #expect(try await after.engine.history.history().count == 1)
            #expect(try await after.engine.cycle.periods().map(\.start) == [start])

            // A fresh device sees exactly one of each on the server.
            let fresh = try Device(server)
            try await fresh.client.signIn(email: email, password: Self.password)
            try await fresh.engine.syncNow()
            #expect(try await fresh.engine.plans.all().count == 1)
            #expect(try await fresh.engine.history.all().count == 1)
            #expect(try await fresh.engine.cycle.all().count == 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func aCursorTooOldForTheServerResyncsFully(engine: DatabaseEngine) async throws {
        try await Self.withServer(engine) { server, testDatabase, _ in
            let email = Self.email()
            let phone = try Device(server)
            let tablet = try Device(server)
            try await phone.client.signUp(email: email, password: Self.password)
            try await tablet.client.signIn(email: email, password: Self.password)
            try await testDatabase.grant(.pro, toUser: try #require(await phone.client.currentUserID()).description)  // more than one plan
            let kept = Self.plan("Kept")
            let gone = Self.plan("Gone")
            try await phone.engine.plans.save(kept)
            try await phone.engine.plans.save(gone)
            try await phone.engine.syncNow()
            try await tablet.engine.syncNow()
            #expect(try await tablet.engine.plans.all().count == 2)

            // The phone deletes a plan; the tablet stays away until the tombstone is purged.
            try await phone.engine.plans.delete(gone.id)
            try await phone.engine.syncNow()
            let database = try await FitBaseServer.Database.open(testDatabase.location, logger: TestDatabase.logger)
            #expect(try await SyncFeed.purge(before: Date.now.addingTimeInterval(60), database: database) == 1)
            try await database.shutdown()

            // A change queued on the tablet meanwhile survives the resync.
            let offline = Self.plan("Made offline")
            try await tablet.engine.plans.save(offline)
            try await tablet.engine.syncNow()
            #expect(Set(try await tablet.engine.plans.all().map(\.name)) == ["Kept", "Made offline"])
            try await phone.engine.syncNow()
            #expect(Set(try await phone.engine.plans.all().map(\.name)) == ["Kept", "Made offline"])
        }
    }

    @Test(arguments: TestEngines.all)
    func oneUsersSyncNeverReturnsAnotherUsersRecords(engine: DatabaseEngine) async throws {
        try await Self.withServer(engine) { server, _, workout in
            let ana = try Device(server)
            try await ana.client.signUp(email: Self.email(), password: Self.password)
            try await ana.engine.plans.save(Self.plan("Ana's plan"))
            try await ana.engine.history.log(workout, completedAt: Date.now.addingTimeInterval(-60), duration: 15)
            try await ana.engine.syncNow()

            let bea = try Device(server)
            try await bea.client.signUp(email: Self.email(), password: Self.password)
            try await bea.engine.syncNow()
            #expect(try await bea.engine.plans.all().isEmpty)
            #expect(try await bea.engine.history.all().isEmpty)

            // The same device and store, another user: the store is emptied before syncing as them.
            try await ana.client.signOut()
            await #expect(throws: FitBaseError.notSignedIn) { try await ana.engine.syncNow() }
            try await ana.client.signUp(email: Self.email(), password: Self.password)
            try await ana.engine.syncNow()
            #expect(try await ana.engine.plans.all().isEmpty)
            #expect(try await ana.engine.history.all().isEmpty)
        }
    }

    @Test func statusStreamsAndBackoffStaysWithinItsBounds() async throws {
        try await Self.withServer(.sqlite) { server, _, _ in
            let device = try Device(server)
            try await device.client.signUp(email: Self.email(), password: Self.password)
            let updates = await device.engine.statusUpdates()
            try await device.engine.plans.save(Self.plan("Watched"))
            try await device.engine.syncNow()
            // Read for at most 30 s: a sync that failed would otherwise leave this waiting for a status never sent.
            let seen = await withTaskGroup(of: [SyncStatus]?.self) { group in
                group.addTask {
                    var seen: [SyncStatus] = []
                    for await status in updates {
                        seen.append(status)
                        if status.state == .idle && status.lastSyncedAt != nil { break }
                    }
                    return seen
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first ?? []
            }
            #expect(seen.last?.state == .idle, "no idle status within 30 s: \(seen)")
            #expect(seen.contains { $0.state == .syncing })
            #expect(seen.contains { $0.pendingCount == 1 })
            #expect(seen.last?.pendingCount == 0)

            for failures in 1...12 {
                let delay = device.engine.backoff(afterFailures: failures)
                let full = min(300.0, 2.0 * pow(2, Double(failures - 1)))
                #expect(delay >= .milliseconds(Int(full * 500)) && delay <= .milliseconds(Int(full * 1000)), "retry \(failures): \(delay)")
            }
        }
    }

    @Test func aStartedEngineSyncsSoonAfterALocalChange() async throws {
        try await Self.withServer(.sqlite) { server, _, _ in
            let email = Self.email()
            let device = try Device(server)
            try await device.client.signUp(email: email, password: Self.password)
            await device.engine.start()
            let plan = Self.plan("Synced in the background")
            try await device.engine.plans.save(plan)
            let other = try Device(server)
            try await other.client.signIn(email: email, password: Self.password)
            var arrived = false
            for _ in 0..<100 where !arrived {
                try await Task.sleep(for: .milliseconds(100))
                try await other.engine.syncNow()
                arrived = try await other.engine.plans.get(plan.id) != nil
            }
            await device.engine.stop()
            #expect(arrived)
            #expect(await device.engine.status.pendingCount == 0)
        }
    }

    @Test func expiredAndRevokedAccessTokensAreRefreshedOnce() async throws {
        try await Self.withServer(.sqlite) { server, _, _ in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-tokens-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let tokens = FileTokenStore(fileURL: directory.appendingPathComponent("session.json"))
            let client = FitBaseClient(serverURL: server, tokenStore: tokens)
            let user = try await client.signUp(email: Self.email(), password: Self.password)
            let signedIn = try #require(try await tokens.load())
            #expect(signedIn.userID == user.id)
            let mode = try FileManager.default.attributesOfItem(atPath: tokens.fileURL.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // A token the server refuses (as if revoked early): refreshed once, the call retried, the new tokens kept.
            var broken = signedIn
            broken.accessToken = "not-a-token"
            try await tokens.save(broken)
            let again = FitBaseClient(serverURL: server, tokenStore: tokens)
            let me = try await again.api.getMe().ok.body.json
            #expect(me.id == user.id.description)
            let refreshed = try #require(try await tokens.load())
            #expect(refreshed.refreshToken != signedIn.refreshToken)
            // Many calls needing a refresh at once share one (a second use of a refresh token would end the session).
            var expired = refreshed
            expired.accessTokenExpiresAt = .distantPast
            try await tokens.save(expired)
            let busy = FitBaseClient(serverURL: server, tokenStore: tokens)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await busy.api.getMe().ok } }
                try await group.waitForAll()
            }
            // Signing out ends the session on the server and forgets it here.
            let last = try #require(try await tokens.load())
            try await busy.signOut()
            #expect(try await tokens.load() == nil)
            #expect(await busy.currentUserID() == nil)
            let stale = FitBaseClient(serverURL: server, tokenStore: InMemoryTokenStore(last))
            let ended = await #expect(throws: ClientError.self) { _ = try await stale.api.getMe().ok }
            guard case .problem(let problem)? = ended?.underlyingError as? FitBaseError else {
                Issue.record("expected the refresh's problem, got \(String(describing: ended))")
                return
            }
            #expect(problem.code == .invalidRefreshToken && problem.rawCode == "invalid_refresh_token")
        }
    }
}
