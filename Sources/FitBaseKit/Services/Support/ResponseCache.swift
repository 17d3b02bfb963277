import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// Cache-first reads of server answers, kept sealed in the ``LocalStore``.
///
/// A fresh copy (younger than its time to live) is served without asking. Otherwise the server is asked — with
/// `If-None-Match` when the copy has the server's `ETag`, so an unchanged answer costs a `304` and no body — and the
/// copy replaced or confirmed. When the server cannot be reached, the copy is served as stale. (The server sends no
/// `ETag` today; when it does, revalidation starts working without a change here.)
struct ResponseCache: Sendable {
    let client: FitBaseClient
    let store: LocalStore
    let clock: any KitClock

    /// The answer to `GET path?query`, through the cache under `key`.
    func get(
        _ path: String, query: [URLQueryItem] = [], operationID: String, key: String, ttl: Duration, policy: CachePolicy
    ) async throws(KitError) -> Loaded<Data> {
        let cached = try? await store.cachedResponse(key)
        let now = clock.now
        // A copy from the future (the device's clock was set back) is not trusted beyond a minute of skew.
        let age = cached.map { now.timeIntervalSince($0.fetchedAt) } ?? .infinity
        if let cached, policy != .revalidate, age < ttl.timeInterval, age > -60 {
            return Loaded(cached.body, source: .cache, fetchedAt: cached.fetchedAt)
        }
        if policy == .cacheOnly {
            guard let cached else { throw .offline }
            return Loaded(cached.body, source: .staleCache, fetchedAt: cached.fetchedAt)
        }
        var components = URLComponents()
        components.queryItems = query.isEmpty ? nil : query
        let encodedQuery = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path + (encodedQuery.isEmpty ? "" : "?" + encodedQuery))
        request.headerFields[.accept] = "application/json"
        if let etag = cached?.etag { request.headerFields[.ifNoneMatch] = etag }
        let response: HTTPResponse
        let body: Data
        do {
            (response, body) = try await client.send(request, operationID: operationID, upTo: 16 << 20)
        } catch {
            if Task.isCancelled { throw .cancelled }
            let failure = FitBaseError(thrownByCall: error)
            if let cached, case .transport = failure { return Loaded(cached.body, source: .staleCache, fetchedAt: cached.fetchedAt) }
            throw KitError(failure)
        }
        switch response.status.code {
        case 200:
            try? await store.storeCachedResponse(.init(body: body, etag: response.headerFields[.eTag], fetchedAt: now), for: key)
            return Loaded(body, source: .server, fetchedAt: now)
        case 304 where cached != nil:
            try? await store.touchCachedResponse(key, at: now)
            return Loaded(cached!.body, source: .server, fetchedAt: now)
        default:
            let problem = try? WireCoding.decoder.decode(Components.Schemas.Problem.self, from: body)
            throw KitError(FitBaseError.from(statusCode: response.status.code, problem: problem))
        }
    }

    /// The answer `fetch` gets from the server, through the cache under `key`: `fetch` receives the cached copy's
    /// entity tag (for the operation's `If-None-Match`) and answers ``Revalidation/notModified`` on a 304. A copy that
    /// no longer decodes as `Value` counts as none.
    ///
    /// ```swift
    /// try await cache.load(Components.Schemas.WorkoutPage.self, key: "catalog:featured", ttl: ttl, policy: policy) { etag in
    ///     try await client.call {
    ///         let output = try await client.api.listFeaturedWorkouts(headers: .init(ifNoneMatch: etag))
    ///         if case .notModified = output { return .notModified }
    ///         let ok = try output.ok
    ///         return .fresh(try ok.body.json, etag: ok.headers.eTag)
    ///     }
    /// }
    /// ```
    func load<Value: Codable & Sendable>(
        _ type: Value.Type, key: String, ttl: Duration, policy: CachePolicy,
        fetch: @Sendable (_ etag: String?) async throws(FitBaseError) -> Revalidation<Value>
    ) async throws(KitError) -> Loaded<Value> {
        let stored = try? await store.cachedResponse(key)
        let cached = stored.flatMap { stored in
            (try? WireCoding.decoder.decode(Value.self, from: stored.body)).map { (value: $0, etag: stored.etag, fetchedAt: stored.fetchedAt) }
        }
        let now = clock.now
        // A copy from the future (the device's clock was set back) is not trusted beyond a minute of skew.
        let age = cached.map { now.timeIntervalSince($0.fetchedAt) } ?? .infinity
        if let cached, policy != .revalidate, age < ttl.timeInterval, age > -60 {
            return Loaded(cached.value, source: .cache, fetchedAt: cached.fetchedAt)
        }
        if policy == .cacheOnly {
            guard let cached else { throw .offline }
            return Loaded(cached.value, source: .staleCache, fetchedAt: cached.fetchedAt)
        }
        let answer: Revalidation<Value>
        do {
            answer = try await fetch(cached?.etag)
        } catch {
            if Task.isCancelled { throw .cancelled }
            if let cached, case .transport = error { return Loaded(cached.value, source: .staleCache, fetchedAt: cached.fetchedAt) }
            throw KitError(error)
        }
        switch answer {
        case .fresh(let value, let etag):
            if let body = try? WireCoding.encoder.encode(value) {
                try? await store.storeCachedResponse(.init(body: body, etag: etag, fetchedAt: now), for: key)
            }
            return Loaded(value, source: .server, fetchedAt: now)
        case .notModified:
            guard let cached else { throw KitError(FitBaseError.unexpectedResponse(statusCode: 304)) }
            try? await store.touchCachedResponse(key, at: now)
            return Loaded(cached.value, source: .server, fetchedAt: now)
        }
    }

    /// Keeps `value` as the fresh answer under `key` (an answer obtained another way, e.g. a POST that refreshes).
    func put(_ value: some Encodable, key: String) async {
        guard let body = try? WireCoding.encoder.encode(value) else { return }
        try? await store.storeCachedResponse(.init(body: body, etag: nil, fetchedAt: clock.now), for: key)
    }

    /// Keeps `body` as the fresh answer under `key` (an answer obtained another way, e.g. a POST that refreshes).
    func put(_ body: Data, key: String) async {
        try? await store.storeCachedResponse(.init(body: body, etag: nil, fetchedAt: clock.now), for: key)
    }

    /// Forgets the answers whose keys start with `prefix`.
    func invalidate(prefix: String) async {
        try? await store.removeCachedResponses(prefix: prefix)
    }
}

/// What the server said when asked again for a cached answer.
enum Revalidation<Value: Sendable>: Sendable {
    /// A new answer, with its entity tag when it sent one.
    case fresh(Value, etag: String?)
    /// The copy whose entity tag was sent is still current (304).
    case notModified
}

/// JSON as the server writes it: RFC 3339 instants.
enum WireCoding {
    static var decoder: JSONDecoder { ContractJSON.decoder }
    static var encoder: JSONEncoder { ContractJSON.encoder }

    /// `body` decoded as `type`; a body that does not decode is the server's fault.
    static func decode<T: Decodable>(_ type: T.Type, from body: Data) throws(KitError) -> T {
        do {
            return try decoder.decode(type, from: body)
        } catch {
            throw KitError(.server)
        }
    }
}
