import FitBaseAPI
import FitBaseCore
import SQLKit

/// The change feed as the API shows it: changes with their records' data, and the opaque cursors that page it.
enum SyncWire {
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
        guard let sequence = PageCursor.number(in: cursor, after: "seq:") else {
            throw Problem.invalidRequest("since is not a cursor the change feed returned.", fieldErrors: [.init(field: "since", message: "is not valid")])
        }
        return sequence
    }
}
