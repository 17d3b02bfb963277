import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

@testable import FitBaseServer

/// A network that delivers requests but can lose the answer of one upload: the server stored the batch, the device
/// never heard so (the app was killed, the connection dropped).
final class AnswerLosingTransport: ClientTransport, Sendable {
    struct AnswerLost: Error {}

    private let base = FitBaseClient.defaultTransport()
    /// Which upload's answer is lost (1 for the first); `nil` loses none.
    private let state = Mutex((losing: Int?.none, uploads: 0))

    init(losingTheAnswerOfUpload number: Int?) {
        state.withLock { $0.losing = number }
    }

    var uploads: Int { state.withLock { $0.uploads } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let answer = try await base.send(request, body: body, baseURL: baseURL, operationID: operationID)
        guard operationID == "uploadHealthSamples" else { return answer }
        let lose = state.withLock { state in
            state.uploads += 1
            return state.uploads == state.losing
        }
        if lose { throw AnswerLost() }
        return answer
    }
}

/// A phone's live container over a data directory that outlives it: the same files, key and session after a restart.
struct HealthPhone {
    let dependencies: FitBaseDependencies
    let network: AnswerLosingTransport

    init(server: URL, directory: URL, keys: InMemoryKeyProvider, source: FakeHealthKitSource?, losingTheAnswerOfUpload number: Int? = nil) throws {
        network = AnswerLosingTransport(losingTheAnswerOfUpload: number)
        dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, tokenStore: FileTokenStore(fileURL: directory.appendingPathComponent("session.json")),
            keyProvider: keys, analytics: RecordingAnalytics(), timeZone: { .gmt }, transport: network, healthKit: source
        ))
    }
}

/// HealthKit samples uploaded through the live Kit and the SDK's uploader, against a real server.
@Suite struct LiveHealthUploadTests {
    /// `count` samples of `value`'s kind, a minute apart, ending a minute before `now`.
    static func samples(_ count: Int, before now: Date, _ value: (Int) -> HealthValue, seconds: TimeInterval = 0) -> [HealthSample] {
        (0..<count).map { index in
            let start = now.addingTimeInterval(-Double(count - index) * 60 - seconds)
            return HealthSample(
                id: HealthSampleID(), value: value(index), start: start, end: seconds > 0 ? start.addingTimeInterval(seconds) : nil,
                sourceId: "com.apple.health", device: "Watch7,1", metadata: ["HKWasUserEntered": "0"])
        }
    }

    /// 2,500 heart rates (three batches) and a few of every other metric, recorded over the last two days.
    static func week(before now: Date) -> [HealthSample] {
        samples(2_500, before: now) { .heartRate(beatsPerMinute: 50 + Double($0 % 50)) }
            + samples(24, before: now, { _ in .steps(count: 100) }, seconds: 60)
            + samples(3, before: now, { _ in .sleep(stage: .asleepDeep) }, seconds: 1_800)
            + samples(5, before: now) { .oxygenSaturation(percent: 95 + Double($0 % 3)) }
            + samples(2, before: now) { .bloodPressure(systolic: 118 + Double($0), diastolic: 78) }
    }

    /// What the server holds, from one overview: the readings of each point metric, all steps and hours asleep (steps and
    /// sleep are split at midnight, so their bucket counts may count a sample twice; their totals never do).
    static func count(on dependencies: FitBaseDependencies, now: Date) async throws -> [String: Double] {
        let overview = try await dependencies.health.overview(from: now.addingTimeInterval(-3 * 86_400), to: now.addingTimeInterval(60))
        var figures: [String: Double] = [:]
        for metric in [HealthSampleType.heartRate, .oxygenSaturation, .bloodPressure] {
            figures[metric.rawValue] = Double(overview.summary(of: metric).sampleCount)
        }
        figures["steps"] = (overview.series(.steps, bucket: .day).compactMap(\.value).reduce(0, +) * 1_000).rounded() / 1_000
        figures["hoursAsleep"] = (overview.series(.sleep, bucket: .day).compactMap(\.value).reduce(0, +) * 1_000).rounded() / 1_000
        return figures
    }

    static let everything: [String: Double] = ["heartRate": 2_500, "oxygenSaturation": 5, "bloodPressure": 2, "steps": 2_400, "hoursAsleep": 1.5]

