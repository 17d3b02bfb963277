import FitBaseCore

/// Decides whether a caller may watch premium content (premium `videoURL`s, premium recommendations). Billing's
/// ``EntitlementService`` answers it from the caller's entitlement.
protocol PremiumContentAccess: Sendable {
    func isEntitled(_ caller: Caller?) async throws -> Bool
}
