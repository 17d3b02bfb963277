import Foundation

/// The tokens of a signed-in session, as the SDK keeps them between launches.
public struct StoredSession: Codable, Sendable, Equatable {
    /// The signed-in user's id.
    public var userID: String
    /// Sent as `Authorization: Bearer …`; short-lived.
    public var accessToken: String
    /// Traded for new tokens when the access token expires; single use.
    public var refreshToken: String
    /// When the access token stops working (the SDK refreshes a little before).
    public var accessTokenExpiresAt: Date

    public init(userID: String, accessToken: String, refreshToken: String, accessTokenExpiresAt: Date) {
        self.userID = userID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
    }
}

/// Where the SDK keeps the session's tokens.
///
/// On iOS, keep them in the Keychain: implement `load()` with `SecItemCopyMatching` and `save(_:)` with
/// `SecItemAdd`/`SecItemUpdate` (or `SecItemDelete` for `nil`) on one generic-password item holding the JSON of
/// ``StoredSession``, with `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` so background sync can read it.
/// ``FileTokenStore`` is the implementation for Linux and command-line tools; ``InMemoryTokenStore`` forgets on exit.
public protocol TokenStore: Sendable {
    /// The saved session, or `nil` when signed out.
    func load() async throws -> StoredSession?
    /// Replaces the saved session; `nil` signs out.
    func save(_ session: StoredSession?) async throws
}

/// Keeps the session in a JSON file readable only by its owner (mode 0600), replaced atomically.
public struct FileTokenStore: TokenStore {
    public let fileURL: URL

    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    public func load() async throws -> StoredSession? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        return try JSONDecoder().decode(StoredSession.self, from: Data(contentsOf: fileURL))
    }

    public func save(_ session: StoredSession?) async throws {
        guard let session else {
            if FileManager.default.fileExists(atPath: fileURL.path) { try FileManager.default.removeItem(at: fileURL) }
            return
        }
        let directory = fileURL.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Written beside the target with owner-only permissions, then moved over it: never readable by others, never half-written.
        let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: try JSONEncoder().encode(session), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        // rename(2) replaces the old file atomically.
        guard rename(temporary.path, fileURL.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fileURL.path])
        }
    }
}

/// Keeps the session in memory only (tests, previews, apps that sign in on every launch).
public actor InMemoryTokenStore: TokenStore {
    private var session: StoredSession?

    public init(_ session: StoredSession? = nil) {
        self.session = session
    }

    public func load() async throws -> StoredSession? { session }

    public func save(_ session: StoredSession?) async throws { self.session = session }
}
