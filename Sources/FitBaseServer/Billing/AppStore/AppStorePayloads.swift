import Foundation

// The decoded payloads of App Store JWS, with Apple's JSON field names. Apple writes dates as whole milliseconds
// since 1970: each is stored as that number (`…Milliseconds`, so a payload round-trips exactly whatever the
// coder's date strategy) and read as a `Date` through the accessor of Apple's name. Unknown fields are ignored and
// open-ended values (notification types, transaction types, reasons) stay strings or numbers, so a new value from
// Apple never fails decoding.

/// The App Store server environment a signed payload comes from.
enum AppStoreEnvironment: String, Sendable, Codable, Hashable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"
}

extension Date {
    /// A date from the App Store's milliseconds since 1970.
    init(appStoreMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }

    /// This date as the App Store writes it: whole milliseconds since 1970.
    var appStoreMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}

/// A signed transaction's payload (Apple's `JWSTransactionDecodedPayload`).
struct AppStoreTransaction: Codable, Sendable, Hashable {
    var originalTransactionId: String
    var transactionId: String
    var webOrderLineItemId: String?
    var bundleId: String
    var productId: String
    var subscriptionGroupIdentifier: String?
    var purchaseDateMilliseconds: Int64
    var originalPurchaseDateMilliseconds: Int64?
    var expiresDateMilliseconds: Int64?
    var quantity: Int?
    /// `Auto-Renewable Subscription`, `Non-Renewing Subscription`, `Non-Consumable` or `Consumable`.
    var type: String
    /// The UUID the app set at purchase (Apple writes it lower-case; either case decodes).
    var appAccountToken: UUID?
    /// `PURCHASED` or `FAMILY_SHARED`.
    var inAppOwnershipType: String?
    var signedDateMilliseconds: Int64
    /// 0: refunded for another reason, 1: refunded for an issue in the app.
    var revocationReason: Int?
    var revocationDateMilliseconds: Int64?
    var isUpgraded: Bool?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    var offerType: Int?
    var offerIdentifier: String?
    /// `FREE_TRIAL`, `PAY_AS_YOU_GO` or `PAY_UP_FRONT`.
    var offerDiscountType: String?
    var environment: AppStoreEnvironment
    var storefront: String?
    var storefrontId: String?
    /// `PURCHASE` or `RENEWAL`.
    var transactionReason: String?
    var currency: String?
    /// The price in milliunits of `currency`.
    var price: Int64?

    enum CodingKeys: String, CodingKey {
        case originalTransactionId, transactionId, webOrderLineItemId, bundleId, productId, subscriptionGroupIdentifier
        case purchaseDateMilliseconds = "purchaseDate"
        case originalPurchaseDateMilliseconds = "originalPurchaseDate"
        case expiresDateMilliseconds = "expiresDate"
        case quantity, type, appAccountToken, inAppOwnershipType
        case signedDateMilliseconds = "signedDate"
        case revocationReason
        case revocationDateMilliseconds = "revocationDate"
        case isUpgraded, offerType, offerIdentifier, offerDiscountType, environment, storefront, storefrontId
        case transactionReason, currency, price
    }

    var purchaseDate: Date {
        get { Date(appStoreMilliseconds: purchaseDateMilliseconds) }
        set { purchaseDateMilliseconds = newValue.appStoreMilliseconds }
    }
    var originalPurchaseDate: Date? {
        get { originalPurchaseDateMilliseconds.map(Date.init(appStoreMilliseconds:)) }
        set { originalPurchaseDateMilliseconds = newValue?.appStoreMilliseconds }
    }
    var expiresDate: Date? {
        get { expiresDateMilliseconds.map(Date.init(appStoreMilliseconds:)) }
        set { expiresDateMilliseconds = newValue?.appStoreMilliseconds }
    }
    var signedDate: Date {
        get { Date(appStoreMilliseconds: signedDateMilliseconds) }
        set { signedDateMilliseconds = newValue.appStoreMilliseconds }
    }
    var revocationDate: Date? {
        get { revocationDateMilliseconds.map(Date.init(appStoreMilliseconds:)) }
        set { revocationDateMilliseconds = newValue?.appStoreMilliseconds }
    }
}

