import FitBaseCore
import FitBaseKit
import Foundation
import MetricKit
import Testing

/// ``MetricKitReporter`` over MetricKit's diagnostic payloads.
@Suite(.serialized) struct MetricKitReporterTests {
    private func tree(_ frames: [[String: Any]], attributed: Bool = true) throws -> Data {
        var nested: [String: Any]?
        for frame in frames.reversed() {
            var frame = frame
            if let nested { frame["subFrames"] = [nested] }
            nested = frame
        }
        return try JSONSerialization.data(withJSONObject: [
            "callStackPerThread": true,
            "callStacks": [["threadAttributed": attributed, "callStackRootFrames": [nested ?? [:]]]],
        ])
    }

    @Test func aCrashIsReportedWithItsFramesAndSignal() async throws {
        let reports = RecordingReporter()
        let reporter = MetricKitReporter(reporter: reports)
        let json = try tree([
            [
                "binaryName": "FitnessApp", "symbol": "$s10FitnessApp10TodayModelC4loadyyF",
                "offsetIntoBinaryTextSegment": 1_234,
            ],
            ["binaryName": "libswiftCore.dylib", "offsetIntoBinaryTextSegment": 99],
        ])
        _MetricKitShim.deliverDiagnostics([
            _MetricKitShim.Crash(callStackTree: json, signal: 11),
            // A crash without frames says nothing useful: left out.
            _MetricKitShim.Crash(callStackTree: Data("{}".utf8), signal: 6),
        ])
        let crash = try #require(reports.reports.first)
        #expect(reports.reports.count == 1)
        #expect(crash.exceptionType == "SIGSEGV")
        #expect(
            crash.frames == [
                AppReport.Frame(module: "FitnessApp", symbol: "$s10FitnessApp10TodayModelC4loadyyF", offset: 1_234),
                AppReport.Frame(module: "libswiftCore.dylib", symbol: "unsymbolicated", offset: 99),
            ])
        withExtendedLifetime(reporter) {}
    }

    @Test func theReporterStopsListeningWhenReleased() {
        let before = _MetricKitShim.subscriberCount
        var reporter: MetricKitReporter? = MetricKitReporter(reporter: RecordingReporter())
        #expect(_MetricKitShim.subscriberCount == before + 1)
        reporter = nil
        #expect(reporter == nil)
        #expect(_MetricKitShim.subscriberCount == before)
    }
}
