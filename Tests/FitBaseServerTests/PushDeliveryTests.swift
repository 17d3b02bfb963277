import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Feed notifications reach the recipients' devices through the outbox, and each outcome of a push is settled as
/// Apple meant it.
@Suite struct PushDeliveryTests {
    /// Ana's group with Bea joining it; returns the group id.
    static func joinGroup(_ client: any TestClientProtocol, owner: TestAccount, joining member: TestAccount) async throws -> String {
        let group = try json(try await GroupTests.create(client, owner))
        let groupID = try #require(group["id"] as? String)
        let invite = try #require(try await GroupTests.invite(client, owner, groupID)["token"] as? String)
        let accepted = try await client.json(.post, "/v1/invites/\(invite)/accept", token: member.accessToken)
        try #require(accepted.status == .ok, "accept answered \(accepted.status)")
        return groupID
    }

    @Test(arguments: TestEngines.all)
    func groupNotificationsReachMembersDevicesWithTheirBadge(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        try await withPushApp(engine, provider: provider) { client, database, _ in
            let ana = try await client.signUp()
            let bea = try await client.signUp()
            let outsider = try await client.signUp()
            try await client.enableNotifications(ana)
            try await client.enableNotifications(outsider)
            let (anaPhone, anaTablet, outsiderPhone) = (deviceToken(), deviceToken(), deviceToken())
            try await client.registerDevice(anaPhone, for: ana)
            try await client.registerDevice(anaTablet, for: ana)
            try await client.registerDevice(outsiderPhone, for: outsider)

            let groupID = try await Self.joinGroup(client, owner: ana, joining: bea)
            #expect(await eventually { provider.sent(to: anaPhone).count == 1 && provider.sent(to: anaTablet).count == 1 })
            let push = try #require(provider.sent(to: anaPhone).first)
            #expect(push.fitbaseType == "new_member" && push.badge == 1 && push.topic == "com.example.fit" && push.environment == .sandbox)
            #expect(push.alertBody?.hasSuffix("joined the group.") == true)
            let fitbase = push.body["fitbase"] as? [String: Any]
            #expect(fitbase?["groupId"] as? String == groupID && fitbase?["notificationId"] as? String != nil)
            #expect((push.body["aps"] as? [String: Any])?["thread-id"] as? String == "group-\(groupID)")
            #expect(provider.sent(to: outsiderPhone).isEmpty)
            #expect(await eventually { try await database.pushJobs(to: anaPhone).map(\.status) == ["sent"] })  // settled after sending

            // A second member: the badge counts both unread notifications.
            let cleo = try await client.signUp()
            let invite = try #require(try await GroupTests.invite(client, ana, groupID)["token"] as? String)
            _ = try await client.json(.post, "/v1/invites/\(invite)/accept", token: cleo.accessToken)
            #expect(await eventually { provider.sent(to: anaPhone).count == 2 })
            #expect(provider.sent(to: anaPhone).last?.badge == 2)

            // The type turned off: nothing more; notifications turned off: nothing either.
            try await client.enableNotifications(ana, ["notificationPreferences": ["newMember": false]])
            let dan = try await client.signUp()
            let third = try #require(try await GroupTests.invite(client, ana, groupID)["token"] as? String)
            _ = try await client.json(.post, "/v1/invites/\(third)/accept", token: dan.accessToken)
            try await client.enableNotifications(ana, ["notificationsEnabled": false, "notificationPreferences": ["newMember": true]])
            let eve = try await client.signUp()
            let fourth = try #require(try await GroupTests.invite(client, ana, groupID)["token"] as? String)
            _ = try await client.json(.post, "/v1/invites/\(fourth)/accept", token: eve.accessToken)
            // Nothing was queued (jobs are written with the notification), so nothing more can be sent.
            #expect(try await database.pushJobs(to: anaPhone).count == 2)
            #expect(provider.sent(to: anaPhone).count == 2)
            let me = try json(try await client.json(.get, "/v1/me", token: ana.accessToken))
            #expect((me["notificationPreferences"] as? [String: Any])?["newMember"] as? Bool == true)
        }
    }

