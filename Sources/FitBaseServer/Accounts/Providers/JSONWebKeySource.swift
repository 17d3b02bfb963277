import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Where a provider's signing keys come from. The real source fetches the provider's JWKS over HTTPS; tests point
/// the same implementation at a local server that speaks the same format.
protocol JSONWebKeySetFetcher: Sendable {
    func fetchKeySet(from url: String) async throws -> JWKS
}

/// Fetches a JWKS document with AsyncHTTPClient.
struct HTTPJSONWebKeySetFetcher: JSONWebKeySetFetcher {
    let client: HTTPClient

    func fetchKeySet(from url: String) async throws -> JWKS {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw KeySetFetchError(url: url, reason: "HTTP \(response.status.code)") }
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSONDecoder().decode(JWKS.self, from: Data(buffer: body))
    }
}

struct KeySetFetchError: Error, CustomStringConvertible {
    let url: String
    let reason: String
    var description: String { "cannot fetch signing keys from \(url): \(reason)" }
}

/// A provider's keys, cached for an hour and refetched early when a token names a key we do not have (providers
/// rotate keys), at most once a minute so forged `kid`s cannot make us hammer the provider.
actor CachedKeySet {
    private let url: String
    private let fetcher: any JSONWebKeySetFetcher
    private var keys: JWTKeyCollection?
    private var kids: Set<String> = []
    private var fetchedAt: ContinuousClock.Instant?

    init(url: String, fetcher: any JSONWebKeySetFetcher) {
        self.url = url
        self.fetcher = fetcher
    }

    /// The collection holding key `kid`, or `nil` when the provider does not publish it.
    func keys(containing kid: String) async throws -> JWTKeyCollection? {
        let now = ContinuousClock.now
        let stale = fetchedAt.map { now - $0 > .seconds(3600) } ?? true
        let missing = !kids.contains(kid)
        let mayRefetch = fetchedAt.map { now - $0 > .seconds(60) } ?? true
        if stale || (missing && mayRefetch) {
            let set = try await fetcher.fetchKeySet(from: url)
            let collection = JWTKeyCollection()
            try await collection.add(jwks: set)
            keys = collection
            kids = Set(set.keys.compactMap { $0.keyIdentifier?.string })
            fetchedAt = now
        }
        return kids.contains(kid) ? keys : nil
    }
}
