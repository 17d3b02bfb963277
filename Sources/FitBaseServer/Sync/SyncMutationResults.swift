import FitBaseAPI
import FitBaseCore
import Foundation
import SQLKit

/// SQL for `sync_mutations`: the result of every pushed mutation under its client id, so a replay is answered with it
/// unchanged (kept for the feed's retention, ``Housekeeping``).
enum SyncMutationResults {
    /// The stored results of those of `mutationIDs` answered before, by id.
    static func stored(of mutationIDs: [String], user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncMutationResult] {
        guard !mutationIDs.isEmpty else { return [:] }
        let rows = try await db.select().columns("mutation_id", "result").from("sync_mutations")
            .where("user_id", .equal, user.rawValue).where("mutation_id", .in, Array(Set(mutationIDs))).all()
        var results: [String: Components.Schemas.SyncMutationResult] = [:]
        for row in rows {
            results[try row.decode(column: "mutation_id", as: String.self)] = try resultCoding.decoder.decode(
                Components.Schemas.SyncMutationResult.self, from: Data(try row.decode(column: "result", as: String.self).utf8)
            )
        }
        return results
    }

    /// Stores the results under their mutation ids, 250 rows a statement.
    static func store(_ results: [Components.Schemas.SyncMutationResult], user: UserID, now: Date, on db: any SQLDatabase) async throws {
        for start in stride(from: 0, to: results.count, by: 250) {
            let chunk = results[start..<min(start + 250, results.count)]
            var binds: [any Encodable & Sendable] = []
            binds.reserveCapacity(chunk.count * 4)
            for result in chunk {
                binds.append(user.rawValue)
                binds.append(result.mutationId)
                binds.append(String(decoding: try resultCoding.encoder.encode(result), as: UTF8.self))
                binds.append(now)
            }
            try await storeResults(rows: chunk.count, binds).run(on: db)
        }
    }

    private static let storeResults = StoredRowsStatement(
        head: #"INSERT INTO "sync_mutations" ("user_id", "mutation_id", "result", "created_at") VALUES "#, row: "(?, ?, ?, ?)"
    )

    /// Stored results keep instants to the second, as the API writes them (pushed records are read the same way).
    static let resultCoding: (encoder: JSONEncoder, decoder: JSONDecoder) = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .internetDateTime
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .internetDateTime
        return (encoder, decoder)
    }()
}
