// A `week_ended` fanned out to many devices (see scripts/bench/bench-push.sh), in two steps:
//
//   fitbase-push-bench seed URL DEVICES
//       Over FitBase's HTTP API at URL: DEVICES / 20 accounts with notifications on, in groups of ten (a group's
//       most), each account with 20 devices (an account's most), and this week's challenges opened in each group.
//   fitbase-push-bench fanout DATABASE DEVICES
//       With the server stopped, as one more instance on its database: makes the week have just ended, closes it
//       (`WeekRollover`: a notification per member, a push job per device, one transaction per group) and sends
//       the jobs (`PushWorker` with the APNs provider the FITBASE_APNS_* settings describe) until every one is
//       settled. Prints the time to queue, to the last acknowledgement, and pushes/s.
import AsyncHTTPClient
import FitBaseServer
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import SQLKit

@main
struct PushBenchmark {
    static let devicesPerAccount = 20
    static let membersPerGroup = 10
    static let topic = "app.fitbase.bench"

    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 3, let devices = Int(arguments[2]), devices > 0 else { usage() }
        do {
            switch arguments[0] {
            case "seed": try await seed(server: arguments[1], devices: devices)
            case "fanout": try await fanout(database: arguments[1], devices: devices)
            default: usage()
            }
        } catch {
            FileHandle.standardError.write(Data("fitbase-push-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(Data("usage: fitbase-push-bench seed URL DEVICES | fanout DATABASE_URL DEVICES\n".utf8))
        exit(64)
    }

    // MARK: Seeding over HTTP

    static func seed(server: String, devices: Int) async throws {
        let api = API(base: server)
        do {
            try await seed(api, devices: devices)
            try await api.client.shutdown()
        } catch {
            try? await api.client.shutdown()
            throw error
        }
    }

    static func seed(_ api: API, devices: Int) async throws {
        let accounts = (devices + devicesPerAccount - 1) / devicesPerAccount
        let start = ContinuousClock.now
        let run = UUID().uuidString.prefix(8).lowercased()
        let tokens = try await concurrently(Array(0..<accounts), width: 4) { (index: Int) in
            let session = try await api.send(
                .POST, "/v1/auth/signup", ["email": "push-\(run)-\(index)@bench.example", "password": "correct horse battery \(index)"]
            )
            guard let token = session["accessToken"] as? String else { throw BenchError("sign-up \(index): \(session)") }
            _ = try await api.send(.PATCH, "/v1/me", ["displayName": "Member \(index)", "timeZone": "UTC", "notificationsEnabled": true], token: token)
            return token
        }
        print("\(accounts) accounts in \(seconds(start.duration(to: .now))) s")

        let groups = stride(from: 0, to: accounts, by: membersPerGroup).map { Array(tokens[$0..<min($0 + membersPerGroup, accounts)]) }
        _ = try await concurrently(Array(groups.indices), width: 8) { (index: Int) in
            let members = groups[index]
            let group = try await api.send(.POST, "/v1/groups", ["name": "Crew \(index)", "timeZone": "UTC"], token: members[0])
            guard let id = group["id"] as? String else { throw BenchError("group \(index): \(group)") }
            let invite = try await api.send(.POST, "/v1/groups/\(id)/invites", nil, token: members[0])
            guard let code = invite["token"] as? String else { throw BenchError("invite \(index): \(invite)") }
            for member in members.dropFirst() { _ = try await api.send(.POST, "/v1/invites/\(code)/accept", nil, token: member) }
            _ = try await api.send(.GET, "/v1/groups/\(id)/challenges/current", nil, token: members[0])
            return id
        }
        print("\(groups.count) groups of up to \(membersPerGroup) in \(seconds(start.duration(to: .now))) s")

        let registrations = (0..<devices).map { ($0, tokens[$0 / devicesPerAccount]) }
        _ = try await concurrently(Array(registrations.indices), width: 32) { (index: Int) in
            let (device, token) = registrations[index]
            let hex = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            _ = try await api.send(
                .PUT, "/v1/me/devices/\(hex)",
                ["platform": "ios", "environment": "production", "bundleId": topic, "locale": "en-US", "timeZone": "UTC", "appVersion": "1.0 (\(device))"],
                token: token
            )
            return device
        }
        print("\(devices) devices registered; seeding took \(seconds(start.duration(to: .now))) s")
    }

    // MARK: The fan-out

    static func fanout(database url: String, devices: Int) async throws {
        var logger = Logger(label: "fitbase.push-bench")
        logger.logLevel = .error
        guard let location = DatabaseLocation(parsing: url) else { throw BenchError("not a database URL: \(url)") }
        guard let configuration = try APNsConfiguration(environment: ProcessInfo.processInfo.environment) else {
            throw BenchError("set FITBASE_APNS_* (see scripts/bench/bench-push.sh)")
        }
        let database = try await Database.open(location, logger: logger)
        let provider = APNsProvider(configuration: configuration, logger: logger, clock: .system)
        let worker = PushWorker(database: database, provider: provider, logger: logger)

        // The week ended a moment ago (the worker sends what is due by the real clock).
        let now = Date.storageNow
        try await database.withConnection { db in
            try await db.update("challenges").set("ends_at", to: now.addingTimeInterval(-1)).where("closed_at", .is, SQLLiteral.null).run()
        }
        let start = ContinuousClock.now
        let closed = try await WeekRollover(database: database).rollOver(at: now)
        let queued = start.duration(to: .now)
        var claimed = 0
        while true {
            let batch = try await worker.deliverDueJobs()
            claimed += batch
            if batch == 0 { break }
        }
        let delivered = start.duration(to: .now)
        let counts = try await database.withConnection { db in
            try await db.select().column("status").column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("outbox")
                .where("kind", .equal, "push").groupBy("status").all()
                .map { "\(try $0.decode(column: "status", as: String.self)) \(try $0.decode(column: "n", as: Int.self))" }
        }
        print(
            "\(closed) challenges closed; \(claimed) pushes queued in \(seconds(queued)) s, the last acknowledged "
                + "\(seconds(delivered)) s after the week closed: \(Int((Double(claimed) / seconds(delivered)).rounded())) pushes/s "
                + "(\(devices) devices expected); outbox: \(counts.joined(separator: ", "))"
        )
        try await provider.shutdown()
        try await database.shutdown()
        if claimed != devices { exit(1) }
    }

    // MARK: Helpers

    /// Seconds, to the millisecond.
    static func seconds(_ duration: Duration) -> Double {
        ((Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18) * 1000).rounded() / 1000
    }

    /// Runs `body` for each element with at most `width` at once; results in the elements' order.
    static func concurrently<Element: Sendable, T: Sendable>(
        _ elements: [Element], width: Int, _ body: @escaping @Sendable (Element) async throws -> T
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results: [T?] = Array(repeating: nil, count: elements.count)
            var next = elements.startIndex
            while next < elements.endIndex {
                if next - elements.startIndex >= width, let (index, result) = try await group.next() { results[index] = result }
                let (offset, element) = (next - elements.startIndex, elements[next])
                group.addTask { (offset, try await body(element)) }
                next += 1
            }
            while let (index, result) = try await group.next() { results[index] = result }
            return results.compactMap { $0 }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// JSON over HTTP to the server.
struct API: Sendable {
    let base: String
    let client = HTTPClient(eventLoopGroupProvider: .singleton)

    func send(_ method: HTTPMethod, _ path: String, _ body: [String: Any]?, token: String? = nil) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        }
        var response = try await client.execute(request, timeout: .seconds(60))
        // Busy (password hashing slots all taken) or rate-limited: again after Retry-After, as an app would.
        for _ in 0..<300 where [429, 503].contains(response.status.code) {
            _ = try await response.body.collect(upTo: 1 << 20)
            try await Task.sleep(for: .seconds(Int(response.headers.first(name: "Retry-After") ?? "") ?? 1))
            response = try await client.execute(request, timeout: .seconds(60))
        }
        let data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        guard (200..<300).contains(response.status.code) else {
            throw BenchError("\(method) \(path) answered \(response.status.code): \(String(decoding: data, as: UTF8.self))")
        }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
