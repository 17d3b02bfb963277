import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// `POST /v1/reports`: errors, crashes and traces in, anything that could carry user data refused, limited per account
/// and per address, kept for a while, summarized on the console.
@Suite struct ReportsTests {
    static func report(_ kind: String, id: String = UUID().uuidString, at date: Date = .now, version: String = "1.4.2", _ fields: [String: Any]) -> [String: Any] {
        var report: [String: Any] = [
            "id": id, "kind": kind, "occurredAt": date.formatted(.iso8601), "appVersion": version, "platform": "ios", "osVersion": "17.4.1",
            "deviceModel": "iPhone15,2",
        ]
        report.merge(fields) { $1 }
        return report
    }

    static func error(_ code: String = "offline", location: String = "leaderboard", version: String = "1.4.2") -> [String: Any] {
        report("error", version: version, ["code": code, "location": location])
    }

    static func trace(_ milliseconds: Int, operation: String = "leaderboard.fetch", at date: Date = .now) -> [String: Any] {
        report("trace", at: date, ["operation": operation, "durationMilliseconds": milliseconds])
    }

    static var crashFrames: [[String: Any]] {[
        ["module": "FitBaseKit", "symbol": "$s10FitBaseKit16LeaderboardModelC4loadyyYaF", "offset": 420],
        ["module": "libswift_Concurrency.dylib", "symbol": "swift_task_switch", "offset": 12],
    ]}

    static func send(_ client: any TestClientProtocol, _ token: String?, _ reports: [[String: Any]]) async throws -> TestResponse {
        try await client.json(.post, "/v1/reports", body: ["reports": reports], token: token)
    }

    static func stored(_ app: TestApp) async throws -> Int {
        try await app.database.withConnection { db in
            try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("app_reports").first()?.decode(column: "n", as: Int.self) ?? 0
        }
    }

