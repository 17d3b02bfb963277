import Crypto
import FitBaseCore
import Foundation
import Synchronization

/// Seals and opens users' health data with their own AES-256-GCM data keys (envelope encryption).
///
/// Each user's data key is random, made on their first upload, and stored only wrapped by the master key in the
/// ``HealthKeyStore``. Every ciphertext carries the id of the data key that sealed it and is bound (as authenticated
/// data) to the clear fields of its row, so it cannot be moved to another row or user. Unwrapped keys are cached in
/// memory (bounded); destroying a user's key forgets it here too.
final class HealthVault: Sendable {
    let keys: HealthKeyStore
    let masterKey: MasterKey
    private let cache = Mutex<[UserID: DataKey]>([:])
    private static let cacheLimit = 10_000

    /// An unwrapped data key.
    struct DataKey: Sendable {
        let id: String
        let key: SymmetricKey
    }

    init(keys: HealthKeyStore, masterKey: MasterKey) {
        self.keys = keys
        self.masterKey = masterKey
    }

    /// Refuses to start with a master key other than the one the stored data keys are wrapped under.
    func checkMasterKey() async throws {
        let ids = try await keys.masterKeyIDs()
        guard let foreign = ids.keys.first(where: { $0 != masterKey.id }) else { return }
        throw HealthVaultError.wrongMasterKey(configured: masterKey.id, stored: foreign, keys: ids[foreign] ?? 0)
    }

    /// The user's data key, made (and stored wrapped) when `creating` and there is none; `nil` without one.
    func dataKey(of user: UserID, creating: Bool) async throws -> DataKey? {
        if let cached = cache.withLock({ $0[user] }) { return cached }
        var wrapped = try await keys.key(of: user)
        if wrapped == nil, creating {
            let raw = SymmetricKey(size: .bits256)
            let keyID = UUID.random().uuidString.lowercased()
            let sealed = try masterKey.seal(raw.withUnsafeBytes { Data($0) }, context: Self.context(user, keyID))
            wrapped = try await keys.insertIfAbsent(.init(user: user, keyID: keyID, masterKeyID: masterKey.id, wrapped: sealed))
        }
        guard let wrapped else { return nil }
        let key = try unwrap(wrapped)
        cache.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[user] = key
        }
        return key
    }

    /// Destroys the user's data key (crypto-shredding): every ciphertext it sealed, in any copy, is unreadable after.
    /// Returns whether there was one.
    @discardableResult
    func destroyKey(of user: UserID) async throws -> Bool {
        cache.withLock { $0[user] = nil }
        return try await keys.destroy(user)
    }

    func seal(_ plaintext: Data, with key: DataKey, binding context: [UInt8], nonce: AES.GCM.Nonce = AES.GCM.Nonce()) throws -> Data {
        guard let combined = try AES.GCM.seal(plaintext, using: key.key, nonce: nonce, authenticating: context).combined else {
            throw HealthVaultError.sealFailed
        }
        return combined
    }

    /// `count` random nonces (96 bits each, as `AES.GCM.Nonce()` draws them) read from the kernel's generator at once.
    /// Each `AES.GCM.Nonce()` asks the kernel twice (8 bytes at a time): for a batch of 1,000 samples, 2,000 system
    /// calls instead of one.
    static func nonces(_ count: Int) throws -> [AES.GCM.Nonce] {
        var bytes = [UInt8](repeating: 0, count: count * 12)
        try SecureRandom.fill(&bytes)
        return try (0..<count).map { try AES.GCM.Nonce(data: bytes[$0 * 12..<($0 + 1) * 12]) }
    }

    func open(_ sealed: Data, with key: DataKey, binding context: [UInt8]) throws -> Data {
        try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key.key, authenticating: context)
    }

    /// The data key inside a wrapped one.
    func unwrap(_ wrapped: HealthKeyStore.WrappedKey) throws -> DataKey {
        guard wrapped.masterKeyID == masterKey.id else {
            throw HealthVaultError.wrongMasterKey(configured: masterKey.id, stored: wrapped.masterKeyID, keys: 1)
        }
        let raw = try masterKey.open(wrapped.wrapped, context: Self.context(wrapped.user, wrapped.keyID))
        return DataKey(id: wrapped.keyID, key: SymmetricKey(data: raw))
    }

    /// What a wrapped data key is bound to.
    static func context(_ user: UserID, _ keyID: String) -> String {
        "health_data_keys/\(user)/\(keyID)"
    }
}

enum HealthVaultError: Error, CustomStringConvertible {
    case wrongMasterKey(configured: String, stored: String, keys: Int)
    case sealFailed

    var description: String {
        switch self {
        case .wrongMasterKey(let configured, let stored, let keys):
            "the master key (FITBASE_MASTER_KEY or FITBASE_MASTER_KEY_FILE, id \(configured)) is not the one \(keys) stored health data key(s) "
                + "are wrapped under (id \(stored)); start with that key, or re-wrap them with `fitbase keys rotate`"
        case .sealFailed: "AES-GCM produced no ciphertext"
        }
    }
}
