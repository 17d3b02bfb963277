import FitBaseCore
import Foundation
import HTTPTypes
import Logging

/// App Store purchases: transactions the app sends (`Transaction.jwsRepresentation`) and App Store Server
/// Notifications V2, both verified, both turned into the subscription's state.
///
/// A subscription is keyed by its `originalTransactionId`. The app's transaction claims it for the caller (when it
/// carries an `appAccountToken`, that token must be the caller's id); a notification for a subscription no one has
/// claimed yet is applied to an unowned row that counts for whoever claims it. Each notification's `notificationUUID`
/// is recorded in the transaction of its effect, so a retried notification changes nothing. A notification signed
/// before the state already held (Apple does not promise order) is recorded but changes nothing.
struct AppStoreSubscriptions: Sendable {
    let verifier: AppStoreSignedDataVerifier
    let catalog: ProductCatalog
    let database: Database
    let logger: Logger

    /// What became of a notification.
    enum Outcome: String, Sendable {
        case processed, duplicate
    }

    /// Verifies the app's signed transaction and links its subscription to `user`.
    func claim(_ signedTransaction: String, by user: UserID, now: Date) async throws {
        let transaction: AppStoreTransaction
        do {
            transaction = try await verifier.verifyTransaction(signedTransaction)
        } catch {
            throw Self.problem(error, field: "signedTransaction")
        }
        if let token = transaction.appAccountToken, token != user.rawValue {
            throw Problem(
                .forbidden, code: .appAccountTokenMismatch,
                detail: "The transaction was bought for another account (its appAccountToken is not your user id)."
            )
        }
        guard let tier = catalog.tier(of: transaction.productId, in: .appStore) else {
            throw Problem.validationFailed([
                .init(field: "signedTransaction", message: "is for product \(transaction.productId), which the products file does not list")
            ])
        }
        try await database.transaction { db in
            let existing = try await SubscriptionStore.lockedRecord(.appStore, externalID: transaction.originalTransactionId, now: now, on: db)
            if let owner = existing.user, owner != user {
                throw Problem(
                    .conflict, code: .transactionClaimed,
                    detail: "This App Store subscription belongs to another account; sign in to that account to use it."
                )
            }
            var record = Self.updated(existing, transaction: transaction, renewal: nil, notificationType: nil, tier: tier, signedAt: transaction.signedDate)
            record.user = user
            try await SubscriptionStore.save(record, now: now, on: db)
        }
    }

    /// Verifies and applies one App Store Server Notification V2.
    func receive(_ signedPayload: String, now: Date) async throws -> Outcome {
        let notification: AppStoreNotification
        var transaction: AppStoreTransaction?
        var renewal: AppStoreRenewalInfo?
        do {
            notification = try await verifier.verifyNotification(signedPayload)
            if let signed = notification.data?.signedTransactionInfo { transaction = try await verifier.verifyTransaction(signed) }
            if let signed = notification.data?.signedRenewalInfo { renewal = try await verifier.verifyRenewalInfo(signed) }
        } catch {
            throw Self.problem(error, field: "signedPayload")
        }
        let type = notification.notificationType + (notification.subtype.map { ".\($0)" } ?? "")
        // Other types (CONSUMPTION_REQUEST, REFUND_DECLINED, PRICE_INCREASE, …) are acknowledged and change nothing:
        // the transaction they carry may be an older one.
        let effective = Self.handledTypes.contains(notification.notificationType)
        let tier = effective ? transaction.flatMap { catalog.tier(of: $0.productId, in: .appStore) } : nil
        if effective, let transaction, tier == nil {
            logger.warning("App Store notification for a product the products file does not list", metadata: ["product": "\(transaction.productId)", "type": "\(type)"])
        }
        let (linked, processed, renewed) = (transaction, tier, renewal)
        return try await database.transaction { db in
            guard try await SubscriptionStore.markProcessed(.appStore, eventID: notification.notificationUUID, type: type, now: now, on: db) else {
                return .duplicate
            }
            guard let transaction = linked, let tier = processed else { return .processed }  // TEST, or nothing we sell
            let existing = try await SubscriptionStore.lockedRecord(.appStore, externalID: transaction.originalTransactionId, now: now, on: db)
            var record = Self.updated(
                existing, transaction: transaction, renewal: renewed, notificationType: notification.notificationType, tier: tier,
                signedAt: notification.signedDate
            )
            if record.user == nil, let token = transaction.appAccountToken, try await SubscriptionStore.userExists(UserID(rawValue: token), on: db) {
                record.user = UserID(rawValue: token)
            }
            try await SubscriptionStore.save(record, now: now, on: db)
            return .processed
        }
    }

