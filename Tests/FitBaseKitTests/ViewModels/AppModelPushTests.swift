import FitBaseClient
import FitBaseKit
import Foundation
import Testing

/// Tapped pushes and pending screens at the app's root, over the fakes.
@MainActor @Suite struct AppModelPushTests {
    /// A push as the server sends it (`{"aps": {...}, "fitbase": {...}}`).
    static func push(_ type: String, groupID: GroupID? = nil) -> [AnyHashable: Any] {
        var fitbase: [String: Any] = ["type": type]
        if let groupID { fitbase["groupId"] = groupID.description }
        return ["aps": ["alert": ["title": "FitBase", "body": "News"], "badge": 1], "fitbase": fitbase]
    }

    /// Finishes the signed-in user's onboarding answers, so the app opens on its main screens.
    private func completeProfile(_ fixture: Fixture) async throws {
        var profile = FakeData.profile
        profile.lastPeriodStartDate = "2026-02-20"
        _ = try await fixture.fakes.profile.saveProfile(profile)
    }

    @Test func everyKindOfPushLeadsToItsScreen() {
        let group = GroupID()
        let alert = FitBaseNotification.PushAlert(title: "FitBase", body: "News", badge: 2)
        let news = FitBaseNotification.FeedPush(notificationID: NotificationID(), groupID: group, alert: alert)
        let orphan = FitBaseNotification.FeedPush(notificationID: nil, groupID: nil, alert: alert)
        let reminder = FitBaseNotification.ReminderPush(date: "2026-11-26", alert: alert)
        let cases: [(FitBaseNotification, AppModel.Destination)] = [
            (.newMember(news), .group(group)), (.rankChange(news), .leaderboard(group)), (.weekEnded(news), .leaderboard(group)),
            (.newMember(orphan), .notifications), (.rankChange(orphan), .notifications), (.weekEnded(orphan), .notifications),
            (.workoutReminder(reminder), .today), (.reminder(reminder), .today), (.periodReminder(reminder), .cycle),
            (.other(type: "challenge_started", alert: alert), .notifications),
        ]
        for (notification, destination) in cases {
            #expect(AppModel.Destination(notification) == destination, "\(notification.type)")
        }
    }

