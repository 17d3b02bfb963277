import FitBaseAPI
import FitBaseKit
import Foundation
import Synchronization
import Testing

/// The app layer's pieces that need no server: deep links, errors, analytics sinks, the test clock.
@Suite struct DeepLinkParserTests {
    let parser = DeepLinkParser(appScheme: "FitBase", publicURLs: [URL(string: "https://fit.example.com")!, URL(string: "https://example.org/fitbase")!])

    @Test(arguments: [
        ("fitbase://group/invite/abcDEF123_-x", DeepLink.invite(code: "abcDEF123_-x")),
        ("https://fit.example.com/group/invite/abcDEF123_-x", .invite(code: "abcDEF123_-x")),
        ("https://FIT.example.com/group/invite/abcDEF123_-x/", .invite(code: "abcDEF123_-x")),
        ("https://example.org/fitbase/group/invite/abcDEF123_-x", .invite(code: "abcDEF123_-x")),
        ("https://fit.example.com/auth/verify?token=v-123", .verifyEmail(token: "v-123")),
        ("fitbase://auth/verify?token=v-123", .verifyEmail(token: "v-123")),
        ("https://fit.example.com/auth/reset?token=r-456", .resetPassword(token: "r-456")),
        ("fitbase://auth/reset?token=r-456", .resetPassword(token: "r-456")),
    ])
    func linksOfBothFormsAreRead(_ text: String, _ link: DeepLink) throws {
        #expect(parser.parse(try #require(URL(string: text))) == link)
    }

    @Test(arguments: [
        "https://evil.example.com/group/invite/abcDEF123_-x", "https://example.org/group/invite/abcDEF123_-x", "otherapp://group/invite/abcDEF123_-x",
        "fitbase://group/invite/short", "fitbase://group/invite/has%20space1", "https://fit.example.com/auth/verify",
        "https://fit.example.com/auth/reset?token=", "fitbase://group/members/abcDEF123_-x", "mailto:ana@example.com",
    ])
    func anythingElseIsNotAFitBaseLink(_ text: String) throws {
        #expect(parser.parse(try #require(URL(string: text))) == nil)
    }

    @Test func inviteCodesAreReadFromCodesAndLinks() {
        #expect(parser.inviteCode(from: "  abcDEF123_-x \n") == "abcDEF123_-x")
        #expect(parser.inviteCode(from: "https://fit.example.com/group/invite/abcDEF123_-x") == "abcDEF123_-x")
        #expect(parser.inviteCode(from: "https://fit.example.com/auth/verify?token=abc") == nil)
        #expect(parser.inviteCode(from: "no spaces please") == nil)
        #expect(DeepLink.resetPassword(token: "x").kind == .resetPassword && DeepLink.invite(code: "x").kind == .invite)
    }
}

