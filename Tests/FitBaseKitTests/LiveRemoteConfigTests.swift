import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The Kit's remote config against a real server: the user's values, revalidated with the `ETag`, kept sealed on the
/// device for a launch without a network.
@Suite struct LiveRemoteConfigTests {
    /// Sets flags as a new administrator through the server's own administration (another pool on the server's file).
    static func configure(
        _ server: URL, _ database: TestDatabase, _ change: @Sendable (RemoteConfigAdministration, ConfigEditor) async throws -> Void
    ) async throws {
        let email = "ops-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        try await FitBaseClient(serverURL: server).signUp(email: email, password: LiveDevice.password)
        let opened = try await Database.open(database.location, logger: TestDatabase.logger)
        do {
            let users = UserStore(database: opened)
            let address = try #require(EmailAddress(email))
            let admin = try #require(try await users.find(email: address))
            try await users.setRole(.admin, for: admin.id, now: .storageNow)
            let administration = RemoteConfigAdministration(database: opened, clock: .system)
            try await change(administration, try await administration.editor(email: email))
            try await opened.shutdown()
        } catch {
            try? await opened.shutdown()
            throw error
        }
    }

    @Test func valuesAreRevalidatedWithTheETagAndKeptSealedForALaunchOffline() async throws {
        try await LiveDevice.withServer { server, database in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            #expect(await device.dependencies.remoteConfig.refresh()[.socialBeta] == true)  // no flag: the in-app default
            try await device.signUp()
            try await Self.configure(server, database) { administration, editor in
                try await administration.set("social_beta", ConfigFlagChange(value: "false", defaultValue: "false"), by: editor)
                try await administration.set("leaderboard_page_size", ConfigFlagChange(value: "25"), by: editor)
            }
            let fetched = await device.dependencies.remoteConfig.refresh()
            #expect(fetched[.socialBeta] == false)
            #expect(fetched[ConfigKey("leaderboard_page_size", default: 10)] == 25)
            #expect(fetched[ConfigKey("leaderboard_page_size", default: "ten")] == "ten")  // another kind: the in-app default
            #expect(fetched[ConfigKey("not_on_the_server", default: 3.5)] == 3.5)
            await device.dependencies.remoteConfig.refresh()
            #expect(device.network.statuses("getRemoteConfig").suffix(2) == [200, 304])

            // Offline, and launched again offline: last time's values, from the sealed store.
            device.network.offline = true
            #expect(await device.dependencies.remoteConfig.refresh()[.socialBeta] == false)
            let relaunched = try device.relaunch()
            relaunched.network.offline = true
            #expect(await relaunched.dependencies.remoteConfig.current()[.socialBeta] == false)
            #expect(await relaunched.dependencies.remoteConfig.current()[ConfigKey("leaderboard_page_size", default: 10)] == 25)
            #expect(try device.storeBytes().range(of: Data("leaderboard_page_size".utf8)) == nil, "the config is sealed on the device")
        }
    }
}
