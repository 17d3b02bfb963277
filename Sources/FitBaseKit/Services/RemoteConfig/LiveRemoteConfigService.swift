import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``RemoteConfigService`` over the server: answers kept sealed in the local store (``ResponseCache``) under the account
/// they were fetched for, revalidated with `If-None-Match`.
struct LiveRemoteConfigService: RemoteConfigService {
    let client: FitBaseClient
    let cache: ResponseCache
    /// What the app says of itself (`?appVersion=…&platform=…&locale=…`), for flags with conditions on them.
    let query: [URLQueryItem]

    init(client: FitBaseClient, cache: ResponseCache, appVersion: String?, platform: ConfigPlatform?, locale: String?) {
        self.client = client
        self.cache = cache
        var query: [URLQueryItem] = []
        // Only what the server reads: a version it would refuse (`1.4-beta`) or a locale with extensions is left out.
        if let appVersion, let version = SemanticVersion(appVersion) { query.append(URLQueryItem(name: "appVersion", value: version.description)) }
        if let platform { query.append(URLQueryItem(name: "platform", value: platform.rawValue)) }
        if let locale, ConfigConditions.isLocale(locale) { query.append(URLQueryItem(name: "locale", value: ConfigConditions.normalizeLocale(locale))) }
        self.query = query
    }

    func current() async -> RemoteConfigSnapshot {
        await load(policy: .cacheOnly) ?? RemoteConfigSnapshot()
    }

    func refresh() async -> RemoteConfigSnapshot {
        if let fetched = await load(policy: .revalidate) { return fetched }
        return await current()
    }

    private func load(policy: CachePolicy) async -> RemoteConfigSnapshot? {
        let key = "remote-config/" + (await client.currentUserID()?.description ?? "anonymous")
        guard let loaded = try? await cache.get("/v1/config", query: query, operationID: "getRemoteConfig", key: key, ttl: .zero, policy: policy),
            case .object(let answer)? = JSONValue.parse(loaded.value), case .object(let values)? = answer["values"]
        else { return nil }
        return RemoteConfigSnapshot(values: values, fetchedAt: loaded.fetchedAt)
    }
}

/// The platform this build runs on, as `GET /v1/config` names it.
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
