import Crypto
import FitBaseAPI
import Foundation
import JWTKit
import Logging

/// One access-token signing key, unsealed.
struct SigningKey: Sendable {
    let id: String
    let state: SigningKeyState
    let privateKey: ES256PrivateKey

    init(privateKey: ES256PrivateKey, state: SigningKeyState) {
        self.id = Self.keyID(of: privateKey.publicKey)
        self.state = state
        self.privateKey = privateKey
    }

    /// The `kid` of a public key: a thumbprint, stable for the key and different for every key. Keys made before they
    /// moved into the database had the same kid, so tokens they signed keep verifying after the import.
    static func keyID(of publicKey: ES256PublicKey) -> String {
        let parameters = publicKey.parameters
        let digest = SHA256.hash(data: Data("\(parameters?.x ?? "").\(parameters?.y ?? "")".utf8))
        return Data(digest.prefix(12)).base64URLEncoded
    }

    /// The public half as `/.well-known/jwks.json` publishes it.
    var publishedKey: Components.Schemas.Jwk {
        let (x, y) = privateKey.publicKey.parameters ?? ("", "")
        return Components.Schemas.Jwk(kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: id, x: x, y: y)
    }
}

/// The keys an instance signs and verifies with, as last read: one current key and the previous ones.
struct SigningKeyRing: Sendable {
    let currentKeyID: String
    let keyIDs: Set<String>
    let collection: JWTKeyCollection
    let published: [Components.Schemas.Jwk]

    /// - Parameter keys: the live keys, exactly one of them current.
    init(keys: [SigningKey]) async throws {
        guard let current = keys.first(where: { $0.state == .current }) else { throw SigningKeysError.noCurrentKey }
        let collection = JWTKeyCollection()
        for key in keys where key.state != .retired {
            await collection.add(ecdsa: key.privateKey, kid: JWKIdentifier(string: key.id))
        }
        let live = [current] + keys.filter { $0.state == .previous }
        self.currentKeyID = current.id
        self.keyIDs = Set(live.map(\.id))
        self.collection = collection
        self.published = live.map(\.publishedKey)
    }
}

/// The deployment's signing keys in the database: made on first start (or imported from the key file older versions
/// kept in the data directory), unsealed for the ``SessionTokenSigner``, and rotated.
///
/// Private keys are stored sealed by the master key, bound to their kid; public keys in clear.
struct SigningKeys: Sendable {
    let store: SigningKeyStore
    let masterKey: MasterKey
    /// `<data dir>/session-signing-key.pem`, where versions before the keys moved into the database kept theirs.
    let legacyKeyFile: String?
    let logger: Logger

    /// How long a key that stopped being current keeps verifying before a rotation may retire it. Access tokens last
    /// 15 minutes and instances take up a new current key within a minute, so nothing it signed is valid by then;
    /// the rest is margin for instances that could not reread the keys for a while.
    static let previousKeyRetention: TimeInterval = 3600

