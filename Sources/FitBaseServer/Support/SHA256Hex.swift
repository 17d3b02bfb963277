import Crypto
import FitBaseCore
import Foundation

/// The SHA-256 of `text`'s UTF-8 bytes as 64 lower-case hex digits: how refresh tokens and throttled addresses are
/// stored, and how Apple's nonce is compared.
func sha256Hex(_ text: String) -> String {
    hexString(SHA256.hash(data: Data(text.utf8)))
}
