import FitBaseCore
import Foundation

/// Remote config: named flags with staged rollouts, conditions and testers' overrides (rules in Core's
/// ``RemoteConfigRules``), answered per caller by `GET /v1/config`, managed by `fitbase config` and the console.
struct RemoteConfigFeature: ServerFeature {
    let store: RemoteConfigStore
    /// The callers' tiers, for flags with a tier condition.
    let entitlements: EntitlementService

    init(_ foundation: ServerFoundation, billing: BillingFeature) {
        store = RemoteConfigStore(database: foundation.database)
        entitlements = billing.entitlements
    }
}
