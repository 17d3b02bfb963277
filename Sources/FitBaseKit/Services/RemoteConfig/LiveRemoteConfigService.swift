import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``RemoteConfigService`` over ``getRemoteConfig``: answers kept sealed in the local store (``ResponseCache``) under
/// the account they were fetched for, revalidated with `If-None-Match`.
struct LiveRemoteConfigService: RemoteConfigService {
    let client: FitBaseClient
    let cache: ResponseCache
    /// What the app says of itself, for flags with conditions on them.
    let query: Operations.GetRemoteConfig.Input.Query

    init(client: FitBaseClient, cache: ResponseCache, appVersion: String?, platform: ConfigPlatform?, locale: String?) {
        self.client = client
        self.cache = cache
        // Only what the server reads: a version it would refuse (`1.4-beta`) or a locale with extensions is left out.
        query = .init(
            appVersion: appVersion.flatMap(SemanticVersion.init)?.description, platform: platform?.rawValue,
            locale: locale.flatMap { ConfigConditions.isLocale($0) ? ConfigConditions.normalizeLocale($0) : nil })
    }

    func current() async -> RemoteConfigSnapshot {
        await load(policy: .cacheOnly) ?? RemoteConfigSnapshot()
    }

    func refresh() async -> RemoteConfigSnapshot {
        if let fetched = await load(policy: .revalidate) { return fetched }
        return await current()
    }

    private func load(policy: CachePolicy) async -> RemoteConfigSnapshot? {
        let (client, query) = (self.client, self.query)
        let key = "remote-config/" + (await client.currentUserID()?.description ?? "anonymous")
        let loaded = try? await cache.load(Components.Schemas.RemoteConfig.self, key: key, ttl: .zero, policy: policy) {
            etag async throws(FitBaseError) in
            try await client.call {
                let output = try await client.api.getRemoteConfig(query: query, headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        guard let loaded, let values = try? loaded.value.values.fields() else { return nil }
        return RemoteConfigSnapshot(values: values, fetchedAt: loaded.fetchedAt)
    }
}

/// The platform this build runs on, as ``getRemoteConfig`` names it.
public enum BuildPlatform {
    /// `ios`, `macos`, `watchos` or `visionos`; `nil` elsewhere (Linux).
    public static var current: ConfigPlatform? {
        #if os(iOS)
        return .ios
        #elseif os(macOS)
        return .macos
        #elseif os(watchOS)
        return .watchos
        #elseif os(visionOS)
        return .visionos
        #else
        return nil
        #endif
    }
}
