import FitBaseCore
import Foundation
import SQLKit

/// One recorded answer.
struct ConsentEvent: Sendable, Equatable {
    let kind: ConsentKind
    let version: String
    let granted: Bool
    let recordedAt: Date
}

/// SQL for `consents`: an append-only history; the latest answer per kind is in force.
struct ConsentStore: Sendable {
    let database: Database

    func record(_ kind: ConsentKind, version: String, granted: Bool, for user: UserID, now: Date) async throws {
        try await database.transaction { db in
            try await db.insert(into: "consents").columns("id", "user_id", "kind", "version", "granted", "recorded_at")
                .values(SQLBind(UUID.random()), SQLBind(user.rawValue), SQLBind(kind.rawValue), SQLBind(version), SQLBind(granted), SQLBind(now))
                .run()
        }
    }

    /// Answers listed per kind at most (`GET /v1/me/consents`); the export has them all.
    static let listedHistory = 50

    /// Every answer of `user`, oldest first; with `latest`, only the latest that many of each kind.
    func history(of user: UserID, latest: Int? = nil) async throws -> [ConsentEvent] {
        try await database.withConnection { db in
            let rows: [any SQLRow]
            if let latest {
                rows = try await db.raw("""
                    SELECT kind, version, granted, recorded_at FROM (
                      SELECT kind, version, granted, recorded_at, id,
                        ROW_NUMBER() OVER (PARTITION BY kind ORDER BY recorded_at DESC, id DESC) AS position
                      FROM consents WHERE user_id = \(bind: user.rawValue)
                    ) AS latest WHERE position <= \(bind: latest) ORDER BY recorded_at, id
                    """).all()
            } else {
                rows = try await db.select().columns("kind", "version", "granted", "recorded_at").from("consents")
                    .where("user_id", .equal, user.rawValue)
                    .orderBy("recorded_at").orderBy("id")
                    .all()
            }
            return try rows.compactMap { row in
                guard let kind = ConsentKind(rawValue: try row.decode(column: "kind", as: String.self)) else { return nil }
                return ConsentEvent(
                    kind: kind, version: try row.decode(column: "version", as: String.self),
                    granted: try row.decode(column: "granted", as: Bool.self),
                    recordedAt: try row.decode(column: "recorded_at", as: Date.self)
                )
            }
        }
    }

    /// Whether the latest answer of `user` for `kind` is a grant. Features that need consent call this.
    func isGranted(_ kind: ConsentKind, for user: UserID) async throws -> Bool {
        try await database.withConnection { db in
            try await db.select().column("granted").from("consents")
                .where("user_id", .equal, user.rawValue).where("kind", .equal, kind.rawValue)
                .orderBy("recorded_at", .descending).orderBy("id", .descending).limit(1)
                .first()?.decode(column: "granted", as: Bool.self) ?? false
        }
    }
}
