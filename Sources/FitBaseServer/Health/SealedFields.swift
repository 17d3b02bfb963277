import Crypto
import FitBaseCore
import Foundation

/// The sensitive fields of one row, sealed under its owner's data key: the key's id (stored beside the ciphertext)
/// and the AES-GCM ciphertext of the fields' JSON, bound to the row's table, owner and id so it cannot be moved to
/// another row or user. Health samples have their own compact codec; cycle periods and the private fields of
/// workout logs use this one.
struct SealedFields: Sendable, Equatable {
    var keyID: String
    var sealed: Data
}

extension HealthVault {
    /// Seals `fields` of row `id` of `table`, owned by `user`.
    func seal<Fields: Encodable>(_ fields: Fields, table: String, id: UUID, of user: UserID, with key: DataKey) throws -> SealedFields {
        try seal(bytes: try Self.fieldsEncoder.encode(fields), table: table, id: id, of: user, with: key)
    }

    /// Seals already encoded fields of row `id` of `table`, owned by `user`.
    func seal(bytes plain: Data, table: String, id: UUID, of user: UserID, with key: DataKey) throws -> SealedFields {
        SealedFields(keyID: key.id, sealed: try seal(plain, with: key, binding: Self.binding(table: table, id: id, user: user)))
    }

    /// Opens what ``seal(_:table:id:of:with:)`` sealed; throws when the key is not the one it was sealed under or the
    /// ciphertext was changed or moved.
    func open<Fields: Decodable>(_ type: Fields.Type, _ fields: SealedFields, table: String, id: UUID, of user: UserID, with key: DataKey) throws -> Fields {
        try JSONDecoder().decode(type, from: try open(bytes: fields, table: table, id: id, of: user, with: key))
    }

    /// The encoded fields ``seal(bytes:table:id:of:with:)`` sealed.
    func open(bytes fields: SealedFields, table: String, id: UUID, of user: UserID, with key: DataKey) throws -> Data {
        guard fields.keyID == key.id else { throw SealedFieldsError.unknownKey(fields.keyID) }
        return try open(fields.sealed, with: key, binding: Self.binding(table: table, id: id, user: user))
    }

    /// A keyed digest of `value` for finding or constraining rows by a sealed field without storing it (a "blind
    /// index"): HMAC-SHA-256 under a key derived from the user's data key for `purpose`, hex. The same value of the
    /// same user always gives the same digest; without the data key it reveals nothing, and it dies with the key.
    func blindIndex(_ value: String, purpose: String, with key: DataKey) -> String {
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: key.key, info: Data("fitbase blind index \(purpose)".utf8), outputByteCount: 32)
        return hexString(HMAC<SHA256>.authenticationCode(for: Data(value.utf8), using: derived))
    }

    /// What a row's ciphertext is bound to.
    static func binding(table: String, id: UUID, user: UserID) -> [UInt8] {
        Array("\(table)/\(user)/\(id.lowercasedString)".utf8)
    }

    private static let fieldsEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}

enum SealedFieldsError: Error, CustomStringConvertible {
    case unknownKey(String)
    case noKey
    case unknownFlow(String)

    var description: String {
        switch self {
        case .unknownKey(let id): "a row is sealed under data key \(id), which is not the user's key"
        case .noKey: "the user's data key could not be made"
        case .unknownFlow(let flow): "a stored period has the flow \(flow), which is not one of the contract's"
        }
    }
}
