import FitBaseClient
import Foundation
import Testing

@testable import FitBaseServer

/// The nonce of a Sign in with Apple or Google request: what the app keeps and what the server checks.
@Suite struct SignInNonceTests {
    @Test func theHashIsTheOneTheServerComparesWithApplesClaim() throws {
        #expect(SignInNonce(raw: "abc").sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let nonce = try SignInNonce()
        // The server's check of an Apple token: its nonce claim equals hex(SHA256(rawNonce)).
        #expect(nonce.sha256 == FitBaseServer.sha256Hex(nonce.raw))
        #expect(nonce.raw.count == 64 && nonce.raw.allSatisfy(\.isHexDigit) && nonce.raw == nonce.raw.lowercased())
    }

    @Test func everyRequestHasItsOwnNonce() throws {
        let nonces = try (0..<100).map { _ in try SignInNonce().raw }
        #expect(Set(nonces).count == 100)
    }
}
