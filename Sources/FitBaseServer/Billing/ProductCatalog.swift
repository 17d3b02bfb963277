import FitBaseCore
import Foundation

/// Which tier each store product grants, and which features each tier unlocks (`FITBASE_PRODUCTS_FILE`).
///
/// The file is JSON: `{"tiers": {"free": [features], "pro": [...], "premium": [...]}, "products": [{"store":
/// "appStore" | "stripe", "productId": "…", "tier": "pro" | "premium", "period": "weekly" | "monthly" | "quarterly" |
/// "semiannual" | "yearly"}]}` (Stripe products are price ids). The bundled `default-products.json` holds the seeds'
/// products; a file of your own replaces it whole. Apps read the products as the file lists them
/// (`listBillingProducts`), so the file is the only product → tier map.
struct ProductCatalog: Sendable, Equatable {
    let tierFeatures: TierFeatures
    /// Every product, in the file's order.
    let products: [BillingProduct]
    private let tiers: [BillingStore: [String: SubscriptionTier]]

    /// A catalog of `products` (``parse(_:)`` has refused a product listed twice for one store).
    private init(tierFeatures: TierFeatures, products: [BillingProduct]) {
        self.tierFeatures = tierFeatures
        self.products = products
        var tiers: [BillingStore: [String: SubscriptionTier]] = [:]
        for product in products { tiers[product.store, default: [:]][product.productID] = product.tier }
        self.tiers = tiers
    }

    /// The tier `productID` grants, `nil` for a product the file does not list.
    func tier(of productID: String, in store: BillingStore) -> SubscriptionTier? {
        tiers[store]?[productID]
    }

    /// The file at `path`, or the bundled default; every problem names the entry at fault.
    static func load(path: String?) throws(ProductCatalogError) -> ProductCatalog {
        let source = path ?? "default-products.json (bundled)"
        let data: Data
        do {
            if let path {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } else {
                guard let url = Bundle.module.url(forResource: "default-products", withExtension: "json") else {
                    throw ProductCatalogError(path: source, reason: "the bundled default is missing")
                }
                data = try Data(contentsOf: url)
            }
        } catch let error as ProductCatalogError {
            throw error
        } catch {
            throw ProductCatalogError(path: source, reason: "cannot read it (\(error.localizedDescription))")
        }
        do {
            return try parse(data)
        } catch {
            throw ProductCatalogError(path: source, reason: error.reason)
        }
    }

    /// Parses the file's JSON; the error's reason names the entry.
    static func parse(_ data: Data) throws(ProductCatalogError) -> ProductCatalog {
        func fail(_ reason: String) -> ProductCatalogError { ProductCatalogError(path: "", reason: reason) }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw fail("not a JSON object")
        }
        guard let tierLists = root["tiers"] as? [String: Any] else { throw fail("tiers: must be an object of tier → feature list") }
        var features: [SubscriptionTier: Set<Feature>] = [:]
        for (name, value) in tierLists {
            guard let tier = SubscriptionTier(rawValue: name) else {
                throw fail("tiers.\(name): not a tier (\(SubscriptionTier.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard let names = value as? [String] else { throw fail("tiers.\(name): must be a list of feature names") }
            var set: Set<Feature> = []
            for (index, featureName) in names.enumerated() {
                guard let feature = Feature(rawValue: featureName) else {
                    throw fail("tiers.\(name)[\(index)]: \"\(featureName)\" is not a feature (\(Feature.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                set.insert(feature)
            }
            features[tier] = set
        }
        let tierFeatures: TierFeatures
        do {
            tierFeatures = try TierFeatures(features)
        } catch {
            throw fail("tiers: \(error)")
        }
        guard let entries = root["products"] as? [Any] else { throw fail("products: must be a list") }
        var products: [BillingProduct] = []
        for (index, entry) in entries.enumerated() {
            guard let object = entry as? [String: Any] else { throw fail("products[\(index)]: must be an object") }
            guard let storeName = object["store"] as? String, let store = BillingStore(rawValue: storeName) else {
                throw fail("products[\(index)].store: must be appStore or stripe")
            }
            guard let id = (object["productId"] as? String)?.trimmingCharacters(in: .whitespaces), !id.isEmpty else {
                throw fail("products[\(index)].productId: must be a non-empty string")
            }
            guard let tierName = object["tier"] as? String, let tier = SubscriptionTier(rawValue: tierName), tier != .free else {
                throw fail("products[\(index)].tier: must be pro or premium")
            }
            guard let periodName = object["period"] as? String, let period = BillingPeriod(rawValue: periodName) else {
                let periods = BillingPeriod.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail("products[\(index)].period: must be one of \(periods)")
            }
            if products.contains(where: { $0.store == store && $0.productID == id }) {
                throw fail("products[\(index)].productId: \(id) is listed twice for \(storeName)")
            }
            products.append(BillingProduct(store: store, productID: id, tier: tier, period: period))
        }
        return ProductCatalog(tierFeatures: tierFeatures, products: products)
    }
}

/// An unusable products file, reported at start-up naming the setting and the entry.
public struct ProductCatalogError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String {
        "invalid products file \(path) (set by FITBASE_PRODUCTS_FILE): \(reason)"
    }
}
