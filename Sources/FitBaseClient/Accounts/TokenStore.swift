import FitBaseCore
import Foundation

/// The tokens of a signed-in session, as the SDK keeps them between launches.
public struct StoredSession: Codable, Sendable, Equatable {
    /// The signed-in user's id.
    public var userID: UserID
    /// Sent as `Authorization: Bearer …`; short-lived.
    public var accessToken: String
    /// Traded for new tokens when the access token expires; single use.
    public var refreshToken: String
    /// When the access token stops working (the SDK refreshes a little before).
    public var accessTokenExpiresAt: Date
    /// For a session opened with Sign in with Apple: Apple's id of the user (`ASAuthorizationAppleIDCredential.user`),
    /// whose credential state the app checks at launch and on foreground. Kept with the session, so it survives
    /// relaunch and is forgotten when the session ends.
    public var appleUserIdentifier: String?

    /// A session of the given tokens.
    public init(userID: UserID, accessToken: String, refreshToken: String, accessTokenExpiresAt: Date, appleUserIdentifier: String? = nil) {
        self.userID = userID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.appleUserIdentifier = appleUserIdentifier
    }
}

/// Where the SDK keeps the session's tokens.
///
/// On Apple platforms use ``KeychainTokenStore`` (generic-password items readable after the first unlock, on this
/// device only, so background sync can read them). ``FileTokenStore`` is the implementation for Linux and
/// command-line tools; ``InMemoryTokenStore`` forgets on exit.
public protocol TokenStore: Sendable {
    /// The saved session, or `nil` when signed out.
    func load() async throws -> StoredSession?
    /// Replaces the saved session; `nil` signs out.
    func save(_ session: StoredSession?) async throws
    /// The device token the last password sign-in returned (kept across sign-outs, unlike the session).
    func loadDeviceToken() async throws -> String?
    /// Replaces the device token. Keep it beside the session (on iOS, a second Keychain item).
    func saveDeviceToken(_ token: String?) async throws
    /// The random id of this install of the app (kept across sign-outs and, in the Keychain, reinstalls), sent with
    /// push registrations: the server moves a push token between accounts only for the install that registered it.
    func loadInstallID() async throws -> String?
    /// Keeps the install id.
    func saveInstallID(_ id: String) async throws
}

extension TokenStore {
    /// A store that keeps no device token: sign-ins then share their address's attempt allowance with everyone.
    public func loadDeviceToken() async throws -> String? { nil }
    public func saveDeviceToken(_ token: String?) async throws {}
    /// A store that keeps no install id: the SDK makes one per launch (a push token then moves between accounts
    /// only while the app runs).
    public func loadInstallID() async throws -> String? { nil }
    public func saveInstallID(_ id: String) async throws {}
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

    /// Kept in `<file>.device` beside the session file, mode 0600.
    public func loadDeviceToken() async throws -> String? {
        try readSide("device")
    }

    public func saveDeviceToken(_ token: String?) async throws {
        try writeSide("device", token)
    }

    /// Kept in `<file>.install` beside the session file, mode 0600.
    public func loadInstallID() async throws -> String? {
        try readSide("install")
    }

    public func saveInstallID(_ id: String) async throws {
        try writeSide("install", id)
    }

    private func readSide(_ suffix: String) throws -> String? {
        let url = fileURL.appendingPathExtension(suffix)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    private func writeSide(_ suffix: String, _ value: String?) throws {
        let url = fileURL.appendingPathExtension(suffix)
        guard let token = value else {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        guard FileManager.default.createFile(atPath: url.path, contents: Data(token.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

}

/// Keeps the session in memory only (tests, previews, apps that sign in on every launch).
public actor InMemoryTokenStore: TokenStore {
    private var session: StoredSession?
    private var deviceToken: String?
    private var installID: String?

    public init(_ session: StoredSession? = nil) {
        self.session = session
    }

    public func load() async throws -> StoredSession? { session }

    public func save(_ session: StoredSession?) async throws { self.session = session }

    public func loadDeviceToken() async throws -> String? { deviceToken }

    public func saveDeviceToken(_ token: String?) async throws { deviceToken = token }

    public func loadInstallID() async throws -> String? { installID }

    public func saveInstallID(_ id: String) async throws { installID = id }
}
