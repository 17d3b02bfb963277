import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// Lists that used to answer every row: programs are paged like every other list; a consent lists its latest answers.
@Suite struct ListCapTests {
    @Test(arguments: TestEngines.all)
    func programsArePagedByTitle(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { client, _ in
            let all = try #require(json(try await client.json(.get, "/v1/programs?limit=100"))["items"] as? [[String: Any]])
            try #require(all.count >= 3)
            var paged: [[String: Any]] = []
            var cursor: String?
            repeat {
                let page = try json(try await client.json(.get, "/v1/programs?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")))
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.count <= 2)
                paged += items
                cursor = page["nextCursor"] as? String
                #expect(cursor == nil || items.count == 2)
            } while cursor != nil && paged.count <= all.count
            #expect(paged.compactMap { $0["id"] as? String } == all.compactMap { $0["id"] as? String })
            let titles = all.compactMap { $0["title"] as? String }
            #expect(titles == titles.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            // The default page is the convention's 20.
            #expect(try #require(json(try await client.json(.get, "/v1/programs"))["items"] as? [Any]).count == min(20, all.count))
            for bad in ["limit=0", "limit=101", "cursor=nonsense"] {
                try expectProblem(try await client.json(.get, "/v1/programs?\(bad)"), .invalidRequest)
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func aConsentListsItsLatestFiftyAnswers(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            var recorded: [String: Any] = [:]
            for version in 0..<55 {
                let response = try await client.json(
                    .post, "/v1/me/consents", body: ["kind": "marketing", "version": "\(version)", "granted": version % 2 == 0], token: account.accessToken
                )
                #expect(response.status == .created)
                recorded = try json(response)
            }
            try #require(try await client.json(.post, "/v1/me/consents", body: ["kind": "terms", "version": "1", "granted": true], token: account.accessToken).status == .created)
            #expect((recorded["history"] as? [[String: Any]])?.count == 50)

            let items = try #require(json(try await client.json(.get, "/v1/me/consents", token: account.accessToken))["items"] as? [[String: Any]])
            let marketing = try #require(items.first { $0["kind"] as? String == "marketing" })
            let history = try #require(marketing["history"] as? [[String: Any]])
            #expect(history.compactMap { $0["version"] as? String } == (5..<55).map(String.init))
            #expect(marketing["version"] as? String == "54")
            #expect(marketing["granted"] as? Bool == true)
            #expect((items.first { $0["kind"] as? String == "terms" }?["history"] as? [Any])?.count == 1)
            // The export still has every answer.
            let export = try json(try await client.json(.get, "/v1/me/export", token: account.accessToken))
            let sections = try #require(export["sections"] as? [String: Any])
            #expect((sections["consents"] as? [Any])?.count == 56)
        }
    }
}
