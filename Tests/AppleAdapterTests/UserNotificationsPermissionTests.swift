import FitBaseKit
import Foundation
import Testing
import UIKit
import UserNotifications

/// ``UserNotificationsPermission`` over `UNUserNotificationCenter` and `UIApplication`.
@Suite(.serialized) struct UserNotificationsPermissionTests {
    init() { _UserNotificationsShim.reset() }

    @Test func theSystemPromptShowsOnceForAlertsBadgesAndSounds() async throws {
        let permission = UserNotificationsPermission()
        #expect(await !permission.isAuthorized())
        #expect(try await permission.requestAuthorization())
        #expect(try await permission.requestAuthorization())
        #expect(_UserNotificationsShim.prompts.count == 1)
        #expect(_UserNotificationsShim.prompts.options.allSatisfy { $0 == [.alert, .badge, .sound] })
        #expect(await permission.isAuthorized())
    }

    @Test func aRefusalIsKept() async throws {
        _UserNotificationsShim.setUserAllows(false)
        let permission = UserNotificationsPermission()
        #expect(try await !permission.requestAuthorization())
        #expect(await !permission.isAuthorized())
    }

    @Test func provisionalAndEphemeralPermissionsDeliver() async {
        let permission = UserNotificationsPermission()
        for (status, allowed) in [
            (UNAuthorizationStatus.provisional, true), (.ephemeral, true), (.authorized, true), (.denied, false),
        ] {
            _UserNotificationsShim.setStatus(status)
            #expect(await permission.isAuthorized() == allowed)
        }
    }

    @Test func aFailedRequestIsAnError() async {
        _UserNotificationsShim.failNextRequest(with: CocoaError(.featureUnsupported))
        await #expect(throws: CocoaError.self) { try await UserNotificationsPermission().requestAuthorization() }
    }

    @Test func registeringAsksTheApplicationForItsPushToken() async {
        let before = await _UIKitShim.registrations
        await UserNotificationsPermission().registerForRemoteNotifications()
        #expect(await _UIKitShim.registrations == before + 1)
    }
}
