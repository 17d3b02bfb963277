import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// Nonces that bind (accounts part 3): a provider token minted with a nonce needs it, a nonce signs in once on any
/// instance, and Google nonces can be required.
@Suite struct IdentityNonceTests {
    @Test(arguments: TestEngines.all)
    func aCapturedTokenSignsInOnceAcrossInstances(engine: DatabaseEngine) async throws {
        try await FakeIdentityProvider.run { fake in
            try await TestDatabase.with(engine, migrated: true) { testDatabase in
                try await SharedKeysTests.withDataDirectories(2) { directories in
                    let masterKey = SharedKeysTests.randomMasterKey()
                    let options = try directories.map { directory in
                        var options = TestAppOptions.instance(directory, masterKey: masterKey)
                        options.identityProviders = try fake.configuration(keyDirectory: directory)
                        return options
                    }
                    try await withApp(on: testDatabase, options: options[0]) { a, _ async throws in
                        try await withApp(on: testDatabase, options: options[1]) { b, _ async throws in
                            let google = try await FakeIdentityProvider.googleToken(subject: "g-replay", email: "r@gmail.com", nonce: "once")
                            #expect(try await a.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "once"]).status == .ok)
                            try expectProblem(try await b.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "once"]), .identityTokenReplayed)
                            try expectProblem(try await a.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "once"]), .identityTokenReplayed)

                            let apple = try await FakeIdentityProvider.appleToken(subject: "a-replay", rawNonce: "raw-once")
                            #expect(try await b.json(.post, "/v1/auth/apple", body: ["identityToken": apple, "rawNonce": "raw-once"]).status == .ok)
                            try expectProblem(try await a.json(.post, "/v1/auth/apple", body: ["identityToken": apple, "rawNonce": "raw-once"]), .identityTokenReplayed)
                            // A fresh nonce for the same person signs in.
                            let fresh = try await FakeIdentityProvider.appleToken(subject: "a-replay", rawNonce: "raw-twice")
                            #expect(try await a.json(.post, "/v1/auth/apple", body: ["identityToken": fresh, "rawNonce": "raw-twice"]).status == .ok)
                        }
                    }
                }
            }
        }
    }

    /// Issue 53: a Google token minted without a nonce signed in as often as it was sent until it expired.
    @Test(arguments: TestEngines.all)
    func aGoogleTokenMintedWithoutANonceSignsInOnce(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine) { client, _, _ in
            let bare = try await FakeIdentityProvider.googleToken(subject: "g-bare-once", email: "once@gmail.com", nonce: nil)
            #expect(try await client.json(.post, "/v1/auth/google", body: ["idToken": bare]).status == .ok)
            try expectProblem(try await client.json(.post, "/v1/auth/google", body: ["idToken": bare]), .identityTokenReplayed)
            // The signature spelled another way (the last base64url digit's spare bits set) is still the same token.
            let last = try #require(bare.last)
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let index = try #require(alphabet.firstIndex(of: last))
            let respelled = String(bare.dropLast()) + String(alphabet[index | 0b11])
            #expect(respelled != bare)
            #expect(try await client.json(.post, "/v1/auth/google", body: ["idToken": respelled]).status == .unauthorized)
        }
    }

    @Test func aGoogleTokenMintedWithANonceNeedsIt() async throws {
        try await withProviderApp(.sqlite) { client, _, _ in
            let google = try await FakeIdentityProvider.googleToken(subject: "g-nonce", email: "n@gmail.com", nonce: "bound")
            try expectProblem(try await client.json(.post, "/v1/auth/google", body: ["idToken": google]), .identityTokenNonceMismatch)
            try expectProblem(try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "other"]), .identityTokenNonceMismatch)
            #expect(try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "bound"]).status == .ok)
            // Without the setting, a token minted without a nonce still signs in.
            let bare = try await FakeIdentityProvider.googleToken(subject: "g-bare", email: "b@gmail.com", nonce: nil)
            #expect(try await client.json(.post, "/v1/auth/google", body: ["idToken": bare]).status == .ok)
        }
    }

    @Test func googleNoncesCanBeRequired() async throws {
        #expect(try IdentityProvidersConfiguration.resolve(environment: ["FITBASE_GOOGLE_REQUIRE_NONCE": "true"]).googleRequiresNonce)
        #expect(throws: ConfigurationError.self) { try IdentityProvidersConfiguration.resolve(environment: ["FITBASE_GOOGLE_REQUIRE_NONCE": "maybe"]) }
        try await FakeIdentityProvider.run { fake in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-keys-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var providers = try fake.configuration(keyDirectory: directory)
            providers.googleRequiresNonce = true
            try await withApp(.sqlite, options: .init(identityProviders: providers)) { client, _ in
                let bare = try await FakeIdentityProvider.googleToken(subject: "g-bare", email: "b@gmail.com", nonce: nil)
                try expectProblem(try await client.json(.post, "/v1/auth/google", body: ["idToken": bare]), .identityTokenNonceMismatch)
                let bound = try await FakeIdentityProvider.googleToken(subject: "g-bound", email: "c@gmail.com", nonce: "n-7")
                #expect(try await client.json(.post, "/v1/auth/google", body: ["idToken": bound, "nonce": "n-7"]).status == .ok)
            }
        }
    }
}

extension Array {
    /// Maps in order, awaiting each element.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
