/// A store that sells subscriptions.
public enum BillingStore: String, Sendable, Codable, CaseIterable {
    /// The App Store (StoreKit 2): product ids such as `com.example.premium.yearly`.
    case appStore
    /// Stripe: price ids such as `price_…`.
    case stripe
}

/// How often a subscription renews.
public enum BillingPeriod: String, Sendable, Codable, CaseIterable, Comparable {
    case weekly, monthly, quarterly, semiannual, yearly

    /// Roughly how many days one period lasts, for ordering (a week, a month, three months, six months, a year).
    public var approximateDays: Int {
        switch self {
        case .weekly: 7
        case .monthly: 30
        case .quarterly: 91
        case .semiannual: 182
        case .yearly: 365
        }
    }

    /// Whether `lhs` renews more often than `rhs`.
    public static func < (lhs: BillingPeriod, rhs: BillingPeriod) -> Bool { lhs.approximateDays < rhs.approximateDays }
}

/// A product a store sells and what it grants, as the server's products file lists it (`listBillingProducts`): the
/// server grants `tier` for a verified purchase of `productID` in `store`, and no other product grants anything. Apps
/// read this list instead of declaring their own product → tier map; prices come from the store.
public struct BillingProduct: Sendable, Hashable, Codable {
    /// The store selling it.
    public var store: BillingStore
    /// The store's id: an App Store product id, a Stripe price id.
    public var productID: String
    /// The tier a purchase grants (pro or premium).
    public var tier: SubscriptionTier
    /// How often it renews.
    public var period: BillingPeriod

    /// Makes a product.
    public init(store: BillingStore, productID: String, tier: SubscriptionTier, period: BillingPeriod) {
        self.store = store
        self.productID = productID
        self.tier = tier
        self.period = period
    }

    private enum CodingKeys: String, CodingKey {
        case store, productID = "productId", tier, period
    }
}
