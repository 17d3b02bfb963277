import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// `GET /v1/health/overview`: the five summaries and the newest samples in one answer, equal to what the per-type
/// summary answers, audited once per kind of read, on every engine.
@Suite struct HealthOverviewTests {
    @Test(arguments: TestEngines.all)
    func theOverviewHoldsEveryTypesSummaryAndNewestSample(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let token = account.accessToken
            try await client.json(.patch, "/v1/me", body: ["timeZone": "Europe/Berlin"], token: token)
            #expect(try await client.json(.get, "/v1/health/overview", token: token).status == .forbidden)
            try await HealthTests.consent(client, token)
            let range = "from=2026-11-01T00:00:00Z&to=2026-11-15T00:00:00Z"
            let empty = try json(try await client.json(.get, "/v1/health/overview?\(range)", token: token))
            let emptySummaries = try #require(empty["summaries"] as? [[String: Any]])
            #expect(emptySummaries.map { $0["type"] as? String } == HealthSampleType.allCases.map(\.rawValue))
            #expect(emptySummaries.allSatisfy { ($0["buckets"] as? [Any])?.isEmpty == true } && (empty["latest"] as? [Any])?.isEmpty == true)

            let uploaded = try json(try await HealthTests.upload(client, token, [
                HealthTests.sample("heartRate", start: "2026-11-03T08:00:00Z", ["value": 60]),
                HealthTests.sample("heartRate", start: "2026-11-10T08:00:00Z", ["value": 80]),
                HealthTests.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 90]),  // after the range: the newest
                HealthTests.sample("steps", start: "2026-11-04T22:30:00Z", end: "2026-11-04T23:30:00Z", ["value": 1_000]),  // across Berlin's midnight
                HealthTests.sample("sleep", start: "2026-11-05T22:00:00Z", end: "2026-11-06T05:00:00Z", ["stage": "asleepCore"]),
                HealthTests.sample("bloodPressure", start: "2026-11-07T07:00:00Z", ["systolic": 120, "diastolic": 80]),
            ]))
            #expect(uploaded["created"] as? Int == 6)
            for bucket in ["day", "week"] {
                let overview = try json(try await client.json(.get, "/v1/health/overview?\(range)&bucket=\(bucket)", token: token))
                #expect(overview["timeZone"] as? String == "Europe/Berlin" && overview["bucket"] as? String == bucket)
                let summaries = try #require(overview["summaries"] as? [[String: Any]])
                #expect(summaries.map { $0["type"] as? String } == HealthSampleType.allCases.map(\.rawValue))
                for (type, summary) in zip(HealthSampleType.allCases, summaries) {
                    let alone = try json(try await client.json(.get, "/v1/health/summary?type=\(type.rawValue)&\(range)&bucket=\(bucket)", token: token))
                    #expect(NSDictionary(dictionary: summary) == NSDictionary(dictionary: alone), "\(type) by \(bucket)")
                }
            }
            let overview = try json(try await client.json(.get, "/v1/health/overview?\(range)", token: token))
            let latest = try #require(overview["latest"] as? [[String: Any]])
            #expect(latest.map { $0["type"] as? String } == ["heartRate", "steps", "sleep", "bloodPressure"])
            #expect(latest.first?["value"] as? Double == 90 && latest.first?["sourceId"] as? String == "com.apple.health.watch")
            let days = try #require((overview["summaries"] as? [[String: Any]])?.first { $0["type"] as? String == "steps" }?["buckets"] as? [[String: Any]])
            #expect(days.map { $0["start"] as? String } == ["2026-11-04", "2026-11-05"] && days.map { $0["sum"] as? Double } == [500, 500])

            // One read of the summaries (every sample they used) and one of the newest samples, per overview.
            let audit = try #require(try json(try await client.json(.get, "/v1/me/audit?limit=3", token: token))["items"] as? [[String: Any]])
            #expect(audit.prefix(2).map { $0["resource"] as? String } == ["healthSamples", "healthSummary"])
            #expect(audit.prefix(2).map { $0["count"] as? Int } == [4, 5])

            #expect(try await client.json(.get, "/v1/health/overview?from=2026-11-05T00:00:00Z&to=2026-11-01T00:00:00Z", token: token).status == .badRequest)
            let tooLong = try await client.json(.get, "/v1/health/overview?from=2025-01-01T00:00:00Z&to=2026-11-01T00:00:00Z", token: token)
            #expect(tooLong.status == .badRequest)
            #expect(try json(tooLong)["errors"].map { "\($0)" }?.contains("from") == true)
            #expect(try await client.json(.get, "/v1/health/overview?bucket=month", token: token).status == .badRequest)
        }
    }
}
