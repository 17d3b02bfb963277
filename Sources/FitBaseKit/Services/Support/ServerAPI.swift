import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Requests the live services send through the client's transport and session (bearer token, refresh on 401),
/// with bodies in the contract's generated types and failures as ``KitError``.
struct ServerAPI: Sendable {
    let client: FitBaseClient

    /// `GET path?query`, decoded as `type`.
    func get<T: Decodable>(_ type: T.Type, _ path: String, query: [URLQueryItem] = [], operationID: String) async throws(KitError) -> T {
        try WireCoding.decode(type, from: try await send(.get, path, query: query, body: nil, operationID: operationID))
    }

    /// `method path` with `body` as JSON, decoded as `type`.
    func send<T: Decodable>(_ method: HTTPRequest.Method, _ path: String, json body: some Encodable, as type: T.Type, operationID: String) async throws(KitError) -> T {
        let data: Data
        do { data = try WireCoding.encoder.encode(body) } catch { throw KitError(.invalidInput) }
        return try WireCoding.decode(type, from: try await send(method, path, body: data, operationID: operationID))
    }

    /// `method path` (with `body` as JSON when given), for an answer without a body to read.
    func send(_ method: HTTPRequest.Method, _ path: String, json body: (some Encodable)? = Optional<Empty>.none, operationID: String) async throws(KitError) {
        var data: Data?
        if let body {
            do { data = try WireCoding.encoder.encode(body) } catch { throw KitError(.invalidInput) }
        }
        _ = try await send(method, path, body: data, operationID: operationID)
    }

    /// An empty JSON body.
    struct Empty: Encodable {}

    private func send(_ method: HTTPRequest.Method, _ path: String, query: [URLQueryItem] = [], body: Data?, operationID: String) async throws(KitError) -> Data {
        var components = URLComponents()
        components.queryItems = query.isEmpty ? nil : query
        let encodedQuery = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path + (encodedQuery.isEmpty ? "" : "?" + encodedQuery))
        request.headerFields[.accept] = "application/json"
        if body != nil { request.headerFields[.contentType] = "application/json" }
        let response: HTTPResponse
        let answer: Data
        do {
            (response, answer) = try await client.send(request, body: body.map { HTTPBody($0) }, operationID: operationID, upTo: 16 << 20)
        } catch {
            throw Task.isCancelled ? .cancelled : KitError(FitBaseError(thrownByCall: error))
        }
        guard (200..<300).contains(response.status.code) else {
            let problem = try? WireCoding.decoder.decode(Components.Schemas.Problem.self, from: answer)
            throw KitError(FitBaseError.from(statusCode: response.status.code, problem: problem))
        }
        return answer
    }

    /// `text` as one path segment.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
