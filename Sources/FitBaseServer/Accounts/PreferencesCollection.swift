import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// The user's preferences (their profile) as a synced collection: one record per user, id `profile`, never deleted.
/// ``ProfileStore/apply(_:of:updatedAt:on:vault:)`` is its write path, for `PATCH /v1/me` and pushes alike.
struct PreferencesCollection: SyncedCollection {
    let profiles: ProfileStore

    let collection = SyncCollection.preferences
    let table: String? = nil

    func recordID(_ raw: String) throws(Problem) -> String {
        guard raw == SyncFeed.preferencesID else {
            throw Problem.invalidRequest(
                "The preferences record is \(SyncFeed.preferencesID).", fieldErrors: [.init(field: "id", message: "must be \"\(SyncFeed.preferencesID)\"")]
            )
        }
        return raw
    }

    func checkDelete(id: String, reads: PushReads) async throws {
        throw Problem.invalidRequest("Preferences cannot be deleted.", fieldErrors: [.init(field: "op", message: "must be upsert for preferences")])
    }

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let update = try decode(Components.Schemas.UserUpdate.self, from: data)
        // A dry run against the current profile finds every invalid field now; the write applies it again.
        var copy = try await profiles.profile(reads)
        try ProfileUpdate.apply(update, to: &copy, today: LocalCalendar.day(of: reads.now, in: copy.timeZone).description)
        try await profiles.prepareKey(for: update, of: reads.user)
        return PreferencesWrite(update: update, vault: profiles.vault)
    }

    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        nil  // refused by checkDelete
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        guard ids.contains(SyncFeed.preferencesID) else { return [:] }
        return [SyncFeed.preferencesID: SyncWire.object(UserWire.preferences(try await ProfileStore.profile(of: user, on: db, vault: profiles.vault)))]
    }
}

/// A checked preferences update, applied to the profile as it stands when written.
struct PreferencesWrite: SyncedWrite {
    var update: Components.Schemas.UserUpdate
    let vault: HealthVault

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        do {
            _ = try await ProfileStore.apply(update, of: write.user, updatedAt: write.updatedAt, on: db, vault: vault)
        } catch let problem as Problem {
            throw problem.prefixingFields(with: "data.")
        }
        guard let stamp = try await SyncFeed.stamp(.preferences, id: SyncFeed.preferencesID, of: write.user, on: db) else { throw SyncFeedError.noSequence }
        return SyncChange(collection: .preferences, recordID: SyncFeed.preferencesID, seq: 0, stamp: stamp)
    }
}