    @Test func theUploaderSendsEveryTypeInBatchesOnceAndThenOnlyWhatIsNew() async throws {
        try await LiveDevice.withServer { server, _ in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-health-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let now = Date()
            let recorded = Self.week(before: now)
            let source = FakeHealthKitSource(samples: recorded)
            let phone = try HealthPhone(server: server, directory: directory, keys: InMemoryKeyProvider(), source: source)
            let health = phone.dependencies.health
            #expect(health.uploadsHealthKit)
            _ = try await phone.dependencies.auth.signUp(email: "upload-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: nil)

            // Without the consent nothing is stored, and the uploader stops instead of trying batch after batch.
            let refused = await health.uploadHealthKitSamples { _ in }
            #expect(refused.phase == .consentRequired && refused.uploaded == 0 && phone.network.uploads == 1)

            _ = try await phone.dependencies.profile.recordConsent(.healthData, version: "2026-01", granted: true)
            let steps = Mutex<[HealthUploadProgress]>([])
            let done = await health.uploadHealthKitSamples { progress in steps.withLock { $0.append(progress) } }
            #expect(done.phase == .upToDate && done.uploaded == recorded.count && done.rejected == 0 && done.completedMetrics == 5)
            // Batches of at most 1,000: three of heart rate (the first the one refused before), one of each other type.
            #expect(phone.network.uploads == 1 + 3 + 4)
            let seen = steps.withLock { $0 }
            #expect(seen.first?.phase == .uploading(.heartRate) && seen.last == done)
            #expect(seen.map(\.completedMetrics) == seen.map(\.completedMetrics).sorted())
            #expect(seen.contains { $0.phase == .uploading(.bloodPressure) })
            #expect(try await Self.count(on: phone.dependencies, now: now) == Self.everything)

            // Anchored: a second run sends nothing; new samples are sent alone.
            let again = await health.uploadHealthKitSamples { _ in }
            #expect(again.phase == .upToDate && again.uploaded == 0 && phone.network.uploads == 8)
            await source.add(Self.samples(2, before: Date()) { _ in .heartRate(beatsPerMinute: 180) })
            let more = await health.uploadHealthKitSamples { _ in }
            #expect(more.uploaded == 2 && phone.network.uploads == 9)
            let overview = try await health.overview(from: now.addingTimeInterval(-86_400), to: Date().addingTimeInterval(60))
            #expect(overview.latest[.heartRate]?.value == .heartRate(beatsPerMinute: 180) && overview.latest[.heartRate]?.device == "Watch7,1")
        }
    }

    /// HealthKit's cycle data goes up with the metrics, without the user logging anything: flow days become periods, LH
    /// strips and temperatures signals, and the forecast finds ovulation in them. A night of wrist temperature recorded
    /// later is sent with the nights before it, so its deviation is taken against them.
    @Test func cycleDataFromHealthKitBecomesPeriodsAndSignalsAndMovesTheForecast() async throws {
        try await LiveDevice.withServer { server, _ in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-health-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let calendar = Calendar(identifier: .gregorian)
            var utc = calendar
            utc.timeZone = .gmt
            let today = utc.startOfDay(for: Date())
            func day(_ offset: Int) -> Date { today.addingTimeInterval(Double(offset) * 86_400) }
            func sample(_ kind: HealthKitCycleKind, _ offset: Int, _ value: Double) -> HealthSampleInput {
                HealthSampleInput(
                    id: UUID().uuidString, type: kind.rawValue, value: value, unit: kind.isTemperature ? "degC" : nil, start: day(offset),
                    sourceId: "com.apple.Health", device: "Watch7,1")
            }
            let source = FakeHealthKitSource()
            // Three periods 30 days apart, the last 15 days ago; LH strips negative two days ago, positive today.
            await source.addCycle([-75, -45, -15].flatMap { start in [3.0, 4, 2].enumerated().map { sample(.menstrualFlow, start + $0.offset, $0.element) } })
            await source.addCycle([sample(.ovulationTestResult, -2, 1), sample(.ovulationTestResult, 0, 2)])
            // Eight nights of wrist temperature, a week ago and before.
            await source.addCycle((0..<8).map { sample(.sleepingWristTemperature, -14 + $0, 35.1 + Double($0 % 2) / 10) })
            let phone = try HealthPhone(server: server, directory: directory, keys: InMemoryKeyProvider(), source: source)
            _ = try await phone.dependencies.auth.signUp(email: "cycle-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: nil)
            _ = try await phone.dependencies.profile.recordConsent(.healthData, version: "2026-01", granted: true)

            let phases = Mutex<[HealthUploadProgress.Phase]>([])
            let done = await phone.dependencies.health.uploadHealthKitSamples { progress in phases.withLock { $0.append(progress.phase) } }
            #expect(done.phase == .upToDate && done.uploaded == 9 + 2 + 8 && done.rejected == 0)
            #expect(phases.withLock { $0.contains(.uploadingCycleData) })
            // One upload per kind that had samples.
            #expect(phone.network.uploads == 3)

            // What the server made reaches the device's copy at its next sync.
            try await phone.dependencies.plans.syncNow()
            let cycle = phone.dependencies.cycle
            #expect(try await cycle.periods().count == 3)
            let forecast = try #require(try await cycle.forecast())
            #expect(forecast.ovulationSource == .detected)
            // Nights 6 to 8 had five earlier ones in the upload: their deviations are signals; the first five are the baseline.
            let wrist = try await cycle.signals().filter { if case .wristTemperature = $0.reading { true } else { false } }
            #expect(wrist.count == 3)

            // A ninth night, recorded later, goes up with the thirty nights before it (here the eight), and gets its deviation.
            await source.addCycle([sample(.sleepingWristTemperature, -5, 35.6)])
            let more = await phone.dependencies.health.uploadHealthKitSamples { _ in }
            #expect(more.phase == .upToDate && phone.network.uploads == 4)
            // The signals reach the device's copy at its next sync (in an app the server's nudge starts one).
            try await phone.dependencies.plans.syncNow()
            let nights = try await cycle.signals().compactMap { signal -> Double? in
                if case .wristTemperature(let deviation) = signal.reading { deviation } else { nil }
            }
            #expect(nights.count == 4)
            #expect(nights.contains { abs($0 - 0.45) < 0.001 })

            // Nothing new: nothing is sent.
            _ = await phone.dependencies.health.uploadHealthKitSamples { _ in }
            #expect(phone.network.uploads == 4)
        }
    }

    @Test func aRestartMidBatchResumesFromThePersistedBatchWithoutDuplicates() async throws {
        try await LiveDevice.withServer { server, _ in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-health-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let now = Date()
            let recorded = Self.week(before: now)
            let source = FakeHealthKitSource(samples: recorded)
            let keys = InMemoryKeyProvider()
            // The second upload reaches the server, but its answer never comes back.
            let before = try HealthPhone(server: server, directory: directory, keys: keys, source: source, losingTheAnswerOfUpload: 2)
            _ = try await before.dependencies.auth.signUp(email: "restart-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: nil)
            _ = try await before.dependencies.profile.recordConsent(.healthData, version: "2026-01", granted: true)
            let interrupted = await before.dependencies.health.uploadHealthKitSamples { _ in }
            #expect(interrupted.phase == .failed(.offline) && interrupted.uploaded == 1_000 && interrupted.completedMetrics == 0)
            // The server holds both batches; the device saved the first one's anchor only.
            #expect(try await Self.count(on: before.dependencies, now: now)["heartRate"] == 2_000)

            // The app starts again over the same files: the kept batch goes first, the server knows it, the rest follows.
            let after = try HealthPhone(server: server, directory: directory, keys: keys, source: source)
            let resumed = await after.dependencies.health.uploadHealthKitSamples { _ in }
            #expect(resumed.phase == .upToDate && resumed.uploaded == recorded.count - 1_000)
            #expect(after.network.uploads == 1 + 1 + 4)
            #expect(await source.reads[.heartRate] == 2 + 1)
            #expect(try await Self.count(on: after.dependencies, now: now) == Self.everything)

            // The dashboard over the restarted container shows the figures and the newest readings.
            await Self.expectDashboard(over: after.dependencies, showing: recorded)
        }
    }

    @Test func aFullAccountOrAnUnreadableHealthKitStopsTheUploadWithoutLooping() async throws {
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            var configuration = ServerConfiguration.testing(database)
            configuration.healthSampleQuota = 1_500
            let app = try await buildApplication(configuration: configuration, logger: TestDatabase.logger)
            try await withLiveServer(app) { _, server in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-health-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let source = FakeHealthKitSource(samples: Self.week(before: Date()))
                let phone = try HealthPhone(server: server, directory: directory, keys: InMemoryKeyProvider(), source: source)
                _ = try await phone.dependencies.auth.signUp(email: "quota-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: nil)
                _ = try await phone.dependencies.profile.recordConsent(.healthData, version: "2026-01", granted: true)
                // The second batch would pass the account's 1,500 samples: nothing of it is stored, and the upload stops.
                let full = await phone.dependencies.health.uploadHealthKitSamples { _ in }
                #expect(full.phase == .quotaExceeded && full.uploaded == 1_000 && phone.network.uploads == 2)
                let still = await phone.dependencies.health.uploadHealthKitSamples { _ in }
                #expect(still.phase == .quotaExceeded && still.uploaded == 0 && phone.network.uploads == 3)

                struct NotAuthorized: Error {}
                await source.failReads(with: NotAuthorized())
                let other = try HealthPhone(server: server, directory: directory.appendingPathComponent("other"), keys: InMemoryKeyProvider(), source: source)
                _ = try await other.dependencies.auth.signUp(email: "locked-\(UUID().uuidString.prefix(8))@example.com", password: LiveDevice.password, displayName: nil)
                let unreadable = await other.dependencies.health.uploadHealthKitSamples { _ in }
                #expect(unreadable.phase == .healthKitUnavailable && other.network.uploads == 0)
            }
        }
    }

    @MainActor static func expectDashboard(over dependencies: FitBaseDependencies, showing recorded: [HealthSample]) async {
        let dashboard = HealthDashboardModel(dependencies: dependencies, timeZone: .gmt)
        await dashboard.load()
        #expect(dashboard.error == nil && dashboard.selectedSummary?.sampleCount == 2_500)
        #expect(dashboard.selectedLatest?.value == recorded.filter { $0.type == .heartRate }.last?.value)
        #expect(dashboard.summaries.first { $0.metric == .bloodPressure }?.secondaryAverage == 78)
        #expect(dashboard.canUploadFromHealthKit)
        await dashboard.uploadFromHealthKit()
        #expect(dashboard.upload?.phase == .upToDate && dashboard.upload?.uploaded == 0)
    }
}
