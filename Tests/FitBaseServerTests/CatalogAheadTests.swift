import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import FitBaseServer

/// The catalog answered on the event loop, ahead of the router (`CatalogAheadRoute`), over a real socket: the router's
/// answer field for field (a `304` too), only for a caller without an account and a catalog in memory, and an edit
/// seen by the very next read. On PostgreSQL every read is the router's.
@Suite struct CatalogAheadTests {
    typealias Answer = MediaLinkChannelTests.Answer

    /// Fields that differ between any two answers: the request's own id, the date, the limit's count, and the router's
    /// `Connection: close` (asked for, to send the second request to the router).
    static let differing: Set<String> = ["x-request-id", "date", "ratelimit", "connection"]

    @Test(arguments: TestEngines.all)
    func theEventLoopAnswersTheCatalogAsTheRouterDoes(engine: DatabaseEngine) async throws {
        try await Self.withCatalog(engine) { client, app, port, free, premium in
            let signedIn = try await client.signUp()
            let ahead = { app.foundation.metrics.catalogAnsweredAhead.load(ordering: .relaxed) }
            // (target, extra fields, whether it is taken ahead)
            let cases: [(String, String, Bool)] = [
                ("/v1/workouts/\(free)", "", true),
                ("/v1/workouts/\(free.uppercased())", "Accept: application/json\r\n", true),
                ("/v1/workouts", "", false),  // the premium workout is on the first page
                ("/v1/workouts?premium=false&limit=5", "X-Request-ID: catalog-1\r\n", true),
                ("/v1/workouts?type=yoga&type=meditation&sort=longest", "", true),
                ("/v1/workouts?type=pilates", "", true),  // an empty page
                ("/v1/workouts?premium=false&limit=1&cursor=\(PageRequest.cursor(offset: 1))", "", true),
                ("/v1/workouts/\(premium)", "", false),
                ("/v1/workouts/\(UUID().uuidString.lowercased())", "", false),
                ("/v1/workouts?limit=0", "", false),
                ("/v1/workouts?q=flow", "", false),
                ("/v1/workouts/featured", "", false),
                ("/v1/workouts/\(free)", "Authorization: Bearer \(signedIn.accessToken)\r\n", false),
                ("/v1/workouts/\(free)", "Accept: text/html\r\n", false),
            ]
            for (target, extra, taken) in cases {
                let (first, router, answeredAhead) = try await Self.pair(port: port, target, extra, counter: ahead)
                #expect(answeredAhead == taken, "\(target) \(extra)")
                Self.expectAlike(first, router, "\(target) \(extra)")
                if taken {
                    #expect(first.status == 200 && first.field("etag")?.hasPrefix("\"") == true)
                    #expect(first.field("x-request-id")?.count == 36 && first.field("x-request-id") != router.field("x-request-id"))
                    #expect(first.field("ratelimit")?.hasPrefix("\"reads\";r=") == true)
                    #expect(first.field("server") == "FitBase" && first.field("date") != nil)
                }
                if extra.hasPrefix("X-Request-ID") { #expect(first.field("x-client-request-id") == "catalog-1") }
            }
            // A tag the caller holds: 304 with the tag and no body, ahead as from the router.
            let tag = try #require(try await Self.pair(port: port, "/v1/workouts/\(free)", "", counter: ahead).first.field("etag"))
            let (notModified, routerNotModified, answeredAhead) = try await Self.pair(
                port: port, "/v1/workouts/\(free)", "If-None-Match: W/\"other\", \(tag)\r\n", counter: ahead)
            #expect(answeredAhead)
            #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.field("etag") == tag)
            Self.expectAlike(notModified, routerNotModified, "304")
        }
    }

    @Test func anEditIsSeenByTheVeryNextReadAhead() async throws {
        try await Self.withCatalog(.sqlite) { client, app, port, free, _ in
            let ahead = { app.foundation.metrics.catalogAnsweredAhead.load(ordering: .relaxed) }
            let admin = try await CacheTests.admin(client, app.testDatabase)
            let created = try await client.json(.post, "/v1/admin/workouts", body: CacheTests.workoutBody, token: admin.accessToken)
            let id = try #require(try json(created)["id"] as? String)
            let before = try await Self.pair(port: port, "/v1/workouts/\(id)", "", counter: ahead)
            #expect(before.answeredAhead)
            #expect(Self.title(before.first) == "Cache Check")

            var renamed = CacheTests.workoutBody
            renamed["title"] = "Cache Checked"
            #expect(try await client.json(.put, "/v1/admin/workouts/\(id)", body: renamed, token: admin.accessToken).status == .ok)
            // The very next read, on a connection of its own: the new title (the router's, then ahead again).
            for _ in 0..<2 {
                let answers = try await MediaLinkChannelTests.exchange(port: port, Self.get("/v1/workouts/\(id)", "Connection: close\r\n"))
                #expect(Self.title(try #require(answers.first)) == "Cache Checked")
            }
            let after = try await Self.pair(port: port, "/v1/workouts/\(id)", "", counter: ahead)
            #expect(after.answeredAhead)
            #expect(Self.title(after.first) == "Cache Checked")
            #expect(after.first.field("etag") != before.first.field("etag"))

            #expect(try await client.json(.delete, "/v1/admin/workouts/\(id)", token: admin.accessToken).status == .noContent)
            let gone = try await MediaLinkChannelTests.exchange(port: port, Self.get("/v1/workouts/\(id)", "Connection: close\r\n"))
            #expect(gone.map(\.status) == [404])
            _ = free
        }
    }

    @Test func aCallerOverTheLimitIsRefusedByTheRouter() async throws {
        var options = TestAppOptions(live: true)
        options.rateLimits = .uniform(.init(perUser: .init(1_000, per: 60), perAddress: .init(4, per: 60)))
        try await Self.withCatalog(.sqlite, options: options) { _, app, port, free, _ in
            let ahead = { app.foundation.metrics.catalogAnsweredAhead.load(ordering: .relaxed) }
            // The pair's three reads (a warm-up, the one answered ahead, the router's); a fourth, and a fifth refused: over
            // the limit, the event loop hands it to the router (never counting it as answered), which refuses it with its
            // problem. (Whether the fourth and fifth are taken ahead depends on the generation still being trusted, a
            // second after the warm-up; the answers are the same either way.)
            let (first, _, answeredAhead) = try await Self.pair(port: port, "/v1/workouts/\(free)", "", counter: ahead)
            #expect(answeredAhead && first.status == 200)
            let fourth = try await MediaLinkChannelTests.exchange(
                port: port, Self.get("/v1/workouts/\(free)", "") + Self.get("/healthz", "Connection: close\r\n"))
            #expect(fourth.map(\.status) == [200, 200])
            let before = ahead()
            let refused = try await MediaLinkChannelTests.exchange(
                port: port, Self.get("/v1/workouts/\(free)", "") + Self.get("/healthz", "Connection: close\r\n"))
            #expect(refused.map(\.status) == [429, 200])
            #expect(refused.first?.field("content-type") == "application/problem+json")
            #expect(refused.first?.field("ratelimit-policy") == "\"reads\";q=4;w=60")
            #expect(ahead() == before)
        }
    }

    // MARK: Helpers

    /// A live application with the catalog fixture imported and read once (so it is in memory); its port, and a free
    /// and a premium workout's ids.
    static func withCatalog(
        _ engine: DatabaseEngine, options: TestAppOptions = .init(live: true),
        _ test: @escaping @Sendable (any TestClientProtocol, TestApp, Int, String, String) async throws -> Void
    ) async throws {
        try await withApp(engine, options: options) { client, app in
            let free = try #require(CatalogTests.fixture.first { !$0.isPremium })
            let premium = try #require(CatalogTests.fixture.first { $0.isPremium })
            try await CatalogImporter.importCatalog((CatalogTests.fixture, []), into: app.database, now: .storageNow)
            try await CacheTests.untilListening(app)
            try await test(client, app, try #require(client.port), free.id.description, premium.id.description)
        }
    }

    static func title(_ answer: Answer) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["title"] as? String
    }

    static func get(_ target: String, _ extra: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: localhost\r\n\(extra)\r\n"
    }

    /// `target` asked for on one connection after a read that brings the catalog into memory and makes its generation
    /// trusted: once plainly (taken ahead when it can be), then with `Connection: close` (always the router's); whether
    /// the first was answered ahead. (The warm-up and the pair are tried again, up to three times, when the first was
    /// not: the generation the warm-up found trusted may have been read almost a recheck before, and expire before the
    /// pair on a loaded machine. A target that must not be taken ahead is never answered ahead in any try.)
    static func pair(port: Int, _ target: String, _ extra: String, counter: () -> Int) async throws -> (first: Answer, router: Answer, answeredAhead: Bool) {
        var result: (first: Answer, router: Answer, answeredAhead: Bool)?
        for _ in 0..<3 {
            _ = try await MediaLinkChannelTests.exchange(port: port, get("/v1/workouts?limit=1", "Connection: close\r\n"))
            let before = counter()
            let answers = try await MediaLinkChannelTests.exchange(port: port, get(target, extra) + get(target, extra + "Connection: close\r\n"))
            try #require(answers.count == 2, "\(target)")
            result = (answers[0], answers[1], counter() == before + 1)
            if result?.answeredAhead == true { break }
        }
        return try #require(result)
    }

    /// Status, body (but a problem's request id) and every field alike, in the same order, but those ``differing``.
    static func expectAlike(_ a: Answer, _ b: Answer, _ comment: String) {
        #expect(a.status == b.status, "\(comment)")
        // A problem names its request's id.
        let body = { (answer: Answer) in
            answer.field("x-request-id").map { String(decoding: answer.body, as: UTF8.self).replacingOccurrences(of: $0, with: "ID") }
        }
        #expect(body(a) == body(b), "\(comment)")
        let lines = { (answer: Answer) in answer.fields.filter { !differing.contains($0.name) }.map { "\($0.name): \($0.value)" } }
        #expect(lines(a) == lines(b), "\(comment)")
        let names = { (answer: Answer) in answer.fields.map(\.name).filter { $0 != "connection" } }
        #expect(names(a) == names(b), "\(comment)")
    }
}
