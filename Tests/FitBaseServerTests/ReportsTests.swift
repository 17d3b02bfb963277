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

    /// Reports from an address, as a trusted proxy at 127.0.0.1 names it.
    static func send(_ client: any TestClientProtocol, from address: String, _ reports: [[String: Any]]) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/reports", method: .post, headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: address],
            body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["reports": reports])))
    }

    static func count(_ app: TestApp, _ sql: SQLQueryString) async throws -> Int {
        try await app.database.withConnection { db in try await db.raw(sql).first()?.decode(column: "n", as: Int.self) ?? 0 }
    }

    /// Issue 53: 400 anonymous batches made 20,000 distinct operation names, and the Reports page grew to 40 MB. Two
    /// instances on one database take them at once, from eight clients: one budget of 200 new names for the day, the
    /// rest counted as `(other)`, and the page shows ten operations at a time.
    @Test(arguments: TestEngines.all)
    func twentyThousandOperationNamesTakeTheDaysBudgetAndTheRestCountAsOther(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let masterKey = SharedKeysTests.randomMasterKey()
            @Sendable func options(_ directory: String) -> TestAppOptions {
                var options = TestAppOptions.instance(directory, masterKey: masterKey)
                options.configure = {
                    $0.reports.addressBatchesPerMinute = 100_000
                    $0.reports.anonymousBatchesPerMinute = 100_000
                }
                return options
            }
            try await SharedKeysTests.withDataDirectories(1) { directories in
                try await withApp(on: testDatabase, options: options(testDatabase.dataDirectory)) { a, appA async throws in
                    try await withApp(on: testDatabase, options: options(directories[0])) { b, _ async throws in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for sender in 0..<8 {
                                group.addTask {
                                    for batch in stride(from: sender, to: 400, by: 8) {
                                        let reports = (0..<50).map { Self.trace(100, operation: "op-\(batch)-\($0)") }
                                        let sent = try await Self.send(sender % 2 == 0 ? a : b, nil, reports)
                                        try #require(sent.status == .ok, "\(String(buffer: sent.body))")
                                    }
                                }
                            }
                            try await group.waitForAll()
                        }
                        #expect(try await Self.count(appA, "SELECT COUNT(*) AS n FROM app_reports") == 20_000)
                        #expect(try await Self.count(appA, "SELECT COUNT(DISTINCT operation) AS n FROM app_reports") == 201)
                        #expect(try await Self.count(appA, "SELECT COUNT(*) AS n FROM app_reports WHERE operation = '(other)'") == 19_800)
                        // A name taken today is kept by later reports; a new one is not.
                        let known = try #require(try await ReportsStore(database: appA.database).tracedOperations(since: CalendarDay(.now, in: .gmt), limit: 2).last)
                        #expect(try await Self.send(a, nil, [Self.trace(5, operation: known), Self.trace(5, operation: "op-new")]).status == .ok)
                        #expect(try await Self.count(appA, "SELECT COUNT(*) AS n FROM app_reports WHERE operation = \(bind: known)") == 2)
                        #expect(try await Self.count(appA, "SELECT COUNT(*) AS n FROM app_reports WHERE operation = 'op-new'") == 0)

                        let (_, session) = try await ConsoleTests.admin(a, appA)
                        let page = try await ConsoleTests.get(a, "/console/reports", session)
                        let html = String(buffer: page.body)
                        #expect(page.status == .ok && page.body.readableBytes < 150_000, "\(page.body.readableBytes) bytes")
                        #expect(html.components(separatedBy: "<section ").count - 1 == 10)
                        #expect(html.contains("<code>(other)</code>") && html.contains("href=\"/console/reports?operations=2#traces\" rel=\"next\""))
                        let last = try await ConsoleTests.get(a, "/console/reports?operations=21", session)
                        let lastHTML = String(buffer: last.body)
                        #expect(last.status == .ok && lastHTML.components(separatedBy: "<section ").count - 1 == 1)
                        #expect(lastHTML.contains("rel=\"prev\"") && !lastHTML.contains("rel=\"next\""))
                        let bad = try await ConsoleTests.get(a, "/console/reports?operations=0", session)
                        #expect(bad.status == .badRequest && String(buffer: bad.body).contains("operations"))
                    }
                }
            }
        }
    }

    /// Issue 53: identifier rules let "call-support-at-evil-example-com" through to operators' screens.
    @Test(arguments: TestEngines.all)
    func namesThatSpellAnAddressALinkOrAPhoneNumberAreRefusedNamingTheField(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            for text in ["call-support-at-evil-example-com", "mail me at a@b.co", "https://x.y", "+1 555 123 4567"] {
                let cases: [([String: Any], String)] = [
                    (Self.trace(5, operation: text), "reports[0].operation"),
                    (Self.error(location: text), "reports[0].location"),
                    (Self.report("crash", ["frames": [["module": text, "symbol": "main", "offset": 1]]]), "reports[0].frames[0].module"),
                ]
                for (report, field) in cases {
                    let response = try await Self.send(client, nil, [report])
                    #expect(response.status == .badRequest, "\(text) as \(field)")
                    let errors = try expectProblem(response, .validationFailed)["errors"] as? [[String: Any]]
                    #expect(errors?.map { $0["field"] as? String } == [field], "\(text)")
                    #expect(errors?.first?["message"] as? String == "must not look like an e-mail address, a link or a phone number", "\(text)")
                }
            }
            #expect(try await Self.stored(app) == 0)
        }
    }

    /// Issue 53: eight IPv6 /64s each had the per-address budget. Callers without a token now share one budget, and a
    /// deployment may refuse them altogether.
    @Test(arguments: TestEngines.all)
    func anonymousReportsShareOneBudgetOrAreSwitchedOff(engine: DatabaseEngine) async throws {
        let options = TestAppOptions(live: true, configure: {
            $0.accounts = AccountsConfiguration(trustedProxies: ["127.0.0.1", "::1"])
            $0.reports.anonymousBatchesPerMinute = 4
        })
        try await withApp(engine, options: options) { client, _ in
            var statuses: [HTTPResponse.Status] = []
            for network in 1...8 { statuses.append(try await Self.send(client, from: "2001:db8:\(network)::1", [Self.error()]).status) }
            #expect(statuses == Array(repeating: .ok, count: 4) + Array(repeating: .tooManyRequests, count: 4))
            let user = try await client.signUp()
            #expect(try await Self.send(client, user.accessToken, [Self.error()]).status == .ok)
        }
        let off = TestAppOptions(configure: { $0.reports.acceptsAnonymous = false })
        try await withApp(engine, options: off) { client, app in
            try expectProblem(try await Self.send(client, nil, [Self.error()]), .authenticationRequired)
            let user = try await client.signUp()
            #expect(try await Self.send(client, user.accessToken, [Self.error()]).status == .ok)
            #expect(try await Self.stored(app) == 1)
        }
        #expect(try !ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_ANONYMOUS": "off"]).acceptsAnonymous)
        #expect(throws: ConfigurationError.self) { try ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_ANONYMOUS": "maybe"]) }
        #expect(throws: ConfigurationError.self) { try ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_DISTINCT_PER_DAY": "0"]) }
        #expect(try ReportsConfiguration.resolve(environment: ["FITBASE_REPORTS_ANONYMOUS_BATCHES_PER_MINUTE": "9"]).anonymousBatchesPerMinute == 9)
    }

    /// Issue 53: an operation without a budget was headed "— budget" with nothing after it.
    @Test(arguments: TestEngines.all)
    func anOperationWithoutABudgetIsHeadedByItsNameAlone(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            #expect(try await Self.send(client, nil, [Self.trace(300, operation: "sync.round"), Self.trace(2_500)]).status == .ok)
            let (_, session) = try await ConsoleTests.admin(client, app)
            let html = String(buffer: try await ConsoleTests.get(client, "/console/reports", session).body)
            #expect(html.contains("<code>sync.round</code></h3>"))
            #expect(html.contains("<code>leaderboard.fetch</code> — budget 2000 ms</h3>"))
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