    @Test func aPushTappedInTheAppOpensItsScreenAtOnce() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile, .saveProfile)
        try await completeProfile(fixture)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        let group = GroupID()
        #expect(await model.openNotification(userInfo: Self.push("rank_change", groupID: group)))
        #expect(model.destination == .leaderboard(group) && model.pending == nil)
        #expect(await model.openNotification(userInfo: Self.push("period_reminder")))
        #expect(model.destination == .cycle)
        // Not one of ours: nothing changes.
        #expect(await model.openNotification(userInfo: ["aps": ["alert": "Hello"]]) == false)
        #expect(model.destination == .cycle)
        #expect(fixture.dependencies.pendingNavigation.load() == nil)
        model.stop()
    }

    @Test func aPushTappedAfterTheServerEndedTheSessionWaitsForItsAccount() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.auth.knobs.implement(.signIn, .signUp)
        fixture.fakes.profile.knobs.implement(.profile, .saveProfile)
        fixture.fakes.push.knobs.implement(.registerDevice, .registration)
        try await completeProfile(fixture)
        try await fixture.dependencies.push.registerDevice(token: Data(repeating: 7, count: 32), environment: .sandbox)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        await fixture.fakes.auth.endSession()
        await eventually { model.route == .signIn }
        // The device still believes it is Ana's: the tap waits for her, kept on the device.
        let group = GroupID()
        #expect(await model.openNotification(userInfo: Self.push("new_member", groupID: group)))
        #expect(model.destination == nil && model.pending == PendingNavigation(destination: .group(group), userID: FakeData.user.id))
        #expect(fixture.dependencies.pendingNavigation.load() == model.pending)
        model.stop()

        // A relaunch reads it back; Ana signing in opens it.
        let relaunched = AppModel(dependencies: fixture.dependencies)
        await relaunched.start()
        #expect(relaunched.pending?.destination == .group(group))
        relaunched.auth.email = FakeData.user.email!
        relaunched.auth.password = FakeData.password
        await relaunched.auth.signIn()
        await eventually { relaunched.destination == .group(group) }
        #expect(relaunched.pending == nil && fixture.dependencies.pendingNavigation.load() == nil)

        // Waiting for Ana, it is dropped when someone else signs in.
        await fixture.fakes.auth.endSession()
        await eventually { relaunched.route == .signIn }
        #expect(await relaunched.openNotification(userInfo: Self.push("workout_reminder")))
        #expect(relaunched.pending?.userID == FakeData.user.id)
        relaunched.auth.email = "someone-else@example.com"
        relaunched.auth.password = "a long enough password"
        await relaunched.auth.signUp()
        await eventually { relaunched.route == .onboarding }
        #expect(relaunched.pending == nil && relaunched.destination == nil)
        relaunched.stop()
    }

    @Test func aPushTappedWhenSignedOutByTheUserOpensNothing() async throws {
        let fixture = Fixture(.signedOut)
        fixture.fakes.push.knobs.implement(.registerDevice, .registration)
        try await fixture.dependencies.push.registerDevice(token: Data(repeating: 9, count: 32), environment: .production)
        #expect(await fixture.dependencies.push.registration() == PushRegistration(token: Data(repeating: 9, count: 32), environment: .production, userID: nil))
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        #expect(await model.openNotification(userInfo: Self.push("week_ended", groupID: GroupID())))
        #expect(model.pending == nil && model.destination == nil)
        model.stop()
    }

    @Test func anInviteWaitingForOnboardingGoesWithItsAccountOnSignOut() async throws {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signUp, .signOut)
        fixture.fakes.profile.knobs.implement(.profile)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        model.auth.email = "new@example.com"
        model.auth.password = "long enough password"
        await model.auth.signUp()
        await eventually { model.route == .onboarding }
        let user = try #require(await fixture.dependencies.auth.currentState().userID)
        await model.open(URL(string: "fitbase://group/invite/\(FakeGroupService.sampleInviteCode)")!)
        #expect(model.pending == PendingNavigation(destination: .joinGroup(code: FakeGroupService.sampleInviteCode), userID: user))
        await model.auth.signOut()
        await eventually { model.route == .signIn }
        #expect(model.pending == nil && fixture.dependencies.pendingNavigation.load() == nil)

        // One opened signed out stays for whoever signs in next, across a relaunch.
        await model.open(URL(string: "fitbase://group/invite/\(FakeGroupService.sampleInviteCode)")!)
        #expect(model.pending?.userID == nil)
        let relaunched = AppModel(dependencies: fixture.dependencies)
        await relaunched.start()
        #expect(relaunched.pendingInviteCode == FakeGroupService.sampleInviteCode)
        model.stop()
        relaunched.stop()
    }

    @Test func theFakeRegistersForEachSessionAsTheLiveServiceDoes() async throws {
        let fakes = FakeServices(scenario: .populated, clock: TestKitClock())
        let token = Data(repeating: 3, count: 32)
        #expect(await fakes.push.registration() == nil)
        try await fakes.push.registerDevice(token: token, environment: .sandbox)
        #expect(await fakes.push.registration() == PushRegistration(token: token, environment: .sandbox, userID: FakeData.user.id))
        await fakes.auth.signOut()
        #expect(await fakes.push.registration() == PushRegistration(token: token, environment: .sandbox, userID: nil))
        fakes.push.knobs.fail(.registerDevice, with: .offline)
        let failed = await #expect(throws: KitError.self) { try await fakes.push.registerDevice(token: token, environment: .production) }
        #expect(failed?.kind == .offline && fakes.push.knobs.callCount(.registerDevice) == 2)
    }

    @Test func thePendingScreenIsKeptInAFileOfTheDataDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-pending-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pending-navigation.json")
        let pending = PendingNavigation(destination: .leaderboard(GroupID()), userID: UserID())
        PendingNavigationStore(file: file).save(pending)
        #expect(PendingNavigationStore(file: file).load() == pending)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        PendingNavigationStore(file: file).save(nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(PendingNavigationStore(file: file).load() == nil)
        // An unreadable file holds nothing.
        try Data("not json".utf8).write(to: file)
        #expect(PendingNavigationStore(file: file).load() == nil)
    }
}
