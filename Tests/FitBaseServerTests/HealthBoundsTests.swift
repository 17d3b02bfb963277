import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// Bounded health data (accounts part 3): an account's samples have a ceiling, on every write path.
@Suite struct HealthBoundsTests {
    @Test(arguments: TestEngines.all)
    func anAccountKeepsAtMostItsQuotaOfSamples(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var configuration = ServerConfiguration.testing(database)
            configuration.healthSampleQuota = 3
            let app = try await buildApplication(configuration: configuration, logger: TestDatabase.logger)
            try await app.test(.router) { client in
                let account = try await client.signUp()
                let token = account.accessToken
                try await HealthTests.consent(client, token)
                func heart(_ minute: Int) -> [String: Any] {
                    HealthTests.sample("heartRate", start: "2026-11-20T08:\(String(format: "%02d", minute)):00Z", ["value": 60 + minute])
                }
                let first = [heart(1), heart(2)]
                #expect(try json(try await HealthTests.upload(client, token, first))["created"] as? Int == 2)
                // Two more would pass the quota: the batch is refused whole, nothing of it stored.
                let refused = try await HealthTests.upload(client, token, [heart(3), heart(4)])
                try expectProblem(refused, code: "quota_exceeded")
                #expect(refused.status == .conflict)
                // Sending stored samples again costs nothing; one more fits.
                #expect(try json(try await HealthTests.upload(client, token, first + [heart(5)]))["created"] as? Int == 1)
                // Through sync, too: the mutation is refused on its own.
                let mutation: [String: Any] = [
                    "mutationId": "q-1", "collection": "healthSamples", "id": UUID().uuidString, "op": "upsert", "updatedAt": "2026-11-20T09:00:00Z",
                    "data": heart(6),
                ]
                let pushed = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [mutation]], token: token))
                let result = try #require((pushed["results"] as? [[String: Any]])?.first)
                #expect(result["status"] as? String == "rejected")
                #expect((result["problem"] as? [String: Any])?["code"] as? String == "quota_exceeded")
                // Deleting makes room again.
                let stored = try json(try await client.json(.get, "/v1/health/samples?type=heartRate", token: token))
                let id = try #require((stored["items"] as? [[String: Any]])?.first?["id"] as? String)
                #expect(try await client.json(.delete, "/v1/health/samples/\(id)", token: token).status == .noContent)
                #expect(try json(try await HealthTests.upload(client, token, [heart(7)]))["created"] as? Int == 1)
                // Another account has its own.
                let other = try await client.signUp()
                try await HealthTests.consent(client, other.accessToken)
                #expect(try json(try await HealthTests.upload(client, other.accessToken, [heart(1), heart(2), heart(3)]))["created"] as? Int == 3)
            }
        }
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_HEALTH_SAMPLE_QUOTA": "5000"]).healthSampleQuota == 5000)
        #expect(try ServerConfiguration.resolve(environment: [:]).healthSampleQuota == 2_000_000)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_HEALTH_SAMPLE_QUOTA": "lots"]) }
    }
}
