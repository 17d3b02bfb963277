import Foundation
import GRDB

/// Server answers the app layer keeps for cache-first reads, sealed like the records.
extension LocalStore {
    /// A server answer kept for cache-first reads.
    package struct CachedResponse: Sendable, Equatable {
        /// The answer's body.
        package var body: Data
        /// Its validator (`ETag`), when the server sent one.
        package var etag: String?
        /// When the server last gave or confirmed it.
        package var fetchedAt: Date

        package init(body: Data, etag: String?, fetchedAt: Date) {
            self.body = body
            self.etag = etag
            self.fetchedAt = fetchedAt
        }
    }

    /// The answer kept under `key`, if any.
    package func cachedResponse(_ key: String) async throws -> CachedResponse? {
        let sealer = try self.sealer()
        return try await queue.read { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT body, etag, fetched_at FROM cached_responses WHERE key = ?"), arguments: [key]) else {
                return nil
            }
            return CachedResponse(
                body: try sealer.open(row["body"], context: Self.context("cache", key)), etag: row["etag"], fetchedAt: Date(timeIntervalSince1970: row["fetched_at"])
            )
        }
    }

    /// Keeps `response` under `key`, replacing what was there.
    package func storeCachedResponse(_ response: CachedResponse, for key: String) async throws {
        let body = try self.sealer().seal(response.body, context: Self.context("cache", key))
        try await queue.write { db in
            try db.run(
                sql: """
                    INSERT INTO cached_responses (key, body, etag, fetched_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET body = excluded.body, etag = excluded.etag, fetched_at = excluded.fetched_at
                    """,
                arguments: [key, body, response.etag, response.fetchedAt.timeIntervalSince1970]
            )
        }
    }

    /// Marks the answer under `key` as confirmed by the server at `date` (a `304 Not Modified`).
    package func touchCachedResponse(_ key: String, at date: Date) async throws {
        try await queue.write { db in
            try db.run(sql: "UPDATE cached_responses SET fetched_at = ? WHERE key = ?", arguments: [date.timeIntervalSince1970, key])
        }
    }

    /// Forgets the cached answers whose key starts with `prefix` (all of them for an empty prefix).
    package func removeCachedResponses(prefix: String) async throws {
        try await queue.write { db in
            try db.run(sql: "DELETE FROM cached_responses WHERE substr(key, 1, ?) = ?", arguments: [prefix.utf8.count, prefix])
        }
    }
}
