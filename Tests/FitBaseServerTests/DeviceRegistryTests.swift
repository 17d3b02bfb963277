import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// `/v1/me/devices`: validation, ownership, moving between accounts, and a device's end with its session.
@Suite struct DeviceRegistryTests {
    @Test(arguments: TestEngines.all)
    func registrationIsValidatedNormalisedAndListed(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider()) { client, _, _ in
            let ana = try await client.signUp()
            for bad in ["abc", String(repeating: "a", count: 63), String(repeating: "a", count: 62), String(repeating: "g", count: 64), String(repeating: "a", count: 202)] {
                let problem = try expectProblem(try await client.registerDevice(bad, for: ana), .validationFailed)
                #expect((problem["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } == ["deviceToken"])
            }
            let body: [String: Any] = ["platform": "android", "environment": "staging", "bundleId": "com.example/app", "timeZone": "Mars/Olympus_Mons", "appVersion": ""]
            let problem = try expectProblem(
                try await client.json(.put, "/v1/me/devices/\(deviceToken())", body: body, token: ana.accessToken), .validationFailed
            )
            #expect(Set((problem["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []) == ["platform", "environment", "bundleId", "timeZone", "appVersion"])

            let token = deviceToken()
            let created = try await client.registerDevice(token.uppercased(), for: ana, timeZone: "Asia/Kolkata")
            #expect(created.status == .created)
            #expect(try json(created)["token"] as? String == token)
            let again = try await client.registerDevice(token, for: ana, timeZone: "Europe/Lisbon")
            #expect(again.status == .ok)
            let second = try await client.signIn(ana)
            try await client.registerDevice(deviceToken(), for: second)

            let list = try json(try await client.json(.get, "/v1/me/devices", token: ana.accessToken))
            let items = try #require(list["items"] as? [[String: Any]])
            #expect(items.count == 2)
            #expect(items.filter { $0["current"] as? Bool == true }.map { $0["token"] as? String } == [token])
            #expect(items.first { $0["token"] as? String == token }?["timeZone"] as? String == "Europe/Lisbon")
            let page = try json(try await client.json(.get, "/v1/me/devices?limit=1", token: ana.accessToken))
            #expect((page["items"] as? [Any])?.count == 1 && page["nextCursor"] as? String == "1")

            // Another account cannot delete it; its owner can, once.
            let bea = try await client.signUp()
            #expect(try await client.json(.delete, "/v1/me/devices/\(token)", token: bea.accessToken).status == .notFound)
            #expect(try await client.json(.delete, "/v1/me/devices/\(token.uppercased())", token: ana.accessToken).status == .noContent)
            #expect(try await client.json(.delete, "/v1/me/devices/\(token)", token: ana.accessToken).status == .notFound)
        }
    }

    @Test(arguments: TestEngines.all)
    func aTokenMovesToTheAccountThatRegistersItLast(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider()) { client, database, _ in
            let ana = try await client.signUp()
            let bea = try await client.signUp()
            let token = deviceToken()
            #expect(try await client.registerDevice(token, for: ana).status == .created)
            #expect(try await client.registerDevice(token, for: bea).status == .created)
            let anas = try json(try await client.json(.get, "/v1/me/devices", token: ana.accessToken))["items"] as? [Any]
            let beas = try json(try await client.json(.get, "/v1/me/devices", token: bea.accessToken))["items"] as? [[String: Any]]
            #expect(anas?.isEmpty == true)
            #expect(beas?.map { $0["token"] as? String } == [token] && beas?.first?["current"] as? Bool == true)
            // Ana signing out no longer touches it: it is Bea's session's now.
            _ = try await client.json(.post, "/v1/auth/signout", token: ana.accessToken)
            #expect(try await database.hasDevice(token))
        }
    }

    /// A phone retrying its registration while the app registers it again, and two accounts signed in on one
    /// phone, race on one token: every request answers 200 or 201, none fails on the token's uniqueness, and the
    /// token ends with one account.
    @Test(arguments: TestEngines.all)
    func concurrentRegistrationsOfOneTokenAllSucceed(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider()) { client, database, _ in
            let ana = try await client.signUp()
            let bea = try await client.signUp()
            for _ in 0..<5 {
                let token = deviceToken()
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for index in 0..<8 {
                        group.addTask { try await client.registerDevice(token, for: index.isMultiple(of: 2) ? ana : bea).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == .ok || $0 == .created }, "\(statuses)")
                #expect(statuses.contains(.created))
                var owners = 0
                for account in [ana, bea] {
                    let items = try json(try await client.json(.get, "/v1/me/devices", token: account.accessToken))["items"] as? [[String: Any]]
                    if items?.contains(where: { $0["token"] as? String == token }) == true { owners += 1 }
                }
                #expect(owners == 1)
                #expect(try await database.hasDevice(token))
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func aDeviceEndsWithItsSession(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider()) { client, database, _ in
            let ana = try await client.signUp()
            let phone = try await client.signIn(ana)
            let tablet = try await client.signIn(ana)
            let (first, second, third) = (deviceToken(), deviceToken(), deviceToken())
            try await client.registerDevice(first, for: ana)
            try await client.registerDevice(second, for: phone)
            try await client.registerDevice(third, for: tablet)

            // Signing out ends the session and its device.
            #expect(try await client.json(.post, "/v1/auth/signout", token: phone.accessToken).status == .noContent)
            #expect(try await !database.hasDevice(second))
            // Ending another session from this one.
            let tabletSession = try AccessMatrixTests.sessionID(of: tablet)
            #expect(try await client.json(.delete, "/v1/me/sessions/\(tabletSession)", token: ana.accessToken).status == .noContent)
            #expect(try await !database.hasDevice(third))
            // Presenting a spent refresh token revokes its session.
            let fresh = try await client.signIn(ana)
            let fourth = deviceToken()
            try await client.registerDevice(fourth, for: fresh)
            _ = try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": fresh.refreshToken])
            _ = try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": fresh.refreshToken])
            #expect(try await !database.hasDevice(fourth))
            #expect(try await database.hasDevice(first))

            // The export lists the devices; deleting the account removes them.
            let export = try json(try await client.json(.get, "/v1/me/export", token: ana.accessToken))
            #expect(((export["sections"] as? [String: Any])?["devices"] ?? export["devices"]) as? [Any] != nil)
            #expect(try await client.json(.delete, "/v1/me", token: ana.accessToken).status == .noContent)
            #expect(try await !database.hasDevice(first))
        }
    }

    @Test(arguments: TestEngines.all)
    func anAccountKeepsItsNewestDevices(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider()) { client, database, _ in
            let ana = try await client.signUp()
            var tokens: [String] = []
            for _ in 0...DeviceStore.maximumPerAccount {
                tokens.append(deviceToken())
                #expect(try await client.registerDevice(tokens.last!, for: ana).status == .created)
            }
            let items = try json(try await client.json(.get, "/v1/me/devices?limit=100", token: ana.accessToken))["items"] as? [[String: Any]]
            #expect(items?.count == DeviceStore.maximumPerAccount)
            #expect(try await !database.hasDevice(tokens[0]))
            #expect(try await database.hasDevice(tokens.last!))
        }
    }
}

