import FitBaseCore
import FitBaseKit
import Foundation
import Testing

/// Signed-in devices, the audit log and the push wording switch through the live services, against a real server.
@Suite struct LiveAccountSecurityTests {
    @Test func aDeviceSignsAnotherOutAndTheAuditLogShowsWhoReadTheData() async throws {
        try await LiveDevice.withServer { server, _ in
            let phone = try LiveDevice(server: server)
            let tablet = try LiveDevice(server: server)
            defer { for device in [phone, tablet] { device.remove() } }
            let user = try await phone.signUp()
            _ = try await tablet.dependencies.auth.signIn(email: try #require(user.email), password: LiveDevice.password)
            let sessions = try await phone.dependencies.profile.sessions()
            #expect(sessions.count == 2 && sessions.filter(\.isCurrent).count == 1)
            let other = try #require(sessions.first { !$0.isCurrent })
            try await phone.dependencies.profile.endSession(id: other.id)
            #expect(try await phone.dependencies.profile.sessions().map(\.isCurrent) == [true])
            let again = await #expect(throws: KitError.self) { try await phone.dependencies.profile.endSession(id: other.id) }
            #expect(again?.kind == .notFound)
            // The tablet's session is over: its next request finds it signed out.
            let signedOut = await #expect(throws: KitError.self) { try await tablet.dependencies.profile.sessions() }
            #expect(signedOut?.kind == .notSignedIn, "\(String(describing: signedOut))")

            _ = try await phone.dependencies.profile.recordConsent(.healthData, version: "1", granted: true)
            _ = try await phone.dependencies.health.overview(from: phone.clock.now.addingTimeInterval(-7 * 86_400), to: phone.clock.now)
            let log = try await phone.dependencies.profile.auditLog(page: .first(100))
            let reads = log.items.filter { $0.action == .read && $0.resource == .healthSummary }
            #expect(!reads.isEmpty && reads.allSatisfy { $0.actor == user.id && $0.outcome == .success })
            #expect(zip(log.items, log.items.dropFirst()).allSatisfy { $0.sequence > $1.sequence })
            let first = try await phone.dependencies.profile.auditLog(page: .first(1))
            #expect(first.items.count == 1 && first.nextCursor != nil)
            let second = try await phone.dependencies.profile.auditLog(page: PageRequest(cursor: first.nextCursor, limit: 1))
            #expect(second.items.first.map { $0.sequence < first.items[0].sequence } == true)
        }
    }

    @Test @MainActor func theSensitiveContentSwitchReachesTheServer() async throws {
        try await LiveDevice.withServer { server, _ in
            try await Self.switchSensitiveContent(server: server)
        }
    }

    @MainActor
    static func switchSensitiveContent(server: URL) async throws {
        let device = try LiveDevice(server: server)
        defer { device.remove() }
        try await device.signUp()
        let model = ProfileModel(dependencies: device.dependencies)
        await model.load()
        #expect(!model.showsSensitiveContent)
        await model.setShowSensitiveContent(true)
        #expect(model.showsSensitiveContent && model.error == nil)
        let saved = try await device.dependencies.profile.profile()
        #expect(saved.profile.notificationPreferences.showSensitiveContent && saved.profile.notificationPreferences.newMember)
    }
}
