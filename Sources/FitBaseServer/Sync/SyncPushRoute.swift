import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// `POST /v1/sync/push` read without the generated server's decoder (a ``DirectRoute``).
///
/// A push of 500 records spent most of its CPU in `JSONDecoder` walking the free-form `data` objects (each value's kind
/// found by trying one type after another, every miss a thrown error). Here the body is read by ``JSONValue/parse(_:)``
/// in one pass and turned into the same `SyncPush` value, which ``SyncPusher/push(_:by:)`` — the one
/// push path — applies; its results are encoded with the generated server's settings. A body this reader does not
/// fully understand (not JSON, a missing or mistyped field, a field the contract does not name, an unknown collection,
/// a repeated key, another content type or `Accept`) is left to the generated handler, which answers with its problem.
extension SyncOperations {
    /// The routes the sync feature answers itself, for ``RoutingTransport``.
    var syncRoutes: [DirectRoute] {
        [
            DirectRoute.jsonBody(.post, "/v1/sync/push", read: Self.push(from:)) { push in
                // The push answers `ok` or throws (its problems are rendered as for every route).
                guard case .ok(let ok) = try await self.pushSyncMutations(.init(body: .json(push))), case .json(let results) = ok.body else {
                    throw DirectRoute.UnexpectedOutput(operation: "pushSyncMutations")
                }
                return results
            }
        ]
    }

    /// The push `json` holds, when every part of it is what the contract says and nothing else.
    static func push(from json: JSONValue?) -> Components.Schemas.SyncPush? {
        DirectRoute.array(named: "mutations", in: json, item: mutation(from:)).map { .init(mutations: $0) }
    }

    private static func mutation(from json: JSONValue) -> Components.Schemas.SyncMutation? {
        guard case .object(let fields) = json, fields.keys.allSatisfy(syncMutationKeys.contains),
            case .string(let mutationID)? = fields["mutationId"],
            case .string(let rawCollection)? = fields["collection"], let collection = Components.Schemas.SyncCollection(rawValue: rawCollection),
            case .string(let id)? = fields["id"],
            case .string(let rawOperation)? = fields["op"], let operation = Components.Schemas.SyncMutation.OpPayload(rawValue: rawOperation),
            case .string(let rawUpdatedAt)? = fields["updatedAt"], let updatedAt = InternetDateTime.date(from: rawUpdatedAt)
        else { return nil }
        // Optional fields: absent or null is "not given", as the generated decoder reads them.
        var baseVersion: Int?
        switch fields["baseVersion"] {
        case nil, .null?: baseVersion = nil
        case .int(let version)?: baseVersion = version
        default: return nil
        }
        var data: RecordJSON?
        switch fields["data"] {
        case nil, .null?: data = nil
        case .object(let record)?: data = RecordJSON(fields: record)
        default: return nil
        }
        return .init(
            mutationId: mutationID, collection: collection, id: id, op: operation, baseVersion: baseVersion, updatedAt: updatedAt, data: data
        )
    }
}

/// The fields a mutation may have.
private let syncMutationKeys: Set<String> = ["mutationId", "collection", "id", "op", "baseVersion", "updatedAt", "data"]
