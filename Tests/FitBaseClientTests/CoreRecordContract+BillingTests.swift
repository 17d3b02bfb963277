import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

/// Core's billing product is the contract's `BillingProduct` (`listBillingProducts`), both ways, and its store and
/// period are the contract's enums.
@Suite struct CoreRecordContractBillingTests {
    @Test func aBillingProductIsTheContractsBillingProduct() throws {
        let product = BillingProduct(store: .appStore, productID: "com.example.premium.yearly", tier: .premium, period: .yearly)
        let written = try CoreRecordContractTests.encoder.encode(product)
        let wire = try JSONDecoder().decode(Components.Schemas.BillingProduct.self, from: written)
        #expect(wire.store == .appStore && wire.productId == "com.example.premium.yearly" && wire.tier == .premium && wire.period == .yearly)
        #expect(try CoreRecordContractTests.keys(written) == CoreRecordContractTests.keys(try CoreRecordContractTests.encoder.encode(wire)))

        let served = Components.Schemas.BillingProduct(store: .stripe, productId: "price_pro_week", tier: .pro, period: .weekly)
        #expect(
            try ContractJSON.record(BillingProduct.self, from: served)
                == BillingProduct(store: .stripe, productID: "price_pro_week", tier: .pro, period: .weekly)
        )
    }

    @Test func theStoresAndPeriodsAreTheContracts() throws {
        #expect(try contractEnum("BillingStore") == BillingStore.allCases.map(\.rawValue))
        #expect(try contractEnum("BillingPeriod") == BillingPeriod.allCases.map(\.rawValue))
        #expect(BillingPeriod.allCases.sorted() == BillingPeriod.allCases)
    }
}
