import AsyncKit
import FitBaseCore
import FitBaseAPI
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OpenAPIRuntime
import Testing

@testable import FitBaseServer

/// How thrown errors become problem+json: request-shape errors name the field, unknown errors leak nothing.
@Suite struct ProblemMappingTests {
    @Test func theContractListsExactlyTheCodesTheServerThrows() throws {
        #expect(Set(ProblemCode.allCases.map(\.rawValue)) == Set(try contractEnum("ProblemCode")))
    }

    @Test func aProblemCarriesItsCodeOnTheWireAsTheContractsEnum() throws {
        let wire = Problem(HTTPResponse.Status(code: 402), code: .upgradeRequired, detail: "Pro only.", requiredTier: "pro").wire(instance: "/v1/plans")
        #expect(wire.code.value1 == .upgradeRequired && wire.code.value2 == "upgrade_required")
        let encoded = try JSONDecoder().decode([String: OpenAPIValueContainer].self, from: JSONEncoder().encode(wire))
        #expect(encoded["code"]?.value as? String == "upgrade_required")
        #expect(encoded["type"]?.value as? String == "urn:fitbase:problem:upgrade_required")
    }

    @Test func aDatabaseTooBusyToLendAConnectionIsA503WithRetryAfterNotA500() throws {
        let problem = try #require(ProblemMapping.problem(for: ConnectionPoolTimeoutError.connectionRequestTimeout))
        #expect(problem.status == .serviceUnavailable && problem.code == .busy)
        #expect(problem.headers[.retryAfter] == "1")
    }

    @Test func malformedJSONIsA400NamingTheProblem() async throws {
        try await withRouter { client in
            let response = try await client.execute(uri: "/decode", method: .post, body: ByteBuffer(string: #"{"title": "x", "#))
            #expect(response.status == .badRequest)
            let problem = try expectProblem(response, .malformedJson)
            #expect((problem["detail"] as? String)?.contains("not valid JSON") == true)
        }
    }

    @Test func missingFieldIsA400NamingTheField() async throws {
        try await withRouter { client in
            let response = try await client.execute(
                uri: "/decode", method: .post, body: ByteBuffer(string: #"{"type": "t", "title": "x", "status": 400}"#)
            )
            #expect(response.status == .badRequest)
            let problem = try expectProblem(response, .invalidRequest)
            let errors = try #require(problem["errors"] as? [[String: String]])
            #expect(errors == [["field": "code", "message": "is required"]])
        }
    }

    @Test func wrongTypeInANestedArrayNamesThePath() async throws {
        try await withRouter { client in
            let body = #"{"type": "t", "title": "x", "status": 400, "code": "c", "errors": [{"field": "a", "message": 7}]}"#
            let response = try await client.execute(uri: "/decode", method: .post, body: ByteBuffer(string: body))
            let problem = try expectProblem(response, .invalidRequest)
            let errors = try #require(problem["errors"] as? [[String: String]])
            #expect(errors == [["field": "errors[0].message", "message": "must be a string"]])
        }
    }

    @Test func unexpectedErrorsAre500sThatRevealNothing() async throws {
        try await withRouter { client in
            let response = try await client.execute(uri: "/explode", method: .get)
            #expect(response.status == .internalServerError)
            let problem = try expectProblem(response, .internalError)
            let text = String(buffer: response.body)
            #expect(!text.contains("SELECT"))
            #expect(!text.contains("secret"))
            #expect(problem["requestId"] as? String == response.headers[.requestID])
        }
    }

    @Test func problemsThrownByHandlersKeepStatusCodeAndHeaders() async throws {
        try await withRouter { client in
            let response = try await client.execute(uri: "/limited", method: .get)
            #expect(response.status == .tooManyRequests)
            #expect(response.headers[.retryAfter] == "30")
            let problem = try expectProblem(response, .tooManyAttempts)
            #expect(problem["detail"] as? String == "Slow down.")
        }
    }

    @Test func fieldPathsReadLikeTheJSON() {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init(intValue: Int) {
                self.stringValue = "\(intValue)"
                self.intValue = intValue
            }
        }
        #expect(ProblemMapping.fieldPath([Key(stringValue: "samples"), Key(intValue: 3), Key(stringValue: "value")]) == "samples[3].value")
        #expect(ProblemMapping.fieldPath([]) == "")
    }

    // MARK: Helpers

    /// The production middleware stack with test routes: `/decode` fails the way the generated server does.
    private func withRouter(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let router = buildRouter(maxBodyBytes: 1 << 20, routes: RouteTable())
        router.post("/decode") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            do {
                _ = try JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(body.readableBytesView))
            } catch {
                // What the generated server throws when it cannot decode a request body.
                throw ServerError(
                    operationID: "test", request: request.head, requestBody: nil, requestMetadata: .init(),
                    causeDescription: "decoding", underlyingError: error
                )
            }
            return .noContent
        }
        router.get("/explode") { _, _ -> HTTPResponse.Status in
            throw SecretFailure()
        }
        router.get("/limited") { _, _ -> HTTPResponse.Status in
            throw Problem(.tooManyRequests, code: .tooManyAttempts, detail: "Slow down.", headers: [.retryAfter: "30"])
        }
        try await Application(router: router, logger: TestDatabase.logger).test(.router, test)
    }

    private struct SecretFailure: Error, CustomStringConvertible {
        var description: String { "SELECT password FROM users -- secret" }
    }
}
