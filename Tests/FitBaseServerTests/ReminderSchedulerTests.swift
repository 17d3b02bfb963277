import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Reminders at the user's local minute, across daylight-saving changes and half-hour offsets, once per day however
/// many schedulers run.
@Suite struct ReminderSchedulerTests {
    static func instant(_ text: String) -> Date {
        try! Date(text, strategy: .iso8601)
    }

    /// An account with notifications on, a workout time, a time zone and a device; returns it and the device token.
    static func member(_ client: any TestClientProtocol, time: String? = "07:00", timeZone: String, _ extra: [String: Any] = [:]) async throws -> (TestAccount, String) {
        let account = try await client.signUp()
        var body: [String: Any] = ["timeZone": timeZone]
        if let time { body["preferredWorkoutTime"] = time }
        body.merge(extra) { $1 }
        try await client.enableNotifications(account, body)
        let token = deviceToken()
        try #require(try await client.registerDevice(token, for: account).status == .created)
        return (account, token)
    }

    @Test(arguments: TestEngines.all)
    func workoutRemindersFollowTheLocalClockAcrossDaylightSaving(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        try await withPushApp(engine, provider: provider) { client, _, scheduler in
            let (_, phone) = try await Self.member(client, timeZone: "America/New_York")
            // The day before daylight saving starts: 07:00 EST is 12:00 UTC.
            #expect(try await scheduler.run(at: Self.instant("2026-03-07T11:59:00Z")) == 0)
            #expect(try await scheduler.run(at: Self.instant("2026-03-07T12:00:00Z")) == 1)
            #expect(try await scheduler.run(at: Self.instant("2026-03-07T12:01:00Z")) == 0)
            // The day it starts: 07:00 EDT is 11:00 UTC.
            #expect(try await scheduler.run(at: Self.instant("2026-03-08T10:59:00Z")) == 0)
            #expect(try await scheduler.run(at: Self.instant("2026-03-08T11:00:00Z")) == 1)
            // The day it ends: 06:00 EST at 11:00 UTC is too early, 07:00 EST is 12:00 UTC.
            #expect(try await scheduler.run(at: Self.instant("2026-10-31T11:00:00Z")) == 1)
            #expect(try await scheduler.run(at: Self.instant("2026-11-01T11:00:00Z")) == 0)
            #expect(try await scheduler.run(at: Self.instant("2026-11-01T12:00:00Z")) == 1)
            #expect(await eventually { provider.sent(to: phone).count == 4 })
            let push = try #require(provider.sent(to: phone).first { ($0.body["fitbase"] as? [String: Any])?["date"] as? String == "2026-11-01" })
            // Health content stays off the lock screen, and out of the payload's type and collapse id, by default.
            #expect(push.fitbaseType == "reminder" && push.badge == nil)
            #expect(push.alertBody == PushQueue.discreetBody)
            #expect(push.expiration == Self.instant("2026-11-02T05:00:00Z"))  // the end of the local day (EST)
            #expect(push.collapseID == "reminder")
            #expect((push.body["fitbase"] as? [String: Any])?["date"] as? String == "2026-11-01")
        }
    }

