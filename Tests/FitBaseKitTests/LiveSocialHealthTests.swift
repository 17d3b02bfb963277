import FitBaseAPI
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// Groups, notifications and health through the live services, against a real server.
@Suite struct LiveSocialHealthTests {
    @Test func aGroupIsCreatedJoinedByLinkRankedLiveAndLeft() async throws {
        try await LiveDevice.withServer { server, _ in
            let admin = try LiveDevice(server: server)
            let member = try LiveDevice(server: server)
            defer {
                admin.remove()
                member.remove()
            }
            try await admin.signUp()
            try await member.signUp()
            #expect(try await admin.dependencies.groups.currentGroup() == nil)
            let group = try await admin.dependencies.groups.createGroup(name: "Morning Movers", timeZone: "UTC")
            #expect(group.role == .admin && group.memberCount == 1)
            let again = await #expect(throws: KitError.self) { try await admin.dependencies.groups.createGroup(name: "Second", timeZone: "UTC") }
            #expect(again?.kind == .conflict)
            let invitation = try await admin.dependencies.groups.createInvitation(groupID: group.id)
            #expect(invitation.url.path.hasPrefix("/group/invite/") && invitation.deepLink.scheme == "fitbase")
            #expect(member.dependencies.deepLinks.parse(invitation.url) == .invite(code: invitation.code))
            #expect(member.dependencies.deepLinks.parse(invitation.deepLink) == .invite(code: invitation.code))

            let preview = try await member.dependencies.groups.previewInvitation(code: invitation.url.absoluteString)
            #expect(preview.groupName == "Morning Movers" && preview.memberCount == 1 && !preview.isFull)
            let badCode = await #expect(throws: KitError.self) { try await member.dependencies.groups.join(code: "not a code!") }
            #expect(badCode?.kind == .invalidInput)
            let joined = try await member.dependencies.groups.join(code: invitation.deepLink.absoluteString)
            #expect(joined.id == group.id && joined.role == .member)
            let members = try await admin.dependencies.groups.members(groupID: group.id)
            #expect(members.count == 2 && members.first?.role == .admin)
            let board = try await admin.dependencies.groups.leaderboard(groupID: group.id, type: .checkIns)
            #expect(board.type == .checkIns)

            var live = member.dependencies.groups.liveLeaderboard(groupID: group.id, type: .streak).makeAsyncIterator()
            guard case .board(let first)? = await live.next() else {
                Issue.record("no first board")
                return
            }
            #expect(first.type == .streak)

            // The admin hears of the new member.
            let feed = try await admin.dependencies.notifications.feed(page: .first(10))
            #expect(feed.unreadCount >= 1 && feed.page.items.contains { $0.kind == .newMember })
            let unread = try #require(feed.page.items.first { !$0.isRead })
            try await admin.dependencies.notifications.markRead(id: unread.id)
            #expect(try await admin.dependencies.notifications.unreadCount() == feed.unreadCount - 1)
            try await admin.dependencies.notifications.markAllRead()
            #expect(try await admin.dependencies.notifications.unreadCount() == 0)
            let missing = await #expect(throws: KitError.self) { try await admin.dependencies.notifications.markRead(id: NotificationID()) }
            #expect(missing?.kind == .notFound)

            try await member.dependencies.groups.leave(groupID: group.id)
            #expect(try await member.dependencies.groups.currentGroup() == nil)
            // A board of a group the user is not in ends the stream at once.
            var outside = member.dependencies.groups.liveLeaderboard(groupID: group.id, type: .checkIns).makeAsyncIterator()
            guard case .ended(let error)? = await outside.next() else {
                Issue.record("the stream did not end")
                return
            }
            #expect(error.kind == .notFound)
            #expect(await outside.next() == nil)
            let gone = await #expect(throws: KitError.self) { try await member.dependencies.groups.members(groupID: group.id) }
            #expect(gone?.kind == .notFound)
        }
    }

