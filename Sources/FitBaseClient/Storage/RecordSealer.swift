import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Seals the local store's values with AES-256-GCM, each bound to its row (the authenticated data names the
/// collection and id), so a sealed value cannot be read without the key nor moved to another row unnoticed.
///
/// Layout: one version byte (1), then the 12-byte nonce, the ciphertext and the 16-byte tag.
struct RecordSealer: Sendable {
    let key: SymmetricKey

    static let version: UInt8 = 1

    func seal(_ plaintext: Data, context: String) throws -> Data {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw RecordSealerError.unsealable }
        var sealed = Data(capacity: combined.count + 1)
        sealed.append(Self.version)
        sealed.append(combined)
        return sealed
    }

    func open(_ sealed: Data, context: String) throws -> Data {
        guard sealed.first == Self.version else { throw RecordSealerError.notSealed }
        let box = try AES.GCM.SealedBox(combined: sealed.dropFirst())
        return try AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
    }

    /// Whether `data` is a sealed value (plaintext JSON starts with `{`, never with the version byte).
    static func isSealed(_ data: Data) -> Bool { data.first == version }
}

/// Why a value could not be sealed or opened.
enum RecordSealerError: Error {
    case unsealable
    /// A value that should be sealed is not (a store written by an SDK before sealing, not yet migrated).
    case notSealed
}
