import FitBaseClient
import Foundation

/// What ``FitBaseDependencies/LiveConfiguration`` uses when the app names nothing: the device's own services on Apple
/// platforms, memory or nothing elsewhere (Linux, where the Kit is built and tested).
extension FitBaseDependencies.LiveConfiguration {
    /// The Keychain (``KeychainTokenStore``) on Apple platforms; memory elsewhere (the session ends with the process).
    public static func platformTokenStore() -> any TokenStore {
        #if canImport(Security)
        KeychainTokenStore()
        #else
        InMemoryTokenStore()
        #endif
    }

    /// StoreKit 2 (``StoreKitPurchaseProvider``) on Apple platforms; none elsewhere (the paywall lists the server's
    /// products without prices, and nothing can be bought).
    public static func platformPurchaseProvider() -> (any PurchaseProvider)? {
        #if canImport(StoreKit)
        StoreKitPurchaseProvider()
        #else
        nil
        #endif
    }

    /// HealthKit (``HealthKitAnchoredSource``) where the device has it; none elsewhere.
    public static func platformHealthKit() -> (any HealthKitSource)? {
        #if canImport(HealthKit)
        HealthKitAnchoredSource.isAvailable ? HealthKitAnchoredSource() : nil
        #else
        nil
        #endif
    }

    /// `NWPathMonitor` (``NetworkPathReachability``) on Apple platforms; none elsewhere (sync still runs periodically).
    public static func platformReachability() -> (any ReachabilityMonitor)? {
        #if canImport(Network)
        NetworkPathReachability()
        #else
        nil
        #endif
    }

    /// `UNUserNotificationCenter` (``UserNotificationsPermission``) on Apple platforms; none elsewhere.
    public static func platformNotificationPermission() -> (any NotificationPermissionProvider)? {
        #if canImport(UserNotifications)
        UserNotificationsPermission()
        #else
        nil
        #endif
    }

    /// `ASAuthorizationController` (``AppleSignInController``) on Apple platforms; none elsewhere.
    public static func platformAppleSignIn() -> (any AppleSignInProvider)? {
        #if canImport(AuthenticationServices)
        AppleSignInController()
        #else
        nil
        #endif
    }
}
