// Shim of the part of StoreKit 2 FitBase's adapter calls (products, purchases, transactions, AppStore.sync), written
// from Apple's documentation: same names, labels, optionality, async/throws and Sendable-ness as the SDK. CI only
// (scripts/ci/apple-adapters.sh). `_StoreKitShim` scripts the App Store for AppleAdapterTests; adapters never name it.
import Foundation
import Synchronization

// MARK: Products

/// Information about a product that you configure in App Store Connect.
public struct Product: Identifiable, Equatable, Hashable, Sendable {
    /// The unique product identifier.
    public let id: String
    /// A localized display name of the product.
    public let displayName: String
    /// A localized string representation of `price`.
    public let displayPrice: String
    /// A localized description of the product.
    public let description: String
    /// The decimal representation of the cost of the product, in local currency.
    public let price: Decimal
    /// Properties and functionality specific to auto-renewable subscriptions.
    public let subscription: SubscriptionInfo?

    /// Requests product data from the App Store.
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers: Collection, Identifiers.Element == String {
        try _StoreKitShim.state.withLock { state in
            try state.check()
            return identifiers.compactMap { state.products[$0] }
        }
    }

    /// Initiates a purchase for the product with the App Store and displays the confirmation sheet.
    public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try _StoreKitShim.state.withLock { state in
            try state.check()
            state.purchaseOptions.append(options)
            return try state.purchase(self)
        }
    }

    /// Information about an auto-renewable subscription.
    public struct SubscriptionInfo: Equatable, Hashable, Sendable {
        /// The group identifier of the subscription.
        public let subscriptionGroupID: String
        /// The introductory offer of the subscription, if any.
        public let introductoryOffer: Product.SubscriptionOffer?

        /// Whether the customer is eligible for the introductory offer of the subscription group.
        public var isEligibleForIntroOffer: Bool {
            get async { _StoreKitShim.state.withLock { $0.eligibleForIntroOffer.contains(subscriptionGroupID) } }
        }
    }

    /// Information about a subscription offer that you configure in App Store Connect.
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        /// The payment modes for subscription offers.
        public struct PaymentMode: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }

            /// A payment mode of a product discount that indicates a free trial.
            public static let freeTrial = PaymentMode(rawValue: "FREE_TRIAL")
            /// A payment mode of a product discount that applies over a number of billing periods.
            public static let payAsYouGo = PaymentMode(rawValue: "PAY_AS_YOU_GO")
            /// A payment mode of a product discount that the customer pays up front.
            public static let payUpFront = PaymentMode(rawValue: "PAY_UP_FRONT")
        }

        /// The payment mode for this subscription offer.
        public let paymentMode: PaymentMode
    }

    /// Optional settings for a purchase.
    public struct PurchaseOption: Hashable, Sendable {
        let name: String
        let value: String

        /// Sets a UUID to associate the purchase with an account in your system.
        public static func appAccountToken(_ token: UUID) -> Product.PurchaseOption {
            PurchaseOption(name: "appAccountToken", value: token.uuidString)
        }
    }

    /// The result of a purchase.
    public enum PurchaseResult: Sendable {
        /// The purchase succeeded with a transaction.
        case success(VerificationResult<Transaction>)
        /// The customer canceled the purchase.
        case userCancelled
        /// The purchase is pending some user action (Ask to Buy, a payment to confirm).
        case pending
    }
}

// MARK: Verification

/// A type that describes the result of a StoreKit verification.
public enum VerificationResult<SignedType> {
    /// The associated value failed verification for the provided reason.
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    /// The associated value passed StoreKit automatic verification checks.
    case verified(SignedType)

    /// The error types that describe the reason for a verification failure.
    public enum VerificationError: Error, Sendable {
        case revokedCertificate
        case invalidCertificateChain
        case invalidDeviceVerification
        case invalidEncoding
        case invalidSignature
        case missingRequiredProperties
    }

    /// The JSON web signature (JWS) representation of the verification result.
    public var jwsRepresentation: String {
        switch self {
        case .verified(let value), .unverified(let value, _): (value as? Transaction)?.jws ?? ""
        }
    }

