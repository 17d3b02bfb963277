import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// The operational endpoints and the error format every route shares, on every engine.
@Suite struct HTTPBasicsTests {
    @Test(arguments: TestEngines.all)
    func healthzAnswersWithoutTouchingAnything(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let response = try await client.execute(uri: "/healthz", method: .get)
            #expect(response.status == .ok)
            #expect(try json(response)["status"] as? String == "ok")
            #expect(response.headers[.requestID]?.isEmpty == false)
        }
    }

    @Test(arguments: TestEngines.all)
    func readyzNamesTheDatabaseEngine(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let response = try await client.execute(uri: "/readyz", method: .get)
            #expect(response.status == .ok)
            let body = try json(response)
            #expect(body["status"] as? String == "ready")
            #expect(body["database"] as? String == engine.rawValue)
        }
    }

    @Test func openAPIDocumentIsByteIdenticalToTheSource() async throws {
        let source = try Data(contentsOf: repositoryRoot.appendingPathComponent("Sources/FitBaseAPI/openapi.yaml"))
        try await withApp(.sqlite) { client, _ in
            let response = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/yaml") == true)
            #expect(Data(response.body.readableBytesView) == source)
        }
    }

    @Test func unknownRouteIsProblem404() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.execute(uri: "/nope", method: .get)
            #expect(response.status == .notFound)
            let problem = try expectProblem(response, .notFound)
            #expect(problem["instance"] as? String == "/nope")
            #expect(problem["requestId"] as? String == response.headers[.requestID])
            #expect(problem["type"] as? String == "urn:fitbase:problem:not_found")
            #expect(problem["title"] as? String == "Not Found")
        }
    }

    @Test func wrongMethodIsProblem405WithAllow() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.execute(uri: "/healthz", method: .delete)
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers[.allow] == "GET, HEAD")
            _ = try expectProblem(response, .methodNotAllowed)
        }
    }

    @Test func headIsAnsweredWhereGetIs() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.execute(uri: "/healthz", method: .head)
            #expect(response.status == .ok)
            #expect(response.body.readableBytes == 0)
        }
    }

    @Test func bodyOverTheLimitIsProblem413() async throws {
        try await withApp(.sqlite, options: .init(maxBodyBytes: 1 << 20)) { client, _ in
            let body = ByteBuffer(repeating: UInt8(ascii: "a"), count: 2 << 20)
            let response = try await client.execute(uri: "/healthz", method: .post, body: body)
            #expect(response.status == .contentTooLarge)
            let problem = try expectProblem(response, .payloadTooLarge)
            #expect((problem["detail"] as? String)?.contains("1048576") == true)
        }
    }

    @Test func bodyAtTheLimitIsNotRefused() async throws {
        try await withApp(.sqlite, options: .init(maxBodyBytes: 64)) { client, _ in
            let response = try await client.execute(uri: "/healthz", method: .post, body: ByteBuffer(repeating: 0x20, count: 64))
            #expect(response.status == .methodNotAllowed)
        }
    }

    /// The server's id is always its own; a sensible client id is echoed beside it as the client's, any other dropped.
    @Test func theServerIssuesItsOwnRequestIDAndKeepsTheClientsApart() async throws {
        try await withApp(.sqlite) { client, _ in
            let echoed = try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: "client-abc.123:x_y"])
            #expect(UUID(uuidString: try #require(echoed.headers[.requestID])) != nil)
            #expect(echoed.headers[.clientRequestID] == "client-abc.123:x_y")

            let hostile = try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: "a b\u{7f}<script>"])
            #expect(UUID(uuidString: try #require(hostile.headers[.requestID])) != nil)
            #expect(hostile.headers[.clientRequestID] == nil)

            let tooLong = try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: String(repeating: "x", count: 129)])
            #expect(tooLong.headers[.requestID]?.count == 36)
            #expect(tooLong.headers[.clientRequestID] == nil)
        }
    }

    @Test func everyResponseCarriesADistinctRequestID() async throws {
        try await withApp(.sqlite) { client, _ in
            let first = try await client.execute(uri: "/healthz", method: .get)
            let second = try await client.execute(uri: "/healthz", method: .get)
            #expect(first.headers[.requestID] != second.headers[.requestID])
        }
    }
}