/// A signed subscription renewal info's payload (Apple's `JWSRenewalInfoDecodedPayload`).
struct AppStoreRenewalInfo: Codable, Sendable, Hashable {
    var originalTransactionId: String
    /// The product that renews next (differs from `productId` after an up- or downgrade).
    var autoRenewProductId: String?
    var productId: String
    /// 1: renews automatically, 0: turned off.
    var autoRenewStatus: Int
    var isInBillingRetryPeriod: Bool?
    /// 1 cancelled, 2 billing error, 3 declined a price increase, 4 product unavailable, 5 other.
    var expirationIntent: Int?
    var gracePeriodExpiresDateMilliseconds: Int64?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    var offerType: Int?
    var offerIdentifier: String?
    /// 0: the customer has not responded to a price increase, 1: consented or no consent needed.
    var priceIncreaseStatus: Int?
    var signedDateMilliseconds: Int64
    var environment: AppStoreEnvironment
    var recentSubscriptionStartDateMilliseconds: Int64?
    var renewalDateMilliseconds: Int64?

    enum CodingKeys: String, CodingKey {
        case originalTransactionId, autoRenewProductId, productId, autoRenewStatus, isInBillingRetryPeriod
        case expirationIntent
        case gracePeriodExpiresDateMilliseconds = "gracePeriodExpiresDate"
        case offerType, offerIdentifier, priceIncreaseStatus
        case signedDateMilliseconds = "signedDate"
        case environment
        case recentSubscriptionStartDateMilliseconds = "recentSubscriptionStartDate"
        case renewalDateMilliseconds = "renewalDate"
    }

    var gracePeriodExpiresDate: Date? {
        get { gracePeriodExpiresDateMilliseconds.map(Date.init(appStoreMilliseconds:)) }
        set { gracePeriodExpiresDateMilliseconds = newValue?.appStoreMilliseconds }
    }
    var signedDate: Date {
        get { Date(appStoreMilliseconds: signedDateMilliseconds) }
        set { signedDateMilliseconds = newValue.appStoreMilliseconds }
    }
    var recentSubscriptionStartDate: Date? {
        get { recentSubscriptionStartDateMilliseconds.map(Date.init(appStoreMilliseconds:)) }
        set { recentSubscriptionStartDateMilliseconds = newValue?.appStoreMilliseconds }
    }
    var renewalDate: Date? {
        get { renewalDateMilliseconds.map(Date.init(appStoreMilliseconds:)) }
        set { renewalDateMilliseconds = newValue?.appStoreMilliseconds }
    }
}

/// An App Store Server Notification V2's signed payload (Apple's `ResponseBodyV2DecodedPayload`).
struct AppStoreNotification: Codable, Sendable, Hashable {
    /// `SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, `REFUND`, `TEST`, … (kept as text: Apple adds types).
    var notificationType: String
    /// `INITIAL_BUY`, `RESUBSCRIBE`, `AUTO_RENEW_DISABLED`, … or none.
    var subtype: String?
    var notificationUUID: String
    var version: String?
    var signedDateMilliseconds: Int64
    /// The app, environment and signed transaction and renewal info the notification is about.
    var data: Payload?
    /// For renewal-date extensions across many subscribers: only which app and environment.
    var summary: Summary?

    enum CodingKeys: String, CodingKey {
        case notificationType, subtype, notificationUUID, version
        case signedDateMilliseconds = "signedDate"
        case data, summary
    }

    var signedDate: Date {
        get { Date(appStoreMilliseconds: signedDateMilliseconds) }
        set { signedDateMilliseconds = newValue.appStoreMilliseconds }
    }

    /// The notification's `data`: the signed transaction and renewal info are JWS to verify on their own.
    struct Payload: Codable, Sendable, Hashable {
        var appAppleId: Int64?
        var bundleId: String
        var bundleVersion: String?
        var environment: AppStoreEnvironment
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
        var status: Int?
    }

    /// The notification's `summary`, reduced to which app and environment it concerns.
    struct Summary: Codable, Sendable, Hashable {
        var appAppleId: Int64?
        var bundleId: String
        var environment: AppStoreEnvironment
    }
}
