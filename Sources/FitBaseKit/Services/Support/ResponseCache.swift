import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// Cache-first reads of server answers, kept sealed in the ``LocalStore``.
///
/// A fresh copy (younger than its time to live) is served without asking. Otherwise the server is asked — with
/// `If-None-Match` when the copy has the server's `ETag`, so an unchanged answer costs a `304` and no body — and the
/// copy replaced or confirmed. When the server cannot be reached, the copy is served as stale.
struct ResponseCache: Sendable {
    let client: FitBaseClient
    let store: LocalStore
    let clock: any KitClock

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
}
