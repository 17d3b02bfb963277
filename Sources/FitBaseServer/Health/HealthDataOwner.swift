import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// Health samples in the account export (decrypted, audited as an export) and deletion: the data key is destroyed
/// first (crypto-shredding: every copy of the samples, backups included, becomes unreadable), then the rows go. The
/// audit entries stay, naming the account's id only.
struct HealthSamplesOwner: AccountDataOwner {
    let records: HealthRecords
    let section = "healthSamples"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let samples = try await records.open(try await HealthSampleStore.all(of: user, on: db), of: user)
        try await records.audit.append(AuditEvent(actor: user, subject: user, action: .export, resource: "healthSamples", count: samples.count))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return try JSONDecoder().decode(OpenAPIValueContainer.self, from: encoder.encode(samples.map(HealthController.wire)))
    }

    func delete(_ user: UserID, on db: any SQLDatabase) async throws {
        // The user's feed row before their audit chain's head, in the order every health write takes them (no deadlock with a
        // push from another device). The key goes first: should the deletion then fail, what is left is unreadable
        // (and skipped by reads), never readable without an account.
        try await SyncFeed.lockSequence(of: user, on: db)
        let hadKey = try await records.vault.destroyKey(of: user)
        let deleted = try await db.delete(from: "health_samples").where("user_id", .equal, user.rawValue).returning("id").all().count
        try await HealthRollups.deleteAll(of: user, on: db)
        try await HealthSampleQuota.delete(of: user, on: db)
        guard hadKey || deleted > 0 else { return }  // never had health data: nothing to record
        try await AuditLog.append(
            AuditEvent(actor: RequestScope.current.caller?.user, subject: user, action: .delete, resource: "healthKey", count: deleted),
            on: db, engine: records.database.engine
        )
    }
}
