import FitBaseCore

/// Decides whether a caller may watch premium content. Billing will answer from entitlements; until it lands,
/// only administrators are entitled (everyone else is on the free tier).
protocol PremiumContentAccess: Sendable {
    func isEntitled(_ caller: Caller?) async throws -> Bool
}

/// The free-tier rule: administrators see everything, everyone else sees free content only.
struct AdministratorsOnlyPremiumAccess: PremiumContentAccess {
    func isEntitled(_ caller: Caller?) async throws -> Bool {
        caller?.role == .admin
    }
}
