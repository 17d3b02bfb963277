import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The sync endpoints' bodies, written and read by hand (`JSONValue`) on the hot path, and the generated types for
/// everything else.
extension SyncEngine {
    /// Pushes queued mutations and returns the server's results, without the generated client's coders: the body is
    /// written by hand around each record's stored JSON (checked to be an object, never decoded and encoded again),
    /// and an answer whose mutations all applied is read in one pass; any other answer is decoded as the generated
    /// client decodes it. (Encoding records through `JSONEncoder` and `RecordJSON` was a fifth of a push's CPU.)
    func push(_ batch: [LocalStore.PendingMutation]) async throws(FitBaseError) -> [Components.Schemas.SyncMutationResult] {
        var body: [UInt8] = []
        body.reserveCapacity(batch.reduce(64) { $0 + 200 + ($1.data?.count ?? 0) })
        body.append(contentsOf: #"{"mutations":["#.utf8)
        for (index, mutation) in batch.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"collection":"#.utf8)
            JSONValue.writeString(mutation.collection.rawValue, into: &body)
            if let data = mutation.data {
                guard case .object? = JSONValue.parse(data) else {
                    throw .storage("a queued change of \(mutation.collection.rawValue) \(mutation.recordID) is not a JSON object")
                }
                body.append(contentsOf: #","data":"#.utf8)
                body.append(contentsOf: data)
            }
            if let baseVersion = mutation.baseVersion { body.append(contentsOf: #","baseVersion":\#(baseVersion)"#.utf8) }
            body.append(contentsOf: #","id":"#.utf8)
            JSONValue.writeString(mutation.recordID, into: &body)
            body.append(contentsOf: #","mutationId":"#.utf8)
            JSONValue.writeString(mutation.mutationID, into: &body)
            body.append(contentsOf: (mutation.operation == .delete ? #","op":"delete""# : #","op":"upsert""#).utf8)
            body.append(contentsOf: #","updatedAt":"#.utf8)
            JSONValue.writeString(InternetDateTime.string(from: mutation.updatedAt), into: &body)
            body.append(UInt8(ascii: "}"))
        }
        body.append(contentsOf: "]}".utf8)
        let request = HTTPRequest(
            method: .post, scheme: nil, authority: nil, path: "/v1/sync/push",
            headerFields: [.accept: "application/json", .contentType: "application/json; charset=utf-8"]
        )
        let (response, answer) = try await network {
            try await client.send(request, body: HTTPBody(body), operationID: "pushSyncMutations", upTo: 64 << 20)
        }
        guard response.status == .ok else {
            throw .from(statusCode: response.status.code, problem: try? Self.decoder.decode(Components.Schemas.Problem.self, from: answer))
        }
        if let applied = Self.appliedResults(answer) { return applied }
        return try Self.decoding({ try Self.decoder.decode(Components.Schemas.SyncPushResults.self, from: answer).results })
    }

    /// The results of a push answer whose every mutation applied; `nil` for any other answer.
    private static func appliedResults(_ answer: Data) -> [Components.Schemas.SyncMutationResult]? {
        guard case .object(let fields)? = JSONValue.parse(answer), fields.count == 1, case .array(let items)? = fields["results"] else { return nil }
        var results: [Components.Schemas.SyncMutationResult] = []
        results.reserveCapacity(items.count)
        for item in items {
            guard case .object(let result) = item, result.count == 3, case .string(let id)? = result["mutationId"],
                case .string("applied")? = result["status"], case .int(let version)? = result["version"]
            else { return nil }
            results.append(.init(mutationId: id, status: .applied, version: version))
        }
        return results
    }

    /// Answers as the generated client reads them (RFC 3339 instants).
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        let transcoder = InternetDateTimeTranscoder()
        decoder.dateDecodingStrategy = .custom { decoder in try transcoder.decode(try decoder.singleValueContainer().decode(String.self)) }
        return decoder
    }()

    /// A page of the feed after `since`, read without the generated client's decoder (any other answer: its status and
    /// problem).
    ///
    /// Decoding records' free-form `data` through `JSONDecoder` (each value's kind found by trying one type after
    /// another, every miss a thrown error) was most of the CPU of a pull; here the page is read by
    /// ``JSONValue/parse(_:)`` in one pass and each record's JSON written once for the local store.
    func fetchPage(
        since: String?
    ) async throws(FitBaseError) -> (status: HTTPResponse.Status, changes: [LocalStore.PulledChange], cursor: String, hasMore: Bool, problem: Components.Schemas.Problem?) {
        var query = URLComponents()
        query.queryItems = (since.map { [URLQueryItem(name: "since", value: $0)] } ?? []) + [URLQueryItem(name: "limit", value: String(configuration.pageSize))]
        let request = HTTPRequest(
            method: .get, scheme: nil, authority: nil, path: "/v1/sync/changes?" + (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B"),
            headerFields: [.accept: "application/json"]
        )
        let (response, body) = try await network { try await client.send(request, operationID: "getSyncChanges", upTo: 64 << 20) }
        guard response.status == .ok else {
            return (response.status, [], "", false, try? Self.decoder.decode(Components.Schemas.Problem.self, from: body))
        }
        guard case .object(let page)? = JSONValue.parse(body), case .array(let items)? = page["changes"], case .string(let cursor)? = page["cursor"],
            case .bool(let hasMore)? = page["hasMore"]
        else { throw .unexpectedResponse(statusCode: 200) }
        var changes: [LocalStore.PulledChange] = []
        changes.reserveCapacity(items.count)
        for item in items {
            guard case .object(let change) = item, case .string(let rawCollection)? = change["collection"], case .string(let id)? = change["id"],
                case .int(let version)? = change["version"], case .bool(let deleted)? = change["deleted"],
                case .string(let rawUpdatedAt)? = change["updatedAt"], let updatedAt = InternetDateTime.date(from: rawUpdatedAt)
            else { throw .unexpectedResponse(statusCode: 200) }
            // A collection this version of the SDK does not know is left for a newer one.
            guard let collection = SyncCollection(rawValue: rawCollection) else { continue }
            var data: Data?
            if !deleted, case .object(let fields)? = change["data"] { data = try Self.json(RecordJSON(fields: fields)) }
            changes.append(.init(collection: collection, id: id, version: version, updatedAt: updatedAt, data: data))
        }
        return (.ok, changes, cursor, hasMore, nil)
    }

    private static func decoding<T>(_ body: () throws -> T) throws(FitBaseError) -> T {
        do { return try body() } catch { throw .unexpectedResponse(statusCode: 200) }
    }

    func network<T>(_ operation: () async throws -> T) async throws(FitBaseError) -> T {
        do {
            return try await operation()
        } catch {
            throw FitBaseError(thrownByCall: error)
        }
    }
}
