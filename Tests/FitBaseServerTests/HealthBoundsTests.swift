import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Bounded health data (accounts part 3): an account's samples have a ceiling, on every write path.
@Suite struct HealthBoundsTests {
    @Test(arguments: TestEngines.all)
    func anAccountKeepsAtMostItsQuotaOfSamples(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(configure: { $0.healthSampleQuota = 3 })) { client, app in
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
            try expectProblem(refused, .quotaExceeded)
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
            #expect(problemCode(in: result) == .quotaExceeded)
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
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_HEALTH_SAMPLE_QUOTA": "5000"]).healthSampleQuota == 5000)
        #expect(try ServerConfiguration.resolve(environment: [:]).healthSampleQuota == 2_000_000)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_HEALTH_SAMPLE_QUOTA": "lots"]) }
    }
}

/// The export is written as it is read (accounts part 3), and is the document the generated handler builds.
@Suite struct StreamedExportTests {
    @Test(arguments: TestEngines.all)
    func theStreamedExportIsTheDocumentTheGeneratedHandlerBuilds(engine: DatabaseEngine) async throws {
        try await withApp(engine) { direct, app in
            try await withApp(on: app.testDatabase, options: .init(directRoutes: false)) { generated, _ in
                let account = try await direct.signUp()
                let token = account.accessToken
                try await HealthTests.consent(direct, token)
                // More than two pages of samples, several at the same instant (the page boundary must not drop or repeat one).
                let start = Date(timeIntervalSince1970: 1_790_000_000)
                var uploaded: Set<String> = []
                for batch in 0..<3 {
                    let samples = (0..<900).map { index -> [String: Any] in
                        let id = UUID()
                        uploaded.insert(id.uuidString.lowercased())
                        let instant = start.addingTimeInterval(Double((batch * 900 + index) / 3) * 60)
                        return HealthTests.sample("heartRate", id: id, start: InternetDateTime.string(from: instant), ["value": 50 + index % 40])
                    }
                    #expect(try json(try await HealthTests.upload(direct, token, samples))["created"] as? Int == 900)
                }
                #expect(try await direct.json(.post, "/v1/cycle/periods", body: ["startDate": "2026-11-01"], token: token).status == .created)

                let streamed = try await direct.json(.get, "/v1/me/export", token: token)
                let built = try await generated.json(.get, "/v1/me/export", token: token)
                #expect(streamed.status == .ok && built.status == .ok)
                #expect(streamed.headers[.contentDisposition] == "attachment" && built.headers[.contentDisposition] == "attachment")
                #expect(streamed.headers[.contentType] == built.headers[.contentType])
                var a = try json(streamed)
                var b = try json(built)
                #expect(a.removeValue(forKey: "exportedAt") is String && b.removeValue(forKey: "exportedAt") is String)
                #expect(NSDictionary(dictionary: a).isEqual(to: b))
                let samples = try #require((a["sections"] as? [String: Any])?["healthSamples"] as? [[String: Any]])
                #expect(samples.count == 2_700)
                #expect(Set(samples.compactMap { ($0["id"] as? String)?.lowercased() }) == uploaded)
            }
        }
    }
}

/// A large account is deleted in batches, after it was made unreachable at once (accounts part 3).
@Suite struct LargeAccountDeletionTests {
    /// Tables that hold rows of a user, by the column naming them.
    static let userTables = [
        ("users", "id"), ("sessions", "user_id"), ("health_samples", "user_id"), ("health_sample_counts", "user_id"),
        ("health_rollups", "user_id"), ("user_identities", "user_id"), ("consents", "user_id"), ("sync_sequences", "user_id"),
    ]

    static func remaining(_ user: String, in database: TestDatabase) async throws -> [String: Int] {
        try await database.withStorage { opened in try await opened.withConnection { db in
            var counts: [String: Int] = [:]
            for (table, column) in Self.userTables {
                let rows = try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from(table)
                    .where(SQLColumn(column), .equal, SQLBind(try #require(UUID(uuidString: user)))).first()
                let count = try rows?.decode(column: "n", as: Int.self) ?? 0
                if count > 0 { counts[table] = count }
            }
            return counts
        } }
    }

    static func uploadSamples(_ count: Int, _ client: any TestClientProtocol, _ token: String) async throws {
        try await HealthTests.consent(client, token)
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        for first in stride(from: 0, to: count, by: 1_000) {
            let samples = (first..<min(first + 1_000, count)).map { minute in
                HealthTests.sample("heartRate", start: InternetDateTime.string(from: start.addingTimeInterval(Double(minute) * 60)), ["value": 60 + minute % 30])
            }
            #expect(try json(try await HealthTests.upload(client, token, samples))["created"] as? Int == samples.count)
        }
    }

    @Test(arguments: TestEngines.all)
    func aLargeAccountGoesInBatchesAndLeavesNothing(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            try await Self.uploadSamples(12_000, client, account.accessToken)
            #expect(try await Self.remaining(account.id, in: app.testDatabase)["health_samples"] == 12_000)
            #expect(try await client.json(.delete, "/v1/me", token: account.accessToken).status == .noContent)
            #expect(try await Self.remaining(account.id, in: app.testDatabase).isEmpty)
            try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .sessionRevoked)
            // The address is free again.
            _ = try await client.signUp(account.email)
        }
    }

    @Test(arguments: TestEngines.all)
    func aDeletionCutShortIsUnreachableAndFinishedByHousekeeping(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(configure: { $0.housekeeping = (.milliseconds(300), .milliseconds(300)) })) { client, app in
            let account = try await client.signUp()
            try await Self.uploadSamples(2_000, client, account.accessToken)
            // What the deletion's first transaction leaves when the instance dies right after it (as a row edit:
            // the marker a quarter of an hour old, the password and address gone, the sessions ended).
            try await app.database.transaction { db in
                let id = try #require(UUID(uuidString: account.id))
                try await db.update("users").set("deleting_at", to: Date.storageNow.addingTimeInterval(-900))
                    .set("password_hash", to: SQLLiteral.null).set("email", to: SQLLiteral.null).where("id", .equal, id).run()
                try await db.update("sessions").set("revoked_at", to: Date.storageNow).where("user_id", .equal, id).run()
                try await CacheGenerations.bump(.sessions, on: db)
            }
            try expectProblem(
                try await client.json(.post, "/v1/auth/signin", body: ["email": account.email, "password": account.password]), .invalidCredentials
            )
            try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .sessionRevoked)
            let deadline = ContinuousClock.now.advanced(by: .seconds(20))
            while try await !Self.remaining(account.id, in: app.testDatabase).isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await Self.remaining(account.id, in: app.testDatabase).isEmpty)
        }
    }
}
