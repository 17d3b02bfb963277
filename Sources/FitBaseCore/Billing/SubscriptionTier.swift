/// A subscription level; ordered free < pro < premium.
public enum SubscriptionTier: String, Sendable, Codable, CaseIterable, Comparable {
    case free, pro, premium

    /// Position in the order free < pro < premium.
    private var rank: Int {
        switch self {
        case .free: 0
        case .pro: 1
        case .premium: 2
        }
    }

    /// Whether `lhs` is a lower tier than `rhs`.
    public static func < (lhs: SubscriptionTier, rhs: SubscriptionTier) -> Bool { lhs.rank < rhs.rank }
}

/// A capability a tier unlocks.
public enum Feature: String, Sendable, Codable, CaseIterable {
    case basicPlans, workoutTracking, customPlans, analytics, advancedProgression, premiumContent
}

/// Which features each tier unlocks.
public struct TierFeatures: Sendable, Equatable {
    /// The features of every tier; each tier includes every feature of the tiers below it.
    public let features: [SubscriptionTier: Set<Feature>]

    /// The seeds' mapping: free: basicPlans, workoutTracking; pro: + customPlans, analytics; premium: +
    /// advancedProgression, premiumContent.
    public static let standard: TierFeatures = {
        let free: Set<Feature> = [.basicPlans, .workoutTracking]
        let pro = free.union([.customPlans, .analytics])
        let premium = pro.union([.advancedProgression, .premiumContent])
        return TierFeatures(validated: [.free: free, .pro: pro, .premium: premium])
    }()

    /// Validating initializer: every tier must be present, and a higher tier must include every feature of a lower
    /// one; throws `TierFeaturesError` naming the tier and feature at fault.
    public init(_ features: [SubscriptionTier: Set<Feature>]) throws(TierFeaturesError) {
        let tiers = SubscriptionTier.allCases.sorted()
        for tier in tiers where features[tier] == nil {
            throw TierFeaturesError(tier: tier, reason: .tierMissing)
        }
        // Checking each adjacent pair covers every lower tier, since inclusion is transitive.
        for (lower, higher) in zip(tiers, tiers.dropFirst()) {
            let missing = features[lower, default: []].subtracting(features[higher, default: []])
            if let feature = Feature.allCases.first(where: { missing.contains($0) }) {
                throw TierFeaturesError(tier: higher, reason: .featureMissing(feature, unlockedBy: lower))
            }
        }
        self.init(validated: features)
    }

    private init(validated features: [SubscriptionTier: Set<Feature>]) {
        self.features = features
    }

    /// Whether `tier` unlocks `feature`.
    public func allows(_ feature: Feature, for tier: SubscriptionTier) -> Bool {
        features[tier]?.contains(feature) ?? false
    }

    /// The lowest tier that unlocks `feature`, nil if none does.
    public func requiredTier(for feature: Feature) -> SubscriptionTier? {
        SubscriptionTier.allCases.filter { allows(feature, for: $0) }.min()
    }
}

/// Why a tier-to-features mapping was refused.
public struct TierFeaturesError: Error, Equatable, CustomStringConvertible {
    /// What is wrong with `tier`.
    public enum Reason: Sendable, Equatable {
        /// The mapping has no entry for the tier.
        case tierMissing
        /// The tier lacks a feature that the lower tier unlocks.
        case featureMissing(Feature, unlockedBy: SubscriptionTier)
    }

    /// The tier at fault.
    public let tier: SubscriptionTier
    /// What is wrong with it.
    public let reason: Reason

    /// Makes an error about `tier`.
    public init(tier: SubscriptionTier, reason: Reason) {
        self.tier = tier
        self.reason = reason
    }

    /// The fault in one line.
    public var description: String {
        switch reason {
        case .tierMissing:
            "tier \(tier.rawValue) has no features listed"
        case .featureMissing(let feature, let lower):
            "tier \(tier.rawValue) lacks \(feature.rawValue), which the lower tier \(lower.rawValue) unlocks"
        }
    }
}