@Suite struct KitErrorTests {
    static func problem(_ json: String) throws -> APIProblem {
        let client = try JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(json.utf8))
        return APIProblem(client)
    }

    @Test func anUpgradeProblemBecomesAPaywallWithItsTier() throws {
        let error = KitError(.problem(try Self.problem(
            #"{"type":"urn:fitbase:problem:upgrade_required","title":"Payment Required","status":402,"code":"upgrade_required","requiredTier":"pro","detail":"Custom plans need Pro.","requestId":"r1"}"#
        )))
        #expect(error.kind == .upgradeRequired && error.requiredTier == .pro && error.message == "Custom plans need Pro.")
        #expect(error.requestID == "r1" && !error.isRetryable)
        // A tier newer than this SDK still shows the paywall, at the highest tier it knows.
        let newer = KitError(.problem(try Self.problem(
            #"{"type":"urn:fitbase:problem:upgrade_required","title":"Payment Required","status":402,"code":"upgrade_required","requiredTier":"platinum"}"#
        )))
        #expect(newer.kind == .upgradeRequired && newer.requiredTier == .premium)
    }

    @Test func validationNamesFieldsAndUnknownCodesFallBackOnStatus() throws {
        let invalid = KitError(.problem(try Self.problem(
            #"{"type":"t","title":"Bad","status":400,"code":"validation_failed","errors":[{"field":"name","message":"must not be empty"}]}"#)))
        #expect(invalid.kind == .invalidInput && invalid.fieldErrors == ["name": "must not be empty"])
        let newer = KitError(.problem(try Self.problem(#"{"type":"t","title":"Conflict","status":409,"code":"brand_new"}"#)))
        #expect(newer.kind == .conflict && newer.code == nil && newer.rawCode == "brand_new")
        let busy = KitError(.problem(try Self.problem(#"{"type":"t","title":"Busy","status":503,"code":"busy"}"#)))
        #expect(busy.kind == .server && busy.isRetryable && busy.message == KitError(.server).message)
        for (status, kind) in [(401, KitError.Kind.notSignedIn), (402, .upgradeRequired), (403, .forbidden), (404, .notFound), (429, .rateLimited), (500, .server)] {
            let error = KitError(.problem(try Self.problem(#"{"type":"t","title":"x","status":\#(status),"code":"zz_unknown"}"#)))
            #expect(error.kind == kind)
        }
    }

    @Test func transportAndLocalFailures() {
        #expect(KitError(FitBaseError.transport("down")).kind == .offline)
        #expect(KitError(FitBaseError.notSignedIn).kind == .notSignedIn)
        #expect(KitError(FitBaseError.storage("disk")).kind == .storage)
        #expect(KitError(FitBaseError.unexpectedResponse(statusCode: 418)).kind == .server)
        for kind in KitError.Kind.allCases { #expect(!KitError(kind).message.isEmpty) }
        #expect(KitError.upgradeRequired(.premium).requiredTier == .premium)
    }
}

@Suite struct AnalyticsTests {
    /// An uploader that can fail, keeping what arrived.
    final class Uploader: AnalyticsUploader {
        let state = Mutex((failing: false, batches: [[AnalyticsRecord]]()))
        var failing: Bool {
            get { state.withLock { $0.failing } }
            set { state.withLock { $0.failing = newValue } }
        }
        var batches: [[AnalyticsRecord]] { state.withLock { $0.batches } }
        struct Down: Error {}
        func upload(_ batch: [AnalyticsRecord]) async throws {
            try state.withLock { state in
                if state.failing { throw Down() }
                state.batches.append(batch)
            }
        }
    }

    /// Every event the app can record, with its parameters.
    static let everyEvent: [AnalyticsEvent] = [
        .signedUp(.apple), .signedIn(.email), .signedOut, .accountDeleted, .onboardingCompleted, .screenViewed(.home), .workoutStarted(workoutID: WorkoutID()),
        .workoutCompleted(workoutID: WorkoutID()), .workoutFailed(workoutID: WorkoutID(), reason: .offline), .workoutSynced(succeeded: true), .periodLogged, .planSaved,
        .recommendationOpened(workoutID: WorkoutID()), .groupCreated, .groupJoined(.code), .groupLeft, .inviteShared,
        .paywallShown(feature: .analytics, requiredTier: .pro), .paywallShown(feature: nil, requiredTier: .premium), .purchaseStarted(productID: "p"),
        .purchaseCompleted(productID: "p", tier: .pro), .purchaseCancelled(productID: "p"), .purchaseFailed(productID: "p", reason: .purchaseFailed),
        .purchasesRestored(tier: .free), .healthChartViewed(.heartRate), .deepLinkOpened(.invite), .deepLinkRejected, .notificationOpened(.rankChange),
        .operationFailed(feature: .sync, reason: .server),
    ]

    @Test func noEventCarriesAHealthValue() {
        // By construction: parameters are ids and category names; no value is a number other than a boolean flag.
        for event in Self.everyEvent {
            #expect(!event.name.isEmpty)
            for (key, value) in event.parameters {
                #expect(Double(value) == nil, "\(event.name).\(key) carries a number")
                #expect(!["value", "bpm", "steps", "systolic", "diastolic", "date", "notes", "email"].contains(key))
            }
        }
        // A chart view names the metric, never a reading.
        #expect(AnalyticsEvent.healthChartViewed(.bloodPressure).parameters == ["metric": "bloodPressure"])
    }

    @Test func theConsoleSinkWritesOneLinePerEvent() async {
        let lines = Mutex<[String]>([])
        let sink = ConsoleAnalyticsSink { line in lines.withLock { $0.append(line) } }
        sink.track(.groupJoined(.link))
        await sink.flush()
        #expect(lines.withLock { $0 } == ["[analytics] group_joined source=link"])
    }

    @Test func batchesGoOutBySizeKeepFailuresAndAreBounded() async throws {
        let uploader = Uploader()
        let clock = TestKitClock()
        let sink = BatchingAnalyticsSink(uploader: uploader, configuration: .init(batchSize: 2, flushInterval: .seconds(30), capacity: 3), clock: clock)
        uploader.failing = true
        sink.track(.groupCreated)
        sink.track(.groupLeft)
        await sink.flush()
        #expect(sink.pending.count == 2 && uploader.batches.isEmpty)
        sink.track(.inviteShared)
        sink.track(.signedOut)
        #expect(sink.pending.count == 3 && sink.droppedCount == 1)
        uploader.failing = false
        for _ in 0..<200 where !sink.pending.isEmpty {
            await sink.flush()
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(sink.pending.isEmpty)
        #expect(uploader.batches.map { $0.map(\.name) } == [["group_left", "invite_shared"], ["sign_out"]])
    }

    @Test func theIntervalFlushesAndTheQueueSurvivesARelaunch() async throws {
        let uploader = Uploader()
        let clock = TestKitClock()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("analytics-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        uploader.failing = true
        let first = BatchingAnalyticsSink(uploader: uploader, configuration: .init(batchSize: 10, flushInterval: .seconds(5)), queueFile: file, clock: clock)
        first.track(.periodLogged)
        let relaunched = BatchingAnalyticsSink(uploader: uploader, configuration: .init(batchSize: 10, flushInterval: .seconds(5)), queueFile: file, clock: clock)
        #expect(relaunched.pending.map(\.name) == ["period_logged"])
        uploader.failing = false
        relaunched.track(.planSaved)
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        for _ in 0..<200 where !relaunched.pending.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(relaunched.pending.isEmpty)
        #expect(uploader.batches.flatMap { $0 }.map(\.name).contains("plan_saved"))
    }
}

@Suite struct TestKitClockTests {
    @Test func sleepersWakeWhenTheClockPassesTheirDeadlineOrAreCancelled() async throws {
        let clock = TestKitClock()
        let start = clock.now
        let woke = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(5))
        try await woke.value
        #expect(clock.now.timeIntervalSince(start) == 10)
        try await clock.sleep(for: .zero)
        let cancelled = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        let system = SystemKitClock()
        try await system.sleep(for: .milliseconds(1))
        #expect(system.now.timeIntervalSinceNow < 1)
    }
}
