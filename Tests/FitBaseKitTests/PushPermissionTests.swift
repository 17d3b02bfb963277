import FitBaseClient
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The system's notification prompt as a test scripts it: the user's answer (or the system refusing to ask), and the
/// token the system hands the app delegate once asked to register, which the delegate passes to the push service.
actor ScriptedNotificationPermission: NotificationPermissionProvider {
    struct NotAllowed: Error {}

    private let answer: Bool?
    private let token: Data
    private var delegate: (any PushService)?
    private var prompts = 0
    private var remoteRegistrations = 0

    /// How many times the prompt was asked for, and the system for a token.
    var asked: (prompts: Int, registrations: Int) { (prompts, remoteRegistrations) }

    /// A prompt the user answers `answer` (`nil`: the system refuses to ask), handing over `token` when registered.
    init(answer: Bool?, token: Data = Data(repeating: 0xC4, count: 32)) {
        self.answer = answer
        self.token = token
    }

    /// Where the app delegate hands the token (`didRegisterForRemoteNotificationsWithDeviceToken`).
    func deliverTokens(to push: any PushService) {
        delegate = push
    }

    func requestAuthorization() async throws -> Bool {
        prompts += 1
        guard let answer else { throw NotAllowed() }
        return answer
    }

    func isAuthorized() async -> Bool { answer ?? false }

    func registerForRemoteNotifications() async {
        remoteRegistrations += 1
        try? await delegate?.registerDevice(token: token, environment: .sandbox)
    }
}

/// ``PushService/requestPermissionAndRegister()``: one call asks for the permission and, granted, for the token, which
/// then reaches the server; without a provider (or refused) nothing is asked of the system.
@Suite struct PushPermissionTests {
    static func live(
        server: URL, permission: (any NotificationPermissionProvider)?, network: SwitchableTransport = SwitchableTransport()
    ) throws -> (FitBaseDependencies, URL) {
        network.server = server
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-push-\(UUID().uuidString)")
        let dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, tokenStore: InMemoryTokenStore(), keyProvider: InMemoryKeyProvider(),
            purchaseProvider: nil, analytics: RecordingAnalytics(), reachability: nil, notificationPermission: permission,
            appleSignIn: nil, timeZone: { .gmt }, transport: network, healthKit: nil, bundleID: "app.fitbase.kit-tests"
        ))
        return (dependencies, directory)
    }

    @Test func allowingNotificationsRegistersTheDeviceForTheSignedInUser() async throws {
        try await LiveDevice.withServer { server, database in
            let permission = ScriptedNotificationPermission(answer: true)
            let (app, directory) = try Self.live(server: server, permission: permission)
            defer { try? FileManager.default.removeItem(at: directory) }
            await permission.deliverTokens(to: app.push)
            let email = "push-\(UUID().uuidString.prefix(8))@example.com"
            let user = try await app.auth.signUp(email: email, password: LiveDevice.password, displayName: "Push")

            #expect(try await app.push.requestPermissionAndRegister())
            #expect(await permission.asked == (1, 1))
            let token = Data(repeating: 0xC4, count: 32)
            #expect(await app.push.registration() == PushRegistration(token: token, environment: .sandbox, userID: user.id))
            #expect(try await LivePushTests.serverDevices(database, of: user.id) == [LivePushTests.hex(token)])
        }
    }

    @Test func aRefusalOrNoProviderAsksTheSystemForNoToken() async throws {
        let server = URL(string: "http://127.0.0.1:9")!
        let refused = ScriptedNotificationPermission(answer: false)
        let (app, directory) = try Self.live(server: server, permission: refused)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await app.push.requestPermissionAndRegister() == false)
        #expect(await refused.asked == (1, 0))

        let (bare, bareDirectory) = try Self.live(server: server, permission: nil)
        defer { try? FileManager.default.removeItem(at: bareDirectory) }
        #expect(try await bare.push.requestPermissionAndRegister() == false)
        #expect(await bare.push.registration() == nil)
    }

    @Test func aSystemThatWillNotAskIsForbidden() async throws {
        let unasked = ScriptedNotificationPermission(answer: nil)
        let (app, directory) = try Self.live(server: URL(string: "http://127.0.0.1:9")!, permission: unasked)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            _ = try await app.push.requestPermissionAndRegister()
            Issue.record("a system that will not ask is not a refusal")
        } catch {
            #expect(error.kind == .forbidden)
        }
        #expect(await unasked.asked.registrations == 0)
    }

    @Test func theFakeAsksItsProviderAsTheLiveServiceDoes() async throws {
        let auth = FakeAuthService()
        let granted = ScriptedNotificationPermission(answer: true)
        let push = FakePushService(auth: auth, notificationPermission: granted)
        await granted.deliverTokens(to: push)
        #expect(try await push.requestPermissionAndRegister())
        #expect(await granted.asked.registrations == 1)
        #expect(await push.registration()?.token == Data(repeating: 0xC4, count: 32))

        let refused = ScriptedNotificationPermission(answer: false)
        #expect(try await FakePushService(auth: auth, notificationPermission: refused).requestPermissionAndRegister() == false)
        #expect(await refused.asked.registrations == 0)
        #expect(try await FakePushService(auth: auth).requestPermissionAndRegister() == false)

        let failing = FakePushService(auth: auth, notificationPermission: granted)
        failing.knobs.fail(.requestPermissionAndRegister)
        await #expect(throws: KitError.offline) { try await failing.requestPermissionAndRegister() }
        let unasked = FakePushService(auth: auth, notificationPermission: ScriptedNotificationPermission(answer: nil))
        do {
            _ = try await unasked.requestPermissionAndRegister()
            Issue.record("a system that will not ask is not a refusal")
        } catch {
            #expect(error.kind == .forbidden)
        }
    }
}
