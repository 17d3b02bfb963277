import Foundation
import Synchronization

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Where the key sealing the device's local store lives — never beside the data it seals when the platform offers
/// better: the Keychain on Apple platforms (``KeychainKeyProvider``), a file readable only by its owner elsewhere
/// (``FileKeyProvider``), memory in tests (``InMemoryKeyProvider``).
///
/// Destroying the key makes whatever it sealed unreadable for good (crypto-shredding): the store does it when the
/// user signs out or deletes the account.
public protocol KeyProvider: Sendable {
    /// The 256-bit key, made (and kept) on first use.
    func loadOrCreateKey() throws -> SymmetricKey
    /// Forgets the key; the next ``loadOrCreateKey()`` makes a new one.
    func destroyKey() throws
}

/// Keeps the key in memory only: what it sealed is unreadable once the process ends (tests, previews).
public final class InMemoryKeyProvider: KeyProvider {
    private let key = Mutex<SymmetricKey?>(nil)

    /// A provider with no key yet.
    public init() {}

    public func loadOrCreateKey() throws -> SymmetricKey {
        key.withLock { key in
            if let key { return key }
            let made = SymmetricKey(size: .bits256)
            key = made
            return made
        }
    }

    public func destroyKey() throws {
        key.withLock { $0 = nil }
    }
}

/// Keeps the key in a file readable and writable by its owner only (mode 0600), created atomically. For Linux and
/// command-line tools; keep the file out of backups and away from the database when the platform allows.
public struct FileKeyProvider: KeyProvider {
    /// The key file.
    public let fileURL: URL

    /// A provider keeping its key in `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    public func loadOrCreateKey() throws -> SymmetricKey {
        if let data = try? Data(contentsOf: fileURL) {
            guard data.count == 32 else { throw KeyProviderError.malformedKey(fileURL.path) }
            return SymmetricKey(data: data)
        }
        let key = SymmetricKey(size: .bits256)
        let bytes = key.withUnsafeBytes { Data($0) }
        let directory = fileURL.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        // link(2) fails when another process made the key first: theirs wins, and both use it.
        defer { try? FileManager.default.removeItem(at: temporary) }
        if link(temporary.path, fileURL.path) != 0 {
            guard let data = try? Data(contentsOf: fileURL), data.count == 32 else { throw KeyProviderError.malformedKey(fileURL.path) }
            return SymmetricKey(data: data)
        }
        return key
    }

    public func destroyKey() throws {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return }
        // Overwritten before it is unlinked, so the bytes do not linger in the file's old blocks on a plain file system.
        if let handle = FileHandle(forWritingAtPath: fileURL.path) {
            try handle.write(contentsOf: Data(count: 32))
            try handle.synchronize()
            try handle.close()
        }
        try FileManager.default.removeItem(at: fileURL)
    }
}

/// Why a key could not be read.
public enum KeyProviderError: Error, Equatable, CustomStringConvertible {
    /// The key file (or Keychain item) does not hold a 256-bit key.
    case malformedKey(String)
    /// The Keychain refused (`OSStatus`).
    case keychain(Int32)

    public var description: String {
        switch self {
        case .malformedKey(let place): "\(place) does not hold a 256-bit key"
        case .keychain(let status): "the Keychain refused with status \(status)"
        }
    }
}
