import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import FitBaseServer

#if canImport(Glibc)
import Glibc
#endif

/// Media links answered on the event loop, ahead of the router (`MediaLinkRoute`, `AheadChannelHandler`), over a real socket: the
/// same answer as the router's, requests on one connection answered in order whichever of the two answers them, and
/// every other case (a bad link, a range past the end, a file gone, a caller over the limit) left to the router.
@Suite struct MediaLinkChannelTests {
    @Test(arguments: TestEngines.all)
    func theEventLoopAnswersExactlyAsTheRouterDoes(engine: DatabaseEngine) async throws {
        try await Self.withLinkedVideo(engine) { client, app, path, video in
            let port = try #require(client.port)
            // (The last: two `Range` fields, which both read joined, so neither as a range.)
            for range in [nil, "bytes=0-99", "bytes=-10", "bytes=\(video.count - 5)-", "bytes=2-1", "bytes=x-y", "bytes=0-9\r\nRange: bytes=0-9"] as [String?] {
                let rangeField = range.map { "Range: \($0)\r\n" } ?? ""
                let before = app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed)
                // A `Connection` field sends the same request to the router.
                let answers = try await Self.exchange(
                    port: port,
                    "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\(rangeField)X-Request-ID: ahead-1\r\n\r\n"
                        + "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\(rangeField)X-Request-ID: ahead-1\r\nConnection: close\r\n\r\n"
                )
                try #require(answers.count == 2, "range \(range ?? "none")")
                #expect(app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed) == before + 1)
                let (ahead, router) = (answers[0], answers[1])
                #expect(ahead.status == router.status, "range \(range ?? "none")")
                #expect(ahead.body == router.body)
                #expect(ahead.body == Self.expected(video, range: range))
                // Every field alike, in the same order, but the request's own id, the second's date and the limit's count,
                // and the link's remaining lifetime, which may have ticked over a second between the two answers.
                let differing: Set<String> = ["x-request-id", "date", "ratelimit", "connection", "cache-control"]
                let aheadLines: [String] = ahead.fields.filter { !differing.contains($0.name) }.map { "\($0.name): \($0.value)" }
                let routerLines: [String] = router.fields.filter { !differing.contains($0.name) }.map { "\($0.name): \($0.value)" }
                #expect(aheadLines == routerLines)
                let aheadNames: [String] = ahead.fields.map(\.name).filter { $0 != "connection" }
                let routerNames: [String] = router.fields.map(\.name).filter { $0 != "connection" }
                #expect(aheadNames == routerNames)
                #expect(ahead.field("x-client-request-id") == "ahead-1")
                #expect(ahead.field("x-request-id")?.count == 36 && ahead.field("x-request-id") != router.field("x-request-id"))
                #expect(ahead.field("ratelimit")?.hasPrefix("\"reads\";r=") == true)
                #expect(ahead.field("server") == "FitBase")
                let maxAge = { (answer: Answer) in answer.field("cache-control").flatMap { Int($0.split(separator: "=").last ?? "") } }
                let (aheadAge, routerAge) = (try #require(maxAge(ahead)), try #require(maxAge(router)))
                #expect(ahead.field("cache-control")?.hasPrefix("private, max-age=") == true)
                #expect(aheadAge >= routerAge && aheadAge - routerAge <= 1 && aheadAge <= 3600, "\(aheadAge) \(routerAge)")
                let date = try #require(ahead.field("date"))
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                #expect(abs(try #require(formatter.date(from: date)).timeIntervalSinceNow) < 30, "\(date)")
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func requestsOnOneConnectionAreAnsweredInOrderWhoeverAnswersThem(engine: DatabaseEngine) async throws {
        try await Self.withLinkedVideo(engine) { client, app, path, video in
            let port = try #require(client.port)
            let tampered = String(path.dropLast()) + (path.hasSuffix("A") ? "B" : "A")
            let get = { (target: String, extra: String) in "GET \(target) HTTP/1.1\r\nHost: localhost\r\n\(extra)\r\n" }
            let before = app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed)
            // All written at once. The first two are answered ahead of the router as they are read; from the health
            // check on, a request waits for the router's answers before it, so which of the two answers the later
            // media requests depends on when the router's answers are written: the order must hold either way.
            let answers = try await Self.exchange(
                port: port,
                get(path, "Range: bytes=0-9\r\n") + get(path, "Range: bytes=10-19\r\n") + get("/healthz", "") + get("/v1/workouts?limit=1", "")
                    + get(path, "Range: bytes=20-29\r\n") + get(tampered, "") + get(path, "Range: bytes=\(video.count)-\r\n")
                    + get(path, "Range: bytes=30-39\r\n") + get("/healthz", "Connection: close\r\n")
            )
            #expect(answers.map(\.status) == [206, 206, 200, 200, 206, 403, 416, 206, 200])
            try #require(answers.count == 9)
            #expect(answers[0].body == Array(video[0..<10]))
            #expect(answers[1].body == Array(video[10..<20]))
            #expect(answers[4].body == Array(video[20..<30]))
            #expect(answers[7].body == Array(video[30..<40]))
            #expect(answers[5].field("content-type") == "application/problem+json")
            #expect(String(decoding: answers[5].body, as: UTF8.self).contains("token_invalid"))
            #expect(answers[6].field("content-range") == "bytes */\(video.count)")
            #expect((try JSONSerialization.jsonObject(with: Data(answers[3].body)) as? [String: Any])?["items"] != nil)
            let ahead = app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed) - before
            #expect((2...4).contains(ahead), "\(ahead) answered ahead")
            try await Task.sleep(for: .milliseconds(100))
            #expect(try Self.openDescriptors(of: app).isEmpty)
        }
    }

    @Test func anExpiredLinkAGoneFileAndACallerOverTheLimitAreTheRoutersToAnswer() async throws {
        let now = Mutex(Date.now)
        var options = TestAppOptions(live: true)
        options.clock = ServerClock { now.withLock { $0 } }
        options.rateLimits = .uniform(.init(perUser: .init(1_000, per: 60), perAddress: .init(3, per: 60)))
        try await Self.withLinkedVideo(.sqlite, options: options) { client, app, path, video in
            let port = try #require(client.port)
            let before = app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed)
            // The set-up's own requests were a sign-up, an upload and a link, from this address: reads are 1 of 3. (A
            // request with a `Connection` field is the router's: this one is.)
            let first = try await Self.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-0\r\nConnection: close\r\n\r\n")
            #expect(first.map(\.status) == [206])
            #expect(app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed) == before)
            let answers = try await Self.exchange(
                port: port,
                "GET \(path) HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-0\r\n\r\n" + "GET \(path) HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-0\r\n\r\n"
                    + "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            )
            #expect(answers.map(\.status) == [206, 429, 200])
            let refused = try #require(answers.first { $0.status == 429 })
            #expect(refused.field("retry-after") != nil && refused.field("ratelimit-policy") == "\"reads\";q=3;w=60")
            // The third read answered ahead; the fourth refused there and handed to the router, which refused it too.
            #expect(app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed) == before + 1)
            _ = video
        }
        var unlimited = options
        unlimited.rateLimits = .uniform(.init(perUser: .init(1_000, per: 60), perAddress: .init(1_000, per: 60)))
        try await Self.withLinkedVideo(.sqlite, options: unlimited) { client, app, path, video in
            // One connection asks for a link three times: answered ahead twice (the second time without a second
            // signature check), then, the link past its expiry, refused by the router; a tampered token after a good one
            // is not taken for it.
            let port = try #require(client.port)
            let before = app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed)
            let tampered = String(path.dropLast()) + (path.hasSuffix("A") ? "B" : "A")
            let get = { (target: String) in "GET \(target) HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-3\r\n\r\n" }
            let answers = try await Self.exchange(
                port: port, oneAtATime: [get(path), get(tampered), get(path), get(path), "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"]
            ) { number in
                if number == 3 { now.withLock { $0 += 3_601 } }
            }
            now.withLock { $0 -= 3_601 }
            #expect(answers.map(\.status) == [206, 403, 206, 403, 200])
            #expect(answers[0].body == Array(video[0..<4]) && answers[2].body == Array(video[0..<4]))
            #expect(String(decoding: answers[3].body, as: UTF8.self).contains("token_expired"))
            #expect(app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed) == before + 2)
        }
        try await Self.withLinkedVideo(.sqlite, options: options) { client, app, path, _ in
            let port = try #require(client.port)
            now.withLock { $0 += 3_601 }
            let before = app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed)
            let closing = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            let expired = try await Self.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n" + closing)
            #expect(expired.map(\.status) == [403, 200])
            let problem = String(decoding: expired.first?.body ?? [], as: UTF8.self)
            #expect(problem.contains("token_expired"))
            now.withLock { $0 -= 3_601 }
            let root = try #require(MediaFeature.storage(for: app.foundation) as? LocalMediaStorage).root
            for object in try await MediaFeature.storage(for: app.foundation).list(prefix: "") {
                try FileManager.default.removeItem(atPath: root + "/" + object.key.path)
            }
            let gone = try await Self.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-0\r\n\r\n" + closing)
            #expect(gone.map(\.status) == [404, 200])
            #expect(gone.first?.field("content-type") == "application/problem+json")
            #expect(app.foundation.metrics.mediaLinksAnsweredAhead.load(ordering: .relaxed) == before)
        }
    }

    // MARK: Helpers

    /// A live application (SQLite or PostgreSQL, media in the data directory) with a 3 MiB video uploaded and a link
    /// path to it.
    static func withLinkedVideo(
        _ engine: DatabaseEngine, options: TestAppOptions = .init(live: true),
        _ test: @escaping @Sendable (any TestClientProtocol, TestApp, String, [UInt8]) async throws -> Void
    ) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, .local, options: options) { client, app in
            let (free, _, admin) = try await CatalogMediaTests.setUp(client, app)
            let video = CatalogMediaTests.video(3 << 20 + 12_345)
            try #require(try await CatalogMediaTests.upload(client, free, "video", video, token: admin.accessToken).status == .ok)
            let url = try #require(try json(try await client.json(.get, "/v1/workouts/\(free)/media/video"))["url"] as? String)
            let path = String(url[try #require(url.range(of: "/v1/media/")).lowerBound...])
            try await test(client, app, path, video)
        }
    }

    /// The bytes `range` asks for, as the server reads it (not one valid range: the whole).
    static func expected(_ video: [UInt8], range: String?) -> [UInt8] {
        guard let range, let asked = MediaByteRange(header: range), let bytes = asked.resolved(size: Int64(video.count)) else { return video }
        return Array(video[Int(bytes.lowerBound)...Int(bytes.upperBound)])
    }

    struct Answer {
        let status: Int
        /// Lower-cased names, in order.
        let fields: [(name: String, value: String)]
        let body: [UInt8]
        func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
    }

    struct ExchangeFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes `requests` on one new connection at once and reads every answer until the server closes it. (On a
    /// thread of its own: a blocking read on the tasks' threads, or the thread pool's, could leave none to answer.)
    static func exchange(port: Int, _ requests: String) async throws -> [Answer] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try blockingExchange(port: port, requests) }) }
        }
    }

    /// Writes each of `requests` on one new connection in turn, each once the answers to those before it are read,
    /// calling `before` with its number first; then reads until the server closes the connection.
    static func exchange(port: Int, oneAtATime requests: [String], before: @escaping @Sendable (Int) -> Void) async throws -> [Answer] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        let socket = try LoopbackSocket.connect(port: port)
                        defer { close(socket) }
                        var received: [UInt8] = []
                        var chunk = [UInt8](repeating: 0, count: 1 << 16)
                        for (number, request) in requests.enumerated() {
                            before(number)
                            try sendAll(socket, request)
                            guard number < requests.count - 1 else { break }
                            while (try? parse(received))?.count != number + 1 {
                                let count = recv(socket, &chunk, chunk.count, 0)
                                guard count > 0 else { throw ExchangeFailed(description: "the connection ended before answer \(number + 1)") }
                                received += chunk[0..<count]
                            }
                        }
                        return try parse(received + readAll(socket))
                    })
            }
        }
    }

    private static func sendAll(_ socket: Int32, _ requests: String) throws {
        let bytes = Array(requests.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw ExchangeFailed(description: "cannot send (errno \(errno))") }
            sent += count
        }
    }

    private static func blockingExchange(port: Int, _ requests: String) throws -> [Answer] {
        let socket = try LoopbackSocket.connect(port: port)
        defer { close(socket) }
        try sendAll(socket, requests)
        return try parse(readAll(socket))
    }

    /// Everything the server sends until it closes the connection.
    private static func readAll(_ socket: Int32) throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let began = ContinuousClock.now
        while true {
            let count = recv(socket, &chunk, chunk.count, 0)
            guard count >= 0 else {
                throw ExchangeFailed(
                    description: "the server neither answered nor closed (errno \(errno) after \(ContinuousClock.now - began)), after \(received.count) bytes: "
                        + String(decoding: received.prefix(3000), as: UTF8.self))
            }
            if count == 0 { break }
            received += chunk[0..<count]
        }
        return received
    }

    private static func parse(_ bytes: [UInt8]) throws -> [Answer] {
        var answers: [Answer] = []
        var index = 0
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while index < bytes.count {
            guard bytes.count - index >= 4, let end = (index...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else {
                throw ExchangeFailed(description: "an answer's head is cut short")
            }
            let lines = String(decoding: bytes[index..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let statusLine = lines[0].split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ExchangeFailed(description: "not a status line: \(lines[0])") }
            let fields = try lines.dropFirst().map { line -> (name: String, value: String) in
                guard let colon = line.firstIndex(of: ":") else { throw ExchangeFailed(description: "not a field: \(line)") }
                return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let length = Int(fields.first { $0.name == "content-length" }?.value ?? "0") ?? 0
            let bodyStart = end + 4
            guard bodyStart + length <= bytes.count else { throw ExchangeFailed(description: "an answer's body is cut short") }
            answers.append(Answer(status: status, fields: fields, body: Array(bytes[bodyStart..<(bodyStart + length)])))
            index = bodyStart + length
        }
        return answers
    }

    /// This process's descriptors open on a file of the application's media.
    static func openDescriptors(of app: TestApp) throws -> [String] {
        let root = try #require(MediaFeature.storage(for: app.foundation) as? LocalMediaStorage).root
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)).flatMap { $0.hasPrefix(root + "/") ? $0 : nil }
        }
    }
}