    /// The verified payload; throws for an unverified one.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): value
            case .unverified(_, let error): throw error
            }
        }
    }

    /// The payload, verified or not.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }
}

extension VerificationResult: Sendable where SignedType: Sendable {}

// MARK: Transactions

/// Information that represents the customer's purchase of a product in the App Store.
public struct Transaction: Identifiable, Equatable, Hashable, Sendable {
    /// The unique identifier of the transaction.
    public typealias ID = UInt64

    /// The unique identifier of the transaction.
    public let id: UInt64
    /// The transaction identifier of the original purchase.
    public let originalID: UInt64
    /// The product identifier of the in-app purchase.
    public let productID: String
    /// A UUID you create at the time of purchase that associates the transaction with a customer on your service.
    public let appAccountToken: UUID?
    /// The date that the App Store charged the user's account for a purchased or restored product.
    public let purchaseDate: Date
    let jws: String

    /// Indicates to the App Store that the app delivered the purchased content or enabled the service to finish the
    /// transaction.
    public func finish() async {
        _ = _StoreKitShim.state.withLock { $0.finished.insert(id) }
    }

    /// An asynchronous sequence of transactions.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>

        let stream: AsyncStream<Element>

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Element>.Iterator
            public mutating func next() async -> Element? { await base.next() }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }

    /// The asynchronous sequence that emits a transaction when the system creates or updates transactions that occur
    /// outside of the app or on other devices.
    public static var updates: Transactions {
        Transactions(stream: _StoreKitShim.listen())
    }

    /// A sequence that emits unfinished transactions for the customer.
    public static var unfinished: Transactions {
        let snapshot = _StoreKitShim.state.withLock { state in
            state.transactions.filter { !state.finished.contains($0.unsafePayloadValue.id) }
        }
        return Transactions.of(snapshot)
    }

    /// A sequence of the latest transactions that entitle a customer to in-app purchases and subscriptions.
    public static var currentEntitlements: Transactions {
        Transactions.of(_StoreKitShim.state.withLock { $0.entitlements })
    }
}

extension Transaction.Transactions {
    static func of(_ results: [VerificationResult<Transaction>]) -> Self {
        Self(
            stream: AsyncStream { continuation in
                for result in results { continuation.yield(result) }
                continuation.finish()
            })
    }
}

// MARK: The App Store

/// Information and actions for the App Store.
public enum AppStore {
    /// Synchronizes your app's transaction information and subscription status with information from the App Store.
    public static func sync() async throws {
        try _StoreKitShim.state.withLock { state in
            try state.check()
            state.syncs += 1
        }
    }
}

// MARK: Scripted behaviour (tests only)

/// The App Store as AppleAdapterTests script it: the products, the outcome of the next purchase, the transactions
/// StoreKit delivers (verified or not) and which ones the app finished.
public enum _StoreKitShim {
    struct State: Sendable {
        var products: [String: Product] = [:]
        var eligibleForIntroOffer: Set<String> = []
        var nextPurchase: [Outcome] = []
        var purchaseOptions: [Set<Product.PurchaseOption>] = []
        var transactions: [VerificationResult<Transaction>] = []
        var entitlements: [VerificationResult<Transaction>] = []
        var finished: Set<UInt64> = []
        var listeners: [UUID: AsyncStream<VerificationResult<Transaction>>.Continuation] = [:]
        var failure: (any Error)?
        var syncs = 0
        var lastID: UInt64 = 1_000

        mutating func check() throws {
            if let failure {
                self.failure = nil
                throw failure
            }
        }

        mutating func purchase(_ product: Product) throws -> Product.PurchaseResult {
            let outcome = nextPurchase.isEmpty ? .purchased(verified: true) : nextPurchase.removeFirst()
            switch outcome {
            case .purchased(let verified):
                let result = transaction(productID: product.id, verified: verified)
                transactions.append(result)
                return .success(result)
            case .pending: return .pending
            case .cancelled: return .userCancelled
            case .failed(let error): throw error
            }
        }