    /// Seed 004's other two notifications: a member overtaken on the leaderboard, and every member when the week
    /// closes, each on their phone with the thread, collapse id and badge of the feed.
    @Test(arguments: TestEngines.all)
    func rankChangesAndTheWeeksEndReachMembersPhones(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        let clock = MovableClock()
        try await withPushApp(engine, provider: provider, clock: clock.serverClock) { client, database, _ in
            let (groupID, members, workout) = try await ChallengeTests.group(client, database, members: 2)
            let phones = [deviceToken(), deviceToken()]
            for (member, phone) in zip(members, phones) {
                try await client.enableNotifications(member)
                try await client.registerDevice(phone, for: member)
            }
            let pushes: @Sendable (String, String) -> [PushMessage] = { type, phone in provider.sent(to: phone).filter { $0.fitbaseType == type } }
            func unread(_ account: TestAccount) async throws -> Int? {
                try json(try await client.json(.get, "/v1/notifications", token: account.accessToken))["unreadCount"] as? Int
            }

            // Member 0 leads with one workout; member 1 logs two and passes them.
            try await ChallengeTests.log(client, members[0], workout)
            try await ChallengeTests.log(client, members[1], workout)
            try await ChallengeTests.log(client, members[1], workout)
            #expect(await eventually { !pushes("rank_change", phones[0]).isEmpty })
            let overtaken = try #require(pushes("rank_change", phones[0]).last)
            #expect(overtaken.collapseID == "rank-\(groupID)" && overtaken.alertBody?.contains("now #2 (was #1)") == true)
            #expect((overtaken.body["aps"] as? [String: Any])?["thread-id"] as? String == "group-\(groupID)")
            #expect(try await unread(members[0]) == overtaken.badge)
            #expect(pushes("rank_change", phones[1]).isEmpty)

            // The week closes: both members hear how it ended, once, even with two instances closing it. The
            // application's clock moves past the week's end (the pushes are due at the rollover's time), and the
            // members sign in again (their access tokens expired on the way).
            let now = ChallengeWeek.containing(clock.serverClock.now, in: .gmt).end.addingTimeInterval(1)
            clock.advance(by: now.timeIntervalSince(clock.serverClock.now))
            let rollover = WeekRollover(database: database)
            let closed = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 { group.addTask { try await rollover.rollOver(at: now) } }
                return try await group.reduce(0, +)
            }
            #expect(closed == 2)  // the check-ins and streak challenges, each closed by one of the two
            #expect(await eventually { phones.allSatisfy { !pushes("week_ended", $0).isEmpty } })
            // Every job settled: what was sent is all that will be.
            #expect(await eventually { try await database.pushJobs(to: phones[0]).allSatisfy { $0.status == "sent" } })
            #expect(await eventually { try await database.pushJobs(to: phones[1]).allSatisfy { $0.status == "sent" } })
            for (member, phone) in zip(members, phones) {
                let ended = pushes("week_ended", phone)
                #expect(ended.count == 1 && ended.first?.collapseID == "week-\(groupID)")
                #expect(try await unread(try await client.signIn(member)) == ended.first?.badge)
            }
            #expect(pushes("week_ended", phones[1]).first?.alertBody?.contains("#1 in check-ins (2)") == true)
        }
    }

    @Test(arguments: TestEngines.all)
    func quietHoursHoldAFeedPushUntilTheyEnd(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        let clock = MovableClock()
        try await withPushApp(engine, provider: provider, clock: clock.serverClock) { client, database, _ in
            let ana = try await client.signUp()
            let bea = try await client.signUp()
            // Quiet all day but the minute before now, in UTC: whatever the time, the push falls in them.
            let now = clock.serverClock.now
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .gmt
            let parts = calendar.dateComponents([.hour, .minute], from: now.addingTimeInterval(-120))
            let end = String(format: "%02d:%02d", parts.hour!, parts.minute!)
            let start = String(format: "%02d:%02d", (parts.hour! + (parts.minute! == 59 ? 1 : 0)) % 24, (parts.minute! + 1) % 60)
            try await client.enableNotifications(ana, ["timeZone": "UTC", "notificationPreferences": ["quietHoursStart": start, "quietHoursEnd": end]])
            let phone = deviceToken()
            try await client.registerDevice(phone, for: ana)
            _ = try await Self.joinGroup(client, owner: ana, joining: bea)
            let jobs = try await database.pushJobs(to: phone)
            #expect(jobs.count == 1 && jobs.first?.status == "pending")
            let due = try #require(jobs.first?.nextAttemptAt)
            #expect(due > now.addingTimeInterval(23 * 3600) && due < now.addingTimeInterval(24 * 3600))
            #expect(provider.sent(to: phone).isEmpty)

            let invalid = try await client.json(.patch, "/v1/me", body: ["notificationPreferences": ["quietHoursStart": "25:00"]], token: ana.accessToken)
            let problem = try expectProblem(invalid, .validationFailed)
            #expect((problem["errors"] as? [[String: Any]])?.first?["field"] as? String == "notificationPreferences.quietHoursStart")

            // A second before the quiet hours end the push still waits; once they have, it goes.
            clock.advance(by: due.timeIntervalSince(clock.serverClock.now) - 1)
            #expect(try await database.pushJobs(to: phone).first?.status == "pending")
            clock.advance(by: 2)
            #expect(await eventually { provider.sent(to: phone).count == 1 })
        }
    }

    @Test(arguments: TestEngines.all)
    func eachOutcomeIsSettledAsAppleMeantIt(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        let clock = MovableClock()
        try await withPushApp(engine, provider: provider, clock: clock.serverClock) { client, database, _ in
            let ana = try await client.signUp()
            try await client.enableNotifications(ana)
            let (gone, renewed, retried, rejected) = (deviceToken(), deviceToken(), deviceToken(), deviceToken())
            for token in [gone, renewed, retried, rejected] { try await client.registerDevice(token, for: ana) }
            provider.script(gone, .deviceGone(reason: "Unregistered", since: clock.serverClock.now.addingTimeInterval(60)))
            // Apple learned the token was dead before the app registered it again: the device stays.
            provider.script(renewed, .deviceGone(reason: "Unregistered", since: clock.serverClock.now.addingTimeInterval(-3600)))
            provider.script(retried, .retry(reason: "TooManyRequests", after: .seconds(120)))
            provider.script(rejected, .rejected(reason: "PayloadTooLarge"))

            let bea = try await client.signUp()
            _ = try await Self.joinGroup(client, owner: ana, joining: bea)
            #expect(await eventually { provider.sent.count == 4 })
            #expect(await eventually { try await !database.hasDevice(gone) })
            #expect(try await database.hasDevice(renewed))

            #expect(await eventually { try await database.pushJobs(to: retried).first?.lastError == "TooManyRequests" })
            let retry = try #require(try await database.pushJobs(to: retried).first)
            #expect(retry.status == "pending" && retry.attempts == 1)
            #expect(retry.nextAttemptAt > clock.serverClock.now.addingTimeInterval(100))  // Apple's hint, longer than the first backoff

            #expect(await eventually { try await database.pushJobs(to: rejected).first?.status == "failed" })
            #expect(try await database.pushJobs(to: rejected).first?.lastError == "PayloadTooLarge")
            // Once Apple's hint has passed, the retried push goes again and is sent; the rejected one never does.
            clock.advance(by: retry.nextAttemptAt.timeIntervalSince(clock.serverClock.now) + 1)
            #expect(await eventually { try await database.pushJobs(to: retried).first?.status == "sent" })
            #expect(provider.sent(to: retried).count == 2)
            #expect(provider.sent(to: rejected).count == 1 && provider.sent(to: gone).count == 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func aStuckProviderNeverHoldsUpTheRequestAndSignOutDropsTheQueuedPush(engine: DatabaseEngine) async throws {
        let provider = RecordingPushProvider()
        provider.hold()
        try await withPushApp(engine, provider: provider) { client, database, _ in
            // Whatever fails below, the stuck push is let go, or the worker would hold up the app's shutdown forever.
            defer { provider.release() }
            let ana = try await client.signUp()
            let anaPhone = try await client.signIn(ana)
            try await client.enableNotifications(ana)
            let (phone, other) = (deviceToken(), deviceToken())
            try await client.registerDevice(phone, for: anaPhone)
            try await client.registerDevice(other, for: ana)
            let bea = try await client.signUp()
            // The first push is stuck inside the provider; the request that caused it has answered all the same.
            let groupID = try await Self.joinGroup(client, owner: ana, joining: bea)
            let cleo = try await client.signUp()
            let invite = try #require(try await GroupTests.invite(client, ana, groupID)["token"] as? String)
            #expect(try await client.json(.post, "/v1/invites/\(invite)/accept", token: cleo.accessToken).status == .ok)
            // Signing the phone out drops what is still queued for it.
            #expect(try await client.json(.post, "/v1/auth/signout", token: anaPhone.accessToken).status == .noContent)
            provider.release()
            #expect(await eventually { try await database.pushJobs(to: other).allSatisfy { $0.status == "sent" } && provider.sent(to: other).count == 2 })
            #expect(provider.sent(to: phone).count <= 1)  // at most the push already in flight
            #expect(try await database.pushJobs(to: phone).allSatisfy { $0.status != "pending" })
        }
    }

    /// Two instances on one database (two pools, two workers): every job is sent exactly once.
    @Test(arguments: TestEngines.all)
    func twoWorkersNeverSendTheSameJobTwice(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let first = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let second = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            do {
                try await MigrationRunner.forServer(database: first, logger: TestDatabase.logger).run()
                let provider = RecordingPushProvider(delay: .milliseconds(1))
                let count = 3_000
                let devices = (0..<count).map { _ in
                    DeviceRecord(
                        token: deviceToken(), user: UserID(), session: SessionID(), platform: "ios", environment: .production, bundleID: "com.example.fit",
                        createdAt: .storageNow, registeredAt: .storageNow
                    )
                }
                let content = PushContent(type: "week_ended", title: "The challenge week is over", body: "#1 in check-ins (5).", threadID: "group-x")
                for chunk in stride(from: 0, to: count, by: 500) {
                    try await first.transaction { db in
                        try await PushQueue.enqueue(content, badge: 1, to: Array(devices[chunk..<chunk + 500]), user: UserID(), sendAt: .storageNow, now: .storageNow, on: db)
                    }
                }
                let workers = [first, second].map { PushWorker(database: $0, provider: provider, logger: TestDatabase.logger) }
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in workers + workers {
                        group.addTask { while try await worker.deliverDueJobs() > 0 {} }
                    }
                    try await group.waitForAll()
                }
                let elapsed = ContinuousClock.now - started
                let sent = provider.sent.map(\.deviceToken)
                #expect(sent.count == count)
                #expect(Set(sent) == Set(devices.map(\.token)))
                let statuses = try await first.withConnection { db in
                    try await db.select().column("status").from("outbox").all().map { try $0.decode(column: "status", as: String.self) }
                }
                #expect(statuses.count == count && statuses.allSatisfy { $0 == "sent" })
                print("push figures: two instances × two workers sent \(count) pushes (1 ms each, \(PushWorker.concurrency) in flight per worker) in \(elapsed) on \(engine)")
                try await first.shutdown()
                try await second.shutdown()
            } catch {
                try? await first.shutdown()
                try? await second.shutdown()
                throw error
            }
        }
    }
}
