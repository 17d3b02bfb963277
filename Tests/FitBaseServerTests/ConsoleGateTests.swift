import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// The console's routes are outside the contract, so the access matrix (which walks `openapi.yaml`) cannot see them:
/// this walks every `/console` route the features register instead, so a page added later is covered without being
/// listed here. Anonymous visitors are sent to sign in, an administrator demoted while signed in gets 403, a form
/// without its CSRF token changes nothing (403), and nothing answers 500.
@Suite struct ConsoleGateTests {
    /// Open to everyone by design: the sign-in page and its form, and the stylesheet.
    static let open: Set<String> = ["GET /console/signin", "POST /console/signin", "GET /console/assets/console.css"]

    /// The console's routes behind its gate, sign-out last (it ends the session the others use).
    static func gatedRoutes(_ app: TestApp) async throws -> [Router<FitBaseRequestContext>.RouteDescription] {
        let operations = try composeFeatures(app.foundation, pushProvider: nil, onMetricsListening: { _ in })
        let router = Router(context: FitBaseRequestContext.self)
        for feature in try await routedFeatures(app.foundation, operations: operations) { feature.addRoutes(to: router) }
        let gated = router.routes.filter { $0.path.description.hasPrefix("/console") && !open.contains("\($0.method) \($0.path)") }
        let rank = { (route: Router<FitBaseRequestContext>.RouteDescription) in route.path.description.hasSuffix("/signout") ? 1 : 0 }
        return gated.sorted { (rank($0), $0.description) < (rank($1), $1.description) }
    }

    /// The route's path with unknown ids for its parameters: a page of nothing, never someone's.
    static func uri(_ route: Router<FitBaseRequestContext>.RouteDescription) -> String {
        "/" + route.path.components.map { component -> String in
            let text = component.description
            return text.hasPrefix(":") || text.hasPrefix("{") ? UUID().uuidString.lowercased() : text
        }.joined(separator: "/")
    }

