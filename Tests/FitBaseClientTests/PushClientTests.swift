import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The SDK's push side: the payload parser, and registering a device and its preferences against a live server.
@Suite struct PushClientTests {
    static let rankChange = Data("""
        {"aps":{"alert":{"title":"You were overtaken","body":"You were overtaken in this week's streak: now #2 (was #1)."},"badge":3,"sound":"default","thread-id":"group-g1"},
         "fitbase":{"type":"rank_change","notificationId":"8d4c1d02-5d7a-4b55-9a3c-0f1e2d3c4b5a","groupId":"0b7e6a9c-1f2d-4e3c-8b5a-6d7c8e9f0a1b"}}
        """.utf8)

    @Test func aFeedPushParsesFromJSONAndFromUserInfo() throws {
        let parsed = try #require(FitBaseNotification(payload: Self.rankChange))
        guard case .rankChange(let push) = parsed else { Issue.record("parsed as \(parsed)"); return }
        #expect(push.notificationID == NotificationID("8d4c1d02-5d7a-4b55-9a3c-0f1e2d3c4b5a") && push.groupID == GroupID("0b7e6a9c-1f2d-4e3c-8b5a-6d7c8e9f0a1b"))
        #expect(push.alert == .init(title: "You were overtaken", body: "You were overtaken in this week's streak: now #2 (was #1).", badge: 3))
        #expect(parsed.type == "rank_change")

        // userInfo as UIKit hands it over: NSDictionary bridging, AnyHashable keys, NSNumber badge.
        let object = try #require(try JSONSerialization.jsonObject(with: Self.rankChange) as? [String: Any])
        let userInfo = Dictionary(uniqueKeysWithValues: object.map { (AnyHashable($0.key), $0.value) })
        #expect(FitBaseNotification(userInfo: userInfo) == parsed)
    }

    @Test func everyTypeParsesAndOthersAreKeptOrRejected() {
        func push(_ type: String, _ extra: String = "") -> FitBaseNotification? {
            FitBaseNotification(payload: Data(#"{"aps":{"alert":{"title":"T","body":"B"}},"fitbase":{"type":"\#(type)"\#(extra)}}"#.utf8))
        }
        if case .newMember? = push("new_member") {} else { Issue.record("new_member") }
        if case .weekEnded? = push("week_ended") {} else { Issue.record("week_ended") }
        if case .workoutReminder(let reminder)? = push("workout_reminder", #","date":"2026-03-08""#) {
            #expect(reminder.date == "2026-03-08" && reminder.alert.badge == nil && reminder.alert.body == "B")
        } else {
            Issue.record("workout_reminder")
        }
        if case .periodReminder? = push("period_reminder") {} else { Issue.record("period_reminder") }
        if case .reminder(let reminder)? = push("reminder", #","date":"2026-03-09""#) {
            #expect(reminder.date == "2026-03-09" && push("reminder")?.type == "reminder")
        } else {
            Issue.record("reminder")
        }
        #expect(push("streak_saved") == .other(type: "streak_saved", alert: .init(title: "T", body: "B", badge: nil)))
        // A string alert, as other senders use.
        #expect(FitBaseNotification(userInfo: ["aps": ["alert": "Hi"], "fitbase": ["type": "new_member"]])?.alert.body == "Hi")
        // Not FitBase's, or not JSON.
        #expect(FitBaseNotification(userInfo: ["aps": ["alert": "Hi"]]) == nil)
        #expect(FitBaseNotification(payload: Data("not json".utf8)) == nil)
    }

    @Test(arguments: TestEngines.all)
    func aDeviceRegistersListsAndUnregistersAgainstTheServer(engine: DatabaseEngine) async throws {
        try await SyncEngineTests.withServer(engine) { server, _, _ in
            let fitbase = FitBaseClient(serverURL: server)
            try await fitbase.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            let token = Data((0..<32).map { UInt8($0 * 7 % 256) })
            let device = try await fitbase.registerDevice(
                token: token, environment: .sandbox, bundleId: "com.example.fit", locale: "pt-PT", timeZone: "Europe/Lisbon", appVersion: "2.4.1 (318)"
            )
            #expect(device.token == "00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9")
            #expect(device.environment == .sandbox && device.current && device.timeZone == "Europe/Lisbon")
            // Again, with the process's defaults (no bundle on a test runner: an explicit id is still needed).
            let again = try await fitbase.registerDevice(token: token, environment: .sandbox, bundleId: "com.example.fit")
            #expect(again.registeredAt >= device.registeredAt && again.timeZone == TimeZone.current.identifier)
            #expect(try await fitbase.devices().map(\.token) == [device.token])

            do {
                try await fitbase.registerDevice(token: Data([1, 2, 3]), environment: .production, bundleId: "com.example.fit")
                Issue.record("a 3-byte token was accepted")
            } catch {
                guard case .problem(let problem)? = error as? FitBaseError else { Issue.record("\(error)"); return }
                #expect(problem.fieldErrors.map(\.field) == ["deviceToken"])
            }

            try await fitbase.unregisterDevice(token: token)
            try await fitbase.unregisterDevice(token: token)  // already gone: not an error
            #expect(try await fitbase.devices().isEmpty)
        }
    }

    @Test(arguments: TestEngines.all)
    func preferencesRoundTrip(engine: DatabaseEngine) async throws {
        try await SyncEngineTests.withServer(engine) { server, _, _ in
            let fitbase = FitBaseClient(serverURL: server)
            try await fitbase.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            let initial = try await fitbase.notificationPreferences()
            #expect(initial.enabled == nil && initial.preferences == NotificationPreferences())
            var wanted = NotificationPreferences(rankChange: false, periodReminder: true, quietHoursStart: "22:00", quietHoursEnd: "07:00")
            #expect(try await fitbase.updateNotificationPreferences(wanted, enabled: true) == wanted)
            let read = try await fitbase.notificationPreferences()
            #expect(read.enabled == true && read.preferences == wanted)
            wanted.quietHoursStart = nil
            wanted.quietHoursEnd = nil
            #expect(try await fitbase.updateNotificationPreferences(wanted) == wanted)
        }
    }
}
