import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Summaries read 15-minute slot totals (``HealthRollups``): whatever path stored or deleted the samples, every
/// summary equals the one made from the samples themselves, on every engine.
@Suite struct HealthRollupTests {
    /// A sample as uploaded and as the summarizer sees it.
    private struct Uploaded {
        var wire: [String: Any]
        var sample: HealthSample
    }

    /// RFC 3339 in UTC, whole seconds.
    private enum formatter {
        static func string(from date: Date) -> String {
            date.formatted(Date.ISO8601FormatStyle())
        }
    }

    /// Heart rate, oxygen saturation, blood pressure and steps (some at an instant, most over minutes) at random
    /// whole-second instants over five days, some on slot edges; whole-number values.
    private static func randomSamples(count: Int, from: Date, using generator: inout SeededRandom) -> [Uploaded] {
        (0..<count).map { index in
            var start = from.addingTimeInterval(Double(Int.random(in: 0..<5 * 86_400, using: &generator)))
            if index % 9 == 0 { start = HealthSlots.start(of: HealthSlots.slot(of: start)) }
            let id = HealthSampleID()
            var wire: [String: Any] = ["id": id.description, "start": formatter.string(from: start), "sourceId": "com.apple.health.watch"]
            let value: HealthValue
            var end: Date?
            switch index % 5 {
            case 0, 1:
                let bpm = Double(Int.random(in: 45...180, using: &generator))
                (value, wire["type"], wire["value"]) = (.heartRate(beatsPerMinute: bpm), "heartRate", bpm)
            case 2:
                let percent = Double(Int.random(in: 90...100, using: &generator))
                (value, wire["type"], wire["value"], wire["unit"]) = (.oxygenSaturation(percent: percent), "oxygenSaturation", percent, "%")
            case 3:
                let (systolic, diastolic) = (Double(Int.random(in: 95...160, using: &generator)), Double(Int.random(in: 55...95, using: &generator)))
                (value, wire["type"], wire["systolic"], wire["diastolic"], wire["unit"]) =
                    (.bloodPressure(systolic: systolic, diastolic: diastolic), "bloodPressure", systolic, diastolic, "mmHg")
            default:
                let steps = Double(Int.random(in: 0...3_000, using: &generator))
                end = start.addingTimeInterval(index % 3 == 0 ? 0 : Double(Int.random(in: 60...5_400, using: &generator)))
                (value, wire["type"], wire["value"]) = (.steps(count: steps), "steps", steps)
                wire["end"] = formatter.string(from: end!)
            }
            return Uploaded(wire: wire, sample: HealthSample(id: id, value: value, start: start, end: end, sourceId: "com.apple.health.watch"))
        }
    }

    private static func buckets(_ response: TestResponse) throws -> [HealthSummaryBucket] {
        let buckets = try #require(try json(response)["buckets"])
        return try JSONDecoder().decode([HealthSummaryBucket].self, from: JSONSerialization.data(withJSONObject: buckets))
            .map { bucket in
                var bucket = bucket
                bucket.sum = bucket.sum.map { ($0 * 1e6).rounded() / 1e6 }
                return bucket
            }
    }

    /// Summaries over ranges that start and end mid-slot, by day and week, in the account's zone, each compared with
    /// the summarizer's answer from `samples`.
    private static func expectSummariesMatch(
        _ samples: [HealthSample], client: any TestClientProtocol, token: String, zone: TimeZone, from: Date, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let ranges = [(from, from.addingTimeInterval(6 * 86_400)), (from.addingTimeInterval(86_400 + 437), from.addingTimeInterval(3 * 86_400 + 61))]
        for type in [HealthSampleType.heartRate, .oxygenSaturation, .bloodPressure, .steps] {
            for bucket in HealthSummaryBucketSize.allCases {
                for (lower, upper) in ranges {
                    let query = "type=\(type.rawValue)&bucket=\(bucket.rawValue)&from=\(formatter.string(from: lower))&to=\(formatter.string(from: upper))"
                    let response = try await client.json(.get, "/v1/health/summary?\(query)", token: token)
                    #expect(response.status == .ok, sourceLocation: sourceLocation)
                    let expected = HealthSummarizer.summarize(samples, type: type, bucket: bucket, timeZone: zone, from: lower, to: upper).map { bucket in
                        var bucket = bucket
                        bucket.sum = bucket.sum.map { ($0 * 1e6).rounded() / 1e6 }
                        return bucket
                    }
                    #expect(try buckets(response) == expected, "\(query)", sourceLocation: sourceLocation)
                }
            }
        }
    }

