import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The Kit's analytics reach FitBase's own endpoint: every event the app records passes the server's rules, each is
/// stored once however often its batch is sent, and nothing arrives without the user's consent.
@Suite struct LiveAnalyticsUploadTests {
    @Test func everyEventTheAppRecordsPassesTheServersRules() {
        let now = Date()
        for event in AnalyticsTests.everyEvent {
            let product = ProductEvent(id: UUID(), name: event.name, occurredAt: now, properties: event.parameters.mapValues { .string($0) })
            #expect(ProductEventRules.violations(of: [product], now: now) == [], "\(event.name)")
        }
    }

    @Test func batchesArriveOnceEachThroughTheSink() async throws {
        try await withLiveApp(.sqlite) { server, database in
            let client = FitBaseClient(serverURL: server)
            try await client.signUp(email: "analytics-\(UUID().uuidString.prefix(8))@example.com", password: "correct horse battery")
            let uploader = FitBaseAnalyticsUploader(client: client)
            let records = AnalyticsTests.everyEvent.map { AnalyticsRecord(name: $0.name, parameters: $0.parameters, timestamp: Date()) }

            // Without the consent the server refuses the batch, and the uploader drops it rather than retry for ever.
            try await uploader.upload(records)
            #expect(try await Self.stored(database) == 0)

            let consent = try await client.api.recordConsent(body: .json(.init(kind: .analytics, version: "2026-11", granted: true)))
            guard case .created = consent else { Issue.record("recording the consent: \(consent)"); return }
            // Batches larger than the events, so nothing is sent before the flush below sends them all.
            let sink = BatchingAnalyticsSink(uploader: uploader, configuration: .init(batchSize: 100, flushInterval: .seconds(3_600)))
            for event in AnalyticsTests.everyEvent { sink.track(event) }
            await sink.flush()
            #expect(sink.pending.isEmpty)
            #expect(try await Self.stored(database) == AnalyticsTests.everyEvent.count)
            // A batch sent again (its answer lost) is not stored twice.
            try await uploader.upload(records)
            try await uploader.upload(records)
            #expect(try await Self.stored(database) == 2 * AnalyticsTests.everyEvent.count)
        }
    }

    static func stored(_ database: TestDatabase) async throws -> Int {
        let opened = try await Database.open(database.location, logger: TestDatabase.logger)
        do {
            let today = CalendarDay(Date(), in: .gmt)
            let count = try await AnalyticsStore(database: opened).dailyCounts(from: today.adding(days: -1), to: today.adding(days: 1)).reduce(0) { $0 + $1.count }
            try await opened.shutdown()
            return count
        } catch {
            try? await opened.shutdown()
            throw error
        }
    }
}