    @Test(arguments: TestEngines.all)
    func aBatchIsStoredOnceAndTheConsoleShowsErrorsCrashesAndPercentiles(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let user = try await client.signUp()
            let batch = [
                Self.error(), Self.error(), Self.error("validation_failed", location: "plans.save", version: "1.5.0"),
                Self.report("crash", ["exceptionType": "SIGABRT", "frames": Self.crashFrames, "location": "leaderboard"]),
            ] + (1...100).map { Self.trace($0 * 30) }
            let first = Array(batch.prefix(50))
            let sent = try await Self.send(client, user.accessToken, first)
            #expect(sent.status == .ok)
            #expect(try json(sent)["accepted"] as? Int == 50)
            // Sent again (the answer was lost): stored once. Anonymous apps may report too.
            #expect(try json(try await Self.send(client, nil, first))["duplicates"] as? Int == 50)
            #expect(try await Self.send(client, nil, Array(batch[50..<100])).status == .ok)
            #expect(try await Self.send(client, nil, Array(batch[100...])).status == .ok)
            #expect(try await Self.stored(app) == batch.count)

            let today = CalendarDay(.now, in: .gmt)
            let store = ReportsStore(database: app.database)
            #expect(try await store.errorCounts(since: today) == [
                .init(code: "offline", appVersion: "1.4.2", count: 2), .init(code: "validation_failed", appVersion: "1.5.0", count: 1),
            ])
            let crash = try #require(try await store.crashGroups(since: today).first)
            #expect(crash.topFrame == "FitBaseKit $s10FitBaseKit16LeaderboardModelC4loadyyYaF+420" && crash.count == 1 && crash.exceptionType == "SIGABRT")
            // 30, 60, … 3000 ms: nearest-rank p50 = 1500, p95 = 2850, p99 = 2970.
            #expect(try await store.tracePercentiles(since: today) == [.init(operation: "leaderboard.fetch", day: today, count: 100, p50: 1_500, p95: 2_850, p99: 2_970)])

            let (_, session) = try await ConsoleTests.admin(client, app)
            let page = try await ConsoleTests.get(client, "/console/reports", session)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains("<td><code>offline</code></td><td>1.4.2</td><td class=\"num\">2</td>"))
            #expect(html.contains("FitBaseKit $s10FitBaseKit16LeaderboardModelC4loadyyYaF+420"))
            #expect(html.contains("<td class=\"num\">1500</td><td class=\"num\">2850 <strong>over budget</strong></td><td class=\"num\">2970</td>"))
            #expect(html.contains("budget 2000 ms") && html.contains("stroke-dasharray"))
        }
    }

    @Test(arguments: TestEngines.all)
    func reportsRefuseWhatCouldCarryUserDataNamingTheField(engine: DatabaseEngine) async throws {
        // More batches than one account may send a minute by default.
        try await withApp(engine, options: .init(configure: { $0.reports.batchesPerMinute = 1_000 })) { client, app in
            let user = try await client.signUp()
            let cases: [(report: [String: Any], field: String)] = [
                (Self.error("Could not load Ana's leaderboard"), "reports[0].code"),
                (Self.error(location: "ana@example.com"), "reports[0].location"),
                (Self.error(location: "Leaderboard of Morning Crew"), "reports[0].location"),
                (Self.report("error", ["code": "offline"]), "reports[0].location"),
                (Self.report("error", ["code": "offline", "location": "x", "durationMilliseconds": 5]), "reports[0].durationMilliseconds"),
                (Self.report("trace", ["operation": "GET /v1/users/ana", "durationMilliseconds": 5]), "reports[0].operation"),
                (Self.report("trace", ["operation": "sync.round", "durationMilliseconds": 600_001]), "reports[0].durationMilliseconds"),
                (Self.report("trace", ["operation": "sync.round", "durationMilliseconds": 5, "code": "offline"]), "reports[0].code"),
                (Self.report("trace", ["operation": "sync.round"]), "reports[0].durationMilliseconds"),
                (Self.report("crash", ["frames": [["module": "FitBaseKit", "symbol": "load(heartRate: 72)", "offset": 1]]]), "reports[0].frames[0].symbol"),
                (Self.report("crash", ["frames": [["module": "Ana's App", "symbol": "main", "offset": 1]]]), "reports[0].frames[0].module"),
                (Self.report("crash", ["frames": [["module": "App", "symbol": "main", "offset": -1]]]), "reports[0].frames[0].offset"),
                (Self.report("crash", ["frames": [[String: Any]]()]), "reports[0].frames"),
                (Self.report("crash", ["frames": Array(repeating: Self.crashFrames[0], count: 65)]), "reports[0].frames"),
                (Self.report("crash", ["frames": Self.crashFrames, "exceptionType": "Ana pressed save"]), "reports[0].exceptionType"),
                (Self.report("error", ["code": "offline", "location": "x", "deviceModel": "Ana's iPhone"]), "reports[0].deviceModel"),
                (Self.report("error", ["code": "offline", "location": "x", "osVersion": "17.4 (Ana)"]), "reports[0].osVersion"),
                (Self.report("error", version: "1.4 beta for Ana", ["code": "offline", "location": "x"]), "reports[0].appVersion"),
                (Self.report("error", ["code": "offline", "location": "x", "platform": "anaphone"]), "reports[0].platform"),
                (Self.report("note", ["code": "offline", "location": "x"]), "reports[0].kind"),
                (Self.report("error", id: "not-a-uuid", ["code": "offline", "location": "x"]), "reports[0].id"),
                (Self.report("error", at: .now.addingTimeInterval(-40 * 86_400), ["code": "offline", "location": "x"]), "reports[0].occurredAt"),
            ]
            for (report, field) in cases {
                let response = try await Self.send(client, user.accessToken, [report])
                #expect(response.status == .badRequest, "\(field): \(response.status)")
                let problem = try expectProblem(response, .validationFailed)
                #expect((problem["errors"] as? [[String: Any]])?.map { $0["field"] as? String } == [field], "\(String(describing: problem["errors"]))")
            }
            // A field the contract does not have (a message, the user's id) is refused whole, as is a second report's.
            for (key, value) in [("message", "Ana's sync failed"), ("userId", user.id)] {
                var report = Self.error()
                report[key] = value
                let response = try await Self.send(client, user.accessToken, [Self.error(), report])
                #expect(response.status == .badRequest, "\(key)")
            }
            let tooMany = try await Self.send(client, user.accessToken, (0...50).map { _ in Self.error() })
            #expect(tooMany.status == .badRequest)
            #expect(((try expectProblem(tooMany, .invalidRequest))["errors"] as? [[String: Any]])?.first?["field"] as? String == "reports")
            #expect(try await Self.stored(app) == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func eachAccountAndEachAddressHasItsBatchesPerMinute(engine: DatabaseEngine) async throws {
        let clock = MovableClock()
        let options = TestAppOptions(live: true, clock: clock.serverClock, configure: {
            $0.reports.batchesPerMinute = 2
            $0.reports.addressBatchesPerMinute = 5
        })
        try await withApp(engine, options: options) { client, _ in
            let user = try await client.signUp()
            for _ in 0..<2 { #expect(try await Self.send(client, user.accessToken, [Self.error()]).status == .ok) }
            let limited = try await Self.send(client, user.accessToken, [Self.error()])
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
            try expectProblem(limited, .rateLimited)
            // The address has sent 2 counted batches: 3 more, signed out, then it is held back too, whoever asks.
            for _ in 0..<3 { #expect(try await Self.send(client, nil, [Self.error()]).status == .ok) }
            #expect(try await Self.send(client, nil, [Self.error()]).status == .tooManyRequests)
            let other = try await client.signUp()
            #expect(try await Self.send(client, other.accessToken, [Self.error()]).status == .tooManyRequests)
            // A bad batch counts as well (a client looping on it is held back like one looping on good ones).
            clock.advance(by: 61)
            #expect(try await Self.send(client, nil, [Self.error("free text")]).status == .badRequest)
            #expect(try await Self.send(client, user.accessToken, [Self.error()]).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func reportsAreKeptForTheRetentionPeriod(engine: DatabaseEngine) async throws {
        let options = TestAppOptions(configure: {
            $0.reports.retentionDays = 7
            $0.housekeeping = (.milliseconds(20), .milliseconds(50))
        })
        try await withApp(engine, options: options) { client, app in
            let old = Self.trace(900, at: Date.now.addingTimeInterval(-10 * 86_400))
            let sent = try await Self.send(client, nil, [old, Self.trace(700)])
            #expect(sent.status == .ok)
            #expect(await eventually { try await Self.stored(app) == 1 })
        }
        #expect(throws: ConfigurationError.self) { try ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_RETENTION_DAYS": "0"]) }
        #expect(throws: ConfigurationError.self) { try ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_ADDRESS_BATCHES_PER_MINUTE": "lots"]) }
        #expect(try ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_BATCHES_PER_MINUTE": "5"]).batchesPerMinute == 5)
    }
}