    private static func rollupCount(_ location: DatabaseLocation, where condition: String = "1 = 1") async throws -> Int {
        let database = try await Database.open(location, logger: TestDatabase.logger)
        defer { Task { try? await database.shutdown() } }
        return try await database.withConnection { db in
            try await db.raw("SELECT COUNT(*) AS n FROM health_rollups WHERE \(unsafeRaw: condition)").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    @Test(arguments: TestEngines.all)
    func summariesFromSlotTotalsEqualSummariesFromTheSamplesWhateverWroteThem(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            let zone = TimeZone(identifier: "Asia/Kathmandu")!  // UTC+5:45
            try await client.json(.patch, "/v1/me", body: ["timeZone": zone.identifier], token: token)
            try await HealthTests.consent(client, token)
            var generator = SeededRandom(seed: 0x2026_1123)
            let from = Date(timeIntervalSince1970: 1_794_700_000)  // 2026-11-15, mid-slot
            var uploaded = Self.randomSamples(count: 500, from: from, using: &generator)
            // Most arrive in REST batches, the rest one by one through sync push (the other write path).
            for batch in stride(from: 0, to: 450, by: 150).map({ Array(uploaded[$0..<$0 + 150]) }) {
                let response = try await HealthTests.upload(client, token, batch.map(\.wire))
                #expect(try json(response)["created"] as? Int == 150)
            }
            let mutations: [[String: Any]] = uploaded[450...].enumerated().map { index, sample in
                ["mutationId": "push-\(index)", "collection": "healthSamples", "id": sample.sample.id.description, "op": "upsert",
                 "updatedAt": "2026-11-22T08:00:00Z", "data": sample.wire]
            }
            let pushed = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": mutations], token: token))
            #expect((pushed["results"] as? [[String: Any]])?.allSatisfy { $0["status"] as? String == "applied" } == true)
            // Sending samples again changes nothing.
            _ = try await HealthTests.upload(client, token, uploaded[0..<100].map(\.wire))
            #expect(try await Self.rollupCount(app.testDatabase.location) > 100)
            try await Self.expectSummariesMatch(uploaded.map(\.sample), client: client, token: token, zone: zone, from: from)

            // Deleting (over REST and by sync) makes the slots stale; the next summary recounts them.
            let deleted = stride(from: 0, to: 500, by: 17).map { uploaded[$0].sample.id }
            for id in deleted.prefix(20) {
                #expect(try await client.json(.delete, "/v1/health/samples/\(id)", token: token).status == .noContent)
            }
            let erase: [[String: Any]] = deleted.dropFirst(20).enumerated().map { index, id in
                ["mutationId": "erase-\(index)", "collection": "healthSamples", "id": id.description, "op": "delete", "baseVersion": 1,
                 "updatedAt": "2026-11-22T09:00:00Z"]
            }
            let erased = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": erase], token: token))
            #expect((erased["results"] as? [[String: Any]])?.allSatisfy { $0["status"] as? String == "applied" } == true)
            uploaded.removeAll { deleted.contains($0.sample.id) }
            #expect(try await Self.rollupCount(app.testDatabase.location, where: "stale = \(engine == .postgres ? "TRUE" : "1")") > 0)
            try await Self.expectSummariesMatch(uploaded.map(\.sample), client: client, token: token, zone: zone, from: from)
            #expect(try await Self.rollupCount(app.testDatabase.location, where: "stale = \(engine == .postgres ? "TRUE" : "1")") == 0)

            // Totals hold no value in clear, and are bound to their slot: moved to another, they do not open.
            let database = app.database
            let row = try #require(try await database.withConnection { db in
                try await db.select().columns("slot", "sealed").from("health_rollups").where("type", .equal, "heartRate").first()
            })
            let sealed = try row.decode(column: "sealed", as: Data.self)
            #expect(sealed.count == 113 + 28)  // AES-GCM: nonce and tag around the 113 bytes

            // Deleting the account takes the totals with it.
            #expect(try await client.json(.delete, "/v1/me", token: token).status == .noContent)
            #expect(try await Self.rollupCount(app.testDatabase.location) == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func samplesStoredBeforeRollupsAreCountedOnTheFirstSummary(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            try await HealthTests.consent(client, token)
            var generator = SeededRandom(seed: 7)
            let from = Date(timeIntervalSince1970: 1_794_700_000)
            let uploaded = Self.randomSamples(count: 200, from: from, using: &generator)
            _ = try await HealthTests.upload(client, token, uploaded.map(\.wire))
            // As an older version left them: samples without totals, the account marked pending by the migration.
            let database = app.database
            try await database.withConnection { db in
                try await db.delete(from: "health_rollups").run()
                try await db.insert(into: "health_rollups_pending").columns("user_id").values(SQLBind(UUID(uuidString: account.id)!)).run()
            }
            try await Self.expectSummariesMatch(uploaded.map(\.sample), client: client, token: token, zone: TimeZone(identifier: "UTC")!, from: from)
            let pending = try await database.withConnection { db in try await db.select().column("user_id").from("health_rollups_pending").all().count }
            #expect(pending == 0)
            #expect(try await Self.rollupCount(app.testDatabase.location) > 50)
        }
    }

    @Test func totalsRoundTripThroughTheirSealedForm() throws {
        var totals = HealthSlotTotals()
        totals.add(.bloodPressure(systolic: 120, diastolic: 80), start: .now, end: nil)
        totals.add(.bloodPressure(systolic: 131.5, diastolic: 77), start: .now, end: nil)
        totals.add(.steps(count: 12), start: .now, end: nil)
        let encoded = HealthRollups.encode(totals)
        #expect(encoded.count == 113)
        #expect(try HealthRollups.decode(encoded) == totals)
        #expect(throws: HealthRollupCodingError.self) { try HealthRollups.decode(encoded.dropLast()) }
    }
}