        mutating func transaction(productID: String, verified: Bool) -> VerificationResult<Transaction> {
            lastID += 1
            let transaction = Transaction(
                id: lastID, originalID: lastID, productID: productID, appAccountToken: nil, purchaseDate: Date(),
                jws: "jws.\(productID).\(lastID)")
            return verified ? .verified(transaction) : .unverified(transaction, .invalidSignature)
        }
    }

    /// What the next `purchase(options:)` answers.
    public enum Outcome: Sendable {
        case purchased(verified: Bool)
        case pending
        case cancelled
        case failed(any Error)
    }

    static let state = Mutex(State())

    /// No products, no transactions, no listeners.
    public static func reset() {
        let listeners = state.withLock { state in
            defer { state = State() }
            return state.listeners
        }
        for listener in listeners.values { listener.finish() }
    }

    /// The App Store sells `id` (a subscription of `group` with a free trial when `freeTrial`).
    public static func addProduct(
        id: String, displayName: String, displayPrice: String, group: String = "main", freeTrial: Bool = false,
        eligibleForIntroOffer: Bool = true
    ) {
        state.withLock { state in
            state.products[id] = Product(
                id: id, displayName: displayName, displayPrice: displayPrice, description: displayName, price: 0,
                subscription: Product.SubscriptionInfo(
                    subscriptionGroupID: group,
                    introductoryOffer: freeTrial ? Product.SubscriptionOffer(paymentMode: .freeTrial) : nil))
            if eligibleForIntroOffer {
                state.eligibleForIntroOffer.insert(group)
            } else {
                state.eligibleForIntroOffer.remove(group)
            }
        }
    }

    /// The next purchase answers `outcome`.
    public static func setNextPurchase(_ outcome: Outcome) { state.withLock { $0.nextPurchase.append(outcome) } }

    /// The options of each purchase so far.
    public static var purchaseOptions: [Set<Product.PurchaseOption>] { state.withLock { $0.purchaseOptions } }

    /// The app account token a purchase's options carry, if any.
    public static func appAccountToken(in options: Set<Product.PurchaseOption>) -> UUID? {
        options.first { $0.name == "appAccountToken" }.flatMap { UUID(uuidString: $0.value) }
    }

    /// StoreKit delivers a transaction outside a purchase (a renewal, another device …) to every `Transaction.updates`
    /// listener; it stays among the unfinished until the app finishes it. Answers its id and signed form.
    @discardableResult
    public static func deliverUpdate(productID: String, verified: Bool = true) -> (id: UInt64, jws: String) {
        let (result, listeners) = state.withLock { state in
            let result = state.transaction(productID: productID, verified: verified)
            state.transactions.append(result)
            return (result, state.listeners)
        }
        for listener in listeners.values { listener.yield(result) }
        return (result.unsafePayloadValue.id, result.jwsRepresentation)
    }

    /// `Transaction.currentEntitlements` answers transactions of these products (verified or not).
    public static func setEntitlements(_ products: [(productID: String, verified: Bool)]) {
        state.withLock { state in
            state.entitlements = products.map { state.transaction(productID: $0.productID, verified: $0.verified) }
        }
    }

    /// Whether the app finished the transaction `id`.
    public static func isFinished(_ id: UInt64) -> Bool { state.withLock { $0.finished.contains(id) } }

    /// How many times the app called `AppStore.sync()`.
    public static var syncCount: Int { state.withLock { $0.syncs } }

    /// How many `Transaction.updates` sequences are being listened to.
    public static var listenerCount: Int { state.withLock { $0.listeners.count } }

    /// The next StoreKit call fails with `error`.
    public static func failNextCall(with error: any Error) { state.withLock { $0.failure = error } }

    static func listen() -> AsyncStream<VerificationResult<Transaction>> {
        let (stream, continuation) = AsyncStream<VerificationResult<Transaction>>.makeStream()
        let id = UUID()
        continuation.onTermination = { _ in _ = state.withLock { $0.listeners.removeValue(forKey: id) } }
        state.withLock { $0.listeners[id] = continuation }
        return stream
    }
}
