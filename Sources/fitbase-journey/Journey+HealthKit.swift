import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// A network that delivers every request but loses the answer of one health upload: the server stored the batch, the
/// phone never heard so (the app was killed while it waited).
final class AnswerLosingNetwork: ClientTransport, Sendable {
    struct AnswerLost: Error {}

    private let base = FitBaseClient.defaultTransport()
    private let state: Mutex<(losing: Int?, uploads: Int)>

    init(losingTheAnswerOfUpload number: Int?) {
        state = Mutex((number, 0))
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

extension Journey {
    /// Cleo's phone reads HealthKit (a fake source): two days of samples upload in batches; the app dies waiting for the
    /// second batch's answer, starts again over the same files, resumes from the kept batch without storing anything
    /// twice, and the dashboard shows every sample and the newest readings.
    static func healthKit(server: URL) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-journey-health-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date()
        let recorded = healthKitSamples(before: now)
        let source = FakeHealthKitSource(samples: recorded)
        func launch(losingTheAnswerOfUpload number: Int?) throws -> (FitBaseDependencies, AnswerLosingNetwork) {
            let network = AnswerLosingNetwork(losingTheAnswerOfUpload: number)
            let dependencies = try FitBaseDependencies.live(.init(
                serverURL: server, dataDirectory: directory, tokenStore: FileTokenStore(fileURL: directory.appendingPathComponent("session.json")),
                analytics: RecordingAnalytics(), timeZone: { .gmt }, transport: network, healthKit: source
            ))
            return (dependencies, network)
        }

        let (first, firstNetwork) = try launch(losingTheAnswerOfUpload: 2)
        let email = "journey-cleo-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        _ = try await first.auth.signUp(email: email, password: password, displayName: "Cleo")
        let dashboard = HealthDashboardModel(dependencies: first, timeZone: .gmt)
        await dashboard.load()
        try check(dashboard.consentRequired, "the health dashboard asks for the health-data consent first")
        await dashboard.grantConsent()
        try check(!dashboard.consentRequired && dashboard.isEmpty && dashboard.canUploadFromHealthKit, "with consent, the dashboard is empty and offers HealthKit (\(String(describing: dashboard.error)))")
        await dashboard.uploadFromHealthKit()
        let interrupted = try require(dashboard.upload, "the upload reports its progress")
        try check(interrupted.phase == .failed(.offline) && interrupted.uploaded == HealthUploadBatch.maximumCount, "the upload stops when the second batch's answer is lost (\(interrupted))")
        step("Cleo's phone uploaded 1 of 3 batches of heart rate, then died waiting for the second's answer (\(firstNetwork.uploads) uploads sent)")

        let (second, secondNetwork) = try launch(losingTheAnswerOfUpload: nil)
        let restarted = HealthDashboardModel(dependencies: second, timeZone: .gmt)
        await restarted.uploadFromHealthKit()
        let resumed = try require(restarted.upload, "the restarted upload reports its progress")
        try check(
            resumed.phase == .upToDate && resumed.uploaded == recorded.count - HealthUploadBatch.maximumCount && resumed.fractionCompleted == 1,
            "the restarted phone resends the kept batch and finishes (\(resumed))")
        // Readings count once each; steps and sleep (split at midnight) add up to what was recorded, not twice that.
        let points: Set<HealthSampleType> = [.heartRate, .oxygenSaturation, .bloodPressure]
        let counts = Dictionary(uniqueKeysWithValues: restarted.summaries.filter { points.contains($0.metric) }.map { ($0.metric, $0.sampleCount) })
        let expected = Dictionary(grouping: recorded.filter { points.contains($0.type) }, by: \.type).mapValues(\.count)
        try check(counts == expected, "the dashboard counts every reading once (\(counts) for \(expected))")
        await restarted.selectMetric(.steps)
        let steps = restarted.series.compactMap(\.value).reduce(0, +)
        await restarted.selectMetric(.sleep)
        let hoursAsleep = restarted.series.compactMap(\.value).reduce(0, +)
        try check(abs(steps - 24 * 400) < 0.001 && abs(hoursAsleep - 4) < 0.001, "the chart holds every step and hour asleep once (\(steps) steps, \(hoursAsleep) h)")
        await restarted.selectMetric(.heartRate)
        let newest = recorded.filter { $0.type == .heartRate }.max { $0.start < $1.start }
        try check(restarted.selectedLatest?.value == newest?.value, "the dashboard shows the newest heart rate")
        await restarted.uploadFromHealthKit()
        try check(restarted.upload?.uploaded == 0, "an upload with nothing new in HealthKit sends nothing")
        step(
            "after the restart the kept batch went again (\(secondNetwork.uploads) uploads), nothing twice: \(counts[.heartRate] ?? 0) heart rates, "
                + "newest \(restarted.selectedLatest.map { "\($0.start)" } ?? "none")")
        await second.auth.signOut()
    }

    /// Two days as a watch records them: 2,500 heart rates a minute apart, steps, a night's sleep, SpO2, blood pressure.
    static func healthKitSamples(before now: Date) -> [HealthSample] {
        func sample(_ minutesAgo: Int, _ value: HealthValue, lasting seconds: TimeInterval? = nil) -> HealthSample {
            let start = now.addingTimeInterval(-Double(minutesAgo) * 60)
            return HealthSample(
                id: HealthSampleID(), value: value, start: start, end: seconds.map { start.addingTimeInterval($0) }, sourceId: "com.apple.health",
                device: "Watch7,1")
        }
        var samples = (1...2_500).reversed().map { sample($0, .heartRate(beatsPerMinute: 55 + Double($0 % 40))) }
        samples += (1...24).map { sample($0 * 60 + 5, .steps(count: 400), lasting: 600) }
        samples += [sample(1_500, .sleep(stage: .asleepCore), lasting: 3 * 3_600), sample(1_320, .sleep(stage: .asleepREM), lasting: 3_600)]
        samples += (1...4).map { sample($0 * 300, .oxygenSaturation(percent: 97)) }
        samples += [sample(700, .bloodPressure(systolic: 121, diastolic: 79))]
        return samples
    }
}
