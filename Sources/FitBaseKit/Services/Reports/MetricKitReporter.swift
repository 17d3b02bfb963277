#if canImport(MetricKit)
import FitBaseCore
import Foundation
import MetricKit

/// Forwards MetricKit's crash diagnostics to a ``ReportingService``: each `MXCrashDiagnostic`'s call stack (the thread
/// that crashed, symbolicated on the device where MetricKit gives a symbol, else the binary's name and offset) and its
/// signal. Keep one alive for the app's life:
///
/// ```swift
/// let metrics = MetricKitReporter(reporter: dependencies.reports)
/// ```
public final class MetricKitReporter: NSObject, MXMetricManagerSubscriber, @unchecked Sendable {
    private let reporter: any ReportingService

    /// Subscribes to MetricKit's payloads for `reporter`.
    public init(reporter: any ReportingService) {
        self.reporter = reporter
        super.init()
        MXMetricManager.shared.add(self)
    }

    deinit {
        MXMetricManager.shared.remove(self)
    }

    public func didReceive(_ payloads: [MXDiagnosticPayload]) {
        for payload in payloads {
            for crash in payload.crashDiagnostics ?? [] {
                let frames = Self.frames(of: crash.callStackTree.jsonRepresentation())
                guard !frames.isEmpty else { continue }
                reporter.crash(exceptionType: crash.signal.flatMap(Self.signalName), frames: frames)
            }
        }
        Task { await reporter.flush() }
    }

    /// The crashed thread's frames from a call stack tree's JSON (`callStacks[].threadAttributed`, then
    /// `callStackRootFrames` and their `subFrames`), innermost first, as module + symbol + offset.
    static func frames(of json: Data) -> [AppReport.Frame] {
        guard let tree = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let stacks = tree["callStacks"] as? [[String: Any]],
            let stack = stacks.first(where: { $0["threadAttributed"] as? Bool == true }) ?? stacks.first,
            var frame = (stack["callStackRootFrames"] as? [[String: Any]])?.first
        else { return [] }
        var frames: [AppReport.Frame] = []
        while frames.count < AppReportRules.maximumFrames {
            let module = (frame["binaryName"] as? String).map(Self.identifier) ?? "unknown"
            let symbol = (frame["symbol"] as? String).flatMap { AppReportRules.isSymbol($0) ? $0 : nil } ?? "unsymbolicated"
            let offset = frame["offsetIntoBinaryTextSegment"] as? Int ?? 0
            frames.append(AppReport.Frame(module: module, symbol: symbol, offset: offset))
            guard let next = (frame["subFrames"] as? [[String: Any]])?.first else { break }
            frame = next
        }
        return frames
    }

    /// A binary's name as a report's module: its characters outside the identifier's kept out.
    static func identifier(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: name.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_.-".unicodeScalars.contains($0)) }.prefix(64))
        let kept = String(scalars)
        return AppReportRules.isIdentifier(kept) ? kept : "unknown"
    }

    static func signalName(_ signal: NSNumber) -> String? {
        [6: "SIGABRT", 10: "SIGBUS", 8: "SIGFPE", 4: "SIGILL", 11: "SIGSEGV", 5: "SIGTRAP", 9: "SIGKILL", 12: "SIGSYS"][signal.intValue]
    }
}
#endif
