import FitBaseClient
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// Push set-up and pending screens through the live container, against a real server: the device's token registered
/// for each session and removed before sign-out, a group event's push routed by `AppModel`, and an invite or a push that
/// waits for sign-in surviving a restart of the app.
@Suite struct LivePushTests {
    /// Runs `body` with a live server whose pushes go to `pushes` (SQLite).
    static func withPushServer(_ pushes: RecordingPushProvider, _ body: @escaping @Sendable (URL, TestDatabase) async throws -> Void) async throws {
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            let app = try await buildApplication(configuration: .testing(database), logger: TestDatabase.logger, mailer: nil, pushProvider: pushes)
            try await withLiveServer(app) { _, url in try await body(url, database) }
        }
    }

    /// The tokens the server has registered for `user`.
    static func serverDevices(_ database: TestDatabase, of user: UserID) async throws -> [String] {
        let opened = try await Database.open(database.location, logger: TestDatabase.logger)
        do {
            let tokens = try await DeviceStore(database: opened).devices(of: user).map(\.token)
            try await opened.shutdown()
            return tokens.sorted()
        } catch {
            try? await opened.shutdown()
            throw error
        }
    }

    static func hex(_ token: Data) -> String { token.map { String(format: "%02x", $0) }.joined() }

    /// A second container over `device`'s data directory, keys and session: the same phone after a restart of the app.
    static func restarted(_ device: LiveDevice, server: URL, tokens: any TokenStore) throws -> FitBaseDependencies {
        try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: device.directory, tokenStore: tokens, keyProvider: device.keys,
            publicURLs: [URL(string: "http://127.0.0.1:0")!], analytics: RecordingAnalytics(), timeZone: { .gmt }, transport: device.network,
            clock: device.clock, bundleID: "app.fitbase.kit-tests"
        ))
    }

    @Test func theTokenRegistersForEachSessionMovesWithItAndLeavesBeforeSignOut() async throws {
        try await LiveDevice.withServer { server, database in
            let phone = try LiveDevice(server: server)
            defer { phone.remove() }
            let push = phone.dependencies.push
            let first = Data(repeating: 0xA1, count: 32)

            // Signed out: kept for the next session, registered for nobody.
            try await push.registerDevice(token: first, environment: .sandbox)
            #expect(await push.registration() == PushRegistration(token: first, environment: .sandbox, userID: nil))
            #expect(phone.network.count("registerDevice") == 0)

            // Signing up registers it for the new account.
            let ana = try await phone.signUp()
            #expect(await push.registration() == PushRegistration(token: first, environment: .sandbox, userID: ana.id))
            #expect(try await Self.serverDevices(database, of: ana.id) == [Self.hex(first)])

            // A new token replaces the old one on the server.
            let second = Data(repeating: 0xB2, count: 32)
            try await push.registerDevice(token: second, environment: .production)
            #expect(await push.registration() == PushRegistration(token: second, environment: .production, userID: ana.id))
            #expect(try await Self.serverDevices(database, of: ana.id) == [Self.hex(second)])
            #expect(phone.network.count("deleteDevice") == 1)

            // Signing out unregisters it with the session still working (a DELETE, not the session's end), and keeps it.
            await phone.dependencies.auth.signOut()
            #expect(phone.network.count("deleteDevice") == 2)
            #expect(try await Self.serverDevices(database, of: ana.id) == [])
            #expect(await push.registration() == PushRegistration(token: second, environment: .production, userID: nil))

            // Another account on the same phone gets the phone's pushes from its first session on.
            let bea = try await phone.signUp()
            #expect(await push.registration()?.userID == bea.id)
            #expect(try await Self.serverDevices(database, of: bea.id) == [Self.hex(second)])
            #expect(try await Self.serverDevices(database, of: ana.id) == [])

            // Bad input is the server's to name.
            let short = await #expect(throws: KitError.self) { try await push.registerDevice(token: Data([1, 2, 3]), environment: .sandbox) }
            #expect(short?.kind == .invalidInput && short?.fieldErrors["deviceToken"] != nil)
        }
    }

    @Test func aTokenChangedOfflineRegistersAfterARestartAndTheOldOneGoes() async throws {
        try await LiveDevice.withServer { server, database in
            let tokens = InMemoryTokenStore()
            let phone = try LiveDevice(server: server)
            defer { phone.remove() }
            let before = try Self.restarted(phone, server: server, tokens: tokens)
            let user = try await before.auth.signUp(email: "push-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: nil)
            let old = Data(repeating: 0x01, count: 32)
            try await before.push.registerDevice(token: old, environment: .sandbox)
            #expect(try await Self.serverDevices(database, of: user.id) == [Self.hex(old)])

            // The token changes while the phone is offline: kept, not registered yet.
            phone.network.offline = true
            let new = Data(repeating: 0x02, count: 32)
            let offline = await #expect(throws: KitError.self) { try await before.push.registerDevice(token: new, environment: .sandbox) }
            #expect(offline?.kind == .offline)
            #expect(await before.push.registration() == PushRegistration(token: new, environment: .sandbox, userID: nil))
            phone.network.offline = false

            // After a restart the file still knows both; the launch's registration moves the device to the new token.
            let after = try Self.restarted(phone, server: server, tokens: tokens)
            #expect(await after.push.registration() == PushRegistration(token: new, environment: .sandbox, userID: nil))
            try await after.push.registerDevice(token: new, environment: .sandbox)
            #expect(await after.push.registration() == PushRegistration(token: new, environment: .sandbox, userID: user.id))
            #expect(try await Self.serverDevices(database, of: user.id) == [Self.hex(new)])

            // Deleting the account takes its devices; the phone keeps its token for whoever signs in next.
            try await after.profile.deleteAccount(.password(LiveDevice.password))
            #expect(await after.push.registration() == PushRegistration(token: new, environment: .sandbox, userID: nil))
            #expect(try await Self.serverDevices(database, of: user.id) == [])
        }
    }

    @Test func aGroupEventsPushOpensItsScreenOnceTheAppShowsEvenAfterARestart() async throws {
        let pushes = RecordingPushProvider()
        try await Self.withPushServer(pushes) { server, _ in try await Self.pushScenario(server, pushes) }
    }

    @MainActor
    static func pushScenario(_ server: URL, _ pushes: RecordingPushProvider) async throws {
        let tokens = InMemoryTokenStore()
        let device = try LiveDevice(server: server)
        let friend = try LiveDevice(server: server)
        defer {
            device.remove()
            friend.remove()
        }
        let phone = try restarted(device, server: server, tokens: tokens)
        _ = try await phone.auth.signUp(email: "ana-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: "Ana")
        var profile = try await phone.profile.profile().profile
        profile.notificationsEnabled = true
        _ = try await phone.profile.saveProfile(profile)
        let token = Data(repeating: 0xC3, count: 32)
        try await phone.push.registerDevice(token: token, environment: .sandbox)
        let group = try await phone.groups.createGroup(name: "Morning Movers", timeZone: "UTC")
        let invitation = try await phone.groups.createInvitation(groupID: group.id)
        try await friend.signUp()
        _ = try await friend.dependencies.groups.join(code: invitation.code)

        // The server's new_member push, as the phone receives it.
        #expect(await FitBaseTestSupport.eventually(timeout: .seconds(20)) { !pushes.sent(to: hex(token)).isEmpty })
        let message = try #require(pushes.sent(to: hex(token)).first)
        #expect(message.topic == "app.fitbase.kit-tests")
        let userInfo = try #require(try JSONSerialization.jsonObject(with: message.payload) as? [String: Any])

        // Tapped during onboarding: it waits.
        let app = AppModel(dependencies: phone)
        await app.start()
        #expect(app.route == .onboarding)
        #expect(await app.openNotification(userInfo: ["aps": ["alert": "Not ours"]]) == false)
        #expect(await app.openNotification(userInfo: userInfo))
        #expect(app.destination == nil && app.pending?.destination == .group(group.id))
        app.stop()

        // The app is killed and launched again: it still waits, then opens once onboarding is done.
        let relaunched = AppModel(dependencies: try restarted(device, server: server, tokens: tokens))
        await relaunched.start()
        #expect(relaunched.route == .onboarding && relaunched.pending?.destination == .group(group.id))
        await relaunched.onboardingFinished()
        #expect(relaunched.destination == .group(group.id) && relaunched.pending == nil)
        relaunched.stop()
        #expect(PendingNavigationStore(file: device.directory.appendingPathComponent("pending-navigation.json")).load() == nil)
    }

    @Test func anInviteOpenedSignedOutWaitsThroughSignUpAndARestart() async throws {
        try await LiveDevice.withServer { server, _ in try await Self.inviteScenario(server) }
    }

    @MainActor
    static func inviteScenario(_ server: URL) async throws {
        let admin = try LiveDevice(server: server)
        let device = try LiveDevice(server: server)
        defer {
            admin.remove()
            device.remove()
        }
        try await admin.signUp()
        let group = try await admin.dependencies.groups.createGroup(name: "Evening Crew", timeZone: "UTC")
        let invitation = try await admin.dependencies.groups.createInvitation(groupID: group.id)

        // Bea taps the link before she has the account.
        let tokens = InMemoryTokenStore()
        let app = AppModel(dependencies: try restarted(device, server: server, tokens: tokens))
        await app.start()
        #expect(app.route == .signIn)
        #expect(await app.open(invitation.url))
        #expect(app.pendingInviteCode == invitation.code && app.pending?.userID == nil && app.destination == nil)
        app.stop()

        // After a restart it still waits; signing up makes it hers.
        let second = AppModel(dependencies: try restarted(device, server: server, tokens: tokens))
        await second.start()
        #expect(second.pendingInviteCode == invitation.code)
        second.auth.email = "bea-\(UUID().uuidString.prefix(8))@example.com"
        second.auth.password = LiveDevice.password
        await second.auth.signUp()
        #expect(await FitBaseTestSupport.eventually { second.route == .onboarding })
        let bea = try #require(second.pending?.userID)
        second.stop()

        // Another restart in the middle of onboarding; finishing it opens the join preview.
        let third = AppModel(dependencies: try restarted(device, server: server, tokens: tokens))
        await third.start()
        #expect(third.route == .onboarding && third.pending == PendingNavigation(destination: .joinGroup(code: invitation.code), userID: bea))
        await third.onboardingFinished()
        #expect(third.destination == .joinGroup(code: invitation.code) && third.pendingInviteCode == nil)
        #expect(third.groups.preview?.groupName == "Evening Crew")
        third.stop()
    }
}