    /// Where versions before the keys moved into the database kept the signing key of the instance with `dataDirectory`.
    static func legacyKeyFile(in dataDirectory: String) -> String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("session-signing-key.pem").path
    }

    /// Makes sure the database has a current key, on every start. The first start imports the data directory's
    /// legacy key file when there is one (so tokens it signed stay valid), else makes a new key; of several instances
    /// starting at once on an empty database, one insert wins and the others use its key. A legacy key that loses
    /// (another instance's was imported first) is kept as a previous key. The file is removed once imported.
    func establish(now: Date) async throws {
        let legacy = try readLegacyKey()
        let key = legacy ?? ES256PrivateKey()
        if try await store.insertIfAbsent(try seal(SigningKey(privateKey: key, state: .current), now: now)) {
            logger.notice(legacy == nil ? "made the first access-token signing key" : "imported the signing key file into the database",
                          metadata: ["kid": "\(SigningKey.keyID(of: key.publicKey))"])
        } else if let legacy {
            try await store.insertIfAbsent(try seal(SigningKey(privateKey: legacy, state: .previous), now: now))
        }
        if legacy != nil, let legacyKeyFile {
            do {
                try FileManager.default.removeItem(atPath: legacyKeyFile)
                logger.notice("removed the signing key file: its key is in the database now", metadata: ["path": "\(legacyKeyFile)"])
            } catch {
                logger.warning("cannot remove the imported signing key file; delete it", metadata: ["path": "\(legacyKeyFile)", "error": "\(error)"])
            }
        }
    }

    /// The current and previous keys, unsealed.
    func liveKeys() async throws -> [SigningKey] {
        try await store.liveKeys().map(unseal)
    }

    /// Makes a new current key; the current one becomes previous (it still verifies and is published), and previous
    /// keys demoted at least ``previousKeyRetention`` ago are retired. Nobody is signed out.
    func rotate(now: Date) async throws -> SigningKeyRotation {
        let key = SigningKey(privateKey: ES256PrivateKey(), state: .current)
        let (demoted, retired) = try await store.rotate(
            to: try seal(key, now: now), retiringDemotedBefore: now.addingTimeInterval(-Self.previousKeyRetention), now: now
        )
        return SigningKeyRotation(currentKeyID: key.id, demotedKeyIDs: demoted, retiredKeyIDs: retired)
    }

    func seal(_ key: SigningKey, now: Date) throws -> SigningKeyStore.StoredKey {
        SigningKeyStore.StoredKey(
            kid: key.id, state: key.state, publicKey: key.privateKey.publicKey.pemRepresentation,
            sealedPrivateKey: try masterKey.seal(Data(key.privateKey.pemRepresentation.utf8), context: Self.context(key.id)),
            createdAt: now, demotedAt: key.state == .current ? nil : now
        )
    }

    func unseal(_ stored: SigningKeyStore.StoredKey) throws -> SigningKey {
        let pem: Data
        do {
            pem = try masterKey.open(stored.sealedPrivateKey, context: Self.context(stored.kid))
        } catch {
            throw SigningKeysError.cannotUnseal(kid: stored.kid, masterKeyID: masterKey.id)
        }
        let key = SigningKey(privateKey: try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self)), state: stored.state)
        guard key.id == stored.kid else { throw SigningKeysError.cannotUnseal(kid: stored.kid, masterKeyID: masterKey.id) }
        return key
    }

    /// What a sealed private key is bound to.
    static func context(_ kid: String) -> String {
        "signing_keys/\(kid)"
    }

    private func readLegacyKey() throws -> ES256PrivateKey? {
        guard let legacyKeyFile, let pem = FileManager.default.contents(atPath: legacyKeyFile) else { return nil }
        do {
            return try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self))
        } catch {
            throw SigningKeyError(path: legacyKeyFile, reason: "not a PEM P-256 private key (\(error))")
        }
    }
}

/// What a signing key rotation did.
public struct SigningKeyRotation: Sendable, CustomStringConvertible {
    /// The kid new access tokens carry from now on.
    public var currentKeyID: String
    /// The key that was current: it still verifies tokens and is published.
    public var demotedKeyIDs: [String]
    /// Keys that stopped verifying.
    public var retiredKeyIDs: [String]

    public var description: String {
        var said = "new signing key \(currentKeyID) is current"
        if !demotedKeyIDs.isEmpty {
            said += "; \(demotedKeyIDs.joined(separator: ", ")) is previous: it still verifies, until a rotation an hour or more from now retires it"
        }
        if !retiredKeyIDs.isEmpty { said += "; retired \(retiredKeyIDs.joined(separator: ", "))" }
        return said
    }
}

enum SigningKeysError: Error, CustomStringConvertible {
    case noCurrentKey
    case cannotUnseal(kid: String, masterKeyID: String)

    var description: String {
        switch self {
        case .noCurrentKey: "the database holds no current signing key"
        case .cannotUnseal(let kid, let masterKeyID):
            "signing key \(kid) cannot be opened with the master key (FITBASE_MASTER_KEY or FITBASE_MASTER_KEY_FILE, id \(masterKeyID))"
        }
    }
}

/// The legacy signing key file cannot be used; reported at start-up.
struct SigningKeyError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "cannot import session signing key \(path) (in --data-dir / FITBASE_DATA_DIR): \(reason)" }
}
