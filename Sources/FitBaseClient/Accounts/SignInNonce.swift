import Crypto
import FitBaseCore
import Foundation

/// The nonce of one Sign in with Apple or Google request: a random ``raw`` value the app keeps, and what goes to the
/// provider. Apple's token carries the ``sha256`` of it (lower-case hex) and the server checks that against the raw
/// value sent with the token; Google's token carries the nonce it was given, and the server compares them as they are.
/// A token minted for one request therefore signs in once, from the app that asked for it.
public struct SignInNonce: Sendable, Equatable {
    /// The value sent to the server beside the token: 32 random bytes as 64 lower-case hex digits.
    public let raw: String

    /// A new nonce from the system's secure random generator (``SecureRandom``).
    public init() throws(FitBaseError) {
        var bytes = [UInt8](repeating: 0, count: 32)
        do {
            try SecureRandom.fill(&bytes)
        } catch {
            throw .storage("the system's random generator failed: \(error)")
        }
        raw = hexString(bytes)
    }

    /// The nonce whose raw value is `raw`.
    public init(raw: String) {
        self.raw = raw
    }

    /// What Apple's request carries (`ASAuthorizationAppleIDRequest.nonce`): the SHA-256 of ``raw``'s UTF-8 bytes as
    /// 64 lower-case hex digits, as the server computes it.
    public var sha256: String {
        hexString(SHA256.hash(data: Data(raw.utf8)))
    }
}