    @Test func theHealthOverviewComesFromTheServerInOneRequest() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let email = "health-\(UUID().uuidString.prefix(8))@example.com"
            _ = try await device.dependencies.auth.signUp(email: email, password: LiveDevice.password, displayName: nil)
            let now = device.clock.now
            let denied = await #expect(throws: KitError.self) { try await device.dependencies.health.overview(from: now.addingTimeInterval(-7 * 86_400), to: now) }
            #expect(denied?.kind == .forbidden && denied?.code == .consentRequired)
            _ = try await device.dependencies.profile.recordConsent(.healthData, version: "2026-01", granted: true)
            let uploader = FitBaseClient(serverURL: server)
            try await uploader.signIn(email: email, password: LiveDevice.password)
            try await HealthUpload.samples(uploader, now: now, marker: "MARKER-HEALTH-SUMMARY")

            let before = device.network.count("getHealthOverview")
            let overview = try await device.dependencies.health.overview(from: now.addingTimeInterval(-7 * 86_400), to: now)
            #expect(device.network.count("getHealthOverview") == before + 1 && device.network.count("getHealthSummary") == 0)
            let summaries = overview.summaries
            #expect(summaries.map(\.metric) == HealthSampleType.allCases)
            let heart = try #require(summaries.first { $0.metric == .heartRate })
            #expect(heart.sampleCount == 2 && heart.average == 65 && heart.minimum == 60 && heart.maximum == 70)
            let pressure = try #require(summaries.first { $0.metric == .bloodPressure })
            #expect(pressure.average == 120 && pressure.secondaryAverage == 80)
            #expect(summaries.first { $0.metric == .steps }?.average == 5_000)
            #expect(overview.latest[.heartRate]?.value == .heartRate(beatsPerMinute: 70) && overview.latest[.sleep] == nil)
            #expect(overview.latest[.heartRate]?.metadata == nil && overview.latest[.bloodPressure]?.sourceId == "com.omron")
            let series = overview.series(.heartRate, bucket: .day)
            #expect(series.count == 8 && series.compactMap(\.value) == [65])
            let point = try #require(series.first { $0.value != nil })
            #expect(point.low == 60 && point.high == 70)
            #expect(overview.series(.steps, bucket: .week).compactMap(\.value) == [5_000])
            let backwards = await #expect(throws: KitError.self) { try await device.dependencies.health.overview(from: now, to: now.addingTimeInterval(-1)) }
            #expect(backwards?.kind == .invalidInput)
        }
    }

    @Test func cancellingAReadSurfacesAsCancelled() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let task = Task { try await device.dependencies.catalog.workouts(matching: .all, page: .first(), policy: .revalidate) }
            task.cancel()
            do {
                _ = try await task.value
            } catch let error as KitError {
                #expect(error.kind == .cancelled || error.kind == .offline)
            }
        }
    }
}

/// Health samples uploaded through the REST API, as HealthKit sync would.
enum HealthUpload {
    static func samples(_ client: FitBaseClient, now: Date, marker: String) async throws {
        // Yesterday at noon (UTC), so the steps' ten minutes never straddle a midnight whatever the hour the test runs.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let hour = calendar.startOfDay(for: now).addingTimeInterval(-12 * 3_600)
        let samples: [Components.Schemas.HealthSampleInput] = [
            .init(id: UUID().uuidString, _type: "heartRate", value: 60, start: hour, sourceId: "com.apple.health", metadata: .init(additionalProperties: ["note": marker])),
            .init(id: UUID().uuidString, _type: "heartRate", value: 70, start: hour.addingTimeInterval(60), sourceId: "com.apple.health"),
            .init(id: UUID().uuidString, _type: "bloodPressure", systolic: 120, diastolic: 80, start: hour, sourceId: "com.omron"),
            .init(id: UUID().uuidString, _type: "steps", value: 5_000, start: hour.addingTimeInterval(-600), end: hour, sourceId: "com.apple.health"),
        ]
        let output = try await client.api.uploadHealthSamples(body: .json(.init(samples: samples)))
        guard case .ok = output else {
            Issue.record("upload answered \(output)")
            return
        }
    }
}
