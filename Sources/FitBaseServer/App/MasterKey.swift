import Crypto
import FitBaseCore
import Foundation

/// The server's master key: a 256-bit AES key kept outside the database. It seals secrets stored in rows (Apple
/// refresh tokens, users' health data keys, the access-token signing keys), so a copy of the database alone reveals
/// none of them. Every instance on one database must hold the same one (``MasterKeyCheck``).
///
/// From `FITBASE_MASTER_KEY` (base64 of 32 bytes) when set, else the file `FITBASE_MASTER_KEY_FILE`
/// (default `<data dir>/master.key`, created with mode 0600 on first run).
struct MasterKey: Sendable {
    private let key: SymmetricKey
    /// A fingerprint naming this key (stored beside what it wraps, so a wrong key is recognised, never used).
    let id: String

    init(key: SymmetricKey) {
        self.key = key
        self.id = key.withUnsafeBytes { bytes in
            hexString(SHA256.hash(data: Data("fitbase master key id".utf8) + Data(bytes)).prefix(8))
        }
    }

    /// The master key `configuration` names: `FITBASE_MASTER_KEY`, else its key file (default `<data dir>/master.key`).
    ///
    /// A server others can reach does not make a new key file inside its data directory (a production deployment
    /// would keep its key beside the data by accident) unless `FITBASE_ALLOW_GENERATED_MASTER_KEY` says so: that
    /// start fails naming the settings. A key file already there still works (``placementWarning(for:)`` is logged).
    static func load(for configuration: ServerConfiguration) throws -> MasterKey {
        let providers = configuration.identityProviders
        let file = keyFile(for: configuration)
        if providers.masterKey == nil, !providers.allowsGeneratedMasterKey, !configuration.bindsLoopbackOnly,
            isInsideDataDirectory(file, configuration), !FileManager.default.fileExists(atPath: file)
        {
            throw ConfigurationError(
                setting: "master-key", source: "FITBASE_MASTER_KEY / FITBASE_MASTER_KEY_FILE",
                value: "unset on \(configuration.host)",
                expected: "FITBASE_MASTER_KEY (base64 of 32 bytes, from a secret store) or FITBASE_MASTER_KEY_FILE outside "
                    + "the data directory for a server others can reach; FITBASE_ALLOW_GENERATED_MASTER_KEY=true (or "
                    + "`serve --allow-generated-master-key`) makes \(file) beside the data anyway"
            )
        }
        return try load(environmentValue: providers.masterKey, file: file)
    }

    /// A warning for a server others can reach whose master key is a file in its data directory (beside the data it
    /// protects: whoever takes a copy of the directory, or a backup of it, takes the key too); `nil` otherwise.
    static func placementWarning(for configuration: ServerConfiguration) -> String? {
        guard configuration.identityProviders.masterKey == nil, !configuration.bindsLoopbackOnly else { return nil }
        let file = keyFile(for: configuration)
        guard isInsideDataDirectory(file, configuration) else { return nil }
        return "the master key is the file \(file), inside the data directory, on a server others can reach: keep it apart from the data it protects (FITBASE_MASTER_KEY from a secret store, or FITBASE_MASTER_KEY_FILE on another volume)"
    }

    /// The key file `configuration` names (`FITBASE_MASTER_KEY_FILE`, default `<data dir>/master.key`), standardized.
    private static func keyFile(for configuration: ServerConfiguration) -> String {
        let directory = URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path
        return URL(fileURLWithPath: configuration.identityProviders.masterKeyFile ?? directory + "/master.key").standardizedFileURL.path
    }

    private static func isInsideDataDirectory(_ file: String, _ configuration: ServerConfiguration) -> Bool {
        let directory = URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path
        return file.hasPrefix(directory.hasSuffix("/") ? directory : directory + "/")
    }

    /// A key of its own for `purpose`, derived from the master key (HKDF-SHA-256): it changes with the master key and
    /// says nothing of it.
    func derivedKey(for purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("fitbase \(purpose)".utf8), outputByteCount: 32)
    }

    static func load(environmentValue: String?, file: String) throws -> MasterKey {
        if let environmentValue {
            guard let data = Data(base64Encoded: environmentValue.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
                throw MasterKeyError(source: "FITBASE_MASTER_KEY", reason: "must be the base64 of exactly 32 bytes")
            }
            return MasterKey(key: SymmetricKey(data: data))
        }
        if let data = FileManager.default.contents(atPath: file) {
            guard data.count == 32 else {
                throw MasterKeyError(source: "FITBASE_MASTER_KEY_FILE (\(file))", reason: "must hold exactly 32 bytes")
            }
            return MasterKey(key: SymmetricKey(data: data))
        }
        let key = SymmetricKey(size: .bits256)
        let created = FileManager.default.createFile(
            atPath: file, contents: key.withUnsafeBytes { Data($0) }, attributes: [.posixPermissions: 0o600]
        )
        guard created else { throw MasterKeyError(source: "FITBASE_MASTER_KEY_FILE (\(file))", reason: "cannot create the file") }
        return MasterKey(key: key)
    }

    /// AES-256-GCM seals `plaintext`, bound to `context` (e.g. the row it belongs to) so it cannot be moved.
    func seal(_ plaintext: Data, context: String) throws -> Data {
        guard let combined = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8)).combined else {
            throw MasterKeyError(source: "seal", reason: "AES-GCM produced no output")
        }
        return combined
    }

    /// Opens what ``seal(_:context:)`` produced for the same `context`; throws if it was altered or moved.
    func open(_ sealed: Data, context: String) throws -> Data {
        try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(context.utf8))
    }
}

struct MasterKeyError: Error, CustomStringConvertible {
    let source: String
    let reason: String
    var description: String { "invalid master key from \(source): \(reason)" }
}
