import FitBaseAPI
import FitBaseCore
import Foundation

/// How billing cross the wire: Core's values to the contract's types and back. The one place they are mapped; controllers,
/// collections and owners all call these.
enum BillingWire {
    static func wire(_ tier: SubscriptionTier) -> Components.Schemas.SubscriptionTier { .init(rawValue: tier.rawValue) ?? .free }

    static func wire(_ feature: Feature) -> Components.Schemas.Feature { .init(rawValue: feature.rawValue) ?? .basicPlans }

    static func wire(_ status: EntitlementStatus) -> Components.Schemas.EntitlementStatus { .init(rawValue: status.rawValue) ?? Components.Schemas.EntitlementStatus.none }

    static func wire(_ source: EntitlementSource) -> Components.Schemas.EntitlementSource { .init(rawValue: source.rawValue) ?? .promotional }
}