/// A device token moves between accounts only from the install that registered it (accounts part 3).
@Suite struct DeviceInstallProofTests {
    @Test(arguments: TestEngines.all)
    func aTokenSomeoneLearnedCannotBeTakenFromItsOwner(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let ana = try await client.signUp()
            let mallory = try await client.signUp()
            let token = deviceToken()
            let anasInstall = "ana-phone-install-" + UUID().uuidString
            func register(_ account: TestAccount, install: String?) async throws -> TestResponse {
                var body: [String: Any] = ["platform": "ios", "environment": "production", "bundleId": "com.example.fit"]
                if let install { body["installId"] = install }
                return try await client.json(.put, "/v1/me/devices/\(token)", body: body, token: account.accessToken)
            }
            #expect(try await register(ana, install: anasInstall).status == .created)
            // Mallory learned the token: without the install id, or with another, it stays Ana's.
            for install in [nil, "mallory-install-" + UUID().uuidString] {
                let refused = try await register(mallory, install: install)
                try expectProblem(refused, .idTaken)
                #expect(refused.status == .conflict)
            }
            #expect((try json(try await client.json(.get, "/v1/me/devices", token: ana.accessToken))["items"] as? [Any])?.count == 1)
            #expect((try json(try await client.json(.get, "/v1/me/devices", token: mallory.accessToken))["items"] as? [Any])?.isEmpty == true)
            // Ana's own re-registrations need no proof; a second account signed in on the same install may take it.
            #expect(try await register(ana, install: nil).status == .ok)
            let bea = try await client.signUp()
            #expect(try await register(bea, install: anasInstall).status == .created)
            #expect((try json(try await client.json(.get, "/v1/me/devices", token: ana.accessToken))["items"] as? [Any])?.isEmpty == true)
            // The install id is checked like every field.
            try expectProblem(try await register(bea, install: "short"), .validationFailed)
        }
    }
}
