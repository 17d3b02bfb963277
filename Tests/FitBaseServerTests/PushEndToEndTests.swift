import Crypto
import FitBaseFakeAPNs
import FitBaseTestSupport
import HTTPTypes
import Foundation
import HummingbirdTesting
import NIOSSL
import Testing

@testable import FitBaseServer

/// The whole way of a push: a group event written by the API, queued in the outbox, claimed by the push worker and
/// sent by the APNs provider the server builds from its configuration (`FITBASE_APNS_*`) to a fake gateway speaking
/// HTTP/2 over TLS, which checks the provider token, headers and payload as Apple does.
@Suite struct PushEndToEndTests {
    @Test(arguments: TestEngines.all)
    func aNewMemberReachesTheOwnersPhoneThroughTheConfiguredGateway(engine: DatabaseEngine) async throws {
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNsServer.start(
            FakeAPNsServer.Options(teamID: "TEAMFB0001", keyID: "KEYFB00001", publicKey: key.publicKey, topic: "com.example.fit")
        )
        do {
            let apns = APNsConfiguration(
                teamID: "TEAMFB0001", keyID: "KEYFB00001", privateKey: key, defaultTopic: "com.example.fit",
                productionGatewayURL: fake.url, sandboxGatewayURL: fake.url,
                trustRoots: try NIOSSLCertificate.fromPEMBytes(Array(fake.certificateAuthorityPEM.utf8))
            )
            // No provider given: the server builds its APNs provider from the configuration.
            try await withApp(engine, options: .init(configure: { $0.apns = apns })) { client, _ in
                let ana = try await client.signUp()
                let bea = try await client.signUp()
                try await client.enableNotifications(ana)
                let phone = deviceToken()
                try await client.registerDevice(phone, for: ana)
                let groupID = try await PushDeliveryTests.joinGroup(client, owner: ana, joining: bea)

                #expect(await eventually(timeout: .seconds(20)) { fake.acceptedCount == 1 })
                let push = try #require(fake.accepted.first)
                #expect(push.deviceToken == phone)
                #expect(push.headers["apns-topic"] == "com.example.fit")
                #expect(push.headers["apns-push-type"] == "alert")
                let body = try #require(try JSONSerialization.jsonObject(with: push.payload) as? [String: Any])
                #expect((body["aps"] as? [String: Any])?["badge"] as? Int == 1)
                #expect((body["fitbase"] as? [String: Any])?["type"] as? String == "new_member")
                #expect((body["fitbase"] as? [String: Any])?["groupId"] as? String == groupID)
                #expect(fake.refusals.isEmpty)

                // Signed out: the device is gone, and the next member's news is not sent to it.
                #expect(try await client.json(.post, "/v1/auth/signout", token: ana.accessToken).status == .noContent)
                let cleo = try await client.signUp()
                let invite = try #require(try await GroupTests.invite(client, try await client.signIn(ana), groupID)["token"] as? String)
                _ = try await client.json(.post, "/v1/invites/\(invite)/accept", token: cleo.accessToken)
                try await Task.sleep(for: .milliseconds(500))
                #expect(fake.acceptedCount == 1)
            }
        } catch {
            try? await fake.stop()
            throw error
        }
        try await fake.stop()
    }
}
