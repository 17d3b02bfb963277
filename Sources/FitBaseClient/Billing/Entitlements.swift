import FitBaseAPI
import FitBaseCore
import Foundation

/// The signed-in user's entitlement as the server resolves it, kept for offline reads and refreshed on demand.
///
/// ```swift
/// let entitlements = Entitlements(client: fitbase, cacheFile: appSupport.appendingPathComponent("entitlement.json"))
/// try await entitlements.refresh()                          // at launch and when the app comes to the foreground
/// if let tier = await entitlements.requiresUpgrade(for: .customPlans) { showPaywall(for: tier) }
/// ```
///
/// The server enforces the same answers (402 `upgrade_required`); this is what the app shows before asking. After a
/// StoreKit purchase, ``submitAppStoreTransaction(_:)`` sends the signed transaction and refreshes in one step.
public actor Entitlements {
    /// The user's entitlement as the server resolved it, and when: the tier and status, and per feature whether it is
    /// allowed. The SDK caches it for offline launches; the Kit's billing service and paywall hand it to the app.
    public struct Snapshot: Sendable, Equatable, Codable {
        /// The resolved entitlement.
        public var entitlement: Entitlement
        /// Per feature: whether it is allowed, and the lowest tier that unlocks it.
        public var features: [Feature: Access]
        /// When the server answered.
        public var fetchedAt: Date
        /// The user it belongs to (a snapshot of another user is never used).
        public var userID: UserID
        /// The validators of the two answers it was made of (`ETag`), sent back as `If-None-Match`: an unchanged
        /// entitlement costs the server a 304 and the device no decoding.
        public var subscriptionETag: String? = nil
        /// The `ETag` of the features answer (see ``subscriptionETag``).
        public var featuresETag: String? = nil

        /// One feature's answer.
        public struct Access: Sendable, Equatable, Codable {
            /// Whether the user may use the feature.
            public var allowed: Bool
            /// The lowest tier that unlocks it.
            public var requiredTier: SubscriptionTier

            /// Makes an answer (previews, tests).
            public init(allowed: Bool, requiredTier: SubscriptionTier) {
                self.allowed = allowed
                self.requiredTier = requiredTier
            }
        }

        /// Makes a snapshot (the SDK builds these from the server's answers; previews and tests make their own).
        public init(entitlement: Entitlement, features: [Feature: Access], fetchedAt: Date, userID: UserID) {
            self.entitlement = entitlement
            self.features = features
            self.fetchedAt = fetchedAt
            self.userID = userID
        }

        /// The snapshot of `entitlement` under the standard tiers (what the server answers with the default products
        /// file): for fakes and previews.
        public static func standard(_ entitlement: Entitlement, userID: UserID, at fetchedAt: Date) -> Snapshot {
            var features: [Feature: Access] = [:]
            for feature in Feature.allCases {
                let required = TierFeatures.standard.requiredTier(for: feature) ?? .free
                features[feature] = Access(allowed: entitlement.tier >= required, requiredTier: required)
            }
            return Snapshot(entitlement: entitlement, features: features, fetchedAt: fetchedAt, userID: userID)
        }

        /// Whether `feature` is allowed.
        public func isAllowed(_ feature: Feature) -> Bool { features[feature]?.allowed ?? false }

        /// The tier to upgrade to for `feature`; `nil` when it is allowed.
        public func requiresUpgrade(for feature: Feature) -> SubscriptionTier? {
            guard let access = features[feature] else { return TierFeatures.standard.requiredTier(for: feature) }
            return access.allowed ? nil : access.requiredTier
        }

        /// The snapshot as it stands at `now`: once the entitlement's paid period has ended (see
        /// ``Entitlement/effective(at:)``) only the features of the free tier are allowed — offline, the device cannot
        /// know of a renewal until the server says so.
        public func effective(at now: Date) -> Snapshot {
            let effective = entitlement.effective(at: now)
            guard effective != entitlement else { return self }
            var lapsed = self
            lapsed.entitlement = effective
            lapsed.features = features.mapValues { Access(allowed: $0.allowed && $0.requiredTier <= effective.tier, requiredTier: $0.requiredTier) }
            return lapsed
        }
    }

    private let client: FitBaseClient
    private let cacheFile: URL?
    private var snapshot: Snapshot?
    private let observers = ValueStreams<Snapshot>()

    /// Reads the cached snapshot from `cacheFile` (if any) so answers are available offline from launch.
    public init(client: FitBaseClient, cacheFile: URL? = nil) {
        self.client = client
        self.cacheFile = cacheFile
        self.snapshot = cacheFile.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode(Snapshot.self, from: $0) }
    }

    /// The last snapshot for the signed-in user, possibly from a previous launch; `nil` before the first refresh.
    public func current() async -> Snapshot? {
        guard let snapshot, await client.currentUserID() == snapshot.userID else { return nil }
        return snapshot
    }

    /// Whether `feature` is allowed, from the last snapshot as it stands now (false when nothing is known yet, or when
    /// the cached subscription has expired).
    public func isAllowed(_ feature: Feature) async -> Bool {
        await current()?.effective(at: .now).isAllowed(feature) ?? false
    }

    /// The tier to upgrade to for `feature`, `nil` when it is allowed already (as the seeds' `FeatureAccessService`);
    /// a cached subscription past its expiry counts as lapsed.
    public func requiresUpgrade(for feature: Feature) async -> SubscriptionTier? {
        guard let snapshot = await current() else { return TierFeatures.standard.requiredTier(for: feature) }
        return snapshot.effective(at: .now).requiresUpgrade(for: feature)
    }

    /// Asks the server, caches and publishes the answer. The user's cached answer is revalidated (`If-None-Match`
    /// with its `ETag`s): what the server says has not changed is kept, and only what changed is read.
    @discardableResult
    public func refresh() async throws(FitBaseError) -> Snapshot {
        guard let user = await client.currentUserID() else { throw .notSignedIn }
        let cached = snapshot.flatMap { $0.userID == user ? $0 : nil }
        var fresh = Snapshot(entitlement: .free, features: [:], fetchedAt: .now, userID: user)
        let subscription = try await client.call { () async throws -> (Components.Schemas.SubscriptionStatus, String?)? in
            let output = try await self.client.api.getSubscription(headers: .init(ifNoneMatch: cached?.subscriptionETag))
            if case .notModified = output { return nil }
            let ok = try output.ok
            return (try ok.body.json, ok.headers.eTag)
        }
        if let (status, tag) = subscription {
            (fresh.entitlement, fresh.subscriptionETag) = (try ContractJSON.record(Entitlement.self, from: status), tag)
        } else {
            guard let cached else { throw .unexpectedResponse(statusCode: 304) }  // asked only with a cached answer
            (fresh.entitlement, fresh.subscriptionETag) = (cached.entitlement, cached.subscriptionETag)
        }
        let features = try await client.call { () async throws -> (Components.Schemas.FeatureAccessList, String?)? in
            let output = try await self.client.api.getFeatures(headers: .init(ifNoneMatch: cached?.featuresETag))
            if case .notModified = output { return nil }
            let ok = try output.ok
            return (try ok.body.json, ok.headers.eTag)
        }
        if let (list, tag) = features {
            let access = list.features.map {
                ($0.feature, Snapshot.Access(allowed: $0.allowed, requiredTier: $0.requiredTier))
            }
            (fresh.features, fresh.featuresETag) = (Dictionary(access, uniquingKeysWith: { _, last in last }), tag)
        } else {
            guard let cached else { throw .unexpectedResponse(statusCode: 304) }
            (fresh.features, fresh.featuresETag) = (cached.features, cached.featuresETag)
        }
        return store(fresh)
    }

    /// Sends StoreKit 2's `VerificationResult.jwsRepresentation` of a purchase (or restore) and refreshes.
    @discardableResult
    public func submitAppStoreTransaction(_ signedTransaction: String) async throws(FitBaseError) -> Snapshot {
        _ = try await client.call {
            try await self.client.api.submitAppStoreTransaction(body: .json(.init(signedTransaction: signedTransaction))).ok
        }
        return try await refresh()
    }

    /// Every new snapshot, starting with the current one when there is one.
    public func updates() async -> AsyncStream<Snapshot> {
        let (stream, continuation) = observers.make(buffer: 1)
        if let current = await current() { continuation.yield(current) }
        return stream
    }

    private func store(_ fresh: Snapshot) -> Snapshot {
        snapshot = fresh
        if let cacheFile, let data = try? JSONEncoder().encode(fresh) { try? data.write(to: cacheFile, options: .atomic) }
        observers.send(fresh)
        return fresh
    }

}

extension Entitlement {
    /// The longest billing grace period a store grants (the App Store's is at most 16 days).
    static let longestGracePeriod: TimeInterval = 16 * 86_400

    /// The entitlement as it stands at `now`, as a device reading its cached copy must take it: a paid period that has
    /// ended (past ``expiresAt``) grants nothing, whatever the cached status says. A subscription the server said was
    /// in its billing grace period keeps access for the longest grace period past ``expiresAt``.
    public func effective(at now: Date) -> Entitlement {
        guard tier != .free, let expiresAt else { return self }
        let end = status == .gracePeriod ? expiresAt.addingTimeInterval(Self.longestGracePeriod) : expiresAt
        guard end <= now else { return self }
        return Entitlement(tier: .free, status: .expired, expiresAt: expiresAt, willRenew: willRenew, source: source)
    }
}