    @Test(arguments: TestEngines.all)
    func aMinuteThatDoesNotExistOrHappensTwiceSendsOnce(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider()) { client, _, scheduler in
            _ = try await Self.member(client, time: "02:30", timeZone: "America/New_York")
            // 02:30 does not exist on 2026-03-08 (01:59 EST is followed by 03:00 EDT): it goes at 03:00.
            #expect(try await scheduler.run(at: Self.instant("2026-03-08T06:59:00Z")) == 0)
            #expect(try await scheduler.run(at: Self.instant("2026-03-08T07:00:00Z")) == 1)
            _ = try await Self.member(client, time: "01:30", timeZone: "America/New_York")
            // 01:30 happens twice on 2026-11-01 (EDT, then EST): once is enough.
            #expect(try await scheduler.run(at: Self.instant("2026-11-01T05:30:00Z")) == 1)
            #expect(try await scheduler.run(at: Self.instant("2026-11-01T06:30:00Z")) == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func aHalfHourOffsetAndTwoSchedulersSendOnce(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        try await withPushApp(engine, provider: provider) { client, database, scheduler in
            let (_, phone) = try await Self.member(client, timeZone: "Asia/Kolkata", ["notificationPreferences": ["showSensitiveContent": true]])
            #expect(try await scheduler.run(at: Self.instant("2026-03-09T01:29:00Z")) == 0)
            // Two instances' schedulers at the same minute: one of them sends.
            let other = ReminderScheduler(database: database, cycle: scheduler.cycle, claimKey: scheduler.claimKey)
            async let first = scheduler.run(at: Self.instant("2026-03-09T01:30:00Z"))
            async let second = other.run(at: Self.instant("2026-03-09T01:30:00Z"))
            #expect(try await first + second == 1)
            #expect(await eventually { provider.sent(to: phone).count == 1 })
            // One job was queued, and it is settled: nothing more will be sent.
            #expect(await eventually { try await database.pushJobs(to: phone).map(\.status) == ["sent"] })
            #expect(provider.sent(to: phone).count == 1)
            #expect(provider.sent(to: phone).first?.alertBody == "Time for today's workout.")
            #expect(provider.sent(to: phone).first?.expiration == Self.instant("2026-03-09T18:30:00Z"))
        }
    }

    @Test(arguments: TestEngines.all)
    func remindersRespectTrainingDaysLoggedWorkoutsQuietHoursAndPreferences(engine: DatabaseEngine) async throws {
        try await withPushApp(engine, provider: RecordingPushProvider(), demoCatalog: true) { client, _, scheduler in
            let workouts = try json(try await client.json(.get, "/v1/workouts?limit=50"))["items"] as? [[String: Any]] ?? []
            let workout = try #require(workouts.first { $0["isPremium"] as? Bool == false }?["id"] as? String)
            let (planner, _) = try await Self.member(client, timeZone: "UTC")
            // Mondays only, from Monday 2026-03-02.
            let plan: [String: Any] = [
                "name": "Mondays", "startDate": "2026-03-02", "daysPerWeek": 1,
                "weeklyWorkouts": [["week": 1, "days": [["day": 1, "workoutIds": [workout]]]]],
            ]
            #expect(try await client.json(.post, "/v1/plans", body: plan, token: planner.accessToken).status == .created)
            #expect(try await scheduler.run(at: Self.instant("2026-03-08T07:00:00Z")) == 0)  // a Sunday
            #expect(try await scheduler.run(at: Self.instant("2026-03-09T07:00:00Z")) == 1)  // a Monday (week 2 repeats week 1)

            // A workout already logged that local day.
            let (logger, _) = try await Self.member(client, timeZone: "UTC")
            let log: [String: Any] = ["workoutId": workout, "completedAt": "2026-03-10T06:00:00Z", "duration": 20]
            #expect(try await client.json(.post, "/v1/history", body: log, token: logger.accessToken).status == .created)
            // Tuesday: the planner does not train, the logger (no plan: every day) has trained already.
            #expect(try await scheduler.run(at: Self.instant("2026-03-10T07:00:00Z")) == 0)
            #expect(try await scheduler.run(at: Self.instant("2026-03-11T07:00:00Z")) == 1)  // the logger, who has not
        }
    }

    @Test(arguments: TestEngines.all)
    func quietHoursAndSwitchesStopReminders(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        try await withPushApp(engine, provider: provider) { client, database, scheduler in
            _ = try await Self.member(client, timeZone: "UTC", ["notificationPreferences": ["quietHoursStart": "22:00", "quietHoursEnd": "07:30"]])
            _ = try await Self.member(client, timeZone: "UTC", ["notificationPreferences": ["workoutReminder": false]])
            _ = try await Self.member(client, timeZone: "UTC", ["notificationsEnabled": false])
            _ = try await Self.member(client, time: nil, timeZone: "UTC")
            #expect(try await scheduler.run(at: Self.instant("2026-03-09T07:00:00Z")) == 0)
            // The period reminder, when asked for: the day before the predicted start (2026-02-10 + 28 days), at 09:00.
            let (_, phone) = try await Self.member(client, time: nil, timeZone: "UTC", [
                "cycleTrackingEnabled": true, "lastPeriodStartDate": "2026-02-10", "averageCycleLength": 28,
                "notificationPreferences": ["periodReminder": true],
            ])
            #expect(try await scheduler.run(at: Self.instant("2026-03-08T09:00:00Z")) == 0)
            #expect(try await scheduler.run(at: Self.instant("2026-03-09T09:00:00Z")) == 1)
            #expect(await eventually { provider.sent(to: phone).count == 1 })
            let discreet = try #require(provider.sent(to: phone).first)
            #expect(discreet.fitbaseType == "reminder" && discreet.collapseID == "reminder" && discreet.alertBody == PushQueue.discreetBody)
            // Someone who asked to see cycle content gets the reminder as what it is.
            let (_, open) = try await Self.member(client, time: nil, timeZone: "UTC", [
                "cycleTrackingEnabled": true, "lastPeriodStartDate": "2026-02-11", "averageCycleLength": 28,
                "notificationPreferences": ["periodReminder": true, "showSensitiveContent": true],
            ])
            #expect(try await scheduler.run(at: Self.instant("2026-03-10T09:00:00Z")) == 1)
            #expect(await eventually { provider.sent(to: open).count == 1 })
            let plain = try #require(provider.sent(to: open).first)
            #expect(plain.fitbaseType == "period_reminder" && plain.collapseID == "reminder-period" && plain.alertBody == "Your period is expected tomorrow.")
            // What is stored of the sent reminders names neither the kind nor the day.
            let claims = try await database.withConnection { db in
                try await db.select().column("claim").from("push_reminder_claims").all().map { try $0.decode(column: "claim", as: String.self) }
            }
            #expect(claims.count == 2 && claims.allSatisfy { $0.count == 64 && !$0.contains("period") && !$0.contains("2026") })
        }
    }
}
