import FitBaseAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

#if canImport(OpenAPIURLSession)
import OpenAPIURLSession
#else
import AsyncHTTPClient
import NIOCore
import OpenAPIAsyncHTTPClient
#endif

/// The FitBase SDK's entry point: one instance per server, shared across the app.
///
/// ```swift
/// let fitbase = try FitBaseClient(serverURL: URL(string: "http://127.0.0.1:8080")!)
/// let status = try await fitbase.serverStatus()
/// ```
public final class FitBaseClient: Sendable {
    /// The server this client talks to.
    public let serverURL: URL
    /// The client generated from the FitBase OpenAPI contract, for operations the facade does not wrap yet.
    public let api: Client

    /// Creates a client for `serverURL` over the platform's default transport (URLSession on Apple platforms,
    /// AsyncHTTPClient elsewhere), or over `transport` when given (tests, custom networking).
    public init(serverURL: URL, transport: (any ClientTransport)? = nil) {
        self.serverURL = serverURL
        self.api = Client(
            serverURL: serverURL,
            configuration: .init(),
            transport: transport ?? Self.defaultTransport()
        )
    }

    /// Whether the server is alive and whether its database answers.
    public func serverStatus() async throws(FitBaseError) -> ServerStatus {
        let alive: Bool
        switch try await call({ try await self.api.getHealth() }) {
        case .ok: alive = true
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
        switch try await call({ try await self.api.getReadiness() }) {
        case .ok(let ok):
            let body = try FitBaseError.decoding { try ok.body.json }
            return ServerStatus(alive: alive, ready: true, database: body.database.rawValue)
        case .serviceUnavailable:
            return ServerStatus(alive: alive, ready: false, database: nil)
        case .default(let statusCode, let response):
            throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }

    private func call<Output>(_ operation: () async throws -> Output) async throws(FitBaseError) -> Output {
        do {
            return try await operation()
        } catch {
            throw .transport(String(describing: error))
        }
    }

    private static func defaultTransport() -> any ClientTransport {
        #if canImport(OpenAPIURLSession)
        URLSessionTransport()
        #else
        AsyncHTTPClientTransport(configuration: .init(client: sharedHTTPClient, timeout: .seconds(30)))
        #endif
    }

    #if !canImport(OpenAPIURLSession)
    /// One process-wide HTTP client, never shut down (like `HTTPClient.shared`).
    ///
    /// An unreachable server fails at once instead of being retried until the request deadline: the SDK's callers
    /// (and later its sync queue) decide when to try again, and an app offline should learn it immediately.
    private static let sharedHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
    #endif
}

/// What ``FitBaseClient/serverStatus()`` found.
public struct ServerStatus: Sendable, Equatable {
    /// The server process answers HTTP.
    public var alive: Bool
    /// The server's database answers.
    public var ready: Bool
    /// The database engine (`sqlite` or `postgres`) when ready.
    public var database: String?

    /// Creates a status value (the SDK builds these from the server's answers).
    public init(alive: Bool, ready: Bool, database: String?) {
        self.alive = alive
        self.ready = ready
        self.database = database
    }
}
