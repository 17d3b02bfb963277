import AsyncHTTPClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import FitBaseServer

/// `GET /metrics`: off by default, behind its bearer token, and an exposition that parses and counts what was asked.
@Suite struct MetricsTests {
    static let token = "metrics-token-for-the-tests-0123456789"

    static func options(port: Int? = nil) -> TestAppOptions {
        TestAppOptions(configure: { $0.metrics = MetricsConfiguration(token: token, port: port) })
    }

    @Test(arguments: TestEngines.all)
    func offWithoutAToken(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let response = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
            #expect(response.status == .notFound)
            try expectProblem(response, .notFound)
        }
    }

    @Test(arguments: TestEngines.all)
    func refusesAMissingOrWrongToken(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: Self.options()) { client, _ in
            let missing = try await client.execute(uri: "/metrics", method: .get)
            #expect(missing.status == .unauthorized)
            try expectProblem(missing, .authenticationRequired)
            #expect(missing.headers[.wwwAuthenticate] == "Bearer")
            let wrong = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.token)x"])
            #expect(wrong.status == .unauthorized)
            try expectProblem(wrong, .invalidToken)
            // A user's access token is not the metrics token, an admin's neither.
            let user = try await client.signUp()
            let asUser = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(user.accessToken)"])
            #expect(asUser.status == .unauthorized)
        }
    }

    @Test(arguments: TestEngines.all)
    func countsAKnownRequestWithItsOperationAndStatus(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: Self.options()) { client, _ in
            for _ in 0..<3 { #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok) }
            let missing = try await client.execute(uri: "/v1/workouts/\(UUID())", method: .get)
            #expect(missing.status == .notFound)
            let user = try await client.signUp()
            let pushed = try await SyncPushTests.push(
                client, user.accessToken, [SyncPushTests.mutation("preferences", "profile", data: ["fitnessLevel": "intermediate", "goals": ["buildStrength"]])]
            )
            #expect(pushed.first?["status"] as? String == "applied")

            let scraped = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
            #expect(scraped.status == .ok)
            #expect(scraped.headers[.contentType]?.hasPrefix("text/plain") == true)
            let exposition = try Exposition(parsing: String(buffer: scraped.body))
            #expect(exposition.value("fitbase_http_requests_total", ["operation": "getHealth", "method": "GET", "status": "200"]) == 3)
            #expect(exposition.value("fitbase_http_requests_total", ["operation": "getWorkout", "method": "GET", "status": "404"]) == 1)
            #expect(exposition.value("fitbase_http_requests_total", ["operation": "signUp", "method": "POST", "status": "202"]) == 1)
            #expect(exposition.value("fitbase_http_request_duration_seconds_count", ["operation": "getHealth"]) == 3)
            #expect(exposition.value("fitbase_http_request_duration_seconds_bucket", ["operation": "getHealth", "le": "+Inf"]) == 3)
            #expect(exposition.types["fitbase_http_request_duration_seconds"] == "histogram")
            #expect(exposition.value("fitbase_sync_pushed_mutations_total", ["collection": "preferences", "result": "applied"]) == 1)
            // Levels read as the scrape asks.
            #expect(exposition.value("fitbase_event_streams_open", [:]) == 0)
            #expect(exposition.value("fitbase_database_pool_in_use", ["use": "read"]) != nil)
            // Verification e-mail waits in the outbox.
            #expect((exposition.value("fitbase_outbox_jobs", ["kind": "email", "status": "pending"]) ?? 0) + (exposition.value("fitbase_outbox_jobs", ["kind": "email", "status": "sent"]) ?? 0) >= 1)

            // The scrape itself is counted, with the status it got.
            let again = try Exposition(parsing: String(buffer: try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.token)"]).body))
            #expect(again.value("fitbase_http_requests_total", ["operation": "getMetrics", "method": "GET", "status": "200"]) == 1)
        }
    }

    /// Each application has a registry of its own: a second one in the same process starts from nothing.
    @Test(arguments: TestEngines.all)
    func eachApplicationCountsItsOwnRequests(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { database in
            try await withApp(on: database, options: Self.options()) { client, _ in
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
            }
            try await withApp(on: database, options: Self.options()) { client, _ in
                let scraped = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
                let exposition = try Exposition(parsing: String(buffer: scraped.body))
                #expect(exposition.value("fitbase_http_requests_total", ["operation": "getHealth", "method": "GET", "status": "200"]) == nil)
            }
        }
    }

    /// `--metrics-port`: a server of its own, asking for the token when one is set.
    @Test func servesOnAPortOfItsOwn() async throws {
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            var configuration = ServerConfiguration.testing(database)
            configuration.metrics = MetricsConfiguration(token: Self.token, port: 0)
            let (urls, listening) = AsyncStream<String>.makeStream()
            let app = try await buildApplication(
                configuration: configuration, logger: TestDatabase.logger, mailer: nil, onMetricsListening: { listening.yield($0) }
            )
            try await withLiveServer(app) { client, _ in
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
                var iterator = urls.makeAsyncIterator()
                let url = try #require(await iterator.next())
                var request = HTTPClientRequest(url: url)
                let refused = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                #expect(refused.status == .unauthorized)
                request.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                #expect(response.status == .ok)
                let body = try await response.body.collect(upTo: 1 << 20)
                let exposition = try Exposition(parsing: String(buffer: body))
                #expect(exposition.value("fitbase_http_requests_total", ["operation": "getHealth", "method": "GET", "status": "200"]) == 1)
            }
        }
    }

    @Test func theTokenAndPortAreValidatedAtStart() throws {
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_METRICS_TOKEN": "short"]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(flags: .init(metricsPort: "70000"), environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(flags: .init(port: "9000", metricsPort: "9000"), environment: [:]) }
        let resolved = try ServerConfiguration.resolve(flags: .init(metricsPort: "9091"), environment: ["FITBASE_METRICS_TOKEN": Self.token])
        #expect(resolved.metrics == MetricsConfiguration(token: Self.token, port: 9091))
    }
}

/// A Prometheus text exposition (format 0.0.4), parsed: each sample by name and labels, each family's `# TYPE`.
struct Exposition {
    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    struct Malformed: Error, CustomStringConvertible {
        let line: String
        var description: String { "not an exposition line: \(line)" }
    }

    private(set) var samples: [Sample] = []
    private(set) var types: [String: String] = [:]

    init(parsing text: String) throws {
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst("# TYPE ".count).split(separator: " ")
                guard parts.count == 2 else { throw Malformed(line: String(line)) }
                types[String(parts[0])] = String(parts[1])
                continue
            }
            if line.hasPrefix("#") { continue }
            samples.append(try Self.sample(Substring(line)))
        }
    }

    /// The value of the sample named `name` with exactly `labels`.
    func value(_ name: String, _ labels: [String: String]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    private static func sample(_ line: Substring) throws -> Sample {
        var rest = line[...]
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }) else { throw Malformed(line: String(line)) }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { throw Malformed(line: String(line)) }
                let key = String(rest[..<equals])
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { throw Malformed(line: String(line)) }
                rest = rest.dropFirst()
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\", let escaped = rest.first {
                        rest = rest.dropFirst()
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { throw Malformed(line: String(line)) }
                rest = rest.dropFirst()
                labels[key] = value
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ")
        guard let first = fields.first, let value = Double(first == "+Inf" ? "inf" : first == "-Inf" ? "-inf" : String(first)) else {
            throw Malformed(line: String(line))
        }
        return Sample(name: name, labels: labels, value: value)
    }
}
