import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import Synchronization

/// ``ReportingService`` over the FitBase server: reports queue on the device and go in batches of up to 50 — when 20
/// wait, every 30 seconds, and on ``flush()``. A report that breaks ``AppReportRules`` is dropped when recorded; a
/// batch the server refuses (400) is dropped; any other failure (offline, 429) keeps the batch for the next try. The
/// queue holds at most 500 reports, dropping the oldest.
public final class FitBaseReporter: ReportingService {
    public let app: ReportedApp
    private let client: FitBaseClient
    private let flushInterval: Duration
    private let state = Mutex<(queue: [AppReport], sending: Bool, timer: Task<Void, Never>?)>(([], false, nil))
    static let batchThreshold = 20
    static let capacity = 500

    /// A reporter sending through `client` (signed in or not) for `app`.
    public init(client: FitBaseClient, app: ReportedApp, flushInterval: Duration = .seconds(30)) {
        self.client = client
        self.app = app
        self.flushInterval = flushInterval
    }

    /// The reports waiting to be sent, oldest first.
    public var pending: [AppReport] { state.withLock { $0.queue } }

    public func record(_ report: AppReport) {
        guard AppReportRules.violations(of: [report], now: Date()).isEmpty else { return }
        let full = state.withLock { state -> Bool in
            state.queue.append(report)
            if state.queue.count > Self.capacity { state.queue.removeFirst(state.queue.count - Self.capacity) }
            if state.timer == nil {
                let interval = flushInterval
                state.timer = Task { [weak self] in
                    try? await Task.sleep(for: interval)
                    guard let self, !Task.isCancelled else { return }
                    self.state.withLock { $0.timer = nil }
                    await self.flush()
                }
            }
            return state.queue.count >= Self.batchThreshold
        }
        if full { Task { await self.flush() } }
    }

    public func flush() async {
        let claimed = state.withLock { state -> Bool in
            guard !state.sending else { return false }
            state.sending = true
            return true
        }
        guard claimed else { return }
        defer { state.withLock { $0.sending = false } }
        while true {
            let batch = state.withLock { Array($0.queue.prefix(AppReportRules.maximumBatch)) }
            guard !batch.isEmpty else { return }
            guard await send(batch) else { return }
            let sent = Set(batch.map(\.id))
            state.withLock { $0.queue.removeAll { sent.contains($0.id) } }
        }
    }

    /// Whether `batch` is done with: stored, or refused for good.
    private func send(_ batch: [AppReport]) async -> Bool {
        let reports = batch.map { report in
            Components.Schemas.AppReportInput(
                id: report.id.uuidString.lowercased(), kind: report.kind.rawValue, occurredAt: report.occurredAt, appVersion: report.appVersion,
                platform: report.platform.rawValue, osVersion: report.osVersion, deviceModel: report.deviceModel, code: report.code, location: report.location,
                exceptionType: report.exceptionType,
                frames: report.frames.isEmpty ? nil : report.frames.map { .init(module: $0.module, symbol: $0.symbol, offset: $0.offset) },
                operation: report.operation, durationMilliseconds: report.durationMilliseconds
            )
        }
        let client = self.client
        do throws(FitBaseError) {
            _ = try await client.call { try await client.api.sendAppReports(body: .json(.init(reports: reports))).ok }
            return true
        } catch {
            // A batch the server refuses as malformed would be refused again; anything else may go through later.
            return error.statusCode == 400
        }
    }
}