    /// The notification types that change a subscription.
    static let handledTypes: Set<String> = [
        "SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "OFFER_REDEEMED", "DID_FAIL_TO_RENEW",
        "GRACE_PERIOD_EXPIRED", "EXPIRED", "REFUND", "REVOKE", "REFUND_REVERSED", "RENEWAL_EXTENDED",
    ]

    /// The record after a transaction (and renewal info) signed at `signedAt`; unchanged when it holds newer news.
    static func updated(
        _ existing: SubscriptionRecord?, transaction: AppStoreTransaction, renewal: AppStoreRenewalInfo?, notificationType: String?,
        tier: SubscriptionTier, signedAt: Date
    ) -> SubscriptionRecord {
        var record = existing ?? SubscriptionRecord(
            id: UUID.random(), user: nil, externalID: transaction.originalTransactionId,
            state: SubscriptionState(source: .appStore, productID: transaction.productId, tier: tier, expiresAt: nil),
            stateAt: .distantPast, environment: transaction.environment.rawValue
        )
        guard signedAt >= record.stateAt else { return record }
        record.stateAt = signedAt
        record.environment = transaction.environment.rawValue
        let previous = existing.flatMap { $0.isPlaceholder ? nil : $0.state }
        record.state = state(transaction: transaction, renewal: renewal, notificationType: notificationType, tier: tier, previous: previous, signedAt: signedAt)
        return record
    }

    /// The subscription's state as the transaction, renewal info and notification type describe it.
    ///
    /// | notification | effect |
    /// |---|---|
    /// | SUBSCRIBED, DID_RENEW, OFFER_REDEEMED, RENEWAL_EXTENDED, DID_CHANGE_RENEWAL_PREF (upgrade: the new product at once) | period, product and trial from the transaction |
    /// | DID_CHANGE_RENEWAL_STATUS | `willRenew` from the renewal info (cancelled but paid keeps access until it expires) |
    /// | DID_FAIL_TO_RENEW (GRACE_PERIOD) | billing retry; access until the renewal info's grace period ends |
    /// | GRACE_PERIOD_EXPIRED | billing retry without access |
    /// | EXPIRED | expired: no renewal, no retry |
    /// | REFUND, REVOKE | revoked at the transaction's `revocationDate`: access ends at once |
    /// | REFUND_REVERSED | the transaction no longer carries a revocation: access restored |
    static func state(
        transaction: AppStoreTransaction, renewal: AppStoreRenewalInfo?, notificationType: String?, tier: SubscriptionTier,
        previous: SubscriptionState?, signedAt: Date
    ) -> SubscriptionState {
        var state = SubscriptionState(
            source: .appStore, productID: transaction.productId, tier: tier, expiresAt: transaction.expiresDate,
            isTrial: transaction.offerType == 1 && (transaction.offerDiscountType ?? "FREE_TRIAL") == "FREE_TRIAL",
            willRenew: renewal.map { $0.autoRenewStatus == 1 } ?? previous?.willRenew ?? true,
            gracePeriodExpiresAt: renewal?.gracePeriodExpiresDate,
            isInBillingRetry: renewal?.isInBillingRetryPeriod ?? false,
            revokedAt: transaction.revocationDate
        )
        switch notificationType {
        case "EXPIRED":
            state.willRenew = false
            state.isInBillingRetry = false
            state.gracePeriodExpiresAt = nil
            state.expiresAt = min(state.expiresAt ?? signedAt, signedAt)
        case "GRACE_PERIOD_EXPIRED":
            state.gracePeriodExpiresAt = nil
            state.isInBillingRetry = true
        case "DID_FAIL_TO_RENEW":
            state.isInBillingRetry = true
        case "REFUND", "REVOKE":
            state.revokedAt = transaction.revocationDate ?? signedAt
        default:
            break
        }
        return state
    }

    /// A verification failure as the problem the caller sees, naming the field that carried the JWS.
    static func problem(_ error: any Error, field: String) -> any Error {
        guard let failure = error as? AppStoreVerificationError else { return error }
        return Problem(
            .badRequest, code: failure.code, title: "App Store data not verified", detail: "\(field): \(failure)",
            fieldErrors: [.init(field: field, message: "\(failure)")]
        )
    }
}
