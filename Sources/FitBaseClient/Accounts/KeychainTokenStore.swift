#if canImport(Security)
import Foundation
import Security

/// Keeps the session in the Keychain: one generic-password item holding the JSON of ``StoredSession`` and a second
/// holding the device token, readable after the first unlock on this device only (so background sync can read them,
/// and they never leave the device in a backup).
public struct KeychainTokenStore: TokenStore {
    /// The items' service; the accounts are `session`, `device-token` and `install-id`.
    public let service: String
    /// The access group shared with app extensions, if any.
    public let accessGroup: String?

    /// A store keeping its items under `service`.
    public init(service: String = "dev.fitbase.session", accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func load() async throws -> StoredSession? {
        try read("session").map { try JSONDecoder().decode(StoredSession.self, from: $0) }
    }

    public func save(_ session: StoredSession?) async throws {
        try write("session", session.map { try JSONEncoder().encode($0) })
    }

    public func loadDeviceToken() async throws -> String? {
        try read("device-token").map { String(decoding: $0, as: UTF8.self) }
    }

    public func saveDeviceToken(_ token: String?) async throws {
        try write("device-token", token.map { Data($0.utf8) })
    }

    public func loadInstallID() async throws -> String? {
        try read("install-id").map { String(decoding: $0, as: UTF8.self) }
    }

    public func saveInstallID(_ id: String) async throws {
        try write("install-id", Data(id.utf8))
    }

    private func query(_ account: String) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func read(_ account: String) throws -> Data? {
        var lookup = query(account)
        lookup[kSecReturnData as String] = true
        lookup[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(lookup as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw KeyProviderError.keychain(status) }
        return item as? Data
    }

    private func write(_ account: String, _ data: Data?) throws {
        guard let data else {
            let status = SecItemDelete(query(account) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeyProviderError.keychain(status) }
            return
        }
        let attributes: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
        let updated = SecItemUpdate(query(account) as CFDictionary, attributes as CFDictionary)
        if updated == errSecSuccess { return }
        guard updated == errSecItemNotFound else { throw KeyProviderError.keychain(updated) }
        let added = SecItemAdd(query(account).merging(attributes) { _, new in new } as CFDictionary, nil)
        guard added == errSecSuccess else { throw KeyProviderError.keychain(added) }
    }
}
#endif
