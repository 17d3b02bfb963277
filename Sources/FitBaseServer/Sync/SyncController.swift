import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// The caller's change feed. Every query is scoped to the caller: a cursor never reaches another user's changes.
struct SyncController: Sendable {
    static let defaultLimit = 500
    static let maximumLimit = 1000

    let database: Database
    /// What each collection checks, writes and shows.
    let collections: SyncedCollections

    func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        let caller = try RequestScope.requireCaller()
        let limit = input.query.limit ?? Self.defaultLimit
        guard (1...Self.maximumLimit).contains(limit) else {
            throw Problem.invalidRequest(
                "limit must be between 1 and \(Self.maximumLimit).", fieldErrors: [.init(field: "limit", message: "must be between 1 and \(Self.maximumLimit)")]
            )
        }
        let since = try input.query.since.map(Self.sequence(fromCursor:)) ?? 0
        let user = caller.user
        // The position is read first: every change up to it is committed (a user's sequence numbers commit in order),
        // so after a last page the cursor can move to it, past purged tombstones the page no longer shows.
        let (position, changes) = try await database.withConnection { db in
            (try await SyncFeed.position(of: user, on: db), try await SyncFeed.changes(of: user, since: since, limit: limit + 1, on: db))
        }
        if since > 0, since < position.purgedThrough {
            throw Problem(.gone, code: .fullResyncRequired, detail: "This cursor is older than the oldest kept deletion; pull again without since.")
        }
        let page = Array(changes.prefix(limit))
        let collections = self.collections
        let wire = try await database.withConnection { db in try await Self.wire(page, of: user, collections: collections, on: db) }
        var served: [String: Int] = [:]
        for change in wire where !change.deleted { served[change.collection.rawValue, default: 0] += 1 }
        for (name, count) in served.sorted(by: { $0.key < $1.key }) {
            guard let collection = SyncCollection(rawValue: name) else { continue }
            try await collections[collection].pulled(count, of: user)
        }
        return .ok(.init(body: .json(.init(
            changes: wire,
            cursor: Self.cursor(sequence: changes.count > limit ? page.last?.seq ?? since : max(page.last?.seq ?? 0, position.last, since)),
            hasMore: changes.count > limit
        ))))
    }

    // MARK: Records

    /// The changes with the current data of their records, as the REST endpoints show them. A live record deleted
    /// since the change was read is left out: its tombstone follows with a later sequence number.
    static func wire(
        _ changes: [SyncChange], of user: UserID, collections: SyncedCollections, on db: any SQLDatabase
    ) async throws -> [Components.Schemas.SyncChange] {
        var records: [SyncCollection: [String: Components.Schemas.SyncRecordData]] = [:]
        for (collection, live) in Dictionary(grouping: changes.filter { !$0.stamp.deleted }, by: \.collection) {
            records[collection] = try await collections[collection].records(live.map(\.recordID), of: user, on: db)
        }
        return changes.compactMap { change in
            let data = records[change.collection]?[change.recordID]
            if !change.stamp.deleted && data == nil { return nil }
            return Components.Schemas.SyncChange(
                collection: change.collection, id: change.recordID,
                version: change.stamp.version, deleted: change.stamp.deleted, updatedAt: change.stamp.updatedAt,
                data: change.stamp.deleted ? nil : data
            )
        }
    }

    /// A record's REST representation as a change's `data`: encoded in place when the response is (instants in
    /// RFC 3339, as everywhere in the API), never converted to a free-form object first.
    static func object(_ value: some Encodable & Sendable) -> Components.Schemas.SyncRecordData {
        RecordJSON(record: value)
    }

    // MARK: Cursors

    static func cursor(sequence: Int) -> String {
        PageRequest.encodeCursor("seq:\(sequence)")
    }

    static func sequence(fromCursor cursor: String) throws(Problem) -> Int {
        guard let text = PageRequest.decodeCursor(cursor), text.hasPrefix("seq:"), let sequence = Int(text.dropFirst(4)), sequence >= 0 else {
            throw Problem.invalidRequest("since is not a cursor the change feed returned.", fieldErrors: [.init(field: "since", message: "is not valid")])
        }
        return sequence
    }
}
