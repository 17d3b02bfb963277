#if canImport(Security)
import Foundation
import Security

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Keeps the local store's key as a generic-password item of the Keychain, readable after the first unlock on this
/// device only (so background sync can open the store, and the key never leaves the device in a backup).
public struct KeychainKeyProvider: KeyProvider {
    /// The item's service and account.
    public let service: String
    public let account: String
    /// The access group shared with app extensions, if any.
    public let accessGroup: String?

    /// A provider keeping its key in the item `service`/`account`.
    public init(service: String = "dev.fitbase.local-store", account: String = "key", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    private var query: [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func loadOrCreateKey() throws -> SymmetricKey {
        var lookup = query
        lookup[kSecReturnData as String] = true
        lookup[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(lookup as CFDictionary, &item)
        if status == errSecSuccess, let data = item as? Data {
            guard data.count == 32 else { throw KeyProviderError.malformedKey("the Keychain item \(service)/\(account)") }
            return SymmetricKey(data: data)
        }
        guard status == errSecItemNotFound else { throw KeyProviderError.keychain(status) }
        let key = SymmetricKey(size: .bits256)
        var add = query
        add[kSecValueData as String] = key.withUnsafeBytes { Data($0) }
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let added = SecItemAdd(add as CFDictionary, nil)
        if added == errSecDuplicateItem { return try loadOrCreateKey() }
        guard added == errSecSuccess else { throw KeyProviderError.keychain(added) }
        return key
    }

    public func destroyKey() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeyProviderError.keychain(status) }
    }
}
#endif
