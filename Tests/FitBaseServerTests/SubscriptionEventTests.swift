import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// A change of what a user owns tells their devices: one `subscription` event on the user's stream, written with the
/// change, carrying the entitlement after it — and nothing when nothing they own changed.
@Suite struct SubscriptionEventTests {
    /// The `subscription` events of `user`, oldest first, as their JSON.
    static func events(_ app: TestApp, of user: UUID) async throws -> [[String: String]] {
        let events = try await app.database.withConnection { db in try await EventLog.events(after: 0, limit: 1_000, on: db) }
        return try events.filter { $0.type == "subscription" && $0.topic == "user:\(user.uuidString.lowercased())" }.map { event in
            try #require(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: String])
        }
    }

    @Test(arguments: TestEngines.all)
    func eachChangeOfWhatAUserOwnsIsAnnouncedOnce(engine: DatabaseEngine) async throws {
        try await AppStoreBillingTests.withBillingApp(engine) { client, app in
            let account = try await client.signUp()
            let user = try #require(UUID(uuidString: account.id))
            let original = AppStoreBillingTests.originalID()
            let signer = AppStoreBillingTests.signer

            // Apple's notification of a subscription nobody has claimed yet: nobody to tell.
            let unclaimed = AppStoreTestSigner.transaction(originalTransactionId: original, transactionId: original, signedDate: Date.now.addingTimeInterval(-40))
            #expect(try await AppStoreBillingTests.notify(client, try signer.notification(type: "SUBSCRIBED", transaction: unclaimed, signedDate: unclaimed.signedDate)).status == .ok)
            #expect(try await Self.events(app, of: user).isEmpty)

            // The app claims it: its owner is told, with the entitlement after the claim.
            var bought = AppStoreTestSigner.transaction(
                originalTransactionId: original, transactionId: original, signedDate: Date.now.addingTimeInterval(-30), appAccountToken: user
            )
            #expect(try await AppStoreBillingTests.claim(client, account.accessToken, bought).status == .ok)
            #expect(try await Self.events(app, of: user) == [["tier": "pro", "status": "active"]])

            // The same transaction again (a relaunch delivering it once more) changes nothing, and says nothing.
            #expect(try await AppStoreBillingTests.claim(client, account.accessToken, bought).status == .ok)
            #expect(try await Self.events(app, of: user).count == 1)

            // A refund ends access at once: told.
            bought.signedDateMilliseconds += 20_000
            bought.revocationDateMilliseconds = bought.signedDateMilliseconds
            let refund = try signer.notification(type: "REFUND", transaction: bought, signedDate: bought.signedDate)
            #expect(try await AppStoreBillingTests.notify(client, refund).status == .ok)
            let afterRefund = try await Self.events(app, of: user)
            #expect(afterRefund.last == ["tier": "free", "status": "revoked"], "\(afterRefund)")

            // A promotional grant (`fitbase admin grant-tier`; it does not renew): told.
            try await AccountAdministration(database: app.database, clock: .system).grantTier(.premium, to: UserID(rawValue: user), days: 30)
            let events = try await Self.events(app, of: user)
            #expect(events.count == 3 && events.last == ["tier": "premium", "status": "active"], "\(events)")

            // Another user heard nothing of it.
            let other = try await client.signUp()
            #expect(try await Self.events(app, of: try #require(UUID(uuidString: other.id))).isEmpty)
        }
    }
}
