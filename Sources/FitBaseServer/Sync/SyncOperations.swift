import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// The caller's change feed. Every query is scoped to the caller: a cursor never reaches another user's changes.
protocol SyncOperations: FeatureOperations { var syncFeature: SyncFeature { get } }

extension SyncOperations {
    private var collections: SyncedCollections { syncFeature.collections }

    func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        let caller = try RequestScope.requireCaller()
        let limit = input.query.limit ?? SyncFeature.defaultLimit
        guard (1...SyncFeature.maximumLimit).contains(limit) else {
            throw Problem.invalidRequest(
                "limit must be between 1 and \(SyncFeature.maximumLimit).", fieldErrors: [.init(field: "limit", message: "must be between 1 and \(SyncFeature.maximumLimit)")]
            )
        }
        let since = try input.query.since.map(SyncWire.sequence(fromCursor:)) ?? 0
        let user = caller.user
        // The position is read first: every change up to it is committed (a user's sequence numbers commit in order),
        // so after a last page the cursor can move to it, past purged tombstones the page no longer shows.
        let (position, changes) = try await syncFeature.database.withConnection { db in
            (try await SyncFeed.position(of: user, on: db), try await SyncFeed.changes(of: user, since: since, limit: limit + 1, on: db))
        }
        if since > 0, since < position.purgedThrough {
            throw Problem(.gone, code: .fullResyncRequired, detail: "This cursor is older than the oldest kept deletion; pull again without since.")
        }
        let page = Array(changes.prefix(limit))
        let collections = self.collections
        let wire = try await syncFeature.database.withConnection { db in try await SyncWire.wire(page, of: user, collections: collections, on: db) }
        var served: [String: Int] = [:]
        for change in wire where !change.deleted { served[change.collection.rawValue, default: 0] += 1 }
        for (name, count) in served.sorted(by: { $0.key < $1.key }) {
            guard let collection = SyncCollection(rawValue: name) else { continue }
            try await collections[collection].pulled(count, of: user)
            metrics.syncPulled(count, collection: name)
        }
        return .ok(.init(body: .json(.init(
            changes: wire,
            cursor: SyncWire.cursor(sequence: changes.count > limit ? page.last?.seq ?? since : max(page.last?.seq ?? 0, position.last, since)),
            hasMore: changes.count > limit
        ))))
    }

    func pushSyncMutations(_ input: Operations.PushSyncMutations.Input) async throws -> Operations.PushSyncMutations.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let results = try await syncFeature.pusher.push(body, by: caller, now: clock.now)
        let collectionOf = Dictionary(body.mutations.map { ($0.mutationId, $0.collection.rawValue) }, uniquingKeysWith: { first, _ in first })
        var counted: [[String]: Int] = [:]
        for result in results { counted[[collectionOf[result.mutationId] ?? "unknown", result.status.rawValue], default: 0] += 1 }
        for (key, count) in counted { metrics.syncPushed(count, collection: key[0], result: key[1]) }
        return .ok(.init(body: .json(.init(results: results))))
    }
}
