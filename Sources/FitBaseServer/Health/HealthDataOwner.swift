import FitBaseCore
import Foundation
import NIOCore
import SQLKit

/// Health samples in the account export (decrypted, audited as an export) and deletion: the data key is destroyed
/// first (crypto-shredding: every copy of the samples, backups included, becomes unreadable), then the rows go. The
/// audit entries stay, naming the account's id only.
struct HealthSamplesOwner: BulkAccountDataOwner {
    let records: HealthRecords
    let section = "healthSamples"

    /// Samples read back in pages of this many (decrypted and written before the next is read).
    static let exportPage = 1_000

    /// The samples in the order they were stored, a page at a time: the server holds one page, whatever the account's size. Audited
    /// once, as an export of the number written.
    func writeExport(_ user: UserID, database: Database, to write: ExportWriter) async throws {
        var after = 0
        var count = 0
        try await write(ByteBuffer(string: "["))
        while true {
            let (rows, lastSeq) = try await database.withConnection { [after] db in
                try await HealthSampleStore.page(of: user, after: after, limit: Self.exportPage, on: db)
            }
            let samples = try await records.open(rows, of: user)
            if !samples.isEmpty {
                // One encoding per page, its brackets dropped: the items join the array being written.
                let page = try DirectRoute.encoder.encode(samples.map(HealthWire.wire))
                var piece = ByteBuffer(string: count > 0 ? "," : "")
                piece.writeBytes(page.dropFirst().dropLast())
                try await write(piece)
                count += samples.count
            }
            guard rows.count == Self.exportPage, let lastSeq else { break }
            after = lastSeq
        }
        try await write(ByteBuffer(string: "]"))
        try await records.audit.append(AuditEvent(actor: user, subject: user, action: .export, resource: .healthSamples, count: count))
    }

    /// Samples deleted per transaction when an account goes.
    static let deletionBatch = 5_000

    /// Crypto-shreds the samples (the key goes first: should the deletion stop, what is left is unreadable), then
    /// deletes them a batch per transaction, so a large account never holds SQLite's writer for long; audited once.
    func deleteInBatches(_ user: UserID, database: Database) async throws {
        let hadKey = try await records.vault.destroyKey(of: user)
        var deleted = 0
        while true {
            let batch = try await database.transaction { db in
                try await db.raw("""
                    DELETE FROM health_samples WHERE id IN (
                      SELECT id FROM health_samples WHERE user_id = \(bind: user.rawValue) LIMIT \(bind: Self.deletionBatch)
                    ) RETURNING id
                    """).all().count
            }
            deleted += batch
            if batch < Self.deletionBatch { break }
        }
        guard hadKey || deleted > 0 else { return }  // never had health data: nothing to record
        try await records.audit.append(
            AuditEvent(actor: RequestScope.current.caller?.user, subject: user, action: .delete, resource: .healthKey, count: deleted)
        )
    }

    /// What ``deleteInBatches(_:database:)`` left (nothing, unless a sample arrived meanwhile), its totals and its
    /// count, in the account's last transaction.
    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
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
            AuditEvent(actor: RequestScope.current.caller?.user, subject: user, action: .delete, resource: .healthKey, count: deleted),
            now: now, on: db, engine: records.database.engine
        )
    }
}