    static func send(_ client: any TestClientProtocol, _ route: Router<FitBaseRequestContext>.RouteDescription, _ uri: String, session: String?, csrf: String) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if route.method == .post { headers[.contentType] = "application/x-www-form-urlencoded" }
        if let session { headers[.cookie] = "fitbase_console=\(session)" }
        return try await client.execute(uri: uri, method: route.method, headers: headers, body: route.method == .post ? ByteBuffer(string: "csrf=\(csrf)") : nil)
    }

    @Test(arguments: TestEngines.all)
    func everyConsoleRouteAdmitsAdministratorsOnly(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let routes = try await Self.gatedRoutes(app)
            #expect(routes.count >= 20, "found \(routes.map(\.description))")

            let (_, session) = try await ConsoleTests.admin(client, app)
            let (demoted, demotedSession) = try await ConsoleTests.admin(client, app)
            guard let demotedID = UserID(demoted.id) else { throw TestFailure("no user id") }
            try await UserStore(database: app.database).setRole(.user, for: demotedID, now: .storageNow)
            let dashboard = try await ConsoleTests.get(client, "/console", session)
            guard let csrf = ConsoleTests.csrf(in: dashboard) else { throw TestFailure("the dashboard has no CSRF token") }

            for route in routes {
                let uri = Self.uri(route)
                let anonymous = try await Self.send(client, route, uri, session: nil, csrf: csrf)
                #expect(anonymous.status == .seeOther && anonymous.headers[.location] == "/console/signin", "anonymous \(route) answered \(anonymous.status)")
                let refused = try await Self.send(client, route, uri, session: demotedSession, csrf: csrf)
                #expect(refused.status == .forbidden, "a demoted administrator's \(route) answered \(refused.status)")
                if route.method == .post {
                    let forged = try await Self.send(client, route, uri, session: session, csrf: "forged")
                    #expect(forged.status == .forbidden, "\(route) without its token answered \(forged.status)")
                }
                let answered = try await Self.send(client, route, uri, session: session, csrf: csrf)
                #expect(answered.status.code < 500 && answered.status != .forbidden && answered.status != .unauthorized, "\(route) for an administrator answered \(answered.status)")
                if !route.path.description.hasSuffix("/signout") {
                    #expect(answered.headers[.location] != "/console/signin", "\(route) sent an administrator to sign in")
                }
            }
        }
    }

    /// Housekeeping forgets sessions that ended, an administrator's who never signs in again included, and leaves the
    /// live ones working.
    @Test(arguments: TestEngines.all)
    func endedConsoleSessionsAreForgottenAndLiveOnesKept(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (_, ended) = try await ConsoleTests.admin(client, app)
            let dashboard = try await ConsoleTests.get(client, "/console", ended)
            guard let csrf = ConsoleTests.csrf(in: dashboard) else { throw TestFailure("the dashboard has no CSRF token") }
            #expect(try await ConsoleTests.post(client, "/console/signout", ended, "csrf=\(csrf)").status == .seeOther)
            let (_, live) = try await ConsoleTests.admin(client, app)
            let store = ConsoleSessionStore(database: app.database)
            // An hour from now: the signed-out session ended before, the live one (8 hours) has not.
            #expect(try await store.purge(endedBefore: Date().addingTimeInterval(3_600)) == 1)
            #expect(try await store.purge(endedBefore: Date().addingTimeInterval(3_600)) == 0)
            #expect(try await ConsoleTests.get(client, "/console", live).status == .ok)
            #expect(try await ConsoleTests.get(client, "/console", ended).status == .seeOther)
        }
    }

    /// A catalog file imported from the console may be larger than the API's 1 MiB body limit, up to the console's
    /// 4 MiB; past that it is refused before it is read.
    @Test(arguments: TestEngines.all)
    func aCatalogFileOverTheAPIsBodyLimitImportsFromTheConsole(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (_, session) = try await ConsoleTests.admin(client, app)
            let page = try await ConsoleTests.get(client, "/console/catalog/import", session)
            guard let csrf = ConsoleTests.csrf(in: page) else { throw TestFailure("the import page has no CSRF token") }
            let record = ConsoleTests.workoutRecord(id: UUID(), title: "Padded Flow", intensity: "low")
            let file = String(decoding: try JSONSerialization.data(withJSONObject: ["workouts": [record], "programs": []]), as: UTF8.self)
            // White space is JSON too: 1.1 MiB of it after the catalog, 3.3 MiB once the form encodes it.
            let padded = file + String(repeating: " ", count: 1_150_000)
            let imported = try await ConsoleTests.post(client, "/console/catalog/import", session, "csrf=\(csrf)&catalog=\(ConsoleTests.encoded(padded))")
            #expect(imported.status == .ok && String(buffer: imported.body).contains("Imported 1 workout(s)"), "\(imported.status)")
            let tooLarge = try await ConsoleTests.post(client, "/console/catalog/import", session, "csrf=\(csrf)&catalog=\(String(repeating: " ", count: 5 << 20))")
            #expect(tooLarge.status == .contentTooLarge)
            // Elsewhere the API's limit holds.
            let elsewhere = try await ConsoleTests.post(client, "/console/system/audit-verify", session, "csrf=\(csrf)&pad=\(String(repeating: "x", count: 3 << 19))")
            #expect(elsewhere.status == .contentTooLarge)
        }
    }
}

/// The webhook failure log the console shows keeps the newest entries only.
@Suite struct WebhookFailureLogTests {
    @Test(arguments: TestEngines.all)
    func aTrimKeepsTheNewestEntries(engine: DatabaseEngine) async throws {
        try await withApp(engine) { _, app in
            let start = Date(timeIntervalSince1970: 1_790_000_000)
            let extra = 25
            try await app.database.transaction { db in
                for index in 0..<(WebhookFailureLog.capacity + extra) {
                    try await db.insert(into: "webhook_failures").columns("id", "source", "received_at", "status", "detail")
                        .values(SQLBind(UUID()), SQLBind("stripe"), SQLBind(start.addingTimeInterval(Double(index))), SQLBind(400), SQLBind("bad signature \(index)"))
                        .run()
                }
                try await WebhookFailureLog.trim(on: db)
            }
            let kept = try await WebhookFailureLog.recent(limit: 5_000, in: app.database)
            #expect(kept.count == WebhookFailureLog.capacity)
            #expect(kept.last?.detail == "bad signature \(extra)" && kept.first?.detail == "bad signature \(WebhookFailureLog.capacity + extra - 1)")
        }
    }
}

/// A test's precondition that did not hold.
private struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
