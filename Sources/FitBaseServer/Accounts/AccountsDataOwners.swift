import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// The account itself: e-mail, name, role, profile — exactly as `GET /v1/me` shows it.
struct AccountProfileOwner: InMemoryAccountDataOwner {
    let profiles: ProfileStore
    let section = "account"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        guard let record = try await UserStore.find(id: user, on: db) else { return try OpenAPIValueContainer(unvalidatedValue: nil) }
        let wire = UserWire.user(
            record, profile: try await ProfileStore.profile(of: user, on: db, vault: profiles.vault),
            identities: try await IdentityStore.identities(of: user, on: db), currentGroup: try await GroupStore.membership(of: user, on: db)?.group
        )
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return try JSONDecoder().decode(OpenAPIValueContainer.self, from: encoder.encode(wire))
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "user_profiles").where("user_id", .equal, user.rawValue).run()
    }
}

/// Sessions (devices) and their refresh tokens; only metadata is exported, never token hashes.
struct SessionsOwner: InMemoryAccountDataOwner {
    let section = "sessions"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let columns = ["id", "device_label", "created_at", "last_used_at", "revoked_at"]
        return try await exportRows(of: user, columns, from: "sessions", orderBy: "created_at", on: db) { row in
            [
                "id": SessionID(rawValue: try row.decode(column: "id", as: UUID.self)).description,
                "deviceLabel": try row.decode(column: "device_label", as: String?.self),
                "createdAt": try row.decode(column: "created_at", as: Date.self).formatted(.iso8601),
                "lastUsedAt": try row.decode(column: "last_used_at", as: Date.self).formatted(.iso8601),
                "revokedAt": try row.decode(column: "revoked_at", as: Date?.self)?.formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "refresh_tokens").where("user_id", .equal, user.rawValue).run()
        let ended = try await db.delete(from: "sessions").where("user_id", .equal, user.rawValue).returning("id", "revoked_at").all()
            .filter { try $0.decode(column: "revoked_at", as: Date?.self) == nil }.map { SessionID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
        try await SessionStore.ended(ended, now: now, on: db)
    }
}

/// Every consent answer.
struct ConsentsOwner: InMemoryAccountDataOwner {
    let section = "consents"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        try await exportRows(of: user, ["kind", "version", "granted", "recorded_at"], from: "consents", orderBy: "recorded_at", on: db) { row in
            [
                "kind": try row.decode(column: "kind", as: String.self),
                "version": try row.decode(column: "version", as: String.self),
                "granted": try row.decode(column: "granted", as: Bool.self),
                "recordedAt": try row.decode(column: "recorded_at", as: Date.self).formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "consents").where("user_id", .equal, user.rawValue).run()
    }
}
